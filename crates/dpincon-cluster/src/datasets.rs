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
mod tests {
    use dpincon_source::DataFormat;

    use super::*;

    fn config(dir: &Path, dataset: &str) -> String {
        format!(
            "state-dir = {:?}\n[limits]\nmax-queued = 3\n[datasets.t]\ndata = {:?}\n{dataset}",
            dir.join("state").display().to_string(),
            dir.join("t.csv").display().to_string()
        )
    }

    #[test]
    fn a_dataset_declares_every_column_and_its_budget() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t.csv"), "Zip,City\n1,a\n").unwrap();
        let ledger = dir.path().join("t.ledger").display().to_string();
        let good = format!(
            "schema = \"Zip:int, City:string\"\nledger = {ledger:?}\nbudget-cap = 5.0\n\
             max-job-epsilon = 1.5\nmin-epsilon = 0.05\naccept-deadline-channel = true\n"
        );
        let c = CoordinatorConfig::parse(&config(dir.path(), &good), "c.toml").unwrap();
        let t = &c.datasets["t"];
        assert_eq!(c.limits.max_queued, 3);
        assert_eq!((t.budget_cap(), t.max_job_epsilon, t.min_epsilon), (5.0, 1.5, 0.05));
        assert_eq!(t.table.schema.as_ref().unwrap().to_string(), "Zip:int, City:string");
        assert_eq!((t.table.infer_rows, t.table.file_format()), (Some(1), Some(DataFormat::Csv)));
        // The jobs' policy carries the dataset's ledger and cap.
        assert_eq!(
            (t.policy.ledger.as_deref(), t.policy.budget_cap),
            (Some(Path::new(&ledger)), Some(5.0))
        );
        assert_eq!(t.schema.columns.len(), 2);
        assert_eq!(c.owned_dirs().len(), 2);

