//! The coordinator's job layer: the Coordinator gRPC service in front of
//! `dpincon_engine::run_job_with`, with the table loaded on Ballista
//! executors (`dpincon_ballista::BallistaLoader`).
//!
//! The operator registers datasets ([`crate::datasets`]); a client submits
//! a job naming one, which is checked ([`crate::submission`]), admitted
//! against the queue limit and the dataset's budget (ε already spent in its
//! ledger plus ε reserved by the jobs queued or running before the charge),
//! stored ([`crate::store`]) and queued. Jobs run one at a time
//! ([`crate::runner`]). Jobs belong to the client whose token submitted
//! them: other clients get "not found".
//!
//! What a client sees of a private job: its state (queued, running,
//! succeeded, failed, cancelled) and, on failure, a public reason. Counts,
//! phases, phase times, task progress and queue positions grow with the
//! conflict graph or other jobs' running times; only non-private jobs of
//! test clusters show them (SPEC §8; the total latency remains, see the
//! README).

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
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
use crate::datasets::CoordinatorConfig;
use crate::runner::{Active, run_queue};
use crate::store::{Ending, JobStore, StoredJob};
use crate::submission::{self, Refusal, Rules, reason_text};
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
    /// A test cluster: accept `seed`, `non-private`, `brute-force` and the
    /// non-private strategy, and show their jobs' progress detail.
    pub allow_non_private: bool,
}

/// How jobs reach the Ballista cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
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
}

impl BallistaOptions {
    /// Options with the defaults of the `dpincon-coordinator` command.
    pub fn new(scheduler: impl Into<String>) -> Self {
        BallistaOptions { scheduler: scheduler.into(), partitions: 8, graph_memory: 256 << 20 }
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
    /// Serialises admission: the queue count and the budget reservation
    /// are checked and the job inserted as one step.
    admission: tokio::sync::Mutex<()>,
    queue: mpsc::UnboundedSender<Arc<Active>>,
    next_seq: AtomicU64,
    _locks: Vec<DirLock>,
}

impl Shared {
    /// Where a running job's inline constraints are written for the engine.
    /// Where jobs' edge runs and graph spill files go (anonymous files,
    /// gone with the process).
    pub fn work_dir(&self) -> PathBuf {
        self.options.config.state_dir.join("work")
    }

    pub fn constraint_path(&self, id: &str) -> PathBuf {
        self.options.config.state_dir.join("constraints").join(format!("{id}.dcs"))
    }

    /// Drops an ended job from memory (the store has it).
    pub fn forget(&self, id: &str) {
        self.active.lock().expect("active jobs poisoned").remove(id);
    }

    fn active(&self, id: &str) -> Option<Arc<Active>> {
        self.active.lock().expect("active jobs poisoned").get(id).cloned()
    }

    /// The status a client sees of a live job.
    fn live_status(&self, job: &Active) -> JobStatus {
        let full = job.status.borrow().clone();
        if !job.accepted.non_private {
            return private_view(&full);
        }
        let mut status = full;
        if status.state == JobState::Queued as i32 {
            let active = self.active.lock().expect("active jobs poisoned");
            status.queue_position = active.values().filter(|j| j.seq < job.seq).count() as u32;
        }
        status
    }

    /// The status a client sees of a stored (ended, or live) job.
    fn status_of(&self, stored: &StoredJob) -> JobStatus {
        if let Some(job) = self.active(&stored.id) {
            return self.live_status(&job);
        }
        let full = stored.detail.as_deref().and_then(|d| JobStatus::decode(d).ok());
        match full {
            Some(full) if stored.non_private => full,
            _ => {
                let mut status = JobStatus {
                    job_id: stored.id.clone(),
                    state: stored.state as i32,
                    reason: stored.reason as i32,
                    ..JobStatus::default()
                };
                status.error = match stored.state {
                    JobState::Failed if stored.non_private => stored.error.clone(),
                    JobState::Failed => reason_text(stored.reason).to_string(),
                    JobState::Cancelled => "cancelled by a client".into(),
                    _ => String::new(),
                };
                private_view(&status)
            }
        }
    }

