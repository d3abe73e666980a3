//! `dpincon-coordinator`: accepts jobs on the operator's datasets and runs
//! them on a dpincon Ballista cluster (see the crate docs).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use dpincon_api::ByteSize;
use dpincon_ballista::server::{
    ClusterSecurity, Responder, bind_announced, exit_code, shutdown_signal, spawn_plain_http,
};
use dpincon_ballista::tls::Role;
use dpincon_cluster::ClusterError;
use dpincon_cluster::auth::ClientTokens;
use dpincon_cluster::coordinator::{
    BallistaOptions, CoordinatorOptions, CoordinatorService, METRICS_CONTENT_TYPE, serve,
};
use dpincon_cluster::datasets::CoordinatorConfig;
use dpincon_cluster::detection::{DEFAULT_GRAPH_MEMORY, DEFAULT_PARTITIONS};
use dpincon_cluster::server::ServerSecurity;

/// Accepts dpincon jobs on registered datasets and runs their detection on
/// a dpincon scheduler's executors.
///
/// Clients authenticate with one of the tokens of --client-tokens, over
/// TLS. The scheduler and executors (`dpincon-scheduler`,
/// `dpincon-executor`) admit only peers holding a certificate from the
/// cluster CA (--cluster-ca, --cluster-cert, --cluster-key; the
/// coordinator's carries the DNS name `coordinator.NAME`, NAME being
/// --cluster-tls-name).
/// Prints `listening on ADDR` on its first line of output once it serves.
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
    /// The dpincon scheduler, `http://host:port`.
    #[arg(long)]
    scheduler: String,
    #[command(flatten)]
    security: ServerSecurity,
    #[command(flatten)]
    cluster: ClusterSecurity,
    /// Write private jobs' figures and engine messages (edge counts,
    /// fingerprints, phase times, errors that may quote cells) to standard
    /// error. Off by default: the log then holds public values only.
    #[arg(long)]
    log_private_values: bool,
    /// Hash partitions per constraint group (and scan partitions: Parquet
    /// row groups, CSV byte ranges).
    #[arg(long, default_value_t = DEFAULT_PARTITIONS)]
    partitions: usize,
    /// The least bytes of a CSV table one scan task reads, e.g. 1MiB (a
    /// table is cut into at most --partitions ranges of whole records).
    #[arg(long, default_value = "1MiB")]
    csv_range_bytes: ByteSize,
    /// Serve the operator's metrics (Prometheus text format, public values
    /// only) in plain HTTP at `GET /metrics` here; keep it off the clients'
    /// network.
    #[arg(long)]
    metrics_listen: Option<String>,
    /// Graph memory before it spills to the state directory, for datasets
    /// without a memory-limit, e.g. 4GiB (default: a quarter of this
    /// machine's memory, a public fact about the machine).
    #[arg(long)]
    graph_memory: Option<ByteSize>,
}

/// A quarter of the physical memory, at least [`DEFAULT_GRAPH_MEMORY`]: a
/// graph that fits needs no spill (issue 29). Split between the
/// `[limits] slots` jobs that may run at once.
#[allow(unsafe_code)] // sysconf: see SAFETY below
fn default_graph_memory() -> u64 {
    // SAFETY: sysconf only reads system configuration.
    let (pages, page) =
        unsafe { (libc::sysconf(libc::_SC_PHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE)) };
    match (u64::try_from(pages), u64::try_from(page)) {
        (Ok(pages), Ok(page)) if pages > 0 && page > 0 => {
            (pages * page / 4).max(DEFAULT_GRAPH_MEMORY)
        }
        _ => DEFAULT_GRAPH_MEMORY,
    }
}

async fn run(args: Args) -> Result<(), ClusterError> {
    let tls = args.security.load()?;
    let cluster_tls = args.cluster.files(Role::Coordinator)?;
    if tls.is_none() && !args.cluster.insecure_plaintext {
        return Err(ClusterError::Config(
            "clients are served over TLS: give --tls-cert and --tls-key (or \
             --insecure-plaintext, on a test machine only)"
                .into(),
        ));
    }
    // Fail at start, not at the first job, on unreadable credentials.
    if let Some(files) = &cluster_tls {
        dpincon_ballista::tls::ClusterTls::load(files)?;
    }
    let config = CoordinatorConfig::load(&args.config)?;
    let clients = ClientTokens::load(&args.client_tokens)?;
    let scheme = if cluster_tls.is_some() { "https://" } else { "http://" };
    if !args.scheduler.starts_with(scheme) {
        return Err(ClusterError::Config(format!(
            "--scheduler '{}': use {scheme}host:port",
            args.scheduler
        )));
    }
    let mut ballista = BallistaOptions::new(&args.scheduler);
    ballista.tls = cluster_tls;
    ballista.partitions = args.partitions.max(1);
    ballista.csv_range_bytes = args.csv_range_bytes.bytes().max(1);
    ballista.graph_memory = match args.graph_memory {
        Some(size) => size.bytes(),
        // Shared by the jobs that run at once (public: `[limits] slots`).
        None => (default_graph_memory() / config.limits.slots as u64).max(DEFAULT_GRAPH_MEMORY),
    };
    let job_program = std::env::current_exe()
        .map_err(|e| ClusterError::Config(format!("cannot find this program to run jobs: {e}")))?;
    let options = CoordinatorOptions {
        config,
        ballista,
        clients,
        log_private_values: args.log_private_values,
        job_program,
    };
    // Locks, the job store and recovery come before the readiness line: a
    // coordinator that cannot own its directories never says it listens.
    let service = CoordinatorService::start(options).await?;
    let (listener, _) = bind_announced(&args.listen).await?;
    if let Some(addr) = &args.metrics_listen {
        let service = service.clone();
        let respond: Responder =
            std::sync::Arc::new(move |path: &str| (path == "/metrics").then(|| service.metrics()));
        spawn_plain_http(addr, "--metrics-listen", METRICS_CONTENT_TYPE, respond).await?;
    }
    serve(listener, service, tls.as_ref(), shutdown_signal()).await
}

fn main() -> ExitCode {
    // The coordinator runs each job in a child of its own program.
    if std::env::args().nth(1).as_deref() == Some("run-job") {
        return ExitCode::from(dpincon_cluster::job_process::run_job_process());
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    exit_code(runtime.block_on(run(Args::parse())))
}
