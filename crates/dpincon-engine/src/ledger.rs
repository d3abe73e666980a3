//! The per-dataset privacy budget ledger (SPEC §8).
//!
//! A JSON-lines file: a header naming the dataset and its cap, then one
//! record per release. A job is charged, under an exclusive file lock and
//! with an fsync, *before* any noise is drawn: a job that dies afterwards
//! leaves the ledger over-counting, never under-counting.
//!
//! Durability: a new ledger file's directory entry is fsynced too (else a
//! crash can lose the whole file, and with it every charge). A service that
//! owns ledgers (the cluster coordinator) holds [`DirLock`] on their
//! directories, so two processes never charge one ledger directory.

use std::fs::{File, OpenOptions};
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use dpincon_api::Figure;
use dpincon_mechanisms::short;

use crate::{EngineError, failpoint};

/// Caps compare with this relative slack so that, e.g., three jobs of 0.1
/// fit a cap of 0.3 despite floating-point sums.
const CAP_SLACK: f64 = 1e-9;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
enum Line {
    Header {
        dataset: String,
        cap: Option<f64>,
        created_unix: u64,
    },
    Release {
        job: String,
        measure: String,
        epsilon: f64,
        unix_time: u64,
    },
    /// ε of a job's hold that no noise was drawn under, given back at the
    /// job's release time ([`return_unused`]).
    Return {
        job: String,
        returned: f64,
        unix_time: u64,
    },
}

/// The ledger's state as a job sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LedgerState {
    /// The ledger file.
    pub path: String,
    /// The cap in force, if any.
    pub cap: Option<f64>,
    /// ε spent by earlier jobs.
    pub spent_before: f64,
    /// ε spent including this job.
    pub spent_after: f64,
}

fn ledger_error(path: &Path, message: impl std::fmt::Display) -> EngineError {
    EngineError::Ledger { path: path.to_path_buf(), message: message.to_string() }
}

#[derive(Debug, Clone, PartialEq)]
struct Contents {
    dataset: Option<String>,
    cap: Option<f64>,
    spent: f64,
    /// Per job: ε charged, and ε of it returned.
    jobs: std::collections::HashMap<String, (f64, f64)>,
    /// What to do before appending after a crash mid-write.
    tail: Tail,
}

/// The end of the file as a crash may have left it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Tail {
    /// Empty, or ends with a newline.
    Clean,
    /// The last record is whole but its newline is missing: add one.
    NoNewline,
    /// A record cut short from this byte offset on (its `charge` died
    /// before its fsync, so it never returned and no noise was drawn for
    /// it): ignored when counting, cut off before the next append.
    Torn(u64),
}

impl Contents {
    /// Whether job `job` may have `epsilon` back: no more than it was
    /// charged and has not had back (else the ledger would under-count).
    fn may_return(&self, job: &str, epsilon: f64) -> bool {
        let (charged, back) = self.jobs.get(job).copied().unwrap_or_default();
        epsilon.is_finite() && epsilon >= 0.0 && back + epsilon <= charged * (1.0 + CAP_SLACK)
    }

    /// What must precede a new record after a crash mid-write: a missing
    /// newline, or a torn record cut off `file` first.
    fn mend_tail(&self, path: &Path, file: &File) -> Result<String, EngineError> {
        match self.tail {
            Tail::Clean => Ok(String::new()),
            Tail::NoNewline => Ok("\n".into()),
            Tail::Torn(at) => {
                file.set_len(at).map(|()| String::new()).map_err(|e| ledger_error(path, e))
            }
        }
    }
}

/// Locks `file` (released when it is dropped) and reads it whole.
fn read_locked(path: &Path, file: &mut File) -> Result<Contents, EngineError> {
    file.lock().map_err(|e| ledger_error(path, e))?;
    file.seek(SeekFrom::Start(0)).map_err(|e| ledger_error(path, e))?;
    read(path, file)
}

fn read(path: &Path, file: &File) -> Result<Contents, EngineError> {
    let mut bytes = Vec::new();
    BufReader::new(file).read_to_end(&mut bytes).map_err(|e| ledger_error(path, e))?;
    parse(&bytes).map_err(|e| ledger_error(path, e))
}

/// Why a ledger's bytes are not a ledger (named by line, from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
enum Corrupt {
    #[error("line {0} returns more ε than its job was charged and has not had back")]
    OverReturn(usize),
    #[error("line {0} is not a ledger record")]
    NotARecord(usize),
}

