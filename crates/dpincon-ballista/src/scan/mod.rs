//! `TableScanExec`: the job's table as rows numbered by their position
//! (SPEC §1), read by the executors themselves.
//!
//! Parquet is split by row groups: partition `p` reads row groups
//! `p, p + P, p + 2P, ...` and numbers each row by its row group's global
//! offset (the sum of the earlier row groups' row counts in the footer) plus
//! its position inside it, so every executor numbers the rows as the
//! embedded reader does, whoever reads which row group. A CSV table (every
//! column's type declared) is cut by the job, before it is planned, into
//! byte ranges of whole records with the count of records before each
//! (`dpincon_source::CsvSplitter`: one pass in order with arrow-csv's own
//! record rules, quoted new lines included); partition `p` reads ranges
//! `p, p + P, ...` with arrow-csv (`csv.rs`) and numbers each range's rows
//! from its first row, so the ids are the embedded reader's.
//!
//! A table in an S3-compatible store is read by the executors from the
//! store (`object.rs`): the job lists a prefix's Parquet objects once, in
//! key order, and the spec carries the list, so every task numbers the
//! same objects' row groups the same way, as the embedded reader does; a
//! CSV object is streamed once by the job to cut it, and each task
//! fetches its range.

mod csv;
mod exec;
mod object;
mod spec;

pub use exec::TableScanExec;
pub use spec::{ROW_ID, ScanFormat, ScanSpec};
