//! Planning a suite's budget and running its datasets.

use dpincon_engine::{JobConfig, ledger};
use serde::Serialize;
use serde_json::Value;

use crate::suite::{Dataset, Suite};
use crate::verdict::{ExitStatus, Verdict};

/// One dataset's budget before the run (public: ε spent and caps).
#[derive(Debug, Clone, Serialize)]
pub struct DatasetPlan {
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
    /// Why the run was refused before any work, if it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// What happened to a dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DatasetStatus {
    /// Released and checked.
    Ran,
    /// Refused by its budget before any work; nothing charged.
    Refused,
    /// The job failed (the message says why).
    Error,
}

/// One check's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct CheckResult {
    /// Check name.
    pub name: String,
    /// Dataset name.
    pub dataset: String,
    /// `mi`, `p` or `r`.
    pub measure: String,
    /// The threshold in the measure's units.
    pub threshold: f64,
    /// The DP release (point value), when released.
    pub value: Option<i64>,
    /// Its 95% interval: the noise only; for I_MI and I_P it does not cover
    /// the projection's downward bias (the true count may be above it).
    pub ci95: Option<[i64; 2]>,
    /// ε of the release.
    pub epsilon: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
    /// A `warn` check.
    pub warn_only: bool,
    /// One sentence for people.
    pub message: String,
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
    /// The budget plan.
    pub budget: DatasetPlan,
    /// The engine's job id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
    /// The noise was seeded (test mode): not a release to publish.
    pub seeded: bool,
    /// The error, when the job failed or was refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The checks.
    pub checks: Vec<CheckResult>,
}

