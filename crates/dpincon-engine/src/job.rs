//! A job from options to report: load and detect, charge the ledger, measure and release.

use std::time::Instant;

use dpincon_graph::edge_stream_fingerprint;
use dpincon_release::NoiseRng;
use dpincon_source::TableData;

use crate::load::{JobLoader, LoadedJob, LocalLoader, TableLoader, job_threads, load_with};
use crate::privacy::{PassResult, budget_split, measure_and_release};
use crate::progress::{Phase, Progress};
use crate::report::{
    BudgetReport, DetectionReport, NON_PRIVATE_LABEL, NonPrivateReport, Report, Timings,
};
use crate::{EngineError, JobConfig, failpoint, ledger};

/// A fresh job id, the one the ledger records: every job's, local or the
/// coordinator's (which passes it in through [`Prepaid`]). From the OS,
/// not the noise generator, so seeding stays exact.
pub fn new_job_id() -> Result<String, EngineError> {
    Ok(format!("{:016x}", noise_rng(None)?.next_u64()))
}

/// Runs a job to its report.
///
/// Order matters for privacy and for users: options and constraints are
/// validated and the ledger checked before the table is read; the ledger
/// is charged durably before the first noise is drawn.
pub async fn run_job(config: &JobConfig, progress: &dyn Progress) -> Result<Report, EngineError> {
    run_job_with(config, progress, &LocalLoader).await
}

/// [`run_job`], with the table loaded by `loader` (an in-memory table's
/// [`TableLoader`]).
pub async fn run_job_with(
    config: &JobConfig,
    progress: &dyn Progress,
    loader: &impl JobLoader,
) -> Result<Report, EngineError> {
    run(config, None, progress, loader).await.report
}

/// [`run_job`] on `table`, held in memory ([`TableLoader`]).
pub async fn run_job_on_table(
    config: &JobConfig,
    table: TableData,
    progress: &dyn Progress,
) -> Result<Report, EngineError> {
    run_job_with(config, progress, &TableLoader::new(table)).await
}

/// How a job ended, with its loader's figures ([`JobLoader::Stats`]) once
/// detection ended, whether the job then succeeded or failed (a
/// coordinator's status shows them either way).
#[derive(Debug)]
pub struct JobOutcome<S> {
    /// The report, or why the job failed.
    pub report: Result<Report, EngineError>,
    /// The loader's figures, if detection ended.
    pub stats: Option<S>,
}

/// A job whose ledger charge was made before it started, by a caller that
/// owns the ledger (the cluster coordinator charges when it accepts a job,
/// so a cancel, a failure or a crash after acceptance cannot make an
/// outcome free: issue 26). The engine touches no ledger; the report
/// carries the caller's job id and ledger state.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Prepaid {
    /// The job id the ledger records.
    pub job_id: String,
    /// The ledger after the charge, if the job has a ledger.
    pub ledger: Option<ledger::LedgerState>,
    /// ε charged for the `over quota` verdict (`max-edges` on a
    /// coordinator): the verdict is then an (ε, δ)-DP release
    /// ([`dpincon_release::quota`]), not an exact bit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota_epsilon: Option<f64>,
}

/// [`run_job_with`] for a job charged beforehand ([`Prepaid`]), with the
/// loader's figures (a coordinator's job process and its `BallistaLoader`):
/// every failure from here on leaves the charge in place.
pub async fn run_prepaid_job<L: JobLoader>(
    config: &JobConfig,
    prepaid: Prepaid,
    progress: &dyn Progress,
    loader: &L,
) -> JobOutcome<L::Stats> {
    run(config, Some(prepaid), progress, loader).await
}

async fn run<L: JobLoader>(
    config: &JobConfig,
    prepaid: Option<Prepaid>,
    progress: &dyn Progress,
    loader: &L,
) -> JobOutcome<L::Stats> {
    let mut stats = None;
    let report = run_to_report(config, prepaid, progress, loader, &mut stats).await;
    JobOutcome { report, stats }
}

