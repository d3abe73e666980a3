//! The operator's configuration (`dpincon-coordinator --config FILE`): the
//! datasets clients may name, each with its table, its declared schema, its
//! ledger and budget cap and its per-job ε limits; the job store's
//! directory; the queue and request limits.
//!
//! In cluster mode the operator owns everything that protects the table
//! (SPEC §8): clients name a dataset and never a path, a ledger or a cap.
//! The schema is declared, never inferred from the private rows: binding a
//! client's constraints against it needs no row, so a bad constraint is
//! refused before the job is accepted, whatever the data.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use dpincon_api::ByteSize;
use dpincon_engine::{DataPolicy, TableSpec};
use serde::Deserialize;

use crate::ClusterError;
use crate::gated::{GateError, GateRegistration};

pub use crate::registry::{Dataset, Limits, ReleaseMode};

/// Most `[limits] slots`: every slot may hold a job process and its
/// graph at once.
const MAX_SLOTS: usize = 64;

/// The least `max-job-memory`.
const MIN_JOB_MEMORY: ByteSize = ByteSize(64 << 20);

/// The default `job-deadline`.
const DEFAULT_DEADLINE: Duration = Duration::from_secs(600);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawConfig {
    state_dir: PathBuf,
    #[serde(default)]
    limits: Limits,
    #[serde(default)]
    datasets: BTreeMap<String, RawDataset>,
}

/// A dataset as the file gives it: the engine's table and policy (one
/// declaration each, `dpincon_engine`), and what only a coordinator adds.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawDataset {
    #[serde(flatten)]
    table: TableSpec,
    #[serde(flatten)]
    policy: DataPolicy,
    max_job_epsilon: f64,
    #[serde(default)]
    min_epsilon: Option<f64>,
    #[serde(default)]
    job_deadline: Option<dpincon_api::Duration>,
    #[serde(default)]
    release: Option<ReleaseMode>,
    #[serde(default)]
    accept_timing_channel: bool,
    #[serde(default)]
    accept_deadline_channel: bool,
    #[serde(default)]
    allow_non_private: bool,
    #[serde(default)]
    quota_epsilon: Option<f64>,
    #[serde(default)]
    max_job_memory: Option<ByteSize>,
    #[serde(default)]
    max_spill_bytes: Option<ByteSize>,
    #[serde(default)]
    gate: Option<crate::gated::RawGate>,
}

/// The whole configuration.
#[derive(Debug, Clone)]
pub struct CoordinatorConfig {
    /// Where the job store lives (created if missing).
    pub state_dir: PathBuf,
    /// Queue and request limits.
    pub limits: Limits,
    /// The datasets by name.
    pub datasets: BTreeMap<String, Arc<Dataset>>,
    /// Every dataset's release mode: one per coordinator
    /// (datasets of different modes cannot share one: the cluster README).
    pub release: ReleaseMode,
}

fn bad(origin: &str, what: impl std::fmt::Display) -> ClusterError {
    ClusterError::Config(format!("{origin}: {what}"))
}

fn positive(origin: &str, key: &str, v: f64) -> Result<f64, ClusterError> {
    if v.is_finite() && v > 0.0 { Ok(v) } else { Err(bad(origin, format!("{key} must be > 0"))) }
}

