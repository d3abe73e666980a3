//! The coordinator's configuration as the tests write it: client tokens,
//! the dataset [`DATASET`] on `write_table`'s table, and its ledger.

use std::path::{Path, PathBuf};

/// Client tokens (`alice` and `bob` in the coordinator's token file).
pub const ALICE: &str = "alice-token-7d0e9b2a";
pub const BOB: &str = "bob-token-51c3aa08ff";
/// The dataset every test cluster registers.
pub const DATASET: &str = "table";
/// The declared schema of `write_table`'s table.
pub const SCHEMA: &str =
    "ID:int,SSN:string,Zip:int,City:string,State:string,Salary:int,Rate:float,Age:int,Tenure:int";

pub fn path_str(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temporary paths")
}

/// Writes the client token file (alice, bob) in `dir`; returns its path.
pub fn client_tokens(dir: &Path) -> PathBuf {
    let path = dir.join("clients.txt");
    std::fs::write(&path, format!("# test clients\nalice {ALICE}\nbob {BOB}\n")).unwrap();
    path
}

/// Writes a coordinator configuration registering `dir/table.csv` as
/// [`DATASET`] (cap 1000, 100 per job), with its state and ledger under
/// `dir/tag/`, and `extra` appended; returns its path. The dataset accepts
/// the deadline channel (no max-edges): tests that bound work say so.
pub fn config_with(dir: &Path, tag: &str, dataset: &str, extra: &str) -> PathBuf {
    let root = dir.join(tag);
    std::fs::create_dir_all(root.join("ledgers")).unwrap();
    let text = format!(
        "state-dir = {state:?}\n{extra}\n[datasets.{DATASET}]\ndata = {data:?}\n\
         schema = {SCHEMA:?}\nledger = {ledger:?}\naccept-deadline-channel = true\n{dataset}\n",
        state = path_str(&root.join("state")),
        data = path_str(&dir.join("table.csv")),
        ledger = path_str(&ledger_path(dir, tag)),
    );
    let path = root.join("coordinator.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Dataset keys of the harness's tests that are not about timing: results
/// show when jobs end (the operator accepts the timing channel).
pub const WHEN_DONE: &str = "release = \"when-done\"\naccept-timing-channel = true\n";
/// Dataset keys of a test dataset: also non-private jobs and seeds.
pub const TEST_DATASET: &str =
    "release = \"when-done\"\naccept-timing-channel = true\nallow-non-private = true\n";

/// [`config_with`] with a cap of 1000 and 100 per job: a private dataset
/// whose results show when jobs end ([`WHEN_DONE`]).
pub fn config(dir: &Path, tag: &str) -> PathBuf {
    config_with(dir, tag, &format!("budget-cap = 1000.0\nmax-job-epsilon = 100.0\n{WHEN_DONE}"), "")
}

/// [`config`] for a test dataset ([`TEST_DATASET`]): seeds and exact values.
pub fn test_config(dir: &Path, tag: &str) -> PathBuf {
    config_with(
        dir,
        tag,
        &format!("budget-cap = 1000.0\nmax-job-epsilon = 100.0\n{TEST_DATASET}"),
        "",
    )
}

/// The ledger of [`config`]`(dir, tag)`.
pub fn ledger_path(dir: &Path, tag: &str) -> PathBuf {
    dir.join(tag).join("ledgers").join("table.jsonl")
}

/// ε charged in a ledger file (0 when it does not exist), and its records.
pub fn ledger_charges(path: &Path) -> (f64, Vec<serde_json::Value>) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|l| l.get("job").is_some())
        .collect();
    // Charges, less what gated nights' holds gave back.
    let spent = records
        .iter()
        .map(|r| r["epsilon"].as_f64().unwrap_or(0.0) - r["returned"].as_f64().unwrap_or(0.0))
        .sum();
    (spent, records)
}

/// A dataset table for `[datasets.NAME]` on `data`, fixed-time with
/// `deadline`, its ledger in `dir/main/ledgers/NAME.jsonl`; it accepts the
/// deadline channel unless given max-edges.
pub fn fixed_dataset(
    dir: &std::path::Path,
    name: &str,
    data: &std::path::Path,
    deadline: &str,
) -> String {
    format!(
        "[datasets.{name}]\ndata = {:?}\nschema = {:?}\nledger = {:?}\nbudget-cap = 100.0\n\
         max-job-epsilon = 10.0\njob-deadline = {deadline:?}\naccept-deadline-channel = true\n",
        data.to_str().unwrap(),
        SCHEMA,
        dir.join("main").join("ledgers").join(format!("{name}.jsonl")).to_str().unwrap(),
    )
}
