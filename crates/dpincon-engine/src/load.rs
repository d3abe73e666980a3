//! Steps 2–3 of a job: its table turned into the conflict graph and the
//! facts the releases need. One skeleton ([`load_with`]) owns the phases
//! and their timing, the constraints' parse, the checks between the
//! phases, the pair cap's verdict and the facts; a [`JobLoader`] supplies
//! only the two steps that differ between here and a cluster: how the
//! table is read and the constraints bound to it, and where its conflicts
//! are found.

use std::future::Future;
use std::time::Instant;

use dpincon_constraints::{BoundConstraint, DenialConstraint};
use dpincon_detect::{
    ConflictClasses, CoverSets, DetectError, DetectOptions, DetectionPlan, EqualityFrequencies,
    KeyConstraint, ListedRows, Relation, cover_sets, detect, equality_frequencies, leading_count,
    leading_count_sensitivity, leading_miss, leading_miss_sensitivity, union_cover,
    union_cover_sensitivity,
};
use dpincon_graph::{ConflictGraph, EdgeFingerprint};
use dpincon_release::{
    ClassFacts, CoverFacts, KeyCover, LeadingFacts, TableFacts, UnionCover, UpperCover,
};
use dpincon_source::{Prepared, TableData, prepare_detection};

use crate::privacy::check_repair_memory;
use crate::progress::{Phase, Progress};
use crate::report::PlanReport;
use crate::{EngineError, JobConfig};

/// A table turned into its conflict graph, with what the releases need
/// and the loader's own figures (`S`, [`JobLoader::Stats`]).
#[derive(Debug)]
pub struct LoadedJob<S = ()> {
    /// The conflict graph.
    pub graph: ConflictGraph,
    /// The private facts `ub-hem` and the n_max estimate read (with noise).
    pub facts: TableFacts,
    /// How each constraint was detected.
    pub plans: Vec<PlanReport>,
    /// Denial constraints after FD expansion.
    pub constraint_count: usize,
    /// Threads a detection task ran on (the report's; the measures run on
    /// the job's threads).
    pub threads: usize,
    /// Seconds reading and encoding the table.
    pub read_s: f64,
    /// Seconds detecting conflicts.
    pub detect_s: f64,
    /// The edge stream's fingerprint, when the loader walked the graph
    /// for it (a cluster's does, for a non-private job's status); else a
    /// non-private report walks the graph for it.
    pub fingerprint: Option<EdgeFingerprint>,
    /// The loader's figures of its detection (a cluster's tasks, bytes
    /// and seconds: the operator's status and log).
    pub stats: S,
}

impl<S> LoadedJob<S> {
    /// The loaded job and the loader's figures, apart.
    pub fn split_stats(self) -> (LoadedJob, S) {
        let LoadedJob {
            graph,
            facts,
            plans,
            constraint_count,
            threads,
            read_s,
            detect_s,
            fingerprint,
            stats,
        } = self;
        let job = LoadedJob {
            graph,
            facts,
            plans,
            constraint_count,
            threads,
            read_s,
            detect_s,
            fingerprint,
            stats: (),
        };
        (job, stats)
    }
}

/// What a [`JobLoader`] is given: the job, its constraints read once (the
/// text a cluster ships to its executors, and its parse) and the threads
/// this process gives the job.
#[derive(Debug, Clone, Copy)]
pub struct LoadContext<'a> {
    /// The job.
    pub config: &'a JobConfig,
    /// The constraints' text.
    pub text: &'a str,
    /// The constraints, parsed.
    pub parsed: &'a [DenialConstraint],
    /// Threads for reading, encoding, detection and assembly here:
    /// `threads`, else every core.
    pub threads: usize,
}

/// The read phase's result: the constraints bound to the table (public:
/// from its columns and their types, not its rows) and what detection
/// takes next.
#[derive(Debug)]
pub struct BoundTable<I> {
    /// The constraints after FD expansion, bound to the table's columns.
    pub bound: Vec<BoundConstraint>,
    /// Their cover sets (`dpincon_detect::cover_sets`), which say before
    /// detection whether I_R needs the LP.
    pub cover_sets: CoverSets,
    /// What [`JobLoader::detect`] takes: the encoded table here, a
    /// cluster's physical plan there.
    pub input: I,
}

