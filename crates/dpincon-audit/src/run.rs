//! Planning a suite's budget and running its datasets.

use std::collections::BTreeMap;

use dpincon_engine::gate::{GateOptions, GateOutcome};
use dpincon_engine::{JobConfig, Measure, Report, TestOptions, ledger};
use serde::Serialize;

use crate::context::RunContext;
use crate::gated::{BudgetPlan, CheckGate};
use crate::reason::{Detail, Failure, Reason};
use crate::reserve::{self, Plan, ReleaseSettings, ReservedFrom};
use crate::suite::{Dataset, Suite};
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

/// Plans every dataset's budget before any work: a dataset whose run would
/// pass its cap is refused (the engine would refuse it too), with the
/// ledger's words as the failure's detail.
pub fn budgets(suite: &Suite) -> Vec<(DatasetBudget, Option<Failure>)> {
    suite.datasets.iter().map(budget_of).collect()
}

fn budget_of(d: &Dataset) -> (DatasetBudget, Option<Failure>) {
    let path = d.ledger().cloned().unwrap_or_default();
    // A gated night charges only the epochs it opens, which the engine
    // checks against the cap when it charges: nothing to plan here.
    let per_run = if d.gate.is_some() { 0.0 } else { d.epsilon_per_run() };
    let (spent, stored, unreadable) = match ledger::spent(&path) {
        Ok((s, c)) => (s, c, None),
        Err(e) => (0.0, None, Some(Failure::new(Reason::LedgerRefused, e))),
    };
    let cap = stored.map_or(d.budget_cap(), |s| s.min(d.budget_cap()));
    let refusal = unreadable.or_else(|| {
        let refused =
            ledger::check(&path, &d.source_name(), Some(d.budget_cap()), per_run).err()?;
        // Past the cap by the ledger's own figures (public: ε and caps) is
        // an exhausted budget; any other refusal is the ledger's.
        let over = spent + per_run > cap;
        Some(Failure::new(
            if over { Reason::BudgetExhausted } else { Reason::LedgerRefused },
            refused,
        ))
    });
    let reason = refusal.as_ref().map(|f| f.reason);
    (budget(d, path.display().to_string(), cap, spent, reason.is_none(), reason), refusal)
}

/// The budget from a ledger's cap and ε spent before this run, which was
/// `charged` its ε or not, and `refused` before any work if it was.
pub(crate) fn budget(
    d: &Dataset,
    ledger: String,
    cap: f64,
    spent: f64,
    charged: bool,
    refused: Option<Reason>,
) -> DatasetBudget {
    let per_run = d.epsilon_per_run();
    let after = if charged { spent + per_run } else { spent };
    let remaining = (cap - after).max(0.0);
    // Tiny slack so 10 × 0.1 counts as 10 runs, not 9.
    // A gated dataset plans no per-run ε (`crate::gated::night_budget`
    // replaces these figures): no division by zero.
    let runs = if per_run > 0.0 { ((remaining / per_run) * (1.0 + 1e-9)).floor() } else { 0.0 };
    DatasetBudget {
        ledger,
        cap,
        spent,
        per_run,
        remaining,
        nights_left: runs / d.runs_per_day.unwrap_or(1.0),
        refused,
        plan: None,
    }
}

/// The engine job for a dataset: its table, with every declared CSV
/// column's type taken as declared (checked against the header when the
/// suite loaded), so that no row decides a type, as in the coordinator's
/// jobs.
pub fn job_config(d: &Dataset, seed: Option<u64>) -> JobConfig {
    JobConfig {
        data: d.policy.clone(),
        release: d.release(),
        test: TestOptions { seed, ..TestOptions::default() },
        ..JobConfig::with(d.table.clone().with_declared_types(), &d.constraints)
    }
}

/// What a dataset's night asks of the engine.
#[derive(Debug, Clone)]
pub enum Job {
    /// A release of every measure (`dpincon_engine::run_job`).
    Release(JobConfig),
    /// A gated night (`dpincon_engine::gate::run_gated_night`).
    Gated(JobConfig, GateOptions),
}

impl Job {
    /// The job's configuration.
    pub fn config(&self) -> &JobConfig {
        match self {
            Job::Release(c) | Job::Gated(c, _) => c,
        }
    }

    /// The job's configuration, to change (tests).
    pub fn config_mut(&mut self) -> &mut JobConfig {
        match self {
            Job::Release(c) | Job::Gated(c, _) => c,
        }
    }
}

