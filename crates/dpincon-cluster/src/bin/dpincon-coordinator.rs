//! `dpincon-coordinator`: accepts jobs on the operator's datasets and runs
//! them on gRPC workers (see the crate docs).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use dpincon_cluster::auth::{ClientTokens, Token, WORKER_TOKEN_ENV};
use dpincon_cluster::coordinator::{CoordinatorOptions, CoordinatorService, serve};
use dpincon_cluster::datasets::CoordinatorConfig;
use dpincon_cluster::dispatch::{DispatchOptions, WorkerSource};
use dpincon_cluster::server::{ServerSecurity, bind_announced, exit_code};
use dpincon_cluster::tls::ClientTls;
use dpincon_cluster::{ClusterError, shutdown_signal};

/// Accepts dpincon jobs on registered datasets and runs their detection on
/// workers.
///
/// Clients authenticate with one of the tokens of --client-tokens; the
/// coordinator authenticates to workers with the worker token
/// (--worker-token-file or DPINCON_WORKER_TOKEN) and, with
/// --tls-client-cert, a client certificate. Prints `listening on ADDR` on
/// its first line of output once it serves.
#[derive(Debug, Parser)]
#[command(name = "dpincon-coordinator", version, about)]
struct Args {
    /// The operator's configuration (TOML): state directory, limits and
    /// `[datasets.NAME]` tables (see the README).
    #[arg(long)]
    config: PathBuf,
    /// Clients' tokens, `NAME TOKEN` per line (delete a line and restart to
    /// revoke a client).
    #[arg(long)]
    client_tokens: PathBuf,
    /// Address to serve on (port 0 picks a free port).
    #[arg(long, default_value = "0.0.0.0:50050")]
    listen: String,
    /// Worker URLs, comma-separated (http://host:port, or https:// with --tls-ca).
    #[arg(
        long,
        value_delimiter = ',',
        required_unless_present = "workers_dns",
        conflicts_with = "workers_dns"
    )]
    workers: Vec<String>,
    /// A DNS name and port whose addresses are the workers, resolved when
    /// each job starts (a Kubernetes headless service).
    #[arg(long)]
    workers_dns: Option<String>,
    /// File holding the coordinator↔worker token (else $DPINCON_WORKER_TOKEN).
    #[arg(long)]
    worker_token_file: Option<PathBuf>,
    #[command(flatten)]
    security: ServerSecurity,
    /// CA certificate (PEM) the workers' certificates are checked against.
    #[arg(long)]
    tls_ca: Option<PathBuf>,
    /// Name the workers' certificates must carry (default: the URL's host,
    /// or the --workers-dns name).
    #[arg(long)]
    tls_domain: Option<String>,
    /// Client certificate (PEM) presented to workers that require one (mTLS).
    #[arg(long, requires_all = ["tls_client_key", "tls_ca"])]
    tls_client_cert: Option<PathBuf>,
    /// Its private key (PEM).
    #[arg(long, requires = "tls_client_cert")]
    tls_client_key: Option<PathBuf>,
    /// TEST CLUSTERS ONLY: accept jobs asking for exact, NON-PRIVATE values
    /// or a fixed seed (non-private, seed, brute-force, strategy
    /// baseline-truemax), and show their progress. Off by default.
    #[arg(long)]
    allow_non_private: bool,
    /// Seconds before a task attempt is abandoned and retried elsewhere.
    #[arg(long, default_value_t = 600)]
    task_timeout_secs: u64,
    /// Milliseconds between worker heartbeats during a job.
    #[arg(long, default_value_t = 2000)]
    heartbeat_ms: u64,
    /// Partition tasks per constraint and worker.
    #[arg(long, default_value_t = 4)]
    partitions_per_worker: usize,
}

async fn run(args: Args) -> Result<(), ClusterError> {
    let tls = args.security.load()?;
    let config = CoordinatorConfig::load(&args.config)?;
    let clients = ClientTokens::load(&args.client_tokens)?;
    let worker_token = Token::load_from(args.worker_token_file.as_deref(), WORKER_TOKEN_ENV)?;
    let workers = match &args.workers_dns {
        Some(spec) => WorkerSource::dns(spec)?,
        None => WorkerSource::Urls(args.workers.clone()),
    };
    let mut dispatch = DispatchOptions::new(workers, worker_token);
    let mut worker_tls = ClientTls::load(args.tls_ca.as_deref(), args.tls_domain.clone())?;
    if let (Some(cert), Some(key)) = (&args.tls_client_cert, &args.tls_client_key) {
        worker_tls = worker_tls.map(|t| t.with_identity(cert, key)).transpose()?;
    }
    dispatch.worker_tls = worker_tls;
    dispatch.task_timeout = Duration::from_secs(args.task_timeout_secs.max(1));
    dispatch.heartbeat_interval = Duration::from_millis(args.heartbeat_ms.max(10));
    dispatch.partitions_per_worker = args.partitions_per_worker.max(1);
    let options =
        CoordinatorOptions { config, dispatch, clients, allow_non_private: args.allow_non_private };
    // Locks, the job store and recovery come before the readiness line: a
    // coordinator that cannot own its directories never says it listens.
    let service = CoordinatorService::start(options).await?;
    let (listener, _) = bind_announced(&args.listen).await?;
    serve(listener, service, tls.as_ref(), shutdown_signal()).await
}

#[tokio::main]
async fn main() -> ExitCode {
    exit_code(run(Args::parse()).await)
}
