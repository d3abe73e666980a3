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
//! the public configuration costs nothing. Up to `[limits] slots` jobs
//! run at once, each in the slot it booked at acceptance
//! ([`crate::schedule`], `runner`). Jobs belong to the client whose token
//! submitted them: other clients get "not found".
//!
//! What a client sees of a job: `queued` until its release time, then how
//! it ended (succeeded with its report, failed with a public reason, or
//! cancelled by that client). On a fixed-time coordinator every job's
//! release time is its slot's end, fixed at acceptance from the
//! acceptance times and public settings only: the timeline is the same
//! whatever the rows of any job (the cluster README, "What a client
//! observes"). Counts are shown only for non-private jobs of test
//! datasets, phase times only where jobs end when done.

use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use dpincon_engine::ledger::{self};
use dpincon_proto::MAX_MESSAGE_BYTES;
use dpincon_proto::v1::coordinator_server::CoordinatorServer;
use dpincon_proto::v1::{ConfigFormat, JobState};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Server;
use tonic::transport::server::TcpIncoming;

use crate::ClusterError;
use crate::auth::{ClientTokens, RequireClient};
use crate::datasets::{CoordinatorConfig, ReleaseMode};
use crate::schedule::Lanes;
use crate::store::{Ending, JobStore, StoredJob};
use crate::submission::{self, Rules};
use crate::tls::ServerTls;

mod active;
mod metrics;
mod rpc;
mod runner;
mod shared;

use runner::run_queue;

pub use crate::job_process::BallistaOptions;
pub use metrics::CONTENT_TYPE as METRICS_CONTENT_TYPE;

pub(crate) use shared::Shared;

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

/// Jobs listed by `ListJobs` at most (the latest).
const LIST_LIMIT: usize = 1000;
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
        std::fs::create_dir_all(config.state_dir.join("work"))
            .map_err(|source| ClusterError::Io { path: config.state_dir.clone(), source })?;
        let locks = config
            .owned_dirs()
            .iter()
            .map(|d| ledger::lock_dir(d).map_err(|e| ClusterError::Ledger(Box::new(e))))
            .collect::<Result<Vec<_>, _>>()?;
        let store = JobStore::open(&config.state_dir)?;
        let (interrupted, queued) = store.recover()?;
        for id in &interrupted {
            eprintln!("job {id}: failed (interrupted: the coordinator stopped while it ran)");
        }
        // How the operator is told what the schedule allows (README: how to
        // size a slot from `dpincon_slot_use`).
        let slots = config.limits.slots;
        for d in config.datasets.values() {
            let per_hour = 3600.0 / d.job_deadline.as_secs_f64().max(1.0) * slots as f64;
            eprintln!(
                "dataset {}: {} slots of {:?}, {slots} at once (at most {per_hour:.0} jobs an hour)",
                d.name,
                config.release.name(),
                d.job_deadline,
            );
            if config.release == ReleaseMode::FixedTime && !d.bounds_work() {
                eprintln!(
                    "dataset {}: no max-edges (accept-deadline-channel, or test data), so no \
                     public setting bounds a job's work: `deadline exceeded` can tell whether \
                     this table's graph is large (cluster README, \"Work bounded by public \
                     settings\")",
                    d.name
                );
            }
        }
        let (queue, rx) = mpsc::unbounded_channel();
        let lanes = Lanes::new(options.config.limits.slots);
        let shared = Arc::new(Shared {
            options,
            store,
            active: Mutex::default(),
            admission: tokio::sync::Mutex::new(lanes),
            queue,
            next_seq: AtomicU64::new(0),
            slot_use: Mutex::default(),
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
    /// per dataset, deadline overruns and how much of their slots jobs
    /// used (a histogram) per dataset. States and reasons as clients see
    /// them; the slot use is the operator's aggregate for sizing
    /// `job-deadline`, never per job. For a port clients do not reach,
    /// served as [`METRICS_CONTENT_TYPE`].
    pub fn metrics(&self) -> String {
        metrics::render(&self.shared)
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
