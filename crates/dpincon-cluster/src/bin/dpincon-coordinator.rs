//! `dpincon-coordinator`: accepts jobs on the operator's datasets and runs
//! them on a dpincon Ballista cluster (see the crate docs).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use dpincon_cluster::ClusterError;
use dpincon_cluster::auth::ClientTokens;
use dpincon_cluster::coordinator::{
    BallistaOptions, CoordinatorOptions, CoordinatorService, serve,
};
use dpincon_cluster::datasets::CoordinatorConfig;
use dpincon_cluster::server::{ServerSecurity, bind_announced, exit_code};
use dpincon_cluster::shutdown_signal;

/// Accepts dpincon jobs on registered datasets and runs their detection on
/// a dpincon scheduler's executors.
///
/// Clients authenticate with one of the tokens of --client-tokens. The
/// scheduler and executors (`dpincon-scheduler`, `dpincon-executor`) take
/// no token: keep them on a network only the coordinator and they reach.
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
    /// TEST CLUSTERS ONLY: accept jobs asking for exact, NON-PRIVATE values
    /// or a fixed seed (non-private, seed, brute-force, strategy
    /// baseline-truemax), and show their progress. Off by default.
    #[arg(long)]
    allow_non_private: bool,
    /// Hash partitions per constraint group (and Parquet scan partitions).
    #[arg(long, default_value_t = 8)]
    partitions: usize,
    /// Graph memory before it spills to the state directory, for datasets
    /// without a memory-limit, e.g. 256MiB.
    #[arg(long, default_value = "256MiB")]
    graph_memory: String,
}

async fn run(args: Args) -> Result<(), ClusterError> {
    let tls = args.security.load()?;
    let config = CoordinatorConfig::load(&args.config)?;
    let clients = ClientTokens::load(&args.client_tokens)?;
    if !args.scheduler.starts_with("http://") {
        return Err(ClusterError::Config(format!(
            "--scheduler '{}': use http://host:port",
            args.scheduler
        )));
    }
    let mut ballista = BallistaOptions::new(&args.scheduler);
    ballista.partitions = args.partitions.max(1);
    ballista.graph_memory = dpincon_engine::parse_bytes(&args.graph_memory)
        .map_err(|e| ClusterError::Config(format!("--graph-memory: {e}")))?;
    let options =
        CoordinatorOptions { config, ballista, clients, allow_non_private: args.allow_non_private };
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
