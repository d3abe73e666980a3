//! `dpincon-worker`: a stateless detection worker (see the crate docs).

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use dpincon_cluster::auth::Token;
use dpincon_cluster::tls::ServerTls;
use dpincon_cluster::worker::{WorkerOptions, bind, serve};
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
    /// File holding the shared bearer token (else $DPINCON_TOKEN).
    #[arg(long)]
    token_file: Option<PathBuf>,
    /// TLS certificate (PEM); with --tls-key.
    #[arg(long)]
    tls_cert: Option<PathBuf>,
    /// TLS private key (PEM).
    #[arg(long)]
    tls_key: Option<PathBuf>,
    /// Tasks run at once (bounds memory; default: all cores).
    #[arg(long)]
    max_tasks: Option<usize>,
    /// Test only: wait this many milliseconds before each task.
    #[arg(long, default_value_t = 0, hide = true)]
    task_delay_ms: u64,
}

async fn run(args: Args) -> Result<(), ClusterError> {
    let token = Token::load(args.token_file.as_deref())?;
    let tls = ServerTls::load(args.tls_cert.as_deref(), args.tls_key.as_deref())?;
    let mut options = WorkerOptions::default();
    if let Some(max) = args.max_tasks {
        options.max_tasks = max.max(1);
    }
    options.task_delay = Duration::from_millis(args.task_delay_ms);
    let (listener, addr) = bind(&args.listen).await?;
    // The first line is the readiness signal scripts and tests wait for.
    println!("listening on {addr}");
    let _ = std::io::stdout().flush();
    serve(listener, &options, &token, tls.as_ref(), shutdown_signal()).await
}

#[tokio::main]
async fn main() -> ExitCode {
    match run(Args::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
