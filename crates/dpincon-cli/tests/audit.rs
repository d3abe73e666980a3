//! `dpincon-cli audit`: Soda exit codes, reports written, bad suites exit 3
//! with the file and line and nothing charged or written; a dataset's
//! failure is a fixed reason on standard output and in the reports, its
//! detail on standard error only.

use std::path::Path;

mod common;
use common::cli;

/// A → B with one violating group of three rows: I_MI = 3, I_P = 3.
fn suite(dir: &Path, max_pairs: u32) -> String {
    std::fs::write(dir.join("t.csv"), "A,B\na,1\na,2\na,3\nb,1\n").unwrap();
    std::fs::write(dir.join("t.dcs"), "FD: A -> B\n").unwrap();
    let path = dir.join("suite.toml");
    std::fs::write(
        &path,
        format!(
            "name = \"cli\"\n[[dataset]]\nname = \"t\"\ndata = \"t.csv\"\nconstraints = \"t.dcs\"\n\
             epsilon = 10000\nmax-rows = 10\nledger = \"t.ledger\"\nbudget-cap = 100000\n\
             [[dataset.check]]\nname = \"pairs\"\nmeasure = \"mi\"\nmax = {max_pairs}\n"
        ),
    )
    .unwrap();
    path.display().to_string()
}

#[test]
fn exit_codes_follow_the_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let path = suite(dir.path(), 10);
    let pass = cli(&["audit", "--suite", &path, "--seed", "1", "--out", out.to_str().unwrap()]);
    assert_eq!(pass.status.code(), Some(0), "{}", String::from_utf8_lossy(&pass.stderr));
    for file in ["report.json", "junit.xml", "report.html"] {
        assert!(out.join(file).exists(), "{file}");
    }
    let path = suite(dir.path(), 1);
    let fail = cli(&["audit", "--suite", &path, "--seed", "1"]);
    assert_eq!(fail.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&fail.stdout).contains("FAIL"));
    let history = cli(&["audit", "history", "--suite", &path]);
    assert_eq!(history.status.code(), Some(0));
    let trend = String::from_utf8_lossy(&history.stdout).into_owned();
    assert!(trend.starts_with("pairs (t, mi):") && trend.lines().count() == 3, "{trend}");
    // Dated in ISO 8601, UTC without the suite's `time-zone`.
    let date = trend.lines().nth(1).unwrap().split_whitespace().next().unwrap();
    assert!(date.len() == 20 && date.ends_with('Z') && date.as_bytes()[10] == b'T', "{trend}");
    let zoned = std::fs::read_to_string(&path).unwrap().replacen(
        "name = \"cli\"\n",
        "name = \"cli\"\ntime-zone = \"Asia/Kolkata\"\n",
        1,
    );
    std::fs::write(&path, zoned).unwrap();
    let history = cli(&["audit", "history", "--suite", &path]);
    let trend = String::from_utf8_lossy(&history.stdout).into_owned();
    assert!(trend.lines().nth(1).unwrap().contains("+05:30  "), "{trend}");
}

#[test]
fn bad_suite_exits_3_naming_the_line_and_charges_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = suite(dir.path(), 10);
    let text =
        std::fs::read_to_string(&path).unwrap().replace("max = 10", "max = 10\nmeasure2 = 1");
    std::fs::write(&path, text).unwrap();
    let out = cli(&["audit", "--suite", &path, "--out", dir.path().join("out").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("suite.toml: line 14: unknown field `measure2`"), "{err}");
    assert!(!dir.path().join("t.ledger").exists());
    assert!(!dir.path().join("out").exists());
    assert!(!dir.path().join("audit-history.sqlite").exists());
}

