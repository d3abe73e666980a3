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
    let addr = listener.local_addr()?;
    println!("listening on {addr}");
    let _ = std::io::stdout().flush();
    Ok((listener, addr))
}

/// What a plain-HTTP endpoint answers: the body of a GET for a path, or
/// `None` (404).
pub type Responder = std::sync::Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// The content type of [`health_responder`]'s answers.
pub const TEXT_PLAIN: &str = "text/plain; charset=utf-8";

/// Binds `addr` (given as `flag`) and serves `respond` there in plain
/// HTTP/1.1 in the background, its bodies sent as `content_type`: the
/// operator's endpoints (probes, metrics), which carry public values only.
/// Returns the bound address (port 0 picks a free port).
pub async fn spawn_plain_http(
    addr: &str,
    flag: &str,
    content_type: &'static str,
    respond: Responder,
) -> Result<SocketAddr, BallistaError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| BallistaError::Process(format!("{flag} {addr}: {e}")))?;
    let bound = listener.local_addr()?;
    tokio::spawn(serve_plain_http(listener, content_type, respond));
    Ok(bound)
}

/// Serves `respond` on `listener` with hyper's HTTP/1 server: GET of a
/// path `respond` knows is 200, anything else 404.
async fn serve_plain_http(listener: TcpListener, content_type: &'static str, respond: Responder) {
    use http_body_util::Full;
    use hyper::body::{Bytes, Incoming};
    use hyper::header::CONTENT_TYPE;
    use hyper::{Method, Request, Response, StatusCode};
    use hyper_util::rt::{TokioIo, TokioTimer};

    loop {
        let Ok((stream, _)) = listener.accept().await else { continue };
        let respond = respond.clone();
        let service = hyper::service::service_fn(move |request: Request<Incoming>| {
            let body = match *request.method() {
                Method::GET => respond(request.uri().path()),
                _ => None,
            };
            let response = match body {
                Some(body) => Response::builder()
                    .header(CONTENT_TYPE, content_type)
                    .body(Full::new(Bytes::from(body))),
                None => Response::builder()
                    .status(StatusCode::NOT_FOUND)
                    .header(CONTENT_TYPE, TEXT_PLAIN)
                    .body(Full::new(Bytes::from_static(b"not found\n"))),
            };
            std::future::ready(response)
        });
        tokio::spawn(async move {
            // A client that never finishes its request is dropped.
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(Duration::from_secs(5))
                .serve_connection(TokioIo::new(stream), service)
                .await;
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

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// The whole response to `request` sent raw over TCP to `addr`.
    async fn exchange(addr: SocketAddr, request: &str) -> String {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut out = String::new();
        let read = stream.read_to_string(&mut out);
        tokio::time::timeout(Duration::from_secs(10), read).await.unwrap().unwrap();
        out
    }

    #[tokio::test]
    async fn probes_answer_get_only_and_other_paths_are_not_found() {
        let addr =
            spawn_plain_http("127.0.0.1:0", "--health-listen", TEXT_PLAIN, health_responder())
                .await
                .unwrap();
        for path in ["/healthz", "/readyz"] {
            let got = exchange(
                addr,
                &format!("GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"),
            )
            .await;
            assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{got}");
            assert!(
                got.to_ascii_lowercase().contains("content-type: text/plain; charset=utf-8"),
                "{got}"
            );
            assert!(got.ends_with("\r\n\r\nok\n"), "{got}");
        }
        for request in [
            "GET /metrics HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
            "POST /healthz HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
        ] {
            let got = exchange(addr, request).await;
            assert!(got.starts_with("HTTP/1.1 404 Not Found\r\n"), "{request}: {got}");
            assert!(got.ends_with("not found\n"), "{got}");
        }
        // Not HTTP: hyper answers 400 and closes.
        assert_eq!(exchange(addr, "hello\r\n\r\n").await.split(' ').nth(1), Some("400"));
    }
}
