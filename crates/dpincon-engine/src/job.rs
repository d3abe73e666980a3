//! A job from options to report: load and detect, charge the ledger, measure and release.

use std::time::Instant;

use dpincon_detect::{
    ConflictClasses, CoverSets, DetectOptions, EqualityFrequencies, cover_sets, detect,
    equality_frequencies,
};
use dpincon_graph::{ConflictGraph, EdgeFingerprint, edge_stream_fingerprint};
use dpincon_release::{ClassFacts, CoverFacts, NoiseRng, TableFacts, UpperCover};
use dpincon_source::{Prepared, TableData, prepare_detection};

use crate::privacy::{PassResult, budget_split, check_repair_memory, measure_and_release};
use crate::report::{
    BudgetReport, DetectionReport, NON_PRIVATE_LABEL, NonPrivateReport, PlanReport, Report, Timings,
};
use crate::{EngineError, JobConfig, failpoint, ledger};

/// The phases of a job, in order. Serialised (and shown to a
/// coordinator's clients) as [`Phase::key`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Parsing the constraints and reading the table.
    Read,
    /// Finding the conflicts.
    Detect,
    /// The pass over the edge stream and the releases.
    Measure,
}

impl Phase {
    /// The phase's key: `read`, `detect`, `measure`.
    pub fn key(self) -> &'static str {
        match self {
            Phase::Read => "read",
            Phase::Detect => "detect",
            Phase::Measure => "measure",
        }
    }

    /// A short human name.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Read => "reading table",
            Phase::Detect => "detecting conflicts",
            Phase::Measure => "measuring and releasing",
        }
    }
}

/// Receives progress; the CLI draws it, services forward it.
pub trait Progress: Sync {
    /// A phase starts.
    fn start(&self, phase: Phase);
    /// A phase ends.
    fn finish(&self, phase: Phase, seconds: f64);
}

/// Progress that goes nowhere.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _: Phase) {}
    fn finish(&self, _: Phase, _: f64) {}
}

/// A fresh job id, the one the ledger records: every job's, local or the
/// coordinator's (which passes it in through [`Prepaid`]). From the OS,
/// not the noise generator, so seeding stays exact.
pub fn new_job_id() -> Result<String, EngineError> {
    Ok(format!("{:016x}", noise_rng(None)?.next_u64()))
}

/// A table turned into its conflict graph, with what the releases need.
#[derive(Debug)]
pub struct LoadedJob {
    /// The conflict graph.
    pub graph: ConflictGraph,
    /// The private facts `ub-hem` and the n_max estimate read (with noise).
    pub facts: TableFacts,
    /// How each constraint was detected.
    pub plans: Vec<PlanReport>,
    /// Denial constraints after FD expansion.
    pub constraint_count: usize,
    /// Threads a detection task ran on (the report's; the measures run on
    /// [`job_threads`]).
    pub threads: usize,
    /// Seconds reading and encoding the table.
    pub read_s: f64,
    /// Seconds detecting conflicts.
    pub detect_s: f64,
    /// The edge stream's fingerprint, when the loader walked the graph
    /// for it (the coordinator's does, for a non-private job's status);
    /// else a non-private report walks the graph for it.
    pub fingerprint: Option<EdgeFingerprint>,
}

/// Where a job's table becomes its conflict graph and facts: read and
/// detected in this process ([`LocalLoader`], [`load`]), or somewhere else
/// entirely (the coordinator's distributed engine, which never reads the
/// table itself). The job around it (option checks, the ledger, the
/// measure pass and the releases) is the same code.
pub trait JobLoader: Sync {
    /// Turns the job's table into a [`LoadedJob`]. Draws no noise and
    /// touches no ledger.
    fn load(
        &self,
        config: &JobConfig,
        progress: &dyn Progress,
    ) -> impl std::future::Future<Output = Result<LoadedJob, EngineError>> + Send;
}

/// The job's table read and detected on this process's threads: [`load`].
#[derive(Debug, Default, Clone, Copy)]
pub struct LocalLoader;

impl JobLoader for LocalLoader {
    async fn load(
        &self,
        config: &JobConfig,
        progress: &dyn Progress,
    ) -> Result<LoadedJob, EngineError> {
        load(config, progress).await
    }
}

