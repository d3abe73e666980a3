//! Nightly audits of private tables: a suite (TOML) names datasets and
//! checks with thresholds on released measures; this crate plans the
//! suite's budget, drives one engine job per dataset, turns each release's
//! 95% interval into a noise-aware verdict, keeps the history in SQLite and
//! writes the reports (JSON, JUnit XML, self-contained HTML), and alerts
//! a webhook on failed checks and low budgets ([`notify`]). A dataset that
//! declares a public version re-serves its last release while the version
//! is unchanged, at no ε ([`reserve`]); a test clock dates a run for
//! replays ([`RunContext`]). [`session`] is a whole run, as the CLI's
//! `audit` and the Python package's `Suite.run` do it.
//!
//! Privacy: every number here is post-processing of the engine's DP
//! releases (value, `ci95`, public noise scales) or of public suite
//! settings (thresholds, `max-rows`). No exact count is ever read. A
//! dataset without a release gets a fixed public [`Reason`]; the engine's
//! message, which may quote the data, is returned apart ([`Detail`]) for
//! the operator's standard error and never reaches a report or the history.

mod checks;
mod context;
mod error;
pub mod gated;
pub mod history;
pub mod notify;
mod outcome;
mod reason;
pub mod report;
pub mod reserve;
mod run;
pub mod session;
pub mod suite;
pub mod time;
pub mod verdict;
pub mod version;

pub use context::RunContext;
pub use error::{AuditError, CheckError, DatasetError, SuiteError};
pub use outcome::{
    AuditOutcome, AuditRun, CheckResult, DatasetBudget, DatasetResult, DatasetStatus,
};
pub use reason::{Detail, Failure, Reason};
pub use run::{Job, budgets, run_suite, run_suite_remote};
pub use session::{Finished, Observer, RunOptions, Session};
pub use suite::Suite;
pub use verdict::{ExitStatus, Verdict};
