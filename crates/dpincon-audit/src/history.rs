//! The results store: every audit appended to an SQLite database, and each
//! check's trend read back. Holds only DP releases and public settings.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rusqlite::types::Type;
use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};

use dpincon_engine::Measure;
use dpincon_engine::gate::{GateOutcome, PublishedEpochs};

use crate::outcome::{AuditRun, DatasetStatus, ReleaseSettings, ReservedFrom};
use crate::verdict::changed;
use crate::{AuditError, Reason};

/// The history database.
pub struct History {
    conn: Connection,
    path: PathBuf,
}

/// One night of one check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    /// Run start, seconds since the epoch.
    pub started_unix: u64,
    /// The release.
    pub value: i64,
    /// Its 95% interval.
    pub ci95: [i64; 2],
    /// The threshold then.
    pub threshold: f64,
    /// The verdict then.
    pub verdict: String,
    /// Differs from the previous night beyond the combined noise.
    pub changed: bool,
    /// The night was dated by a test clock (`--as-of`): test mode.
    pub test_clock: bool,
    /// The night re-served an earlier release (the declared version was
    /// unchanged): the same release again, not a new one.
    pub reserved: bool,
    /// The night passed its gate: the epoch's release, within the gate's
    /// interval (`ci95`), at no ε ([`crate::gated`]).
    pub gated: bool,
}

/// A dataset's last release as the history holds it: what a night whose
/// declared version is unchanged re-serves ([`crate::reserve`]).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct StoredRelease {
    /// The release's job and night (for a re-served night, the original's).
    pub from: ReservedFrom,
    /// The version declared then, if any.
    pub version: Option<String>,
    /// The release settings recorded with the version.
    pub settings: Option<ReleaseSettings>,
    /// Its checks' releases.
    pub checks: Vec<StoredCheck>,
}

/// One check of a stored release.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct StoredCheck {
    /// Check name.
    pub name: String,
    /// `mi`, `p` or `r`.
    pub measure: Measure,
    /// The release's point value.
    pub value: Option<i64>,
    /// Its 95% interval.
    pub ci95: Option<[i64; 2]>,
    /// Its ε.
    pub epsilon: Option<f64>,
    /// On a gated dataset, the epoch that answered.
    #[serde(default)]
    pub gate: Option<StoredGate>,
}

/// A check's epoch as a stored report shows it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct StoredGate {
    /// The job that opened it.
    pub opened_by: String,
    /// Nights it had answered.
    pub nights_used: u32,
}

/// The part of a stored report (report.json) the history reads back;
/// fields later versions added default, so older rows read too.
#[derive(Deserialize)]
struct StoredRun {
    started_unix: u64,
    datasets: Vec<StoredDataset>,
}

#[derive(Deserialize)]
struct StoredDataset {
    name: String,
    status: DatasetStatus,
    budget: StoredBudget,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    job_id: Option<String>,
    #[serde(default)]
    version: Option<String>,
    #[serde(default)]
    settings: Option<ReleaseSettings>,
    #[serde(default)]
    reserved_from: Option<ReservedFrom>,
    checks: Vec<StoredCheck>,
}

#[derive(Deserialize)]
struct StoredBudget {
    per_run: f64,
}

/// Columns later versions added: (table, column, declaration). Rows
/// written before have the default, which is right for them (no test
/// clock, nothing re-served then).
const ADDED_COLUMNS: [(&str, &str, &str); 3] = [
    ("runs", "test_clock", "TEXT"),
    ("checks", "reserved", "INTEGER NOT NULL DEFAULT 0"),
    ("checks", "gated", "INTEGER NOT NULL DEFAULT 0"),
];

/// A check's history, oldest first.
#[derive(Debug, Clone, Serialize)]
pub struct Trend {
    /// Dataset name.
    pub dataset: String,
    /// Check name.
    pub check: String,
    /// Measure.
    pub measure: Measure,
    /// The nights.
    pub points: Vec<Point>,
}

/// The epochs of a dataset as the history shows them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistoryEpochs {
    /// Each measure's latest epoch and its nights published, and every
    /// earlier one.
    pub epochs: PublishedEpochs,
    /// The dataset's first gated night, when there was one: where the
    /// horizon started.
    pub first_unix: Option<u64>,
}

impl HistoryEpochs {
    /// Records one stored night of a measure's epoch (oldest first).
    pub fn record(&mut self, measure: Measure, opened_by: &str, nights_used: u32, unix: u64) {
        self.first_unix.get_or_insert(unix);
        self.epochs.record(measure, opened_by, nights_used);
    }
}

