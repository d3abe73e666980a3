//! What a client can and cannot do to a coordinator (issue 11): operator-
//! owned datasets, ledgers, caps and seeds; per-client credentials; a status
//! stream that carries only states.

mod common;

use common::{
    BOB, Cluster, WHEN_DONE, client, config_with, job, ledger_charges, ledger_path,
    try_coordinator, within, write_table,
};
use dpincon_client::ClientError;
use dpincon_proto::v1::{FailureReason, JobState, JobStatus};
use serde_json::json;
use tonic::Code;

fn rpc(e: &ClientError) -> (Option<Code>, String) {
    match e {
        ClientError::Rpc(status) => (Some(status.code()), status.message().to_string()),
        other => (None, other.to_string()),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn client_set_seed_ledger_cap_paths_and_exact_values_are_refused_and_nothing_is_charged() {
    let dir = tempfile::tempdir().unwrap();
    let (data, constraints) = write_table(dir.path(), 300);
    let cluster = Cluster::start(dir.path(), 1, &[], &[]);
    let c = cluster.client();
    let fresh = dir.path().join("fresh-ledger.jsonl");
    let attempts = [
        ("seed", json!({"epsilon": 1.0, "seed": 42})),
        ("ledger", json!({"epsilon": 1.0, "ledger": fresh.to_str().unwrap()})),
        ("budget-cap", json!({"epsilon": 1.0, "budget-cap": 1e9})),
        ("data", json!({"epsilon": 1.0, "data": data.to_str().unwrap()})),
        ("non-private", json!({"non-private": true})),
        ("brute-force", json!({"epsilon": 1.0, "brute-force": true})),
        ("baseline-truemax", json!({"epsilon": 1.0, "strategy": "baseline-truemax"})),
    ];
    for (key, extra) in attempts {
        let err = c.submit(&job(&constraints, extra)).await.unwrap_err();
        let (code, message) = rpc(&err);
        assert_eq!(code, Some(Code::PermissionDenied), "{key}: {message}");
        assert!(message.contains(key) && message.contains("nothing was queued"), "{message}");
    }
    // A constraint file path instead of constraints: refused, the file unopened.
    let mut by_path = job(&constraints, json!({"epsilon": 1.0}));
    by_path["constraints"] = json!(constraints.to_str().unwrap());
    let (code, message) = rpc(&c.submit(&by_path).await.unwrap_err());
    assert_eq!(code, Some(Code::InvalidArgument), "{message}");
    assert!(message.contains("bad constraint syntax") && message.contains("inline"), "{message}");
    // Unknown datasets and columns are refused from the declared schema.
    let mut other = job(&constraints, json!({"epsilon": 1.0}));
    other["dataset"] = json!("/etc/passwd");
    assert_eq!(rpc(&c.submit(&other).await.unwrap_err()).0, Some(Code::NotFound));
    let mut bad_column = job(&constraints, json!({"epsilon": 1.0}));
    bad_column["constraints"] = json!("FD: Zip -> Town");
    let (code, message) = rpc(&c.submit(&bad_column).await.unwrap_err());
    assert_eq!(code, Some(Code::InvalidArgument));
    assert!(message.contains("Town"), "{message}");

    // Nothing was queued, nothing charged, no file created.
    assert!(!fresh.exists());
    assert!(!ledger_path(dir.path(), "main").exists());
    assert!(c.list().await.unwrap().is_empty());
    // A proper job runs and is charged by the operator's ledger.
    let id = c.submit(&job(&constraints, json!({"epsilon": 0.5}))).await.unwrap();
    let report = common::report(&within(c.wait(&id, |_| {})).await.unwrap());
    assert!(!report.seeded);
    assert!(report.non_private.is_none() && report.timings.is_none());
    let (spent, _) = ledger_charges(&ledger_path(dir.path(), "main"));
    assert!((spent - 1.5).abs() < 1e-9, "{spent}");
}

#[tokio::test(flavor = "multi_thread")]
async fn jobs_past_the_operators_cap_are_refused_and_the_ledger_holds_n_charges() {
    let dir = tempfile::tempdir().unwrap();
    let (_, constraints) = write_table(dir.path(), 300);
    // Each job spends 3 × 0.4 = 1.2; the cap 5.0 funds four (4.8).
    let config = config_with(
        dir.path(),
        "main",
        &format!("budget-cap = 5.0\nmax-job-epsilon = 2.0\n{WHEN_DONE}"),
        "",
    );
    let cluster = Cluster::start_with(dir.path(), &config, 1, &[], &[]);
    let c = cluster.client();
    let remote = job(&constraints, json!({"epsilon": 0.4}));
    // Submitted back to back: each is charged when accepted.
    let mut accepted = Vec::new();
    let mut refused = Vec::new();
    for _ in 0..6 {
        match c.submit(&remote).await {
            Ok(id) => accepted.push(id),
            Err(e) => refused.push(rpc(&e)),
        }
    }
    assert_eq!(accepted.len(), 4, "{refused:?}");
    for (code, message) in &refused {
        assert_eq!(*code, Some(Code::FailedPrecondition));
        assert!(message.starts_with("budget exhausted"), "{message}");
    }
    for id in &accepted {
        within(c.wait(id, |_| {})).await.unwrap_or_else(|e| panic!("{e}\n{}", cluster.logs()));
    }
    let (spent, charges) = ledger_charges(&ledger_path(dir.path(), "main"));
    assert_eq!(charges.len(), 4 * 3);
    assert!((spent - 4.0 * 1.2).abs() < 1e-9, "{spent}");
    // Over the per-job limit: refused whatever the budget left.
    let big = job(&constraints, json!({"epsilon": 0.7}));
    let (code, message) = rpc(&c.submit(&big).await.unwrap_err());
    assert_eq!(code, Some(Code::InvalidArgument));
    assert!(message.starts_with("over limits"), "{message}");
    // Past the cap (4.8 + 0.3 > 5), even a one-measure job is refused.
    let small = job(&constraints, json!({"epsilon": 0.3, "measures": ["r"]}));
    let (_, message) = rpc(&c.submit(&small).await.unwrap_err());
    assert!(message.starts_with("budget exhausted"), "{message}");
    assert_eq!(ledger_charges(&ledger_path(dir.path(), "main")).1.len(), 12);
}

/// What a private job's status may carry: its id, state and public reason.
fn only_state(s: &JobStatus) -> bool {
    let public = JobStatus {
        job_id: s.job_id.clone(),
        state: s.state,
        reason: s.reason,
        error: s.error.clone(),
        ..JobStatus::default()
    };
    *s == public
}

#[tokio::test(flavor = "multi_thread")]
async fn the_private_status_stream_carries_states_only() {
    let dir = tempfile::tempdir().unwrap();
    let (_, constraints) = write_table(dir.path(), 1500);
    let cluster = Cluster::start(dir.path(), 2, &[&common::task_delay(20)], &[]);
    let c = cluster.client();
    let remote = job(&constraints, json!({"epsilon": 1.0}));
    // A job ahead keeps the second queued for a while.
    let first = c.submit(&remote).await.unwrap();
    let second = c.submit(&remote).await.unwrap();
    let mut seen = Vec::new();
    let last = within(c.watch(&second, |s| seen.push(s.clone()))).await.unwrap();
    assert_eq!(last.state, JobState::Succeeded as i32, "{}", cluster.logs());
    assert!(seen.iter().all(only_state), "{seen:?}");
    let states: Vec<i32> = seen.iter().map(|s| s.state).collect();
    let want = [JobState::Queued, JobState::Succeeded].map(|s| s as i32);
    assert_eq!(states, want, "queued, then the end: never running, nothing in between");
    for id in [&first, &second] {
        let status = c.status(id).await.unwrap();
        assert!(only_state(&status) && status.queue_position == 0, "{status:?}");
    }
    // Nor does the operator's log hold a private job's figures.
    let log = cluster.coordinator.logs();
    for figure in ["tasks", "edges", "fingerprint", "detect "] {
        assert!(!log.contains(figure), "{figure}: {log}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn credentials_are_per_client() {
    let dir = tempfile::tempdir().unwrap();
    let (_, constraints) = write_table(dir.path(), 200);
    let cluster = Cluster::start(dir.path(), 1, &[], &[]);
    let remote = job(&constraints, json!({"epsilon": 1.0}));
    let alice = cluster.client();
    let id = alice.submit(&remote).await.unwrap();
    within(alice.wait(&id, |_| {})).await.unwrap();

    // Another client sees neither the job nor its result.
    let bob = client(&cluster.coordinator, BOB);
    assert_eq!(rpc(&bob.status(&id).await.unwrap_err()).0, Some(Code::NotFound));
    assert_eq!(rpc(&bob.result(&id).await.unwrap_err()).0, Some(Code::NotFound));
    assert!(bob.list().await.unwrap().is_empty());
    // A wrong token opens nothing.
    let intruder = client(&cluster.coordinator, "not-the-token");
    let (code, _) = rpc(&intruder.submit(&remote).await.unwrap_err());
    assert_eq!(code, Some(Code::Unauthenticated));
    assert_eq!(alice.status(&id).await.unwrap().reason, FailureReason::Unspecified as i32);
}

#[tokio::test(flavor = "multi_thread")]
async fn two_coordinators_refuse_to_share_a_ledger_directory() {
    let dir = tempfile::tempdir().unwrap();
    write_table(dir.path(), 50);
    let cluster = Cluster::start(dir.path(), 1, &[], &[]);
    // Same configuration, so same state and ledger directories.
    let config = dir.path().join("main").join("coordinator.toml");
    let second = try_coordinator(
        dir.path(),
        &["--scheduler", &cluster.ballista.scheduler.url()],
        &["--config", config.to_str().unwrap()],
    );
    let why = second.err().expect("the second coordinator must not start");
    assert!(why.log.contains("in use by another process"), "{why}");
    // Its own state directory but the first one's ledger directory: refused too.
    let shared_ledger =
        std::fs::read_to_string(&config).unwrap().replace("main/state", "second-state");
    let second_config = dir.path().join("second.toml");
    std::fs::write(&second_config, shared_ledger).unwrap();
    let why = try_coordinator(
        dir.path(),
        &["--scheduler", &cluster.ballista.scheduler.url()],
        &["--config", second_config.to_str().unwrap()],
    )
    .err()
    .expect("a shared ledger directory must be refused");
    assert!(why.log.contains("ledgers") && why.log.contains("in use"), "{why}");
}
