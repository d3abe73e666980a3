//! A client of the dpincon coordinator: what `dpincon-cli submit`,
//! `status`, `result`, `cancel` and `audit --coordinator` call. It speaks
//! the coordinator's gRPC API (`dpincon-proto`) with a bearer token and
//! TLS, and links neither DataFusion nor Ballista, so the CLI's remote
//! commands stay light.
//!
//! - [`client`]: [`Client`], the calls, and a job's status as people read it.
//! - [`job`]: [`ClientJob`], what a client may ask (the options are
//!   `dpincon-api`', shared with the engine).
//! - [`auth`]: the client's [`Token`] (from a file or `DPINCON_TOKEN`).
//! - [`tls`]: [`ClientTls`], the CA a client trusts.

#![warn(missing_docs)]

pub mod auth;
pub mod client;
pub mod job;
pub mod tls;

use std::time::Duration;

use tonic::transport::{Channel, Endpoint};

pub use auth::Token;
pub use client::{Client, StatusView, progress_line};
pub use job::ClientJob;
pub use tls::ClientTls;

/// The crate's one error type.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
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
    /// Connecting failed.
    #[error("transport: {0}")]
    Transport(#[from] tonic::transport::Error),
    /// A remote call failed.
    #[error("{}", describe_status(.0))]
    Rpc(#[from] tonic::Status),
    /// The job failed, was cancelled, or its result is not there.
    #[error("{0}")]
    Job(String),
}

impl ClientError {
    /// The coordinator could not be reached at all (down, wrong address,
    /// TLS mismatch), as opposed to answering with an error.
    pub fn is_unreachable(&self) -> bool {
        matches!(self, ClientError::Rpc(s) if s.code() == tonic::Code::Unavailable)
            || matches!(self, ClientError::Transport(_))
    }

    /// The coordinator refused a job because its dataset's ledger cannot
    /// fund it (nothing was queued or charged).
    pub fn is_budget_refusal(&self) -> bool {
        let budget = dpincon_proto::v1::FailureReason::BudgetExhausted.text();
        matches!(self, ClientError::Rpc(s)
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

/// An endpoint for `url` with the settings every client uses: connect
/// timeout, keep-alive (so a dead peer is noticed on idle connections too)
/// and TLS when `tls` is given.
fn endpoint(url: &str, tls: Option<&ClientTls>) -> Result<Channel, ClientError> {
    let mut endpoint = Endpoint::from_shared(url.to_string())
        .map_err(|e| ClientError::Config(format!("bad URL '{url}': {e}")))?
        .connect_timeout(Duration::from_secs(5))
        .tcp_nodelay(true)
        .http2_keep_alive_interval(Duration::from_secs(10))
        .keep_alive_timeout(Duration::from_secs(20));
    if let Some(tls) = tls {
        endpoint = endpoint.tls_config(tls.config_for(url)?)?;
    } else if url.starts_with("https://") {
        return Err(ClientError::Config(format!(
            "'{url}' is https: give the CA certificate (--tls-ca)"
        )));
    }
    Ok(endpoint.connect_lazy())
}
