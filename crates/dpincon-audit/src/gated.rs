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

use dpincon_engine::gate::{GateCheck, GateOptions, GatePlan};
use dpincon_release::Direction;

use dpincon_engine::Report;

use crate::context::RunContext;
use crate::error::DatasetError;
use crate::outcome::{DatasetBudget, DatasetStatus};
use crate::reason::{Failure, Reason};
use crate::suite::{Dataset, Suite};

pub use crate::history::HistoryEpochs;
pub use crate::outcome::{BudgetPlan, CheckGate};
pub use crate::suite::{GateSettings, horizon_days};
pub use dpincon_engine::gate::DEFAULT_BETA;

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