/// `d`'s job for this run.
fn job(d: &Dataset, suite: &Suite, ctx: &RunContext) -> Job {
    let config = job_config(d, ctx.seed);
    let epochs = ctx.epochs.get(&d.name).cloned().unwrap_or_default();
    match crate::gated::options(d, suite, &epochs) {
        Some(options) => Job::Gated(config, options),
        None => Job::Release(config),
    }
}

/// Runs `suite` at `ctx`'s time: plans all budgets first, then runs each
/// dataset that fits through `exec` (a job config and the dataset name in,
/// the engine's report out), then judges every check. A dataset whose
/// declared version is unchanged re-serves its last release instead
/// ([`crate::reserve`]). Refused and failed datasets do not stop the others.
pub async fn run_suite<F>(suite: &Suite, ctx: &RunContext, exec: F) -> AuditOutcome
where
    F: AsyncFn(Job, &str) -> Result<Report, Failure>,
{
    let mut datasets = Vec::new();
    let mut details = Vec::new();
    for (d, (budget, refusal)) in suite.datasets.iter().zip(budgets(suite)) {
        // The planned budget as it stands when this run spends nothing.
        let unspent = || {
            let b = &budget;
            self::budget(d, b.ledger.clone(), b.cap, b.spent, false, b.refused)
        };
        let result = match reserve::plan(d, ctx) {
            // Re-serving spends nothing, so an exhausted budget does not
            // stop it; a ledger that cannot be read does (the budget's
            // figures would not be the ledger's).
            Plan::Reserve(declared, last)
                if refusal.as_ref().is_none_or(|f| f.reason == Reason::BudgetExhausted) =>
            {
                let mut result = reserve::reserved(d, declared, last, unspent(), suite.zone());
                if d.gate.is_some() {
                    // Nothing charged; the plan as it stands.
                    result.budget = crate::gated::night_budget(d, suite, ctx, result.budget, None);
                }
                result
            }
            Plan::Unreadable(f) => {
                judge(d, unspent(), Err((DatasetStatus::Error, f)), &mut details)
            }
            plan => {
                let outcome = match refusal {
                    Some(f) => Err((DatasetStatus::Refused, f)),
                    None => exec(job(d, suite, ctx), &d.name)
                        .await
                        .map_err(|f| (DatasetStatus::Error, f)),
                };
                let outcome = crate::gated::classify(d, &budget, outcome);
                let budget = match &d.gate {
                    Some(_) => {
                        crate::gated::night_budget(d, suite, ctx, budget, outcome.as_ref().ok())
                    }
                    None => budget,
                };
                plan.record(judge(d, budget, outcome, &mut details))
            }
        };
        datasets.push(result);
    }
    finish(suite, ctx, datasets, details)
}

/// Runs `suite` on a coordinator (`exec` submits a dataset's job and waits
/// for its report). The coordinator owns every ledger and shows a client
/// only its own job's charge, so a dataset's budget here is the suite's
/// own plan: its `budget-cap` against `charged`, what its earlier runs
/// were charged (`History::charged`). The coordinator's cap still governs:
/// a job it cannot fund is refused ([`Reason::BudgetExhausted`]: the
/// dataset is refused, nothing charged). Verdicts are judged exactly as in
/// [`run_suite`], and an unchanged declared version re-serves the same way
/// (decided here, from the version and the history: public data). A gated
/// dataset asks for a night of the audit the operator registered on the
/// coordinator's dataset, which owns its epochs; its budget is the night's
/// report's charge against the suite's plan.
pub async fn run_suite_remote<F>(
    suite: &Suite,
    coordinator: &str,
    charged: &BTreeMap<String, f64>,
    ctx: &RunContext,
    exec: F,
) -> AuditOutcome
where
    F: AsyncFn(&Dataset) -> Result<Report, Failure>,
{
    let mut datasets = Vec::new();
    let mut details = Vec::new();
    for d in &suite.datasets {
        let ledger = format!(
            "coordinator {coordinator}, dataset {}: this suite's charges (the ledger is the \
             operator's)",
            d.remote_name()
        );
        let spent = charged.get(&d.name).copied().unwrap_or(0.0);
        let unspent = || budget(d, ledger.clone(), d.budget_cap(), spent, false, None);
        let plan = match reserve::plan(d, ctx) {
            Plan::Reserve(declared, last) => {
                datasets.push(reserve::reserved(d, declared, last, unspent(), suite.zone()));
                continue;
            }
            Plan::Unreadable(f) => {
                let outcome = Err((DatasetStatus::Error, f));
                datasets.push(judge(d, unspent(), outcome, &mut details));
                continue;
            }
            plan => plan,
        };
        let (budget, outcome) = match exec(d).await {
            // A gated night's charge is what its hold used (its report's).
            Ok(report) if d.gate.is_some() => {
                let before = budget(d, ledger, d.budget_cap(), spent, false, None);
                (crate::gated::night_budget(d, suite, ctx, before, Some(&report)), Ok(report))
            }
            Ok(report) => (budget(d, ledger, d.budget_cap(), spent, true, None), Ok(report)),
            Err(f) if d.gate.is_some() && f.reason == Reason::FailedOnCoordinator => {
                // Accepted, then failed: its whole hold stays charged, at
                // least one epoch of every measure by the suite's figures.
                let before = budget(d, ledger, d.budget_cap(), spent, false, None);
                let mut b = crate::gated::night_budget(d, suite, ctx, before, None);
                b.per_run = d.epoch_epsilon().unwrap_or(0.0);
                (b, Err((DatasetStatus::Error, f)))
            }
            Err(f) => {
                let refused = f.reason == Reason::BudgetExhausted;
                let status = if refused { DatasetStatus::Refused } else { DatasetStatus::Error };
                // Accepted, then failed: charged all the same.
                let charged = f.reason == Reason::FailedOnCoordinator;
                let b =
                    budget(d, ledger, d.budget_cap(), spent, charged, refused.then_some(f.reason));
                (b, Err((status, f)))
            }
        };
        datasets.push(plan.record(judge(d, budget, outcome, &mut details)));
    }
    finish(suite, ctx, datasets, details)
}

