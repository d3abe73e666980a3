//! Mutual TLS on every hop of the cluster (issue 27): the scheduler's and
//! the executors' listeners accept only peers with a certificate from the
//! cluster's CA, and every client of them (coordinator, executors
//! heart-beating and fetching shuffle data) presents one.
//!
//! Ballista 55 has no TLS of its own; its hooks are enough
//! (`docs/notes/ballista-tls.md`, hop by hop): we serve the
//! scheduler's gRPC ourselves, replace the executor's Flight server
//! (`override_arrow_flight_service`), and rewrite every client endpoint to
//! `https` with our identity (`EndpointOverrideFn`; tonic ignores TLS on an
//! `http://` URI, and Ballista hard-codes `http://` at several dial sites).
//! Executors run pull-scheduled, so they open no other listener.
//!
//! **Names per role** (issue 47). Each role's certificate carries its own
//! DNS name derived from the cluster's name ([`DEFAULT_CLUSTER_NAME`], or
//! `--cluster-tls-name`): [`Role::dns_name`], `scheduler.dpincon-cluster`,
//! `executor.dpincon-cluster` and `coordinator.dpincon-cluster` by default.
//! A client checks the name of the role it dials, whatever address it
//! dials (executors advertise pod IPs that no certificate can list in
//! advance): the scheduler at its configured address, an executor at any
//! other ([`ClusterTls::endpoint_override`]). So a stolen executor
//! certificate cannot serve as the scheduler to executors or job processes.
//! Listeners check the client's role too ([`ClusterTls::admit`]): the
//! scheduler and the executors' Flight servers admit executors and the
//! coordinator, never a scheduler's certificate. Which calls each role may
//! make on a listener is not checked (an executor's certificate may still
//! call the scheduler's job API).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ballista_core::extension::EndpointOverrideFn;
use http::uri::Authority;
use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{CertificateDer, ServerName};
use serde::{Deserialize, Serialize};
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity, ServerTlsConfig};

use crate::BallistaError;

/// The cluster's name unless configured otherwise: each role's
/// certificate carries `ROLE.` this ([`Role::dns_name`]).
pub const DEFAULT_CLUSTER_NAME: &str = "dpincon-cluster";

/// A process's role on the cluster's network, which its certificate names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// `dpincon-scheduler`: serves the scheduler's gRPC.
    Scheduler,
    /// `dpincon-executor`: dials the scheduler and other executors, serves
    /// Arrow Flight.
    Executor,
    /// `dpincon-coordinator` and its job processes: dial the scheduler
    /// and the executors, serve nothing on the cluster's network.
    Coordinator,
}

impl Role {
    /// The role's label, the first label of its certificate's name.
    pub fn label(self) -> &'static str {
        match self {
            Role::Scheduler => "scheduler",
            Role::Executor => "executor",
            Role::Coordinator => "coordinator",
        }
    }

    /// The DNS name this role's certificates carry on cluster `cluster`:
    /// `scheduler.dpincon-cluster` etc.
    pub fn dns_name(self, cluster: &str) -> String {
        format!("{}.{cluster}", self.label())
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// Where a process's cluster credentials are (what crosses to a job
/// process: paths, never key bytes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ClusterTlsFiles {
    /// The cluster CA's certificate (PEM).
    pub ca: PathBuf,
    /// This process's certificate (PEM), signed by the CA, carrying its
    /// role's name.
    pub cert: PathBuf,
    /// Its private key (PEM).
    pub key: PathBuf,
    /// The cluster's name, from which every role's name is derived.
    pub cluster: String,
    /// This process's role.
    pub role: Role,
}

/// A process's cluster credentials, loaded.
#[derive(Clone)]
pub struct ClusterTls {
    ca: Certificate,
    identity: Identity,
    cluster: String,
    role: Role,
}

impl std::fmt::Debug for ClusterTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("ClusterTls")
            .field("cluster", &self.cluster)
            .field("role", &self.role)
            .finish_non_exhaustive()
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

/// Whether the end-entity certificate `der` carries the DNS name `name`
/// (webpki's own check, as rustls makes it in a handshake).
fn carries(der: &CertificateDer<'_>, name: &ServerName<'_>) -> bool {
    webpki::EndEntityCert::try_from(der)
        .is_ok_and(|cert| cert.verify_is_valid_for_subject_name(name).is_ok())
}

fn server_name(name: String) -> Result<ServerName<'static>, BallistaError> {
    ServerName::try_from(name)
        .map_err(|e| BallistaError::Process(format!("the cluster's TLS name: {e}")))
}

