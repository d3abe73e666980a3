//! The coordinator's job layer: the Coordinator gRPC service in front of
//! the engine, with each job run in a process of its own
//! ([`crate::job_process`]) that loads its table on Ballista executors.
//!
//! The operator registers datasets ([`crate::datasets`]); a client submits
//! a job naming one, which is checked ([`crate::submission`]) and admitted
//! against the queue limits, then **charged** in the dataset's ledger,
//! given a time slot, stored ([`crate::store`]) and queued, in that order,
//! before any row is read: a cancel, a failure, a timeout or a crash after
//! acceptance keeps the charge; only a refusal decided from the request and
//! the public configuration costs nothing. Jobs run one at a time
//! ([`crate::runner`]). Jobs belong to the client whose token submitted
//! them: other clients get "not found".
//!
//! What a client sees of a private job: `queued` until its release time,
//! then how it ended (succeeded with its report, failed with a public
//! reason, or cancelled by that client). On a fixed-time dataset the
//! release time is its slot's end, fixed at acceptance from the
//! acceptance time, the slots before it and the dataset's deadline, all
//! public: the timeline is the same whatever the rows (issue 26). Counts,
//! phases and phase times are shown only for non-private jobs of test
//! datasets.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use dpincon_engine::ledger::{self, DirLock};
use dpincon_proto::MAX_MESSAGE_BYTES;
use dpincon_proto::v1::coordinator_server::{Coordinator, CoordinatorServer};
use dpincon_proto::v1::{
    ConfigFormat, FailureReason, JobRef, JobResult, JobState, JobStatus, ListJobsRequest,
    ListJobsResponse, SubmitJobRequest, SubmitJobResponse,
};
use prost::Message;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Server;
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status};

use crate::ClusterError;
use crate::auth::{ClientName, ClientTokens, RequireClient};
use crate::datasets::{CoordinatorConfig, ReleaseMode};
use crate::runner::{Active, run_queue, sleep_until_ms};
use crate::store::{Ending, JobStore, Slot, StoredJob, now_ms};
use crate::submission::{self, Refusal, Rules};
use crate::tls::ServerTls;

/// How the coordinator runs.
#[derive(Debug, Clone)]
pub struct CoordinatorOptions {
    /// The operator's datasets, limits and state directory.
    pub config: CoordinatorConfig,
    /// How jobs reach the Ballista cluster.
    pub ballista: BallistaOptions,
    /// The clients' tokens.
    pub clients: ClientTokens,
    /// Write private jobs' figures and engine messages (edge counts,
    /// fingerprints, phase times, errors quoting cells) to the log.
    pub log_private_values: bool,
    /// The program that runs one job (`PROGRAM run-job`): the
    /// `dpincon-coordinator` binary.
    pub job_program: PathBuf,
}

/// How jobs reach the Ballista cluster.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct BallistaOptions {
    /// The scheduler, `http://host:port`.
    pub scheduler: String,
    /// Hash partitions per constraint group (and Parquet scan partitions):
    /// more than the executors' slots balances load and makes a lost
    /// task cheaper to rerun.
    pub partitions: usize,
    /// Graph memory before it spills, when the dataset sets no
    /// `memory-limit` (bytes).
    pub graph_memory: u64,
    /// Mutual TLS to the scheduler and executors (`None`: plaintext, tests).
    pub tls: Option<dpincon_ballista::tls::ClusterTlsFiles>,
}

impl BallistaOptions {
    /// Options with the defaults of the `dpincon-coordinator` command.
    pub fn new(scheduler: impl Into<String>) -> Self {
        BallistaOptions {
            scheduler: scheduler.into(),
            partitions: dpincon_ballista::DEFAULT_PARTITIONS,
            graph_memory: dpincon_ballista::DEFAULT_GRAPH_MEMORY,
            tls: None,
        }
    }
}

/// Jobs listed by `ListJobs` at most (the latest).
const LIST_LIMIT: usize = 1000;

/// State shared by the RPC handlers and the job runner.
#[derive(Debug)]
pub(crate) struct Shared {
    pub options: CoordinatorOptions,
    pub store: JobStore,
    /// Queued and running jobs; ended ones are only in the store.
    active: Mutex<HashMap<String, Arc<Active>>>,
    /// Serialises admission (queue counts, the charge, the slot, the
    /// insert as one step); holds the end of the last fixed-time slot.
    admission: tokio::sync::Mutex<i64>,
    queue: mpsc::UnboundedSender<Arc<Active>>,
    next_seq: AtomicU64,
    /// Jobs stopped at their deadline, per dataset (the operator's log).
    pub overruns: Mutex<HashMap<String, u64>>,
    _locks: Vec<DirLock>,
}