impl CoordinatorConfig {
    /// Reads and checks the file at `path` (see [`CoordinatorConfig::parse`]).
    pub fn load(path: &Path) -> Result<Self, ClusterError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ClusterError::Io { path: path.to_path_buf(), source })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses the TOML `text` and checks every dataset: limits in range,
    /// the table readable and its header equal to the declared columns
    /// (names only: no row is read), the ledger's directory present.
    pub fn parse(text: &str, origin: &str) -> Result<Self, ClusterError> {
        let raw: RawConfig = dpincon_api::toml_file::from_str(text).map_err(|e| bad(origin, e))?;
        let l = &raw.limits;
        if [l.max_queued, l.max_constraints, l.max_queued_per_client, l.max_candidates, l.slots]
            .contains(&0)
        {
            return Err(bad(
                origin,
                "[limits] max-queued, max-constraints, max-queued-per-client, max-candidates and \
                 slots must be > 0",
            ));
        }
        if l.slots > MAX_SLOTS {
            return Err(bad(origin, format!("[limits] slots must be at most {MAX_SLOTS}")));
        }
        let mut datasets = BTreeMap::new();
        for (name, d) in raw.datasets {
            let at = format!("{origin}: [datasets.{name}]");
            if name.is_empty()
                || !name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            {
                return Err(bad(&at, "names use letters, digits, '-', '_' and '.' only"));
            }
            let Some(ledger) = d.policy.ledger.as_deref() else {
                return Err(bad(&at, "missing field `ledger`"));
            };
            let Some(budget_cap) = d.policy.budget_cap else {
                return Err(bad(&at, "missing field `budget-cap`"));
            };
            let budget_cap = positive(&at, "budget-cap", budget_cap)?;
            let max_job_epsilon = positive(&at, "max-job-epsilon", d.max_job_epsilon)?;
            if max_job_epsilon > budget_cap {
                return Err(bad(&at, "max-job-epsilon exceeds budget-cap"));
            }
            let min_epsilon = match d.min_epsilon {
                None => 0.0,
                Some(m) => positive(&at, "min-epsilon", m)?,
            };
            if d.table.postgres.is_some() || d.table.data.is_none() {
                return Err(bad(
                    &at,
                    "`data`: a dataset's table is a CSV or Parquet file or object",
                ));
            }
            if d.table.infer_rows.is_some() {
                return Err(bad(
                    &at,
                    "`infer-rows`: a dataset declares its column types (`schema`)",
                ));
            }
            // The declared schema is checked against the header or the
            // footer (no row read); a CSV table needs one: its types are
            // declared, never inferred from the private rows.
            let schema = match d.table.declared_schema() {
                Ok(Some(schema)) => schema,
                Ok(None) => {
                    return Err(bad(
                        &at,
                        "a CSV dataset needs `schema`: every column's type, declared (never \
                         inferred from the private rows)",
                    ));
                }
                Err(dpincon_source::SourceError::Schema(e)) => {
                    return Err(bad(&at, format!("`schema` {e}")));
                }
                Err(e) => return Err(bad(&at, e)),
            };
            let ledger_dir = ledger_dir(ledger);
            if !ledger_dir.is_dir() {
                return Err(bad(
                    &at,
                    format!("the ledger's directory '{}' does not exist", ledger_dir.display()),
                ));
            }
            let job_deadline = match d.job_deadline {
                None => DEFAULT_DEADLINE,
                Some(span) if (1..=7 * 86_400).contains(&span.get().as_secs()) => span.get(),
                Some(span) => {
                    return Err(bad(
                        &at,
                        format!(
                            "job-deadline '{span}': give a duration from 1s to 7d, e.g. \"90s\", \
                             \"10m\", \"2h\""
                        ),
                    ));
                }
            };
            let release = d.release.unwrap_or(ReleaseMode::FixedTime);
            if release == ReleaseMode::WhenDone && !d.accept_timing_channel {
                return Err(bad(
                    &at,
                    "release = \"when-done\" lets a client time detection, which depends on the \
                     rows: set accept-timing-channel = true to accept that channel",
                ));
            }
            if d.policy.max_edges == Some(0) {
                return Err(bad(&at, "max-edges must be > 0"));
            }
            let quota_epsilon = quota(&at, d.policy.max_edges, d.policy.max_rows, d.quota_epsilon)?;
            let max_job_memory = d.max_job_memory.map(ByteSize::bytes);
            if let Some(size) = d.max_job_memory.filter(|s| s.bytes() < MIN_JOB_MEMORY.bytes()) {
                return Err(bad(
                    &at,
                    format!(
                        "max-job-memory '{size}': give a size of at least {MIN_JOB_MEMORY}, \
                         e.g. \"8GiB\""
                    ),
                ));
            }
            let max_spill_bytes = d.max_spill_bytes.map(ByteSize::bytes);
            let mut dataset = Dataset {
                name: name.clone(),
                table: d.table.with_declared_types(),
                policy: d.policy,
                schema,
                max_job_epsilon,
                min_epsilon,
                job_deadline,
                release,
                allow_non_private: d.allow_non_private,
                max_job_memory,
                max_spill_bytes,
                quota_epsilon,
                gate: None,
            };
            // A private fixed-time dataset bounds its jobs' work, or names
            // the deadline channel it accepts. Where it bounds the work, an
            // exact memory or spill quota would still fail some jobs within
            // the bounds on some tables and not others: one exact bit each;
            // the machine is sized for the bound instead (cluster README,
            // "Work bounded by public settings").
            let bounded = dataset.bounds_work();
            if release == ReleaseMode::FixedTime
                && !bounded
                && !dataset.allow_non_private
                && !d.accept_deadline_channel
            {
                return Err(bad(
                    &at,
                    "a fixed-time dataset needs max-edges (and max-rows): they bound every \
                     job's work, so that a slot can hold any job and `deadline exceeded` says \
                     nothing of the rows (cluster README, \"Work bounded by public settings\"); \
                     set accept-deadline-channel = true to accept that channel instead",
                ));
            }
            if bounded && (dataset.max_job_memory.is_some() || dataset.max_spill_bytes.is_some()) {
                return Err(bad(
                    &at,
                    "max-job-memory and max-spill-bytes cannot go with max-edges on a fixed-time \
                     dataset: their exact outcome would tell a client whether this table's job \
                     needed more; max-edges already bounds the graph (size memory-limit and the \
                     spill disk for it)",
                ));
            }
            if let Some(gate) = d.gate {
                let registered = register_gate(gate, &dataset, &raw.limits);
                let registered = registered.map_err(|source| ClusterError::Gate {
                    origin: at.clone(),
                    source: Box::new(source),
                })?;
                dataset.gate = Some(Arc::new(registered));
            }
            datasets.insert(name, Arc::new(dataset));
        }
        if datasets.is_empty() {
            return Err(bad(origin, "no [datasets.NAME] table: clients could run nothing"));
        }
        same_source_same_ledger(origin, &datasets)?;
        let release = one_release_mode(origin, &datasets)?;
        Ok(CoordinatorConfig { state_dir: raw.state_dir, limits: raw.limits, datasets, release })
    }

    /// Every directory this coordinator must own alone: the state
    /// directory and each ledger's directory (deduplicated).
    pub fn owned_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = vec![self.state_dir.clone()];
        for d in self.datasets.values() {
            let dir = ledger_dir(d.ledger());
            let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        dirs
    }
}

