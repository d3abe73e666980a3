//! The suite file: datasets, their budgets and the checks on their
//! releases. Every number in it is public (SPEC §8: ε, caps, `max-rows`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use dpincon_api::Duration;
use dpincon_engine::gate::DEFAULT_BETA;
use dpincon_engine::{DataPolicy, Measure, ReleaseOptions};
use dpincon_source::{SourceError, TableSpec, is_object_url};
use serde::{Deserialize, Serialize};

use crate::error::{AuditError, CheckError, DatasetError, SuiteError};
use crate::notify::Notify;

/// The smallest and largest ε per measure a suite may ask for: the
/// engine's public limits.
pub use dpincon_engine::validate::{MAX_EPSILON, MIN_EPSILON};

/// A parsed, validated suite. Relative paths are resolved against the
/// suite file's directory.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Suite {
    /// The suite's name (reports and history are keyed by it).
    pub name: String,
    /// The history database (default `audit-history.sqlite` next to the suite).
    #[serde(default)]
    pub history: Option<PathBuf>,
    /// The IANA time zone dates are shown in (`audit history`; default UTC).
    #[serde(default)]
    pub time_zone: Option<String>,
    /// The datasets, in order.
    #[serde(rename = "dataset")]
    pub datasets: Vec<Dataset>,
    /// Alerts to a webhook on fail, warn and low budget (`[notify]`).
    #[serde(default)]
    pub notify: Option<Notify>,
    /// How long the budget plan of gated datasets must last: `"365d"`
    /// (days) or `"52w"` (weeks); required with any `[dataset.gate]`.
    #[serde(default)]
    pub horizon: Option<Duration>,
}

/// One table and the checks on it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Dataset {
    /// A short name, unique in the suite.
    pub name: String,
    /// The table and how it is read: `data` (a path, or `s3://bucket/key`
    /// or a prefix of Parquet objects) or `postgres`, `format`, and
    /// `schema`: every column, `Name:type, ...` in the file's order, so a
    /// CSV table is read with these types and none inferred from a row,
    /// and a Parquet footer must agree with it.
    #[serde(flatten)]
    pub table: TableSpec,
    /// `max-rows` (required: the PUBLIC upper bound on the row count;
    /// fractional thresholds are fractions of it, never of the private
    /// count), `ledger` (required when the dataset names its table: no
    /// default, so renaming a dataset cannot reset its budget; unused with
    /// `--coordinator`, whose operator owns the ledger), `budget-cap`
    /// (required: total ε the dataset may ever spend; with
    /// `--coordinator`, this suite's own plan against its recorded
    /// charges), and the engine's `threads`, `memory-limit`, `max-edges`.
    #[serde(flatten)]
    pub policy: DataPolicy,
    /// The dataset's name on the coordinator (`audit --coordinator`;
    /// default: `name`). There the operator's registration says where the
    /// table is, and its ledger and cap govern.
    #[serde(default)]
    pub coordinator_dataset: Option<String>,
    /// The constraint file.
    pub constraints: PathBuf,
    /// Measures to release: `mi`, `p`, `r` (default: those the checks use).
    #[serde(default)]
    pub measures: Vec<Measure>,
    /// ε of each released measure per run.
    pub epsilon: f64,
    /// Runs per day, for "nights left" (default 1).
    #[serde(default)]
    pub runs_per_day: Option<f64>,
    /// The table's PUBLIC version, declared by the operator (a snapshot or
    /// load id): while it is unchanged, a run re-serves the last release at
    /// no ε ([`crate::version`]). At most one of `version`, `version-env`
    /// and `version-file`.
    #[serde(default)]
    pub version: Option<String>,
    /// The environment variable holding the version.
    #[serde(default)]
    pub version_env: Option<String>,
    /// A file holding the version (its contents, trimmed), e.g. written by
    /// the load job; relative to the suite.
    #[serde(default)]
    pub version_file: Option<PathBuf>,
    /// Gated verdicts (sparse vector; [`crate::gated`]): epochs that
    /// re-serve a release at no ε while the measure stays put.
    #[serde(default)]
    pub gate: Option<GateSettings>,
    /// The checks.
    #[serde(default, rename = "check")]
    pub checks: Vec<Check>,
}

