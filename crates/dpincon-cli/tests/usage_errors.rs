//! clap's refusals of a command line: a usage error of `audit` exits 3
//! (the audit's code for an error; 2 is its code for a failing check),
//! every other subcommand keeps clap's 2, and help still exits 0.

use std::process::{Command, Output};

fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dpincon-cli")).args(args).output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_usage_error_of_audit_exits_3() {
    for args in [
        &["audit", "--no-such-flag"][..],
        &["audit", "--seed", "not-a-number"],
        &["audit", "history", "--no-such-flag"],
    ] {
        let out = cli(args);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).starts_with("error:"), "{args:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    let out = cli(&["audit", "--no-such-flag"]);
    assert!(stderr(&out).contains("'--no-such-flag'"), "{}", stderr(&out));
}

#[test]
fn other_usage_errors_keep_clap_s_exit_2_and_help_exits_0() {
    for args in [&["run", "--no-such-flag"][..], &["no-such-command"], &[]] {
        let out = cli(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    }
    for args in [&["audit", "--help"][..], &["--version"]] {
        let out = cli(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert!(!out.stdout.is_empty(), "{args:?}");
    }
}
