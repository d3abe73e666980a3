//! The `dpincon-cli` remote commands against a real coordinator and Ballista cluster:
//! `submit --wait` (with a TOML client job file), `status`, `result`,
//! `cancel`, in JSON and as tables.

mod common;

use common::{
    ALICE, BOB, Cluster, cli, cli_binary, comparable, embedded, embedded_job, exact, report,
    write_table,
};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn submit_wait_status_result_and_cancel_from_the_command_line() {
    let Some(bin) = cli_binary() else {
        eprintln!("SKIPPED: dpincon-cli is not built (run `cargo test --workspace`)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (data, constraints) = write_table(dir.path(), 1500);
    let cluster = Cluster::start_test(dir.path(), 2, &[], &[]);
    let url = cluster.coordinator.url();
    // The job file names the dataset; the constraints come from a local
    // file given as a flag (read by the CLI, sent inline).
    let job_file = dir.path().join("job.toml");
    std::fs::write(&job_file, "dataset = \"table\"\nepsilon = 0.5\nseed = 3\nnon-private = true\n")
        .unwrap();
    let constraints_arg = constraints.to_str().unwrap();
    let job_arg = job_file.to_str().unwrap();
    let submit =
        ["submit", "--coordinator", &url, "--job", job_arg, "--constraints", constraints_arg];
    let mut args = submit.to_vec();
    args.push("--wait");
    let out = cli(&bin, &args, ALICE);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}\n{}", cluster.logs());
    let remote = report(&String::from_utf8_lossy(&out.stdout));
    let client_job = json!({"epsilon": 0.5, "seed": 3, "non-private": true});
    let (local, _) = embedded(&embedded_job(&data, &constraints, &client_job)).await;
    assert_eq!(comparable(&remote), comparable(&local));

    let id = stderr
        .lines()
        .find_map(|l| l.strip_prefix("job ").and_then(|r| r.strip_suffix(" submitted")))
        .expect("submit --wait names the job on stderr")
        .to_string();
    let status = cli(&bin, &["status", &url, &id], ALICE);
    assert!(status.status.success());
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["state"], "succeeded", "{status}");
    let result = cli(&bin, &["result", &url, &id], ALICE);
    assert!(result.status.success());
    let result = report(&String::from_utf8_lossy(&result.stdout));
    assert_eq!(result.job_id, remote.job_id);
    assert_eq!(result, remote, "the result is the report submit --wait printed");
    // The same report as a table, written to a file.
    let table_file = dir.path().join("report.txt");
    let table = cli(
        &bin,
        &["result", &url, &id, "--format", "table", "--output", table_file.to_str().unwrap()],
        ALICE,
    );
    assert!(table.status.success() && table.stdout.is_empty());
    let table = std::fs::read_to_string(&table_file).unwrap();
    assert!(table.contains("DIFFERENTIALLY PRIVATE") && table.contains("dataset table"), "{table}");
    assert!(table.contains(&exact(&remote).edges.to_string()), "{table}");
    let line = cli(&bin, &["status", &url, &id, "--format", "table"], ALICE);
    assert_eq!(String::from_utf8_lossy(&line.stdout).trim(), format!("{id}: succeeded"));

    // A refused submission exits 1 with the reason; another client sees nothing.
    let mut seeded_path = submit.to_vec();
    seeded_path.extend_from_slice(&["--dataset", "../etc"]);
    let refused = cli(&bin, &seeded_path, ALICE);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("unknown dataset"));
    let bob = cli(&bin, &["status", &url, &id], BOB);
    assert_eq!(bob.status.code(), Some(1));
    let unknown = cli(&bin, &["cancel", &url, "no-such-job"], ALICE);
    assert_eq!(unknown.status.code(), Some(1));
    let wrong = cli(&bin, &["status", &url, &id], "not-the-token");
    assert_eq!(wrong.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&wrong.stderr).to_lowercase().contains("unauthenticated"));
}