impl History {
    /// Opens (creating if needed) the database at `path`.
    pub fn open(path: &Path) -> Result<History, AuditError> {
        let err = |e: rusqlite::Error| AuditError::History {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        let mut conn = Connection::open(path).map_err(err)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS runs (
                 id INTEGER PRIMARY KEY, suite TEXT NOT NULL, started_unix INTEGER NOT NULL,
                 exit_code INTEGER NOT NULL, report TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS checks (
                 run INTEGER NOT NULL REFERENCES runs(id), dataset TEXT NOT NULL,
                 name TEXT NOT NULL, measure TEXT NOT NULL, threshold REAL NOT NULL,
                 value INTEGER, lo INTEGER, hi INTEGER, verdict TEXT NOT NULL);
             CREATE INDEX IF NOT EXISTS checks_by_name ON checks(name, run);",
        )
        .map_err(err)?;
        let missing = |conn: &Connection| -> rusqlite::Result<Vec<_>> {
            let mut missing = Vec::new();
            for (table, column, declaration) in ADDED_COLUMNS {
                let present: bool = conn.query_row(
                    "SELECT COUNT(*) > 0 FROM pragma_table_info(?1) WHERE name = ?2",
                    params![table, column],
                    |row| row.get(0),
                )?;
                if !present {
                    missing.push(format!("ALTER TABLE {table} ADD COLUMN {column} {declaration};"));
                }
            }
            Ok(missing)
        };
        // Only an older store takes the write lock, and then one writer
        // adds the columns (two audits may open it at once).
        if !missing(&conn).map_err(err)?.is_empty() {
            let tx = conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(err)?;
            tx.execute_batch(&missing(&tx).map_err(err)?.concat()).map_err(err)?;
            tx.commit().map_err(err)?;
        }
        Ok(History { conn, path: path.to_path_buf() })
    }

    fn err(&self, e: impl std::fmt::Display) -> AuditError {
        AuditError::History { path: self.path.clone(), message: e.to_string() }
    }

    /// Appends `run` (one transaction: all of it or nothing).
    pub fn append(&mut self, run: &AuditRun) -> Result<(), AuditError> {
        let report = serde_json::to_string(run).map_err(|e| self.err(e))?;
        let tx = self
            .conn
            .transaction()
            .map_err(|e| AuditError::History { path: self.path.clone(), message: e.to_string() })?;
        let result = (|| {
            tx.execute(
                "INSERT INTO runs (suite, started_unix, exit_code, report, test_clock)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![run.suite, run.started_unix as i64, run.exit_code, report, run.test_clock],
            )?;
            let id = tx.last_insert_rowid();
            for d in &run.datasets {
                let reserved = d.status == DatasetStatus::Reserved;
                for c in &d.checks {
                    let gated = c.gate.as_ref().is_some_and(|g| g.outcome == GateOutcome::Pass);
                    tx.execute(
                        "INSERT INTO checks (run, dataset, name, measure, threshold, value, lo, hi,
                                             verdict, reserved, gated)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                        params![
                            id,
                            c.dataset,
                            c.name,
                            c.measure.name(),
                            c.threshold,
                            c.value,
                            c.ci95.map(|i| i[0]),
                            c.ci95.map(|i| i[1]),
                            c.verdict.name(),
                            reserved,
                            gated
                        ],
                    )?;
                }
            }
            tx.commit()
        })();
        result.map_err(|e| self.err(e))
    }

    /// ε this suite's runs were charged, per dataset: what a run on a
    /// coordinator knows of its budget (the coordinator's ledger, shared
    /// with other clients, is the operator's). A run is charged when it
    /// ran, or when the coordinator accepted it and it then failed; a
    /// re-served night spent nothing.
    pub fn charged(&self, suite: &str) -> Result<BTreeMap<String, f64>, AuditError> {
        let mut charged = BTreeMap::new();
        self.each_run(suite, false, |run| {
            for d in run.datasets {
                let failed_after_acceptance =
                    d.error.as_deref() == Some(Reason::FailedOnCoordinator.text());
                if d.status == DatasetStatus::Ran || failed_after_acceptance {
                    *charged.entry(d.name).or_insert(0.0) += d.budget.per_run;
                }
            }
            true
        })?;
        Ok(charged)
    }

