//! A job's configuration: the operator's [`TableSpec`] and [`DataPolicy`], and the options
//! anyone may set ([`ReleaseOptions`], [`TestOptions`]), one type each.

use std::path::PathBuf;

use dpincon_api::{ByteSize, ReleaseOptions, TestOptions};
use dpincon_source::{PostgresSource, TableSpec};
use serde::{Deserialize, Serialize};

use crate::EngineError;

/// Everything a job needs: the one configuration type (CLI flags, job files
/// and the coordinator's jobs all become a `JobConfig`). A job file is one
/// flat table of kebab-case keys; a key no part declares is refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct JobConfig {
    /// The denial constraints: a file, or the text inline.
    pub constraints: Constraints,
    /// The table and how it is read.
    #[serde(flatten)]
    pub table: TableSpec,
    /// The dataset's resources, public bounds and ledger.
    #[serde(flatten)]
    pub data: DataPolicy,
    /// How the measures are released.
    #[serde(flatten)]
    pub release: ReleaseOptions,
    /// Seed, exact values, brute-force detection.
    #[serde(flatten)]
    pub test: TestOptions,
}

/// A job's denial constraints: a file (`constraints = "t.dcs"`), or the
/// text itself (`constraints = { inline = "FD: Zip -> City" }`: a
/// coordinator's job process gets its client's text so, and a caller
/// with no file, such as the Python package, passes it so).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Constraints {
    /// A constraint file.
    File(PathBuf),
    /// The constraint text.
    Inline {
        /// The text, one constraint a line.
        inline: String,
    },
}

impl Constraints {
    /// The text, read from the file if need be.
    pub fn text(&self) -> Result<String, EngineError> {
        match self {
            Constraints::File(path) => std::fs::read_to_string(path).map_err(|e| {
                EngineError::ConstraintFile { path: path.clone(), message: e.to_string() }
            }),
            Constraints::Inline { inline } => Ok(inline.clone()),
        }
    }

    /// What errors and reports call them: the file's path, or `inline`.
    pub fn origin(&self) -> PathBuf {
        match self {
            Constraints::File(path) => path.clone(),
            Constraints::Inline { .. } => PathBuf::from("inline"),
        }
    }

    /// The parsed constraints; errors name [`Constraints::origin`].
    pub fn parse(&self) -> Result<Vec<dpincon_constraints::DenialConstraint>, EngineError> {
        self.read().map(|(_, parsed)| parsed)
    }

    /// The text, read once, and its parse (the job's load ships the text to
    /// a cluster's executors); errors name [`Constraints::origin`].
    pub fn read(
        &self,
    ) -> Result<(String, Vec<dpincon_constraints::DenialConstraint>), EngineError> {
        let text = self.text()?;
        let parsed = dpincon_constraints::parse_constraints(&text)
            .map_err(|source| EngineError::Constraint { path: self.origin(), source })?;
        Ok((text, parsed))
    }
}

impl<P: Into<PathBuf>> From<P> for Constraints {
    fn from(path: P) -> Self {
        Constraints::File(path.into())
    }
}

/// What an operator sets for a dataset's jobs beside its table
/// ([`TableSpec`]): the resources they get (threads, memory), the public
/// bounds they are measured under (`max-rows`, `max-edges`) and the
/// budget they draw on (`ledger`, `budget-cap`). On a coordinator a client
/// sets none of it. Declared once: `run`'s flags (with the `clap`
/// feature), job files, coordinator datasets and audit suites all read
/// into it, beside a [`TableSpec`] (siblings, not nested: serde's
/// `deny_unknown_fields` cannot see through a flattened type that itself
/// flattens another).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(rename_all = "kebab-case")]
pub struct DataPolicy {
    /// Detection threads (default: all cores).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "clap", arg(long))]
    pub threads: Option<usize>,
    /// Memory for detection (the encoded table and the conflict graph)
    /// before the graph spills to disk, e.g. `1GiB` (default: no limit).
    /// Never changes a result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "clap", arg(long))]
    pub memory_limit: Option<ByteSize>,
    /// Refuse to measure a conflict graph of more edges (a public quota on
    /// the measure phase's work; checked before the charge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "clap", arg(long))]
    pub max_edges: Option<u64>,
    /// Public upper bound n_max on the number of rows (never the true count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "clap", arg(long))]
    pub max_rows: Option<u64>,
    /// The dataset's budget ledger (JSON lines); created if missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "clap", arg(long))]
    pub ledger: Option<PathBuf>,
    /// Total ε the dataset may ever spend; jobs past it are refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "clap", arg(long))]
    pub budget_cap: Option<f64>,
}

