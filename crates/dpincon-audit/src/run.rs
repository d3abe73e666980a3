//! Planning a suite's budget and running its datasets.

use std::collections::BTreeMap;

use dpincon_engine::gate::GateOptions;
use dpincon_engine::{JobConfig, Report, TestOptions, ledger};

use crate::checks::{check_results, released};
use crate::context::RunContext;
use crate::outcome::{AuditOutcome, AuditRun, DatasetBudget, DatasetResult, DatasetStatus};
use crate::reason::{Detail, Failure, Reason};
use crate::reserve::{self, Plan};
use crate::suite::{Dataset, Suite};
use crate::verdict::ExitStatus;

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
