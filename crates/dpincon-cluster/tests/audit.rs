//! `dpincon-cli audit --coordinator`: a suite's jobs run on a real
//! coordinator (and its Ballista cluster) on loopback; verdicts come from
//! the returned reports exactly as for a local run; the coordinator's
//! ledger governs (the suite's cap is not used); a job the ledger cannot
//! fund is refused, the other datasets still run, and the exit code says so.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{
    ALICE, Cluster, TEST_DATASET, cli, cli_binary, config_with, embedded, embedded_job,
    ledger_charges, ledger_path, write_table,
};
use serde_json::{Value, json};

fn audit(bin: &Path, suite: &str, url: &str, out: &str) -> Output {
    let args = ["audit", "--suite", suite, "--coordinator", url, "--seed", "3", "--out", out];
    cli(bin, &args, ALICE)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_suite_runs_on_the_coordinator_whose_ledger_governs() {
    let Some(bin) = cli_binary() else {
        eprintln!("SKIPPED: dpincon-cli is not built (run `cargo test --workspace`)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (data, constraints) = write_table(dir.path(), 1500);
    // The operator's cap: 50 in all. A run spends 3 measures × ε 10 = 30.
    let config = config_with(
        dir.path(),
        "main",
        &format!("budget-cap = 50.0\nmax-job-epsilon = 40.0\n{TEST_DATASET}"),
        "",
    );
    let cluster = Cluster::start_with(dir.path(), &config, 1, &[], &[]);
    let url = cluster.coordinator.url();
    let suite = dir.path().join("suite.toml");
    // The suite's own plan: a cap of 100 (the coordinator's, 50, governs).
    std::fs::write(
        &suite,
        format!(
            "name = \"remote\"\n\
             [[dataset]]\nname = \"nightly\"\ncoordinator-dataset = \"table\"\n\
             constraints = {constraints:?}\nepsilon = 10\nmax-rows = 2000\nbudget-cap = 100\n\
             [[dataset.check]]\nname = \"pairs\"\nmeasure = \"mi\"\nmax = 1e9\n\
             [[dataset.check]]\nname = \"rows\"\nmeasure = \"p\"\nmax = 0\n\
             [[dataset.check]]\nname = \"repair\"\nmeasure = \"r\"\nmax-fraction = 0.9\n\
             [[dataset]]\nname = \"unknown\"\ncoordinator-dataset = \"no-such-dataset\"\n\
             constraints = {constraints:?}\nepsilon = 1\nmax-rows = 10\nbudget-cap = 100\n\
             [[dataset.check]]\nname = \"unknown-pairs\"\nmeasure = \"mi\"\nmax = 1\n",
            constraints = constraints.to_str().unwrap()
        ),
    )
    .unwrap();
    let out_dir = dir.path().join("out");
    let first = audit(&bin, suite.to_str().unwrap(), &url, out_dir.to_str().unwrap());
    let stderr = String::from_utf8_lossy(&first.stderr);
    // The unknown dataset is an error: exit 3.
    assert_eq!(first.status.code(), Some(3), "{stderr}\n{}", cluster.logs());
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("report.json")).unwrap())
            .unwrap();
    let ran = &report["datasets"][0];
    assert_eq!(ran["status"], "ran", "{report}\n{stderr}\n{}", cluster.logs());
    // The coordinator shows a client its own job's charge only: the
    // budget is the suite's plan against its own charges (none yet).
    let b = &ran["budget"];
    assert_eq!((b["cap"].as_f64(), b["spent"].as_f64()), (Some(100.0), Some(0.0)), "{b}");
    assert_eq!((b["per_run"].as_f64(), b["remaining"].as_f64()), (Some(30.0), Some(70.0)));
    assert_eq!(b["nights_left"].as_f64(), Some(2.0));
    assert!(b["ledger"].as_str().unwrap().contains(&url), "{b}");
    assert_eq!(ledger_charges(&ledger_path(dir.path(), "main")).0, 30.0);
    // The verdicts judge the coordinator's releases: the same seeded
    // releases an embedded run of the same job gives.
    let client_job = json!({"epsilon": 10.0, "seed": 3});
    let (local, _) = embedded(&embedded_job(&data, &constraints, &client_job)).await;
    let released = local.measures.expect("the embedded releases");
    let (mi, p, r) = (released.mi.unwrap(), released.p.unwrap(), released.r.unwrap());
    let local = [(mi.value, mi.ci95), (p.value, p.ci95), (r.value, r.ci95)];
    // (The audit's report is read as JSON: its type is written, never read.)
    for (check, (value, ci95)) in ran["checks"].as_array().unwrap().iter().zip(local) {
        assert_eq!(check["value"], json!(value), "{check}");
        assert_eq!(check["ci95"], json!(ci95), "{check}");
    }
    assert_eq!(ran["checks"][0]["verdict"], "pass");
    assert_eq!(ran["checks"][1]["verdict"], "fail");
    assert_eq!(ran["seeded"], true);
    let unknown = &report["datasets"][1];
    assert_eq!(unknown["status"], "error");
    assert!(unknown["error"].as_str().unwrap().contains("unknown dataset"), "{unknown}");

    // The second night: 30 more would pass the operator's cap of 50. The
    // coordinator refuses before queueing; nothing more is charged.
    let second = audit(&bin, suite.to_str().unwrap(), &url, out_dir.to_str().unwrap());
    assert_eq!(second.status.code(), Some(3));
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("report.json")).unwrap())
            .unwrap();
    let refused = &report["datasets"][0];
    assert_eq!(refused["status"], "refused", "{report}");
    assert!(refused["budget"]["refused"].as_str().unwrap().contains("budget exhausted"));
    // What the first night was charged, from the suite's own history.
    assert_eq!(refused["budget"]["spent"].as_f64(), Some(30.0), "{refused}");
    assert_eq!(refused["checks"][0]["verdict"], "error");
    assert_eq!(ledger_charges(&ledger_path(dir.path(), "main")).0, 30.0);
    // Both nights are in the history, the refused one without releases.
    let history = Command::new(&bin)
        .args(["audit", "history", "--suite", suite.to_str().unwrap()])
        .output()
        .unwrap();
    let trend = String::from_utf8_lossy(&history.stdout);
    assert!(trend.contains("pairs (nightly, mi):"), "{trend}");
}
