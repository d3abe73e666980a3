//! The coordinator's durable job store: one SQLite file (`jobs.sqlite` in
//! the operator's state directory) holding every job, its state, its
//! public failure reason (the full error only for non-private jobs), its
//! time slot and its report.
//!
//! Each state change is one statement in its own transaction, fsynced
//! (`synchronous = FULL`) before the coordinator acts on it; a report is
//! written in the same statement that marks the job succeeded. Every job
//! here was charged when it was accepted. So after a SIGKILL,
//! [`JobStore::recover`] finds every job either finished (report kept,
//! visible from its release time), queued (never started: run it in a new
//! slot), or running (fail it as interrupted, never run it twice).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use dpincon_engine::Prepaid;
use dpincon_proto::v1::{FailureReason, JobState};
use rusqlite::{Connection, OptionalExtension, params};

use crate::ClusterError;

/// One job as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredJob {
    /// The job's id.
    pub id: String,
    /// The client (token name) that submitted it.
    pub owner: String,
    /// The dataset's name.
    pub dataset: String,
    /// The checked request, canonical JSON.
    pub request: String,
    /// Asks for exact values (test clusters only).
    pub non_private: bool,
    /// A `JobState`.
    pub state: JobState,
    /// The public reason of a failure.
    pub reason: FailureReason,
    /// The full error: the operator's log only, never a private job's client.
    pub error: String,
    /// The report (JSON) of a succeeded job.
    pub report: Option<String>,
    /// The final full `JobStatus` (protobuf) of a non-private job, for its
    /// progress detail after the end; never kept for private jobs.
    pub detail: Option<Vec<u8>>,
    /// Its slot: when it starts and when its result becomes visible
    /// (Unix milliseconds; a release time of 0 means "when it ends").
    pub slot: Slot,
    /// The charge made when it was accepted.
    pub prepaid: Prepaid,
}

/// A job's time slot, fixed when it is accepted from public values only
/// (the acceptance time, the slots before it, the dataset's deadline).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Slot {
    /// When it starts (Unix ms).
    pub start_ms: i64,
    /// When it is stopped and, for a fixed-time release, when its result
    /// becomes visible (Unix ms).
    pub end_ms: i64,
    /// Its result is visible only from `end_ms` on (a private job on a
    /// fixed-time dataset); else as soon as it ends.
    pub fixed: bool,
}

impl Slot {
    /// Whether a client may see how the job ended at `now_ms`.
    pub fn released(&self, now_ms: i64) -> bool {
        !self.fixed || now_ms >= self.end_ms
    }
}

/// How a job ended, as [`JobStore::finish`] records it.
#[derive(Debug, Clone, Copy)]
pub struct Ending<'a> {
    /// Succeeded, failed or cancelled.
    pub state: JobState,
    /// The public reason of a failure.
    pub reason: FailureReason,
    /// The full error (operator only).
    pub error: &'a str,
    /// The report of a succeeded job.
    pub report: Option<&'a str>,
    /// A non-private job's final full status (protobuf).
    pub detail: Option<&'a [u8]>,
}

impl Ending<'_> {
    /// An ending with no report or detail.
    pub fn plain(state: JobState, reason: FailureReason, error: &str) -> Ending<'_> {
        Ending { state, reason, error, report: None, detail: None }
    }
}

/// The store (one connection; calls are short and serialised).
#[derive(Debug)]
pub struct JobStore {
    conn: Mutex<Connection>,
    path: PathBuf,
}

fn store_error(path: &Path, e: rusqlite::Error) -> ClusterError {
    ClusterError::Store(format!("job store '{}': {e}", path.display()))
}

fn now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

/// Unix milliseconds now.
pub fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

const COLUMNS: &str = "id, owner, dataset, request, non_private, state, reason, error, report, \
                       detail, slot_start_ms, slot_end_ms, slot_fixed, charge";

