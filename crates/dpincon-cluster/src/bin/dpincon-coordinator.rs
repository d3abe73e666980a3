//! `dpincon-coordinator`: accepts jobs and runs them on gRPC workers (see
//! the crate docs).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use dpincon_cluster::coordinator::{CoordinatorOptions, WorkerSource, serve};
use dpincon_cluster::server::{ServerSecurity, bind_announced, exit_code};
use dpincon_cluster::tls::ClientTls;
use dpincon_cluster::{ClusterError, shutdown_signal};

/// Accepts dpincon jobs and runs their detection on workers.
///
/// The shared token (required from clients, sent to workers) comes from
/// --token-file or the DPINCON_TOKEN variable. Prints `listening on ADDR`
/// on its first line of output once it serves.
#[derive(Debug, Parser)]
#[command(name = "dpincon-coordinator", version, about)]
struct Args {
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
    #[command(flatten)]
    security: ServerSecurity,
    /// CA certificate (PEM) the workers' certificates are checked against.
    #[arg(long)]
    tls_ca: Option<PathBuf>,
    /// Name the workers' certificates must carry (default: the URL's host,
    /// or the --workers-dns name).
    #[arg(long)]
    tls_domain: Option<String>,
    /// Serve jobs asking for exact, NON-PRIVATE values (--non-private,
    /// strategy baseline-truemax). Off by default.
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
    let (token, tls) = args.security.load()?;
    let workers = match &args.workers_dns {
        Some(spec) => WorkerSource::dns(spec)?,
        None => WorkerSource::Urls(args.workers.clone()),
    };
    let mut options = CoordinatorOptions::new(workers, token);
    options.worker_tls = ClientTls::load(args.tls_ca.as_deref(), args.tls_domain.clone())?;
    options.allow_non_private = args.allow_non_private;
    options.task_timeout = Duration::from_secs(args.task_timeout_secs.max(1));
    options.heartbeat_interval = Duration::from_millis(args.heartbeat_ms.max(10));
    options.partitions_per_worker = args.partitions_per_worker.max(1);
    let (listener, _) = bind_announced(&args.listen).await?;
    serve(listener, options, tls.as_ref(), shutdown_signal()).await
}

#[tokio::main]
async fn main() -> ExitCode {
    exit_code(run(Args::parse()).await)
}
