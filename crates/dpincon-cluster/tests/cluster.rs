//! End-to-end: a coordinator and workers as real processes on 127.0.0.1,
//! compared with the embedded run on the same generated table.

mod common;

use common::{Cluster, TOKEN, client, comparable, coordinator, embedded, within, write_table};
use dpincon_cluster::ClusterError;
use dpincon_engine::JobConfig;
use dpincon_proto::v1::JobState;
use tonic::Code;

const ROWS: usize = 3000;

fn rpc_code(e: &ClusterError) -> Option<Code> {
    match e {
        ClusterError::Rpc(status) => Some(status.code()),
        _ => None,
    }
}

fn report(json: &str) -> serde_json::Value {
    serde_json::from_str(json).expect("report JSON")
}

#[tokio::test(flavor = "multi_thread")]
async fn non_private_results_and_seeded_releases_equal_the_embedded_run() {
    let dir = tempfile::tempdir().unwrap();
    let (data, constraints) = write_table(dir.path(), ROWS);
    let cluster = Cluster::start(dir.path(), 3, &[], &["--allow-non-private"]);
    let client = cluster.client();

    // (1) Exact values. The coordinator's graph spills past 16 KiB here,
    // which must change nothing.
    let mut job = JobConfig::new(&data, &constraints);
    job.non_private = true;
    let (want, want_fp) = embedded(&job).await;
    job.memory_limit = Some("16KiB".into());
    assert!(want["non_private"]["edges"].as_u64().unwrap() > 1000, "a graph worth testing");
    let id = client.submit(&job).await.unwrap();
    let got = within(client.wait(&id, |_| {}))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", cluster.logs()));
    let got = report(&got);
    assert_eq!(comparable(&got), comparable(&want));
    assert!(got["timings"]["spilled_bytes"].as_u64() > Some(0), "{}", got["timings"]);
    let status = client.status(&id).await.unwrap();
    eprintln!("{status:?}");
    assert_eq!(status.edge_fingerprint, want_fp);
    assert_eq!(status.workers, 3);
    assert_eq!(status.tasks_done, status.tasks_total);
    assert!(status.bytes_sent > 0 && status.bytes_received > 0);
    let phases: Vec<&str> = status.phases.iter().map(|p| p.phase.as_str()).collect();
    for phase in [
        "read",
        "detect.connect",
        "detect.plan",
        "detect.dispatch",
        "detect.merge",
        "detect",
        "measure",
    ] {
        assert!(phases.contains(&phase), "{phase} timed: {phases:?}");
    }

    // (2) DP releases with the same seed, all measures.
    let mut job = JobConfig::new(&data, &constraints);
    job.epsilon = Some(1.0);
    job.seed = Some(42);
    let (want, _) = embedded(&job).await;
    let id = client.submit(&job).await.unwrap();
    let got = report(&within(client.wait(&id, |_| {})).await.unwrap());
    assert_eq!(comparable(&got), comparable(&want));
    assert!(got["measures"]["mi"].is_object() && got["measures"]["r"].is_object());
    assert_eq!(got["seeded"], true);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_killed_mid_job_changes_nothing_and_the_ledger_is_charged_once() {
    let dir = tempfile::tempdir().unwrap();
    let (data, constraints) = write_table(dir.path(), ROWS);
    // Slow tasks, two per worker: every worker holds tasks when one dies.
    let mut cluster = Cluster::start(
        dir.path(),
        3,
        &["--task-delay-ms", "150", "--max-tasks", "2"],
        &["--allow-non-private"],
    );
    let client = cluster.client();
    let ledger = dir.path().join("ledger.jsonl");
    let mut job = JobConfig::new(&data, &constraints);
    job.non_private = true;
    job.epsilon = Some(0.5);
    job.seed = Some(7);
    let (want, _) = embedded(&job).await;
    job.ledger = Some(ledger.clone());

    let id = client.submit(&job).await.unwrap();
    let mut killed_at = None;
    let last = within(client.watch(&id, |s| {
        if killed_at.is_none() && s.tasks_done >= 3 && s.tasks_done < s.tasks_total {
            cluster.workers[1].kill();
            killed_at = Some((s.tasks_done, s.tasks_total));
        }
    }))
    .await
    .unwrap();
    let (done, total) = killed_at.expect("the worker was killed while tasks remained");
    assert!(done < total);
    assert_eq!(last.state, JobState::Succeeded as i32, "{}\n{}", last.error, cluster.logs());
    eprintln!("killed at {done}/{total}: {last:?}");
    assert!(last.task_retries >= 1, "the dead worker's tasks were retried");
    let got = report(&client.result(&id).await.unwrap());
    assert_eq!(comparable(&got), comparable(&want));

    // One job, one charge per measure, whatever the retries.
    let ledger = std::fs::read_to_string(&ledger).unwrap();
    let charges: Vec<serde_json::Value> = ledger
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|l| l.get("job").is_some())
        .collect();
    assert_eq!(charges.len(), 3, "{ledger}");
    assert!(charges.iter().all(|c| c["job"] == got["job_id"]));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_number_of_workers_never_changes_the_edge_stream() {
    let dir = tempfile::tempdir().unwrap();
    let (data, constraints) = write_table(dir.path(), ROWS);
    let cluster = Cluster::start(dir.path(), 3, &[], &["--allow-non-private"]);
    // One worker, found through DNS as a headless service would be.
    let dns = format!("localhost:{}", cluster.workers[0].port());
    let single = coordinator(dir.path(), &["--workers-dns", &dns], &["--allow-non-private"], TOKEN);
    // Fingerprints are diagnostics of non-private jobs only.
    let job = {
        let mut job = JobConfig::new(&data, &constraints);
        job.epsilon = Some(1.0);
        job.seed = Some(3);
        job.non_private = true;
        job
    };
    let (want, want_fp) = embedded(&job).await;
    let mut fingerprints = Vec::new();
    for (c, workers) in [(client(&single, TOKEN), 1), (cluster.client(), 3)] {
        let id = c.submit(&job).await.unwrap();
        let got =
            within(c.wait(&id, |_| {})).await.unwrap_or_else(|e| panic!("{e}\n{}", cluster.logs()));
        assert_eq!(comparable(&report(&got)), comparable(&want));
        let status = c.status(&id).await.unwrap();
        assert_eq!(status.workers, workers);
        fingerprints.push(status.edge_fingerprint);
    }
    assert_eq!(fingerprints, vec![want_fp.clone(), want_fp.clone()]);

    // The brute-force oracle on the workers finds the same stream.
    let mut brute = job.clone();
    brute.brute_force = true;
    let c = cluster.client();
    let id = c.submit(&brute).await.unwrap();
    within(c.wait(&id, |_| {})).await.unwrap();
    assert_eq!(c.status(&id).await.unwrap().edge_fingerprint, want_fp);
}

#[tokio::test(flavor = "multi_thread")]
async fn wrong_tokens_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (data, constraints) = write_table(dir.path(), 200);
    let cluster = Cluster::start(dir.path(), 1, &[], &[]);
    let mut job = JobConfig::new(&data, &constraints);
    job.epsilon = Some(1.0);

    // CLI -> coordinator.
    let intruder = client(&cluster.coordinator, "not-the-token");
    let err = intruder.submit(&job).await.unwrap_err();
    assert_eq!(rpc_code(&err), Some(Code::Unauthenticated), "{err}");
    let err = intruder.status("anything").await.unwrap_err();
    assert_eq!(rpc_code(&err), Some(Code::Unauthenticated), "{err}");

    // Coordinator -> worker: a coordinator with another token finds no
    // worker that accepts it, and the job fails with that reason.
    let other =
        coordinator(dir.path(), &["--workers", &cluster.workers[0].url()], &[], "other-token");
    let c = client(&other, "other-token");
    let id = c.submit(&job).await.unwrap();
    let err = within(c.wait(&id, |_| {})).await.unwrap_err().to_string();
    assert!(err.contains("no worker available") && err.contains("unauthenticated"), "{err}");
    let status = c.status(&id).await.unwrap();
    assert_eq!(status.state, JobState::Failed as i32);
}