/// `dataset`'s gated audit, checked as a client's job on it would be
/// (constraints against the declared schema and the limits, the options
/// by the engine), and its plan and hold against the dataset's budget.
fn register_gate(
    gate: crate::gated::RawGate,
    dataset: &Dataset,
    limits: &Limits,
) -> Result<GateRegistration, GateError> {
    if dataset.policy.max_rows.is_none() {
        return Err(GateError::NoMaxRows);
    }
    let registered =
        gate.register(dataset.ledger(), dataset.budget_cap(), dataset.quota_epsilon)?;
    let hold: f64 = registered.hold(dataset.quota_epsilon).iter().map(|c| c.1).sum();
    if hold > dataset.max_job_epsilon * (1.0 + 1e-9) {
        return Err(GateError::Hold { hold, max: dataset.max_job_epsilon });
    }
    crate::submission::check_registered(&registered, dataset, limits)?;
    Ok(registered)
}

/// Jobs of every dataset share the coordinator's lanes and its Ballista
/// executors, so one job's timing shows in another's: a `when-done` job
/// started after a fixed-time one, or run beside it, would time it. So a
/// coordinator serves datasets of one release mode only (the cluster
/// README, "What a client observes").
fn one_release_mode(
    origin: &str,
    datasets: &BTreeMap<String, Arc<Dataset>>,
) -> Result<ReleaseMode, ClusterError> {
    let mut all = datasets.values();
    let Some(first) = all.next() else { return Ok(ReleaseMode::FixedTime) };
    match all.find(|d| d.release != first.release) {
        None => Ok(first.release),
        Some(other) => Err(bad(
            origin,
            format!(
                "datasets '{}' ({}) and '{}' ({}) cannot share a coordinator: jobs share its \
                     slots and executors, so a when-done job's end would time the fixed-time \
                     jobs before and beside it. Serve them from two coordinators",
                first.name,
                first.release.name(),
                other.name,
                other.release.name()
            ),
        )),
    }
}

/// Two datasets on one table must share one ledger: with two, each cap
/// would hold for its own jobs only and the table would spend both.
fn same_source_same_ledger(
    origin: &str,
    datasets: &BTreeMap<String, Arc<Dataset>>,
) -> Result<(), ClusterError> {
    // (An s3:// URL does not canonicalize: compared as written.)
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let mut seen: BTreeMap<PathBuf, &Dataset> = BTreeMap::new();
    for d in datasets.values() {
        match seen.get(&canonical(&d.table.name())) {
            Some(first) if canonical(first.ledger()) != canonical(d.ledger()) => {
                return Err(bad(
                    origin,
                    format!(
                        "datasets '{}' and '{}' read the same table with different ledgers: \
                         give them one ledger (and cap), or the table spends both caps",
                        first.name, d.name
                    ),
                ));
            }
            Some(_) => {}
            None => {
                seen.insert(canonical(&d.table.name()), d);
            }
        }
    }
    Ok(())
}

/// The default `quota-epsilon`.
const DEFAULT_QUOTA_EPSILON: f64 = 0.1;

/// `max-edges`'s verdict ε, checked: the cap must leave room below it for
/// the verdict's noise, on tables of at most `max-rows` rows.
fn quota(
    at: &str,
    max_edges: Option<u64>,
    max_rows: Option<u64>,
    epsilon: Option<f64>,
) -> Result<Option<f64>, ClusterError> {
    let Some(cap) = max_edges else {
        return match epsilon {
            Some(_) => Err(bad(at, "quota-epsilon goes with max-edges")),
            None => Ok(None),
        };
    };
    let epsilon = positive(at, "quota-epsilon", epsilon.unwrap_or(DEFAULT_QUOTA_EPSILON))?;
    let Some(n_max) = max_rows else {
        return Err(bad(
            at,
            "max-edges needs max-rows: one row adds at most max-rows − 1 edges, the bound the \
             over-quota verdict's noise is scaled to",
        ));
    };
    dpincon_release::quota::QuotaTest::new(cap, n_max, epsilon).map_err(|e| bad(at, e))?;
    Ok(Some(epsilon))
}

fn ledger_dir(ledger: &Path) -> PathBuf {
    match ledger.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

#[cfg(test)]
mod tests;