fn finish(
    suite: &Suite,
    ctx: &RunContext,
    datasets: Vec<DatasetResult>,
    details: Vec<Detail>,
) -> AuditOutcome {
    let status = datasets
        .iter()
        .flat_map(|d| d.checks.iter())
        .map(|c| ExitStatus::of(c.verdict, c.warn_only))
        .max()
        .unwrap_or(ExitStatus::Pass);
    let run = AuditRun {
        schema_version: 1,
        suite: suite.name.clone(),
        started_unix: ctx.started_unix,
        test_clock: ctx.test_clock.clone(),
        datasets,
        status,
        exit_code: status.code(),
    };
    AuditOutcome { run, details }
}

/// Judges `d`'s checks on its report; a failure leaves its public reason
/// in the result and its detail in `details`.
fn judge(
    d: &Dataset,
    budget: DatasetBudget,
    outcome: Result<Report, (DatasetStatus, Failure)>,
    details: &mut Vec<Detail>,
) -> DatasetResult {
    let (status, report, error) = match outcome {
        Ok(r) => (DatasetStatus::Ran, Some(r), None),
        Err((s, f)) => {
            details.push(Detail { dataset: d.name.clone(), reason: f.reason, message: f.detail });
            (s, None, Some(f.reason))
        }
    };
    let checks = check_results(d, error, |m| report.as_ref().and_then(|r| released(r, m)));
    DatasetResult {
        name: d.name.clone(),
        data: d.source_name().display().to_string(),
        status,
        budget,
        job_id: report.as_ref().map(|r| r.job_id.clone()),
        seeded: report.as_ref().is_some_and(|r| r.seeded),
        error,
        checks,
        version: None,
        settings: None,
        reserved_from: None,
    }
}

/// `d`'s checks judged on `release(measure)`; without one a check is an
/// error, for `error` (no release at all) or for a missing measure.
pub(crate) fn check_results(
    d: &Dataset,
    error: Option<Reason>,
    release: impl Fn(Measure) -> Option<Released>,
) -> Vec<CheckResult> {
    d.checks
        .iter()
        .map(|c| {
            let threshold = c.threshold(d.max_rows());
            let release = release(c.measure);
            let release = release.as_ref();
            let value = release.map(|r| r.value);
            let ci95 = release.map(|r| r.ci95);
            let epsilon = release.map(|r| r.epsilon);
            let at_least = c.at_least();
            let verdict = ci95.map_or(Verdict::Error, |i| Verdict::judge(i, threshold, at_least));
            let (op, side, other) =
                if at_least { ("≥", "above", "below") } else { ("≤", "below", "above") };
            let message = match (verdict, ci95) {
                (Verdict::Pass, Some([lo, hi])) => format!(
                    "{} {op} {threshold}: the 95% interval [{lo}, {hi}] lies at or {side} it",
                    c.measure
                ),
                (Verdict::Fail, Some([lo, hi])) => {
                    let not = if at_least { "<" } else { ">" };
                    format!(
                        "{} {not} {threshold}: the 95% interval [{lo}, {hi}] lies {other} it",
                        c.measure
                    )
                }
                (Verdict::Inconclusive, Some([lo, hi])) => format!(
                    "inconclusive: the 95% interval [{lo}, {hi}] contains the threshold {threshold}; \
                     the noise hides the answer (more ε or a looser threshold would decide it)"
                ),
                _ => match error {
                    Some(reason) => format!("no release: {reason}"),
                    None => "no release: the measure is missing from the report".to_string(),
                },
            };
            let passed = release.and_then(|r| r.gate.as_ref()).filter(|g| g.outcome == GateOutcome::Pass);
            let message = match passed {
                Some(g) => format!(
                    "gated (no ε; the gate's interval, α = {} at β = {}): {message}",
                    g.alpha, g.beta
                ),
                None => message,
            };
            CheckResult {
                at_least,
                gate: release.and_then(|r| r.gate.clone()),
                name: c.name.clone(),
                dataset: d.name.clone(),
                measure: c.measure,
                threshold,
                value,
                ci95,
                epsilon,
                verdict,
                warn_only: c.warn_only(),
                message,
            }
        })
        .collect()
}