/// [`run`]'s steps; `stats` gets the loader's figures once detection ends.
async fn run_to_report<L: JobLoader>(
    config: &JobConfig,
    prepaid: Option<Prepaid>,
    progress: &dyn Progress,
    loader: &L,
    stats: &mut Option<L::Stats>,
) -> Result<Report, EngineError> {
    let total = Instant::now();
    let privacy = budget_split(config)?;
    let data = &config.data;
    // A ledger is bound to its table's name: an in-memory table without
    // one would share the budget of every other unnamed table.
    if data.ledger.is_some() && config.table.name().as_os_str().is_empty() {
        return Err(EngineError::Config(
            "a ledger needs the table's name: give an in-memory table a dataset name".into(),
        ));
    }
    if let (None, Some(path), Some(p)) = (&prepaid, &data.ledger, &privacy) {
        ledger::check(path, &config.table.name(), data.budget_cap, p.total())?;
    }
    failpoint::hit("after-check");
    let id = match &prepaid {
        Some(p) => p.job_id.clone(),
        None => new_job_id()?,
    };
    let (loaded, figures) = load_with(config, progress, loader).await?.split_stats();
    *stats = Some(figures);
    failpoint::hit("after-load");
    let quota_epsilon = prepaid.as_ref().and_then(|p| p.quota_epsilon);
    check_quota(config, &loaded, quota_epsilon)?;

    // Charge before any noise: a job that dies from here on over-counts.
    let ledger_state = match (prepaid, &data.ledger, &privacy) {
        (Some(p), _, _) => p.ledger,
        (None, Some(path), Some(p)) => {
            let charges: Vec<(&str, f64)> =
                p.measures().into_iter().map(|m| (m.name(), p.epsilon.value())).collect();
            Some(ledger::charge(path, &config.table.name(), data.budget_cap, &id, &charges)?)
        }
        _ => None,
    };
    failpoint::hit("after-charge");
    let mut rng = privacy.as_ref().map(|_| noise_rng(config.test.seed)).transpose()?;
    progress.start(Phase::Measure);
    let measure_start = Instant::now();
    let release = privacy.as_ref().zip(rng.as_mut());
    let PassResult { exact, cover, releases } =
        measure_and_release(&loaded.graph, release, &loaded.facts, job_threads(config))?;
    let measures_s = measure_start.elapsed().as_secs_f64();
    failpoint::hit("after-release");
    progress.finish(Phase::Measure, measures_s);

    let non_private = config.test.non_private.then(|| NonPrivateReport {
        label: NON_PRIVATE_LABEL.into(),
        rows: exact.rows,
        edges: exact.edges,
        problematic: exact.problematic,
        max_degree: exact.max_degree,
        greedy_cover: cover.cover,
        min_cover_lower_bound: cover.lower_bound,
        // The LP and the exact cover need the whole adjacency, which a
        // memory budget cannot promise (8 bytes per edge).
        repair: data.memory_limit.is_none().then(|| {
            let work = crate::repair::EXACT_COVER_WORK;
            crate::repair::exact_repair(&loaded.graph, cover.cover, work, job_threads(config))
        }),
        drastic: exact.drastic,
        edge_stream: loaded
            .fingerprint
            .unwrap_or_else(|| edge_stream_fingerprint(loaded.graph.edges()))
            .to_string(),
    });
    let budget = privacy.as_ref().map(|p| BudgetReport {
        per_measure: p.epsilon.value(),
        measures: p.measures(),
        total: p.total() + quota_epsilon.unwrap_or(0.0),
        quota_verdict: quota_epsilon,
        ledger: ledger_state,
    });
    let spilled_bytes = loaded.graph.spilled_bytes();
    Ok(Report {
        job_id: id,
        seeded: rng.as_ref().is_some_and(NoiseRng::is_seeded),
        budget,
        measures: releases,
        data: config.table.name().display().to_string(),
        constraints: config.constraints.origin().display().to_string(),
        constraint_count: loaded.constraint_count,
        detection: DetectionReport { threads: loaded.threads, plans: loaded.plans },
        timings: config.test.non_private.then(|| Timings {
            read_s: loaded.read_s,
            detect_s: loaded.detect_s,
            measures_s,
            total_s: total.elapsed().as_secs_f64(),
            peak_rss_mib: crate::report::peak_rss_mib(),
            spilled_bytes,
        }),
        non_private,
        gated: None,
    })
}

/// The `max-edges` quota of a loaded job: with `quota_epsilon` (a
/// coordinator's client sees the verdict) a charged noisy verdict; else
/// the data owner's own run, exact, before any charge, so a local run
/// over the quota costs nothing.
pub(crate) fn check_quota(
    config: &JobConfig,
    loaded: &LoadedJob,
    quota_epsilon: Option<f64>,
) -> Result<(), EngineError> {
    let data = &config.data;
    let Some(max) = data.max_edges else { return Ok(()) };
    let edges = loaded.graph.edge_count();
    let over = match quota_epsilon {
        Some(epsilon) => {
            quota_verdict(max, data.max_rows, epsilon, loaded.facts.rows, edges, config)?
        }
        None => edges > max,
    };
    match over {
        true => Err(EngineError::OverQuota(format!(
            "the conflict graph has {edges} edges: over the quota of --max-edges {max}"
        ))),
        false => Ok(()),
    }
}

/// The `over quota` verdict of a prepaid job ([`dpincon_release::quota`]):
/// noisy below the cap `max` for tables within the public row bound; a
/// table over that bound breaks the operator's promise and is over (the
/// verdict's sensitivity rests on it). Its noise comes from a stream of
/// its own, so seeded releases equal an unquoted run's.
fn quota_verdict(
    max: u64,
    max_rows: Option<u64>,
    epsilon: f64,
    rows: u64,
    edges: u64,
    config: &JobConfig,
) -> Result<bool, EngineError> {
    let Some(n_max) = max_rows else {
        return Err(EngineError::Config("a quota verdict needs the public bound max-rows".into()));
    };
    let test = dpincon_release::quota::QuotaTest::new(max, n_max, epsilon)
        .map_err(|e| EngineError::Config(e.to_string()))?;
    const QUOTA_STREAM: u64 = 0x7175_6f74_6121; // "quota!": any constant
    let mut rng = noise_rng(config.test.seed.map(|s| s ^ QUOTA_STREAM))?;
    Ok(rows > n_max || test.over(edges, &mut rng))
}

/// The noise generator: seeded only when asked (test mode), else from the OS.
pub(crate) fn noise_rng(seed: Option<u64>) -> Result<NoiseRng, EngineError> {
    match seed {
        Some(seed) => Ok(NoiseRng::seeded(seed)),
        None => NoiseRng::from_os().map_err(|e| EngineError::Config(e.to_string())),
    }
}