/// A threshold on one released measure.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Check {
    /// A name, unique in the suite.
    pub name: String,
    /// `mi`, `p` or `r`.
    pub measure: Measure,
    /// Absolute threshold on the measure.
    #[serde(default)]
    pub max: Option<f64>,
    /// Threshold as a fraction of the dataset's public `max-rows`.
    #[serde(default)]
    pub max_fraction: Option<f64>,
    /// A minimum instead: the check passes when the measure is at least
    /// this (e.g. a table expected to carry known duplicates).
    #[serde(default)]
    pub min: Option<f64>,
    /// `fail` (default) or `warn`: a warn check that fails exits 1, not 2.
    #[serde(default)]
    pub severity: Severity,
}

/// What a failing check does to the run's exit status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The run fails (exit 2).
    #[default]
    Fail,
    /// The run only warns (exit 1).
    Warn,
}

/// `[dataset.gate]`: the dataset's epochs ([`crate::gated`]); here
/// beside the suite's other keys, which the run's modules read.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct GateSettings {
    /// ε of each epoch's gate, per measure, charged when the epoch opens
    /// beside the fresh release's `epsilon`.
    pub epsilon: f64,
    /// Fresh releases planned per measure over the horizon (the first
    /// included): the plan reserves ε for this many epochs.
    pub refreshes: u32,
    /// β: each epoch's passes hold their α with probability ≥ 1 − β
    /// (default 0.05, the intervals' own miss).
    #[serde(default)]
    pub beta: Option<f64>,
    /// How far a measure may move past its release's noise before a fresh
    /// release, in the measure's units (default: the epoch's quiet width α_q,
    /// so that an unmoved measure reopens with probability ≤ β a horizon).
    #[serde(default)]
    pub moved: Option<u64>,
    /// The secret state file (default: the ledger's path with extension
    /// `gate`); owner-only.
    #[serde(default)]
    pub state: Option<PathBuf>,
}

impl GateSettings {
    /// β in force.
    pub fn beta(&self) -> f64 {
        self.beta.unwrap_or(DEFAULT_BETA)
    }
}

/// `horizon = "365d"` (or `"52w"`) in days: a whole number of them, at
/// most a century.
pub fn horizon_days(horizon: Duration) -> Result<u32, SuiteError> {
    match horizon.whole_days() {
        Some(days @ 1..=36_600) => Ok(days as u32),
        _ => Err(SuiteError::Horizon(horizon)),
    }
}

impl Check {
    /// The threshold in the measure's units (`max`, or `max-fraction` of
    /// the public row bound).
    pub fn threshold(&self, max_rows: u64) -> f64 {
        match (self.max, self.max_fraction, self.min) {
            (Some(m), ..) => m,
            (None, Some(f), _) => f * max_rows as f64,
            (None, None, Some(m)) => m,
            (None, None, None) => f64::NAN,
        }
    }

    /// Whether the threshold is a minimum (`min`).
    pub fn at_least(&self) -> bool {
        self.min.is_some()
    }

    /// Whether a failure only warns.
    pub fn warn_only(&self) -> bool {
        self.severity == Severity::Warn
    }
}

impl Dataset {
    /// What reports and the ledger call the table: its path, or the
    /// PostgreSQL URL without its password and the table or query.
    pub fn source_name(&self) -> PathBuf {
        self.table.name()
    }

    /// The PUBLIC upper bound on the row count (required: checked at parse).
    pub fn max_rows(&self) -> u64 {
        self.policy.max_rows.unwrap_or(0)
    }

    /// Total ε the dataset may ever spend (required: checked at parse).
    pub fn budget_cap(&self) -> f64 {
        self.policy.budget_cap.unwrap_or(0.0)
    }

    /// The dataset's budget ledger.
    pub fn ledger(&self) -> Option<&PathBuf> {
        self.policy.ledger.as_ref()
    }

    /// The name of the dataset on a coordinator.
    pub fn remote_name(&self) -> &str {
        self.coordinator_dataset.as_deref().unwrap_or(&self.name)
    }

    /// ε one run spends (sequential composition over the measures, SPEC §8).
    pub fn epsilon_per_run(&self) -> f64 {
        self.epsilon * self.measures.len() as f64
    }

    /// The release options of the dataset's jobs, local or on a coordinator.
    pub fn release(&self) -> ReleaseOptions {
        ReleaseOptions {
            epsilon: Some(self.epsilon),
            measures: Some(self.measures.clone()),
            ..ReleaseOptions::default()
        }
    }
}

impl Suite {
    /// The horizon in days, when declared (checked at parse).
    pub fn horizon_days(&self) -> Option<u32> {
        self.horizon.and_then(|h| horizon_days(h).ok())
    }