impl Shared {
    /// Where jobs' graph spill files go (anonymous files,
    /// gone with the process).
    pub fn work_dir(&self) -> PathBuf {
        self.options.config.state_dir.join("work")
    }

    /// Where a job's inline constraints are written for its process.
    pub fn constraint_path(&self, id: &str) -> PathBuf {
        self.options.config.state_dir.join("constraints").join(format!("{id}.dcs"))
    }

    /// What submissions are checked against.
    fn rules(&self) -> Rules<'_> {
        Rules { datasets: &self.options.config.datasets, limits: &self.options.config.limits }
    }

    /// Drops an ended job from memory (the store has it).
    pub fn forget(&self, id: &str) {
        self.active.lock().expect("active jobs poisoned").remove(id);
    }

    fn active(&self, id: &str) -> Option<Arc<Active>> {
        self.active.lock().expect("active jobs poisoned").get(id).cloned()
    }

    /// The job's full status: live while it is active, else from the store.
    fn full_status(&self, stored: &StoredJob) -> JobStatus {
        if let Some(job) = self.active(&stored.id) {
            let mut status = job.status.borrow().clone();
            if status.state == JobState::Queued as i32 {
                let active = self.active.lock().expect("active jobs poisoned");
                status.queue_position =
                    active.values().filter(|j| j.seq < job.seq && j.is_queued()).count() as u32;
            }
            return status;
        }
        if let Some(full) = stored.detail.as_deref().and_then(|d| JobStatus::decode(d).ok()) {
            return full;
        }
        JobStatus {
            job_id: stored.id.clone(),
            state: stored.state as i32,
            reason: stored.reason as i32,
            error: match stored.state {
                JobState::Failed => stored.error.clone(),
                JobState::Cancelled => "cancelled by a client".into(),
                _ => String::new(),
            },
            ..JobStatus::default()
        }
    }

    /// The status a client sees: everything for a non-private job of a test
    /// dataset; for a private job its state and public reason, and
    /// `queued` until its release time.
    fn status_of(&self, stored: &StoredJob) -> JobStatus {
        let full = self.full_status(stored);
        if stored.non_private {
            return full;
        }
        client_view(&full, stored.slot, now_ms())
    }

    /// The job `id` if `client` owns it.
    fn owned(&self, id: &str, client: &str) -> Result<StoredJob, Status> {
        match self.store.get(id).map_err(internal)? {
            Some(job) if job.owner == client => Ok(job),
            _ => Err(Status::not_found(format!("no job '{id}'"))),
        }
    }

    /// Checks the queue limits, charges the dataset's ledger, fixes the
    /// job's slot, then stores and queues it. A recovered job (accepted by
    /// a previous process) was charged then: it only gets a new slot.
    async fn admit(
        &self,
        client: &str,
        accepted: submission::Accepted,
        recovered: Option<StoredJob>,
    ) -> Result<String, Refusal> {
        let mut fixed_until = self.admission.lock().await;
        let dataset = accepted.dataset.clone();
        let limits = &self.options.config.limits;
        let busy_until = {
            let active = self.active.lock().expect("active jobs poisoned");
            let queued = active.values().filter(|j| j.is_queued());
            let (all, mine) =
                queued.fold((0, 0), |(a, m), j| (a + 1, m + usize::from(j.owner == client)));
            if recovered.is_none() && all >= limits.max_queued {
                return Err(Refusal::new(
                    FailureReason::QueueFull,
                    format!("{all} jobs are waiting; submit again later"),
                ));
            }
            if recovered.is_none() && mine >= limits.max_queued_per_client {
                return Err(Refusal::new(
                    FailureReason::QueueFull,
                    format!(
                        "{mine} of your jobs are waiting (the limit per client); submit again later"
                    ),
                ));
            }
            // Jobs whose end shows as soon as it comes hold their whole
            // slot until they end: their own timing is public by choice.
            active.values().filter(|j| !j.slot.fixed).map(|j| j.slot.end_ms).max().unwrap_or(0)
        };
        let start_ms = now_ms().max(*fixed_until).max(busy_until);
        let deadline_ms = i64::try_from(dataset.job_deadline.as_millis()).unwrap_or(i64::MAX);
        let slot = Slot {
            start_ms,
            end_ms: start_ms.saturating_add(deadline_ms),
            fixed: !accepted.non_private && dataset.release == ReleaseMode::FixedTime,
        };
        let (id, prepaid) = match &recovered {
            Some(job) => {
                self.store.reslot(&job.id, slot).map_err(|e| {
                    eprintln!("job {}: cannot give it a new slot: {e}", job.id);
                    Refusal::new(FailureReason::Internal, "the job store refused the job")
                })?;
                (job.id.clone(), job.prepaid.clone())
            }
            None => {
                let id = dpincon_engine::new_job_id().map_err(|e| {
                    eprintln!("cannot make a job id: {e}");
                    Refusal::new(FailureReason::Internal, "no job id")
                })?;
                // The charge comes first: from here on every outcome is paid.
                let prepaid = self.charge(&id, &accepted)?;
                let stored = StoredJob {
                    id: id.clone(),
                    owner: client.to_string(),
                    dataset: dataset.name.clone(),
                    request: accepted.request.clone(),
                    non_private: accepted.non_private,
                    state: JobState::Queued,
                    reason: FailureReason::Unspecified,
                    error: String::new(),
                    report: None,
                    detail: None,
                    slot,
                    prepaid: prepaid.clone(),
                };
                self.store.insert(&stored).map_err(|e| {
                    eprintln!("job {id}: charged but cannot be stored: {e}");
                    Refusal::new(FailureReason::Internal, "the job store refused the job")
                })?;
                (id, prepaid)
            }
        };
        if slot.fixed {
            *fixed_until = slot.end_ms;
        }
        let seq = self.next_seq.fetch_add(1, Ordering::SeqCst);
        let job =
            Arc::new(Active::new(id.clone(), client.to_string(), seq, accepted, slot, prepaid));
        self.active.lock().expect("active jobs poisoned").insert(id.clone(), job.clone());
        if self.queue.send(job).is_err() {
            return Err(Refusal::new(FailureReason::Internal, "the job runner has stopped"));
        }
        eprintln!("job {id}: queued for {client} on dataset {}", dataset.name);
        Ok(id)
    }

    /// Records the job's ε in its dataset's ledger (fsynced) or refuses it
    /// (over the cap: nothing is recorded).
    fn charge(
        &self,
        id: &str,
        accepted: &submission::Accepted,
    ) -> Result<dpincon_engine::Prepaid, Refusal> {
        let dataset = &accepted.dataset;
        let charges = accepted.charges();
        if charges.is_empty() {
            return Ok(dpincon_engine::Prepaid { job_id: id.to_string(), ledger: None });
        }
        let cap = Some(dataset.budget_cap);
        match ledger::charge(&dataset.ledger, &dataset.data, cap, id, &charges) {
            Ok(state) => {
                Ok(dpincon_engine::Prepaid { job_id: id.to_string(), ledger: Some(state) })
            }
            Err(e) => {
                eprintln!(
                    "dataset {}: refusing a job of ε = {}: {e}",
                    dataset.name, accepted.total_epsilon
                );
                Err(if e.to_string().contains("cap exceeded") {
                    Refusal::new(
                        FailureReason::BudgetExhausted,
                        format!(
                            "dataset '{}' cannot fund ε = {} more within its cap {} (see the \
                             operator)",
                            dataset.name, accepted.total_epsilon, dataset.budget_cap
                        ),
                    )
                } else {
                    Refusal::new(FailureReason::Internal, "the dataset's ledger cannot be read")
                })
            }
        }
    }
}