/// The detect phase's result (private).
#[derive(Debug)]
pub struct Detected<S> {
    /// The conflict graph.
    pub graph: ConflictGraph,
    /// The table's rows.
    pub rows: u64,
    /// The facts counted beside detection: the maximum frequencies, the
    /// classes of the keys and FDs and the order pairs' chain covers.
    pub frequencies: EqualityFrequencies,
    /// How each constraint was detected, in constraint order.
    pub plans: Vec<DetectionPlan>,
    /// Threads a detection task ran on.
    pub threads: usize,
    /// The edge stream's fingerprint, if the loader walked the graph.
    pub fingerprint: Option<EdgeFingerprint>,
    /// The loader's own figures.
    pub stats: S,
}

/// Where a job's table is read and its conflicts found: in this process
/// ([`LocalLoader`], [`TableLoader`]), or somewhere else entirely (a
/// cluster's executors, which the job process never lets it read). The
/// skeleton around the two steps ([`load_with`]: phases, checks, facts)
/// and the job around the load (option checks, the ledger, the measure
/// pass and the releases) are the same code. Neither step draws noise or
/// touches a ledger.
pub trait JobLoader: Sync {
    /// What the read phase hands detection.
    type Input: Send;
    /// The loader's own figures of a detection (`()` here).
    type Stats: Send;

    /// Phase `read`: the table read (or only what detection must know of
    /// it beforehand) and the constraints bound to it.
    fn read(
        &self,
        job: LoadContext<'_>,
    ) -> impl Future<Output = Result<BoundTable<Self::Input>, EngineError>> + Send;

    /// Phase `detect`: the conflict graph and the facts. A detection
    /// stopped at its pair cap (`max-edges`) fails with
    /// [`DetectError::PairCap`], which the skeleton calls over quota.
    fn detect(
        &self,
        job: LoadContext<'_>,
        input: Self::Input,
    ) -> impl Future<Output = Result<Detected<Self::Stats>, EngineError>> + Send;
}

/// The job's table read and detected on this process's threads: [`load`].
#[derive(Debug, Default, Clone, Copy)]
pub struct LocalLoader;

/// A table encoded here, with its compiled constraints.
#[derive(Debug)]
pub struct EncodedTable {
    relation: Relation,
    compiled: Vec<KeyConstraint>,
}

impl JobLoader for LocalLoader {
    type Input = EncodedTable;
    type Stats = ();

    async fn read(&self, job: LoadContext<'_>) -> Result<BoundTable<EncodedTable>, EngineError> {
        let table = job.config.table.read(job.threads).await?;
        bind_table(job, table)
    }

    async fn detect(
        &self,
        job: LoadContext<'_>,
        input: EncodedTable,
    ) -> Result<Detected<()>, EngineError> {
        detect_here(job, input)
    }
}

/// What reads an in-memory table (a [`TableLoader`]'s): called once, on
/// the job's thread, after the options and the ledger were checked.
pub type ReadTable = Box<dyn FnOnce() -> Result<TableData, EngineError> + Send>;

/// A table the caller holds or streams in memory (the Python package's
/// DataFrames and Arrow streams), bound, encoded and detected as
/// [`LocalLoader`] does a table it reads. The job's `table` names no file
/// or PostgreSQL source; its `dataset`, if any, is what the ledger and the
/// report call it. A reader given with [`TableLoader::reading`] runs only
/// once the options and the ledger passed, so a refused job leaves a
/// one-shot stream unread.
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
    type Input = EncodedTable;
    type Stats = ();

    async fn read(&self, job: LoadContext<'_>) -> Result<BoundTable<EncodedTable>, EngineError> {
        if job.config.table.names_a_source() {
            return Err(EngineError::Config(
                "a job on an in-memory table names no `data` or `postgres` source".into(),
            ));
        }
        let read = self.read.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        let read = read.ok_or_else(|| {
            EngineError::Config("an in-memory table loads into one job only".into())
        })?;
        bind_table(job, read()?)
    }

    async fn detect(
        &self,
        job: LoadContext<'_>,
        input: EncodedTable,
    ) -> Result<Detected<()>, EngineError> {
        detect_here(job, input)
    }
}

