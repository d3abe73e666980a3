//! TLS with rustls (tonic's `tls-ring`), server side: the coordinator
//! presents a certificate and key (`--tls-cert`, `--tls-key`); its clients
//! trust a CA (`dpincon_client::ClientTls`). Without TLS traffic is plain
//! HTTP/2, which the coordinator serves only with `--insecure-plaintext`.

use std::path::Path;

use tonic::transport::{Identity, ServerTlsConfig};

use crate::ClusterError;

fn read(path: &Path) -> Result<Vec<u8>, ClusterError> {
    std::fs::read(path).map_err(|source| ClusterError::Io { path: path.to_path_buf(), source })
}

/// A server's TLS identity.
#[derive(Debug, Clone)]
pub struct ServerTls {
    cert: Vec<u8>,
    key: Vec<u8>,
}

impl ServerTls {
    /// Reads a PEM certificate (chain) and its PEM private key; both or
    /// neither must be given.
    pub fn load(cert: Option<&Path>, key: Option<&Path>) -> Result<Option<Self>, ClusterError> {
        match (cert, key) {
            (None, None) => Ok(None),
            (Some(cert), Some(key)) => Ok(Some(ServerTls { cert: read(cert)?, key: read(key)? })),
            _ => Err(ClusterError::Config("give both --tls-cert and --tls-key".into())),
        }
    }

    /// tonic's server configuration.
    pub fn config(&self) -> ServerTlsConfig {
        ServerTlsConfig::new().identity(Identity::from_pem(&self.cert, &self.key))
    }
}
