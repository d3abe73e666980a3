//! What the coordinator and worker binaries share: the token and TLS flags,
//! binding with a readiness line, and the exit status.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use tokio::net::TcpListener;

use crate::ClusterError;
use crate::auth::Token;
use crate::tls::ServerTls;

/// The shared bearer token and this server's TLS identity.
#[derive(Debug, Clone, clap::Args)]
pub struct ServerSecurity {
    /// File holding the shared bearer token (else $DPINCON_TOKEN).
    #[arg(long)]
    pub token_file: Option<PathBuf>,
    /// TLS certificate of this server (PEM); with --tls-key.
    #[arg(long)]
    pub tls_cert: Option<PathBuf>,
    /// TLS private key of this server (PEM).
    #[arg(long)]
    pub tls_key: Option<PathBuf>,
}

impl ServerSecurity {
    /// Reads the token and, when certificates are given, the TLS identity.
    pub fn load(&self) -> Result<(Token, Option<ServerTls>), ClusterError> {
        let token = Token::load(self.token_file.as_deref())?;
        let tls = ServerTls::load(self.tls_cert.as_deref(), self.tls_key.as_deref())?;
        Ok((token, tls))
    }
}

/// Binds `listen` and prints `listening on ADDR` as the first line of
/// output: the readiness signal scripts and tests wait for.
pub async fn bind_announced(listen: &str) -> Result<(TcpListener, SocketAddr), ClusterError> {
    let (listener, addr) = crate::worker::bind(listen).await?;
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
