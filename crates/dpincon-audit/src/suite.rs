//! The suite file: datasets, their budgets and the checks on their
//! releases. Every number in it is public (SPEC §8: ε, caps, `max-rows`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use dpincon_engine::PostgresSource;
use serde::{Deserialize, Serialize};

use crate::AuditError;

/// Largest ε per measure a suite may ask for (the engine's public limit).
pub const MAX_EPSILON: f64 = 1e4;
/// Smallest ε per measure (the engine's public limit).
pub const MIN_EPSILON: f64 = 1e-5;

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
    /// The datasets, in order.
    #[serde(rename = "dataset")]
    pub datasets: Vec<Dataset>,
}

/// One table and the checks on it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Dataset {
    /// A short name, unique in the suite.
    pub name: String,
    /// The table (CSV or Parquet); or give `postgres`.
    #[serde(default)]
    pub data: Option<PathBuf>,
    /// A PostgreSQL table or query instead of `data`:
    /// `postgres = { url = "postgres://user@host/db", table = "t" }` (or
    /// `query = "..."`; optional `order-by`, `password-env`).
    #[serde(default)]
    pub postgres: Option<PostgresSource>,
    /// The dataset's name on the coordinator (`audit --coordinator`;
    /// default: `name`). There the operator's registration says where the
    /// table is, and its ledger and cap govern.
    #[serde(default)]
    pub coordinator_dataset: Option<String>,
    /// The constraint file.
    pub constraints: PathBuf,
    /// Measures to release: `mi`, `p`, `r` (default: those the checks use).
    #[serde(default)]
    pub measures: Vec<String>,
    /// ε of each released measure per run.
    pub epsilon: f64,
    /// The PUBLIC upper bound on the row count (the engine's `--max-rows`;
    /// fractional thresholds are fractions of it, never of the private count).
    pub max_rows: u64,
    /// The dataset's budget ledger (default `<name>.ledger` next to the suite).
    #[serde(default)]
    pub ledger: Option<PathBuf>,
    /// Total ε the dataset may ever spend.
    pub budget_cap: f64,
    /// Runs per day, for "nights left" (default 1).
    #[serde(default)]
    pub runs_per_day: Option<f64>,
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
    pub measure: String,
    /// Absolute threshold on the measure.
    #[serde(default)]
    pub max: Option<f64>,
    /// Threshold as a fraction of the dataset's public `max-rows`.
    #[serde(default)]
    pub max_fraction: Option<f64>,
    /// `fail` (default) or `warn`: a warn check that fails exits 1, not 2.
    #[serde(default)]
    pub severity: Option<String>,
}

impl Check {
    /// The threshold in the measure's units (`max`, or `max-fraction` of
    /// the public row bound).
    pub fn threshold(&self, max_rows: u64) -> f64 {
        match (self.max, self.max_fraction) {
            (Some(m), _) => m,
            (None, Some(f)) => f * max_rows as f64,
            (None, None) => f64::NAN,
        }
    }

    /// Whether a failure only warns.
    pub fn warn_only(&self) -> bool {
        self.severity.as_deref() == Some("warn")
    }
}

impl Dataset {
    /// What reports and the ledger call the table: its path, or the
    /// PostgreSQL URL without its password and the table or query.
    pub fn source_name(&self) -> PathBuf {
        match (&self.data, &self.postgres) {
            (Some(path), _) => path.clone(),
            (None, Some(pg)) => PathBuf::from(pg.display_name()),
            (None, None) => PathBuf::new(),
        }
    }

    /// The name of the dataset on a coordinator.
    pub fn remote_name(&self) -> &str {
        self.coordinator_dataset.as_deref().unwrap_or(&self.name)
    }

    /// ε one run spends (sequential composition over the measures, SPEC §8).
    pub fn epsilon_per_run(&self) -> f64 {
        self.epsilon * self.measures.len() as f64
    }
}

/// What the measures mean, for reports.
pub fn measure_meaning(measure: &str) -> &'static str {
    match measure {
        "mi" => "I_MI: number of conflicting row pairs (edges of the conflict graph)",
        "p" => "I_P: number of rows involved in at least one conflict",
        "r" => "I_R: minimum number of rows to delete to remove every conflict",
        _ => "unknown measure",
    }
}

impl Suite {
    /// For a run in this process: every dataset must say where its table is.
    pub fn require_tables(&self, path: &Path) -> Result<(), AuditError> {
        match self.datasets.iter().find(|d| d.data.is_none() && d.postgres.is_none()) {
            Some(d) => Err(AuditError::Suite {
                path: path.to_path_buf(),
                message: format!(
                    "dataset '{}' has no `data` or `postgres` (only a run with --coordinator, \
                     where the operator registered the table, may omit them)",
                    d.name
                ),
            }),
            None => Ok(()),
        }
    }

