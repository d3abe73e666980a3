//! Gated datasets (`[dataset.gate]`, issue 48): verdicts by the sparse
//! vector technique, and the budget plan that makes one lifetime cap
//! last the suite's `horizon`.
//!
//! Each measure of a gated dataset runs in epochs (the engine's
//! `dpincon_engine::gate`): an epoch opens with a fresh release charged
//! the dataset's `epsilon` plus the gate's, and every later night that
//! passes its gate re-serves that release with the gate's interval at no
//! charge. A night whose measure moved past the gate, or crossed a check,
//! releases afresh and opens the next epoch. The plan is public
//! arithmetic on public settings: `refreshes` epochs per measure over the
//! horizon must fit the cap, and each check's α must fit its threshold.

use std::path::PathBuf;

use dpincon_api::Duration;
use dpincon_engine::Measure;
use dpincon_engine::gate::{
    GateCheck, GateOptions, GateOutcome, GatePlan, GateReport, OpenReason, PublishedEpochs,
};
use dpincon_release::Direction;
use serde::{Deserialize, Serialize};

use dpincon_engine::Report;

use crate::context::RunContext;
use crate::error::{DatasetError, SuiteError};
use crate::reason::{Failure, Reason};
use crate::run::{DatasetBudget, DatasetStatus};
use crate::suite::{Dataset, Suite};

pub use dpincon_engine::gate::DEFAULT_BETA;

/// `[dataset.gate]`: the dataset's epochs.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct GateSettings {
    /// ε of each epoch's gate, per measure, charged when the epoch opens
    /// beside the fresh release's `epsilon`.
    pub epsilon: f64,
    /// Fresh releases planned per measure over the horizon (the first
    /// included): the plan reserves ε for this many epochs.
    pub refreshes: u32,
    /// β: each epoch's passes hold their α with probability ≥ 1 − β
    /// (default 0.05, the intervals' own miss).
    #[serde(default)]
    pub beta: Option<f64>,
    /// How far a measure may move past its release's noise before a fresh
    /// release, in the measure's units (default: the epoch's quiet width α_q,
    /// so that an unmoved measure reopens with probability ≤ β a horizon).
    #[serde(default)]
    pub moved: Option<u64>,
    /// The secret state file (default: the ledger's path with extension
    /// `gate`); owner-only.
    #[serde(default)]
    pub state: Option<PathBuf>,
}

impl GateSettings {
    /// β in force.
    pub fn beta(&self) -> f64 {
        self.beta.unwrap_or(DEFAULT_BETA)
    }
}

/// `horizon = "365d"` (or `"52w"`) in days: a whole number of them, at
/// most a century.
pub fn horizon_days(horizon: Duration) -> Result<u32, SuiteError> {
    match horizon.whole_days() {
        Some(days @ 1..=36_600) => Ok(days as u32),
        _ => Err(SuiteError::Horizon(horizon)),
    }
}

impl Dataset {
    /// ε one epoch of every measure costs: (release + gate) × measures.
    pub fn epoch_epsilon(&self) -> Option<f64> {
        self.gate.as_ref().map(|g| (self.epsilon + g.epsilon) * self.measures.len() as f64)
    }

    /// The nights an epoch may answer: the horizon's runs.
    pub fn horizon_nights(&self, horizon_days: u32) -> u32 {
        (f64::from(horizon_days) * self.runs_per_day.unwrap_or(1.0)).ceil().min(f64::from(u32::MAX))
            as u32
    }

    /// Checks `[dataset.gate]` against the suite's horizon: the plan must
    /// last it, and every check's α must fit its threshold
    /// ([`GatePlan::check`]).
    pub(crate) fn validate_gate(&self, horizon: Option<u32>) -> Result<(), DatasetError> {
        let Some(g) = &self.gate else { return Ok(()) };
        let Some(days) = horizon else {
            return Err(DatasetError::NoHorizon);
        };
        let plan = GatePlan {
            release_epsilon: self.epsilon,
            measures: self.measures.len(),
            gate_epsilon: g.epsilon,
            refreshes: g.refreshes,
            beta: g.beta(),
            nights: self.horizon_nights(days),
            nightly: 0.0,
        };
        let widths: Vec<(&str, u64)> = self
            .checks
            .iter()
            .map(|c| (c.name.as_str(), c.threshold(self.max_rows()).floor().max(1.0) as u64))
            .collect();
        Ok(plan.check(self.budget_cap(), &widths)?)
    }

    /// The state file: declared, or beside the ledger.
    pub fn gate_state(&self) -> Option<PathBuf> {
        let g = self.gate.as_ref()?;
        g.state.clone().or_else(|| self.ledger().map(|l| l.with_extension("gate")))
    }
}

