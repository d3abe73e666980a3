//! The audit's one error type.

use std::path::PathBuf;

/// The crate's one error type.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The suite file cannot be read.
    #[error("cannot read suite '{path}': {message}")]
    Read {
        /// The suite file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The suite is malformed or inconsistent (the message names the line
    /// or the dataset/check at fault).
    #[error("{path}: {message}")]
    Suite {
        /// The suite file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The history store cannot be used.
    #[error("history '{path}': {message}")]
    History {
        /// The database file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The test clock (`--as-of`) is malformed.
    #[error(transparent)]
    Time(#[from] crate::time::TimeError),
    /// The test clock (`--as-of`) is earlier than the suite's latest run in
    /// the history (the message names both dates).
    #[error("{0}")]
    TestClock(String),
    /// A report cannot be written.
    #[error("cannot write report '{path}': {message}")]
    Report {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
}
