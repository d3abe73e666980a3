//! `dpincon-worker`: a stateless detection worker (see the crate docs).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use dpincon_cluster::auth::{Token, WORKER_TOKEN_ENV};
use dpincon_cluster::server::{ServerSecurity, bind_announced, exit_code};
use dpincon_cluster::worker::{WorkerOptions, serve};
use dpincon_cluster::{ClusterError, shutdown_signal};

/// Detects the conflicts of partition tasks sent by a dpincon coordinator.
///
/// The worker token (the coordinator's, never a client's) comes from
/// --token-file or the DPINCON_WORKER_TOKEN variable. With --tls-client-ca
/// only a caller presenting a certificate signed by that CA (the
/// coordinator) gets through (mutual TLS). Prints `listening on ADDR` on its
/// first line of output once it serves.
#[derive(Debug, Parser)]
#[command(name = "dpincon-worker", version, about)]
struct Args {
    /// Address to serve on (port 0 picks a free port).
    #[arg(long, default_value = "0.0.0.0:50051")]
    listen: String,
    /// File holding the coordinator↔worker token (else $DPINCON_WORKER_TOKEN).
    #[arg(long)]
    token_file: Option<PathBuf>,
    #[command(flatten)]
    security: ServerSecurity,
    /// Require callers to present a certificate signed by this CA (PEM):
    /// mutual TLS, so only the coordinator reaches the worker.
    #[arg(long, requires = "tls_cert")]
    tls_client_ca: Option<PathBuf>,
    /// Tasks run at once (bounds memory; default: all cores).
    #[arg(long)]
    max_tasks: Option<usize>,
    /// Test only: wait this many milliseconds before each task.
    #[arg(long, default_value_t = 0, hide = true)]
    task_delay_ms: u64,
}

async fn run(args: Args) -> Result<(), ClusterError> {
    let token = Token::load_from(args.token_file.as_deref(), WORKER_TOKEN_ENV)?;
    let mut tls = args.security.load()?;
    if let (Some(t), Some(ca)) = (tls.take(), &args.tls_client_ca) {
        tls = Some(t.require_clients(ca)?);
    }
    let mut options = WorkerOptions::default();
    if let Some(max) = args.max_tasks {
        options.max_tasks = max.max(1);
    }
    options.task_delay = Duration::from_millis(args.task_delay_ms);
    let (listener, _) = bind_announced(&args.listen).await?;
    serve(listener, &options, &token, tls.as_ref(), shutdown_signal()).await
}

#[tokio::main]
async fn main() -> ExitCode {
    exit_code(run(Args::parse()).await)
}