/// The ledger's contents from its bytes. Every complete line must be a
/// record (else the error names the line); a last line without its
/// newline that is not a record is a torn write (see [`Tail::Torn`]).
fn parse(bytes: &[u8]) -> Result<Contents, Corrupt> {
    let mut contents = Contents {
        dataset: None,
        cap: None,
        spent: 0.0,
        jobs: Default::default(),
        tail: Tail::Clean,
    };
    let mut offset = 0usize;
    for (i, raw) in bytes.split_inclusive(|b| *b == b'\n').enumerate() {
        let start = offset;
        offset += raw.len();
        let whole = raw.ends_with(b"\n");
        let record = std::str::from_utf8(raw).ok().map(str::trim);
        let line = match record {
            Some("") => continue,
            Some(text) => serde_json::from_str::<Line>(text).ok(),
            None => None,
        };
        match line {
            Some(Line::Header { dataset, cap, .. }) if i == 0 => {
                contents.dataset = Some(dataset);
                contents.cap = cap;
            }
            Some(Line::Release { job, epsilon, .. }) if epsilon.is_finite() && epsilon >= 0.0 => {
                contents.spent += epsilon;
                contents.jobs.entry(job).or_default().0 += epsilon;
            }
            // A return never exceeds what its job was charged and has not
            // had back: else the ledger would under-count.
            Some(Line::Return { job, returned, .. }) if contents.may_return(&job, returned) => {
                contents.spent -= returned;
                contents.jobs.entry(job).or_default().1 += returned;
            }
            Some(Line::Return { .. }) if whole => return Err(Corrupt::OverReturn(i + 1)),
            _ if !whole => {
                contents.tail = Tail::Torn(start as u64);
                return Ok(contents);
            }
            _ => return Err(Corrupt::NotARecord(i + 1)),
        }
        if !whole {
            contents.tail = Tail::NoNewline;
        }
    }
    Ok(contents)
}

/// What a ledger file holds, as a job would count it.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// The dataset it belongs to (none before the first charge).
    pub dataset: Option<String>,
    /// The declared cap.
    pub cap: Option<f64>,
    /// ε spent (a torn last record, from a crash mid-write, not counted).
    pub spent: f64,
}

/// Reads a ledger file (a missing file is an empty ledger).
///
/// # Errors
/// [`EngineError::Ledger`] naming the file and the line that is not a record.
pub fn summary(path: &Path) -> Result<Summary, EngineError> {
    let Ok(file) = File::open(path) else {
        return Ok(Summary { dataset: None, cap: None, spent: 0.0 });
    };
    let Contents { dataset, cap, spent, .. } = read(path, &file)?;
    Ok(Summary { dataset, cap, spent })
}

fn effective_cap(
    path: &Path,
    stored: Option<f64>,
    given: Option<f64>,
) -> Result<Option<f64>, EngineError> {
    match (stored, given) {
        (Some(s), Some(g)) if g > s => Err(ledger_error(
            path,
            format!(
                "the dataset's declared cap is ε = {}; a job cannot raise it to {}",
                short(s),
                short(g)
            ),
        )),
        (Some(s), Some(g)) => Ok(Some(s.min(g))),
        (s, g) => Ok(s.or(g)),
    }
}

fn refuse_over_cap(path: &Path, cap: Option<f64>, spent: f64, job: f64) -> Result<(), EngineError> {
    match cap {
        Some(cap) if spent + job > cap * (1.0 + CAP_SLACK) => Err(ledger_error(
            path,
            format!(
                "budget cap exceeded: the dataset has spent ε = {} of its cap {}; \
                 this job needs {} more. Nothing was released.",
                Figure(spent),
                Figure(cap),
                Figure(job)
            ),
        )),
        _ => Ok(()),
    }
}

/// ε spent so far and the cap stored in the ledger at `path` (a ledger
/// not yet created has spent nothing). For planning: charges nothing.
pub fn spent(path: &Path) -> Result<(f64, Option<f64>), EngineError> {
    let Ok(file) = File::open(path) else {
        return Ok((0.0, None));
    };
    let contents = read(path, &file)?;
    Ok((contents.spent, contents.cap))
}

/// Whether the ledger holds a whole record of job `job` (a torn last
/// record does not count: its charge never returned).
///
/// # Errors
/// [`EngineError::Ledger`] as [`summary`].
pub fn has_job(path: &Path, job: &str) -> Result<bool, EngineError> {
    let Ok(file) = File::open(path) else {
        return Ok(false);
    };
    let mut bytes = Vec::new();
    BufReader::new(&file).read_to_end(&mut bytes).map_err(|e| ledger_error(path, e))?;
    parse(&bytes).map_err(|e| ledger_error(path, e))?;
    Ok(bytes.split(|b| *b == b'\n').any(|line| {
        matches!(serde_json::from_slice::<Line>(line), Ok(Line::Release { job: j, .. }) if j == job)
    }))
}

