//! The registered datasets and the request limits, as the configuration
//! ([`crate::datasets`]) makes them and the checks, the runner and the
//! RPCs read them.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use dpincon_constraints::TableSchema;
use dpincon_engine::{DataPolicy, TableSpec};
use serde::Deserialize;

use crate::gated::GateRegistration;

/// Queue and request limits (`[limits]`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Limits {
    /// Jobs waiting (not counting the running one) before submissions are
    /// refused with "queue full": bounds the coordinator's memory.
    pub max_queued: usize,
    /// Bytes of a job's inline constraint text.
    pub max_constraint_bytes: usize,
    /// Denial constraints of a job (after FD expansion).
    pub max_constraints: usize,
    /// Jobs one client may have waiting: no client can fill the queue
    /// (and so the schedule) alone.
    pub max_queued_per_client: usize,
    /// θ candidates a job may list (the pass keeps a degree array each).
    pub max_candidates: usize,
    /// Jobs that run at once, each in a slot and a process of its own
    /// ([`crate::schedule::Lanes`]): a public number, so that no job's
    /// schedule depends on how long another ran.
    pub slots: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_queued: 64,
            max_constraint_bytes: 64 * 1024,
            max_constraints: 64,
            max_queued_per_client: 8,
            max_candidates: 256,
            slots: 1,
        }
    }
}

/// When a private job's result becomes visible (`release` of a dataset).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReleaseMode {
    /// At a public time fixed when the job is accepted: its slot's start
    /// plus the dataset's `job-deadline` (the default; issue 26).
    FixedTime,
    /// As soon as the job ends: the end time grows with detection work, a
    /// channel on the rows; needs `accept-timing-channel = true`.
    WhenDone,
}

impl ReleaseMode {
    /// The mode as the configuration spells it.
    pub fn name(self) -> &'static str {
        match self {
            ReleaseMode::FixedTime => "fixed-time",
            ReleaseMode::WhenDone => "when-done",
        }
    }
}

/// One registered dataset.
#[derive(Debug, Clone)]
pub struct Dataset {
    /// The name clients use.
    pub name: String,
    /// The table (CSV with a header row, or Parquet; never shown to
    /// clients), as its jobs read it: every column's type declared.
    pub table: TableSpec,
    /// Its jobs' resources, bounds, ledger and cap (a client sets none of it).
    pub policy: DataPolicy,
    /// The declared column types, as the constraint binder sees them.
    pub schema: TableSchema,
    /// Most ε one job may spend (all its measures).
    pub max_job_epsilon: f64,
    /// Least ε per measure (a release too noisy to use wastes budget).
    pub min_epsilon: f64,
    /// A job's time slot: it starts at its slot's start, is stopped at the
    /// slot's end, and (with [`ReleaseMode::FixedTime`]) its result is
    /// visible from then on.
    pub job_deadline: Duration,
    /// When private results become visible.
    pub release: ReleaseMode,
    /// A test dataset: jobs may ask for exact, NON-PRIVATE values or a
    /// fixed seed (`non-private`, `seed`, `brute-force`, `baseline-truemax`).
    pub allow_non_private: bool,
    /// Most memory (address space, bytes) of a job's process: the graph,
    /// the LP kernel and all (public quota).
    pub max_job_memory: Option<u64>,
    /// Most bytes a job's graph spill may take on disk
    /// (public quota).
    pub max_spill_bytes: Option<u64>,
    /// With `max-edges`: ε each private job is charged for its `over
    /// quota` verdict, an (ε, δ)-DP release (`dpincon_release::quota`).
    pub quota_epsilon: Option<f64>,
    /// The operator's gated audit of the dataset, if registered
    /// ([`crate::gated`]).
    pub gate: Option<Arc<GateRegistration>>,
}

impl Dataset {
    /// The dataset's one ledger (`policy`'s, required: checked at parse).
    pub fn ledger(&self) -> &Path {
        self.policy.ledger.as_deref().unwrap_or(Path::new(""))
    }

    /// Total ε the dataset may ever spend (`policy`'s, required and > 0:
    /// checked at parse; 0, which refuses every job, otherwise).
    pub fn budget_cap(&self) -> f64 {
        self.policy.budget_cap.unwrap_or(0.0)
    }

    /// Whether every job's work is bounded by public settings: a
    /// fixed-time dataset with `max-edges` (and so `max-rows`), whose
    /// detection stops at its pair cap (`dpincon_detect::DetectOptions::
    /// max_pairs`) and which accepts only constraints that cap bounds. Its
    /// slot can then be sized to hold any job (the cluster README, "Work
    /// bounded by public settings").
    pub fn bounds_work(&self) -> bool {
        self.release == ReleaseMode::FixedTime && self.policy.max_edges.is_some()
    }
}