/// What a check reads of a measure's release: its point value, interval
/// and ε (I_R's release has the same three).
#[derive(Clone)]
pub(crate) struct Released {
    pub(crate) value: i64,
    pub(crate) ci95: [i64; 2],
    pub(crate) epsilon: f64,
    /// A gated night's view of the measure's epoch.
    pub(crate) gate: Option<CheckGate>,
}

/// The release of `measure` (`mi`, `p` or `r`) in `report`, if any.
fn released(report: &Report, measure: Measure) -> Option<Released> {
    // A gated night: the gate's value and interval (a fresh one's are the
    // release's), and the epoch.
    if let Some(gated) = &report.gated {
        let g = gated.iter().find(|g| g.measure == measure)?;
        let gate = Some(CheckGate::of(g));
        let epsilon = g.epoch.release_epsilon;
        return Some(Released { value: g.value, ci95: g.ci95, epsilon, gate });
    }
    let m = report.measures.as_ref()?;
    let (value, ci95, epsilon) = match measure {
        Measure::Mi => m.mi.as_ref().map(|r| (r.value, r.ci95, r.epsilon)),
        Measure::P => m.p.as_ref().map(|r| (r.value, r.ci95, r.epsilon)),
        Measure::R => m.r.as_ref().map(|r| (r.value, r.ci95, r.epsilon)),
    }?;
    Some(Released { value, ci95, epsilon, gate: None })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use dpincon_engine::DataFormat;

    use super::*;

    fn dataset(keys: &str) -> Dataset {
        let text = format!(
            "name = \"s\"\n[[dataset]]\nname = \"t\"\n{keys}constraints = \"t.dcs\"\nepsilon = 1\n\
             max-rows = 10\nledger = \"t.ledger\"\nbudget-cap = 5\n\
             [[dataset.check]]\nname = \"c\"\nmeasure = \"mi\"\nmax = 1\n"
        );
        Suite::parse(&text, Path::new("suite.toml")).unwrap().datasets.remove(0)
    }

    #[test]
    fn a_declared_csv_schema_leaves_no_type_to_infer() {
        let c = job_config(&dataset("data = \"t.csv\"\nschema = \"Zip:int\"\n"), None).table;
        assert_eq!(
            (c.schema.map(|s| s.to_string()), c.infer_rows),
            (Some("Zip:int".into()), Some(1))
        );
        // Without a declaration the engine infers (all rows), as before.
        let c = job_config(&dataset("data = \"t.csv\"\n"), None).table;
        assert_eq!((c.schema, c.infer_rows, c.format), (None, None, None));
        // A Parquet footer declares the types: the schema was checked against it.
        let c = job_config(&dataset("data = \"t.pq\"\nschema = \"Zip:int\"\n"), None).table;
        assert_eq!((c.schema, c.infer_rows), (None, None));
        let c = job_config(&dataset("data = \"t.dat\"\nformat = \"parquet\"\n"), Some(3));
        assert_eq!(c.table.format, Some(DataFormat::Parquet));
        assert_eq!(c.data.ledger.as_deref(), Some(Path::new("t.ledger")));
        // The suite's release options and the run's seed.
        assert_eq!(c.release.epsilon, Some(1.0));
        assert_eq!(c.release.measures, Some(vec![dpincon_engine::Measure::Mi]));
        assert_eq!(c.test.seed, Some(3));
    }
}
