//! Gated audits on a coordinator (issue 48 item 8; the cluster README,
//! "Gated nights"): the operator registers a dataset's nightly audit
//! (`[datasets.NAME.gate]`: its constraints, ε, measures, gate, horizon and
//! checks) and owns its epochs; a client asks for a night
//! (`gated = true`) and sees the verdicts at the night's release time.
//!
//! A night's charge depends on its gates' answers (a pass costs nothing,
//! an `above` opens a charged epoch), while on a coordinator every ledger
//! change must come at an acceptance or a release time. So a night is
//! charged a **hold** when it is accepted: every measure's epoch opening
//! (release ε + gate ε) and the `over quota` verdict's ε, all before any
//! noise; its process opens epochs under that hold and charges nothing
//! (`dpincon_engine::gate::run_prepaid_gated_night`); at the night's
//! release time the coordinator returns what it did not use
//! (`dpincon_engine::ledger::return_unused`), a function of the gates'
//! answers, which are released then. A night that fails, is cancelled or
//! is cut by a crash keeps its whole hold. One night per dataset is booked
//! at a time: the epochs' state has one writer.

use std::path::PathBuf;

use dpincon_api::{Duration, ReleaseOptions};
use dpincon_engine::gate::{
    DEFAULT_BETA, GateCheck, GateOptions, GatePlan, PublishedEpochs, epoch_charges,
};
use dpincon_engine::{Measure, Report};
use dpincon_release::Direction;
use serde::Deserialize;

use crate::refusal::QUOTA_CHARGE;

/// `[datasets.NAME.gate]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct RawGate {
    /// The operator's constraint file (read once, at start).
    constraints: PathBuf,
    /// ε per measure of each fresh release, the measures, and any other
    /// release option (as a job's).
    #[serde(flatten)]
    release: ReleaseOptions,
    gate_epsilon: f64,
    refreshes: u32,
    #[serde(default)]
    beta: Option<f64>,
    #[serde(default)]
    moved: Option<u64>,
    horizon: Duration,
    #[serde(default)]
    runs_per_day: Option<f64>,
    #[serde(default, rename = "check")]
    checks: Vec<RawCheck>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawCheck {
    measure: Measure,
    #[serde(default)]
    max: Option<i64>,
    #[serde(default)]
    min: Option<i64>,
}

/// A dataset's registered gated audit.
#[derive(Debug, Clone)]
pub struct GateRegistration {
    /// The constraint text (from the operator's file).
    pub constraints: String,
    /// How each fresh release is made.
    pub release: ReleaseOptions,
    /// The plan's public figures.
    pub plan: GatePlan,
    /// The moved gate's width (`None`: the epoch's α_q).
    pub moved: Option<u64>,
    /// The checks whose thresholds cut the bands.
    pub checks: Vec<GateCheck>,
    /// The epochs' secret state: beside the ledger, in its locked directory.
    pub state: PathBuf,
}

/// Why a dataset's gated audit is refused when the coordinator starts.
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    /// The gate's constraint file cannot be read.
    #[error("gate: cannot read constraint file '{path}': {source}")]
    ConstraintFile {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// No ε for the fresh releases.
    #[error("gate: give `epsilon`, the ε per measure of each fresh release")]
    NoEpsilon,
    /// A horizon shorter than a day.
    #[error("gate: horizon = \"{0}\": give days, e.g. \"365d\"")]
    Horizon(Duration),
    /// Runs a day outside (0, 24].
    #[error("gate: runs-per-day = {0} must lie in (0, 24]")]
    RunsPerDay(f64),
    /// A check with no bound, or two.
    #[error("gate: check {0} needs one of `max` or `min`")]
    CheckBound(usize),
    /// A check on a measure the gate does not release.
    #[error("gate: check {check} is on {measure}, which the gate does not release")]
    CheckMeasure {
        /// The check, from 1.
        check: usize,
        /// The measure's name.
        measure: &'static str,
    },
    /// The plan does not fit the budget, or a check's threshold is
    /// narrower than the gate's α (`GatePlan::check`'s reason).
    #[error("gate: {0}")]
    Plan(#[source] dpincon_engine::gate::PlanError),
    /// A gated dataset without `max-rows`.
    #[error("gate: a gated dataset needs max-rows (its bounds hold every night)")]
    NoMaxRows,
    /// A night's hold above the dataset's per-job limit.
    #[error(
        "gate: a night is charged a hold of ε {hold} when accepted (every measure's epoch and \
         the quota verdict), above max-job-epsilon {max}"
    )]
    Hold {
        /// The hold.
        hold: f64,
        /// `max-job-epsilon`.
        max: f64,
    },
    /// The gate's constraints or ε, refused as a client's job on the
    /// dataset would be.
    #[error("{}", .0.detail)]
    Refused(crate::refusal::Refusal),
    /// The engine refuses the gate's options.
    #[error("gate: {0}")]
    Engine(#[source] dpincon_engine::EngineError),
}