/// A whole audit.
#[derive(Debug, Clone, Serialize)]
pub struct AuditRun {
    /// Report schema version (see the crate README).
    pub schema_version: u32,
    /// The suite name.
    pub suite: String,
    /// Start time, seconds since the epoch.
    pub started_unix: u64,
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

/// Plans every dataset's budget before any work: a dataset whose run would
/// pass its cap is marked refused (the engine would refuse it too).
pub fn plan(suite: &Suite) -> Vec<DatasetPlan> {
    suite.datasets.iter().map(plan_one).collect()
}

fn plan_one(d: &Dataset) -> DatasetPlan {
    let path = d.ledger.clone().unwrap_or_default();
    let per_run = d.epsilon_per_run();
    let (spent, stored, error) = match ledger::spent(&path) {
        Ok((s, c)) => (s, c, None),
        Err(e) => (0.0, None, Some(e.to_string())),
    };
    let cap = stored.map_or(d.budget_cap, |s| s.min(d.budget_cap));
    let refused = error.or_else(|| {
        ledger::check(&path, &d.source_name(), Some(d.budget_cap), per_run)
            .err()
            .map(|e| e.to_string())
    });
    budget(d, path.display().to_string(), cap, spent, refused)
}

/// A plan from a ledger's cap and ε spent before this run.
fn budget(
    d: &Dataset,
    ledger: String,
    cap: f64,
    spent: f64,
    refused: Option<String>,
) -> DatasetPlan {
    let per_run = d.epsilon_per_run();
    let after = if refused.is_some() { spent } else { spent + per_run };
    let remaining = (cap - after).max(0.0);
    // Tiny slack so 10 × 0.1 counts as 10 runs, not 9.
    let runs = ((remaining / per_run) * (1.0 + 1e-9)).floor();
    DatasetPlan {
        ledger,
        cap,
        spent,
        per_run,
        remaining,
        nights_left: runs / d.runs_per_day.unwrap_or(1.0),
        refused,
    }
}

/// The engine job for a dataset.
pub fn job_config(d: &Dataset, seed: Option<u64>) -> JobConfig {
    let mut config = match &d.postgres {
        Some(pg) => JobConfig::postgres(pg.clone(), &d.constraints),
        None => JobConfig::new(d.source_name(), &d.constraints),
    };
    config.epsilon = Some(d.epsilon);
    config.measures = d.measures.clone();
    config.max_rows = Some(d.max_rows);
    config.ledger = d.ledger.clone();
    config.budget_cap = Some(d.budget_cap);
    config.seed = seed;
    config
}

/// Runs `suite`: plans all budgets first, then runs each dataset that
/// fits through `exec` (a job config and the dataset name in, the engine's
/// JSON report out), then judges every check. Refused and failed datasets
/// do not stop the others.
pub async fn run_suite<F>(suite: &Suite, seed: Option<u64>, exec: F) -> AuditRun
where
    F: AsyncFn(JobConfig, &str) -> Result<Value, String>,
{
    let started_unix = now();
    let plans = plan(suite);
    let mut datasets = Vec::new();
    for (d, budget) in suite.datasets.iter().zip(plans) {
        let outcome = match &budget.refused {
            Some(why) => Err((DatasetStatus::Refused, why.clone())),
            None => exec(job_config(d, seed), &d.name).await.map_err(|e| (DatasetStatus::Error, e)),
        };
        datasets.push(judge(d, budget, outcome));
    }
    finish(suite, started_unix, datasets)
}

/// Why a coordinator did not return a report.
#[derive(Debug, Clone)]
pub struct RemoteFailure {
    /// The coordinator refused the job at admission because its ledger
    /// cannot fund it (nothing queued or charged).
    pub refused: bool,
    /// The coordinator's words.
    pub message: String,
}

/// Runs `suite` on a coordinator (`exec` submits a dataset's job and waits
/// for its report). The coordinator owns every ledger: nothing is planned
/// here; each dataset's budget comes from the coordinator's answer, the
/// ledger state in its report, or its refusal (then the figures are 0 and
/// `refused` quotes it). The suite's `ledger` and `budget-cap` are unused.
/// Verdicts are judged exactly as in [`run_suite`].
pub async fn run_suite_remote<F>(suite: &Suite, coordinator: &str, exec: F) -> AuditRun
where
    F: AsyncFn(&Dataset) -> Result<Value, RemoteFailure>,
{
    let started_unix = now();
    let mut datasets = Vec::new();
    for d in &suite.datasets {
        let ledger = format!("coordinator {coordinator}: ledger of dataset {}", d.remote_name());
        let (budget, outcome) = match exec(d).await {
            Ok(report) => {
                let state = &report["budget"]["ledger"];
                let spent = state["spent_before"].as_f64().unwrap_or(0.0);
                let cap = state["cap"].as_f64().unwrap_or(d.budget_cap);
                (budget(d, ledger, cap, spent, None), Ok(report))
            }
            Err(f) => {
                let status = if f.refused { DatasetStatus::Refused } else { DatasetStatus::Error };
                let refused = f.refused.then(|| f.message.clone());
                (budget(d, ledger, 0.0, 0.0, refused), Err((status, f.message)))
            }
        };
        datasets.push(judge(d, budget, outcome));
    }
    finish(suite, started_unix, datasets)
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

fn finish(suite: &Suite, started_unix: u64, datasets: Vec<DatasetResult>) -> AuditRun {
    let status = datasets
        .iter()
        .flat_map(|d| d.checks.iter())
        .map(|c| ExitStatus::of(c.verdict, c.warn_only))
        .max()
        .unwrap_or(ExitStatus::Pass);
    AuditRun {
        schema_version: 1,
        suite: suite.name.clone(),
        started_unix,
        datasets,
        status,
        exit_code: status.code(),
    }
}

fn judge(
    d: &Dataset,
    budget: DatasetPlan,
    outcome: Result<Value, (DatasetStatus, String)>,
) -> DatasetResult {
    let (status, report, error) = match outcome {
        Ok(r) => (DatasetStatus::Ran, Some(r), None),
        Err((s, e)) => (s, None, Some(e)),
    };
    let checks = d
        .checks
        .iter()
        .map(|c| {
            let threshold = c.threshold(d.max_rows);
            let release = report.as_ref().map(|r| &r["measures"][&c.measure]);
            let value = release.and_then(|r| r["value"].as_i64());
            let ci95 = release.and_then(|r| Some([r["ci95"][0].as_i64()?, r["ci95"][1].as_i64()?]));
            let epsilon = release.and_then(|r| r["epsilon"].as_f64());
            let verdict = ci95.map_or(Verdict::Error, |i| Verdict::of(i, threshold));
            let message = match (verdict, ci95) {
                (Verdict::Pass, Some([lo, hi])) => format!(
                    "{} ≤ {threshold}: the 95% interval [{lo}, {hi}] lies at or below it",
                    c.measure
                ),
                (Verdict::Fail, Some([lo, hi])) => {
                    format!("{} > {threshold}: the 95% interval [{lo}, {hi}] lies above it", c.measure)
                }
                (Verdict::Inconclusive, Some([lo, hi])) => format!(
                    "inconclusive: the 95% interval [{lo}, {hi}] contains the threshold {threshold}; \
                     the noise hides the answer (more ε or a looser threshold would decide it)"
                ),
                _ => format!(
                    "no release: {}",
                    error.as_deref().unwrap_or("the measure is missing from the report")
                ),
            };
            CheckResult {
                name: c.name.clone(),
                dataset: d.name.clone(),
                measure: c.measure.clone(),
                threshold,
                value,
                ci95,
                epsilon,
                verdict,
                warn_only: c.warn_only(),
                message,
            }
        })
        .collect();
    DatasetResult {
        name: d.name.clone(),
        data: d.source_name().display().to_string(),
        status,
        budget,
        job_id: report.as_ref().and_then(|r| r["job_id"].as_str().map(String::from)),
        seeded: report.as_ref().is_some_and(|r| r["seeded"].as_bool() == Some(true)),
        error,
        checks,
    }
}
