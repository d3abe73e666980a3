//! Reads a table with Arrow's readers and encodes it for detection.
//!
//! [`read_table`] loads a CSV or Parquet file in input order (a tuple's id is
//! its 0-based row position, SPEC §1), inferring the schema from every row
//! unless told otherwise (arrow-csv's rules, without its per-cell regex),
//! with an empty CSV cell read as NULL. It opens no DataFusion session: for
//! one file read in order, the session's set-up cost more than the read.
//! [`TableData::schema`] gives the constraint binder its view of the columns,
//! and [`encode`] turns the compared columns into the order-preserving keys
//! of a [`dpincon_detect::Relation`]; [`prepare_detection`] binds, encodes
//! and compiles a job's constraints for a table in one step, whoever
//! detects (the job, the coordinator's plan, an executor). [`PostgresSource::read`] reads a
//! PostgreSQL table or query into the same [`TableData`] (see
//! [`postgres`] for its row order and NULLs). A path that is an
//! `s3://bucket/key` URL is read from an S3-compatible store ([`object`]:
//! settings, the row order of a prefix, secrets). In-memory tables come as
//! batches ([`read_batches`]: an Arrow C stream) or as chunked columns
//! ([`read_columns`]: a Polars DataFrame's Series), their buffers shared.

mod arrow_io;
mod columns;
mod csv_file;
mod encode;
pub mod object;
mod output;
pub mod postgres;
mod prepare;
mod read;
mod spec;

pub use columns::{ChunkedColumn, read_columns};
pub use csv_file::infer::InferredType;
pub use csv_file::ranges::{
    CsvRange, CsvSplit, CsvSplitter, MIN_RANGE_BYTES, read_csv_range, read_range_from, split_csv,
};
pub use encode::encode;
pub use object::{ObjectUrl, S3Settings};
pub use output::OutputFile;
pub use postgres::PostgresSource;
pub use prepare::{Prepared, prepare_detection};
pub use read::{
    DataFormat, ReadOptions, SchemaOverride, TableData, UnknownFormat, csv_header,
    declared_arrow_schema, declared_schema, parquet_schema, parse_schema_override, read_batches,
    read_table,
};
pub use spec::{ColumnTypes, TableSpec, check_header, is_object_url};

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
    /// The file cannot be read or parsed (ragged CSV, bad value...).
    #[error("cannot read data file '{path}': {message}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why, with the line and column.
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
    /// A header and no rows: every column's type is unknown and there is
    /// nothing to measure.
    #[error(
        "data file '{path}' has a header and no rows: there is nothing to measure \
         (nothing was released or charged)"
    )]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// A compared column with no value in any row: its type cannot be
    /// inferred from the file.
    #[error(
        "data file '{path}', column '{column}': every row is empty (NULL), so the column's \
         type cannot be inferred, and constraint line {line} compares it; declare it with \
         --schema {column}:int (or float, string). A NULL never violates a constraint \
         (SPEC §1), so such a constraint finds no conflict"
    )]
    AllNull {
        /// The file.
        path: PathBuf,
        /// The column.
        column: String,
        /// 1-based line of the first constraint that compares it.
        line: usize,
    },
    /// A PostgreSQL source cannot be reached or read (the source is named
    /// without its password).
    #[error("PostgreSQL {source_name}: {message}")]
    Postgres {
        /// The URL without its password, and the table or query.
        source_name: String,
        /// Why.
        message: String,
    },
    /// An object store's table cannot be reached or read (named by its
    /// URL, which holds no credential).
    #[error("cannot read '{url}': {message}")]
    Object {
        /// `s3://bucket/key`.
        url: String,
        /// Why.
        message: String,
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
