//! Gated audits on a coordinator (issue 48 item 8): the operator
//! registers the dataset's nightly audit and owns its epochs; a client
//! (`dpincon-cli audit --coordinator`, or the client API) asks for nights
//! and sees their verdicts at each night's fixed release time. Real
//! processes on loopback: coordinator, Ballista scheduler and executor.
//!
//! The ledger changes only at acceptance (the night's whole hold) and at
//! the release time (what the night did not use comes back), so no
//! observable moves with the gates' answers before they are released.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::{
    ALICE, Ballista, Cluster, DATASET, cli, cli_binary, config_with, ledger_charges, ledger_path,
    try_coordinator_env, within, write_table,
};
use dpincon_client::ClientJob;
use dpincon_engine::TestOptions;
use dpincon_proto::v1::JobState;
use serde_json::{Value, json};

/// ε of one epoch of I_R: release 1 + gate 2.
const EPOCH: f64 = 3.0;

fn audit(bin: &Path, suite: &Path, url: &str, out: &Path) -> Output {
    let (suite, out) = (suite.to_str().unwrap(), out.to_str().unwrap());
    cli(bin, &["audit", "--suite", suite, "--coordinator", url, "--seed", "3", "--out", out], ALICE)
}

fn report(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap()
}

/// A fixed-time dataset (6 s slots) with the operator's gated audit of
/// I_R: 5 epochs of ε 3 planned over 30 nights, within the cap of 100.
fn gated_config(dir: &Path, constraints: &str) -> PathBuf {
    config_with(
        dir,
        "main",
        &format!(
            "budget-cap = 100.0\nmax-job-epsilon = 40.0\nmax-rows = 2000\n\
             allow-non-private = true\njob-deadline = \"6s\"\n\
             [datasets.{DATASET}.gate]\nconstraints = {constraints:?}\nepsilon = 1.0\n\
             measures = [\"r\"]\ngate-epsilon = 2.0\nrefreshes = 5\nhorizon = \"30d\"\n\
             [[datasets.{DATASET}.gate.check]]\nmeasure = \"r\"\nmax = 1400\n"
        ),
        "",
    )
}

/// Tonight's gated night, seeded (a test dataset).
fn night() -> ClientJob {
    ClientJob {
        test: TestOptions { seed: Some(3), ..TestOptions::default() },
        ..ClientJob::gated(DATASET)
    }
}