/// A PostgreSQL dataset whose server is down: that dataset is an error
/// (exit 3) naming the server without its password, nothing is charged,
/// and the CSV dataset beside it still runs.
#[test]
fn an_unreachable_postgres_dataset_exits_3_and_charges_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = suite(dir.path(), 10);
    // A loopback port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let text = std::fs::read_to_string(&path).unwrap()
        + &format!(
            "[[dataset]]\nname = \"pg\"\n\
             postgres = {{ url = \"postgres://audit:hunter2-secret@127.0.0.1:{port}/wh\", \
             table = \"public.tax\" }}\nconstraints = \"t.dcs\"\nepsilon = 1\nmax-rows = 10\n\
             ledger = \"pg.ledger\"\nbudget-cap = 100\n[[dataset.check]]\nname = \"pg-pairs\"\nmeasure = \"mi\"\nmax = 5\n"
        );
    std::fs::write(&path, text).unwrap();
    let out_dir = dir.path().join("out");
    let out = cli(&["audit", "--suite", &path, "--seed", "1", "--out", out_dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("dataset pg: Error: unreadable data"), "{stdout}");
    // The detail is the operator's: on standard error, after the dataset.
    let detail =
        format!("dataset pg: unreadable data: PostgreSQL postgres://audit@127.0.0.1:{port}/wh");
    assert!(stderr.contains(&detail), "{stderr}");
    assert!(stderr.contains("cannot connect"), "{stderr}");
    let report = std::fs::read_to_string(out_dir.join("report.json")).unwrap();
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(!report.contains("cannot connect") && !stdout.contains("cannot connect"));
    for text in [&*stdout, &report, &html, &*stderr] {
        assert!(!text.contains("hunter2"), "the password was printed");
    }
    assert!(!dir.path().join("pg.ledger").exists());
    // The CSV dataset ran and was charged.
    assert!(dir.path().join("t.ledger").exists());
    assert!(stdout.contains("PASS"), "{stdout}");
}

#[test]
fn a_dataset_needs_exactly_one_table_to_run_here() {
    let dir = tempfile::tempdir().unwrap();
    let path = suite(dir.path(), 10);
    let text = std::fs::read_to_string(&path).unwrap();
    let both = text.replace(
        "data = \"t.csv\"",
        "data = \"t.csv\"\npostgres = { url = \"postgres://u@h/db\", table = \"t\" }",
    );
    std::fs::write(&path, both).unwrap();
    let out = cli(&["audit", "--suite", &path]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("give `data` or `postgres`, not both"));
    std::fs::write(&path, text.replace("data = \"t.csv\"\n", "")).unwrap();
    let out = cli(&["audit", "--suite", &path]);
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("dataset 't' has no `data` or `postgres`"), "{err}");
    assert!(!dir.path().join("t.ledger").exists());
}

#[test]
fn run_reads_postgres_urls_and_never_prints_their_password() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 10);
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("postgres://audit:hunter2-secret@127.0.0.1:{port}/wh");
    let dcs = dir.path().join("t.dcs");
    let args = ["run", "--data", &url, "--constraints", dcs.to_str().unwrap(), "--epsilon", "1"];
    let out = cli(&args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("give `table` or `query`") && !err.contains("hunter2"), "{err}");
    let out = cli(&[&args[..], &["--table", "t"]].concat());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("PostgreSQL postgres://audit@127.0.0.1:{port}/wh table t")));
    assert!(err.contains("cannot connect") && !err.contains("hunter2"), "{err}");
}

