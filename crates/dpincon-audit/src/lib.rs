//! Nightly audits of private tables: a suite (TOML) names datasets and
//! checks with thresholds on released measures; this crate plans the
//! suite's budget, drives one engine job per dataset, turns each release's
//! 95% interval into a noise-aware verdict, keeps the history in SQLite and
//! writes the reports (JSON, JUnit XML, self-contained HTML).
//!
//! Privacy: every number here is post-processing of the engine's DP
//! releases (value, `ci95`, public noise scales) or of public suite
//! settings (thresholds, `max-rows`). No exact count is ever read.

mod error;
pub mod history;
pub mod report;
mod run;
pub mod suite;
pub mod verdict;

pub use error::AuditError;
pub use run::{
    AuditRun, CheckResult, DatasetPlan, DatasetResult, DatasetStatus, RemoteFailure, plan,
    run_suite, run_suite_remote,
};
pub use suite::Suite;
pub use verdict::{ExitStatus, Verdict};
