//! TLS with rustls (tonic's `tls-ring`): servers present a certificate and
//! key (`--tls-cert`, `--tls-key`), clients trust a CA (`--tls-ca`).
//! Workers can also require a client certificate signed by a CA of their
//! own (`--tls-client-ca`: mutual TLS), which the coordinator presents
//! (`--tls-client-cert`, `--tls-client-key`): only the coordinator then
//! reaches the workers, whatever tokens leak. Without TLS traffic is plain
//! HTTP/2: fine on a loopback, not across any network.

use std::path::Path;

use tonic::transport::{Certificate, ClientTlsConfig, Identity, ServerTlsConfig};

use crate::ClusterError;

fn read(path: &Path) -> Result<Vec<u8>, ClusterError> {
    std::fs::read(path).map_err(|source| ClusterError::Io { path: path.to_path_buf(), source })
}

/// A server's TLS identity, and the CA its clients' certificates must be
/// signed by when it requires them (mTLS).
#[derive(Debug, Clone)]
pub struct ServerTls {
    cert: Vec<u8>,
    key: Vec<u8>,
    client_ca: Option<Vec<u8>>,
}

impl ServerTls {
    /// Reads a PEM certificate (chain) and its PEM private key; both or
    /// neither must be given.
    pub fn load(cert: Option<&Path>, key: Option<&Path>) -> Result<Option<Self>, ClusterError> {
        match (cert, key) {
            (None, None) => Ok(None),
            (Some(cert), Some(key)) => {
                Ok(Some(ServerTls { cert: read(cert)?, key: read(key)?, client_ca: None }))
            }
            _ => Err(ClusterError::Config("give both --tls-cert and --tls-key".into())),
        }
    }

    /// Requires clients to present a certificate signed by the PEM CA at
    /// `path` (mutual TLS).
    pub fn require_clients(mut self, path: &Path) -> Result<Self, ClusterError> {
        self.client_ca = Some(read(path)?);
        Ok(self)
    }

    /// tonic's server configuration.
    pub fn config(&self) -> ServerTlsConfig {
        let config = ServerTlsConfig::new().identity(Identity::from_pem(&self.cert, &self.key));
        match &self.client_ca {
            Some(ca) => config.client_ca_root(Certificate::from_pem(ca)),
            None => config,
        }
    }
}

/// What a client trusts.
#[derive(Debug, Clone)]
pub struct ClientTls {
    ca: Vec<u8>,
    /// The certificate and key this client presents (mTLS), if any.
    identity: Option<(Vec<u8>, Vec<u8>)>,
    /// The name the server's certificate must carry; the URL's host when
    /// `None` (set it when connecting by IP, e.g. to DNS-discovered workers).
    pub domain: Option<String>,
}

impl ClientTls {
    /// Reads a PEM CA certificate; `None` when no CA is given (plain HTTP/2).
    pub fn load(ca: Option<&Path>, domain: Option<String>) -> Result<Option<Self>, ClusterError> {
        ca.map(|path| Ok(ClientTls { ca: read(path)?, identity: None, domain })).transpose()
    }

    /// Presents the PEM certificate and key at `cert`, `key` (mTLS).
    pub fn with_identity(mut self, cert: &Path, key: &Path) -> Result<Self, ClusterError> {
        self.identity = Some((read(cert)?, read(key)?));
        Ok(self)
    }

    /// This configuration, checking for `domain` unless a name was set
    /// explicitly (`--tls-domain`).
    pub fn or_domain(&self, domain: Option<String>) -> ClientTls {
        ClientTls {
            ca: self.ca.clone(),
            identity: self.identity.clone(),
            domain: self.domain.clone().or(domain),
        }
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
        if let Some((cert, key)) = &self.identity {
            config = config.identity(Identity::from_pem(cert, key));
        }
        Ok(config)
    }
}