/// A typo cell (`9x12`) in a numeric column: without a declared schema the
/// column is inferred as a string and the constraint cannot bind; with
/// `Zip:int` the table is unreadable. Either way the engine's message
/// (the inferred type, the cell) is on standard error after the dataset's
/// name, and neither standard output nor a report holds it.
#[test]
fn a_typo_cell_is_a_fixed_reason_in_reports_and_its_detail_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let path = suite(dir.path(), 10);
    std::fs::write(dir.path().join("t.csv"), "Zip,City\n10001,NYC\n10001,LA\n9x12,SF\n").unwrap();
    std::fs::write(
        dir.path().join("t.dcs"),
        "not(t1.Zip=t2.Zip & t1.City!=t2.City & t1.Zip > 100)\n",
    )
    .unwrap();
    let out_dir = dir.path().join("out");
    let run = |suite: &str| {
        let out =
            cli(&["audit", "--suite", suite, "--seed", "1", "--out", out_dir.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let reports: Vec<String> = ["report.json", "junit.xml", "report.html"]
            .iter()
            .map(|f| std::fs::read_to_string(out_dir.join(f)).unwrap())
            .collect();
        (stdout, stderr, reports)
    };

    let (stdout, stderr, reports) = run(&path);
    assert!(stdout.contains("dataset t: Error: bad constraint"), "{stdout}");
    assert!(stderr.contains("dataset t: bad constraint: "), "{stderr}");
    assert!(stderr.contains("t1.Zip (string)"), "{stderr}");
    for text in reports.iter().chain([&stdout]) {
        assert!(!text.contains("(string)") && !text.contains("t1.Zip"), "{text}");
    }

    let text = std::fs::read_to_string(&path).unwrap();
    let declared =
        text.replace("data = \"t.csv\"\n", "data = \"t.csv\"\nschema = \"Zip:int, City:string\"\n");
    std::fs::write(&path, declared).unwrap();
    let (stdout, stderr, reports) = run(&path);
    assert!(stdout.contains("dataset t: Error: unreadable data"), "{stdout}");
    assert!(stderr.contains("dataset t: unreadable data: "), "{stderr}");
    assert!(stderr.contains("9x12"), "{stderr}");
    for text in reports.iter().chain([&stdout]) {
        assert!(!text.contains("9x12"), "{text}");
    }
    assert!(!dir.path().join("t.ledger").exists(), "nothing charged");
}

/// The ε the ledger at `path` has spent (the engine's ledger API).
fn ledger_spent(path: &Path) -> f64 {
    dpincon_engine::ledger::summary(path).unwrap().spent
}

/// One seeded night into `out`: the exit code 0 and report.json.
fn night(suite: &str, out: &Path, extra: &[&str]) -> (String, serde_json::Value) {
    let args = ["audit", "--suite", suite, "--seed", "1", "--out", out.to_str().unwrap()];
    let output = cli(&[&args[..], extra].concat());
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = std::fs::read_to_string(out.join("report.json")).unwrap();
    (stdout, serde_json::from_str(&report).unwrap())
}

/// A dataset whose version is in a file the load job writes: the first
/// night releases; the same version re-serves that release (the ledger
/// unchanged, the reports say so); a new version releases again.
#[test]
fn an_unchanged_version_file_reserves_the_last_release_at_no_cost() {
    let dir = tempfile::tempdir().unwrap();
    let path = suite(dir.path(), 10);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("ledger =", "version-file = \"t.version\"\nledger ="))
        .unwrap();
    let (out, ledger) = (dir.path().join("out"), dir.path().join("t.ledger"));
    std::fs::write(dir.path().join("t.version"), "v1\n").unwrap();

    let (_, first) = night(&path, &out, &[]);
    let released = &first["datasets"][0];
    assert_eq!(
        (released["status"].as_str(), released["version"].as_str()),
        (Some("ran"), Some("v1"))
    );
    assert_eq!(ledger_spent(&ledger), 10000.0);

    let (stdout, second) = night(&path, &out, &[]);
    let d = &second["datasets"][0];
    assert_eq!(d["status"], "reserved", "{second}");
    assert_eq!(d["reserved_from"]["job_id"], released["job_id"]);
    assert_eq!(d["reserved_from"]["started_unix"], first["started_unix"]);
    assert_eq!(
        (d["budget"]["per_run"].as_f64(), d["budget"]["spent"].as_f64()),
        (Some(0.0), Some(10000.0))
    );
    assert_eq!(d["checks"][0]["ci95"], released["checks"][0]["ci95"]);
    assert_eq!(ledger_spent(&ledger), 10000.0, "nothing charged");
    assert!(stdout.contains("dataset t: re-served: version v1 unchanged since "), "{stdout}");
    assert!(stdout.contains("nothing charged"), "{stdout}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("re-served: version v1 unchanged") && html.contains("id=\"legend-reserved\"")
    );
    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    let job = released["job_id"].as_str().unwrap();
    assert!(junit.contains(&format!("<property name=\"dpincon.reserved_from\" value=\"{job}\"/>")));
    let history = cli(&["audit", "history", "--suite", &path]);
    let trend = String::from_utf8_lossy(&history.stdout).into_owned();
    let marks: Vec<bool> = trend.lines().skip(1).map(|l| l.ends_with("  re-served")).collect();
    assert_eq!(marks, [false, true], "{trend}");

    std::fs::write(dir.path().join("t.version"), "v2").unwrap();
    let (_, third) = night(&path, &out, &[]);
    assert_eq!(third["datasets"][0]["status"], "ran");
    assert_ne!(third["datasets"][0]["job_id"], released["job_id"]);
    assert_eq!(ledger_spent(&ledger), 20000.0);

    // The load job did not write the file: refused before any work.
    std::fs::remove_file(dir.path().join("t.version")).unwrap();
    let missing = cli(&["audit", "--suite", &path, "--seed", "1"]);
    assert_eq!(missing.status.code(), Some(3));
    let stdout = String::from_utf8_lossy(&missing.stdout);
    assert!(stdout.contains("dataset t: Error: unreadable version"), "{stdout}");
    assert!(String::from_utf8_lossy(&missing.stderr).contains("`version-file`"));
    assert_eq!(ledger_spent(&ledger), 20000.0);
}

