//! The job process's detection: the engine's `JobLoader` seam run on
//! Ballista. Phase `read` plans from the constraints and the schema (no
//! row read); phase `detect` submits the plan, assembles the executors'
//! adjacency pieces into the graph and adds up their summaries into the
//! detection's facts. The engine's load skeleton around the two (the
//! constraints' parse, the phases' timing, the repair-memory check, the
//! pair cap's verdict, the facts and plan reports) is the embedded job's.
//! It lives beside its only user, so that `dpincon-ballista` (and its
//! scheduler and executor binaries) links no engine.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use arrow::datatypes::SchemaRef;
use dpincon_detect::{DetectError, EqualityFrequencies};
use dpincon_engine::{BoundTable, Detected, EngineError, JobConfig, JobLoader, LoadContext};
use dpincon_graph::{ConflictGraph, SpillConfig, edge_stream_fingerprint};
use dpincon_source::object::{ObjectTable, block_on, split_object_csv};
use dpincon_source::{
    DataFormat, ObjectUrl, S3Settings, check_header, declared_arrow_schema, split_csv,
};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde::{Deserialize, Serialize};

use dpincon_ballista::BallistaError;
use dpincon_ballista::assemble::{Assembled, assemble, prefetch};
use dpincon_ballista::job::{BallistaJobId, Scheduler};
use dpincon_ballista::plan::{JobPlan, PairTally, PlanRequest, build_plan};
use dpincon_ballista::scan::ScanFormat;
use dpincon_ballista::tls::ClusterTls;

/// What one job's detection did (non-private detail: the operator's status
/// and log), the loader's [`JobLoader::Stats`], sent by the job process to
/// its coordinator.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct DetectStats {
    /// Detection tasks Ballista ran (groups × their partitions).
    pub tasks: u32,
    /// Conflict edges.
    pub edges: u64,
    /// The graph's stream Λ (`edges:hash`, `dpincon_graph::EdgeFingerprint`),
    /// walked for non-private jobs only, as the embedded job does.
    pub fingerprint: Option<String>,
    /// Where the time went.
    pub seconds: DetectSeconds,
    /// Bytes of row records and groups received from the executors,
    /// repeats included.
    pub received: u64,
}

/// Where a distributed detection's time went (non-private detail).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct DetectSeconds {
    /// Submission to the job's end on the executors (scan, shuffle,
    /// detection).
    pub job: f64,
    /// Opening every result partition and reading its summary.
    pub fetch: f64,
    /// Fetching the partitions' pieces, filing them and freezing the graph.
    pub assemble: f64,
}

/// Hash partitions per constraint group by default (the coordinator's
/// `--partitions`): more than a few executors' slots, so load balances and
/// a lost task is cheap to rerun.
pub const DEFAULT_PARTITIONS: usize = 8;

/// Graph memory before spilling by default, and the least the coordinator
/// gives a job when it sizes it from the machine.
pub const DEFAULT_GRAPH_MEMORY: u64 = 256 << 20;

/// Loads jobs on a Ballista cluster (see the module docs).
#[derive(Debug)]
pub struct BallistaLoader {
    /// The scheduler, `http://host:port`.
    pub scheduler: String,
    /// Hash partitions per constraint group (and scan partitions: Parquet
    /// row groups, CSV byte ranges).
    pub partitions: usize,
    /// The least bytes of a CSV table a scan task reads
    /// ([`dpincon_source::MIN_RANGE_BYTES`] by default).
    pub csv_range_bytes: u64,
    /// Where the graph's spill file goes.
    pub work_dir: PathBuf,
    /// Graph memory before spilling, when the job sets no `memory_limit`.
    pub graph_memory: u64,
    /// Mutual TLS to the scheduler and the executors' Flight servers.
    pub tls: Option<ClusterTls>,
    /// Bytes the job's graph spill may take on disk (a public quota; the
    /// job ends over quota past it).
    pub max_spill_bytes: Option<u64>,
    /// Told the Ballista job's id as soon as it is submitted (the job
    /// process tells its coordinator, which cancels the job if it must
    /// kill the process).
    pub on_submitted: Option<OnSubmitted>,
}

/// A hook told each Ballista job's id when it is submitted.
#[derive(Clone)]
pub struct OnSubmitted(pub Arc<dyn Fn(&BallistaJobId) + Send + Sync>);

