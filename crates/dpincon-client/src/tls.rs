//! TLS with rustls (tonic's `tls-ring`), client side: a client trusts a CA
//! (`--tls-ca`) and checks the coordinator's certificate against it.

use std::path::Path;

use tonic::transport::{Certificate, ClientTlsConfig};

use crate::ClientError;

pub(crate) fn read(path: &Path) -> Result<Vec<u8>, ClientError> {
    std::fs::read(path).map_err(|source| ClientError::Io { path: path.to_path_buf(), source })
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
    pub fn load(ca: Option<&Path>, domain: Option<String>) -> Result<Option<Self>, ClientError> {
        ca.map(|path| Ok(ClientTls { ca: read(path)?, domain })).transpose()
    }

    /// tonic's client configuration for a connection to `url`, which must
    /// be `https://` (tonic only speaks TLS to https URLs).
    pub fn config_for(&self, url: &str) -> Result<ClientTlsConfig, ClientError> {
        if !url.starts_with("https://") {
            return Err(ClientError::Config(format!(
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
