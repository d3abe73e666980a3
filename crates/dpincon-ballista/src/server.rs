//! What the scheduler, the executor and the coordinator binaries share:
//! the cluster's TLS flags, binding with a readiness line, the operator's
//! plain-HTTP endpoints, the stop signal and the exit status.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use tokio::net::TcpListener;

use crate::BallistaError;
use crate::tls::{ClusterTls, ClusterTlsFiles, Role};

/// This process's credentials on the cluster's own network (scheduler,
/// executors, coordinator): mutual TLS from one cluster CA, or nothing on a
/// test machine.
#[derive(Debug, Clone, clap::Args)]
pub struct ClusterSecurity {
    /// The cluster CA's certificate (PEM): every scheduler, executor and
    /// coordinator must present a certificate it signed.
    #[arg(long)]
    pub cluster_ca: Option<PathBuf>,
    /// This process's cluster certificate (PEM), signed by the cluster CA
    /// and carrying its role's DNS name, ROLE.NAME with NAME the
    /// --cluster-tls-name (e.g. `executor.dpincon-cluster`).
    #[arg(long)]
    pub cluster_cert: Option<PathBuf>,
    /// Its private key (PEM).
    #[arg(long)]
    pub cluster_key: Option<PathBuf>,
    /// The cluster's name: the scheduler's certificate carries
    /// `scheduler.NAME`, executors' `executor.NAME`, the coordinator's
    /// `coordinator.NAME`, and each dial checks the name of the role it
    /// dials (whatever the address: executors advertise pod IPs).
    #[arg(long, default_value = crate::tls::DEFAULT_CLUSTER_NAME)]
    pub cluster_tls_name: String,
    /// TESTS ONLY: no TLS anywhere this process serves or dials. Anyone who
    /// reaches its ports can submit plans, fetch shuffled rows, or (on a
    /// coordinator) talk to it unencrypted.
    #[arg(long)]
    pub insecure_plaintext: bool,
}

impl ClusterSecurity {
    /// The cluster credentials' files of a process of `role`, or `None`
    /// with --insecure-plaintext (said on standard error); any other mix
    /// is refused.
    pub fn files(&self, role: Role) -> Result<Option<ClusterTlsFiles>, BallistaError> {
        match (&self.cluster_ca, &self.cluster_cert, &self.cluster_key, self.insecure_plaintext) {
            (Some(ca), Some(cert), Some(key), false) => Ok(Some(ClusterTlsFiles {
                ca: ca.clone(),
                cert: cert.clone(),
                key: key.clone(),
                cluster: self.cluster_tls_name.clone(),
                role,
            })),
            (None, None, None, true) => {
                eprintln!(
                    "WARNING: dpincon-{role} runs with --insecure-plaintext: its gRPC is neither \
                     encrypted nor authenticated (tests only)"
                );
                Ok(None)
            }
            (_, _, _, true) => Err(BallistaError::Process(
                "--insecure-plaintext and --cluster-ca/--cluster-cert/--cluster-key: choose one"
                    .into(),
            )),
            _ => Err(BallistaError::Process(
                "the cluster's network needs mutual TLS: give --cluster-ca, --cluster-cert and \
                 --cluster-key (or --insecure-plaintext, on a test machine only)"
                    .into(),
            )),
        }
    }

    /// [`ClusterSecurity::files`], loaded.
    pub fn load(&self, role: Role) -> Result<Option<ClusterTls>, BallistaError> {
        self.files(role)?.map(|f| ClusterTls::load(&f)).transpose()
    }
}

/// Binds `listen` and prints `listening on ADDR` as the first line of
/// output: the readiness signal scripts and tests wait for.
pub async fn bind_announced(listen: &str) -> Result<(TcpListener, SocketAddr), BallistaError> {
    let listener = TcpListener::bind(listen)
        .await
        .map_err(|e| BallistaError::Process(format!("cannot listen on {listen}: {e}")))?;
    let addr = listener.local_addr().map_err(|e| BallistaError::Process(e.to_string()))?;
    println!("listening on {addr}");
    let _ = std::io::stdout().flush();
    Ok((listener, addr))
}

/// What a plain-HTTP endpoint answers: the body of a GET for a path, or
/// `None` (404).
pub type Responder = std::sync::Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Binds `addr` (given as `flag`) and serves `respond` there in the
/// background (`serve_plain_http`).
pub async fn spawn_plain_http(
    addr: &str,
    flag: &str,
    respond: Responder,
) -> Result<(), BallistaError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| BallistaError::Process(format!("{flag} {addr}: {e}")))?;
    tokio::spawn(serve_plain_http(listener, respond));
    Ok(())
}

/// Serves `respond` over plain HTTP/1.1 on `listener`, one GET per
/// connection: the operator's endpoints (probes, metrics), which carry
/// public values only.
async fn serve_plain_http(listener: TcpListener, respond: Responder) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    loop {
        let Ok((mut stream, _)) = listener.accept().await else { continue };
        let respond = respond.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 1024];
            let read = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf)).await;
            let Ok(Ok(n)) = read else { return };
            let request = String::from_utf8_lossy(&buf[..n]);
            let mut words = request.split_whitespace();
            let body = match (words.next(), words.next()) {
                (Some("GET"), Some(path)) => respond(path),
                _ => None,
            };
            let (status, body) = match body {
                Some(body) => ("200 OK", body),
                None => ("404 Not Found", "not found\n".to_string()),
            };
            let reply = format!(
                "HTTP/1.1 {status}\r\ncontent-type: text/plain; version=0.0.4\r\n\
                 content-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(reply.as_bytes()).await;
        });
    }
}

/// `GET /healthz` and `GET /readyz` answer `ok` (the process is up and
/// serving; nothing else): probes for a gRPC port only cluster peers may
/// open.
pub fn health_responder() -> Responder {
    std::sync::Arc::new(|path: &str| {
        matches!(path, "/healthz" | "/readyz").then(|| "ok\n".to_string())
    })
}

/// The process exit status of a server's run, printing the error if any.
pub fn exit_code<E: std::fmt::Display>(result: Result<(), E>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs a Ballista process's `main` future on a multi-threaded runtime
/// with 32 MiB thread stacks (Ballista's planner recurses deeply, and its
/// own binaries do the same) and returns the exit status.
pub fn run_ballista_process(
    main: impl std::future::Future<Output = Result<(), BallistaError>>,
) -> ExitCode {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(32 << 20)
        .build();
    match runtime {
        Ok(rt) => exit_code(rt.block_on(main)),
        Err(e) => exit_code(Err(BallistaError::Process(format!("cannot start: {e}")))),
    }
}

/// Resolves when the process is asked to stop (Ctrl-C, or SIGTERM as
/// Kubernetes sends).
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
