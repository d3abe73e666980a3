//! The `dpincon-cli` remote commands against a real coordinator and workers:
//! `submit --wait` (with a TOML job file), `status`, `result`, `cancel`.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

use common::{COORDINATOR, Cluster, TOKEN, comparable, embedded, write_table};
use dpincon_engine::JobConfig;

/// The CLI binary, built beside the cluster binaries by `cargo test --workspace`.
fn cli_binary() -> Option<PathBuf> {
    let path = PathBuf::from(COORDINATOR).with_file_name("dpincon-cli");
    path.exists().then_some(path)
}

fn cli(bin: &PathBuf, args: &[&str], token: &str) -> Output {
    Command::new(bin).args(args).env("DPINCON_TOKEN", token).output().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn submit_wait_status_result_and_cancel_from_the_command_line() {
    let Some(bin) = cli_binary() else {
        eprintln!("SKIPPED: dpincon-cli is not built (run `cargo test --workspace`)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (data, constraints) = write_table(dir.path(), 1500);
    let cluster = Cluster::start(dir.path(), 2, &[], &["--allow-non-private"]);
    let url = cluster.coordinator.url();
    let job_file = dir.path().join("job.toml");
    std::fs::write(
        &job_file,
        format!(
            "data = {:?}\nconstraints = {:?}\nepsilon = 0.5\nseed = 3\nnon-private = true\n",
            data.display().to_string(),
            constraints.display().to_string()
        ),
    )
    .unwrap();

    let out = cli(
        &bin,
        &["submit", "--coordinator", &url, "--job", job_file.to_str().unwrap(), "--wait"],
        TOKEN,
    );
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}\n{}", cluster.logs());
    let remote: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut job = JobConfig::new(&data, &constraints);
    (job.epsilon, job.seed, job.non_private) = (Some(0.5), Some(3), true);
    let (local, _) = embedded(&job).await;
    assert_eq!(comparable(&remote), comparable(&local));

    let id = stderr
        .lines()
        .find_map(|l| l.strip_prefix("job ").and_then(|r| r.strip_suffix(" submitted")))
        .expect("submit --wait names the job on stderr")
        .to_string();
    let status = cli(&bin, &["status", &url, &id], TOKEN);
    assert!(status.status.success());
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(
        status["state"].as_str().map(str::to_ascii_lowercase).as_deref(),
        Some("succeeded"),
        "{status}"
    );
    let result = cli(&bin, &["result", &url, &id], TOKEN);
    assert!(result.status.success());
    let result: serde_json::Value = serde_json::from_slice(&result.stdout).unwrap();
    assert_eq!(result["job_id"], remote["job_id"]);

    let unknown = cli(&bin, &["cancel", &url, "no-such-job"], TOKEN);
    assert_eq!(unknown.status.code(), Some(1));
    let wrong = cli(&bin, &["status", &url, &id], "not-the-token");
    assert_eq!(wrong.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&wrong.stderr).to_lowercase().contains("unauthenticated"));
}