impl RawGate {
    /// The registration, its settings checked (the constraints are checked
    /// against the dataset by the caller); `ledger` places the state.
    pub(crate) fn register(
        self,
        ledger: &std::path::Path,
        budget_cap: f64,
        quota_epsilon: Option<f64>,
    ) -> Result<GateRegistration, GateError> {
        let constraints = std::fs::read_to_string(&self.constraints).map_err(|source| {
            GateError::ConstraintFile { path: self.constraints.clone(), source }
        })?;
        let release_epsilon = self.release.epsilon.ok_or(GateError::NoEpsilon)?;
        let horizon = Some(self.horizon.get())
            .filter(|d| d.as_secs() >= 86_400)
            .ok_or(GateError::Horizon(self.horizon))?;
        let per_day = self.runs_per_day.unwrap_or(1.0);
        if !(per_day.is_finite() && per_day > 0.0 && per_day <= 24.0) {
            return Err(GateError::RunsPerDay(per_day));
        }
        let days = horizon.as_secs() as f64 / 86_400.0;
        let nights = (days * per_day).ceil().min(f64::from(u32::MAX)) as u32;
        let plan = GatePlan {
            release_epsilon,
            measures: self.release.measures().len(),
            gate_epsilon: self.gate_epsilon,
            refreshes: self.refreshes,
            beta: self.beta.unwrap_or(DEFAULT_BETA),
            nights,
            nightly: quota_epsilon.unwrap_or(0.0),
        };
        let mut checks = Vec::new();
        let mut widths = Vec::new();
        for (i, c) in self.checks.iter().enumerate() {
            let (direction, threshold) = match (c.max, c.min) {
                (Some(t), None) => (Direction::AtMost, t),
                (None, Some(t)) => (Direction::AtLeast, t),
                _ => return Err(GateError::CheckBound(i + 1)),
            };
            if !self.release.measures().contains(&c.measure) {
                return Err(GateError::CheckMeasure { check: i + 1, measure: c.measure.name() });
            }
            checks.push(GateCheck { measure: c.measure, direction, threshold });
            widths.push((format!("{} {}", i + 1, c.measure.name()), threshold.max(1) as u64));
        }
        let named: Vec<(&str, u64)> = widths.iter().map(|(n, w)| (n.as_str(), *w)).collect();
        plan.check(budget_cap, &named).map_err(GateError::Plan)?;
        Ok(GateRegistration {
            constraints,
            release: self.release,
            plan,
            moved: self.moved,
            checks,
            state: ledger.with_extension("gate"),
        })
    }
}

impl GateRegistration {
    /// The hold a night is charged when accepted: every measure's epoch
    /// opening, release and gate, then the `over quota` verdict's
    /// `quota_epsilon` when the dataset has one.
    pub fn hold(&self, quota_epsilon: Option<f64>) -> Vec<(&'static str, f64)> {
        let measures = self.release.measures();
        let plan = &self.plan;
        let mut charges = epoch_charges(&measures, plan.release_epsilon, plan.gate_epsilon);
        charges.extend(quota_epsilon.map(|q| (QUOTA_CHARGE, q)));
        charges
    }

