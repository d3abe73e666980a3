//! Gated nightly audits through the real binary (issue 48): the first
//! night opens a charged epoch, quiet nights pass for free with the gate's
//! interval, a burst of violations is flagged the same night with a fresh
//! release, a suite whose plan cannot last its horizon is refused at load,
//! and an audit SIGKILLed at any point of a gated night leaves a ledger
//! that never charges an epoch twice nor loses one, and a state no report
//! ever shows.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use dpincon_engine::failpoint::{ENV, GATE_POINTS, POINTS};

const RELEASE_EPSILON: f64 = 1.0;
const GATE_EPSILON: f64 = 2.0;

/// 2000 rows over 200 zips; the first `bad` break `Zip -> City`.
fn write_table(dir: &Path, bad: usize) {
    let mut csv = String::from("Zip,City,Street\n");
    for i in 0..2000 {
        let zip = i % 200;
        let city = if i < bad { 10_000 + i } else { zip * 3 };
        csv += &format!("{zip},{city},{i}\n");
    }
    std::fs::write(dir.join("t.csv"), csv).unwrap();
}

fn suite(dir: &Path, refreshes: u32) -> PathBuf {
    write_table(dir, 30);
    std::fs::write(dir.join("t.dcs"), "FD: Zip -> City\n").unwrap();
    let path = dir.join("suite.toml");
    std::fs::write(
        &path,
        format!(
            "name = \"year\"\nhorizon = \"365d\"\n[[dataset]]\nname = \"t\"\ndata = \"t.csv\"\n\
             constraints = \"t.dcs\"\nepsilon = {RELEASE_EPSILON}\nmax-rows = 3000\n\
             ledger = \"t.ledger\"\nbudget-cap = 30\n[dataset.gate]\nepsilon = {GATE_EPSILON}\n\
             refreshes = {refreshes}\n[[dataset.check]]\nname = \"repairs\"\nmeasure = \"r\"\n\
             max = 150\n"
        ),
    )
    .unwrap();
    path
}

fn audit(suite: &Path, night: u32, out: Option<&Path>) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dpincon-cli"));
    let date = format!("2027-01-{night:02}");
    cmd.args(["audit", "--suite", suite.to_str().unwrap(), "--as-of", &date]);
    cmd.args(["--seed", &night.to_string()]);
    if let Some(out) = out {
        cmd.args(["--out", out.to_str().unwrap()]);
    }
    cmd
}

fn spent(dir: &Path) -> f64 {
    dpincon_engine::ledger::summary(&dir.join("t.ledger")).unwrap().spent
}

fn report(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap()
}

const EPOCH: f64 = RELEASE_EPSILON + GATE_EPSILON;

#[test]
fn quiet_nights_pass_for_free_and_a_burst_is_flagged_the_same_night() {
    let dir = tempfile::tempdir().unwrap();
    let suite = suite(dir.path(), 6);
    let out = dir.path().join("out");
    let run = |night: u32| {
        let o = audit(&suite, night, Some(&out)).output().unwrap();
        assert!(o.status.code().is_some_and(|c| c < 3), "{}", String::from_utf8_lossy(&o.stderr));
        (report(&out), String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let (first, _) = run(1);
    let check = &first["datasets"][0]["checks"][0];
    assert_eq!(check["gate"]["outcome"], "fresh");
    assert_eq!(check["gate"]["reason"], "first");
    assert_eq!(check["verdict"], "pass");
    assert!((spent(dir.path()) - EPOCH).abs() < 1e-9);
    let plan = &first["datasets"][0]["budget"]["plan"];
    assert_eq!(
        (plan["refreshes_planned"].as_u64(), plan["horizon_nights"].as_u64()),
        (Some(6), Some(365))
    );
    for night in 2..=6 {
        let (r, stdout) = run(night);
        let check = &r["datasets"][0]["checks"][0];
        assert_eq!(check["gate"]["outcome"], "pass", "night {night}: {check}");
        assert_eq!(check["verdict"], "pass", "{check}");
        // I_R is 30 here: the gate's interval holds it.
        let ci = check["ci95"].as_array().unwrap();
        assert!(ci[0].as_i64().unwrap() <= 30 && 30 <= ci[1].as_i64().unwrap(), "{check}");
        assert!(stdout.contains("gated (no ε"), "{stdout}");
    }
    assert!((spent(dir.path()) - EPOCH).abs() < 1e-9, "quiet nights charged nothing");
    // A burst: 300 rows break the FD, I_R = 300 > 150: flagged tonight.
    write_table(dir.path(), 300);
    let o = audit(&suite, 7, Some(&out)).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    let check = &report(&out)["datasets"][0]["checks"][0];
    assert_eq!(
        (&check["gate"]["outcome"], &check["gate"]["reason"]),
        (&"fresh".into(), &"above".into())
    );
    assert_eq!(check["verdict"], "fail");
    assert!((spent(dir.path()) - 2.0 * EPOCH).abs() < 1e-9);
    // The history and the HTML show the year: gated nights as such; the
    // secret is in the state file only, which is the owner's alone.
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("legend-gated") && html.contains("fresh releases left"), "no legend");
    let state = dir.path().join("t.gate");
    assert!(std::fs::read_to_string(&state).unwrap().contains("threshold_noise"));
    for file in ["report.json", "report.html", "junit.xml"] {
        let text = std::fs::read_to_string(out.join(file)).unwrap();
        assert!(!text.contains("threshold_noise"), "{file}");
    }
    let history = std::fs::read(dir.path().join("audit-history.sqlite")).unwrap();
    assert!(!history.windows(15).any(|w| w == b"threshold_noise"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&state).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{mode:o}");
    }
}

#[test]
fn a_plan_that_cannot_last_its_horizon_is_refused_at_load() {
    let dir = tempfile::tempdir().unwrap();
    // 11 epochs × ε 3 = 33 > cap 30.
    let suite = suite(dir.path(), 11);
    let o = audit(&suite, 1, None).output().unwrap();
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cannot last the horizon") && err.contains("33"), "{err}");
    assert!(!dir.path().join("t.ledger").exists() && !dir.path().join("t.gate").exists());
    // A gate too noisy for its threshold names the ε that would do.
    let text = std::fs::read_to_string(&suite).unwrap();
    let text = text.replace("refreshes = 11", "refreshes = 2").replace("max = 150", "max = 3");
    std::fs::write(&suite, text).unwrap();
    let o = audit(&suite, 1, None).output().unwrap();
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("check 'repairs'") && err.contains("a gate epsilon of at least"), "{err}");
}