impl ClusterTls {
    /// Reads the files; a file that is not PEM of the right kind is an
    /// error naming it (tonic would only fail at the first handshake).
    /// A certificate without its role's name is only warned of on standard
    /// error: the check that protects the cluster is its peers' (they
    /// refuse it in the handshake); the warning names the likely mistake,
    /// another role's Secret mounted.
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
        if files.cluster.is_empty() {
            return Err(BallistaError::Process("the cluster's TLS name is empty".into()));
        }
        let own = files.role.dns_name(&files.cluster);
        let own_name = server_name(own.clone())?;
        // The first certificate of the file is ours (the chain follows it).
        let leaf = CertificateDer::pem_slice_iter(&cert).next().and_then(Result::ok);
        if !leaf.is_some_and(|der| carries(&der, &own_name)) {
            eprintln!(
                "WARNING: '{}' does not carry the DNS name {own}: cluster peers will refuse \
                 this {} (each role has its own certificate)",
                files.cert.display(),
                files.role
            );
        }
        Ok(ClusterTls {
            ca: Certificate::from_pem(ca),
            identity: Identity::from_pem(cert, key),
            cluster: files.cluster.clone(),
            role: files.role,
        })
    }

    /// A listener's configuration: our certificate, and a client
    /// certificate from the cluster CA required of every peer (which roles
    /// may call: [`ClusterTls::admit`]).
    pub fn server(&self) -> ServerTlsConfig {
        ServerTlsConfig::new().identity(self.identity.clone()).client_ca_root(self.ca.clone())
    }

    /// A listener's check of its clients' roles: a call whose client
    /// certificate carries none of `clients`' names is refused
    /// (`PERMISSION_DENIED`) before it reaches the service.
    pub fn admit(&self, clients: &[Role]) -> Result<AdmitRoles, BallistaError> {
        let names = clients
            .iter()
            .map(|role| Ok((*role, server_name(role.dns_name(&self.cluster))?)))
            .collect::<Result<Vec<_>, BallistaError>>()?;
        Ok(AdmitRoles { names: names.into() })
    }

    /// A client's configuration for dialling a `peer`: trust the cluster CA
    /// only, expect `peer`'s name, present our certificate.
    pub fn client_for(&self, peer: Role) -> ClientTlsConfig {
        ClientTlsConfig::new()
            .ca_certificate(self.ca.clone())
            .identity(self.identity.clone())
            .domain_name(peer.dns_name(&self.cluster))
    }

    /// Ballista's endpoint hook: every dial becomes `https`, with
    /// [`ClusterTls::client_for`] the scheduler when it dials `scheduler`
    /// (its address as configured; `None` in the scheduler itself), an
    /// executor at any other address (executors advertise addresses no
    /// one configures). An `http://` endpoint is rebuilt (tonic has no
    /// scheme setter) with Ballista's usual transport settings.
    pub fn endpoint_override(&self, scheduler: Option<Authority>) -> EndpointOverrideFn {
        let to_scheduler = self.client_for(Role::Scheduler);
        let to_executor = self.client_for(Role::Executor);
        Arc::new(move |endpoint: Endpoint| {
            let authority = endpoint.uri().authority().ok_or("an endpoint without a host")?.clone();
            let tls = if scheduler.as_ref() == Some(&authority) {
                to_scheduler.clone()
            } else {
                to_executor.clone()
            };
            let endpoint = if endpoint.uri().scheme_str() == Some("https") {
                endpoint
            } else {
                Endpoint::from_shared(format!("https://{authority}"))?
                    .connect_timeout(Duration::from_secs(20))
                    .tcp_nodelay(true)
                    .tcp_keepalive(Some(Duration::from_secs(3600)))
                    .http2_keep_alive_interval(Duration::from_secs(300))
                    .keep_alive_timeout(Duration::from_secs(20))
                    .keep_alive_while_idle(true)
            };
            Ok(endpoint.tls_config(tls)?)
        })
    }
}

/// A listener's check of its clients' roles ([`ClusterTls::admit`]), as a
/// tonic interceptor. The handshake has already verified the client's
/// certificate chain against the cluster CA; this reads only its names.
#[derive(Clone)]
pub struct AdmitRoles {
    names: Arc<[(Role, ServerName<'static>)]>,
}

impl std::fmt::Debug for AdmitRoles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let roles: Vec<Role> = self.names.iter().map(|(role, _)| *role).collect();
        f.debug_struct("AdmitRoles").field("roles", &roles).finish()
    }
}

impl AdmitRoles {
    /// The admitted role whose name the client certificate `der` carries.
    pub fn role_of(&self, der: &CertificateDer<'_>) -> Option<Role> {
        self.names.iter().find(|(_, name)| carries(der, name)).map(|(role, _)| *role)
    }
}

impl tonic::service::Interceptor for AdmitRoles {
    fn call(&mut self, request: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        let certs = request.peer_certs();
        match certs.as_ref().and_then(|certs| certs.first()).and_then(|c| self.role_of(c)) {
            Some(_) => Ok(request),
            None => {
                let roles: Vec<&str> = self.names.iter().map(|(role, _)| role.label()).collect();
                Err(tonic::Status::permission_denied(format!(
                    "this listener admits only the cluster's {} certificates",
                    roles.join(" and ")
                )))
            }
        }
    }
}
