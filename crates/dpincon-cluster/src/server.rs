//! The coordinator's TLS towards its clients (the flags it shares with the
//! scheduler and executors are `dpincon_ballista::server`'s).

use std::path::PathBuf;

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
