//! The coordinator under stress: SIGKILL and restart, and many clients at
//! once, on loopback with real processes.

mod common;

use std::collections::{HashMap, HashSet};

use common::{
    ALICE, BOB, Cluster, WHEN_DONE, client, config_with, coordinator, job, ledger_charges,
    ledger_path, wait_for_log, within, write_table,
};
use dpincon_client::ClientError;
use dpincon_proto::v1::{FailureReason, JobState};
use serde_json::json;
use tonic::Code;

/// Peak resident memory of a process (Linux), KiB.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_coordinator_killed_mid_job_resumes_fails_explicitly_and_never_charges_twice() {
    let dir = tempfile::tempdir().unwrap();
    let (_, constraints) = write_table(dir.path(), 1000);
    let mut cluster = Cluster::start(dir.path(), 1, &[&common::task_delay(150)], &[]);
    let c = cluster.client();
    let remote = job(&constraints, json!({"epsilon": 0.5}));
    let finished = c.submit(&remote).await.unwrap();
    let finished_report = within(c.wait(&finished, |_| {})).await.unwrap();
    let killed = c.submit(&remote).await.unwrap();
    let queued = c.submit(&remote).await.unwrap();
    // The operator's log says when the second job runs; then SIGKILL the
    // coordinator (its job process dies with it: kill on drop or orphaned).
    let watcher = tokio::spawn({
        let (c, killed) = (c.clone(), killed.clone());
        async move { c.watch(&killed, |_| {}).await }
    });
    wait_for_log(&cluster.coordinator, &format!("job {killed}: started")).await;
    cluster.coordinator.kill();
    // Its stream breaks without a final state.
    assert!(within(watcher).await.unwrap().is_err());

    // Same configuration, same state: the restarted coordinator.
    let config = dir.path().join("main").join("coordinator.toml");
    let scheduler = cluster.ballista.scheduler.url();
    cluster.coordinator = coordinator(
        dir.path(),
        &["--scheduler", &scheduler],
        &["--config", config.to_str().unwrap()],
    );
    let c = cluster.client();
    // The finished report is still served, unchanged.
    assert_eq!(c.result(&finished).await.unwrap(), finished_report);
    // The running job failed explicitly, with a public reason.
    let status = c.status(&killed).await.unwrap();
    assert_eq!(status.state, JobState::Failed as i32, "{status:?}");
    assert_eq!(status.reason, FailureReason::Interrupted as i32);
    // The queued one resumes and succeeds.
    let resumed = within(c.wait(&queued, |_| {})).await;
    assert!(resumed.is_ok(), "{resumed:?}\n{}", cluster.logs());

    // Each job was charged its three measures exactly once, when it was
    // accepted, under the coordinator's job id: the killed one too.
    let (_, charges) = ledger_charges(&ledger_path(dir.path(), "main"));
    let mut per_job: HashMap<String, usize> = HashMap::new();
    for c in &charges {
        *per_job.entry(c["job"].as_str().unwrap().to_string()).or_default() += 1;
    }
    let ids: HashSet<String> = [&finished, &killed, &queued].map(|s| s.to_string()).into();
    assert_eq!(per_job.keys().cloned().collect::<HashSet<_>>(), ids, "{per_job:?}");
    assert!(per_job.values().all(|&n| n == 3), "{per_job:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hundred_concurrent_submits_from_ten_clients_are_accepted_or_refused_as_queue_full() {
    let dir = tempfile::tempdir().unwrap();
    let (_, constraints) = write_table(dir.path(), 300);
    const QUEUE: usize = 20;
    let config = config_with(
        dir.path(),
        "main",
        &format!("budget-cap = 1000000.0\nmax-job-epsilon = 10.0\n{WHEN_DONE}"),
        &format!("[limits]\nmax-queued = {QUEUE}\nmax-queued-per-client = {QUEUE}"),
    );
    let cluster = Cluster::start_with(
        dir.path(),
        &config,
        2,
        &[&common::task_delay(50)],
        &["--partitions", "2"],
    );
    let remote = job(&constraints, json!({"epsilon": 0.5}));
    let mut submits = tokio::task::JoinSet::new();
    for k in 0..10 {
        // Ten connections, as ten client processes would open.
        let c = client(&cluster.coordinator, if k % 2 == 0 { ALICE } else { BOB });
        for _ in 0..10 {
            let (c, remote) = (c.clone(), remote.clone());
            submits.spawn(async move { (c.clone(), c.submit(&remote).await) });
        }
    }
    let mut accepted = Vec::new();
    let mut refused = 0;
    while let Some(joined) = within(submits.join_next()).await {
        let (c, outcome) = joined.unwrap();
        match outcome {
            Ok(id) => accepted.push((c, id)),
            Err(ClientError::Rpc(status)) => {
                assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
                assert!(status.message().starts_with("queue full"), "{}", status.message());
                refused += 1;
            }
            Err(other) => panic!("{other}"),
        }
    }
    assert_eq!(accepted.len() + refused, 100);
    assert!(refused > 0, "the queue limit was reached");
    assert!(accepted.len() >= QUEUE, "the queue filled before refusing");
    let ids: HashSet<&String> = accepted.iter().map(|(_, id)| id).collect();
    assert_eq!(ids.len(), accepted.len(), "distinct ids");
    // None lost: every accepted job ends, succeeded, and is charged once.
    for (c, id) in &accepted {
        within(c.wait(id, |_| {}))
            .await
            .unwrap_or_else(|e| panic!("{id}: {e}\n{}", cluster.logs()));
    }
    let (spent, charges) = ledger_charges(&ledger_path(dir.path(), "main"));
    assert_eq!(charges.len(), accepted.len() * 3);
    assert!((spent - accepted.len() as f64 * 1.5).abs() < 1e-6, "{spent}");
    let peak = peak_rss_kib(cluster.coordinator.pid());
    eprintln!(
        "100 submits: {} accepted, {refused} refused (queue full); coordinator peak RSS {} MiB",
        accepted.len(),
        peak.map_or("?".into(), |k| format!("{:.1}", k as f64 / 1024.0))
    );
}
