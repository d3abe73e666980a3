//! TLS with rustls (tonic's `tls-ring`): the coordinator presents a
//! certificate and key (`--tls-cert`, `--tls-key`), clients trust a CA
//! (`--tls-ca`). Without TLS traffic is plain HTTP/2: fine on a loopback,
//! not across any network.

use std::path::Path;

use tonic::transport::{Certificate, ClientTlsConfig, Identity, ServerTlsConfig};

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

/// What a client trusts.
#[derive(Debug, Clone)]
pub struct ClientTls {
    ca: Vec<u8>,
    /// The name the server's certificate must carry; the URL's host when
    /// `None` (set it when connecting by IP).
    pub domain: Option<String>,
}

impl ClientTls {
    /// Reads a PEM CA certificate; `None` when no CA is given (plain HTTP/2).
    pub fn load(ca: Option<&Path>, domain: Option<String>) -> Result<Option<Self>, ClusterError> {
        ca.map(|path| Ok(ClientTls { ca: read(path)?, domain })).transpose()
    }

    /// tonic's client configuration for a connection to `url`, which must
    /// be `https://` (tonic only speaks TLS to https URLs).
    pub fn config_for(&self, url: &str) -> Result<ClientTlsConfig, ClusterError> {
        if !url.starts_with("https://") {
            return Err(ClusterError::Config(format!(
                "'{url}': TLS is configured (--tls-ca), use an https:// URL"
            )));
        }
        let mut config = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(&self.ca));
        if let Some(domain) = &self.domain {
            config = config.domain_name(domain.clone());
        }
        Ok(config)
    }
}