/// A private job's status as its client sees it at `now_ms`: how it ended
/// once that is released (a cancel at once: the client's own act), else
/// `queued`; never `running`, counts or phases.
fn client_view(full: &JobStatus, slot: Slot, now_ms: i64) -> JobStatus {
    let ended = match JobState::try_from(full.state) {
        Ok(JobState::Cancelled) => true,
        Ok(JobState::Succeeded | JobState::Failed) => slot.released(now_ms),
        _ => false,
    };
    let release_at_unix_ms = if slot.fixed { slot.end_ms.max(0) as u64 } else { 0 };
    if !ended {
        return JobStatus {
            job_id: full.job_id.clone(),
            state: JobState::Queued as i32,
            release_at_unix_ms,
            ..JobStatus::default()
        };
    }
    JobStatus { release_at_unix_ms, ..private_view(full) }
}

/// Only what a private job's client may see: id, state, public reason.
fn private_view(full: &JobStatus) -> JobStatus {
    JobStatus {
        job_id: full.job_id.clone(),
        state: full.state,
        reason: full.reason,
        error: full.error.clone(),
        ..JobStatus::default()
    }
}

fn internal(e: ClusterError) -> Status {
    eprintln!("error: {e}");
    Status::internal(FailureReason::Internal.text())
}

