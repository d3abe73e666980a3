//! Ledger crash safety through the real binary (SPEC §8, issue 14): a
//! `run` SIGKILLed at every failpoint between the ledger check and the
//! release leaves a ledger that stays readable and never under-counts;
//! processes charging one ledger at once never lose a record.
//!
//! The failpoints (`dpincon_engine::failpoint`) exist only with
//! `dpincon-failpoint`'s `failpoints` feature, which this crate's
//! dev-dependency turns on in the binary `cargo test` builds.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const POINTS: [&str; 7] = dpincon_engine::failpoint::POINTS;
/// The points at which this job's records are whole in the ledger: from
/// the end of the write on (the page cache survives SIGKILL).
const CHARGED_FROM: usize = 4;
const EPSILON: f64 = 0.5;
const MEASURES: f64 = 3.0;

fn fixture(dir: &Path) -> (PathBuf, PathBuf) {
    let data = dir.join("t.csv");
    let mut csv = String::from("A,B\n");
    for i in 0..200 {
        csv += &format!("{},{}\n", i % 7, i % 5);
    }
    std::fs::write(&data, csv).unwrap();
    let dcs = dir.join("fd.txt");
    std::fs::write(&dcs, "FD: A -> B\n").unwrap();
    (data, dcs)
}

fn run(data: &Path, dcs: &Path, ledger: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dpincon-cli"));
    let eps = EPSILON.to_string();
    cmd.args(["run", "--data", data.to_str().unwrap(), "--constraints", dcs.to_str().unwrap()]);
    cmd.args(["--epsilon", &eps, "--ledger", ledger.to_str().unwrap(), "--format", "json"]);
    cmd
}

/// ε recorded in the ledger, counting whole lines only (a torn last line
/// is not a record), and whether every whole line parses.
fn ledger_spent(ledger: &Path) -> f64 {
    let Ok(text) = std::fs::read_to_string(ledger) else { return 0.0 };
    text.split_inclusive('\n')
        .filter(|l| l.ends_with('\n'))
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a whole line is a record"))
        .filter_map(|v| v["epsilon"].as_f64())
        .sum()
}

/// Runs a job, stopped at `point`, SIGKILLs it there.
fn kill_at(point: &str, data: &Path, dcs: &Path, ledger: &Path) {
    let mut child = run(data, dcs, ledger)
        .env(dpincon_engine::failpoint::ENV, point)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let reached = format!("dpincon failpoint {point} reached");
    let mut seen = Vec::new();
    for line in stderr.lines() {
        let line = line.unwrap();
        if line.contains(&reached) {
            break;
        }
        seen.push(line);
    }
    // SIGKILL on Unix: no destructor, no flush, no unlock but the OS's.
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success(), "{point}: the job must not have finished: {seen:?}");
    assert!(seen.iter().all(|l| !l.contains("error")), "{point}: {seen:?}");
}

#[test]
fn a_run_killed_at_any_point_never_under_counts_and_the_ledger_stays_readable() {
    let dir = tempfile::tempdir().unwrap();
    let (data, dcs) = fixture(dir.path());
    let ledger = dir.path().join("ledger.jsonl");
    // Twice round every point, so each also meets a ledger left by a kill.
    let job = MEASURES * EPSILON;
    let mut guaranteed = 0.0;
    for round in 0..2 {
        for (i, point) in POINTS.iter().enumerate() {
            let before = ledger_spent(&ledger);
            kill_at(point, &data, &dcs, &ledger);
            let after = ledger_spent(&ledger);
            if i >= CHARGED_FROM {
                // The records are whole: noise may have been drawn.
                assert_eq!(after, before + job, "round {round}, {point}");
                guaranteed += job;
            } else if *point == "charge-torn" {
                // Whole lines of a torn write count (over-counting is safe).
                assert!(before <= after && after < before + job, "round {round}, {point}");
            } else {
                assert_eq!(after, before, "round {round}, {point}: nothing charged yet");
            }
        }
    }
    let charged = ledger_spent(&ledger);
    assert!(charged >= guaranteed);
    // A normal run reads what the kills left and counts every charge.
    let out = run(&data, &dcs, &ledger).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: dpincon_engine::Report = serde_json::from_slice(&out.stdout).unwrap();
    let state = report.budget.and_then(|b| b.ledger).expect("the report's ledger state");
    assert_eq!(state.spent_before, charged);
    assert_eq!(state.spent_after, charged + MEASURES * EPSILON);
    let text = std::fs::read_to_string(&ledger).unwrap();
    assert!(
        text.ends_with('\n')
            && text.lines().all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok())
    );
}

#[test]
fn processes_charging_one_ledger_at_once_lose_no_record() {
    let dir = tempfile::tempdir().unwrap();
    let (data, dcs) = fixture(dir.path());
    let ledger = dir.path().join("ledger.jsonl");
    const JOBS: usize = 8;
    let children: Vec<_> = (0..JOBS)
        .map(|_| {
            run(&data, &dcs, &ledger).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let text = std::fs::read_to_string(&ledger).unwrap();
    let lines: Vec<serde_json::Value> =
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    // One header (created once, by whichever job locked first), then
    // every job's three records.
    assert_eq!(lines.iter().filter(|l| l.get("dataset").is_some()).count(), 1);
    assert!(lines[0].get("dataset").is_some());
    let records = lines.iter().filter(|l| l.get("measure").is_some()).count();
    assert_eq!(records, JOBS * 3);
    let mut jobs: Vec<&str> = lines.iter().filter_map(|l| l["job"].as_str()).collect();
    jobs.dedup();
    assert_eq!(jobs.len(), JOBS, "each job's records are contiguous: {jobs:?}");
    assert_eq!(ledger_spent(&ledger), JOBS as f64 * MEASURES * EPSILON);
}
