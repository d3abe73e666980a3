//! dpincon's conflict detection on Apache DataFusion Ballista: our
//! DataFusion physical operators, their codec, the plan of a job, and the
//! coordinator's side (submitting the plan, assembling the graph).
//!
//! - [`scan`]: `TableScanExec`, the table read by the executors with row
//!   ids = row positions (SPEC §1) from the Parquet footer's row counts
//!   or a CSV table's cut.
//! - [`detect`]: `DetectExec`, the embedded detector run per hash
//!   partition of a constraint group's equality attributes (Ballista's
//!   shuffle does the partitioning), or per pair of row blocks for the
//!   constraints without equality, emitting a summary and its graph
//!   unfrozen (row records and multipartite groups) in global row ids.
//! - [`codec`]: `DpinconCodec`, wrapping Ballista's codec; the scheduler,
//!   the executors and the client all need it.
//! - [`plan`]: the physical plan of a job, from constraints and schema.
//! - [`assemble`]: every partition at once → their row records filed by
//!   shard and their groups kept, on every core → the frozen (spilling)
//!   graph, walked as Λ.
//! - [`job`]: Ballista's job API as the coordinator needs it: submit,
//!   stream the result, clean or cancel by the job's id.
//! - [`process`]: configurations of our scheduler and executor processes,
//!   and an in-process cluster for tests.
//! - [`server`]: what the process binaries share (cluster TLS flags, the
//!   readiness line, plain-HTTP probes, the stop signal); the binaries
//!   `dpincon-scheduler` and `dpincon-executor` (`src/bin/`) are Ballista's
//!   processes with our codec registered.
//! - [`tls`]: mutual TLS on every hop of the cluster, a certificate name
//!   per role (listeners and dials).
//!
//! The pure crates (detect, graph, measures, release) know nothing of
//! Ballista; this crate only wires them into DataFusion operators.

#![warn(missing_docs)]

pub mod assemble;
pub mod codec;
pub mod detect;
pub mod job;
pub mod plan;
pub mod process;
pub mod scan;
pub mod server;
pub mod tls;

pub use codec::DpinconCodec;
pub use job::{BallistaJobId, JobProgress, Scheduler};

/// The crate's one error type.
#[derive(Debug, thiserror::Error)]
pub enum BallistaError {
    /// A constraint is malformed or does not fit the table.
    #[error(transparent)]
    Constraint(#[from] dpincon_constraints::ConstraintError),
    /// The table's schema or encoding failed.
    #[error(transparent)]
    Source(#[from] dpincon_source::SourceError),
    /// Detection could not be planned.
    #[error(transparent)]
    Detect(#[from] dpincon_detect::DetectError),
    /// The plan could not be built.
    #[error("plan: {0}")]
    Plan(String),
    /// DataFusion or Ballista failed (building, submitting or running).
    #[error("distributed engine: {0}")]
    Engine(#[from] datafusion::error::DataFusionError),
    /// The result could not be assembled (disk, or a malformed result).
    #[error("assembling the graph: {0}")]
    Assemble(String),
    /// A process could not start (a bad flag, an address, credentials).
    #[error("{0}")]
    Process(String),
    /// A socket's own address is unknown.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// Ballista's scheduler or executor failed to start or stopped.
    #[error(transparent)]
    Runtime(#[from] ballista_core::error::BallistaError),
    /// The job passed a public quota (its disk use).
    #[error("over quota: {0}")]
    OverQuota(String),
}
