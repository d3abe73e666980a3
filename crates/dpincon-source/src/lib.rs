//! Reads a table with DataFusion and encodes it for detection.
//!
//! [`read_table`] loads a CSV or Parquet file in input order (a tuple's id is
//! its 0-based row position, SPEC §1), inferring the schema from every row
//! unless told otherwise, with an empty CSV cell read as NULL.
//! [`TableData::schema`] gives the constraint binder its view of the columns,
//! and [`encode`] turns the compared columns into the order-preserving keys
//! of a [`dpincon_detect::Relation`].

mod encode;
mod read;

pub use encode::encode;
pub use read::{
    DataFormat, ReadOptions, SchemaOverride, TableData, declared_schema, parquet_schema,
    parse_schema_override, read_table,
};

use std::path::PathBuf;

/// The crate's one error type.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The data file cannot be opened.
    #[error("cannot read data file '{path}': {message}")]
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// DataFusion failed to read or parse the file (ragged CSV, bad value...).
    #[error("cannot read data file '{path}': {message}")]
    Read {
        /// The file.
        path: PathBuf,
        /// DataFusion's message, which names the line and column.
        message: String,
    },
    /// More rows than tuple ids (u32).
    #[error(
        "data file '{path}' has {rows} rows; dpincon supports at most 4294967295 (tuple ids are u32)"
    )]
    TooManyRows {
        /// The file.
        path: PathBuf,
        /// Rows read so far.
        rows: u64,
    },
    /// A schema override is malformed or names an unknown column.
    #[error("schema: {0}")]
    Schema(String),
    /// A value cannot be encoded in the domain a constraint compares it in.
    #[error("column '{column}', row {row}: {message}")]
    Encode {
        /// The column.
        column: String,
        /// 0-based row (tuple id).
        row: u64,
        /// Why.
        message: String,
    },
}
