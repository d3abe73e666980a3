//! `dpincon-scheduler`: Apache DataFusion Ballista's scheduler with
//! dpincon's operators registered (a stock Ballista scheduler cannot
//! decode them). Prints `listening on ADDR` once bound; serves gRPC over
//! mutual TLS (`--cluster-*`), and `GET /healthz` and `/readyz` on
//! `--health-listen`.

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use dpincon_ballista::BallistaError;
use dpincon_ballista::process::{Liveness, scheduler_config, serve_scheduler};
use dpincon_ballista::server::{
    ClusterSecurity, TEXT_PLAIN, bind_announced, health_responder, run_ballista_process,
    spawn_plain_http,
};
use dpincon_ballista::tls::Role;

/// Schedules dpincon's detection stages on dpincon executors.
#[derive(Debug, Parser)]
#[command(name = "dpincon-scheduler", version, about)]
struct Args {
    /// Address to serve on (port 0 picks a free port).
    #[arg(long, default_value = "0.0.0.0:50070")]
    listen: String,
    /// The host executors and the coordinator reach this scheduler by
    /// (default: the listening address's IP).
    #[arg(long)]
    external_host: Option<String>,
    /// Seconds without a heartbeat after which an executor is lost and its
    /// work (shuffle output included) is run again elsewhere.
    #[arg(long, default_value_t = Liveness::default().executor_timeout.as_secs())]
    executor_timeout_secs: u64,
    /// Seconds a finished job's output (its conflict edges) stays on the
    /// executors for the coordinator to fetch before it is deleted; the
    /// rows shuffled between stages are deleted when the job ends.
    #[arg(long, default_value_t = Liveness::default().result_retention.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..))]
    result_retention_secs: u64,
    /// Ballista's log level on standard error (error, warn, info, debug).
    #[arg(long, default_value = "warn",
          value_parser = ["off", "error", "warn", "info", "debug", "trace"])]
    log_level: String,
    #[command(flatten)]
    security: ClusterSecurity,
    /// Serve `GET /healthz` and `/readyz` over plain HTTP here (with TLS
    /// the gRPC port answers only peers holding a cluster certificate,
    /// which Kubernetes probes do not).
    #[arg(long)]
    health_listen: Option<String>,
}

async fn run(args: Args) -> Result<(), BallistaError> {
    let level = args.log_level.parse().unwrap_or(log::LevelFilter::Warn);
    dpincon_ballista::process::log_to_stderr(level);
    let tls = args.security.load(Role::Scheduler)?;
    let (listener, addr) = bind_announced(&args.listen).await?;
    if let Some(health) = &args.health_listen {
        spawn_plain_http(health, "--health-listen", TEXT_PLAIN, health_responder()).await?;
    }
    let host = args.external_host.unwrap_or_else(|| addr.ip().to_string());
    let liveness = Liveness {
        executor_timeout: Duration::from_secs(args.executor_timeout_secs.max(1)),
        result_retention: Duration::from_secs(args.result_retention_secs),
        ..Liveness::default()
    };
    let config = scheduler_config(addr, &host, liveness, tls.as_ref());
    serve_scheduler(config, listener, tls.as_ref()).await
}

fn main() -> ExitCode {
    run_ballista_process(run(Args::parse()))
}