fn is_terminal(state: i32) -> bool {
    matches!(
        JobState::try_from(state),
        Ok(JobState::Succeeded | JobState::Failed | JobState::Cancelled)
    )
}

/// A fresh job id: 64 bits from the standard library's per-process random
/// hash keys and the time (ids are names, not secrets).
fn client_of<T>(request: &Request<T>) -> Result<String, Status> {
    request
        .extensions()
        .get::<ClientName>()
        .map(|c| c.0.clone())
        .ok_or_else(|| Status::unauthenticated("no client identity"))
}

/// The Coordinator gRPC service.
#[derive(Debug, Clone)]
pub struct CoordinatorService {
    shared: Arc<Shared>,
}

impl CoordinatorService {
    /// A coordinator: locks its directories (a second coordinator on the
    /// same state or ledger directory refuses to start), opens the job
    /// store, fails the jobs a previous process left running, queues the
    /// ones it left queued, and starts the job runner.
    pub async fn start(options: CoordinatorOptions) -> Result<Self, ClusterError> {
        let config = &options.config;
        for dir in ["constraints", "work"] {
            std::fs::create_dir_all(config.state_dir.join(dir))
                .map_err(|source| ClusterError::Io { path: config.state_dir.clone(), source })?;
        }
        let locks = config
            .owned_dirs()
            .iter()
            .map(|d| ledger::lock_dir(d).map_err(|e| ClusterError::Config(e.to_string())))
            .collect::<Result<Vec<_>, _>>()?;
        let store = JobStore::open(&config.state_dir)?;
        let (interrupted, queued) = store.recover()?;
        for id in &interrupted {
            eprintln!("job {id}: failed (interrupted: the coordinator stopped while it ran)");
        }
        let (queue, rx) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            options,
            store,
            active: Mutex::default(),
            admission: tokio::sync::Mutex::new(0),
            queue,
            next_seq: AtomicU64::new(0),
            overruns: Mutex::default(),
            _locks: locks,
        });
        for job in queued {
            resume(&shared, job).await;
        }
        let runner = shared.clone();
        std::thread::Builder::new()
            .name("dpincon-jobs".into())
            .spawn(move || run_queue(rx, runner))
            .map_err(|e| ClusterError::Config(format!("cannot start the job runner: {e}")))?;
        Ok(CoordinatorService { shared })
    }

    fn rules(&self) -> Rules<'_> {
        self.shared.rules()
    }
}