/// Reads the table, detects the conflicts in this process and gathers the
/// facts the releases need ([`LocalLoader`]). Draws no noise and touches
/// no ledger.
pub async fn load(config: &JobConfig, progress: &dyn Progress) -> Result<LoadedJob, EngineError> {
    load_with(config, progress, &LocalLoader).await
}

/// The load's one skeleton, around `loader`'s two steps: the constraints
/// parsed, phase `read`, I_R's LP checked against `--memory-limit` (from
/// the constraints' shapes, before any conflict is looked for), phase
/// `detect`, a stop at the pair cap called over quota, and the facts and
/// plan reports. Draws no noise and touches no ledger.
pub async fn load_with<L: JobLoader>(
    config: &JobConfig,
    progress: &dyn Progress,
    loader: &L,
) -> Result<LoadedJob<L::Stats>, EngineError> {
    let (text, parsed) = config.constraints.read()?;
    let job = LoadContext { config, text: &text, parsed: &parsed, threads: job_threads(config) };
    progress.start(Phase::Read);
    let read_start = Instant::now();
    let BoundTable { bound, cover_sets, input } = loader.read(job).await?;
    let read_s = read_start.elapsed().as_secs_f64();
    progress.finish(Phase::Read, read_s);

    check_repair_memory(config, cover_sets.exact)?;
    progress.start(Phase::Detect);
    let detect_start = Instant::now();
    let detected = loader.detect(job, input).await.map_err(|e| over_cap(e, config))?;
    let detect_s = detect_start.elapsed().as_secs_f64();
    progress.finish(Phase::Detect, detect_s);
    let Detected { graph, rows, frequencies, plans, threads, fingerprint, stats } = detected;
    Ok(LoadedJob {
        graph,
        facts: table_facts(rows, frequencies, cover_sets),
        plans: plan_reports(&bound, &plans),
        constraint_count: bound.len(),
        threads,
        read_s,
        detect_s,
        fingerprint,
        stats,
    })
}

/// The threads this process runs a job's work on (reading, encoding,
/// detection, assembly, the measure pass and the LP): `--threads`, else
/// every core.
pub(crate) fn job_threads(config: &JobConfig) -> usize {
    config.data.threads.unwrap_or_else(|| DetectOptions::default().threads).max(1)
}

/// A read table bound, encoded and compiled here.
fn bind_table(
    job: LoadContext<'_>,
    table: TableData,
) -> Result<BoundTable<EncodedTable>, EngineError> {
    refuse_degenerate(&table, job.parsed)?;
    let path = job.config.constraints.origin();
    let Prepared { bound, relation, compiled } = prepare_detection(
        job.parsed,
        &table,
        |_| true,
        job.threads,
        |source| EngineError::Constraint { path, source },
    )?;
    let cover_sets = cover_sets(&compiled);
    Ok(BoundTable { bound, cover_sets, input: EncodedTable { relation, compiled } })
}

