//! A `--job` file's keys, through the real binary: an unknown or malformed
//! key is refused naming the file and the key (and its line where the
//! parser knows it), before anything is read, charged or sent.

use std::path::Path;
use std::process::{Command, Output};

fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dpincon-cli")).args(args).output().unwrap()
}

fn refused(args: &[&str], needles: &[&str]) {
    let out = cli(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    for needle in needles {
        assert!(err.contains(needle), "{args:?}: expected {needle:?} in {err}");
    }
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn a_run_job_file_with_an_unknown_or_malformed_key_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "t.csv", "A,B\n1,2\n1,3\n");
    write(dir.path(), "fd.txt", "FD: A -> B\n");
    let ledger = dir.path().join("t.ledger");
    let head = format!(
        "data = {:?}\nconstraints = {:?}\nledger = {:?}\nbudget-cap = 5\n",
        dir.path().join("t.csv").display().to_string(),
        dir.path().join("fd.txt").display().to_string(),
        ledger.display().to_string(),
    );
    let unknown = write(dir.path(), "unknown.toml", &format!("{head}epsilonn = 1\n"));
    refused(
        &["run", "--job", &unknown],
        &["job file '", "unknown.toml", "line 5", "unknown field `epsilonn`"],
    );
    let malformed = write(dir.path(), "malformed.toml", &format!("{head}epsilon = \"one\"\n"));
    refused(&["run", "--job", &malformed], &["malformed.toml", "line 5", "`epsilon`"]);
    // A key of the table's own part (flattened into the job) is named too.
    let table = write(dir.path(), "table.toml", &format!("{head}formatt = \"csv\"\n"));
    refused(&["run", "--job", &table], &["table.toml", "unknown field `formatt`"]);
    assert!(!ledger.exists(), "nothing was charged");
}

#[test]
fn a_submit_job_file_with_an_unknown_key_is_refused_before_connecting() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(
        dir.path(),
        "job.toml",
        "dataset = \"t\"\nconstraints = \"FD: A -> B\"\nepsilon = 1\nledger = \"x\"\n",
    );
    // Port 9 (discard) on loopback: the refusal comes before any dial.
    refused(
        &["submit", "--coordinator", "http://127.0.0.1:9", "--job", &job],
        &["client job", "unknown field `ledger`"],
    );
    let job = write(dir.path(), "bad.toml", "dataset = \"t\"\nconstraints = 3\n");
    refused(
        &["submit", "--coordinator", "http://127.0.0.1:9", "--job", &job],
        &["client job", "constraints"],
    );
}
