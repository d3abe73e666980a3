//! What the coordinator, scheduler and executor binaries share: the TLS flags, binding
//! with a readiness line, and the exit status.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use tokio::net::TcpListener;

use crate::ClusterError;
use crate::tls::ServerTls;

/// This server's TLS identity.
#[derive(Debug, Clone, clap::Args)]
pub struct ServerSecurity {
    /// TLS certificate of this server (PEM); with --tls-key.
    #[arg(long)]
    pub tls_cert: Option<PathBuf>,
    /// TLS private key of this server (PEM).
    #[arg(long)]
    pub tls_key: Option<PathBuf>,
}

impl ServerSecurity {
    /// The TLS identity, when certificates are given.
    pub fn load(&self) -> Result<Option<ServerTls>, ClusterError> {
        ServerTls::load(self.tls_cert.as_deref(), self.tls_key.as_deref())
    }
}

/// Binds `listen` and prints `listening on ADDR` as the first line of
/// output: the readiness signal scripts and tests wait for.
pub async fn bind_announced(listen: &str) -> Result<(TcpListener, SocketAddr), ClusterError> {
    let listener = TcpListener::bind(listen)
        .await
        .map_err(|e| ClusterError::Config(format!("cannot listen on {listen}: {e}")))?;
    let addr = listener.local_addr().map_err(|e| ClusterError::Config(e.to_string()))?;
    println!("listening on {addr}");
    let _ = std::io::stdout().flush();
    Ok((listener, addr))
}

/// The process exit status of a server's run, printing the error if any.
pub fn exit_code(result: Result<(), ClusterError>) -> ExitCode {
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
    main: impl std::future::Future<Output = Result<(), ClusterError>>,
) -> ExitCode {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(32 << 20)
        .build();
    match runtime {
        Ok(rt) => exit_code(rt.block_on(main)),
        Err(e) => exit_code(Err(ClusterError::Config(format!("cannot start: {e}")))),
    }
}