    /// The job `id` if `client` owns it.
    fn owned(&self, id: &str, client: &str) -> Result<StoredJob, Status> {
        match self.store.get(id).map_err(internal)? {
            Some(job) if job.owner == client => Ok(job),
            _ => Err(Status::not_found(format!("no job '{id}'"))),
        }
    }

    /// Checks the queue and the budget, then stores and queues the job.
    async fn admit(
        &self,
        client: &str,
        accepted: submission::Accepted,
        recovered: Option<StoredJob>,
    ) -> Result<String, Refusal> {
        let _admission = self.admission.lock().await;
        let dataset = accepted.dataset.clone();
        let reserved: f64 = {
            let active = self.active.lock().expect("active jobs poisoned");
            let queued = active
                .values()
                .filter(|j| j.status.borrow().state == JobState::Queued as i32)
                .count();
            if recovered.is_none() && queued >= self.options.config.limits.max_queued {
                return Err(Refusal::new(
                    FailureReason::QueueFull,
                    format!("{queued} jobs are waiting; submit again later"),
                ));
            }
            active
                .values()
                .filter(|j| {
                    j.accepted.dataset.name == dataset.name && !j.charged.load(Ordering::SeqCst)
                })
                .map(|j| j.accepted.total_epsilon)
                .sum()
        };
        if accepted.total_epsilon > 0.0 {
            let need = reserved + accepted.total_epsilon;
            if let Err(e) =
                ledger::check(&dataset.ledger, &dataset.data, Some(dataset.budget_cap), need)
            {
                eprintln!(
                    "dataset {}: refusing a job of ε = {}: {e}",
                    dataset.name, accepted.total_epsilon
                );
                let text = e.to_string();
                return Err(if text.contains("cap exceeded") {
                    Refusal::new(
                        FailureReason::BudgetExhausted,
                        format!(
                            "dataset '{}' cannot fund ε = {} more within its cap {} (spent and \
                             reserved by queued jobs: see the operator)",
                            dataset.name, accepted.total_epsilon, dataset.budget_cap
                        ),
                    )
                } else {
                    Refusal::new(FailureReason::Internal, "the dataset's ledger cannot be read")
                });
            }
        }
        let id = match &recovered {
            Some(job) => job.id.clone(),
            None => {
                let id = new_job_id();
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
                };
                self.store.insert(&stored).map_err(|e| {
                    eprintln!("cannot store a job: {e}");
                    Refusal::new(FailureReason::Internal, "the job store refused the job")
                })?;
                id
            }
        };
        let seq = self.next_seq.fetch_add(1, Ordering::SeqCst);
        let job = Arc::new(Active::new(id.clone(), seq, accepted));
        self.active.lock().expect("active jobs poisoned").insert(id.clone(), job.clone());
        if self.queue.send(job).is_err() {
            return Err(Refusal::new(FailureReason::Internal, "the job runner has stopped"));
        }
        eprintln!("job {id}: queued for {client} on dataset {}", dataset.name);
        Ok(id)
    }
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
    Status::internal(reason_text(FailureReason::Internal))
}

fn is_terminal(state: i32) -> bool {
    matches!(
        JobState::try_from(state),
        Ok(JobState::Succeeded | JobState::Failed | JobState::Cancelled)
    )
}

/// A fresh job id: 64 bits from the standard library's per-process random
/// hash keys and the time (ids are names, not secrets).
fn new_job_id() -> String {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    format!("{:016x}", h.finish())
}

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
            admission: tokio::sync::Mutex::new(()),
            queue,
            next_seq: AtomicU64::new(0),
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
        let o = &self.shared.options;
        Rules {
            datasets: &o.config.datasets,
            limits: &o.config.limits,
            allow_non_private: o.allow_non_private,
        }
    }
}