    /// Reads and validates `path`.
    pub fn load(path: &Path) -> Result<Suite, AuditError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| AuditError::Read { path: path.to_path_buf(), message: e.to_string() })?;
        Suite::parse(&text, path)
    }

    /// Parses and validates suite `text` read from `path`.
    pub fn parse(text: &str, path: &Path) -> Result<Suite, AuditError> {
        let err = |message: String| AuditError::Suite { path: path.to_path_buf(), message };
        let mut suite: Suite = toml::from_str(text).map_err(|e| {
            let line = e.span().map(|s| text[..s.start].matches('\n').count() + 1);
            let message = e.message().trim().to_string();
            err(match line {
                Some(l) => format!("line {l}: {message}"),
                None => message,
            })
        })?;
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        suite.validate().map_err(err)?;
        suite.resolve(&base);
        Ok(suite)
    }

    fn validate(&mut self) -> Result<(), String> {
        if self.datasets.is_empty() {
            return Err("the suite has no [[dataset]]".into());
        }
        let mut datasets = HashSet::new();
        let mut checks = HashSet::new();
        for d in &mut self.datasets {
            let at = format!("dataset '{}'", d.name);
            if !datasets.insert(d.name.clone()) {
                return Err(format!("duplicate dataset name '{}'", d.name));
            }
            match (&d.data, &d.postgres) {
                (Some(_), Some(_)) => {
                    return Err(format!("{at}: give `data` or `postgres`, not both"));
                }
                (None, Some(pg)) => pg.validate().map_err(|e| format!("{at}: {e}"))?,
                // A suite run only with --coordinator may leave the table to
                // the operator's registration; a local run needs one.
                _ => {}
            }
            if d.constraints.as_os_str().is_empty() {
                return Err(format!("{at} has no constraints file"));
            }
            if !(d.epsilon.is_finite() && (MIN_EPSILON..=MAX_EPSILON).contains(&d.epsilon)) {
                return Err(format!(
                    "{at}: epsilon = {} must be finite, between {MIN_EPSILON} and {MAX_EPSILON}",
                    d.epsilon
                ));
            }
            if !(d.budget_cap.is_finite() && d.budget_cap > 0.0) {
                return Err(format!("{at}: budget-cap must be a positive number"));
            }
            if d.max_rows == 0 {
                return Err(format!("{at}: max-rows must be at least 1"));
            }
            if let Some(r) = d.runs_per_day
                && !(r.is_finite() && r > 0.0)
            {
                return Err(format!("{at}: runs-per-day must be positive"));
            }
            if d.checks.is_empty() {
                return Err(format!("{at} has no [[dataset.check]]"));
            }
            for m in &d.measures {
                if !matches!(m.as_str(), "mi" | "p" | "r") {
                    return Err(format!("{at}: unknown measure '{m}' (mi, p or r)"));
                }
            }
            if d.measures.is_empty() {
                for m in ["mi", "p", "r"] {
                    if d.checks.iter().any(|c| c.measure == m) {
                        d.measures.push(m.to_string());
                    }
                }
            }
            for c in &d.checks {
                let at = format!("check '{}'", c.name);
                if !checks.insert(c.name.clone()) {
                    return Err(format!("duplicate check name '{}'", c.name));
                }
                if !d.measures.contains(&c.measure) {
                    return Err(format!(
                        "{at}: measure '{}' is not released by dataset '{}' (measures: {})",
                        c.measure,
                        d.name,
                        d.measures.join(", ")
                    ));
                }
                match (c.max, c.max_fraction) {
                    (Some(m), None) if m.is_finite() && m >= 0.0 => {}
                    (None, Some(f)) if f.is_finite() && f >= 0.0 => {}
                    (Some(_), Some(_)) => {
                        return Err(format!("{at}: give max or max-fraction, not both"));
                    }
                    (None, None) => return Err(format!("{at}: needs max or max-fraction")),
                    _ => return Err(format!("{at}: the threshold must be a finite number ≥ 0")),
                }
                if let Some(s) = &c.severity
                    && s != "warn"
                    && s != "fail"
                {
                    return Err(format!("{at}: severity '{s}' must be warn or fail"));
                }
            }
        }
        Ok(())
    }

    fn resolve(&mut self, base: &Path) {
        let at = |p: &Path| if p.is_absolute() { p.to_path_buf() } else { base.join(p) };
        self.history =
            Some(at(self.history.as_deref().unwrap_or(Path::new("audit-history.sqlite"))));
        for d in &mut self.datasets {
            d.data = d.data.as_deref().map(at);
            d.constraints = at(&d.constraints);
            let ledger =
                d.ledger.clone().unwrap_or_else(|| PathBuf::from(format!("{}.ledger", d.name)));
            d.ledger = Some(at(&ledger));
        }
    }
}
