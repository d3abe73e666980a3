//! Why a dataset has no release: a fixed public reason for the reports and
//! the history, the detail for the operator's standard error only.
//!
//! An engine's message is neither noised nor charged, and it may quote the
//! table: a cell value (`'9x12' as type 'Int64'`), a row number, a type
//! inferred from the rows (`t1.Zip (string)`). Reports are read by people
//! who may not see the data, and the history keeps them for good, so they
//! hold only a [`Reason`], from a closed set of fixed texts. [`Failure`]
//! pairs it with the detail, which never reaches a report: [`Detail`]s are
//! returned beside the run and are deliberately not `Serialize`.

use dpincon_engine::EngineError;
use serde::{Serialize, Serializer};

/// The public reason a dataset has no release. Each has one fixed text
/// (reports and the history serialise it as that text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// The table cannot be opened, read or decoded (a cell not of its
    /// column's declared type), or has no rows, or too many.
    UnreadableData,
    /// The constraint file cannot be read or parsed, or does not fit the
    /// table's columns.
    BadConstraint,
    /// The run would pass the dataset's budget cap (decided before any work
    /// from the ledger and the suite; nothing read, nothing charged).
    BudgetExhausted,
    /// The ledger cannot be read, written or locked, or refuses the job for
    /// another reason than the cap (another table's ledger, a suite cap above
    /// the ledger's).
    LedgerRefused,
    /// The engine refused the job's options.
    InvalidJob,
    /// The dataset declares a version (`version-env`, `version-file`) that
    /// could not be read: refused before any work, nothing charged (whether
    /// to re-serve cannot be decided without it).
    UnreadableVersion,
    /// The coordinator has no dataset of the suite's `coordinator-dataset`.
    UnknownDataset,
    /// The coordinator refused the job at admission (token, limits, options).
    RefusedByCoordinator,
    /// The coordinator could not be reached.
    CoordinatorUnreachable,
    /// The coordinator accepted the job, which then failed or was cancelled.
    FailedOnCoordinator,
    /// Anything else (detection, release, a malformed report).
    Internal,
}

impl Reason {
    /// The fixed public text.
    pub fn text(self) -> &'static str {
        match self {
            Reason::UnreadableData => "unreadable data",
            Reason::BadConstraint => "bad constraint",
            Reason::BudgetExhausted => "budget exhausted",
            Reason::LedgerRefused => "ledger refused",
            Reason::InvalidJob => "invalid job",
            Reason::UnreadableVersion => "unreadable version",
            Reason::UnknownDataset => "unknown dataset",
            Reason::RefusedByCoordinator => "refused by the coordinator",
            Reason::CoordinatorUnreachable => "coordinator unreachable",
            Reason::FailedOnCoordinator => "failed on the coordinator",
            Reason::Internal => "internal error",
        }
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.text())
    }
}

impl Serialize for Reason {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.text())
    }
}

/// A dataset without a release: the public reason and the detail.
#[derive(Debug, Clone)]
pub struct Failure {
    /// What reports say.
    pub reason: Reason,
    /// The full message, for the operator's standard error only (it may
    /// quote the data).
    pub detail: String,
}

impl Failure {
    /// A failure for `reason`, detailed by `detail`.
    pub fn new(reason: Reason, detail: impl std::fmt::Display) -> Self {
        Failure { reason, detail: detail.to_string() }
    }

    /// The failure of a dataset whose job was not started, or was stopped,
    /// because the caller gave up on the run ([`crate::Observer::cancelled`]).
    pub fn interrupted() -> Self {
        Failure::new(Reason::Internal, "interrupted")
    }
}

impl From<EngineError> for Failure {
    /// Classifies by the error's kind alone, never by its text.
    fn from(e: EngineError) -> Self {
        let reason = match &e {
            EngineError::Source(_) => Reason::UnreadableData,
            EngineError::ConstraintFile { .. } | EngineError::Constraint { .. } => {
                Reason::BadConstraint
            }
            EngineError::Config(_) => Reason::InvalidJob,
            EngineError::Ledger { .. } => Reason::LedgerRefused,
            // Detection, release and the distributed loader; and any kind a
            // later engine adds: the safe answer says nothing more.
            _ => Reason::Internal,
        };
        Failure::new(reason, e)
    }
}

/// The detail of one dataset's failure, for the operator's standard error.
/// Not `Serialize`: it cannot end up in a report or the history by accident.
#[derive(Debug, Clone)]
pub struct Detail {
    /// The dataset's name in the suite.
    pub dataset: String,
    /// The public reason reports give.
    pub reason: Reason,
    /// The full message (it may quote the data).
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_serialise_as_their_fixed_text() {
        assert_eq!(serde_json::to_value(Reason::UnreadableData).unwrap(), "unreadable data");
        assert_eq!(Reason::BudgetExhausted.to_string(), "budget exhausted");
    }

    #[test]
    fn engine_errors_are_classified_by_kind() {
        let config = Failure::from(EngineError::Config("seed 'x'".into()));
        assert_eq!(
            (config.reason, config.detail.as_str()),
            (Reason::InvalidJob, "invalid job: seed 'x'")
        );
        let read = Failure::from(EngineError::Source(dpincon_source::SourceError::Read {
            path: "t.csv".into(),
            message: "value '9x12'".into(),
        }));
        assert_eq!(read.reason, Reason::UnreadableData);
        assert!(read.detail.contains("9x12"));
        let ledger = Failure::from(EngineError::Ledger { path: "l".into(), message: "m".into() });
        assert_eq!(ledger.reason, Reason::LedgerRefused);
    }
}