/// How each constraint is detected, as reported.
pub fn plan_reports(
    bound: &[dpincon_constraints::BoundConstraint],
    plans: &[dpincon_detect::DetectionPlan],
) -> Vec<PlanReport> {
    plans
        .iter()
        .map(|p| PlanReport {
            line: bound[p.constraint].origin.line,
            constraint: p.display.clone(),
            partition_attributes: p.partition_attributes,
            driver: p.driver.to_string(),
        })
        .collect()
}

/// Reads the table, detects the conflicts in this process and gathers the
/// facts the releases need. Draws no noise and touches no ledger.
pub async fn load(config: &JobConfig, progress: &dyn Progress) -> Result<LoadedJob, EngineError> {
    let parsed = config.constraints.parse()?;
    progress.start(Phase::Read);
    let read_start = Instant::now();
    let table = config.table.read(job_threads(config)).await?;
    detect_table(config, &parsed, table, read_start, progress)
}

/// What reads an in-memory table (a [`TableLoader`]'s): called once, on
/// the job's thread, after the options and the ledger were checked.
pub type ReadTable = Box<dyn FnOnce() -> Result<TableData, EngineError> + Send>;

/// A table the caller holds or streams in memory (the Python package's
/// DataFrames and Arrow streams), bound, encoded and detected as
/// [`load`] does a table it reads. The job's
/// `table` names no file or PostgreSQL source; its `dataset`, if any, is
/// what the ledger and the report call it. A reader given with
/// [`TableLoader::reading`] runs only once the options and the ledger
/// passed, so a refused job leaves a one-shot stream unread.
pub struct TableLoader {
    read: std::sync::Mutex<Option<ReadTable>>,
}

impl std::fmt::Debug for TableLoader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableLoader").finish_non_exhaustive()
    }
}

impl TableLoader {
    /// The loader of `table`.
    pub fn new(table: TableData) -> Self {
        TableLoader::reading(move || Ok(table))
    }

    /// The loader of the table `read` returns.
    pub fn reading(read: impl FnOnce() -> Result<TableData, EngineError> + Send + 'static) -> Self {
        TableLoader { read: std::sync::Mutex::new(Some(Box::new(read))) }
    }
}

impl JobLoader for TableLoader {
    async fn load(
        &self,
        config: &JobConfig,
        progress: &dyn Progress,
    ) -> Result<LoadedJob, EngineError> {
        if config.table.names_a_source() {
            return Err(EngineError::Config(
                "a job on an in-memory table names no `data` or `postgres` source".into(),
            ));
        }
        let parsed = config.constraints.parse()?;
        let read = self.read.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        let read = read.ok_or_else(|| {
            EngineError::Config("an in-memory table loads into one job only".into())
        })?;
        progress.start(Phase::Read);
        let read_start = Instant::now();
        detect_table(config, &parsed, read()?, read_start, progress)
    }
}

/// [`run_job`] on `table`, held in memory ([`TableLoader`]).
pub async fn run_job_on_table(
    config: &JobConfig,
    table: TableData,
    progress: &dyn Progress,
) -> Result<Report, EngineError> {
    run_job_with(config, progress, &TableLoader::new(table)).await
}