impl std::fmt::Debug for OnSubmitted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnSubmitted")
    }
}

impl BallistaLoader {
    /// A loader for the scheduler at `scheduler` ([`DEFAULT_PARTITIONS`],
    /// [`DEFAULT_GRAPH_MEMORY`]).
    pub fn new(scheduler: impl Into<String>, work_dir: impl Into<PathBuf>) -> Self {
        BallistaLoader {
            scheduler: scheduler.into(),
            partitions: DEFAULT_PARTITIONS,
            csv_range_bytes: dpincon_source::MIN_RANGE_BYTES,
            work_dir: work_dir.into(),
            graph_memory: DEFAULT_GRAPH_MEMORY,
            tls: None,
            max_spill_bytes: None,
            on_submitted: None,
        }
    }
}

fn remote(e: impl std::fmt::Display) -> EngineError {
    EngineError::Remote(e.to_string())
}

fn engine_error(e: BallistaError, constraints: &Path) -> EngineError {
    match e {
        BallistaError::Constraint(source) => {
            EngineError::Constraint { path: constraints.to_path_buf(), source }
        }
        BallistaError::Source(e) => EngineError::Source(e),
        BallistaError::Detect(e) => EngineError::Detect(e),
        other => remote(other),
    }
}

/// How executors read a job's table, known before they do.
#[derive(Debug, Clone)]
pub struct TableLayout {
    /// The whole table's Arrow schema.
    pub schema: SchemaRef,
    /// The scan's format and units.
    pub format: ScanFormat,
    /// Rows of each scan unit (row group, CSV range), in row order.
    pub unit_rows: Vec<u64>,
}

/// The table's layout: a Parquet file's footer (no row read), or a CSV
/// table's declared types (which must name every column of its header,
/// in order) and its cut into `parts` ranges of whole records of at least
/// `range_bytes` (the table is read once, in order, for where records
/// end; no value is kept).
pub fn table_layout(
    config: &JobConfig,
    parts: usize,
    range_bytes: u64,
) -> Result<TableLayout, EngineError> {
    let table = &config.table;
    let (Some(data), Some(format)) = (&table.data, table.file_format()) else {
        return Err(EngineError::Config(
            "distributed mode reads a CSV or Parquet file or object".into(),
        ));
    };
    match format {
        DataFormat::Parquet if ObjectUrl::of_path(data).is_some() => {
            // The job lists the objects once; the spec carries the list.
            let url = ObjectUrl::of_path(data).expect("an object URL")?;
            let listed = block_on(async {
                let table = ObjectTable::open(&url, &S3Settings::from_env()).await?;
                let footers = table.footers().await?;
                let groups = footers.iter().flat_map(|f| f.metadata().row_groups().to_vec());
                let unit_rows = groups.map(|g| g.num_rows() as u64).collect();
                let schema = footers[0].schema().clone();
                Ok::<_, dpincon_source::SourceError>((schema, table.objects().to_vec(), unit_rows))
            });
            let (schema, objects, unit_rows) = listed?;
            Ok(TableLayout { schema, format: ScanFormat::ParquetObjects { objects }, unit_rows })
        }
        DataFormat::Parquet => {
            let path = data;
            let open = |message: String| {
                EngineError::Source(dpincon_source::SourceError::Open {
                    path: path.clone(),
                    message,
                })
            };
            let file = std::fs::File::open(path).map_err(|e| open(e.to_string()))?;
            let builder = ParquetRecordBatchReaderBuilder::try_new(file)
                .map_err(|e| open(format!("not a readable Parquet file: {e}")))?;
            let groups = builder.metadata().row_groups().iter();
            let unit_rows = groups.map(|g| g.num_rows() as u64).collect();
            Ok(TableLayout {
                schema: builder.schema().clone(),
                format: ScanFormat::Parquet,
                unit_rows,
            })
        }
        DataFormat::Csv => {
            let Some(declared) = &table.schema else {
                return Err(EngineError::Config(
                    "a CSV table in distributed mode needs its declared column types \
                     (schema), or convert it to Parquet"
                        .into(),
                ));
            };
            let split = match ObjectUrl::of_path(data) {
                Some(url) => {
                    let url = url?;
                    let settings = S3Settings::from_env();
                    block_on(split_object_csv(&url, parts, range_bytes, &settings))?
                }
                None => split_csv(data, parts, range_bytes)?,
            };
            check_header(data, &split.header, declared)?;
            let schema = Arc::new(declared_arrow_schema(declared.entries()));
            let unit_rows = split.ranges.iter().map(|r| r.rows).collect();
            let format = ScanFormat::Csv { schema: declared.clone(), ranges: split.ranges };
            Ok(TableLayout { schema, format, unit_rows })
        }
    }
}