/// Runs night `night`, SIGKILLed at `point`.
fn kill_at(suite: &Path, night: u32, point: &str) {
    let mut child = audit(suite, night, None)
        .env(ENV, point)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let reached = format!("dpincon failpoint {point} reached");
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let seen: Vec<String> =
        stderr.lines().map(Result::unwrap).take_while(|l| !l.contains(&reached)).collect();
    child.kill().unwrap();
    assert!(!child.wait().unwrap().success(), "{point}: {seen:?}");
}

#[test]
fn a_gated_night_killed_anywhere_never_charges_an_epoch_twice_nor_loses_one() {
    // The opening night killed at each point, then run to the end: one
    // epoch charged in all, whatever the point (a kill after the charge
    // is recovered under it; one before it charges nothing).
    let opening: Vec<&str> = POINTS
        .iter()
        .chain(&GATE_POINTS)
        .copied()
        .filter(|p| *p != "charge-torn" && *p != "gate-answered")
        .collect();
    for point in opening {
        let dir = tempfile::tempdir().unwrap();
        let suite = suite(dir.path(), 6);
        kill_at(&suite, 1, point);
        let o = audit(&suite, 1, None).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{point}: {}", String::from_utf8_lossy(&o.stderr));
        assert!((spent(dir.path()) - EPOCH).abs() < 1e-9, "{point}: {}", spent(dir.path()));
        // And the epoch it stored answers the next night for free.
        let o = audit(&suite, 2, None).output().unwrap();
        assert!(String::from_utf8_lossy(&o.stdout).contains("gated (no ε"), "{point}");
        assert!((spent(dir.path()) - EPOCH).abs() < 1e-9, "{point}");
    }
    // A gated night killed after its answer was stored and before the
    // history recorded it: the state is one night ahead, which resumes.
    let dir = tempfile::tempdir().unwrap();
    let suite = suite(dir.path(), 6);
    assert_eq!(audit(&suite, 1, None).output().unwrap().status.code(), Some(0));
    kill_at(&suite, 2, "gate-answered");
    let o = audit(&suite, 2, None).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains("gated (no ε"));
    assert!((spent(dir.path()) - EPOCH).abs() < 1e-9);
}

#[test]
fn an_unchanged_version_re_serves_without_asking_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let suite = suite(dir.path(), 6);
    let text = std::fs::read_to_string(&suite).unwrap();
    let versioned = text
        .replace("ledger = \"t.ledger\"", "ledger = \"t.ledger\"\nversion-file = \"t.version\"");
    std::fs::write(&suite, versioned).unwrap();
    let out = dir.path().join("out");
    let night = |n: u32, version: &str| {
        std::fs::write(dir.path().join("t.version"), version).unwrap();
        let o = audit(&suite, n, Some(&out)).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        report(&out)["datasets"][0].clone()
    };
    let state = || std::fs::read(dir.path().join("t.gate")).unwrap();
    assert_eq!(night(1, "v1")["checks"][0]["gate"]["outcome"], "fresh");
    let opened = state();
    // The same version: re-served, the epoch not asked, nothing charged,
    // and the plan still reported (finite figures).
    let reserved = night(2, "v1");
    assert_eq!(reserved["status"], "reserved");
    assert!(reserved["checks"][0]["gate"].is_null());
    assert_eq!(state(), opened, "the gate was not asked");
    let budget = &reserved["budget"];
    assert_eq!(budget["plan"]["refreshes_left"], 9);
    assert!(budget["nights_left"].as_f64().is_some_and(f64::is_finite), "{budget}");
    // A new version asks the epoch: a pass, for free.
    assert_eq!(night(3, "v2")["checks"][0]["gate"]["outcome"], "pass");
    assert_ne!(state(), opened);
    assert!((spent(dir.path()) - EPOCH).abs() < 1e-9);
}