impl DataPolicy {
    /// The keys only an operator sets: the table's and the policy's.
    pub fn keys() -> Vec<&'static str> {
        let table = dpincon_api::keys::<TableSpec>().iter();
        table.chain(dpincon_api::keys::<DataPolicy>()).copied().collect()
    }

    /// `self`, with every setting `over` gives taken from `over` (flags
    /// over a job file).
    pub fn overridden_by(self, over: DataPolicy) -> DataPolicy {
        DataPolicy {
            threads: over.threads.or(self.threads),
            memory_limit: over.memory_limit.or(self.memory_limit),
            max_edges: over.max_edges.or(self.max_edges),
            max_rows: over.max_rows.or(self.max_rows),
            ledger: over.ledger.or(self.ledger),
            budget_cap: over.budget_cap.or(self.budget_cap),
        }
    }
}

impl JobConfig {
    /// A job on the PostgreSQL table or query `source` under `constraints`.
    pub fn postgres(source: PostgresSource, constraints: impl Into<Constraints>) -> Self {
        JobConfig::with(TableSpec::postgres(source), constraints)
    }

    /// A job on `data` under `constraints` with every other option at its default.
    pub fn new(data: impl Into<PathBuf>, constraints: impl Into<Constraints>) -> Self {
        JobConfig::with(TableSpec::file(data), constraints)
    }

    /// A job on `table` with the default options.
    pub fn with(table: TableSpec, constraints: impl Into<Constraints>) -> Self {
        JobConfig {
            constraints: constraints.into(),
            table,
            data: DataPolicy::default(),
            release: ReleaseOptions::default(),
            test: TestOptions::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use dpincon_api::{Measure, Strategy};

    use super::*;

    const FILE: &str = "data = \"t.csv\"\nconstraints = \"t.dcs\"\nformat = \"csv\"\n\
        epsilon = 1\nmeasures = [\"mi\"]\nstrategy = \"gem\"\nseed = 7\nledger = \"t.ledger\"\n";

    #[test]
    fn a_job_file_is_one_flat_table_of_its_parts_keys() {
        let job: JobConfig = toml::from_str(FILE).unwrap();
        assert_eq!(job.table.data, Some(PathBuf::from("t.csv")));
        assert_eq!(job.table.format, Some(dpincon_source::DataFormat::Csv));
        assert_eq!(job.data.ledger, Some(PathBuf::from("t.ledger")));
        assert_eq!(job.release.measures, Some(vec![Measure::Mi]));
        assert_eq!(job.release.strategy, Some(Strategy::Gem));
        assert_eq!(job.test.seed, Some(7));
        // The coordinator's job process reads what the coordinator wrote.
        let json = serde_json::to_string(&job).unwrap();
        assert_eq!(serde_json::from_str::<JobConfig>(&json).unwrap(), job);
    }

    #[test]
    fn constraints_are_a_file_or_inline_text() {
        let file: JobConfig = toml::from_str(FILE).unwrap();
        assert_eq!(file.constraints, Constraints::File("t.dcs".into()));
        let text = FILE.replace("\"t.dcs\"", "{ inline = \"FD: A -> B\" }");
        let inline: JobConfig = toml::from_str(&text).unwrap();
        assert_eq!(inline.constraints, Constraints::Inline { inline: "FD: A -> B".into() });
        assert_eq!(inline.constraints.text().unwrap(), "FD: A -> B");
        assert_eq!(inline.constraints.origin(), PathBuf::from("inline"));
        let json = serde_json::to_string(&inline).unwrap();
        assert_eq!(serde_json::from_str::<JobConfig>(&json).unwrap(), inline);
        let bad = Constraints::Inline { inline: "FD: A ->".into() }.read().unwrap_err();
        assert!(bad.to_string().contains("inline"), "errors name the origin: {bad}");
    }

    #[test]
    fn unknown_keys_and_bad_values_are_refused_by_name() {
        for (line, needle) in [
            ("nope = 1", "unknown field `nope`"),
            ("dataset = \"t\"", "unknown field `dataset`"),
            ("strategy = \"best\"", "unknown strategy 'best'"),
            ("format = \"xlsx\"", "unknown variant `xlsx`, expected `csv` or `parquet`"),
        ] {
            let text = FILE.replace("strategy = \"gem\"\n", "").replace("format = \"csv\"\n", "");
            let message =
                toml::from_str::<JobConfig>(&format!("{text}{line}\n")).unwrap_err().to_string();
            assert!(message.contains(needle), "{line}: {message}");
        }
    }

    #[test]
    fn the_operators_keys_are_the_table_and_the_policy() {
        let keys = DataPolicy::keys();
        for key in
            ["data", "postgres", "schema", "memory-limit", "max-rows", "ledger", "budget-cap"]
        {
            assert!(keys.contains(&key), "{key}");
        }
        assert!(!keys.contains(&"epsilon") && !keys.contains(&"seed"));
    }
}