#[tokio::test(flavor = "multi_thread")]
async fn without_workers_a_job_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let (data, constraints) = write_table(dir.path(), 500);
    let mut job = JobConfig::new(&data, &constraints);
    job.epsilon = Some(1.0);

    // No worker listening at all.
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", free.local_addr().unwrap());
    drop(free);
    let lonely = coordinator(dir.path(), &["--workers", &url], &[], TOKEN);
    let c = client(&lonely, TOKEN);
    let id = c.submit(&job).await.unwrap();
    let err = within(c.wait(&id, |_| {})).await.unwrap_err().to_string();
    assert!(err.contains("no worker available") && err.contains(&url), "{err}");
    // The coordinator still serves: the next job gets the same answer.
    let id = c.submit(&job).await.unwrap();
    assert!(within(c.wait(&id, |_| {})).await.is_err());

    // The only worker dies mid-job: no worker can take its tasks.
    let mut cluster =
        Cluster::start(dir.path(), 1, &["--task-delay-ms", "100", "--max-tasks", "1"], &[]);
    let c = cluster.client();
    let id = c.submit(&job).await.unwrap();
    let last = within(c.watch(&id, |s| {
        if s.tasks_done >= 1 && s.tasks_done < s.tasks_total {
            cluster.workers[0].kill();
        }
    }))
    .await
    .unwrap();
    assert_eq!(last.state, JobState::Failed as i32);
    assert!(last.error.contains("no worker can take"), "{}", last.error);
}

