//! Mutual TLS on every hop of the cluster (issue 27): the scheduler's and
//! the executors' listeners accept only peers with a certificate from the
//! cluster's CA, and every client of them (coordinator, executors
//! heart-beating and fetching shuffle data) presents one.
//!
//! Ballista 55 has no TLS of its own; its hooks are enough
//! (`../shared/notes/ballista-tls.md`, hop by hop): we serve the
//! scheduler's gRPC ourselves, replace the executor's Flight server
//! (`override_arrow_flight_service`), and rewrite every client endpoint to
//! `https` with our identity (`EndpointOverrideFn`; tonic ignores TLS on an
//! `http://` URI, and Ballista hard-codes `http://` at several dial sites).
//! Executors run pull-scheduled, so they open no other listener.
//!
//! Every certificate carries one common name, [`DEFAULT_CLUSTER_NAME`] by
//! default, as a DNS subject alternative name, and every client checks
//! that name whatever address it dials: executors advertise pod IPs that no
//! certificate can list in advance. The CA is the trust boundary.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ballista_core::extension::EndpointOverrideFn;
use serde::{Deserialize, Serialize};
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity, ServerTlsConfig};

use crate::BallistaError;

/// The name cluster certificates carry unless configured otherwise.
pub const DEFAULT_CLUSTER_NAME: &str = "dpincon-cluster";

/// Where a process's cluster credentials are (what crosses to a job
/// process: paths, never key bytes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ClusterTlsFiles {
    /// The cluster CA's certificate (PEM).
    pub ca: PathBuf,
    /// This process's certificate (PEM), signed by the CA.
    pub cert: PathBuf,
    /// Its private key (PEM).
    pub key: PathBuf,
    /// The name every peer's certificate must carry.
    pub name: String,
}

/// A process's cluster credentials, loaded.
#[derive(Clone)]
pub struct ClusterTls {
    ca: Certificate,
    identity: Identity,
    name: String,
}

impl std::fmt::Debug for ClusterTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("ClusterTls").field("name", &self.name).finish_non_exhaustive()
    }
}

fn read(path: &Path) -> Result<Vec<u8>, BallistaError> {
    std::fs::read(path)
        .map_err(|e| BallistaError::Process(format!("cannot read '{}': {e}", path.display())))
}

/// Whether `pem` holds at least one PEM block of `kind` (e.g. `CERTIFICATE`).
fn has_block(pem: &[u8], kind: &str) -> bool {
    let text = String::from_utf8_lossy(pem);
    text.lines().any(|l| l.starts_with("-----BEGIN ") && l.contains(kind))
}

impl ClusterTls {
    /// Reads the files; a file that is not PEM of the right kind is an
    /// error naming it (tonic would only fail at the first handshake).
    pub fn load(files: &ClusterTlsFiles) -> Result<Self, BallistaError> {
        let (ca, cert, key) = (read(&files.ca)?, read(&files.cert)?, read(&files.key)?);
        for (path, pem, kind) in [
            (&files.ca, &ca, "CERTIFICATE"),
            (&files.cert, &cert, "CERTIFICATE"),
            (&files.key, &key, "PRIVATE KEY"),
        ] {
            if !has_block(pem, kind) {
                return Err(BallistaError::Process(format!(
                    "'{}' holds no PEM {kind}",
                    path.display()
                )));
            }
        }
        if files.name.is_empty() {
            return Err(BallistaError::Process("the cluster's TLS name is empty".into()));
        }
        Ok(ClusterTls {
            ca: Certificate::from_pem(ca),
            identity: Identity::from_pem(cert, key),
            name: files.name.clone(),
        })
    }

    /// A listener's configuration: our certificate, and a client
    /// certificate from the cluster CA required of every peer.
    pub fn server(&self) -> ServerTlsConfig {
        ServerTlsConfig::new().identity(self.identity.clone()).client_ca_root(self.ca.clone())
    }

    /// A client's configuration: trust the cluster CA only, expect the
    /// cluster's name, present our certificate.
    pub fn client(&self) -> ClientTlsConfig {
        ClientTlsConfig::new()
            .ca_certificate(self.ca.clone())
            .identity(self.identity.clone())
            .domain_name(self.name.clone())
    }

    /// Ballista's endpoint hook: every dial becomes `https` with
    /// [`ClusterTls::client`]. An `http://` endpoint is rebuilt (tonic has
    /// no scheme setter) with Ballista's usual transport settings.
    pub fn endpoint_override(&self) -> EndpointOverrideFn {
        let tls = self.client();
        Arc::new(move |endpoint: Endpoint| {
            let endpoint = if endpoint.uri().scheme_str() == Some("https") {
                endpoint
            } else {
                let authority =
                    endpoint.uri().authority().ok_or("an endpoint without a host")?.to_string();
                Endpoint::from_shared(format!("https://{authority}"))?
                    .connect_timeout(Duration::from_secs(20))
                    .tcp_nodelay(true)
                    .tcp_keepalive(Some(Duration::from_secs(3600)))
                    .http2_keep_alive_interval(Duration::from_secs(300))
                    .keep_alive_timeout(Duration::from_secs(20))
                    .keep_alive_while_idle(true)
            };
            Ok(endpoint.tls_config(tls.clone())?)
        })
    }
}
