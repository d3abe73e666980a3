//! `dpincon-executor`: Apache DataFusion Ballista's executor with
//! dpincon's operators registered. Polls the scheduler for tasks, reads
//! the table itself, serves its shuffle output over Arrow Flight. Prints
//! `listening on ADDR` once its Flight port accepts connections. Refuses to
//! start without `--allow-tables` (the tables its plans may scan) unless
//! told `--allow-any-table` (test clusters only).

use std::net::{SocketAddr, ToSocketAddrs};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use dpincon_ballista::BallistaError;
use dpincon_ballista::codec::TableRoots;
use dpincon_ballista::process::{ExecutorOptions, Liveness, executor_config, run_executor};
use dpincon_ballista::server::{ClusterSecurity, run_ballista_process, shutdown_signal};
use dpincon_ballista::tls::Role;
use http::uri::Authority;

/// Runs dpincon's detection tasks for a dpincon scheduler.
#[derive(Debug, Parser)]
#[command(name = "dpincon-executor", version, about)]
struct Args {
    /// The scheduler, `https://host:port` (`http://` with
    /// --insecure-plaintext).
    #[arg(long)]
    scheduler: String,
    #[command(flatten)]
    security: ClusterSecurity,
    /// Arrow Flight address (shuffle and result fetches); port 0 picks a
    /// free port.
    #[arg(long, default_value = "0.0.0.0:50071")]
    listen: String,
    /// The host other processes reach this executor by (default: the
    /// listening address's IP).
    #[arg(long)]
    external_host: Option<String>,
    /// Tasks run at once (default: one per core).
    #[arg(long, default_value_t = 0)]
    slots: usize,
    /// A directory, or an `s3://bucket/prefix/` URL, whose tables this
    /// executor may read (repeat for more, or separate with commas in
    /// DPINCON_ALLOW_TABLES): a plan scanning any other path or object is
    /// refused before it runs. Required (or --allow-any-table).
    #[arg(long = "allow-tables", env = "DPINCON_ALLOW_TABLES", value_delimiter = ',')]
    allow_tables: Vec<std::path::PathBuf>,
    /// TEST CLUSTERS ONLY: plans may scan any path the process can read,
    /// whoever holds a cluster certificate (instead of --allow-tables).
    #[arg(long)]
    allow_any_table: bool,
    /// Directory of shuffle files (default: a temporary directory).
    #[arg(long)]
    work_dir: Option<String>,
    /// Seconds between heartbeats to the scheduler.
    #[arg(long, default_value_t = Liveness::default().heartbeat.as_secs())]
    heartbeat_secs: u64,
    /// Seconds to keep trying to reach the scheduler at start (pods start
    /// in any order) before giving up.
    #[arg(long, default_value_t = 60)]
    scheduler_connect_timeout_secs: u64,
    /// Ballista's log level on standard error (error, warn, info, debug).
    #[arg(long, default_value = "warn",
          value_parser = ["off", "error", "warn", "info", "debug", "trace"])]
    log_level: String,
}

fn config_error(what: impl std::fmt::Display) -> BallistaError {
    BallistaError::Process(what.to_string())
}

/// `host:port` of an `https://host:port` (or `http://`) URL: the address
/// Ballista dials, and the one dials expecting the scheduler's certificate
/// are recognised by.
fn scheduler_address(url: &str) -> Result<Authority, BallistaError> {
    let bad = |why: &str| config_error(format!("--scheduler '{url}': {why}"));
    let uri: http::Uri = url.parse().map_err(|_| bad("use https://host:port"))?;
    if !matches!(uri.scheme_str(), Some("https" | "http")) || !matches!(uri.path(), "" | "/") {
        return Err(bad("use https://host:port"));
    }
    let authority = uri.authority().ok_or_else(|| bad("no host"))?;
    if authority.as_str().contains('@') {
        return Err(bad("no user name"));
    }
    if authority.port_u16().is_none() {
        return Err(bad("no port"));
    }
    Ok(authority.clone())
}

/// `listen` with a free port in place of port 0: the port is advertised
/// to the scheduler, so it must be the real one.
fn resolve_listen(listen: &str) -> Result<SocketAddr, BallistaError> {
    let mut addr = listen
        .to_socket_addrs()
        .map_err(|e| config_error(format!("--listen '{listen}': {e}")))?
        .next()
        .ok_or_else(|| config_error(format!("--listen '{listen}': no address")))?;
    if addr.port() == 0 {
        let probe = std::net::TcpListener::bind(addr)
            .map_err(|e| config_error(format!("cannot listen on {listen}: {e}")))?;
        addr.set_port(probe.local_addr().map_err(config_error)?.port());
    }
    Ok(addr)
}

async fn run(args: Args) -> Result<(), BallistaError> {
    let level = args.log_level.parse().unwrap_or(log::LevelFilter::Warn);
    dpincon_ballista::process::log_to_stderr(level);
    dpincon_failpoint::announce();
    let tls = args.security.load(Role::Executor)?;
    let tables = TableRoots::from_flags(args.allow_tables.clone(), args.allow_any_table)
        .map_err(config_error)?;
    if tables == TableRoots::Any {
        eprintln!(
            "WARNING: dpincon-executor runs with --allow-any-table: plans may scan any path it \
             can read (test clusters only)"
        );
    }
    let listen = resolve_listen(&args.listen)?;
    let options = ExecutorOptions {
        listen,
        external_host: args.external_host.clone().or_else(|| Some(listen.ip().to_string())),
        grpc_port: 0,
        scheduler: scheduler_address(&args.scheduler)?,
        slots: args.slots,
        work_dir: args.work_dir.clone(),
        liveness: Liveness {
            heartbeat: Duration::from_secs(args.heartbeat_secs.max(1)),
            ..Liveness::default()
        },
        scheduler_connect_timeout: Duration::from_secs(args.scheduler_connect_timeout_secs),
        tables,
    };
    let config = executor_config(&options, tls.as_ref()).map_err(config_error)?;
    let mut executor = tokio::spawn(run_executor(config));
    // Announce once the Flight port answers (bounded wait; the executor's
    // own failure ends it sooner).
    let probe = if listen.ip().is_unspecified() {
        SocketAddr::new(std::net::Ipv4Addr::LOCALHOST.into(), listen.port())
    } else {
        listen
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        tokio::select! {
            ended = &mut executor => {
                return match ended {
                    Ok(r) => r.map_err(config_error),
                    Err(e) => Err(config_error(e)),
                };
            }
            connected = tokio::net::TcpStream::connect(probe) => {
                if connected.is_ok() {
                    break;
                }
                if Instant::now() > deadline {
                    return Err(config_error(format!("the executor never listened on {listen}")));
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
    println!("listening on {listen}");
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
    tokio::select! {
        ended = executor => match ended {
            Ok(r) => r.map_err(config_error),
            Err(e) => Err(config_error(e)),
        },
        _ = shutdown_signal() => Ok(()),
    }
}

fn main() -> ExitCode {
    run_ballista_process(run(Args::parse()))
}
