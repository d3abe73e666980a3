//! dpincon's distributed mode: the same job as `dpincon_engine::run_job`,
//! with the table read and its conflicts detected on Apache DataFusion
//! Ballista executors (`dpincon-ballista`).
//!
//! - [`coordinator`]: the job layer. Clients name datasets the operator
//!   registered ([`datasets`]); submissions are checked without the data
//!   ([`submission`]), admitted against the queue limits, charged in the
//!   dataset's ledger and given a time slot, kept in a durable store
//!   ([`store`]) and run one at a time ([`runner`]), each in a process of
//!   its own ([`job_process`]: `dpincon_engine::run_prepaid_job` with a
//!   `BallistaLoader`, which submits the detection plan to the scheduler,
//!   merges the returned edge runs into the stream Λ and runs the measures
//!   and releases). The coordinator never reads the table. Private jobs'
//!   clients see `queued`, then the end at its release time, and public
//!   failure reasons only.
//! - Binaries `dpincon-scheduler` and `dpincon-executor`: Ballista's
//!   processes with our operators' codec registered.
//! - [`auth`]: client tokens (several, named, revocable); constant-time
//!   compare.
//! - [`tls`]: rustls for the coordinator's server and its clients.
//! - [`client`]: what `dpincon-cli submit/status/result/cancel` call.
//!
//! See README.md in this crate for the task flow and the failure model.

#![warn(missing_docs)]

pub mod auth;
pub mod client;
pub mod coordinator;
pub mod datasets;
pub mod job_process;
mod runner;
pub mod server;
pub mod store;
pub mod submission;
pub mod tls;

use std::time::Duration;

use tonic::transport::{Channel, Endpoint};

pub use dpincon_proto::MAX_MESSAGE_BYTES;

/// The crate's one error type.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// A setting is missing or wrong (token, certificates, addresses).
    #[error("{0}")]
    Config(String),
    /// A file cannot be read.
    #[error("cannot read '{path}': {source}")]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Connecting or serving failed.
    #[error("transport: {0}")]
    Transport(#[from] tonic::transport::Error),
    /// A remote call failed.
    #[error("{}", describe_status(.0))]
    Rpc(#[from] tonic::Status),
    /// The job failed, was cancelled, or its result is not there.
    #[error("{0}")]
    Job(String),
    /// The durable job store failed.
    #[error("{0}")]
    Store(String),
}

impl ClusterError {
    /// The peer could not be reached at all (down, wrong address, TLS
    /// mismatch), as opposed to answering with an error.
    pub fn is_unreachable(&self) -> bool {
        matches!(self, ClusterError::Rpc(s) if s.code() == tonic::Code::Unavailable)
            || matches!(self, ClusterError::Transport(_))
    }

    /// The coordinator refused a job because its dataset's ledger cannot
    /// fund it (nothing was queued or charged).
    pub fn is_budget_refusal(&self) -> bool {
        let budget = submission::reason_text(dpincon_proto::v1::FailureReason::BudgetExhausted);
        matches!(self, ClusterError::Rpc(s)
            if s.code() == tonic::Code::FailedPrecondition && s.message().starts_with(budget))
    }
}

/// A gRPC status as a person should read it (the code in words, then the
/// server's message).
pub fn describe_status(status: &tonic::Status) -> String {
    use tonic::Code;
    let what = match status.code() {
        Code::Unauthenticated => "refused: wrong or missing token (unauthenticated)",
        Code::PermissionDenied => "refused (permission denied)",
        Code::Unavailable => "unavailable",
        Code::DeadlineExceeded => "timed out",
        Code::NotFound => "not found",
        Code::InvalidArgument => "invalid request",
        Code::FailedPrecondition => "not possible now",
        _ => "failed",
    };
    if status.message().is_empty() {
        what.to_string()
    } else {
        format!("{what}: {}", status.message())
    }
}

/// An endpoint for `url` with the settings every client of this crate
/// uses: connect timeout, keep-alive (so a dead peer is noticed on idle
/// connections too) and TLS when `tls` is given.
pub(crate) fn endpoint(url: &str, tls: Option<&tls::ClientTls>) -> Result<Channel, ClusterError> {
    let mut endpoint = Endpoint::from_shared(url.to_string())
        .map_err(|e| ClusterError::Config(format!("bad URL '{url}': {e}")))?
        .connect_timeout(Duration::from_secs(5))
        .tcp_nodelay(true)
        .http2_keep_alive_interval(Duration::from_secs(10))
        .keep_alive_timeout(Duration::from_secs(20));
    if let Some(tls) = tls {
        endpoint = endpoint.tls_config(tls.config_for(url)?)?;
    } else if url.starts_with("https://") {
        return Err(ClusterError::Config(format!(
            "'{url}' is https: give the CA certificate (--tls-ca)"
        )));
    }
    Ok(endpoint.connect_lazy())
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