/// Per-group totals from the partitions' summary rows.
#[derive(Debug, Default, Clone)]
struct GroupTotals {
    rows: u64,
    max_frequency: u64,
    partitions: usize,
    /// The classes of the group's keys and FDs, added over the partitions
    /// (rows agreeing on X never span two hash partitions of X), and
    /// whether every member is a key or an FD.
    classes: Option<(dpincon_detect::ConflictClasses, bool)>,
    /// The chain covers of the group's order pairs, added over the
    /// partitions (a group of rows agreeing on X, or the whole table for
    /// the covers-only task, is in one partition).
    chains: Vec<u64>,
}

impl JobLoader for BallistaLoader {
    type Input = JobPlan;
    type Stats = DetectStats;

    async fn read(&self, job: LoadContext<'_>) -> Result<BoundTable<JobPlan>, EngineError> {
        let config = job.config;
        let layout = table_layout(config, self.partitions, self.csv_range_bytes)?;
        let request = PlanRequest {
            path: data_path(config)?,
            format: layout.format,
            table: layout.schema,
            unit_rows: layout.unit_rows,
            constraints: job.text,
            brute_force: config.test.brute_force,
            partitions: self.partitions,
            max_edges: config.data.max_edges,
        };
        let plan =
            build_plan(&request).map_err(|e| engine_error(e, &config.constraints.origin()))?;
        Ok(BoundTable { bound: plan.bound.clone(), cover_sets: plan.cover_sets, input: plan })
    }

    async fn detect(
        &self,
        job: LoadContext<'_>,
        plan: JobPlan,
    ) -> Result<Detected<DetectStats>, EngineError> {
        let memory = match &job.config.data.memory_limit {
            Some(limit) => limit.bytes(),
            None => self.graph_memory,
        };
        let (graph, rows, frequencies, mut stats) = self.run(&plan, memory, job.threads).await?;
        let fingerprint =
            job.config.test.non_private.then(|| edge_stream_fingerprint(graph.edges()));
        stats.fingerprint = fingerprint.map(|f| f.to_string());
        Ok(Detected {
            graph,
            rows,
            frequencies,
            plans: plan.detection_plans,
            threads: 1,
            fingerprint,
            stats,
        })
    }
}

/// The file or object the executors read.
fn data_path(config: &JobConfig) -> Result<&Path, EngineError> {
    config.table.data.as_deref().ok_or_else(|| EngineError::Config("no table file".into()))
}

impl BallistaLoader {
    /// Runs `plan` on the cluster: the graph, the table's rows and the
    /// facts counted beside detection, added up over the partitions.
    async fn run(
        &self,
        plan: &JobPlan,
        memory: u64,
        threads: usize,
    ) -> Result<(ConflictGraph, u64, EqualityFrequencies, DetectStats), EngineError> {
        let mut scheduler =
            Scheduler::connect(&self.scheduler, self.tls.as_ref()).await.map_err(remote)?;
        let job = scheduler.submit(plan.plan.clone()).await.map_err(remote)?;
        if let Some(hook) = &self.on_submitted {
            (hook.0)(&job);
        }
        let mut seconds = DetectSeconds::default();
        let received =
            self.receive(&mut scheduler, &job, plan, memory, threads, &mut seconds).await;
        // The job's files (rows shuffled between stages, edges of its
        // result) go as soon as it is read, or failed (issue 27).
        let ended = match &received {
            Ok(_) => scheduler.clean(&job).await,
            Err(_) => scheduler.cancel(&job).await,
        };
        if let Err(e) = ended {
            log::warn!("Ballista job {job}: cannot delete its files now: {e}");
        }
        let (assembled, groups, spilled) = received?;
        // The graph's spill file is checked once the graph is frozen.
        if let Some(limit) = self.max_spill_bytes
            && spilled > limit
        {
            return Err(EngineError::OverQuota(format!(
                "the job's graph spill took more than {limit} bytes on disk"
            )));
        }
        let Assembled { graph, received } = assembled;
        let rows = groups[0].rows;
        let maxima: Vec<u64> = groups.iter().map(|g| g.max_frequency).collect();
        // The embedded detection's facts: the classes in the order of X,
        // as there (every constraint is a key or an FD where every group
        // has classes of keys and FDs only); the chain covers in group
        // order (only their largest and their sum are used).
        let frequencies = EqualityFrequencies {
            fd_classes: groups.iter().flat_map(|g| &g.classes).map(|(c, _)| c.clone()).collect(),
            all_fd_shaped: groups.iter().all(|g| matches!(g.classes, Some((_, true)))),
            chain_covers: groups.iter().flat_map(|g| &g.chains).copied().collect(),
            ..plan.frequencies(&maxima)
        };
        let tasks = groups.iter().map(|g| g.partitions).sum::<usize>();
        let stats = DetectStats {
            tasks: u32::try_from(tasks).unwrap_or(u32::MAX),
            edges: graph.edge_count(),
            fingerprint: None,
            seconds,
            received,
        };
        Ok((graph, rows, frequencies, stats))
    }