#[tokio::test(flavor = "multi_thread")]
async fn non_private_jobs_need_allow_non_private() {
    let dir = tempfile::tempdir().unwrap();
    let (data, constraints) = write_table(dir.path(), 300);
    let cluster = Cluster::start(dir.path(), 1, &[], &[]);
    let c = cluster.client();
    let mut job = JobConfig::new(&data, &constraints);
    job.non_private = true;
    let err = c.submit(&job).await.unwrap_err();
    assert_eq!(rpc_code(&err), Some(Code::PermissionDenied), "{err}");
    assert!(err.to_string().contains("--allow-non-private"));
    let mut job = JobConfig::new(&data, &constraints);
    job.epsilon = Some(1.0);
    job.strategy = Some("baseline-truemax".into());
    let err = c.submit(&job).await.unwrap_err();
    assert_eq!(rpc_code(&err), Some(Code::PermissionDenied), "{err}");
    // A private job is served.
    job.strategy = None;
    let id = c.submit(&job).await.unwrap();
    let got = report(&within(c.wait(&id, |_| {})).await.unwrap());
    assert!(got.get("non_private").is_none());
    assert!(got.get("timings").is_none(), "timings grow with the graph: non-private only");
    assert!(got["measures"]["p"].is_object());
    // Its status tells a client nothing that depends on the data: no edge
    // count (that is I_MI), fingerprint, byte counts or phase times. The
    // task count is the plan's, fixed by workers and constraints.
    let status = c.status(&id).await.unwrap();
    assert_eq!((status.edges, status.edge_fingerprint.as_str()), (0, ""));
    assert_eq!((status.bytes_sent, status.bytes_received), (0, 0));
    assert!(status.phases.is_empty());
    assert!(status.tasks_total > 0 && status.tasks_done == status.tasks_total);
}