impl CoordinatorService {
    /// The operator's metrics, in Prometheus's text format: stored jobs by
    /// state and public reason, jobs waiting, ε spent, the cap and ε left
    /// per dataset, deadline overruns per dataset. Public values only (the
    /// same reasons a client is told), for a port clients do not reach.
    pub fn metrics(&self) -> String {
        use std::fmt::Write as _;
        let shared = &self.shared;
        let mut out = String::new();
        out += "# HELP dpincon_jobs Jobs by state and public failure reason, as their \
                clients see them (a private job is queued until its release).\n";
        out += "# TYPE dpincon_jobs gauge\n";
        for (state, reason, count) in shared.store.counts(now_ms()).unwrap_or_default() {
            let state = dpincon_proto::state_name(state as i32);
            let reason = dpincon_proto::reason_name(reason as i32).unwrap_or("");
            let _ = writeln!(out, "dpincon_jobs{{state=\"{state}\",reason=\"{reason}\"}} {count}");
        }
        let waiting = {
            let active = shared.active.lock().expect("active jobs poisoned");
            active.values().filter(|j| j.is_queued()).count()
        };
        out += "# HELP dpincon_queue_length Jobs accepted and waiting for their slot.\n";
        out += "# TYPE dpincon_queue_length gauge\n";
        let _ = writeln!(out, "dpincon_queue_length {waiting}");
        out += "# HELP dpincon_epsilon_spent Budget charged in each dataset's ledger.\n";
        out += "# TYPE dpincon_epsilon_spent gauge\n";
        out += "# HELP dpincon_epsilon_cap Each dataset's budget cap.\n";
        out += "# TYPE dpincon_epsilon_cap gauge\n";
        out += "# HELP dpincon_epsilon_left Budget each dataset may still spend (cap - spent).\n";
        out += "# TYPE dpincon_epsilon_left gauge\n";
        for d in shared.options.config.datasets.values() {
            let spent = ledger::spent(&d.ledger).map_or(0.0, |(spent, _)| spent);
            let left = (d.budget_cap - spent).max(0.0);
            let _ = writeln!(out, "dpincon_epsilon_spent{{dataset=\"{}\"}} {spent}", d.name);
            let _ = writeln!(out, "dpincon_epsilon_cap{{dataset=\"{}\"}} {}", d.name, d.budget_cap);
            let _ = writeln!(out, "dpincon_epsilon_left{{dataset=\"{}\"}} {left}", d.name);
        }
        out += "# HELP dpincon_deadline_overruns_total Jobs stopped at their slot's end since start.\n";
        out += "# TYPE dpincon_deadline_overruns_total counter\n";
        let overruns = shared.overruns.lock().expect("overruns poisoned");
        for d in shared.options.config.datasets.keys() {
            let n = overruns.get(d).copied().unwrap_or(0);
            let _ = writeln!(out, "dpincon_deadline_overruns_total{{dataset=\"{d}\"}} {n}");
        }
        out
    }
}

/// Queues a job a previous process accepted (and charged) in a new slot,
/// checked again against the configuration now (a dataset may be gone);
/// fails it if refused.
async fn resume(shared: &Arc<Shared>, job: StoredJob) {
    let outcome = match submission::check(&job.request, ConfigFormat::Json, shared.rules()) {
        Ok(accepted) => shared.admit(&job.owner.clone(), accepted, Some(job.clone())).await,
        Err(refusal) => Err(refusal),
    };
    match outcome {
        Ok(id) => eprintln!("job {id}: resumed after a restart"),
        Err(refusal) => {
            eprintln!("job {}: not resumed (its charge stays): {}", job.id, refusal.detail);
            let error = refusal.reason.text();
            let end = Ending::plain(JobState::Failed, refusal.reason, error);
            if let Err(e) = shared.store.finish(&job.id, &end) {
                eprintln!("job {}: {e}", job.id);
            }
            shared.forget(&job.id);
        }
    }
}

#[tonic::async_trait]
impl Coordinator for CoordinatorService {
    async fn submit_job(
        &self,
        request: Request<SubmitJobRequest>,
    ) -> Result<Response<SubmitJobResponse>, Status> {
        let client = client_of(&request)?;
        let request = request.into_inner();
        let format = ConfigFormat::try_from(request.format)
            .map_err(|_| Status::invalid_argument("unknown config format"))?;
        let accepted =
            submission::check(&request.config, format, self.rules()).map_err(|r| r.status())?;
        let id = self.shared.admit(&client, accepted, None).await.map_err(|r| r.status())?;
        Ok(Response::new(SubmitJobResponse { job_id: id }))
    }

    async fn get_job(&self, request: Request<JobRef>) -> Result<Response<JobStatus>, Status> {
        let client = client_of(&request)?;
        let job = self.shared.owned(&request.into_inner().job_id, &client)?;
        Ok(Response::new(self.shared.status_of(&job)))
    }

    type WatchJobStream = ReceiverStream<Result<JobStatus, Status>>;