    /// Reads the result of `job`: every partition at once, each fetched by
    /// its own task a few batches ahead; first their summaries (the
    /// per-group totals, the row count), then their pieces assembled into
    /// the graph off the runtime's workers (module `assemble`).
    async fn receive(
        &self,
        scheduler: &mut Scheduler,
        job: &BallistaJobId,
        plan: &JobPlan,
        memory: u64,
        threads: usize,
        seconds: &mut DetectSeconds,
    ) -> Result<(Assembled, Vec<GroupTotals>, u64), EngineError> {
        let waiting = Instant::now();
        let streams = scheduler.partitions(job).await.map_err(remote)?;
        seconds.job = waiting.elapsed().as_secs_f64();
        let fetching = Instant::now();
        let mut partitions: Vec<_> = streams.into_iter().map(prefetch).collect();
        let mut groups = vec![GroupTotals::default(); plan.groups()];
        let mut tally = PairTally::default();
        for p in &mut partitions {
            let s = p.summary().await.map_err(remote)?;
            tally.add(&s);
            let g = groups
                .get_mut(s.group as usize)
                .ok_or_else(|| remote("a summary of an unknown group"))?;
            g.rows += u64::from(s.rows);
            g.partitions += 1;
            if let Some(max) = s.max_frequency {
                g.max_frequency = g.max_frequency.max(u64::from(max));
            }
            match (&mut g.classes, s.classes) {
                (Some((total, _)), Some((c, _))) => total.absorb(&c),
                (total @ None, some) => *total = some,
                (Some(_), None) => {}
            }
            match (g.chains.len(), s.chains.len()) {
                (_, 0) => {}
                (0, _) => g.chains = s.chains,
                (a, b) if a == b => g.chains.iter_mut().zip(&s.chains).for_each(|(t, c)| *t += c),
                _ => return Err(remote("the partitions' chain counts disagree")),
            }
        }
        seconds.fetch = fetching.elapsed().as_secs_f64();
        // Over the edge cap for sure: said before any edge is fetched, so
        // the job's work stays within what the cap allows (a partition
        // whose detection stopped at its own cap sent none).
        if let Some(cap) = plan.max_pairs.filter(|_| plan.surely_over(tally)) {
            return Err(DetectError::PairCap { cap }.into());
        }
        // Every group saw every row once: a lost or doubled partition
        // shows here rather than as a wrong graph.
        let rows = groups[0].rows;
        if groups.iter().any(|g| g.rows != rows || g.partitions == 0) {
            return Err(remote("the groups' row counts disagree: a partition is missing"));
        }
        let nodes = u32::try_from(rows).map_err(|_| remote("more than 2^32 rows"))?;
        let spill = SpillConfig { dir: self.work_dir.clone(), memory_limit: memory };
        let assembling = Instant::now();
        let assembled =
            tokio::task::spawn_blocking(move || assemble(partitions, nodes, &spill, threads))
                .await
                .map_err(remote)?
                .map_err(remote)?;
        seconds.assemble = assembling.elapsed().as_secs_f64();
        let spilled = assembled.graph.spilled_bytes();
        Ok((assembled, groups, spilled))
    }
}