/// Queues a job a previous process accepted, checked again against the
/// configuration now (a dataset may be gone); fails it if refused.
async fn resume(shared: &Arc<Shared>, job: StoredJob) {
    let o = &shared.options;
    let rules = Rules {
        datasets: &o.config.datasets,
        limits: &o.config.limits,
        allow_non_private: o.allow_non_private,
    };
    let outcome = match submission::check(&job.request, ConfigFormat::Json, rules) {
        Ok(accepted) => shared.admit(&job.owner.clone(), accepted, Some(job.clone())).await,
        Err(refusal) => Err(refusal),
    };
    match outcome {
        Ok(id) => eprintln!("job {id}: resumed after a restart"),
        Err(refusal) => {
            let error = format!("not resumed: {}", refusal.detail);
            eprintln!("job {}: {error}", job.id);
            let end = Ending::plain(JobState::Failed, refusal.reason, &error);
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
    /// private job that is its state only, so the stream's timing shows the
    /// state changes and nothing of detection's progress.
    async fn watch_job(
        &self,
        request: Request<JobRef>,
    ) -> Result<Response<Self::WatchJobStream>, Status> {
        let client = client_of(&request)?;
        let stored = self.shared.owned(&request.into_inner().job_id, &client)?;
        let (tx, rx) = mpsc::channel(16);
        let shared = self.shared.clone();
        tokio::spawn(async move {
            let Some(job) = shared.active(&stored.id) else {
                let _ = tx.send(Ok(shared.status_of(&stored))).await;
                return;
            };
            let mut changes = job.status.subscribe();
            let mut last: Option<JobStatus> = None;
            loop {
                changes.borrow_and_update();
                let status = shared.live_status(&job);
                let terminal = is_terminal(status.state);
                if last.as_ref() != Some(&status) {
                    if tx.send(Ok(status.clone())).await.is_err() {
                        return;
                    }
                    last = Some(status);
                }
                if terminal || changes.changed().await.is_err() {
                    return;
                }
            }
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    async fn get_result(&self, request: Request<JobRef>) -> Result<Response<JobResult>, Status> {
        let client = client_of(&request)?;
        let job_id = request.into_inner().job_id;
        let job = self.shared.owned(&job_id, &client)?;
        let status = self.shared.status_of(&job);
        match job.state {
            JobState::Succeeded => {
                Ok(Response::new(JobResult { job_id, report_json: job.report.unwrap_or_default() }))
            }
            JobState::Failed => {
                Err(Status::failed_precondition(format!("job {job_id} failed: {}", status.error)))
            }
            JobState::Cancelled => {
                Err(Status::failed_precondition(format!("job {job_id} was cancelled")))
            }
            _ => Err(Status::failed_precondition(format!("job {job_id} has not finished"))),
        }
    }

    async fn cancel_job(&self, request: Request<JobRef>) -> Result<Response<JobStatus>, Status> {
        let client = client_of(&request)?;
        let stored = self.shared.owned(&request.into_inner().job_id, &client)?;
        if let Some(job) = self.shared.active(&stored.id) {
            job.cancel.send_replace(true);
            // A queued job ends here; a running one in its runner, which
            // drops the job (and its in-flight tasks) at its next await.
            if job.status.borrow().state == JobState::Queued as i32 {
                let end = Ending::plain(
                    JobState::Cancelled,
                    FailureReason::Unspecified,
                    "cancelled by a client",
                );
                if self.shared.store.finish(&job.id, &end).map_err(internal)? {
                    job.status.send_modify(|s| {
                        s.state = JobState::Cancelled as i32;
                        s.error = "cancelled by a client".into();
                    });
                    self.shared.forget(&job.id);
                }
            }
            return Ok(Response::new(self.shared.live_status(&job)));
        }
        Ok(Response::new(self.shared.status_of(&stored)))
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
