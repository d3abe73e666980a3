//! The report reads back as the type it was written from: every field a
//! consumer (the CLI's table, the audit's verdicts) reads survives the
//! round trip through JSON, releases, ledger and exact values included.

use dpincon_engine::{JobConfig, Measure, NoProgress, Report, run_job};

#[tokio::test]
async fn a_report_reads_back_as_a_report() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("t.csv");
    let mut csv = String::from("Zip,City\n");
    for i in 0..30 {
        csv += &format!("{},{}\n", i % 4, i % 7);
    }
    std::fs::write(&data, csv).unwrap();
    let dcs = dir.path().join("t.dcs");
    std::fs::write(&dcs, "FD: Zip -> City\n").unwrap();
    let mut job = JobConfig::new(&data, &dcs);
    job.release.epsilon = Some(1.0);
    job.test.seed = Some(5);
    job.test.non_private = true;
    job.data.ledger = Some(dir.path().join("t.ledger"));
    let report = run_job(&job, &NoProgress).await.unwrap();

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