/// Checks, without charging, that a job of `total` ε fits (fail fast
/// before the expensive work; [`charge`] checks again under the lock).
pub fn check(path: &Path, dataset: &Path, cap: Option<f64>, total: f64) -> Result<(), EngineError> {
    let Ok(file) = File::open(path) else {
        return refuse_over_cap(path, cap, 0.0, total);
    };
    let contents = read(path, &file)?;
    same_dataset(path, &contents, dataset)?;
    let cap = effective_cap(path, contents.cap, cap)?;
    refuse_over_cap(path, cap, contents.spent, total)
}

fn same_dataset(path: &Path, contents: &Contents, dataset: &Path) -> Result<(), EngineError> {
    let name = dataset_name(dataset);
    match &contents.dataset {
        Some(d) if *d != name => {
            Err(ledger_error(path, format!("this ledger belongs to dataset '{d}', not '{name}'")))
        }
        _ => Ok(()),
    }
}

/// The table's canonical path. A table that is missing (refused later as
/// unreadable data) is named by its canonical directory, as it would be
/// once it exists: named as written, it read as another dataset's ledger.
fn dataset_name(dataset: &Path) -> String {
    let in_canonical_dir = || {
        let dir = dataset.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        Some(std::fs::canonicalize(dir).ok()?.join(dataset.file_name()?))
    };
    std::fs::canonicalize(dataset)
        .ok()
        .or_else(in_canonical_dir)
        .unwrap_or_else(|| PathBuf::from(dataset))
        .display()
        .to_string()
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Makes `path`'s directory entry durable: after a file is created, its
/// data fsync alone does not persist the name (POSIX).
pub(crate) fn sync_parent(path: &Path) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    File::open(dir)?.sync_all()
}

/// An exclusive lock on a ledger directory, held while the value lives
/// (the OS drops it when the process dies, even by SIGKILL).
#[derive(Debug)]
pub struct DirLock {
    _file: File,
    /// The directory.
    pub dir: PathBuf,
}

/// The lock file inside a locked directory.
pub const LOCK_FILE: &str = ".dpincon.lock";

/// Locks `dir` for this process, or says which directory is already in use.
pub fn lock_dir(dir: &Path) -> Result<DirLock, EngineError> {
    let path = dir.join(LOCK_FILE);
    let existed = path.exists();
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| ledger_error(&path, e))?;
    if !existed {
        sync_parent(&path).map_err(|e| ledger_error(&path, e))?;
    }
    match file.try_lock() {
        Ok(()) => Ok(DirLock { _file: file, dir: dir.to_path_buf() }),
        Err(std::fs::TryLockError::WouldBlock) => Err(ledger_error(
            &path,
            format!(
                "directory '{}' is in use by another process (a second coordinator?): \
                 two owners would charge one budget twice",
                dir.display()
            ),
        )),
        Err(std::fs::TryLockError::Error(e)) => Err(ledger_error(&path, e)),
    }
}

/// Records every release of a job, or refuses the whole job if it would
/// pass the cap. Durable (fsync of the file, and of its directory when the
/// file is new) before it returns.
pub fn charge(
    path: &Path,
    dataset: &Path,
    cap: Option<f64>,
    job: &str,
    releases: &[(&str, f64)],
) -> Result<LedgerState, EngineError> {
    let created = !path.exists();
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| ledger_error(path, e))?;
    if created {
        sync_parent(path).map_err(|e| ledger_error(path, e))?;
    }
    let contents = read_locked(path, &mut file)?;
    same_dataset(path, &contents, dataset)?;
    let cap = effective_cap(path, contents.cap, cap)?;
    let total: f64 = releases.iter().map(|r| r.1).sum();
    refuse_over_cap(path, cap, contents.spent, total)?;
    failpoint::hit("charge-locked");
    let mut text = contents.mend_tail(path, &file)?;
    if contents.dataset.is_none() {
        let header = Line::Header { dataset: dataset_name(dataset), cap, created_unix: now() };
        text += &(serde_json::to_string(&header).expect("serialisable") + "\n");
    }
    for (measure, epsilon) in releases {
        let record = Line::Release {
            job: job.to_string(),
            measure: measure.to_string(),
            epsilon: *epsilon,
            unix_time: now(),
        };
        text += &(serde_json::to_string(&record).expect("serialisable") + "\n");
    }
    if failpoint::armed("charge-torn") {
        // A crash in the middle of the write, made durable.
        let half = &text.as_bytes()[..text.len() / 2];
        file.write_all(half).and_then(|_| file.sync_all()).map_err(|e| ledger_error(path, e))?;
        failpoint::hit("charge-torn");
    }
    file.write_all(text.as_bytes()).map_err(|e| ledger_error(path, e))?;
    failpoint::hit("charge-written");
    file.sync_all().map_err(|e| ledger_error(path, e))?;
    Ok(LedgerState {
        path: path.display().to_string(),
        cap,
        spent_before: contents.spent,
        spent_after: contents.spent + total,
    })
}

