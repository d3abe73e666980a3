//! The report reads back as the type it was written from: every field a
//! consumer (the CLI's table, the audit's verdicts) reads survives the
//! round trip through JSON, releases, ledger and exact values included;
//! and its JSON field names are pinned (`report_keys.txt`), so a renamed
//! field fails here even where writer and reader share the struct.

use std::collections::BTreeSet;

use dpincon_engine::{JobConfig, Measure, NoProgress, Report, run_job};

#[path = "support/report_keys.rs"]
mod report_keys;
use report_keys::key_paths;

/// A seeded job on a small table, releasing every measure with exact
/// values and a ledger.
async fn seeded_report(dir: &std::path::Path) -> Report {
    let mut csv = String::from("Zip,City\n");
    for i in 0..30 {
        csv += &format!("{},{}\n", i % 4, i % 7);
    }
    seeded_job(dir, &csv, "FD: Zip -> City\n").await
}

/// The job of [`seeded_report`] on `csv` under `constraints`.
async fn seeded_job(dir: &std::path::Path, csv: &str, constraints: &str) -> Report {
    let data = dir.join("t.csv");
    std::fs::write(&data, csv).unwrap();
    let dcs = dir.join("t.dcs");
    std::fs::write(&dcs, constraints).unwrap();
    let mut job = JobConfig::new(&data, &dcs);
    job.release.epsilon = Some(1.0);
    job.test.seed = Some(5);
    job.test.non_private = true;
    job.data.ledger = Some(dir.join("t.ledger"));
    run_job(&job, &NoProgress).await.unwrap()
}

#[tokio::test]
async fn a_report_reads_back_as_a_report() {
    let dir = tempfile::tempdir().unwrap();
    let report = seeded_report(dir.path()).await;

    let text = serde_json::to_string(&report).unwrap();
    let read: Report = serde_json::from_str(&text).unwrap();
    assert_eq!(serde_json::to_string(&read).unwrap(), text);
    let budget = read.budget.as_ref().expect("a private job has a budget");
    assert_eq!(budget.measures, Measure::ALL);
    assert_eq!(budget.ledger.as_ref().map(|l| l.spent_after), Some(3.0));
    let measures = read.measures.as_ref().expect("releases");
    let mi = measures.mi.as_ref().expect("I_MI");
    assert_eq!(mi.ci95, report.measures.as_ref().unwrap().mi.as_ref().unwrap().ci95);
    assert!(!measures.r.as_ref().expect("I_R").parts.is_empty());
    let exact = read.non_private.as_ref().expect("exact values");
    assert_eq!(exact, report.non_private.as_ref().unwrap());
    assert!(read.seeded && read.timings.is_some());
}

/// The report's JSON field names are an interface (the audit's history,
/// dashboards, the cluster's clients): a renamed, dropped or added field
/// must show here and be written into `tests/report_keys.txt` on purpose.
/// `DPINCON_BLESS=1` rewrites the file.
///
/// The paths of three seeded reports: a table generated from a fixed seed
/// with a key, an FD, an order constraint with an equality and one
/// without, a table under one FD (I_P bounded by its classes), and one
/// under a key and an FD of another X (I_P by the leading count); between
/// them every optional part of a report shows but a gated night's and a
/// quota verdict's. The cluster tests check every report they compare
/// against the same list.
#[tokio::test]
async fn the_report_s_field_names_are_pinned() {
    let dir = tempfile::tempdir().unwrap();
    let mut state: u64 = 20240611;
    let mut below = |n: u64| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    let mut csv = String::from("SSN,Zip,City,State,Salary,Rate,Age,Tenure\n");
    for id in 0..200 {
        let zip = below(30);
        let city = if below(10) == 0 { format!("C{zip}x") } else { format!("C{zip}") };
        let ssn = if below(20) == 0 { below(10) } else { 100 + id };
        let salary = 20 + below(100);
        let rate = if below(20) == 0 { salary.saturating_sub(1 + below(30)) } else { salary };
        let age = 18 + below(50);
        let tenure = if below(20) == 0 { age + below(20) } else { age / 3 };
        csv += &format!("{ssn},{zip},{city},S{},{salary},{rate},{age},{tenure}\n", zip % 5);
    }
    let constraints = "FD: Zip -> City\n\
                       not(t1.SSN=t2.SSN)\n\
                       not(t1.State=t2.State & t1.Salary>t2.Salary & t1.Rate<t2.Rate)\n\
                       not(t1.Age<t2.Age & t1.Tenure>t2.Tenure)\n";
    let mixed = serde_json::to_value(seeded_job(dir.path(), &csv, constraints).await).unwrap();
    // An FD alone: I_P's bound comes from its classes instead.
    let fd_dir = tempfile::tempdir().unwrap();
    let fd = serde_json::to_value(seeded_report(fd_dir.path()).await).unwrap();
    // A key and an FD of two X whose classes are a row or two: I_P by the
    // leading count (its look at M, its interval's bound).
    let mut csv = String::from("SSN,Phone,Name\n");
    for id in 0..3000 {
        let ssn = if id < 150 { 1 } else { 1000 + id };
        let phone = if id % 300 == 7 { id + 1 } else { id };
        csv += &format!("{ssn},{phone},N{id}\n");
    }
    let lead_dir = tempfile::tempdir().unwrap();
    let keys = "not(t1.SSN=t2.SSN)\nFD: Phone -> Name\n";
    let lead = serde_json::to_value(seeded_job(lead_dir.path(), &csv, keys).await).unwrap();
    let mut got = key_paths(&mixed);
    got.extend(key_paths(&fd));
    got.extend(key_paths(&lead));
    // At run time: `env!` keeps the path of the checkout that compiled it,
    // stale when a shared build cache serves another checkout.
    let pinned = std::path::Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").unwrap())
        .join("tests/report_keys.txt");
    let got_text: String = got.iter().map(|p| format!("{p}\n")).collect();
    if std::env::var_os("DPINCON_BLESS").is_some() {
        std::fs::write(&pinned, &got_text).unwrap();
    }
    let want: BTreeSet<String> =
        std::fs::read_to_string(&pinned).unwrap().lines().map(String::from).collect();
    let missing: Vec<_> = want.difference(&got).collect();
    let new: Vec<_> = got.difference(&want).collect();
    assert!(
        missing.is_empty() && new.is_empty(),
        "the report's field names changed: pinned but not written {missing:?}, written but \
         not pinned {new:?} (tests/report_keys.txt; DPINCON_BLESS=1 rewrites it)"
    );
}
