//! What a `TableScanExec` reads, and how every reader numbers and types
//! its rows: the operator (`exec`) and its readers (`csv`, `object`) all
//! use these, so they sit below them.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, UInt32Array};
use datafusion::arrow::compute::{CastOptions, cast_with_options};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::error::{DataFusionError, Result};
use dpincon_source::ColumnTypes;
use dpincon_source::CsvRange;
use dpincon_source::object::TableObject;
use serde::{Deserialize, Serialize};

/// The name of the row-id column every scan puts first (UInt32, the row's
/// 0-based position in the table).
pub const ROW_ID: &str = "__dpincon_row";

/// The table's format, as the executors read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ScanFormat {
    /// Parquet: split by row groups.
    Parquet,
    /// Parquet objects in an S3-compatible store (the spec's `path` is the
    /// table's `s3://` URL), in row order as the job listed them: split by
    /// row groups as a file is, over all the objects' row groups in order.
    ParquetObjects {
        /// The objects (key and size), in row order.
        objects: Vec<TableObject>,
    },
    /// CSV with a header row, every column's type declared, split into
    /// ranges of whole records (`dpincon_source::CsvSplitter`): partition
    /// `p` reads ranges `p, p + P, ...` (as Parquet's row groups).
    Csv {
        /// Every column's type, in file order (the embedded reader's
        /// `schema`).
        schema: ColumnTypes,
        /// The table's ranges, in row order.
        ranges: Vec<CsvRange>,
    },
}

/// What a scan reads: everything the operator is rebuilt from on an
/// executor (the codec serialises it with the output schema).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScanSpec {
    /// A path every executor can read.
    pub path: String,
    /// How to read it.
    pub format: ScanFormat,
    /// The columns to keep, by name, in output order (after the row id).
    pub columns: Vec<String>,
    /// Scan partitions P: partition `p` reads the table's units (row
    /// groups, CSV ranges) `p, p + P, ...` (for CSV, at most its ranges).
    pub partitions: usize,
}

/// A reader's error, naming the table.
pub(super) fn read_error(path: &str, e: impl fmt::Display) -> DataFusionError {
    DataFusionError::Execution(format!("cannot read '{path}': {e}"))
}

/// The scan's columns of `batch` (a reader's batch of the table at `path`,
/// its columns in whatever order the reader keeps), by name in the scan's
/// order, behind row ids from `first`, cast to the scan's declared types
/// (a file that no longer matches its plan is an error, never a silent
/// reinterpretation).
pub(super) fn with_row_ids(
    schema: &SchemaRef,
    path: &str,
    first: u32,
    batch: &RecordBatch,
) -> Result<RecordBatch> {
    let rows = batch.num_rows() as u32;
    let ids: ArrayRef = Arc::new(UInt32Array::from_iter_values(first..first + rows));
    let strict = CastOptions { safe: false, ..Default::default() };
    let mut out = vec![ids];
    for field in schema.fields().iter().skip(1) {
        let column = batch
            .column_by_name(field.name())
            .ok_or_else(|| read_error(path, "a projected column is missing"))?;
        out.push(cast_with_options(column, field.data_type(), &strict)?);
    }
    Ok(RecordBatch::try_new(schema.clone(), out)?)
}
