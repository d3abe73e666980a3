//! The executor binary's table flags (issue 47): without `--allow-tables`
//! an executor would let any holder of a cluster certificate scan any path
//! it can read, so it refuses to start unless told `--allow-any-table`
//! (test clusters only). Real processes; no scheduler is needed, since the
//! check comes before the executor dials one.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const EXECUTOR: &str = env!("CARGO_BIN_EXE_dpincon-executor");

/// The executor with `args` against a scheduler that is not there, with
/// DPINCON_ALLOW_TABLES only if `env`.
fn executor(args: &[&str], env: Option<&str>) -> Command {
    let mut command = Command::new(EXECUTOR);
    command
        .args(["--scheduler", "http://127.0.0.1:1", "--listen", "127.0.0.1:0"])
        .arg("--insecure-plaintext")
        .args(args)
        .env_remove("DPINCON_ALLOW_TABLES")
        .stdin(Stdio::null());
    if let Some(tables) = env {
        command.env("DPINCON_ALLOW_TABLES", tables);
    }
    command
}

/// Its output when it refuses to start (at once, before any dial).
fn refused(args: &[&str]) -> String {
    let out: Output = executor(args, None).output().expect("the executor binary runs");
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{args:?}: {text}");
    assert!(!text.contains("connect to scheduler"), "refused before dialling: {text}");
    text
}

/// Its standard error once it is dialling the absent scheduler (Ballista
/// retries for ever at start; the process is then killed).
fn dialling(args: &[&str], env: Option<&str>, log: &Path) -> String {
    let mut child = executor(args, env)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .expect("the executor binary runs");
    let read = || std::fs::read_to_string(log).unwrap_or_default();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !read().contains("Failed to connect to scheduler") {
        let exited = child.try_wait().unwrap();
        assert!(exited.is_none() && Instant::now() < deadline, "{args:?}: {}", read());
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    read()
}

#[test]
fn an_executor_needs_its_tables_or_an_explicit_test_flag() {
    // Neither flag: exits at once with a message naming both.
    let text = refused(&[]);
    assert!(text.contains("needs --allow-tables") && text.contains("--allow-any-table"), "{text}");

    // Both: refused too.
    let dir = tempfile::tempdir().unwrap();
    let tables = dir.path().to_str().unwrap();
    assert!(refused(&["--allow-tables", tables, "--allow-any-table"]).contains("choose one"));

    // Either one alone (or the tables in DPINCON_ALLOW_TABLES) passes the
    // check: the executor goes on to dial its scheduler.
    for (i, (args, env)) in [
        (vec!["--allow-tables", tables], None),
        (vec![], Some(tables)),
        (vec!["--allow-any-table"], None),
    ]
    .into_iter()
    .enumerate()
    {
        let text = dialling(&args, env, &dir.path().join(format!("executor{i}.log")));
        assert!(!text.contains("needs --allow-tables"), "{args:?} {env:?}: {text}");
        let warned = text.contains("--allow-any-table: plans may scan any path");
        assert_eq!(warned, args == ["--allow-any-table"], "{text}");
    }
}