    /// Streams the client's view of the job each time it changes: for a
    /// private job that is `queued`, then its end at its release time, so
    /// the stream's timing shows nothing of detection's progress.
    async fn watch_job(
        &self,
        request: Request<JobRef>,
    ) -> Result<Response<Self::WatchJobStream>, Status> {
        let client = client_of(&request)?;
        let stored = self.shared.owned(&request.into_inner().job_id, &client)?;
        let (tx, rx) = mpsc::channel(16);
        let shared = self.shared.clone();
        tokio::spawn(async move {
            let mut changes = shared.active(&stored.id).map(|j| j.status.subscribe());
            let mut last: Option<JobStatus> = None;
            loop {
                if let Some(c) = changes.as_mut() {
                    c.borrow_and_update();
                }
                let Ok(Some(now)) = shared.store.get(&stored.id) else { return };
                let status = shared.status_of(&now);
                if last.as_ref() != Some(&status) {
                    if tx.send(Ok(status.clone())).await.is_err() {
                        return;
                    }
                    last = Some(status.clone());
                }
                if is_terminal(status.state) {
                    return;
                }
                // Wake on a change of the live job, or at the release time.
                let release = (now.slot.fixed && !now.non_private).then_some(now.slot.end_ms);
                tokio::select! {
                    changed = async {
                        match changes.as_mut() {
                            Some(c) => c.changed().await.is_ok(),
                            None => std::future::pending().await,
                        }
                    } => if !changed { changes = None },
                    _ = async {
                        match release {
                            Some(at) if at > now_ms() => sleep_until_ms(at).await,
                            // Released or unfixed: the job's own end wakes us;
                            // past the release but not yet recorded: look again soon.
                            Some(_) => tokio::time::sleep(std::time::Duration::from_millis(5)).await,
                            None => std::future::pending().await,
                        }
                    } => {}
                }
            }
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    async fn get_result(&self, request: Request<JobRef>) -> Result<Response<JobResult>, Status> {
        let client = client_of(&request)?;
        let job_id = request.into_inner().job_id;
        let job = self.shared.owned(&job_id, &client)?;
        // What the client's view says, not the store: a private job's end is
        // not there before its release time.
        let status = self.shared.status_of(&job);
        match JobState::try_from(status.state) {
            Ok(JobState::Succeeded) => {
                Ok(Response::new(JobResult { job_id, report_json: job.report.unwrap_or_default() }))
            }
            Ok(JobState::Failed) => {
                Err(Status::failed_precondition(format!("job {job_id} failed: {}", status.error)))
            }
            Ok(JobState::Cancelled) => {
                Err(Status::failed_precondition(format!("job {job_id} was cancelled")))
            }
            _ => Err(Status::failed_precondition(format!("job {job_id} has not finished"))),
        }
    }

    /// Cancels a job whose end its client cannot see yet: its process is
    /// stopped, its charge stays (it was made at acceptance).
    async fn cancel_job(&self, request: Request<JobRef>) -> Result<Response<JobStatus>, Status> {
        let client = client_of(&request)?;
        let stored = self.shared.owned(&request.into_inner().job_id, &client)?;
        let cancelled = self.shared.store.cancel(&stored.id, now_ms()).map_err(internal)?;
        if let Some(job) = self.shared.active(&stored.id) {
            job.cancel.send_replace(true);
            if cancelled {
                job.status.send_modify(|s| {
                    s.state = JobState::Cancelled as i32;
                    s.error = "cancelled by a client".into();
                });
            }
        }
        if cancelled {
            eprintln!("job {}: cancelled by {client} (charged)", stored.id);
        }
        let now = self.shared.owned(&stored.id, &client)?;
        Ok(Response::new(self.shared.status_of(&now)))
    }

    async fn list_jobs(
        &self,
        request: Request<ListJobsRequest>,
    ) -> Result<Response<ListJobsResponse>, Status> {
        let client = client_of(&request)?;
        let jobs = self.shared.store.list(&client, LIST_LIMIT).map_err(internal)?;
        let jobs = jobs.iter().map(|j| self.shared.status_of(j)).collect();
        Ok(Response::new(ListJobsResponse { jobs }))
    }
}

/// Serves `service` on `listener` until `shutdown` resolves.
pub async fn serve(
    listener: TcpListener,
    service: CoordinatorService,
    tls: Option<&ServerTls>,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ClusterError> {
    let clients = service.shared.options.clients.clone();
    // A request is a small job: its constraint text and a few options. A
    // client cannot make the coordinator decode more (reports, sent back,
    // may be large).
    let max_request = service.shared.options.config.limits.max_constraint_bytes + (64 << 10);
    let service = CoordinatorServer::new(service)
        .max_decoding_message_size(max_request)
        .max_encoding_message_size(MAX_MESSAGE_BYTES);
    let mut server = Server::builder();
    if let Some(tls) = tls {
        server = server.tls_config(tls.config())?;
    }
    server
        .add_service(InterceptedService::new(service, RequireClient::new(clients)))
        .serve_with_incoming_shutdown(
            TcpIncoming::from(listener).with_nodelay(Some(true)),
            shutdown,
        )
        .await?;
    Ok(())
}
