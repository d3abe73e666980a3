//! `TableScanExec`: the job's table as rows numbered by their position
//! (SPEC §1), read by the executors themselves.
//!
//! Parquet is split by row groups: partition `p` reads row groups
//! `p, p + P, p + 2P, ...` and numbers each row by its row group's global
//! offset (the sum of the earlier row groups' row counts in the footer) plus
//! its position inside it, so every executor numbers the rows as the
//! embedded reader does, whoever reads which row group. A CSV table is read
//! whole by one task with the embedded reader (`dpincon_source::read_table`,
//! same type inference and declared types): CSV has no row groups to split
//! by, and `dpincon-cli generate/noise --format parquet` or a conversion
//! gives a splittable table.
//!
//! A table in an S3-compatible store is read by the executors from the
//! store ([`object`]): the job lists a prefix's Parquet objects once, in
//! key order, and the spec carries the list, so every task numbers the
//! same objects' row groups the same way, as the embedded reader does.

mod exec;
mod object;

pub use exec::{ROW_ID, ScanFormat, ScanSpec, TableScanExec};