/// The engine's options for `d`'s night, with the epochs the history
/// shows (`epochs`: each measure's latest, and every earlier one).
pub fn options(d: &Dataset, suite: &Suite, epochs: &HistoryEpochs) -> Option<GateOptions> {
    let g = d.gate.as_ref()?;
    let checks = d
        .checks
        .iter()
        .map(|c| {
            let measure = c.measure;
            let t = c.threshold(d.max_rows());
            match c.at_least() {
                true => {
                    GateCheck { measure, direction: Direction::AtLeast, threshold: t.ceil() as i64 }
                }
                false => {
                    GateCheck { measure, direction: Direction::AtMost, threshold: t.floor() as i64 }
                }
            }
        })
        .collect();
    Some(GateOptions {
        state: d.gate_state()?,
        epsilon: g.epsilon,
        nights: d.horizon_nights(suite.horizon_days()?),
        beta: g.beta(),
        moved: g.moved,
        checks,
        history: epochs.epochs.clone(),
    })
}

/// The epochs of a dataset as the history shows them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistoryEpochs {
    /// Each measure's latest epoch and its nights published, and every
    /// earlier one.
    pub epochs: PublishedEpochs,
    /// The dataset's first gated night, when there was one: where the
    /// horizon started.
    pub first_unix: Option<u64>,
}

impl HistoryEpochs {
    /// Records one stored night of a measure's epoch (oldest first).
    pub fn record(&mut self, measure: Measure, opened_by: &str, nights_used: u32, unix: u64) {
        self.first_unix.get_or_insert(unix);
        self.epochs.record(measure, opened_by, nights_used);
    }
}

/// A gated night's failure, classified from public figures only: the
/// engine refuses an epoch its ledger cannot fund as a ledger error; when
/// one epoch of every measure is past the cap by the ledger's own figures
/// (public: ε and caps), the budget is exhausted.
pub(crate) fn classify(
    d: &Dataset,
    before: &DatasetBudget,
    outcome: Result<Report, (DatasetStatus, Failure)>,
) -> Result<Report, (DatasetStatus, Failure)> {
    match (outcome, d.epoch_epsilon()) {
        (Err((DatasetStatus::Error, f)), Some(epoch))
            if f.reason == Reason::LedgerRefused && before.spent + epoch > before.cap =>
        {
            Err((DatasetStatus::Refused, Failure { reason: Reason::BudgetExhausted, ..f }))
        }
        (outcome, _) => outcome,
    }
}

/// A gated dataset's budget after its night: what tonight charged (the
/// epochs it opened), the plan, and the nights it covers: the horizon's
/// rest while one more epoch of every measure is funded, else none.
pub(crate) fn night_budget(
    d: &Dataset,
    suite: &Suite,
    ctx: &RunContext,
    before: DatasetBudget,
    report: Option<&Report>,
) -> DatasetBudget {
    let charged = report.and_then(|r| r.budget.as_ref()).map_or(0.0, |b| b.total);
    let after = before.spent + charged;
    let plan = BudgetPlan::of(d, suite.horizon_days().unwrap_or(0), after, before.cap);
    let per_day = d.runs_per_day.unwrap_or(1.0);
    let first = ctx.epochs.get(&d.name).and_then(|e| e.first_unix).unwrap_or(ctx.started_unix);
    let elapsed = (ctx.started_unix.saturating_sub(first) / 86_400) as f64 * per_day;
    let nights_left = match &plan {
        Some(p) if p.refreshes_left >= 1 => (f64::from(p.horizon_nights) - elapsed).max(0.0),
        _ => 0.0,
    };
    DatasetBudget {
        per_run: charged,
        remaining: (before.cap - after).max(0.0),
        nights_left,
        plan,
        ..before
    }
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

impl BudgetPlan {
    /// The plan of `d` with `spent` lifetime ε and cap `cap`.
    pub fn of(d: &Dataset, horizon_days: u32, spent: f64, cap: f64) -> Option<BudgetPlan> {
        let g = d.gate.as_ref()?;
        let epoch = d.epoch_epsilon()?;
        let left = (cap - spent).max(0.0);
        Some(BudgetPlan {
            horizon_nights: d.horizon_nights(horizon_days),
            epoch_epsilon: epoch,
            refreshes_planned: g.refreshes,
            planned: epoch * f64::from(g.refreshes),
            spent,
            left,
            refreshes_left: ((left / epoch) * (1.0 + 1e-9)).floor() as u32,
        })
    }
}
