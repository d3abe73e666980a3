//! dpincon's distributed mode: the same job as `dpincon_engine::run_job`,
//! with the table read and its conflicts detected on Apache DataFusion
//! Ballista executors (`dpincon-ballista`).
//!
//! - [`coordinator`]: the job layer. Clients name datasets the operator
//!   registered ([`datasets`]); submissions are checked without the data
//!   ([`submission`]), admitted against the queue limits, charged in the
//!   dataset's ledger and given a time slot in one of K lanes
//!   ([`schedule`]), kept in a durable store ([`store`]) and run in that
//!   slot (`runner`), each in a process of
//!   its own ([`job_process`]: `dpincon_engine::run_prepaid_job` with a
//!   [`detection::BallistaLoader`], which submits the detection plan to the
//!   scheduler and assembles the returned partitions into the graph; the
//!   engine then runs the measures and releases). The coordinator never reads the table. Private jobs'
//!   clients see `queued`, then the end at its release time, and public
//!   failure reasons only.
//! - The binary `dpincon-coordinator`; the Ballista processes it runs jobs
//!   on (`dpincon-scheduler`, `dpincon-executor`) are `dpincon-ballista`'s.
//! - [`auth`]: client tokens (several, named, revocable); constant-time
//!   compare.
//! - [`tls`]: rustls for the coordinator's server (its clients are
//!   `dpincon-client`'s).
//!
//! See README.md in this crate for the task flow and the failure model.

#![warn(missing_docs)]

pub mod auth;
pub mod coordinator;
pub mod datasets;
pub mod detection;
pub mod gated;
pub mod job_process;
mod refusal;
mod registry;
pub mod schedule;
pub mod server;
pub mod store;
pub mod submission;
pub mod tls;

pub use dpincon_proto::MAX_MESSAGE_BYTES;

/// The crate's one error type.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// A setting is missing or wrong (token, certificates, addresses).
    #[error("{0}")]
    Config(String),
    /// A dataset's gated audit is refused.
    #[error("{origin}: {source}")]
    Gate {
        /// The dataset's place in the configuration.
        origin: String,
        /// Why.
        #[source]
        source: Box<crate::gated::GateError>,
    },
    /// A file cannot be read.
    #[error("cannot read '{path}': {source}")]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Serving failed.
    #[error("transport: {0}")]
    Transport(#[from] tonic::transport::Error),
    /// The durable job store failed.
    #[error("{0}")]
    Store(String),
    /// A setting the coordinator shares with the Ballista processes (the
    /// cluster's TLS flags, an address) is wrong.
    #[error(transparent)]
    Ballista(#[from] dpincon_ballista::BallistaError),
    /// A ledger directory cannot be locked (another coordinator holds it).
    #[error(transparent)]
    Ledger(Box<dpincon_engine::EngineError>),
}