    /// The time zone dates are shown in (`None`: UTC); checked at parse.
    pub fn zone(&self) -> Option<chrono_tz::Tz> {
        self.time_zone.as_deref().and_then(|z| crate::time::parse_zone(z).ok())
    }

    /// For a run in this process: every dataset must say where its table is.
    pub fn require_tables(&self, path: &Path) -> Result<(), AuditError> {
        match self.datasets.iter().find(|d| !d.table.names_a_source()) {
            Some(d) => Err(AuditError::Suite {
                path: path.to_path_buf(),
                source: SuiteError::NoTable(d.name.clone()),
            }),
            None => Ok(()),
        }
    }

    /// The history database (resolved at parse; the default beside the suite).
    pub fn history_path(&self) -> PathBuf {
        self.history.clone().unwrap_or_default()
    }

    /// Reads and validates `path`, and checks each declared `schema`
    /// against its table's header (or Parquet footer; no row is read).
    pub fn load(path: &Path) -> Result<Suite, AuditError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| AuditError::Read { path: path.to_path_buf(), message: e.to_string() })?;
        let suite = Suite::parse(&text, path)?;
        suite
            .check_schemas()
            .map_err(|source| AuditError::Suite { path: path.to_path_buf(), source })?;
        Ok(suite)
    }

    /// A suite built in code, deserialised from the file's keys by any
    /// serde format (the Python package's dicts): validated, resolved and
    /// schema-checked as [`Suite::load`] does a file, its relative paths
    /// against `base` (a file's are against its folder). `origin` names
    /// it in errors, where a file's path would.
    pub fn checked(mut self, origin: &Path, base: &Path) -> Result<Suite, AuditError> {
        let err = |source| AuditError::Suite { path: origin.to_path_buf(), source };
        self.validate().map_err(err)?;
        self.resolve(base);
        self.check_schemas().map_err(err)?;
        Ok(self)
    }

    fn check_schemas(&self) -> Result<(), SuiteError> {
        for d in &self.datasets {
            if d.table.schema.is_none() {
                continue;
            }
            // A table that cannot be read is that dataset's error when it
            // runs (the other datasets still run); a mismatch is the suite's.
            if let Err(SourceError::Schema(e)) = d.table.declared_schema() {
                return Err(d.invalid(DatasetError::Schema(e)));
            }
        }
        Ok(())
    }

    /// Parses and validates suite `text` read from `path`.
    pub fn parse(text: &str, path: &Path) -> Result<Suite, AuditError> {
        let err = |source| AuditError::Suite { path: path.to_path_buf(), source };
        let mut suite: Suite =
            dpincon_api::toml_file::from_str(text).map_err(|e| err(SuiteError::Toml(e)))?;
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        suite.validate().map_err(err)?;
        suite.resolve(&base);
        Ok(suite)
    }

    fn validate(&mut self) -> Result<(), SuiteError> {
        if self.datasets.is_empty() {
            return Err(SuiteError::NoDatasets);
        }
        if let Some(zone) = &self.time_zone {
            crate::time::parse_zone(zone)?;
        }
        if let Some(notify) = &self.notify {
            notify.validate().map_err(SuiteError::Notify)?;
        }
        let horizon = self.horizon.map(horizon_days).transpose()?;
        let mut datasets = HashSet::new();
        let mut checks = HashSet::new();
        for d in &mut self.datasets {
            if !datasets.insert(d.name.clone()) {
                return Err(SuiteError::DuplicateDataset(d.name.clone()));
            }
            d.validate_keys().map_err(|e| d.invalid(e))?;
            if d.constraints.as_os_str().is_empty() {
                return Err(SuiteError::NoConstraints(d.name.clone()));
            }
            d.validate_budget().map_err(|e| d.invalid(e))?;
            if d.checks.is_empty() {
                return Err(SuiteError::NoChecks(d.name.clone()));
            }
            if d.measures.is_empty() {
                for m in Measure::ALL {
                    if d.checks.iter().any(|c| c.measure == m) {
                        d.measures.push(m);
                    }
                }
            }
            for c in &d.checks {
                if !checks.insert(c.name.clone()) {
                    return Err(SuiteError::DuplicateCheck(c.name.clone()));
                }
                c.validate(d)
                    .map_err(|source| SuiteError::Check { name: c.name.clone(), source })?;
            }
            d.validate_gate(horizon).map_err(|e| d.invalid(e))?;
        }
        Ok(())
    }

    fn resolve(&mut self, base: &Path) {
        let at = |p: &Path| if p.is_absolute() { p.to_path_buf() } else { base.join(p) };
        self.history =
            Some(at(self.history.as_deref().unwrap_or(Path::new("audit-history.sqlite"))));
        for d in &mut self.datasets {
            // An s3:// URL is not relative to the suite.
            let table = &mut d.table;
            table.data = table
                .data
                .as_deref()
                .map(|p| if is_object_url(p) { p.to_path_buf() } else { at(p) });
            d.constraints = at(&d.constraints);
            d.policy.ledger = d.policy.ledger.as_deref().map(at);
            d.version_file = d.version_file.as_deref().map(at);
            if let Some(g) = d.gate.as_mut() {
                g.state = g.state.as_deref().map(at);
            }
        }
    }
}