/// `--as-of` dates the run (00:00 in the suite's time zone) and every
/// report, the history and its listing say it is a test clock; a date
/// before the latest night, or a run on a coordinator, is refused with
/// nothing charged.
#[test]
fn a_test_clock_dates_the_run_and_is_labelled_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let path = suite(dir.path(), 10);
    let (out, ledger) = (dir.path().join("out"), dir.path().join("t.ledger"));
    let (stdout, report) = night(&path, &out, &["--as-of", "2026-03-01"]);
    assert!(stdout.contains("TEST CLOCK: this run is dated 2026-03-01"), "{stdout}");
    assert_eq!(report["test_clock"], "2026-03-01");
    // 2026-03-01T00:00:00Z.
    assert_eq!(report["started_unix"], 1_772_323_200);
    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    assert!(junit.contains("<property name=\"dpincon.test_clock\" value=\"2026-03-01\"/>"));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("id=\"test-clock\"><b>TEST CLOCK:</b> this run is dated 2026-03-01"));

    // In the suite's zone: 2026-03-02T00:00:00+05:30.
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replacen("\n", "\ntime-zone = \"Asia/Kolkata\"\n", 1)).unwrap();
    let (_, report) = night(&path, &out, &["--as-of", "2026-03-02"]);
    assert_eq!(report["started_unix"], 1_772_323_200 + 86_400 - 19_800);
    let history = cli(&["audit", "history", "--suite", &path]);
    let trend = String::from_utf8_lossy(&history.stdout).into_owned();
    assert!(trend.contains("  2026-03-01T05:30:00+05:30 "), "{trend}");
    assert!(trend.contains("  2026-03-02T00:00:00+05:30 "), "{trend}");
    assert_eq!(trend.matches("  (test clock)").count(), 2, "{trend}");
    let spent = ledger_spent(&ledger);

    let earlier = cli(&["audit", "--suite", &path, "--seed", "1", "--as-of", "2026-02-15"]);
    assert_eq!(earlier.status.code(), Some(3));
    let err = String::from_utf8_lossy(&earlier.stderr);
    assert!(err.contains("--as-of 2026-02-15 (2026-02-15T00:00:00+05:30) is earlier"), "{err}");
    assert!(err.contains("latest run of suite 'cli' in the history (2026-03-02T00:00:00+05:30)"));
    let remote = ["--as-of", "2026-03-05", "--coordinator", "http://127.0.0.1:9"];
    let refused = cli(&[&["audit", "--suite", &path][..], &remote].concat());
    assert_eq!(refused.status.code(), Some(3));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("--as-of is a test clock and cannot date a run on a coordinator"),
        "{err}"
    );
    assert_eq!(ledger_spent(&ledger), spent, "nothing charged");
    let history = cli(&["audit", "history", "--suite", &path]);
    assert_eq!(String::from_utf8_lossy(&history.stdout), trend, "nothing recorded");
}