/// Waits (bounded) until the ledger's spent ε is `spent`.
async fn ledger_settles(ledger: &Path, spent: f64) {
    within(async {
        while ledger_charges(ledger).0 != spent {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn the_operator_owns_the_epochs_and_a_night_pays_only_what_it_opened() {
    let Some(bin) = cli_binary() else {
        eprintln!("SKIPPED: dpincon-cli is not built (run `cargo test --workspace`)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (_, constraints) = write_table(dir.path(), 1500);
    let constraints = constraints.to_str().unwrap();
    let config = gated_config(dir.path(), constraints);
    let cluster = Cluster::start_with(dir.path(), &config, 1, &[], &[]);
    let url = cluster.coordinator.url();
    let client = cluster.client();
    let ledger = ledger_path(dir.path(), "main");

    // A gated night runs the operator's audit: a client's own constraints
    // or ε are refused before anything is charged.
    let mut own = ClientJob::gated(DATASET);
    own.constraints = "FD: Zip -> City".into();
    let err = client.submit(&own).await.unwrap_err().to_string();
    assert!(err.contains("send only `dataset` and `gated`"), "{err}");
    assert_eq!(ledger_charges(&ledger).0, 0.0);

    // Night 1, from a suite: the first epoch opens, charged one epoch.
    let suite = dir.path().join("suite.toml");
    std::fs::write(
        &suite,
        format!(
            "name = \"gated-remote\"\nhorizon = \"30d\"\n\
             [[dataset]]\nname = \"nightly\"\ncoordinator-dataset = \"{DATASET}\"\n\
             constraints = {constraints:?}\nepsilon = 1\nmeasures = [\"r\"]\nmax-rows = 2000\n\
             budget-cap = 100\n[dataset.gate]\nepsilon = 2\nrefreshes = 5\n\
             [[dataset.check]]\nname = \"repair\"\nmeasure = \"r\"\nmax = 1400\n"
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let first = audit(&bin, &suite, &url, &out);
    let stdout = String::from_utf8_lossy(&first.stdout);
    assert_eq!(first.status.code(), Some(0), "{stdout}\n{}", cluster.logs());
    let night = &report(&out)["datasets"][0];
    let check = &night["checks"][0];
    assert_eq!(
        (&check["gate"]["outcome"], &check["gate"]["reason"]),
        (&json!("fresh"), &json!("first"))
    );
    assert_eq!(night["budget"]["per_run"].as_f64(), Some(EPOCH), "{night}");
    let (spent, records) = ledger_charges(&ledger);
    assert_eq!(spent, EPOCH, "{records:?}");
    assert!(records.iter().all(|r| r.get("returned").is_none()), "nothing unused: {records:?}");

    // Night 2, through the API: charged its whole hold when accepted, so
    // the ledger shows nothing of its answer until its release time.
    let tonight = ClientJob {
        test: TestOptions { seed: Some(3), ..TestOptions::default() },
        ..ClientJob::gated(DATASET)
    };
    let id = client.submit(&tonight).await.unwrap();
    assert_eq!(ledger_charges(&ledger).0, 2.0 * EPOCH, "the hold, at acceptance");
    let status = client.status(&id).await.unwrap();
    assert_eq!(status.state, JobState::Queued as i32);
    assert!(status.release_at_unix_ms > 0, "{status:?}");
    // One night per dataset is booked at a time (the epochs' one writer).
    let err = client.submit(&tonight).await.unwrap_err().to_string();
    assert!(err.contains("is booked and not yet released"), "{err}");
    let text = within(client.wait(&id, |_| {})).await.unwrap();
    let released: dpincon_engine::Report = serde_json::from_str(&text).unwrap();
    assert!(common::now_ms() >= status.release_at_unix_ms, "shown before its release time");
    let gated = released.gated.as_ref().expect("a gated report");
    assert_eq!(gated[0].outcome, dpincon_engine::gate::GateOutcome::Pass, "{text}");
    assert_eq!(released.budget.as_ref().map(|b| b.total), Some(0.0));
    // At its release time the unused hold comes back: one epoch in all.
    ledger_settles(&ledger, EPOCH).await;
    let (spent, records) = ledger_charges(&ledger);
    assert_eq!(spent, EPOCH);
    let back: Vec<&Value> = records.iter().filter(|r| r.get("returned").is_some()).collect();
    assert_eq!(back.len(), 1, "{records:?}");
    assert_eq!(
        (back[0]["job"].as_str(), back[0]["returned"].as_f64()),
        (Some(id.as_str()), Some(EPOCH))
    );

    // Night 3 from the suite: a pass, judged on the gate's interval, free.
    let third = audit(&bin, &suite, &url, &out);
    let stdout = String::from_utf8_lossy(&third.stdout);
    assert_eq!(third.status.code(), Some(0), "{stdout}\n{}", cluster.logs());
    assert!(stdout.contains("gated (no ε"), "{stdout}");
    let night = &report(&out)["datasets"][0];
    assert_eq!(night["checks"][0]["gate"]["outcome"], "pass", "{night}");
    assert_eq!(night["budget"]["per_run"].as_f64(), Some(0.0));
    assert_eq!(night["budget"]["plan"]["spent"].as_f64(), Some(EPOCH), "{night}");

    // The epochs' secret stays beside the ledger, owner-only, and never
    // reaches a client.
    let state = ledger.with_extension("gate");
    let mode = std::fs::metadata(&state).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let secret: Value = serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert!(secret["epochs"]["r"]["secret"]["threshold_noise"].is_i64(), "{secret}");
    let shown = std::fs::read_to_string(out.join("report.json")).unwrap();
    for seen in [&text, &shown] {
        assert!(!seen.contains("threshold_noise") && !seen.contains("secret"), "{seen}");
    }
}

/// A night cut after drawing its epoch and before storing it (the job's
/// process stopped at the failpoint, killed at its slot's end) keeps its
/// whole hold; the next night redraws that epoch under it (`recovered`)
/// and gives its own hold back: one epoch charged, none lost, none twice.
#[tokio::test(flavor = "multi_thread")]
async fn a_night_cut_after_its_draw_keeps_its_hold_and_the_next_recovers_it_free() {
    let dir = tempfile::tempdir().unwrap();
    let (_, constraints) = write_table(dir.path(), 1500);
    let config = gated_config(dir.path(), constraints.to_str().unwrap());
    let ballista = Ballista::start(dir.path(), "main", 1, &[]);
    let scheduler = ballista.coordinator_args();
    let scheduler: Vec<&str> = scheduler.iter().map(String::as_str).collect();
    let args = ["--config", config.to_str().unwrap()];
    let ledger = ledger_path(dir.path(), "main");
    let failpoint = [(dpincon_engine::failpoint::ENV, "gate-drawn")];
    let mut first = try_coordinator_env(dir.path(), &scheduler, &args, &failpoint).unwrap();
    let client = common::client(&first, ALICE);
    let id = client.submit(&night()).await.unwrap();
    let err = within(client.wait(&id, |_| {})).await.unwrap_err().to_string();
    assert!(err.contains("deadline exceeded"), "{err}\n{}", first.logs());
    let (spent, records) = ledger_charges(&ledger);
    assert_eq!(spent, EPOCH, "the hold stays: {records:?}");
    first.kill();

    let second = common::coordinator(dir.path(), &scheduler, &args);
    let client = common::client(&second, ALICE);
    let id = client.submit(&night()).await.unwrap();
    let text = within(client.wait(&id, |_| {})).await.unwrap();
    let report: dpincon_engine::Report = serde_json::from_str(&text).unwrap();
    let gated = &report.gated.as_ref().expect("gated")[0];
    assert_eq!(gated.reason, Some(dpincon_engine::gate::OpenReason::Recovered), "{text}");
    assert_eq!(report.budget.as_ref().map(|b| b.total), Some(0.0));
    ledger_settles(&ledger, EPOCH).await;
    assert!(second.logs().contains("ε 3.000 returned"), "{}", second.logs());
}
