//! The results store: every audit appended to an SQLite database, and each
//! check's trend read back. Holds only DP releases and public settings.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};

use crate::verdict::changed;
use crate::{AuditError, AuditRun, DatasetStatus, Reason};

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
}

/// A check's history, oldest first.
#[derive(Debug, Clone, Serialize)]
pub struct Trend {
    /// Dataset name.
    pub dataset: String,
    /// Check name.
    pub check: String,
    /// Measure.
    pub measure: String,
    /// The nights.
    pub points: Vec<Point>,
}

impl History {
    /// Opens (creating if needed) the database at `path`.
    pub fn open(path: &Path) -> Result<History, AuditError> {
        let err = |e: rusqlite::Error| AuditError::History {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        let conn = Connection::open(path).map_err(err)?;
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
                "INSERT INTO runs (suite, started_unix, exit_code, report) VALUES (?1, ?2, ?3, ?4)",
                params![run.suite, run.started_unix as i64, run.exit_code, report],
            )?;
            let id = tx.last_insert_rowid();
            for c in run.checks() {
                tx.execute(
                    "INSERT INTO checks (run, dataset, name, measure, threshold, value, lo, hi, verdict)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                    params![
                        id,
                        c.dataset,
                        c.name,
                        c.measure,
                        c.threshold,
                        c.value,
                        c.ci95.map(|i| i[0]),
                        c.ci95.map(|i| i[1]),
                        c.verdict.name()
                    ],
                )?;
            }
            tx.commit()
        })();
        result.map_err(|e| self.err(e))
    }

    /// ε this suite's runs were charged, per dataset: what a run on a
    /// coordinator knows of its budget (the coordinator's ledger, shared
    /// with other clients, is the operator's). A run is charged when it
    /// ran, or when the coordinator accepted it and it then failed.
    pub fn charged(&self, suite: &str) -> Result<BTreeMap<String, f64>, AuditError> {
        #[derive(Deserialize)]
        struct Run {
            datasets: Vec<Dataset>,
        }
        #[derive(Deserialize)]
        struct Dataset {
            name: String,
            status: DatasetStatus,
            budget: Budget,
            #[serde(default)]
            error: Option<String>,
        }
        #[derive(Deserialize)]
        struct Budget {
            per_run: f64,
        }
        let mut stmt = self
            .conn
            .prepare("SELECT report FROM runs WHERE suite = ?1 ORDER BY id")
            .map_err(|e| self.err(e))?;
        let reports = stmt
            .query_map(params![suite], |row| row.get::<_, String>(0))
            .map_err(|e| self.err(e))?;
        let mut charged = BTreeMap::new();
        for report in reports {
            let run: Run = serde_json::from_str(&report.map_err(|e| self.err(e))?)
                .map_err(|e| self.err(format!("a stored report: {e}")))?;
            for d in run.datasets {
                let failed_after_acceptance =
                    d.error.as_deref() == Some(Reason::FailedOnCoordinator.text());
                if d.status == DatasetStatus::Ran || failed_after_acceptance {
                    *charged.entry(d.name).or_insert(0.0) += d.budget.per_run;
                }
            }
        }
        Ok(charged)
    }

    /// Every check's trend for `suite`, oldest night first; nights without
    /// a release are skipped; `changed` compares with the previous release.
    pub fn trends(&self, suite: &str) -> Result<Vec<Trend>, AuditError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT c.dataset, c.name, c.measure, r.started_unix, c.value, c.lo, c.hi,
                        c.threshold, c.verdict
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
                    row.get::<_, String>(2)?,
                    Point {
                        started_unix: row.get::<_, i64>(3)? as u64,
                        value: row.get(4)?,
                        ci95: [row.get(5)?, row.get(6)?],
                        threshold: row.get(7)?,
                        verdict: row.get(8)?,
                        changed: false,
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
