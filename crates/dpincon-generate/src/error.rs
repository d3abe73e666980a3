//! The crate's one error type.

use std::path::PathBuf;

/// Everything that can go wrong while generating or noising a table. Each
/// variant names the file, and where it applies the row and column, at fault.
///
/// Rows are 1-based data rows (the header is not counted); CSV syntax errors
/// give the file line instead, since a quoted field may span lines.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// A file cannot be opened or read.
    #[error("cannot read '{path}': {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The output (or its temporary file) cannot be written.
    #[error("cannot write '{path}': {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a well-formed table (bad CSV, bad Parquet, no header).
    #[error("{path}: {message}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the line when known.
        message: String,
    },
    /// One cell cannot be read or written.
    #[error("{path}: row {row}, column '{column}': {message}")]
    Cell {
        /// The file.
        path: PathBuf,
        /// 1-based data row.
        row: u64,
        /// The column's name.
        column: String,
        /// What is wrong.
        message: String,
    },
    /// A constraint names an attribute the table does not have.
    #[error(
        "constraint {constraint}: attribute '{attribute}' is not a column of '{path}' \
         (columns: {columns})"
    )]
    UnknownAttribute {
        /// The missing attribute.
        attribute: String,
        /// The constraint, as written (line number included when known).
        constraint: String,
        /// The table.
        path: PathBuf,
        /// The table's columns, comma-separated.
        columns: String,
    },
    /// The constraint file is malformed.
    #[error("{path}: {message}")]
    Constraints {
        /// The constraint file.
        path: PathBuf,
        /// The parser's message (line and column).
        message: String,
    },
    /// The output path is the input file: the generators never modify
    /// their input (SPEC §9).
    #[error(
        "the output '{path}' is the input file: the noise generators never modify their input; choose another --out"
    )]
    SameFile {
        /// The shared path.
        path: PathBuf,
    },
    /// An option is out of range or inconsistent with the data.
    #[error("invalid option: {0}")]
    Option(String),
}
