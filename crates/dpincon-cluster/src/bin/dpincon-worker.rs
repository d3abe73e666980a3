//! `dpincon-worker`: a stateless detection worker (see the crate docs).

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use dpincon_cluster::server::{ServerSecurity, bind_announced, exit_code};
use dpincon_cluster::worker::{WorkerOptions, serve};
use dpincon_cluster::{ClusterError, shutdown_signal};

/// Detects the conflicts of partition tasks sent by a dpincon coordinator.
///
/// The shared token comes from --token-file or the DPINCON_TOKEN variable.
/// Prints `listening on ADDR` on its first line of output once it serves.
#[derive(Debug, Parser)]
#[command(name = "dpincon-worker", version, about)]
struct Args {
    /// Address to serve on (port 0 picks a free port).
    #[arg(long, default_value = "0.0.0.0:50051")]
    listen: String,
    #[command(flatten)]
    security: ServerSecurity,
    /// Tasks run at once (bounds memory; default: all cores).
    #[arg(long)]
    max_tasks: Option<usize>,
    /// Test only: wait this many milliseconds before each task.
    #[arg(long, default_value_t = 0, hide = true)]
    task_delay_ms: u64,
}

async fn run(args: Args) -> Result<(), ClusterError> {
    let (token, tls) = args.security.load()?;
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