    /// The start of `suite`'s latest run in the history, if any.
    pub fn latest_started(&self, suite: &str) -> Result<Option<u64>, AuditError> {
        self.conn
            .query_row(
                "SELECT MAX(started_unix) FROM runs WHERE suite = ?1",
                params![suite],
                |row| row.get::<_, Option<i64>>(0),
            )
            .map(|t| t.map(|t| t as u64))
            .map_err(|e| self.err(e))
    }

    /// The most recent run of `suite` that released `dataset`, or
    /// re-served a release of it: what an unchanged version re-serves.
    pub fn last_release(
        &self,
        suite: &str,
        dataset: &str,
    ) -> Result<Option<StoredRelease>, AuditError> {
        let mut last = None;
        self.each_run(suite, true, |run| {
            let started_unix = run.started_unix;
            last = run.datasets.into_iter().filter(|d| d.name == dataset).find_map(|d| {
                let from = match (d.status, d.reserved_from, d.job_id) {
                    (DatasetStatus::Reserved, Some(from), _) => from,
                    (DatasetStatus::Ran, _, Some(job_id)) => ReservedFrom { job_id, started_unix },
                    _ => return None,
                };
                Some(StoredRelease {
                    from,
                    version: d.version,
                    settings: d.settings,
                    checks: d.checks,
                })
            });
            last.is_none()
        })?;
        Ok(last)
    }

    /// The epochs of gated `dataset` in `suite`'s runs: each measure's
    /// latest and its nights, every earlier one, and the first gated night.
    pub fn epochs(&self, suite: &str, dataset: &str) -> Result<HistoryEpochs, AuditError> {
        let mut epochs = HistoryEpochs::default();
        self.each_run(suite, false, |run| {
            for d in run.datasets.iter().filter(|d| d.name == dataset) {
                for c in &d.checks {
                    if let Some(g) = &c.gate {
                        epochs.record(c.measure, &g.opened_by, g.nights_used, run.started_unix);
                    }
                }
            }
            true
        })?;
        Ok(epochs)
    }

    /// Calls `visit` on each stored run of `suite` in the order they were
    /// recorded (the newest first if `newest_first`) while it returns true.
    fn each_run(
        &self,
        suite: &str,
        newest_first: bool,
        mut visit: impl FnMut(StoredRun) -> bool,
    ) -> Result<(), AuditError> {
        let order = if newest_first { "DESC" } else { "ASC" };
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT report FROM runs WHERE suite = ?1 ORDER BY id {order}"))
            .map_err(|e| self.err(e))?;
        let reports = stmt
            .query_map(params![suite], |row| row.get::<_, String>(0))
            .map_err(|e| self.err(e))?;
        for report in reports {
            let run: StoredRun = serde_json::from_str(&report.map_err(|e| self.err(e))?)
                .map_err(|e| self.err(format!("a stored report: {e}")))?;
            if !visit(run) {
                break;
            }
        }
        Ok(())
    }

    /// Every check's trend for `suite`, oldest night first; nights without
    /// a release are skipped; `changed` compares with the previous release.
    pub fn trends(&self, suite: &str) -> Result<Vec<Trend>, AuditError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT c.dataset, c.name, c.measure, r.started_unix, c.value, c.lo, c.hi,
                        c.threshold, c.verdict, r.test_clock IS NOT NULL, c.reserved, c.gated
                 FROM checks c JOIN runs r ON r.id = c.run
                 WHERE r.suite = ?1 AND c.value IS NOT NULL
                 ORDER BY c.dataset, c.name, r.id",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(params![suite], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?.parse::<Measure>().map_err(|e| {
                        rusqlite::Error::FromSqlConversionFailure(2, Type::Text, Box::new(e))
                    })?,
                    Point {
                        started_unix: row.get::<_, i64>(3)? as u64,
                        value: row.get(4)?,
                        ci95: [row.get(5)?, row.get(6)?],
                        threshold: row.get(7)?,
                        verdict: row.get(8)?,
                        changed: false,
                        test_clock: row.get(9)?,
                        reserved: row.get(10)?,
                        gated: row.get(11)?,
                    },
                ))
            })
            .map_err(|e| self.err(e))?;
        let mut trends: Vec<Trend> = Vec::new();
        for row in rows {
            let (dataset, check, measure, mut point) = row.map_err(|e| self.err(e))?;
            match trends.last_mut() {
                Some(t) if t.dataset == dataset && t.check == check => {
                    let previous = t.points.last().map(|p| p.ci95);
                    point.changed = previous.is_some_and(|p| changed(p, point.ci95));
                    t.points.push(point);
                }
                _ => trends.push(Trend { dataset, check, measure, points: vec![point] }),
            }
        }
        Ok(trends)
    }
}