impl Dataset {
    /// `source` as the suite's error, naming the dataset.
    fn invalid(&self, source: DatasetError) -> SuiteError {
        SuiteError::Dataset { name: self.name.clone(), source: Box::new(source) }
    }

    /// The table's keys, its ledger and its version keys.
    fn validate_keys(&self) -> Result<(), DatasetError> {
        match (&self.table.data, &self.table.postgres) {
            (Some(_), Some(_)) => return Err(DatasetError::DataAndPostgres),
            (None, Some(pg)) => pg.validate().map_err(DatasetError::Postgres)?,
            // A suite run only with --coordinator may leave the table to
            // the operator's registration; a local run needs one.
            _ => {}
        }
        self.validate_table()?;
        self.validate_version()
    }

    /// ε, the cap, `max-rows` and `runs-per-day`.
    fn validate_budget(&self) -> Result<(), DatasetError> {
        let e = self.epsilon;
        if !(e.is_finite() && (MIN_EPSILON..=MAX_EPSILON).contains(&e)) {
            return Err(DatasetError::Epsilon(e));
        }
        let cap = self.policy.budget_cap.ok_or(DatasetError::Missing("budget-cap"))?;
        if !(cap.is_finite() && cap > 0.0) {
            return Err(DatasetError::BudgetCap(cap));
        }
        if self.policy.max_rows.ok_or(DatasetError::Missing("max-rows"))? == 0 {
            return Err(DatasetError::NoRows);
        }
        match self.runs_per_day {
            Some(r) if !(r.is_finite() && r > 0.0) => Err(DatasetError::RunsPerDay(r)),
            _ => Ok(()),
        }
    }

    /// The keys that describe the table: `format` and `schema` only for a
    /// `data` file, `ledger` for any table this process may release.
    fn validate_table(&self) -> Result<(), DatasetError> {
        let table = &self.table;
        let declared = match (&table.format, &table.schema) {
            (Some(_), _) => Some("format"),
            (None, Some(_)) => Some("schema"),
            (None, None) => None,
        };
        if let Some(key) = declared {
            if table.postgres.is_some() {
                return Err(DatasetError::NotAFile(key));
            }
            if table.data.is_none() {
                return Err(DatasetError::NoData(key));
            }
        }
        if table.infer_rows.is_some() {
            return Err(DatasetError::InferRows);
        }
        if table.names_a_source() && self.ledger().is_none() {
            return Err(DatasetError::NoLedger);
        }
        if self.ledger().is_some_and(|l| l.as_os_str().is_empty()) {
            return Err(DatasetError::EmptyLedger);
        }
        Ok(())
    }
}

impl Check {
    /// The check's measure is released, and it has one threshold.
    fn validate(&self, d: &Dataset) -> Result<(), CheckError> {
        if !d.measures.contains(&self.measure) {
            return Err(CheckError::NotReleased {
                measure: self.measure,
                dataset: d.name.clone(),
                released: d.measures.clone(),
            });
        }
        let given = [self.max.is_some(), self.max_fraction.is_some(), self.min.is_some()];
        if given.iter().filter(|&&g| g).count() > 1 {
            return Err(CheckError::Thresholds);
        }
        let (key, value) = match (self.max, self.max_fraction, self.min) {
            (Some(m), ..) => ("max", m),
            (None, Some(f), _) => ("max-fraction", f),
            (None, None, Some(m)) => ("min", m),
            (None, None, None) => return Err(CheckError::NoThreshold),
        };
        if !(value.is_finite() && value >= 0.0) {
            return Err(CheckError::Threshold { key, value });
        }
        Ok(())
    }
}
