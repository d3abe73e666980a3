//! What a run produced, as the reports, the history and the alerts read
//! it: public figures and DP releases only. The types sit below the
//! modules that make them (`run`, `gated`, `reserve`), which fill them in.

use dpincon_engine::Measure;
use dpincon_engine::gate::{GateOutcome, GateReport, OpenReason};
use serde::{Deserialize, Serialize};

use crate::reason::{Detail, Reason};
use crate::verdict::{ExitStatus, Verdict};

/// One dataset's budget before the run (public: ε spent and caps).
#[derive(Debug, Clone, Serialize)]
pub struct DatasetBudget {
    /// The ledger file.
    pub ledger: String,
    /// The cap in force (the smaller of the ledger's and the suite's).
    pub cap: f64,
    /// ε spent before this run.
    pub spent: f64,
    /// ε this run needs (ε per measure × measures).
    pub per_run: f64,
    /// ε left after this run (before it, when refused).
    pub remaining: f64,
    /// Whole runs left after this one at this rate, divided by `runs-per-day`.
    pub nights_left: f64,
    /// Why the run was refused before any work, if it was (a fixed public
    /// reason; the ledger's words go to the operator only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<Reason>,
    /// A gated dataset's plan over the horizon ([`crate::gated`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<BudgetPlan>,
}

/// What happened to a dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DatasetStatus {
    /// Released and checked.
    Ran,
    /// Refused by its budget before any work; nothing charged.
    Refused,
    /// The job failed (`error` says why).
    Error,
    /// The declared version is unchanged since the last release, which is
    /// served again (`reserved_from`); nothing ran, nothing charged.
    Reserved,
}

/// One check's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct CheckResult {
    /// Check name.
    pub name: String,
    /// Dataset name.
    pub dataset: String,
    /// `mi`, `p` or `r`.
    pub measure: Measure,
    /// The threshold in the measure's units.
    pub threshold: f64,
    /// The threshold is a minimum (`min`): the check wants the measure at
    /// or above it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub at_least: bool,
    /// The DP release (point value), when released.
    pub value: Option<i64>,
    /// Its 95% interval, which holds the measure itself (for I_MI and I_P
    /// the projection's bias included) with probability ≥ 95%.
    pub ci95: Option<[i64; 2]>,
    /// ε of the release.
    pub epsilon: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
    /// A `warn` check.
    pub warn_only: bool,
    /// One sentence for people.
    pub message: String,
    /// On a gated dataset: whether the night passed its gate (the release
    /// re-served within the gate's interval, no ε) or released afresh.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gate: Option<CheckGate>,
}

/// One dataset's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct DatasetResult {
    /// Dataset name.
    pub name: String,
    /// The data file.
    pub data: String,
    /// Ran, refused or error.
    pub status: DatasetStatus,
    /// The dataset's budget before the run.
    pub budget: DatasetBudget,
    /// The engine's job id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
    /// The noise was seeded (test mode): not a release to publish.
    pub seeded: bool,
    /// Why there is no release, when the job failed or was refused: a
    /// fixed public reason, never the engine's message (see [`Reason`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Reason>,
    /// The checks.
    pub checks: Vec<CheckResult>,
    /// The dataset's declared public version, when it declares one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The release's public settings, recorded beside a version: what a
    /// later run compares before re-serving.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settings: Option<ReleaseSettings>,
    /// When re-served: the release served (its job and its night).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reserved_from: Option<ReservedFrom>,
}

/// A whole audit.
#[derive(Debug, Clone, Serialize)]
pub struct AuditRun {
    /// Report schema version (see the crate README).
    pub schema_version: u32,
    /// The suite name.
    pub suite: String,
    /// Start time, seconds since the epoch (the test clock's, with one).
    pub started_unix: u64,
    /// TEST MODE: `--as-of`'s value, when a test clock set `started_unix`
    /// instead of the real time (every report says so).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_clock: Option<String>,
    /// Per dataset.
    pub datasets: Vec<DatasetResult>,
    /// The worst outcome.
    pub status: ExitStatus,
    /// The process exit code (0 pass, 1 warn, 2 fail, 3 error).
    pub exit_code: u8,
}

impl AuditRun {
    /// All checks in suite order.
    pub fn checks(&self) -> impl Iterator<Item = &CheckResult> {
        self.datasets.iter().flat_map(|d| d.checks.iter())
    }
}

/// A finished audit: the run, which the reports and the history hold, and
/// apart from it the details of its failures, which only the operator's
/// standard error may show (they may quote the data).
#[derive(Debug, Clone)]
pub struct AuditOutcome {
    /// The run.
    pub run: AuditRun,
    /// One per dataset without a release, in suite order.
    pub details: Vec<Detail>,
}

/// What a check shows of its gate on a gated night (public).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckGate {
    /// `pass` (the opening release stands within the gate's interval, no
    /// ε) or `fresh` (tonight's release opened a new epoch).
    pub outcome: GateOutcome,
    /// Why fresh.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<OpenReason>,
    /// α of the epoch, in the statistic's units.
    pub alpha: u64,
    /// β.
    pub beta: f64,
    /// The job whose release opened the epoch.
    pub opened_by: String,
    /// Nights the epoch has answered.
    pub nights_used: u32,
    /// Nights planned.
    pub nights: u32,
}

impl CheckGate {
    /// The check's view of a measure's night.
    pub fn of(g: &GateReport) -> CheckGate {
        CheckGate {
            outcome: g.outcome,
            reason: g.reason,
            alpha: g.epoch.alpha,
            beta: g.epoch.beta,
            opened_by: g.epoch.opened_by.clone(),
            nights_used: g.epoch.nights_used,
            nights: g.epoch.nights,
        }
    }
}

/// A gated dataset's budget plan, as reported (public).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BudgetPlan {
    /// The horizon, in nights.
    pub horizon_nights: u32,
    /// ε one epoch of every measure costs.
    pub epoch_epsilon: f64,
    /// Refreshes planned over the horizon, per measure.
    pub refreshes_planned: u32,
    /// ε the plan reserves: refreshes × epoch.
    pub planned: f64,
    /// Lifetime ε spent, this night included.
    pub spent: f64,
    /// ε left under the cap.
    pub left: f64,
    /// Whole epochs of every measure the ε left still buys.
    pub refreshes_left: u32,
}

/// The public settings a release depends on besides the table. A stored
/// release stands in for a fresh one only when these are equal and the
/// declared version is: the version vouches for the rows, these for what
/// was released from them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReleaseSettings {
    /// ε of each released measure.
    pub epsilon: f64,
    /// The released measures, in release order.
    pub measures: Vec<Measure>,
    /// The public row bound (the mechanisms' sensitivity depends on it).
    pub max_rows: u64,
    /// The constraint file's text: what is measured. Public (the suite's
    /// own file; a coordinator is sent it whole).
    pub constraints: String,
    /// Seeded noise (test mode): a test release never stands in for a
    /// real one, nor the reverse.
    pub seeded: bool,
}

/// The release a re-served night serves: the job that released it and
/// when that run started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReservedFrom {
    /// The engine's (or the coordinator's) job id of the release.
    pub job_id: String,
    /// That run's start, seconds since the epoch.
    pub started_unix: u64,
}