/// The read table bound, encoded and detected (the read phase ends after
/// the encoding, which started at `read_start`).
fn detect_table(
    config: &JobConfig,
    parsed: &[dpincon_constraints::DenialConstraint],
    table: TableData,
    read_start: Instant,
    progress: &dyn Progress,
) -> Result<LoadedJob, EngineError> {
    refuse_degenerate(&table, parsed)?;
    let path = config.constraints.origin();
    let threads = job_threads(config);
    let Prepared { bound, relation, compiled } = prepare_detection(
        parsed,
        &table,
        |_| true,
        threads,
        |source| EngineError::Constraint { path: path.clone(), source },
    )?;
    drop(table);
    let read_s = read_start.elapsed().as_secs_f64();
    progress.finish(Phase::Read, read_s);

    let options = DetectOptions {
        threads,
        brute_force: config.test.brute_force,
        memory_limit: config.data.memory_limit.map(dpincon_api::ByteSize::bytes),
        max_pairs: DetectOptions::pair_cap(config.data.max_edges, compiled.len()),
    };
    // Before detection: the constraints' shapes alone say whether the LP
    // is needed, and whether --memory-limit allows it.
    let shape = cover_sets(&compiled);
    check_repair_memory(config, shape.exact)?;
    progress.start(Phase::Detect);
    let detect_start = Instant::now();
    // The facts read the table only: counted beside detection, they take
    // the cores its phases leave idle where they meet (at 10^6 Tax rows
    // about 0.2 s on one core, after the graph was built).
    let (detection, frequencies) = std::thread::scope(|scope| {
        let frequencies = scope.spawn(|| equality_frequencies(&relation, &compiled));
        let detection = detect(&relation, &compiled, options);
        (detection, frequencies.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
    });
    let detection = detection.map_err(|e| over_cap(e, config.data.max_edges))?;
    let detect_s = detect_start.elapsed().as_secs_f64();
    progress.finish(Phase::Detect, detect_s);
    let classes = class_facts(&frequencies);
    let plans = plan_reports(&bound, &detection.plans);
    Ok(LoadedJob {
        graph: detection.graph,
        facts: TableFacts {
            rows: u64::from(relation.rows()),
            max_frequencies: frequencies.max_frequencies,
            minimal_max_frequencies: frequencies.minimal_max_frequencies,
            unbounded: frequencies.unbounded,
            covers: to_cover_facts(&frequencies.fd_classes, &frequencies.chain_covers, shape),
            classes,
        },
        plans,
        constraint_count: bound.len(),
        threads: options.threads,
        read_s,
        detect_s,
        fingerprint: None,
    })
}

/// I_P's class facts when every constraint is a key or an FD
/// (`dpincon_release`'s class count), else none.
fn class_facts(frequencies: &EqualityFrequencies) -> Option<ClassFacts> {
    frequencies.all_fd_shaped.then(|| to_class_facts(&frequencies.fd_classes)).flatten()
}

/// The release's view of the classes of each X (none without an X).
pub fn to_class_facts<'a>(
    sets: impl IntoIterator<Item = &'a ConflictClasses>,
) -> Option<ClassFacts> {
    let mut sets = sets.into_iter();
    let first = sets.next()?;
    let mut facts = ClassFacts {
        key: first.key,
        max_class: first.max_class,
        null_rows: first.null_rows,
        sizes: first.sizes.clone(),
        excess: first.excess,
        excess_from: dpincon_detect::EXCESS_FROM as u32,
        others: vec![],
    };
    facts.others = sets.map(|other| other.sizes.clone()).collect();
    Some(facts)
}

/// The release's view of the covers of each X's keys and FDs and of each
/// order pair (`dpincon_release::CoverFacts`): the largest, and their sum
/// when every constraint is in one of those sets (`shape`, public). An X
/// with FDs of several B adds its NULL-B rows to the sum
/// (`ConflictClasses::exact`).
pub fn to_cover_facts<'a>(
    fd_classes: impl IntoIterator<Item = &'a ConflictClasses>,
    chain_covers: impl IntoIterator<Item = &'a u64>,
    shape: CoverSets,
) -> CoverFacts {
    let fd_classes: Vec<&ConflictClasses> = fd_classes.into_iter().collect();
    let covers = fd_classes.iter().map(|c| c.cover).chain(chain_covers.into_iter().copied());
    let covers: Vec<u64> = covers.collect();
    let slack: u64 = fd_classes.iter().filter(|c| !c.exact).map(|c| c.null_rows).sum();
    CoverFacts {
        largest: covers.iter().copied().max().unwrap_or(0),
        sum: (shape.all && shape.sets > 0).then(|| UpperCover {
            value: covers.iter().sum::<u64>() + slack,
            sets: shape.sets as u64,
            exact: shape.exact,
        }),
    }
}

/// The threads this process runs a job's work on (reading, encoding,
/// detection, assembly, the measure pass and the LP): `--threads`, else
/// every core.
pub fn job_threads(config: &JobConfig) -> usize {
    config.data.threads.unwrap_or_else(|| DetectOptions::default().threads).max(1)
}

/// Runs a job to its report.
///
/// Order matters for privacy and for users: options and constraints are
/// validated and the ledger checked before the table is read; the ledger
/// is charged durably before the first noise is drawn.
pub async fn run_job(config: &JobConfig, progress: &dyn Progress) -> Result<Report, EngineError> {
    run_job_with(config, progress, &LocalLoader).await
}