/// Gives back `epsilon` of job `job`'s charge: a hold (a coordinator's
/// gated night, charged its worst case when accepted) of which the job
/// drew noise under less. Only what the job was charged and has not had
/// back can be returned, and only once the job has ended: every crash
/// before this leaves the whole hold spent. Durable before it returns.
///
/// # Errors
/// [`EngineError::Ledger`] if the ledger cannot be read or written, or
/// the return exceeds the job's unreturned charge (nothing is written).
pub fn return_unused(path: &Path, job: &str, epsilon: f64) -> Result<LedgerState, EngineError> {
    let mut file =
        OpenOptions::new().read(true).append(true).open(path).map_err(|e| ledger_error(path, e))?;
    let contents = read_locked(path, &mut file)?;
    if !contents.may_return(job, epsilon) {
        let (charged, back) = contents.jobs.get(job).copied().unwrap_or_default();
        return Err(ledger_error(
            path,
            format!(
                "job {job} was charged ε = {} and had {} back: it cannot return {} more",
                Figure(charged),
                Figure(back),
                Figure(epsilon)
            ),
        ));
    }
    let mut text = contents.mend_tail(path, &file)?;
    let record = Line::Return { job: job.to_string(), returned: epsilon, unix_time: now() };
    text += &(serde_json::to_string(&record).expect("serialisable") + "\n");
    file.write_all(text.as_bytes()).map_err(|e| ledger_error(path, e))?;
    file.sync_all().map_err(|e| ledger_error(path, e))?;
    Ok(LedgerState {
        path: path.display().to_string(),
        cap: contents.cap,
        spent_before: contents.spent,
        spent_after: contents.spent - epsilon,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_accumulate_and_the_cap_refuses() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = dir.path().join("ledger.jsonl");
        let data = dir.path().join("t.csv");
        std::fs::write(&data, "a\n1\n").unwrap();
        let s = charge(&ledger, &data, Some(3.0), "j1", &[("mi", 1.0), ("p", 1.0)]).unwrap();
        assert_eq!((s.spent_before, s.spent_after, s.cap), (0.0, 2.0, Some(3.0)));
        assert!(check(&ledger, &data, None, 1.0).is_ok());
        assert!(check(&ledger, &data, None, 1.5).is_err());
        let err = charge(&ledger, &data, None, "j2", &[("r", 1.5)]).unwrap_err().to_string();
        assert!(err.contains("cap exceeded") && err.contains("Nothing was released"), "{err}");
        // A refused job leaves no record.
        let s = charge(&ledger, &data, None, "j3", &[("r", 1.0)]).unwrap();
        assert_eq!(s.spent_before, 2.0);
        assert!(charge(&ledger, &data, None, "j4", &[("r", 0.01)]).is_err());
        // The cap cannot be raised by a job; lowering applies.
        let err = check(&ledger, &data, Some(10.0), 0.0).unwrap_err().to_string();
        assert!(err.contains("cannot raise"), "{err}");
    }

    #[test]
    fn a_torn_last_record_is_ignored_then_cut_and_the_ledger_stays_readable() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = dir.path().join("l");
        let data = dir.path().join("t.csv");
        std::fs::write(&data, "a\n").unwrap();
        charge(&ledger, &data, None, "j1", &[("mi", 1.0), ("p", 1.0)]).unwrap();
        let whole = std::fs::read(&ledger).unwrap();
        // A crash mid-write: half of a record, no newline.
        let mut torn = whole.clone();
        torn.extend_from_slice(b"{\"job\":\"j2\",\"measure\":\"mi\",\"eps");
        std::fs::write(&ledger, &torn).unwrap();
        assert!(check(&ledger, &data, Some(3.0), 1.0).is_ok());
        let s = charge(&ledger, &data, None, "j3", &[("r", 0.5)]).unwrap();
        assert_eq!((s.spent_before, s.spent_after), (2.0, 2.5));
        let text = std::fs::read_to_string(&ledger).unwrap();
        assert!(!text.contains("\"j2\""), "the torn record is cut: {text}");
        assert_eq!(parse(text.as_bytes()).unwrap().tail, Tail::Clean);
        // A whole record missing only its newline counts and gets one.
        let mut no_newline = text.into_bytes();
        no_newline.pop();
        std::fs::write(&ledger, &no_newline).unwrap();
        let s = charge(&ledger, &data, None, "j4", &[("r", 0.5)]).unwrap();
        assert_eq!(s.spent_before, 2.5);
        let text = std::fs::read_to_string(&ledger).unwrap();
        assert_eq!(parse(text.as_bytes()).unwrap().spent, 3.0);
        // A bad line that is not the last one is still an error.
        std::fs::write(&ledger, format!("garbage\n{text}")).unwrap();
        let err = check(&ledger, &data, None, 1.0).unwrap_err().to_string();
        assert!(err.contains("line 1 is not a ledger record"), "{err}");
    }

    #[test]
    fn a_locked_directory_refuses_a_second_owner_until_released() {
        let dir = tempfile::tempdir().unwrap();
        let lock = lock_dir(dir.path()).unwrap();
        let err = lock_dir(dir.path()).unwrap_err().to_string();
        assert!(err.contains("in use by another process"), "{err}");
        drop(lock);
        assert!(lock_dir(dir.path()).is_ok());
    }

    #[test]
    fn small_budgets_fit_their_cap_despite_rounding() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = dir.path().join("l");
        let data = dir.path().join("t.csv");
        std::fs::write(&data, "a\n").unwrap();
        for job in ["a", "b", "c"] {
            charge(&ledger, &data, Some(0.3), job, &[("r", 0.1)]).unwrap();
        }
        assert!(charge(&ledger, &data, None, "d", &[("r", 0.1)]).is_err());
    }

    #[test]
    fn a_ledger_belongs_to_one_dataset_and_must_parse() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = dir.path().join("l");
        let (a, b) = (dir.path().join("a.csv"), dir.path().join("b.csv"));
        std::fs::write(&a, "x\n").unwrap();
        std::fs::write(&b, "x\n").unwrap();
        charge(&ledger, &a, None, "j", &[("r", 1.0)]).unwrap();
        let err = charge(&ledger, &b, None, "j", &[("r", 1.0)]).unwrap_err().to_string();
        assert!(err.contains("belongs to dataset"), "{err}");
        // A table gone missing is still its own ledger's dataset (the job
        // then fails reading it), however its path is written.
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::remove_file(&a).unwrap();
        check(&ledger, &a, None, 1.0).unwrap();
        check(&ledger, &dir.path().join("sub/../a.csv"), None, 1.0).unwrap();
        std::fs::write(&ledger, "not json\n").unwrap();
        let err = check(&ledger, &b, None, 1.0).unwrap_err().to_string();
        assert!(err.contains("line 1"), "{err}");
    }

    #[test]
    fn a_hold_returns_only_what_its_job_was_charged_and_once() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = dir.path().join("l");
        let data = dir.path().join("t.csv");
        std::fs::write(&data, "a\n").unwrap();
        charge(&ledger, &data, Some(10.0), "night", &[("r", 1.0), ("gate-r", 2.0)]).unwrap();
        charge(&ledger, &data, None, "other", &[("mi", 1.0)]).unwrap();
        let back = return_unused(&ledger, "night", 2.5).unwrap();
        assert_eq!((back.spent_before, back.spent_after), (4.0, 1.5));
        assert_eq!(summary(&ledger).unwrap().spent, 1.5);
        // No more than the rest of the job's charge, no unknown job.
        for (job, eps) in [("night", 0.6), ("nobody", 0.1), ("night", -0.1), ("night", f64::NAN)] {
            let err = return_unused(&ledger, job, eps).unwrap_err().to_string();
            assert!(err.contains("cannot return"), "{err}");
        }
        assert_eq!(summary(&ledger).unwrap().spent, 1.5);
        return_unused(&ledger, "night", 0.5).unwrap();
        assert_eq!(summary(&ledger).unwrap().spent, 1.0);
        // The cap counts what is left spent.
        assert!(check(&ledger, &data, None, 9.0).is_ok());
        // A return written by hand beyond its job's charge is a corrupt ledger.
        let mut text = std::fs::read_to_string(&ledger).unwrap();
        text += "{\"job\":\"other\",\"returned\":2.0,\"unix_time\":0}\n";
        std::fs::write(&ledger, text).unwrap();
        let err = summary(&ledger).unwrap_err().to_string();
        assert!(err.contains("line 7 returns more"), "{err}");
    }
}