/// Detection on this process's threads.
fn detect_here(job: LoadContext<'_>, input: EncodedTable) -> Result<Detected<()>, EngineError> {
    let EncodedTable { relation, compiled } = input;
    let (config, threads) = (job.config, job.threads);
    let options = DetectOptions {
        threads,
        brute_force: config.test.brute_force,
        memory_limit: config.data.memory_limit.map(dpincon_api::ByteSize::bytes),
        max_pairs: DetectOptions::pair_cap(config.data.max_edges, compiled.len()),
    };
    // The facts read the table only: counted beside detection, they take
    // the cores its phases leave idle where they meet (at 10^6 Tax rows
    // about 0.2 s on one core, after the graph was built).
    let listed = ListedRows::of(&compiled);
    let (detection, frequencies) = std::thread::scope(|scope| {
        let frequencies = scope.spawn(|| equality_frequencies(&relation, &compiled, listed));
        let detection = detect(&relation, &compiled, options);
        (detection, frequencies.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
    });
    let detection = detection?;
    Ok(Detected {
        graph: detection.graph,
        rows: u64::from(relation.rows()),
        frequencies,
        plans: detection.plans,
        threads,
        fingerprint: None,
        stats: (),
    })
}

/// How each constraint is detected, as reported.
fn plan_reports(bound: &[BoundConstraint], plans: &[DetectionPlan]) -> Vec<PlanReport> {
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

/// The release's facts from detection's (`shape`, public, says which
/// covers add up to I_R's upper bound).
fn table_facts(rows: u64, frequencies: EqualityFrequencies, shape: CoverSets) -> TableFacts {
    let EqualityFrequencies {
        max_frequencies,
        minimal_max_frequencies,
        cross_max_frequencies,
        unbounded,
        fd_classes,
        all_fd_shaped,
        chain_covers,
    } = frequencies;
    TableFacts {
        rows,
        max_frequencies,
        minimal_max_frequencies,
        cross_max_frequencies,
        unbounded,
        covers: to_cover_facts(&fd_classes, &chain_covers, shape),
        // I_P's class count: every constraint a key or an FD.
        classes: all_fd_shaped.then(|| to_class_facts(&fd_classes)).flatten(),
    }
}

/// The release's view of the classes of each X (none without an X), and
/// with several X their leading count (the rows' lists were asked for by
/// `ListedRows::of`, public, on the same constraints).
fn to_class_facts(sets: &[ConflictClasses]) -> Option<ClassFacts> {
    let (first, others) = sets.split_first()?;
    let leading = (!others.is_empty()).then(|| LeadingFacts {
        count: leading_count(sets),
        miss: leading_miss(sets),
        count_sensitivity: leading_count_sensitivity(sets),
        miss_sensitivity: leading_miss_sensitivity(sets),
    });
    Some(ClassFacts {
        key: first.key,
        max_class: first.max_class,
        null_rows: first.null_rows,
        sizes: first.sizes.clone(),
        excess: first.excess,
        excess_from: dpincon_detect::EXCESS_FROM as u32,
        others: others.iter().map(|other| other.sizes.clone()).collect(),
        leading,
    })
}

/// The release's view of the covers of each X's keys and FDs and of each
/// order pair (`dpincon_release::CoverFacts`): the largest, and their sum
/// when every constraint is in one of those sets (`shape`, public). An X
/// with FDs of several B adds its NULL-B rows to the sum
/// (`ConflictClasses::exact`). Each key's cover and rows for its partition
/// bound where `shape` says it applies (the rows were listed on the same
/// public test, `dpincon_detect::key_rows_wanted`). Where sets overlap
/// (`CoverSets::union_cover`, public) also their union cover, which the
/// release reads beside U (`UpperCover::release`).
fn to_cover_facts(
    fd_classes: &[ConflictClasses],
    chain_covers: &[u64],
    shape: CoverSets,
) -> CoverFacts {
    let covers = fd_classes.iter().map(|c| c.cover).chain(chain_covers.iter().copied());
    let covers: Vec<u64> = covers.collect();
    let slack: u64 = fd_classes.iter().filter(|c| !c.exact).map(|c| c.null_rows).sum();
    let keys = fd_classes.iter().filter(|c| c.key && shape.key_partitions());
    let union = shape.union_cover().then(|| UnionCover {
        value: union_cover(fd_classes, chain_covers),
        sensitivity: union_cover_sensitivity(fd_classes, chain_covers.len()),
    });
    CoverFacts {
        largest: covers.iter().copied().max().unwrap_or(0),
        sum: (shape.all && shape.sets > 0).then(|| UpperCover {
            sum: covers.iter().sum::<u64>() + slack,
            sets: shape.sets as u64,
            union,
            exact: shape.exact,
        }),
        keys: keys.map(|c| KeyCover { cover: c.cover, rows: c.leading.clone() }).collect(),
    }
}

/// A detection stopped by its pair cap is over the edge quota, as the full
/// graph would have been; any other error stays what it is.
fn over_cap(e: EngineError, config: &JobConfig) -> EngineError {
    match (e, config.data.max_edges) {
        (EngineError::Detect(DetectError::PairCap { .. }), Some(max)) => {
            EngineError::OverQuota(format!(
                "the conflict graph has more than {max} edges: over the quota of --max-edges {max} \
             (detection stopped early)"
            ))
        }
        (e, _) => e,
    }
}

/// An empty table, or a compared column with no value in any row, would
/// otherwise surface as a misleading type error from the binder: say what
/// happened instead (before any charge).
fn refuse_degenerate(table: &TableData, parsed: &[DenialConstraint]) -> Result<(), EngineError> {
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
    use dpincon_release::{CoverFacts, KeyCover, UpperCover};

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
        let shape = |sets, all, exact| CoverSets { sets, all, exact, overlap: false };
        let sum = |sum, sets, exact| Some(UpperCover { sum, sets, union: None, exact });
        let facts = |largest, sum| CoverFacts { largest, sum, keys: vec![] };
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

    /// Where sets overlap the upper bound is the smaller of U and the union
    /// cover, at the larger sensitivity (1 + 2 per FD set + 1 per order
    /// pair); elsewhere U alone. Two FD sets whose covers both delete row 4:
    /// U = 2 + 3, the union |{1, 4, 7, 8}|.
    #[test]
    fn overlapping_sets_take_the_union_cover_where_it_is_smaller() {
        let fd = |cover, deleted: Vec<u32>| ConflictClasses {
            exact: true,
            cover,
            deleted,
            ..ConflictClasses::default()
        };
        let overlapping = CoverSets { sets: 2, all: true, exact: false, overlap: true };
        let upper = |classes: &[ConflictClasses], chains: &[u64], shape| {
            let u = to_cover_facts(classes, chains, shape).sum.unwrap().release();
            (u.value, u.sensitivity)
        };
        let shared = [fd(2, vec![1, 4]), fd(3, vec![4, 7, 8])];
        assert_eq!(upper(&shared, &[], overlapping), (4, 5));
        assert_eq!(upper(&shared, &[1], CoverSets { sets: 3, ..overlapping }), (5, 6));
        assert_eq!(upper(&shared, &[], CoverSets { overlap: false, ..overlapping }), (5, 2));
        // Near ties: the margin covers delete more than U counts.
        let ties = [fd(1, vec![1, 2, 3]), fd(1, vec![5, 6])];
        assert_eq!(upper(&ties, &[], overlapping), (2, 5));
    }

    /// A key's cover and rows reach the key partition bound beside another
    /// set only: alone, its cover is I_R (and no rows were listed).
    #[test]
    fn a_key_beside_another_set_brings_its_rows() {
        let key = ConflictClasses {
            key: true,
            exact: true,
            cover: 3,
            leading: vec![1, 2, 5, 6, 7],
            ..ConflictClasses::default()
        };
        let fd = ConflictClasses { exact: true, cover: 4, ..ConflictClasses::default() };
        let both = to_cover_facts(
            &[key.clone(), fd],
            &[],
            CoverSets { sets: 2, all: true, exact: false, overlap: false },
        );
        assert_eq!(both.keys, [KeyCover { cover: 3, rows: vec![1, 2, 5, 6, 7] }]);
        assert_eq!(both.largest, 4);
        let beside_a_pair = to_cover_facts(
            std::slice::from_ref(&key),
            &[2],
            CoverSets { sets: 2, all: true, exact: false, overlap: false },
        );
        assert_eq!(beside_a_pair.keys.len(), 1);
        let alone = to_cover_facts(
            &[key],
            &[],
            CoverSets { sets: 1, all: true, exact: true, overlap: false },
        );
        assert!(alone.keys.is_empty());
    }
}