fn row_to_job(row: &rusqlite::Row<'_>) -> rusqlite::Result<StoredJob> {
    Ok(StoredJob {
        id: row.get(0)?,
        owner: row.get(1)?,
        dataset: row.get(2)?,
        request: row.get(3)?,
        non_private: row.get(4)?,
        state: JobState::try_from(row.get::<_, i32>(5)?).unwrap_or(JobState::Unspecified),
        reason: FailureReason::try_from(row.get::<_, i32>(6)?).unwrap_or(FailureReason::Internal),
        error: row.get(7)?,
        report: row.get(8)?,
        detail: row.get(9)?,
        slot: Slot { start_ms: row.get(10)?, end_ms: row.get(11)?, fixed: row.get(12)? },
        prepaid: {
            let charge: Option<String> = row.get(13)?;
            let id: String = row.get(0)?;
            charge.and_then(|c| serde_json::from_str(&c).ok()).unwrap_or(Prepaid {
                job_id: id,
                ledger: None,
                quota_epsilon: None,
            })
        },
    })
}

impl JobStore {
    /// Opens (creating) `dir/jobs.sqlite`.
    pub fn open(dir: &Path) -> Result<JobStore, ClusterError> {
        std::fs::create_dir_all(dir)
            .map_err(|source| ClusterError::Io { path: dir.to_path_buf(), source })?;
        let path = dir.join("jobs.sqlite");
        let conn = Connection::open(&path).map_err(|e| store_error(&path, e))?;
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             PRAGMA synchronous = FULL;
             CREATE TABLE IF NOT EXISTS jobs (
                 seq INTEGER PRIMARY KEY AUTOINCREMENT,
                 id TEXT NOT NULL UNIQUE,
                 owner TEXT NOT NULL,
                 dataset TEXT NOT NULL,
                 request TEXT NOT NULL,
                 non_private INTEGER NOT NULL,
                 state INTEGER NOT NULL,
                 reason INTEGER NOT NULL DEFAULT 0,
                 error TEXT NOT NULL DEFAULT '',
                 report TEXT,
                 detail BLOB,
                 created_unix INTEGER NOT NULL,
                 updated_unix INTEGER NOT NULL
             );
             CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs (state, seq);",
        )
        .map_err(|e| store_error(&path, e))?;
        // Columns added since the first stores, each with the statement that
        // adds it to an older store.
        const MIGRATIONS: [(&str, &str); 2] = [
            // Fixed-time releases: jobs had no slot before.
            (
                "slot_fixed",
                "ALTER TABLE jobs ADD COLUMN slot_start_ms INTEGER NOT NULL DEFAULT 0;
                 ALTER TABLE jobs ADD COLUMN slot_end_ms INTEGER NOT NULL DEFAULT 0;
                 ALTER TABLE jobs ADD COLUMN slot_fixed INTEGER NOT NULL DEFAULT 0;
                 ALTER TABLE jobs ADD COLUMN charge TEXT;",
            ),
            // K slots: when each job's process really started.
            ("started_ms", "ALTER TABLE jobs ADD COLUMN started_ms INTEGER;"),
        ];
        for (column, migration) in MIGRATIONS {
            let present: bool = conn
                .query_row(
                    "SELECT COUNT(*) FROM pragma_table_info('jobs') WHERE name = ?1",
                    [column],
                    |r| r.get::<_, i64>(0).map(|n| n > 0),
                )
                .map_err(|e| store_error(&path, e))?;
            if !present {
                conn.execute_batch(migration).map_err(|e| store_error(&path, e))?;
            }
        }
        Ok(JobStore { conn: Mutex::new(conn), path })
    }

    fn with<T>(
        &self,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, ClusterError> {
        let conn = self.conn.lock().expect("job store poisoned");
        f(&conn).map_err(|e| store_error(&self.path, e))
    }

    /// Records a new queued job.
    pub fn insert(&self, job: &StoredJob) -> Result<(), ClusterError> {
        self.with(|c| {
            c.execute(
                "INSERT INTO jobs (id, owner, dataset, request, non_private, state, reason, \
                 error, report, created_unix, updated_unix, slot_start_ms, slot_end_ms, \
                 slot_fixed, charge) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10, ?11, ?12, ?13, ?14)",
                params![
                    job.id,
                    job.owner,
                    job.dataset,
                    job.request,
                    job.non_private,
                    job.state as i32,
                    job.reason as i32,
                    job.error,
                    job.report,
                    now(),
                    job.slot.start_ms,
                    job.slot.end_ms,
                    job.slot.fixed,
                    serde_json::to_string(&job.prepaid).expect("serialisable")
                ],
            )
            .map(|_| ())
        })
    }

    /// Marks a queued job running from `now_ms` (`started_ms`: the
    /// operator's record that no job started before its slot); false if
    /// it was not queued (cancelled).
    pub fn start(&self, id: &str, now_ms: i64) -> Result<bool, ClusterError> {
        self.with(|c| {
            c.execute(
                "UPDATE jobs SET state = ?2, updated_unix = ?3, started_ms = ?5 \
                 WHERE id = ?1 AND state = ?4",
                params![id, JobState::Running as i32, now(), JobState::Queued as i32, now_ms],
            )
            .map(|n| n == 1)
        })
    }

    /// Ends a queued or running job: state, reason, full error, report and
    /// detail in one statement. False if it had already ended.
    pub fn finish(&self, id: &str, end: &Ending<'_>) -> Result<bool, ClusterError> {
        self.with(|c| {
            c.execute(
                "UPDATE jobs SET state = ?2, reason = ?3, error = ?4, report = ?5, detail = ?6, \
                 updated_unix = ?7 WHERE id = ?1 AND state IN (?8, ?9)",
                params![
                    id,
                    end.state as i32,
                    end.reason as i32,
                    end.error,
                    end.report,
                    end.detail,
                    now(),
                    JobState::Queued as i32,
                    JobState::Running as i32
                ],
            )
            .map(|n| n == 1)
        })
    }

    /// Cancels a job at `now_ms` by its client: a queued or running one,
    /// or one that ended but whose result is not yet visible (so a cancel
    /// before the release time always gives the same answer, however the
    /// job went). Its charge stays. False if a client could already see its
    /// end.
    pub fn cancel(&self, id: &str, now_ms: i64) -> Result<bool, ClusterError> {
        self.with(|c| {
            c.execute(
                "UPDATE jobs SET state = ?2, reason = ?3, error = '', report = NULL, detail = NULL, \
                 updated_unix = ?4 WHERE id = ?1 AND (state IN (?5, ?6) \
                 OR (state IN (?7, ?8) AND slot_fixed = 1 AND slot_end_ms > ?9))",
                params![
                    id,
                    JobState::Cancelled as i32,
                    FailureReason::Unspecified as i32,
                    now(),
                    JobState::Queued as i32,
                    JobState::Running as i32,
                    JobState::Succeeded as i32,
                    JobState::Failed as i32,
                    now_ms
                ],
            )
            .map(|n| n == 1)
        })
    }

    /// Gives a queued job a new slot (after a restart, old slots are past).
    pub fn reslot(&self, id: &str, slot: Slot) -> Result<(), ClusterError> {
        self.with(|c| {
            c.execute(
                "UPDATE jobs SET slot_start_ms = ?2, slot_end_ms = ?3, slot_fixed = ?4 \
                 WHERE id = ?1 AND state = ?5",
                params![id, slot.start_ms, slot.end_ms, slot.fixed, JobState::Queued as i32],
            )
            .map(|_| ())
        })
    }

    /// How many stored jobs are in each state, with each public reason,
    /// as their clients see them at `now_ms`: a fixed-time job (private or
    /// not) reads `queued` until its release, a private one while it runs
    /// too (so these counts show no outcome before clients may see it).
    pub fn counts(&self, now_ms: i64) -> Result<Vec<(JobState, FailureReason, u64)>, ClusterError> {
        self.with(|c| {
            let mut statement = c.prepare(
                "SELECT shown, CASE WHEN shown = ?1 THEN 0 ELSE reason END, COUNT(*) FROM ( \
                   SELECT reason, CASE \
                     WHEN state IN (?2, ?3, ?4) AND slot_fixed = 1 AND slot_end_ms > ?5 THEN ?1 \
                     WHEN non_private = 1 THEN state \
                     WHEN state = ?2 THEN ?1 \
                     ELSE state END AS shown FROM jobs) \
                 GROUP BY 1, 2",
            )?;
            let params = params![
                JobState::Queued as i32,
                JobState::Running as i32,
                JobState::Succeeded as i32,
                JobState::Failed as i32,
                now_ms
            ];
            let rows = statement.query_map(params, |r| {
                Ok((
                    JobState::try_from(r.get::<_, i32>(0)?).unwrap_or(JobState::Unspecified),
                    FailureReason::try_from(r.get::<_, i32>(1)?)
                        .unwrap_or(FailureReason::Unspecified),
                    r.get::<_, i64>(2)? as u64,
                ))
            })?;
            rows.collect()
        })
    }

    /// One job.
    pub fn get(&self, id: &str) -> Result<Option<StoredJob>, ClusterError> {
        self.with(|c| {
            c.query_row(&format!("SELECT {COLUMNS} FROM jobs WHERE id = ?1"), [id], row_to_job)
                .optional()
        })
    }

    /// The latest `limit` jobs of `owner`, oldest first, without their
    /// reports (a listing needs states only).
    pub fn list(&self, owner: &str, limit: usize) -> Result<Vec<StoredJob>, ClusterError> {
        self.with(|c| {
            let mut statement = c.prepare(
                "SELECT id, owner, dataset, '', non_private, state, reason, error, NULL, detail, \
                 slot_start_ms, slot_end_ms, slot_fixed, NULL FROM jobs WHERE owner = ?1 \
                 ORDER BY seq DESC LIMIT ?2",
            )?;
            let mut jobs: Vec<StoredJob> = statement
                .query_map(params![owner, limit as i64], row_to_job)?
                .collect::<rusqlite::Result<_>>()?;
            jobs.reverse();
            Ok(jobs)
        })
    }

    /// The reports of `dataset`'s succeeded jobs, oldest first: where a
    /// gated night reads the epochs its dataset published.
    pub fn reports(&self, dataset: &str) -> Result<Vec<String>, ClusterError> {
        self.with(|c| {
            let mut statement = c.prepare(
                "SELECT report FROM jobs WHERE dataset = ?1 AND state = ?2 \
                 AND report IS NOT NULL ORDER BY seq",
            )?;
            statement
                .query_map(params![dataset, JobState::Succeeded as i32], |r| r.get(0))?
                .collect()
        })
    }

    /// After a restart: fails every job left running (it may have been
    /// charged, so it is never run again) and returns their ids, and the
    /// queued jobs in submission order, to run.
    pub fn recover(&self) -> Result<(Vec<String>, Vec<StoredJob>), ClusterError> {
        self.with(|c| {
            let running = JobState::Running as i32;
            let mut statement = c.prepare("SELECT id FROM jobs WHERE state = ?1 ORDER BY seq")?;
            let interrupted: Vec<String> =
                statement.query_map([running], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
            c.execute(
                "UPDATE jobs SET state = ?1, reason = ?2, error = ?3, updated_unix = ?4 \
                 WHERE state = ?5",
                params![
                    JobState::Failed as i32,
                    FailureReason::Interrupted as i32,
                    "interrupted by a coordinator restart",
                    now(),
                    running
                ],
            )?;
            let mut statement =
                c.prepare(&format!("SELECT {COLUMNS} FROM jobs WHERE state = ?1 ORDER BY seq"))?;
            let queued = statement
                .query_map([JobState::Queued as i32], row_to_job)?
                .collect::<rusqlite::Result<_>>()?;
            Ok((interrupted, queued))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: &str) -> StoredJob {
        StoredJob {
            id: id.into(),
            owner: "alice".into(),
            dataset: "t".into(),
            request: "{}".into(),
            non_private: false,
            state: JobState::Queued,
            reason: FailureReason::Unspecified,
            error: String::new(),
            report: None,
            detail: None,
            slot: Slot::default(),
            prepaid: Prepaid { job_id: id.into(), ledger: None, quota_epsilon: None },
        }
    }

    #[test]
    fn a_reopened_store_keeps_reports_fails_running_jobs_and_requeues_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = JobStore::open(dir.path()).unwrap();
            for id in ["a", "b", "c", "d"] {
                store.insert(&job(id)).unwrap();
            }
            assert!(store.start("a", 1).unwrap());
            assert!(!store.start("a", 2).unwrap(), "a running job does not start twice");
            let report = Some("{\"r\":1}");
            let end = Ending {
                report,
                ..Ending::plain(JobState::Succeeded, FailureReason::Unspecified, "")
            };
            assert!(store.finish("a", &end).unwrap());
            assert!(store.start("b", 7).unwrap());
            let cancel = Ending::plain(JobState::Cancelled, FailureReason::Unspecified, "");
            assert!(store.finish("d", &cancel).unwrap());
            let fail = Ending::plain(JobState::Failed, FailureReason::Internal, "");
            assert!(!store.finish("d", &fail).unwrap(), "an ended job stays ended");
        }
        let store = JobStore::open(dir.path()).unwrap();
        let (interrupted, queued) = store.recover().unwrap();
        assert_eq!(interrupted, vec!["b".to_string()]);
        assert_eq!(queued.iter().map(|j| j.id.as_str()).collect::<Vec<_>>(), vec!["c"]);
        let a = store.get("a").unwrap().unwrap();
        assert_eq!((a.state, a.report.as_deref()), (JobState::Succeeded, Some("{\"r\":1}")));
        let b = store.get("b").unwrap().unwrap();
        assert_eq!((b.state, b.reason), (JobState::Failed, FailureReason::Interrupted));
        assert_eq!(store.get("d").unwrap().unwrap().state, JobState::Cancelled);
        assert!(store.get("zz").unwrap().is_none());
        let listed: Vec<String> =
            store.list("alice", 2).unwrap().into_iter().map(|j| j.id).collect();
        assert_eq!(listed, vec!["c", "d"]);
        assert!(store.list("bob", 10).unwrap().is_empty());
    }

    #[test]
    fn a_store_from_before_slots_is_migrated_and_keeps_its_jobs() {
        let dir = tempfile::tempdir().unwrap();
        {
            let conn = Connection::open(dir.path().join("jobs.sqlite")).unwrap();
            conn.execute_batch(
                "CREATE TABLE jobs (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL \
                 UNIQUE, owner TEXT NOT NULL, dataset TEXT NOT NULL, request TEXT NOT NULL, \
                 non_private INTEGER NOT NULL, state INTEGER NOT NULL, reason INTEGER NOT NULL \
                 DEFAULT 0, error TEXT NOT NULL DEFAULT '', report TEXT, detail BLOB, \
                 created_unix INTEGER NOT NULL, updated_unix INTEGER NOT NULL);
                 INSERT INTO jobs (id, owner, dataset, request, non_private, state, created_unix, \
                 updated_unix) VALUES ('old', 'alice', 't', '{}', 0, 1, 0, 0);",
            )
            .unwrap();
        }
        for _ in 0..2 {
            // Opened twice: the second time finds every column present.
            let store = JobStore::open(dir.path()).unwrap();
            let old = store.get("old").unwrap().unwrap();
            assert_eq!((old.state, old.slot), (JobState::Queued, Slot::default()));
        }
        let store = JobStore::open(dir.path()).unwrap();
        assert!(store.start("old", 42).unwrap());
        let conn = store.conn.lock().unwrap();
        let started: Option<i64> = conn
            .query_row("SELECT started_ms FROM jobs WHERE id = 'old'", [], |r| r.get(0))
            .unwrap();
        assert_eq!(started, Some(42));
    }

    #[test]
    fn counts_show_what_clients_see() {
        let dir = tempfile::tempdir().unwrap();
        let store = JobStore::open(dir.path()).unwrap();
        let now = 1_000_000;
        let fixed = |end_ms| Slot { start_ms: 0, end_ms, fixed: true };
        let jobs = [
            ("unreleased", fixed(now + 5), false, Some(JobState::Succeeded)),
            ("released", fixed(now - 5), false, Some(JobState::Failed)),
            ("running", fixed(now + 5), false, None),
            ("test-running", Slot::default(), true, None),
            ("test-unreleased", fixed(now + 5), true, Some(JobState::Succeeded)),
            ("when-done", Slot::default(), false, Some(JobState::Succeeded)),
        ];
        for (id, slot, non_private, end) in jobs {
            store.insert(&StoredJob { slot, non_private, ..job(id) }).unwrap();
            assert!(store.start(id, 0).unwrap());
            if let Some(state) = end {
                let reason = match state {
                    JobState::Failed => FailureReason::OverQuota,
                    _ => FailureReason::Unspecified,
                };
                assert!(store.finish(id, &Ending::plain(state, reason, "")).unwrap());
            }
        }
        let mut counts = store.counts(now).unwrap();
        counts.sort_by_key(|&(s, r, _)| (s as i32, r as i32));
        assert_eq!(
            counts,
            vec![
                (JobState::Queued, FailureReason::Unspecified, 3),
                (JobState::Running, FailureReason::Unspecified, 1),
                (JobState::Succeeded, FailureReason::Unspecified, 1),
                (JobState::Failed, FailureReason::OverQuota, 1),
            ]
        );
    }
}