/// [`run_job`], with the table loaded by `loader` (the coordinator's
/// distributed engine).
pub async fn run_job_with(
    config: &JobConfig,
    progress: &dyn Progress,
    loader: &impl JobLoader,
) -> Result<Report, EngineError> {
    run(config, None, progress, loader).await
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

/// [`run_job_with`] for a job charged beforehand ([`Prepaid`]): every
/// failure from here on leaves the charge in place.
pub async fn run_prepaid_job(
    config: &JobConfig,
    prepaid: Prepaid,
    progress: &dyn Progress,
    loader: &impl JobLoader,
) -> Result<Report, EngineError> {
    run(config, Some(prepaid), progress, loader).await
}

async fn run(
    config: &JobConfig,
    prepaid: Option<Prepaid>,
    progress: &dyn Progress,
    loader: &impl JobLoader,
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
    let loaded = loader.load(config, progress).await?;
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

/// A detection stopped by its pair cap is over the edge quota, as the full
/// graph would have been; any other error stays what it is.
pub fn over_cap(e: dpincon_detect::DetectError, max_edges: Option<u64>) -> EngineError {
    match (e, max_edges) {
        (dpincon_detect::DetectError::PairCap { .. }, Some(max)) => {
            EngineError::OverQuota(format!(
                "the conflict graph has more than {max} edges: over the quota of --max-edges {max} \
             (detection stopped early)"
            ))
        }
        (e, _) => EngineError::Detect(e),
    }
}

/// The noise generator: seeded only when asked (test mode), else from the OS.
pub(crate) fn noise_rng(seed: Option<u64>) -> Result<NoiseRng, EngineError> {
    match seed {
        Some(seed) => Ok(NoiseRng::seeded(seed)),
        None => NoiseRng::from_os().map_err(|e| EngineError::Config(e.to_string())),
    }
}

/// An empty table, or a compared column with no value in any row, would
/// otherwise surface as a misleading type error from the binder: say what
/// happened instead (before any charge).
fn refuse_degenerate(
    table: &dpincon_source::TableData,
    parsed: &[dpincon_constraints::DenialConstraint],
) -> Result<(), EngineError> {
    use dpincon_constraints::Operand;
    use dpincon_source::SourceError;
    if table.rows == 0 {
        return Err(SourceError::Empty { path: table.path.clone() }.into());
    }
    let null = table.null_columns();
    for dc in parsed {
        for p in &dc.predicates {
            for side in [&p.left, &p.right] {
                if let Operand::Attr { column, .. } = side
                    && null.contains(&column.as_str())
                {
                    let (path, line) = (table.path.clone(), dc.origin.line);
                    return Err(SourceError::AllNull { path, column: column.clone(), line }.into());
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::to_cover_facts;
    use dpincon_detect::{ConflictClasses, CoverSets};
    use dpincon_release::{CoverFacts, UpperCover};

    /// The largest cover bounds I_R from below; U sums every set's cover,
    /// with the NULL-B rows only where X's cover is not exact (FDs of two
    /// B), and is I_R itself for one exact set (which sets are exact:
    /// `dpincon_detect::cover_sets`); without every constraint in a set,
    /// only the largest cover.
    #[test]
    fn covers_give_an_exact_cover_or_an_upper_bound() {
        let fd = |cover, null_rows, exact| ConflictClasses {
            exact,
            cover,
            null_rows,
            ..ConflictClasses::default()
        };
        let shape = |sets, all, exact| CoverSets { sets, all, exact };
        let sum = |value, sets, exact| Some(UpperCover { value, sets, exact });
        let facts = |largest, sum| CoverFacts { largest, sum };
        let (key_or_one_b, two_b) = (fd(12, 3, true), fd(12, 3, false));
        let cases = [
            (vec![key_or_one_b.clone()], vec![], shape(1, true, true), facts(12, sum(12, 1, true))),
            (vec![two_b.clone()], vec![], shape(1, true, false), facts(12, sum(15, 1, false))),
            (vec![], vec![7], shape(1, true, true), facts(7, sum(7, 1, true))),
            (
                vec![key_or_one_b.clone(), two_b],
                vec![],
                shape(2, true, false),
                facts(12, sum(27, 2, false)),
            ),
            (
                vec![key_or_one_b.clone()],
                vec![20],
                shape(2, true, false),
                facts(20, sum(32, 2, false)),
            ),
            (vec![key_or_one_b], vec![20], shape(2, false, false), facts(20, None)),
            (vec![], vec![], shape(0, false, false), facts(0, None)),
        ];
        for (classes, chains, shape, expected) in cases {
            let got = to_cover_facts(&classes, &chains, shape);
            assert_eq!(got, expected, "{classes:?} {chains:?} {shape:?}");
        }
    }
}
