//! End-to-end: a coordinator, a scheduler and executors as real processes
//! on 127.0.0.1, compared with the embedded run on the same generated
//! table.

mod common;

use common::{
    ALICE, Ballista, Cluster, TEST_DATASET, client, comparable, config_with, coordinator, embedded,
    embedded_job, exact, files_under, job, ledger_charges, ledger_path, report, test_config,
    wait_for_log, within, work_dir, write_table,
};
use dpincon_client::ClientError;
use dpincon_proto::v1::{FailureReason, JobState};
use serde_json::json;
use tonic::Code;

const ROWS: usize = 3000;

fn rpc_code(e: &ClientError) -> Option<Code> {
    match e {
        ClientError::Rpc(status) => Some(status.code()),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn non_private_results_and_seeded_releases_equal_the_embedded_run() {
    let dir = tempfile::tempdir().unwrap();
    let (data, constraints) = write_table(dir.path(), ROWS);
    // The coordinator's graph spills past 16 KiB here, which must change nothing.
    let config = config_with(
        dir.path(),
        "main",
        &format!(
            "budget-cap = 100.0\nmax-job-epsilon = 10.0\nmemory-limit = \"16KiB\"\n{TEST_DATASET}"
        ),
        "",
    );
    // As in production: mutual TLS on every hop.
    let cluster = Cluster::start_tls(dir.path(), &config, 3, &[]);
    let client = cluster.client();

    // (1) Exact values.
    let remote = job(&constraints, json!({"non-private": true}));
    let (want, want_fp) = embedded(&embedded_job(&data, &constraints, &remote)).await;
    assert!(exact(&want).edges > 1000, "a graph worth testing");
    let id = client.submit(&remote).await.unwrap();
    let text = within(client.wait(&id, |_| {}))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", cluster.logs()));
    let got = report(&text);
    assert_eq!(comparable(&got), comparable(&want));
    let timings = got.timings.as_ref().expect("a non-private job's timings");
    assert!(timings.spilled_bytes > 0, "{timings:?}");
    // The operator's paths stay on the coordinator.
    assert_eq!(got.data, "dataset table");
    assert!(!text.contains(dir.path().to_str().unwrap()), "{text}");
    let status = client.status(&id).await.unwrap();
    assert_eq!(status.edge_fingerprint, want_fp);
    assert!(status.tasks_total > 0 && status.tasks_done == status.tasks_total);
    let phases: Vec<&str> = status.phases.iter().map(|p| p.phase.as_str()).collect();
    assert_eq!(phases, ["read", "detect", "measure"]);

    // (2) DP releases with the same seed, all measures.
    // The dataset spills (16KiB): only the one-pass greedy I_R fits its budget.
    let remote = job(&constraints, json!({"epsilon": 1.0, "seed": 42, "ir-method": "greedy"}));
    let (want, _) = embedded(&embedded_job(&data, &constraints, &remote)).await;
    let id = client.submit(&remote).await.unwrap();
    let got = report(&within(client.wait(&id, |_| {})).await.unwrap());
    assert_eq!(comparable(&got), comparable(&want));
    let measures = got.measures.as_ref().expect("the releases");
    assert!(measures.mi.is_some() && measures.r.is_some(), "{measures:?}");
    assert!(got.seeded);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_executor_killed_mid_job_changes_nothing_and_the_ledger_is_charged_once() {
    let dir = tempfile::tempdir().unwrap();
    let (data, constraints) = write_table(dir.path(), ROWS);
    // Slow detection tasks: every executor holds work (running tasks,
    // shuffle files) when one is killed. Over mutual TLS, as in production.
    let config = test_config(dir.path(), "main");
    let mut cluster = Cluster::start_tls(dir.path(), &config, 3, &[&common::task_delay(1500)]);
    let client = cluster.client();
    let remote = job(&constraints, json!({"non-private": true, "epsilon": 0.5, "seed": 7}));
    let (want, want_fp) = embedded(&embedded_job(&data, &constraints, &remote)).await;

    let id = client.submit(&remote).await.unwrap();
    let mut killed = false;
    let last = within(client.watch(&id, |s| {
        if !killed && s.phase == "detect" {
            // SIGKILL: its tasks and its shuffle output are gone.
            cluster.ballista.executors[1].kill();
            killed = true;
        }
    }))
    .await
    .unwrap();
    assert!(killed, "the executor was killed during detection");
    assert_eq!(last.state, JobState::Succeeded as i32, "{}\n{}", last.error, cluster.logs());
    assert_eq!(last.edge_fingerprint, want_fp);
    let got = report(&client.result(&id).await.unwrap());
    assert_eq!(comparable(&got), comparable(&want));

    // One job, one charge per measure, whatever Ballista retried, under
    // the coordinator's id for it (the report's too): one job id.
    let (spent, charges) = ledger_charges(&ledger_path(dir.path(), "main"));
    assert_eq!(charges.len(), 3, "{charges:?}");
    assert_eq!(got.job_id, id);
    assert!(charges.iter().all(|c| c["job"] == id.as_str()), "{charges:?}");
    assert!((spent - 1.5).abs() < 1e-9);
    // The living executors keep no file of the job: the job deletes them
    // once its result is read (the harness's retention is an hour).
    within(async {
        while [0, 2].iter().any(|&i| !files_under(&work_dir(dir.path(), "main", i)).is_empty()) {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_number_of_executors_never_changes_the_edge_stream() {
    let dir = tempfile::tempdir().unwrap();
    let (data, constraints) = write_table(dir.path(), ROWS);
    // Three executors over mutual TLS; one in plaintext with other
    // partition counts: the same stream.
    let cluster = Cluster::start_tls(dir.path(), &test_config(dir.path(), "main"), 3, &[]);
    // One executor, other partition counts, and the CSV table read in
    // three byte ranges; its own state and ledger directories (two
    // coordinators never share them).
    let one = Ballista::start(dir.path(), "single", 1, &[]);
    let single_config = test_config(dir.path(), "single");
    let scheduler = one.scheduler.url();
    let single = coordinator(
        dir.path(),
        &["--scheduler", &scheduler, "--partitions", "3", "--csv-range-bytes", "4KiB"],
        &["--config", single_config.to_str().unwrap()],
    );
    // Fingerprints are diagnostics of non-private jobs only.
    let remote = job(&constraints, json!({"epsilon": 1.0, "seed": 3, "non-private": true}));
    let (want, want_fp) = embedded(&embedded_job(&data, &constraints, &remote)).await;
    let mut fingerprints = Vec::new();
    for c in [client(&single, ALICE), cluster.client()] {
        let id = c.submit(&remote).await.unwrap();
        let got =
            within(c.wait(&id, |_| {})).await.unwrap_or_else(|e| panic!("{e}\n{}", cluster.logs()));
        assert_eq!(comparable(&report(&got)), comparable(&want));
        fingerprints.push(c.status(&id).await.unwrap().edge_fingerprint);
    }
    assert_eq!(fingerprints, vec![want_fp.clone(), want_fp.clone()]);

    // One FD of one right-hand side: I_R is its classes' cover, exact, and
    // released alone; that it is exact crosses the wire with each
    // partition's classes (three partitions on the single executor).
    let one_fd = dir.path().join("one-fd.txt");
    std::fs::write(&one_fd, "FD: Zip -> City\n").unwrap();
    let one_fd_job = job(&one_fd, json!({"epsilon": 1.0, "seed": 5}));
    let (want, _) = embedded(&embedded_job(&data, &one_fd, &one_fd_job)).await;
    let r = want.measures.as_ref().and_then(|m| m.r.as_ref()).expect("I_R released");
    assert_eq!(r.parts[0].statistic, "exact-cover");
    let c = client(&single, ALICE);
    let id = c.submit(&one_fd_job).await.unwrap();
    let got = within(c.wait(&id, |_| {})).await.unwrap();
    assert_eq!(comparable(&report(&got)), comparable(&want));

    // The brute-force oracle on the executors finds the same stream.
    let mut brute = remote.clone();
    brute["brute-force"] = json!(true);
    let c = cluster.client();
    let id = c.submit(&brute).await.unwrap();
    within(c.wait(&id, |_| {})).await.unwrap();
    assert_eq!(c.status(&id).await.unwrap().edge_fingerprint, want_fp);
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_scheduler_a_job_fails_cleanly_with_a_public_reason() {
    let dir = tempfile::tempdir().unwrap();
    let (_, constraints) = write_table(dir.path(), 500);
    let remote = job(&constraints, json!({"epsilon": 1.0}));

    // No scheduler listening at all.
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", free.local_addr().unwrap());
    drop(free);
    let lonely_config = common::config(dir.path(), "lonely");
    // The cause of a private job's failure may quote rows: the operator
    // sees it with --log-private-values only.
    let lonely = coordinator(
        dir.path(),
        &["--scheduler", &url],
        &["--config", lonely_config.to_str().unwrap(), "--log-private-values"],
    );
    let c = client(&lonely, ALICE);
    let id = c.submit(&remote).await.unwrap();
    let err = within(c.wait(&id, |_| {})).await.unwrap_err().to_string();
    // The client learns the public reason; the operator's log has the cause.
    assert!(err.contains("internal error") && !err.contains(&url), "{err}");
    let status = c.status(&id).await.unwrap();
    assert_eq!(status.reason, FailureReason::Internal as i32);
    assert!(lonely.logs().contains("distributed detection failed"), "{}", lonely.logs());
    // Charged when accepted: a failure after acceptance is not free.
    assert_eq!(ledger_charges(&ledger_path(dir.path(), "lonely")).1.len(), 3);
    // The coordinator still serves: the next job gets the same answer.
    let id = c.submit(&remote).await.unwrap();
    assert!(within(c.wait(&id, |_| {})).await.is_err());
}

#[tokio::test(flavor = "multi_thread")]
async fn jobs_queue_and_cancel() {
    let dir = tempfile::tempdir().unwrap();
    let (_, constraints) = write_table(dir.path(), 1000);
    let cluster = Cluster::start(dir.path(), 1, &[&common::task_delay(300)], &[]);
    let c = cluster.client();
    let remote = job(&constraints, json!({"epsilon": 1.0}));
    let first = c.submit(&remote).await.unwrap();
    let second = c.submit(&remote).await.unwrap();
    assert_ne!(first, second);
    // The second waits behind the first; cancelling it is immediate.
    let status = c.cancel(&second).await.unwrap();
    assert_eq!(status.state, JobState::Cancelled as i32);
    // The first is cancelled while it runs (25 tasks of 300 ms on two
    // slots): its client never sees `running`; the operator's log does.
    wait_for_log(&cluster.coordinator, &format!("job {first}: started")).await;
    let status = c.cancel(&first).await.unwrap();
    assert_eq!(status.state, JobState::Cancelled as i32, "{}", cluster.logs());
    let last = within(c.watch(&first, |_| {})).await.unwrap();
    assert_eq!(last.state, JobState::Cancelled as i32, "{}", cluster.logs());
    for id in [&first, &second] {
        let err = c.result(id).await.unwrap_err();
        assert_eq!(rpc_code(&err), Some(Code::FailedPrecondition));
    }
    let err = c.status("no-such-job").await.unwrap_err();
    assert_eq!(rpc_code(&err), Some(Code::NotFound));
    // Both were charged when accepted: a cancel is never free (issue 26).
    let (spent, charges) = ledger_charges(&ledger_path(dir.path(), "main"));
    assert_eq!(charges.len(), 2 * 3);
    assert!((spent - 6.0).abs() < 1e-9, "{spent}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hung_executor_is_noticed_by_the_scheduler_and_its_work_rerun() {
    let dir = tempfile::tempdir().unwrap();
    let (data, constraints) = write_table(dir.path(), 1500);
    let mut cluster = Cluster::start_test(dir.path(), 2, &[&common::task_delay(500)], &[]);
    let client = cluster.client();
    let remote = job(&constraints, json!({"non-private": true}));
    let (want, want_fp) = embedded(&embedded_job(&data, &constraints, &remote)).await;
    let id = client.submit(&remote).await.unwrap();
    let hung = cluster.ballista.executors[1].pid().to_string();
    let mut stopped = false;
    let last = within(client.watch(&id, |s| {
        if !stopped && s.phase == "detect" {
            // SIGSTOP: the process keeps its connections but answers nothing.
            let sent = std::process::Command::new("kill").args(["-STOP", &hung]).status();
            stopped = sent.is_ok_and(|s| s.success());
        }
    }))
    .await
    .unwrap();
    assert!(stopped, "the executor was stopped mid-job");
    assert_eq!(last.state, JobState::Succeeded as i32, "{}\n{}", last.error, cluster.logs());
    assert_eq!(last.edge_fingerprint, want_fp);
    let got = report(&client.result(&id).await.unwrap());
    assert_eq!(comparable(&got), comparable(&want));
    // SIGKILL ends a stopped process too (the guard's Drop).
    cluster.ballista.executors[1].kill();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_private_jobs_failure_is_a_public_reason_only() {
    let dir = tempfile::tempdir().unwrap();
    let (_, constraints) = write_table(dir.path(), 300);
    // A row that does not parse under the declared schema, deep in the file.
    let data = dir.path().join("table.csv");
    let mut text = std::fs::read_to_string(&data).unwrap();
    text += "300,000-00-0000,secret-zip,City1,AL,1,1.0,20,6\n";
    std::fs::write(&data, text).unwrap();
    let cluster = Cluster::start_test(dir.path(), 1, &[], &[]);
    let c = cluster.client();
    let id = c.submit(&job(&constraints, json!({"epsilon": 1.0}))).await.unwrap();
    let err = within(c.wait(&id, |_| {})).await.unwrap_err().to_string();
    assert!(err.ends_with("failed: internal error"), "{err}");
    let status = c.status(&id).await.unwrap();
    assert_eq!(
        (status.reason, status.error.as_str()),
        (FailureReason::Internal as i32, "internal error")
    );
    // Neither the client nor the operator's log (without
    // --log-private-values) learns where or what the bad cell is.
    for needle in ["line 301", "secret-zip"] {
        assert!(!cluster.coordinator.logs().contains(needle), "{}", cluster.logs());
    }
    // The same failure of a non-private job (a test dataset) names the line.
    let id = c.submit(&job(&constraints, json!({"non-private": true}))).await.unwrap();
    let err = within(c.wait(&id, |_| {})).await.unwrap_err().to_string();
    assert!(err.contains("line 301"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_parquet_dataset_takes_its_schema_from_the_footer() {
    use dpincon_generate::{TaxOptions, generate_tax};
    // A clean generated table: the FD State -> City has violations anyway.
    const TAX_CONSTRAINTS: &str = "FD: Zip -> City\nFD: State -> City\n";
    let dir = tempfile::tempdir().unwrap();
    write_table(dir.path(), 10); // The harness's own dataset, unused here.
    let tax = dir.path().join("tax.parquet");
    generate_tax(&TaxOptions { rows: 2000, seed: 9, format: None }, &tax).unwrap();
    let ledger = dir.path().join("main").join("ledgers").join("tax.jsonl");
    let config = config_with(
        dir.path(),
        "main",
        &format!("budget-cap = 10.0\nmax-job-epsilon = 3.0\n{TEST_DATASET}"),
        &format!(
            "[datasets.tax]\ndata = {:?}\nledger = {:?}\nbudget-cap = 10.0\n\
             max-job-epsilon = 3.0\n{TEST_DATASET}",
            tax.to_str().unwrap(),
            ledger.to_str().unwrap()
        ),
    );
    let cluster = Cluster::start_with(dir.path(), &config, 2, &[], &[]);
    let c = cluster.client();
    let remote = json!({
        "dataset": "tax", "constraints": TAX_CONSTRAINTS, "epsilon": 0.5, "seed": 4,
        "non-private": true,
    });
    let dcs = dir.path().join("tax.dcs");
    std::fs::write(&dcs, TAX_CONSTRAINTS).unwrap();
    let mut local = dpincon_engine::JobConfig::new(&tax, &dcs);
    local.release.epsilon = Some(0.5);
    (local.test.seed, local.test.non_private) = (Some(4), true);
    let (want, _) = embedded(&local).await;
    let id = c.submit(&remote).await.unwrap();
    let got =
        within(c.wait(&id, |_| {})).await.unwrap_or_else(|e| panic!("{e}\n{}", cluster.logs()));
    assert_eq!(comparable(&report(&got)), comparable(&want));
    assert!(exact(&want).edges > 0);
    // A column the footer does not have is refused before the job exists.
    let mut bad = remote.clone();
    bad["constraints"] = json!("FD: Zip -> Town");
    let err = c.submit(&bad).await.unwrap_err();
    assert_eq!(rpc_code(&err), Some(Code::InvalidArgument), "{err}");
    let (spent, _) = ledger_charges(&ledger);
    assert!((spent - 1.5).abs() < 1e-9);
}
