//! Files of kebab-case keys (job files, coordinator configurations, audit
//! suites) read into the typed options, with every refusal naming its line
//! and key.
//!
//! The option types are flattened into each file's type (`#[serde(flatten)]`:
//! declared once, read by every entry point), and serde reads a flattened
//! part from a buffered copy of its table: a bad value there is reported
//! at the table, not at its key. [`from_str`] then finds the key whose
//! line, left out, takes the refusal away.

use serde::de::DeserializeOwned;

/// A refused file: the line and key at fault where they are known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}{message}", line.map(|l| format!("line {l}: ")).unwrap_or_default(), key.as_ref().map(|k| format!("`{k}`: ")).unwrap_or_default())]
pub struct TomlError {
    /// The 1-based line.
    pub line: Option<usize>,
    /// The key whose value is refused.
    pub key: Option<String>,
    /// serde's or the type's own words.
    pub message: String,
}

/// Reads `text` into `T`, naming the line and key of a refused value.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, TomlError> {
    let error = match toml::from_str::<T>(text) {
        Ok(value) => return Ok(value),
        Err(e) => e,
    };
    let message = error.message().trim().to_string();
    let Some(span) = error.span() else {
        return Err(TomlError { line: None, key: None, message });
    };
    let line = line_of(text, span.start);
    if let Some(key) = key_before(text, span.start) {
        return Err(TomlError { line: Some(line), key: Some(key.to_string()), message });
    }
    if let Some(name) = unknown_field(&message) {
        // The message names the key; its line is found in the table.
        let line = key_line(text, line, name).unwrap_or(line);
        return Err(TomlError { line: Some(line), key: None, message });
    }
    let found = if message.starts_with("missing field") {
        None
    } else {
        culprit::<T>(text, line, &message)
    };
    Err(match found {
        Some((line, key)) => TomlError { line: Some(line), key: Some(key), message },
        None => TomlError { line: Some(line), key: None, message },
    })
}

/// The 1-based line of byte `at`.
fn line_of(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].matches('\n').count() + 1
}

/// The key whose value starts at byte `start` (`epsilon` for the value of
/// `epsilon = "one"`, `url` in `postgres = { url = 5 }`): serde's type
/// errors name the value's type, not its key. `None` when `start` is not
/// a value (an unknown key's error spans the key, and its message names it).
fn key_before(text: &str, start: usize) -> Option<&str> {
    let line = &text[text[..start].rfind('\n').map_or(0, |i| i + 1)..start];
    let key = line.trim_end().strip_suffix('=')?;
    let key = key.rsplit(['{', ',']).next()?.trim();
    (!key.is_empty()).then_some(key)
}

/// The field an "unknown field `x`" message names.
fn unknown_field(message: &str) -> Option<&str> {
    message.strip_prefix("unknown field `")?.split('`').next()
}

/// The `key = value` lines of the table whose header (or the document's
/// start) is on `line`: (index, key).
fn table_keys<'a>(lines: &[&'a str], line: usize) -> Vec<(usize, &'a str)> {
    let is_header = |l: &str| l.trim_start().starts_with('[');
    let first = if lines.get(line - 1).is_some_and(|l| is_header(l)) { line } else { line - 1 };
    let rest = lines.iter().enumerate().skip(first);
    rest.take_while(|(_, l)| !is_header(l))
        .filter_map(|(i, l)| {
            let key = l.split_once('=')?.0.trim().trim_matches('"');
            (!key.is_empty() && !key.starts_with('#')).then_some((i, key))
        })
        .collect()
}

/// The 1-based line of `key` in the table whose header is on `line`.
fn key_line(text: &str, line: usize, key: &str) -> Option<usize> {
    let lines: Vec<&str> = text.split('\n').collect();
    table_keys(&lines, line).into_iter().find(|(_, k)| *k == key).map(|(i, _)| i + 1)
}

/// In the table whose header (or the document's start) is on `line`, the
/// first `key = value` line without which the file is read, or refused
/// for another reason than `message` (never a syntax error or a missing
/// key: the flattened parts' keys are all optional).
fn culprit<T: DeserializeOwned>(text: &str, line: usize, message: &str) -> Option<(usize, String)> {
    let lines: Vec<&str> = text.split('\n').collect();
    for (i, key) in table_keys(&lines, line) {
        let mut without = lines.clone();
        without[i] = "";
        let without = without.join("\n");
        if toml::from_str::<toml::Table>(&without).is_err() {
            continue;
        }
        match toml::from_str::<T>(&without) {
            Ok(_) => return Some((i + 1, key.to_string())),
            Err(e)
                if e.message().trim() != message && !e.message().starts_with("missing field") =>
            {
                return Some((i + 1, key.to_string()));
            }
            Err(_) => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;
    use crate::{ByteSize, ReleaseOptions};

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "kebab-case")]
    #[allow(dead_code)] // read by serde only
    struct Entry {
        name: String,
        #[serde(flatten)]
        release: ReleaseOptions,
        memory_limit: Option<ByteSize>,
    }

    #[derive(Debug, Deserialize)]
    struct File {
        #[allow(dead_code)]
        entry: Vec<Entry>,
    }

    #[test]
    fn a_flattened_keys_bad_value_is_refused_naming_its_line_and_key() {
        let root = "name = \"a\"\nmemory-limit = \"1GiB\"\n\nepsilon = \"x\"\n";
        let e = from_str::<Entry>(root).unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (Some(4), Some("epsilon")), "{e}");
        assert!(e.to_string().starts_with("line 4: `epsilon`: invalid type"), "{e}");
        let tables = "[[entry]]\nname = \"a\"\n[[entry]]\nname = \"b\"\nstrategy = \"best\"\n";
        let e = from_str::<File>(tables).unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (Some(5), Some("strategy")), "{e}");
        assert!(e.message.contains("unknown strategy 'best'"), "{e}");
    }

    #[test]
    fn own_keys_unknown_keys_and_missing_keys_keep_serdes_words() {
        let e = from_str::<Entry>("name = \"a\"\nmemory-limit = \"12XB\"\n").unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (Some(2), Some("memory-limit")), "{e}");
        let e = from_str::<Entry>("name = \"a\"\nnope = 1\n").unwrap_err();
        assert!(e.message.contains("unknown field `nope`"), "{e}");
        let e = from_str::<File>("[[entry]]\nname = \"a\"\n\nnope = 1\n").unwrap_err();
        assert_eq!(e.line, Some(4), "at its key, not at the table's header: {e}");
        let e = from_str::<Entry>("epsilon = 1\n").unwrap_err();
        assert!(e.message.contains("missing field `name`") && e.key.is_none(), "{e}");
        assert_eq!(
            from_str::<Entry>("name = \"a\"\nepsilon = 2\n").unwrap().release.epsilon,
            Some(2.0)
        );
    }
}
