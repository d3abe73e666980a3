//! Runs one dpincon job in this process: constraints, table, detection,
//! measures and (with `dpincon-release`) the differentially private releases.
//!
//! [`JobConfig`] is the one configuration type, shared by the CLI and the
//! services; [`run_job`] drives the pure crates in order and returns a
//! [`Report`] ready to serialise. Nothing here prints: progress goes through
//! the [`Progress`] trait so the CLI can draw it and services can forward it.
//!
//! Privacy order of a job: every option is validated and the ledger checked
//! before the table is read; the ledger is charged (durably) before the
//! first noise is drawn; exact values appear only behind `non_private`.

mod config;
pub mod experiment;
pub mod failpoint;
pub mod gate;
mod job;
pub mod ledger;
mod load;
mod privacy;
mod progress;
pub mod repair;
mod report;
pub mod validate;

pub use config::{Constraints, DataPolicy, JobConfig};
pub use dpincon_api::{Measure, ReleaseOptions, TestOptions};
pub use dpincon_source::{ColumnTypes, TableSpec};
pub use dpincon_source::{DataFormat, OutputFile, PostgresSource};
pub use job::{
    JobOutcome, Prepaid, new_job_id, run_job, run_job_on_table, run_job_with, run_prepaid_job,
};
pub use load::{
    BoundTable, Detected, EncodedTable, JobLoader, LoadContext, LoadedJob, LocalLoader, ReadTable,
    TableLoader, load, load_with,
};
pub use privacy::{check_repair_memory, repair_is_exact, validate};
pub use progress::{NoProgress, Phase, Progress, UnknownPhase};
pub use report::{
    BudgetReport, DetectionReport, MeasuresReport, NON_PRIVATE_LABEL, NonPrivateReport, PlanReport,
    Report, Timings,
};

use std::path::PathBuf;

/// The crate's one error type: what went wrong, naming the file, line,
/// row, column or constraint at fault.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The constraint file cannot be read.
    #[error("cannot read constraint file '{path}': {message}")]
    ConstraintFile {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The constraints are malformed or do not fit the table.
    #[error("{path}: {source}")]
    Constraint {
        /// The constraint file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: dpincon_constraints::ConstraintError,
    },
    /// The table cannot be read or encoded.
    #[error(transparent)]
    Source(#[from] dpincon_source::SourceError),
    /// Detection could not be set up.
    #[error(transparent)]
    Detect(#[from] dpincon_detect::DetectError),
    /// The job's options are inconsistent.
    #[error("invalid job: {0}")]
    Config(String),
    /// The budget ledger refuses the job or cannot be used.
    #[error("budget ledger '{path}': {message}")]
    Ledger {
        /// The ledger file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The job passed a public quota (`--max-edges`): no release.
    #[error("over quota: {0}")]
    OverQuota(String),
    /// A release failed.
    #[error(transparent)]
    Release(#[from] dpincon_release::ReleaseError),
    /// Loading on remote executors failed (the distributed engine's
    /// message, which may quote data).
    #[error("distributed detection failed: {0}")]
    Remote(String),
}
