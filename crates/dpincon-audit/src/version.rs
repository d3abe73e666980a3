//! A dataset's declared public version: an operator-supplied string (a
//! snapshot or load id, an Iceberg or Delta snapshot id) that says which
//! contents of the table a run reads. An unchanged version re-serves the
//! last release at no ε ([`crate::reserve`]).
//!
//! Only a declared version may decide that. A hash, size or modification
//! time of the table is a function of the private rows: one row more or
//! less would decide between re-serving the old release and drawing a
//! fresh one, which an observer of the reports tells apart with
//! probability ≈ 1, so the decision itself would leak the row. A version
//! the operator declares is public by construction (it comes from the load
//! job's bookkeeping, not from reading the rows), so nothing here opens,
//! hashes or stats the table.

use std::path::Path;

pub use crate::error::MalformedVersion;

use crate::error::DatasetError;
use crate::reason::{Failure, Reason};
use crate::suite::Dataset;

/// The longest version accepted, in bytes. A version is a short id; a
/// longer value (or one of several lines) is more likely the table itself
/// named by mistake in `version-file`, whose contents must not decide.
pub const MAX_VERSION_BYTES: usize = 256;

/// Where a dataset's version comes from (at most one key is given).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source<'a> {
    /// `version = "..."`.
    Literal(&'a str),
    /// `version-env = "VAR"`.
    Env(&'a str),
    /// `version-file = "path"` (resolved against the suite's directory).
    File(&'a Path),
}

impl Dataset {
    /// Where the dataset's version comes from, if it declares one.
    pub fn version_source(&self) -> Option<Source<'_>> {
        match (&self.version, &self.version_env, &self.version_file) {
            (Some(v), _, _) => Some(Source::Literal(v)),
            (None, Some(var), _) => Some(Source::Env(var)),
            (None, None, Some(path)) => Some(Source::File(path)),
            (None, None, None) => None,
        }
    }

    /// The version keys, checked when the suite loads: at most one, none
    /// empty, a literal one well formed, a file that is not the table.
    pub(crate) fn validate_version(&self) -> Result<(), DatasetError> {
        let given = [
            self.version.as_ref().map(|_| "version"),
            self.version_env.as_ref().map(|_| "version-env"),
            self.version_file.as_ref().map(|_| "version-file"),
        ];
        let given: Vec<&str> = given.into_iter().flatten().collect();
        if given.len() > 1 {
            return Err(DatasetError::VersionKeys(given));
        }
        match self.version_source() {
            Some(Source::Literal(v)) => well_formed(v).map(drop).map_err(DatasetError::Version),
            Some(Source::Env(var)) if var.is_empty() || var.contains(['=', '\0']) => {
                Err(DatasetError::VersionEnv(var.to_string()))
            }
            Some(Source::File(path)) if path.as_os_str().is_empty() => {
                Err(DatasetError::EmptyVersionFile)
            }
            Some(Source::File(path)) if self.table.data.as_deref() == Some(path) => {
                Err(DatasetError::VersionFileIsTable)
            }
            _ => Ok(()),
        }
    }

    /// The declared version as this run reads it (`None`: none declared).
    /// An unset variable, a missing file or a malformed value refuses the
    /// dataset before any work ([`Reason::UnreadableVersion`]); the detail
    /// names the key and the variable or file, never the file's contents.
    pub(crate) fn read_version(&self) -> Result<Option<String>, Failure> {
        let version = match self.version_source() {
            None => return Ok(None),
            Some(Source::Literal(v)) => well_formed(v).map_err(Unreadable::Literal),
            Some(Source::Env(var)) => match std::env::var(var) {
                Ok(v) => well_formed(&v).map_err(|source| Unreadable::Env { var, source }),
                Err(_) => Err(Unreadable::EnvUnset(var)),
            },
            Some(Source::File(path)) => match std::fs::read(path) {
                Ok(bytes) => std::str::from_utf8(&bytes)
                    .map_err(|_| MalformedVersion::NotUtf8)
                    .and_then(well_formed)
                    .map_err(|source| Unreadable::File { path, source }),
                Err(source) => Err(Unreadable::Io { path, source }),
            },
        };
        version.map(Some).map_err(|e| Failure::new(Reason::UnreadableVersion, e))
    }
}

/// Why a declared version cannot be read at run time: the detail of the
/// dataset's failure (it names the variable or file, never the contents).
#[derive(Debug, thiserror::Error)]
enum Unreadable<'a> {
    /// A literal `version` (checked at load already).
    #[error("{0}")]
    Literal(#[source] MalformedVersion),
    /// `version-env`'s variable holds no version.
    #[error("`version-env`: ${var} {source}")]
    Env { var: &'a str, source: MalformedVersion },
    /// `version-env`'s variable is not set.
    #[error("`version-env`: the environment variable {0} is not set")]
    EnvUnset(&'a str),
    /// `version-file` holds no version.
    #[error("`version-file` '{}' {source}", path.display())]
    File { path: &'a Path, source: MalformedVersion },
    /// `version-file` cannot be read.
    #[error("`version-file` '{}': {source}", path.display())]
    Io { path: &'a Path, source: std::io::Error },
}

/// `text` trimmed, when it is a version: not empty, one line, at most
/// [`MAX_VERSION_BYTES`].
fn well_formed(text: &str) -> Result<String, MalformedVersion> {
    let v = text.trim();
    if v.is_empty() {
        Err(MalformedVersion::Empty)
    } else if v.contains(['\n', '\r']) {
        Err(MalformedVersion::Lines)
    } else if v.len() > MAX_VERSION_BYTES {
        Err(MalformedVersion::Long(MAX_VERSION_BYTES))
    } else if v.chars().any(char::is_control) {
        Err(MalformedVersion::Control)
    } else {
        Ok(v.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Suite;

    fn dataset(keys: &str) -> Result<Dataset, crate::AuditError> {
        let text = format!(
            "name = \"s\"\n[[dataset]]\nname = \"t\"\ndata = \"t.csv\"\n{keys}\n\
             constraints = \"t.dcs\"\nepsilon = 1\nmax-rows = 10\nledger = \"t.ledger\"\n\
             budget-cap = 5\n[[dataset.check]]\nname = \"c\"\nmeasure = \"mi\"\nmax = 1\n"
        );
        Suite::parse(&text, Path::new("/suites/suite.toml")).map(|mut s| s.datasets.remove(0))
    }

    #[test]
    fn the_version_keys_parse_and_a_file_is_relative_to_the_suite() {
        assert_eq!(dataset("").unwrap().version_source(), None);
        let d = dataset("version = \" snap-42 \"").unwrap();
        assert_eq!(d.read_version().unwrap().as_deref(), Some("snap-42"));
        let d = dataset("version-env = \"LOAD_ID\"").unwrap();
        assert_eq!(d.version_source(), Some(Source::Env("LOAD_ID")));
        let d = dataset("version-file = \"loads/t.version\"").unwrap();
        assert_eq!(d.version_source(), Some(Source::File(Path::new("/suites/loads/t.version"))));
    }

    #[test]
    fn bad_version_keys_are_refused_at_load_naming_the_dataset_and_key() {
        let cases = [
            (
                "version = \"a\"\nversion-file = \"v\"",
                "give at most one of `version`, `version-file`",
            ),
            ("version-env = \"V\"\nversion-file = \"v\"", "`version-env`, `version-file`"),
            ("version = \"  \"", "`version` is empty"),
            ("version = \"a\\nb\"", "`version` holds more than one line"),
            ("version-env = \"\"", "`version-env` = \"\" is not an environment variable's name"),
            ("version-file = \"\"", "`version-file` is empty"),
            ("version-file = \"t.csv\"", "`version-file` names the table itself"),
            ("version = 3", "line 5: `version`: invalid type: integer `3`"),
        ];
        for (keys, expected) in cases {
            let e = dataset(keys).unwrap_err().to_string();
            assert!(e.starts_with("/suites/suite.toml: "), "{e}");
            assert!(e.contains("dataset 't'") || e.contains("line "), "{e}");
            assert!(e.contains(expected), "{keys}: expected {expected:?} in {e:?}");
        }
        let long = format!("version = \"{}\"", "x".repeat(MAX_VERSION_BYTES + 1));
        assert!(dataset(&long).unwrap_err().to_string().contains("longer than 256 bytes"));
    }

    #[test]
    fn an_unreadable_version_is_the_datasets_failure_at_run_time() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.version");
        let d = dataset(&format!("version-file = {:?}", file.display().to_string())).unwrap();
        let missing = d.read_version().unwrap_err();
        assert_eq!(missing.reason, Reason::UnreadableVersion);
        assert!(missing.detail.contains("`version-file`"), "{}", missing.detail);
        std::fs::write(&file, "v1\n").unwrap();
        assert_eq!(d.read_version().unwrap().as_deref(), Some("v1"));
        // A table named by mistake: refused, and its rows are not quoted.
        std::fs::write(&file, "Zip,City\n10001,secret-town\n").unwrap();
        let table = d.read_version().unwrap_err();
        assert!(table.detail.contains("more than one line"), "{}", table.detail);
        assert!(!table.detail.contains("secret-town"), "{}", table.detail);
        std::fs::write(&file, " \n").unwrap();
        assert!(d.read_version().unwrap_err().detail.contains("is empty"));
        let d = dataset("version-env = \"DPINCON_TEST_SURELY_UNSET_VERSION\"").unwrap();
        let unset = d.read_version().unwrap_err();
        assert_eq!(unset.reason, Reason::UnreadableVersion);
        assert!(unset.detail.contains("DPINCON_TEST_SURELY_UNSET_VERSION is not set"));
    }
}