    /// The engine's options for tonight, with the epochs the dataset's
    /// earlier nights published (`reports`: its succeeded gated nights,
    /// oldest first).
    pub fn options(&self, reports: &[Report]) -> GateOptions {
        let mut history = PublishedEpochs::default();
        for g in reports.iter().filter_map(|r| r.gated.as_ref()).flatten() {
            history.record(g.measure, &g.epoch.opened_by, g.epoch.nights_used);
        }
        GateOptions {
            state: self.state.clone(),
            epsilon: self.plan.gate_epsilon,
            nights: self.plan.nights,
            beta: self.plan.beta,
            moved: self.moved,
            checks: self.checks.clone(),
            history,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::datasets::CoordinatorConfig;

    /// A registration is checked at start: its plan against the cap, its
    /// hold against the per-job limit, its checks, constraints and keys.
    #[test]
    fn a_registered_gate_is_checked_at_start() {
        let dir = tempfile::tempdir().unwrap();
        let path = |name: &str| dir.path().join(name).display().to_string();
        std::fs::write(dir.path().join("t.csv"), "Zip,City\n1,a\n").unwrap();
        std::fs::write(dir.path().join("t.dcs"), "FD: Zip -> City\n").unwrap();
        let base = format!(
            "state-dir = {:?}\n[datasets.t]\ndata = {:?}\nschema = \"Zip:int, City:string\"\n\
                 ledger = {:?}\nbudget-cap = 30.0\nmax-job-epsilon = 10.0\n\
                 accept-deadline-channel = true\nmax-rows = 100\n[datasets.t.gate]\n\
                 constraints = {:?}\nepsilon = 1.0\nmeasures = [\"r\", \"p\"]\n\
                 gate-epsilon = 2.0\nrefreshes = 5\nhorizon = \"365d\"\n\
                 [[datasets.t.gate.check]]\nmeasure = \"r\"\nmax = 50\n",
            path("state"),
            path("t.csv"),
            path("t.ledger"),
            path("t.dcs")
        );
        let c = CoordinatorConfig::parse(&base, "c.toml").unwrap();
        let gate = c.datasets["t"].gate.clone().expect("registered");
        assert_eq!(gate.plan.nights, 365);
        assert_eq!(gate.plan.planned(), 30.0);
        assert_eq!(gate.hold(None), vec![("r", 1.0), ("gate-r", 2.0), ("p", 1.0), ("gate-p", 2.0)]);
        assert_eq!(gate.hold(Some(0.1)).last(), Some(&("quota", 0.1)));
        assert_eq!(gate.state, dir.path().join("t.gate"));
        assert_eq!(gate.constraints, "FD: Zip -> City\n");
        for (from, to, why) in [
            ("refreshes = 5", "refreshes = 6", "cannot last the horizon"),
            ("refreshes = 5", "refreshes = 5\nruns-per-day = 30", "runs-per-day = 30"),
            ("\"365d\"", "\"12h\"", "horizon"),
            ("refreshes = 5", "refreshes = 5\nseed = 3", "unknown field `seed`"),
            ("2.0\nrefreshes = 5", "9.0\nrefreshes = 1", "above max-job-epsilon"),
            (
                "max-rows = 100",
                "max-rows = 100\nmax-edges = 1000000\nquota-epsilon = 0.01",
                "365 nights × ε 0.01",
            ),
            ("measure = \"r\"", "measure = \"mi\"", "does not release"),
            ("max = 50", "", "one of `max` or `min`"),
            ("max = 50", "max = 1", "would do"),
            ("max-rows = 100\n", "", "needs max-rows"),
        ] {
            let text = base.replacen(from, to, 1);
            let err = CoordinatorConfig::parse(&text, "c.toml").unwrap_err();
            assert!(err.to_string().contains(why), "{to}: {err}");
        }
        std::fs::write(dir.path().join("t.dcs"), "FD: Zap -> City\n").unwrap();
        let err = CoordinatorConfig::parse(&base, "c.toml").unwrap_err().to_string();
        assert!(err.contains("Zap"), "{err}");
    }
}
