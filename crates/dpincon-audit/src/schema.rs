//! A dataset's declared table: its format and every column's type, checked
//! against the file's header (or Parquet footer) when the suite loads.
//!
//! Without a declared schema the engine infers each CSV column's type from
//! every row, so one typo cell turns a numeric column into a string one
//! and the job's fate (and, before reasons were fixed, its message)
//! depends on that row. Declared, every type is public: the engine reads
//! the header for the names and no type from any row, as the coordinator
//! does for its registered datasets.

use std::path::Path;

use dpincon_source::{
    DataFormat, SchemaOverride, SourceError, declared_schema, parquet_schema, parse_schema_override,
};

/// Parses a `schema` value (`Name:type, ...`, the syntax of `run --schema`)
/// and checks it declares each column once.
pub(crate) fn parse(text: &str) -> Result<Vec<SchemaOverride>, String> {
    let entries = parse_schema_override(text).map_err(|e| match e {
        SourceError::Schema(message) => message,
        other => other.to_string(),
    })?;
    if entries.is_empty() {
        return Err("no column declared (give every column, e.g. \"Zip:int, City:string\")".into());
    }
    for (i, e) in entries.iter().enumerate() {
        if entries[..i].iter().any(|p| p.column == e.column) {
            return Err(format!("column '{}' declared twice", e.column));
        }
    }
    Ok(entries)
}

/// Checks `entries` against the table at `path`: a CSV header must name
/// exactly the declared columns, in order; a Parquet footer must hold the
/// same columns and kinds. Only the header or the footer is read, never a
/// row. `Ok` when the file cannot be opened: a missing table is that
/// dataset's error when it runs (the other datasets still run).
pub(crate) fn check_file(
    path: &Path,
    format: DataFormat,
    entries: &[SchemaOverride],
) -> Result<(), String> {
    let declared: Vec<&str> = entries.iter().map(|e| e.column.as_str()).collect();
    match format {
        DataFormat::Csv => {
            let Some(header) = csv_header(path) else { return Ok(()) };
            if header != declared {
                return Err(format!(
                    "must declare every column of '{}' in order: the header has [{}], the \
                     schema [{}]",
                    path.display(),
                    header.join(", "),
                    declared.join(", ")
                ));
            }
        }
        DataFormat::Parquet => {
            let Ok(file) = parquet_schema(path) else { return Ok(()) };
            if declared_schema(entries).columns != file.columns {
                let names = file.columns.iter().map(|(n, k)| format!("{n}:{k:?}"));
                return Err(format!(
                    "does not match the Parquet footer of '{}': it has [{}]",
                    path.display(),
                    names.collect::<Vec<_>>().join(", ")
                ));
            }
        }
    }
    Ok(())
}

/// The column names of a CSV file's header row (only that row is read),
/// trimmed as the coordinator compares them; `None` if it cannot be read.
fn csv_header(path: &Path) -> Option<Vec<String>> {
    dpincon_source::csv_header(path).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schema_declares_each_column_once() {
        assert_eq!(parse("Zip:int, City:string").unwrap().len(), 2);
        assert!(parse("Zip").unwrap_err().contains("'Zip' is not of the form Column:type"));
        assert!(parse("Zip:integer64").unwrap_err().contains("unknown type 'integer64'"));
        assert!(parse(" , ").unwrap_err().contains("no column declared"));
        assert!(parse("Zip:int,Zip:string").unwrap_err().contains("'Zip' declared twice"));
    }

    #[test]
    fn the_header_must_name_the_declared_columns_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("t.csv");
        std::fs::write(&csv, "Zip, City\n9x12,LA\n").unwrap();
        let ok = parse("Zip:int, City:string").unwrap();
        assert_eq!(check_file(&csv, DataFormat::Csv, &ok), Ok(()));
        let swapped = parse("City:string, Zip:int").unwrap();
        let err = check_file(&csv, DataFormat::Csv, &swapped).unwrap_err();
        assert!(err.contains("the header has [Zip, City], the schema [City, Zip]"), "{err}");
        // A missing table is the run's error, not the suite's.
        assert_eq!(check_file(&dir.path().join("none.csv"), DataFormat::Csv, &ok), Ok(()));
    }
}