#[tokio::test(flavor = "multi_thread")]
async fn jobs_queue_and_cancel() {
    let dir = tempfile::tempdir().unwrap();
    let (data, constraints) = write_table(dir.path(), 1000);
    let cluster =
        Cluster::start(dir.path(), 1, &["--task-delay-ms", "300", "--max-tasks", "1"], &[]);
    let c = cluster.client();
    let mut job = JobConfig::new(&data, &constraints);
    job.epsilon = Some(1.0);
    let first = c.submit(&job).await.unwrap();
    let second = c.submit(&job).await.unwrap();
    assert_ne!(first, second);
    // The second waits behind the first; cancelling it is immediate.
    let status = c.cancel(&second).await.unwrap();
    assert_eq!(status.state, JobState::Cancelled as i32);
    // The first is cancelled while its tasks run.
    let (started_tx, started) = tokio::sync::oneshot::channel();
    let watcher = {
        let (c, id) = (c.clone(), first.clone());
        tokio::spawn(async move {
            let mut started_tx = Some(started_tx);
            c.watch(&id, |s| {
                if s.tasks_done >= 1
                    && let Some(tx) = started_tx.take()
                {
                    let _ = tx.send(());
                }
            })
            .await
        })
    };
    within(started).await.expect("the first job ran a task");
    c.cancel(&first).await.unwrap();
    let last = within(watcher).await.unwrap().unwrap();
    assert_eq!(last.state, JobState::Cancelled as i32, "{}", cluster.logs());
    assert!(last.tasks_done < last.tasks_total);
    for id in [&first, &second] {
        let err = c.result(id).await.unwrap_err();
        assert_eq!(rpc_code(&err), Some(Code::FailedPrecondition));
    }
    let err = c.status("no-such-job").await.unwrap_err();
    assert_eq!(rpc_code(&err), Some(Code::NotFound));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hung_worker_is_noticed_by_heartbeats_and_its_tasks_retried() {
    let dir = tempfile::tempdir().unwrap();
    let (data, constraints) = write_table(dir.path(), 1500);
    let mut cluster = Cluster::start(
        dir.path(),
        2,
        &["--task-delay-ms", "100", "--max-tasks", "2"],
        &["--allow-non-private", "--heartbeat-ms", "200"],
    );
    let client = cluster.client();
    let mut job = JobConfig::new(&data, &constraints);
    job.non_private = true;
    let (want, want_fp) = embedded(&job).await;
    let id = client.submit(&job).await.unwrap();
    let hung = cluster.workers[1].pid().to_string();
    let mut stopped = false;
    let last = within(client.watch(&id, |s| {
        if !stopped && s.tasks_done >= 2 && s.tasks_done < s.tasks_total {
            // SIGSTOP: the process keeps its connections but answers nothing.
            let sent = std::process::Command::new("kill").args(["-STOP", &hung]).status();
            stopped = sent.is_ok_and(|s| s.success());
        }
    }))
    .await
    .unwrap();
    assert!(stopped, "the worker was stopped mid-job");
    assert_eq!(last.state, JobState::Succeeded as i32, "{}\n{}", last.error, cluster.logs());
    assert!(last.task_retries >= 1);
    assert_eq!(last.edge_fingerprint, want_fp);
    assert!(cluster.coordinator.logs().contains("heartbeats missed"), "{}", cluster.logs());
    let got = report(&client.result(&id).await.unwrap());
    assert_eq!(comparable(&got), comparable(&want));
    // SIGKILL ends a stopped process too (the guard's Drop).
    cluster.workers[1].kill();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_private_jobs_errors_do_not_quote_the_data() {
    let dir = tempfile::tempdir().unwrap();
    let ragged = dir.path().join("ragged.csv");
    std::fs::write(&ragged, "Zip,City\n1,secret-city\n2,b,extra\n").unwrap();
    let cluster = Cluster::start(dir.path(), 1, &[], &["--allow-non-private"]);
    let c = cluster.client();
    let dcs = dir.path().join("fd.dcs");
    std::fs::write(&dcs, "FD: Zip -> City\n").unwrap();
    let mut job = JobConfig::new(&ragged, &dcs);
    job.epsilon = Some(1.0);
    let id = c.submit(&job).await.unwrap();
    let err = within(c.wait(&id, |_| {})).await.unwrap_err().to_string();
    assert!(err.contains("coordinator's log") && !err.contains("line 3"), "{err}");
    // The same failure of a non-private job names the line.
    job.non_private = true;
    let id = c.submit(&job).await.unwrap();
    let err = within(c.wait(&id, |_| {})).await.unwrap_err().to_string();
    assert!(err.contains("line 3"), "{err}");
}
