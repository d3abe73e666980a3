//! The generated table, client jobs on it, the embedded run to compare
//! with, and reports read as the typed [`Report`].

use std::path::{Path, PathBuf};

use dpincon_engine::{DataFormat, JobConfig, NoProgress, Report};
use dpincon_graph::edge_stream_fingerprint;

use super::config::{DATASET, SCHEMA};

// The report's key paths, as `dpincon-engine` pins them.
#[path = "../../../dpincon-engine/tests/support/report_keys.rs"]
mod report_keys;

/// A client job on [`DATASET`] with the constraints of `write_table`
/// (read from `constraints`) and the keys of `extra` (a JSON object).
pub fn job(constraints: &Path, extra: serde_json::Value) -> serde_json::Value {
    let mut job = serde_json::json!({
        "dataset": DATASET,
        "constraints": std::fs::read_to_string(constraints).unwrap(),
    });
    for (k, v) in extra.as_object().expect("an object") {
        job[k] = v.clone();
    }
    job
}

/// The embedded job equal to a cluster job on [`DATASET`]: the declared
/// schema, and the client's release options.
pub fn embedded_job(data: &Path, constraints: &Path, client: &serde_json::Value) -> JobConfig {
    let mut job = JobConfig::new(data, constraints);
    job.table.format = Some(DataFormat::Csv);
    job.table.schema = Some(SCHEMA.parse().unwrap());
    job.table.infer_rows = Some(1);
    // The client's keys, read as the coordinator reads them.
    job.release = serde_json::from_value(client.clone()).expect("release options");
    job.test = serde_json::from_value(client.clone()).expect("test options");
    job
}

/// A deterministic pseudo-random generator (tests need no rand crate).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Writes a table of `rows` rows with FD, key, two-inequality (with and
/// without equality) conflicts and some NULLs, and its constraints.
/// Returns (data, constraints).
pub fn write_table(dir: &Path, rows: usize) -> (PathBuf, PathBuf) {
    let mut rng = Lcg(20240611);
    let states = ["AL", "AK", "AZ", "CA", "CO", "NY", "TX", "WA", "OR", "NV"];
    let mut csv = String::from("ID,SSN,Zip,City,State,Salary,Rate,Age,Tenure\n");
    for id in 0..rows {
        let zip = rng.below(300);
        // City follows Zip, with typos (FD violations) and NULLs.
        let city = match rng.below(100) {
            0 => String::new(),
            1..=3 => format!("City{}x", zip),
            _ => format!("City{zip}"),
        };
        // SSN mostly unique; some repeat (key violations).
        let ssn = if rng.below(100) < 2 { rng.below(40) } else { 1000 + id as u64 };
        let state = states[(zip % 10) as usize];
        let salary = 20_000 + rng.below(100_000);
        // Rate grows with Salary except in a few rows (two-inequality DC).
        let rate = if rng.below(100) < 3 {
            format!("{:.2}", (salary as f64) / 10_000.0 - 1.0 - rng.below(300) as f64 / 100.0)
        } else {
            format!("{:.2}", (salary as f64) / 10_000.0)
        };
        let salary = if rng.below(100) == 0 { String::new() } else { salary.to_string() };
        // Tenure grows with Age except in a few rows (no equality at all).
        let age = 18 + rng.below(50);
        let tenure = if rng.below(200) == 0 { age + rng.below(20) } else { age / 3 };
        csv += &format!(
            "{id},{:03}-{:02}-{:04},{zip},{city},{state},{salary},{rate},{age},{tenure}\n",
            ssn % 1000,
            ssn / 1000 % 100,
            ssn / 100_000
        );
    }
    let data = dir.join("table.csv");
    std::fs::write(&data, csv).unwrap();
    let constraints = dir.join("table.dcs");
    std::fs::write(
        &constraints,
        "FD: Zip -> City\n\
         not(t1.SSN=t2.SSN)\n\
         not(t1.State=t2.State & t1.Salary>t2.Salary & t1.Rate<t2.Rate)\n\
         not(t1.Age<t2.Age & t1.Tenure>t2.Tenure)\n",
    )
    .unwrap();
    (data, constraints)
}

/// The embedded run's report, written and read back as a remote one
/// arrives ([`report`]), and its edge-stream fingerprint.
pub async fn embedded(job: &JobConfig) -> (Report, String) {
    let ran = dpincon_engine::run_job(job, &NoProgress).await.expect("embedded run");
    let loaded = dpincon_engine::load(job, &NoProgress).await.expect("embedded load");
    let fingerprint = edge_stream_fingerprint(loaded.graph.edges()).to_string();
    (report(&serde_json::to_string(&ran).unwrap()), fingerprint)
}

/// A report's text read as the typed [`Report`] (a missing required field
/// fails here), through `serde_json::Value` on every side: serde_json's
/// default float parsing may miss the last bit, the same way on both. A
/// field renamed on both sides (one struct writes both) reads back alike,
/// so every key path must also be one `dpincon-engine` pins
/// (`tests/report_keys.txt`, kept by its `tests/report.rs`).
pub fn report(text: &str) -> Report {
    let json: serde_json::Value = serde_json::from_str(text).expect("report JSON");
    let paths = report_keys::key_paths(&json);
    // At run time: `env!` keeps the path of the checkout that compiled it,
    // stale when a shared build cache serves another checkout.
    let pinned = Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").unwrap())
        .join("../dpincon-engine/tests/report_keys.txt");
    let pinned = std::fs::read_to_string(pinned).unwrap();
    let pinned: std::collections::BTreeSet<&str> = pinned.lines().collect();
    let unknown: Vec<&String> = paths.iter().filter(|p| !pinned.contains(p.as_str())).collect();
    assert!(unknown.is_empty(), "report keys not pinned by dpincon-engine: {unknown:?}");
    serde_json::from_value(json).unwrap_or_else(|e| panic!("not a report ({e}): {text}"))
}

/// What must agree between runs: all but the job id, the ledger, timings,
/// paths and the thread count.
pub fn comparable(report: &Report) -> Report {
    let mut report = report.clone();
    report.job_id.clear();
    report.data.clear();
    report.constraints.clear();
    report.detection.threads = 0;
    report.timings = None;
    if let Some(budget) = report.budget.as_mut() {
        budget.ledger = None;
    }
    // The exact I_R needs the whole adjacency: skipped under --memory-limit.
    if let Some(exact) = report.non_private.as_mut() {
        exact.repair = None;
    }
    report
}

/// The report's exact values (a non-private job's).
pub fn exact(report: &Report) -> &dpincon_engine::NonPrivateReport {
    report.non_private.as_ref().expect("a non-private report")
}