        for (change, why) in [
            (good.replace("Zip:int, City:string", "Zip:int"), "every column"),
            (good.replace("Zip:int, City:string", "City:string, Zip:int"), "in order"),
            (good.replace("budget-cap = 5.0", "budget-cap = 1.0"), "exceeds budget-cap"),
            (good.replace("budget-cap = 5.0", "budget-cap = -1.0"), "budget-cap must be > 0"),
            (good.replace("t.ledger", "no/such/dir/t.ledger"), "does not exist"),
            (good.replace("min-epsilon", "seed = 1\nmin-epsilon"), "unknown field"),
            (good.replace("ledger =", "# ledger ="), "missing field `ledger`"),
        ] {
            let err = CoordinatorConfig::parse(&config(dir.path(), &change), "c.toml")
                .unwrap_err()
                .to_string();
            assert!(err.contains(why), "{why}: {err}");
        }
    }

    /// The keys of issue 26: defaults, and each refused when unknown,
    /// malformed or out of range, naming the key.
    #[test]
    fn slots_quotas_and_test_datasets_are_checked_at_start() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t.csv"), "Zip,City\n1,a\n").unwrap();
        std::fs::write(dir.path().join("u.csv"), "Zip,City\n1,a\n").unwrap();
        let ledger = dir.path().join("t.ledger").display().to_string();
        let good = format!(
            "schema = \"Zip:int, City:string\"\nledger = {ledger:?}\nbudget-cap = 5.0\n\
             max-job-epsilon = 1.5\n"
        );
        // A private fixed-time dataset bounds its jobs' work, or accepts
        // the deadline channel in so many words.
        let err = CoordinatorConfig::parse(&config(dir.path(), &good), "c.toml").unwrap_err();
        assert!(err.to_string().contains("accept-deadline-channel = true"), "{err}");
        let good = format!("{good}accept-deadline-channel = true\n");
        let parse =
            |dataset: &str| CoordinatorConfig::parse(&config(dir.path(), dataset), "c.toml");
        let t = parse(&good).unwrap().datasets["t"].clone();
        assert_eq!(t.job_deadline, Duration::from_secs(600));
        assert_eq!(t.release, ReleaseMode::FixedTime);
        assert!(!t.allow_non_private);
        assert_eq!((t.policy.max_edges, t.max_job_memory, t.max_spill_bytes), (None, None, None));
        let set = parse(&format!(
            "{good}job-deadline = \"90s\"\nrelease = \"when-done\"\naccept-timing-channel = true\n\
             allow-non-private = true\nmax-edges = 100000000\nmax-rows = 1000\n\
             max-job-memory = \"1GiB\"\nmax-spill-bytes = \"2GiB\"\n"
        ))
        .unwrap()
        .datasets["t"]
            .clone();
        assert_eq!(set.job_deadline, Duration::from_secs(90));
        assert_eq!(set.release, ReleaseMode::WhenDone);
        assert!(set.allow_non_private);
        assert_eq!(
            (set.policy.max_edges, set.max_job_memory, set.max_spill_bytes),
            (Some(100_000_000), Some(1 << 30), Some(2 << 30))
        );
        assert_eq!(set.quota_epsilon, Some(0.1));
        for (extra, why) in [
            ("job-deadline = \"soon\"", "'soon' is not a duration"),
            ("job-deadline = \"0s\"", "from 1s to 7d"),
            ("job-deadline = \"8d\"", "from 1s to 7d"),
            ("job-deadline = 90", "job-deadline"),
            ("release = \"eventually\"", "release"),
            ("release = \"when-done\"", "accept-timing-channel = true"),
            ("accept-timing-channel = \"yes\"", "accept-timing-channel"),
            ("allow-non-private = 1", "allow-non-private"),
            ("max-edges = 0", "max-edges must be > 0"),
            ("max-edges = -5", "max-edges"),
            ("max-edges = 1000", "max-edges needs max-rows"),
            ("max-edges = 1000\nmax-rows = 100", "give max-edges of at least"),
            ("max-edges = 100000000\nmax-rows = 1000\nquota-epsilon = 0", "quota-epsilon"),
            ("quota-epsilon = 0.1", "quota-epsilon goes with max-edges"),
            ("max-job-memory = \"lots\"", "'lots' is not a memory size"),
            ("max-job-memory = \"1MiB\"", "at least 64MiB"),
            ("max-spill-bytes = \"-1G\"", "'-1G' is not a memory size"),
            (
                "max-edges = 100000000\nmax-rows = 1000\nmax-job-memory = \"1GiB\"",
                "cannot go with max-edges on a fixed-time",
            ),
            (
                "max-edges = 100000000\nmax-rows = 1000\nmax-spill-bytes = \"1GiB\"",
                "cannot go with max-edges on a fixed-time",
            ),
            ("memory-limit = \"huge\"", "'huge' is not a memory size"),
            ("max-deadline = \"1m\"", "unknown field `max-deadline`"),
        ] {
            let err = parse(&format!("{good}{extra}\n")).unwrap_err().to_string();
            assert!(err.contains(why), "{extra}: {err}");
            assert!(err.contains("[datasets.t]") || err.contains("c.toml"), "{extra}: {err}");
            // The key is named: in the message, or on the line TOML shows.
            let mut keys = extra.lines().filter_map(|line| line.split(" =").next());
            assert!(keys.any(|key| err.contains(key)), "{extra}: {err}");
        }
        // Limits: unknown, malformed, zero.
        for (limits, why) in [
            ("max-queued-per-client = 0", "must be > 0"),
            ("max-candidates = 0", "must be > 0"),
            ("max-candidates = \"many\"", "max-candidates"),
            ("slots = 0", "must be > 0"),
            ("slots = 65", "slots must be at most 64"),
            ("max-jobs = 3", "unknown field `max-jobs`"),
        ] {
            let text = config(dir.path(), &good).replace("max-queued = 3", limits);
            let err = CoordinatorConfig::parse(&text, "c.toml").unwrap_err().to_string();
            assert!(err.contains(why), "{limits}: {err}");
        }
        // Two datasets on one table need one ledger.
        let other = |ledger: &str| {
            format!(
                "{good}[datasets.u]\ndata = {:?}\nschema = \"Zip:int, City:string\"\n\
                 ledger = {ledger:?}\nbudget-cap = 5.0\nmax-job-epsilon = 1.5\n\
                 accept-deadline-channel = true\n",
                dir.path().join("t.csv").display().to_string(),
            )
        };
        let err = parse(&other(&dir.path().join("u.ledger").display().to_string()))
            .unwrap_err()
            .to_string();
        assert!(err.contains("'t' and 'u' read the same table with different ledgers"), "{err}");
        assert!(parse(&other(&ledger)).is_ok(), "one table, one ledger");
        // One release mode per coordinator; K slots.
        let when_done = "release = \"when-done\"\naccept-timing-channel = true\n";
        let mixed = other(&ledger) + when_done;
        let err = parse(&mixed).unwrap_err().to_string();
        assert!(
            err.contains(
                "datasets 't' (fixed-time) and 'u' (when-done) cannot share a coordinator"
            ),
            "{err}"
        );
        let both = format!("{good}{when_done}") + &other(&ledger)[good.len()..] + when_done;
        let c = parse(&both).unwrap();
        assert_eq!((c.release, c.limits.slots), (ReleaseMode::WhenDone, 1));
        let four = config(dir.path(), &good).replace("max-queued = 3", "slots = 4");
        let c = CoordinatorConfig::parse(&four, "c.toml").unwrap();
        assert_eq!((c.release, c.limits.slots), (ReleaseMode::FixedTime, 4));
    }

    #[test]
    fn a_parquet_dataset_is_described_by_its_footer_and_a_csv_one_by_its_declaration() {
        use dpincon_generate::{TAX_COLUMNS, TaxOptions, generate_tax};
        let dir = tempfile::tempdir().unwrap();
        let tax = dir.path().join("t.parquet");
        generate_tax(&TaxOptions { rows: 20, seed: 1, format: None }, &tax).unwrap();
        let dataset = |extra: &str| {
            format!(
                "state-dir = \"s\"\n[datasets.t]\ndata = {:?}\nledger = {:?}\n\
                 budget-cap = 5.0\nmax-job-epsilon = 1.0\naccept-deadline-channel = true\n{extra}",
                tax.display().to_string(),
                dir.path().join("t.ledger").display().to_string()
            )
        };
        let c = CoordinatorConfig::parse(&dataset(""), "c.toml").unwrap();
        let t = &c.datasets["t"];
        assert_eq!(t.table.file_format(), Some(DataFormat::Parquet));
        assert_eq!((&t.table.schema, t.table.infer_rows), (&None, None));
        let names: Vec<&str> = t.schema.columns.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(names, TAX_COLUMNS);
        let err = CoordinatorConfig::parse(&dataset("schema = \"FName:int\""), "c.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("`schema` does not match the Parquet footer"), "{err}");
        // A CSV dataset must declare its schema.
        std::fs::write(dir.path().join("t.csv"), "a\n1\n").unwrap();
        let csv = dataset("").replace("t.parquet", "t.csv");
        let err = CoordinatorConfig::parse(&csv, "c.toml").unwrap_err().to_string();
        assert!(err.contains("needs `schema`"), "{err}");
    }
}
