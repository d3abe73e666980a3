//! End-to-end audits on tiny generated tables: verdicts, refusals, exit
//! codes, history and reports; and every kind of bad suite.

use std::path::Path;

use dpincon_audit::history::History;
use dpincon_audit::{
    DatasetStatus, ExitStatus, Reason, RunContext, Suite, Verdict, report, run_suite,
};
use dpincon_engine::run_job;

/// Group `a` has B ∈ {1, 2, 3} under A → B: I_MI = 3, I_P = 3, I_R = 2.
fn fixture(dir: &Path) {
    std::fs::write(dir.join("t.csv"), "A,B\na,1\na,2\na,3\nb,1\nc,5\n").unwrap();
    std::fs::write(dir.join("t.dcs"), "FD: A -> B\n").unwrap();
}

fn suite_text(cap: f64, extra: &str) -> String {
    format!(
        r#"name = "s"
[[dataset]]
name = "t"
data = "t.csv"
constraints = "t.dcs"
measures = ["mi", "p", "r"]
epsilon = 10000
max-rows = 10
ledger = "t.ledger"
budget-cap = {cap}
[[dataset.check]]
name = "pairs"
measure = "mi"
max = 2
[[dataset.check]]
name = "rows"
measure = "p"
max-fraction = 0.3
[[dataset.check]]
name = "repair"
measure = "r"
max = 100
severity = "warn"
[[dataset.check]]
name = "some-conflict"
measure = "p"
min = 1
{extra}"#
    )
}

async fn audit(path: &Path) -> dpincon_audit::AuditRun {
    audit_with_details(path).await.run
}

async fn audit_with_details(path: &Path) -> dpincon_audit::AuditOutcome {
    let suite = Suite::load(path).unwrap();
    run_suite(&suite, &RunContext::now(Some(7)), async |config, _name: &str| {
        Ok(run_job(config.config(), &dpincon_engine::NoProgress).await?)
    })
    .await
}

#[tokio::test]
async fn verdicts_follow_the_interval_and_the_worst_sets_the_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    let path = dir.path().join("suite.toml");
    std::fs::write(&path, suite_text(1e5, "")).unwrap();
    let run = audit(&path).await;
    let verdicts: Vec<_> = run.checks().map(|c| (c.name.as_str(), c.verdict)).collect();
    // At ε = 10⁴ the interval is the exact value: 3 > 2 fails, 3 ≤ 0.3·10 passes.
    // `min = 1` on I_P = 3: at or above, a pass.
    assert_eq!(
        verdicts,
        [
            ("pairs", Verdict::Fail),
            ("rows", Verdict::Pass),
            ("repair", Verdict::Pass),
            ("some-conflict", Verdict::Pass)
        ]
    );
    let minimum = run.checks().last().unwrap();
    assert!(minimum.at_least && minimum.message.starts_with("p ≥ 1: "), "{}", minimum.message);
    assert_eq!(run.checks().next().unwrap().ci95, Some([3, 3]));
    assert_eq!(run.status, ExitStatus::Fail);
    assert_eq!(run.exit_code, 2);
    // The ledger was charged 3 measures × ε.
    let b = &run.datasets[0].budget;
    assert_eq!((b.spent, b.per_run), (0.0, 30000.0));
    assert_eq!(b.remaining, 70000.0);
    assert_eq!(b.nights_left, 2.0);

    // History and reports.
    let mut history = History::open(&dir.path().join("audit-history.sqlite")).unwrap();
    history.append(&run).unwrap();
    let second = audit(&path).await;
    history.append(&second).unwrap();
    let trends = history.trends("s").unwrap();
    assert_eq!(trends.len(), 4);
    assert_eq!(trends[0].points.len(), 2);
    // Same exact values both nights: no change flagged.
    assert!(trends.iter().all(|t| t.points.iter().all(|p| !p.changed)));
    let out = dir.path().join("out");
    report::write_all(&out, &second, &trends).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(json["exit_code"], 2);
    assert_eq!(json["datasets"][0]["checks"][0]["verdict"], "fail");
    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    assert_eq!(junit.matches("<testcase").count(), 4);
    assert_eq!(junit.matches("<failure").count(), 1);
    // Read back as JUnit: the suite, one case per check, the failure's
    // type and message.
    let parsed = quick_junit::Report::deserialize_from_str(&junit).unwrap();
    assert_eq!((parsed.name.as_deref(), parsed.tests, parsed.failures), (Some("s"), 4, 1));
    let suite = &parsed.test_suites[0];
    assert_eq!(suite.name.as_str(), second.datasets[0].name);
    let cases: Vec<_> = suite.test_cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(cases, ["pairs", "rows", "repair", "some-conflict"]);
    let classname = format!("s.{}", second.datasets[0].name);
    assert_eq!(suite.test_cases[0].classname.as_deref(), Some(classname.as_str()));
    match &suite.test_cases[0].status {
        quick_junit::TestCaseStatus::NonSuccess { kind, message, ty, .. } => {
            assert_eq!(*kind, quick_junit::NonSuccessKind::Failure);
            assert_eq!(ty.as_deref(), Some("threshold"));
            assert_eq!(message.as_deref(), Some(second.datasets[0].checks[0].message.as_str()));
        }
        other => panic!("pairs is not a failure: {other:?}"),
    }
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert_eq!(html.matches("<svg").count(), 4);
    assert!(html.contains("id=\"summary\"") && html.contains("id=\"budget\""));
    assert!(html.contains("id=\"coverage\"") && html.contains("the projection's bias included"));
}

#[tokio::test]
async fn over_cap_dataset_is_refused_before_work_and_others_still_run() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    // A second dataset on the same table whose cap is below one run.
    let extra = r#"
[[dataset]]
name = "small-cap"
data = "t.csv"
constraints = "t.dcs"
epsilon = 1
max-rows = 10
ledger = "small-cap.ledger"
budget-cap = 0.5
[[dataset.check]]
name = "small-pairs"
measure = "mi"
max = 100
"#;
    let path = dir.path().join("suite.toml");
    std::fs::write(&path, suite_text(1e5, extra)).unwrap();
    let run = audit(&path).await;
    assert_eq!(run.datasets[0].status, DatasetStatus::Ran);
    assert_eq!(run.datasets[1].status, DatasetStatus::Refused);
    assert_eq!(run.datasets[1].budget.refused, Some(Reason::BudgetExhausted));
    assert_eq!(run.datasets[1].error, Some(Reason::BudgetExhausted));
    assert!(!dir.path().join("small-cap.ledger").exists(), "nothing charged");
    assert_eq!(run.exit_code, 3);
}

fn parse_error(text: &str) -> String {
    Suite::parse(text, Path::new("suite.toml")).unwrap_err().to_string()
}

#[test]
fn bad_suites_name_what_is_wrong() {
    let ok = suite_text(10.0, "");
    assert!(Suite::parse(&ok, Path::new("suite.toml")).is_ok());
    let cases = [
        (ok.replace("max = 2", "max = 2\nbogus = 1"), "line 15: unknown field `bogus`"),
        ("name = \"s\"\n[[dataset]\n".to_string(), "line 2"),
        (ok.replace("constraints = \"t.dcs\"\n", ""), "missing field `constraints`"),
        (ok.replace("constraints = \"t.dcs\"", "constraints = \"\""), "has no constraints"),
        (ok.replace("name = \"rows\"", "name = \"pairs\""), "duplicate check name 'pairs'"),
        (
            ok.replace("measures = [\"mi\", \"p\", \"r\"]", "measures = [\"mi\", \"p\"]"),
            "measure 'r' is not released",
        ),
        (ok.replace("epsilon = 10000", "epsilon = 0"), "epsilon = 0 must be"),
        (ok.replace("epsilon = 10000", "epsilon = nan"), "epsilon = NaN must be"),
        (ok.replace("epsilon = 10000", "epsilon = 1e9"), "must be finite, between"),
        (ok.replace("max-rows = 10", "max-rows = 0"), "max-rows must be at least 1"),
        (
            ok.replace("max = 100", "max = 100\nmax-fraction = 0.1"),
            "give one of max, max-fraction and min",
        ),
    ];
    for (text, expected) in cases {
        let message = parse_error(&text);
        assert!(message.contains(expected), "expected {expected:?} in {message:?}");
        assert!(message.starts_with("suite.toml"), "{message}");
    }
}

#[tokio::test]
async fn empty_table_and_missing_file_are_errors_with_nothing_charged() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    std::fs::write(dir.path().join("t.csv"), "A,B\n").unwrap();
    let path = dir.path().join("suite.toml");
    std::fs::write(&path, suite_text(1e5, "")).unwrap();
    let outcome = audit_with_details(&path).await;
    let run = &outcome.run;
    assert_eq!(run.datasets[0].status, DatasetStatus::Error);
    assert_eq!(run.datasets[0].error, Some(Reason::UnreadableData));
    // The engine's words are the operator's detail, not the report's.
    assert!(outcome.details[0].message.contains("no rows"), "{:?}", outcome.details);
    assert_eq!(run.exit_code, 3);
    assert!(!dir.path().join("t.ledger").exists());
    std::fs::remove_file(dir.path().join("t.csv")).unwrap();
    let outcome = audit_with_details(&path).await;
    assert_eq!(outcome.run.datasets[0].status, DatasetStatus::Error);
    assert_eq!(outcome.run.datasets[0].error, Some(Reason::UnreadableData));
    assert!(outcome.details[0].message.contains("t.csv"), "{:?}", outcome.details);
}

/// The HTML report in headless Chromium: it renders (the DOM has the
/// tables and one chart per check) and logs no console error. Skipped
/// only when Chromium is absent and `DPINCON_REQUIRE_CHROMIUM` is unset
/// (`.ci/run` installs it and sets it).
#[tokio::test]
async fn html_report_renders_in_headless_chromium() {
    let Some(chromium) = ["chromium", "chromium-browser"].into_iter().find(|c| {
        std::process::Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success())
    }) else {
        assert!(
            std::env::var_os("DPINCON_REQUIRE_CHROMIUM").is_none(),
            "DPINCON_REQUIRE_CHROMIUM is set but chromium is not installed"
        );
        eprintln!("SKIPPED: chromium not installed (apt-get install chromium)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    let path = dir.path().join("suite.toml");
    std::fs::write(&path, suite_text(1e5, "")).unwrap();
    let run = audit(&path).await;
    let mut history = History::open(&dir.path().join("audit-history.sqlite")).unwrap();
    history.append(&run).unwrap();
    let out = dir.path().join("out");
    report::write_all(&out, &run, &history.trends("s").unwrap()).unwrap();
    let url = format!("file://{}", out.join("report.html").display());
    let output = std::process::Command::new(chromium)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0"])
        .arg(format!("--user-data-dir={}", dir.path().join("profile").display()))
        .args(["--dump-dom", &url])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let dom = String::from_utf8_lossy(&output.stdout);
    assert!(dom.contains("id=\"summary\"") && dom.contains("id=\"budget\""), "{dom}");
    assert_eq!(dom.matches("<svg").count(), 4, "one chart per check");
    assert!(dom.contains("<polygon") || dom.contains("<rect"), "the 95% band is drawn");
    let log = String::from_utf8_lossy(&output.stderr);
    let console: Vec<_> = log.lines().filter(|l| l.contains("CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:?}");
}

/// The CronJob's suite (deploy/base/configmap-audit.yaml) is a valid
/// suite for `audit --coordinator`, and its constraint file parses.
#[test]
fn the_cronjob_suite_in_the_configmap_parses() {
    // At run time: `env!` keeps the path of the checkout that compiled it,
    // stale when a shared build cache serves another checkout.
    let yaml = std::fs::read_to_string(
        Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").unwrap())
            .join("../../deploy/base/configmap-audit.yaml"),
    )
    .unwrap();
    // A ConfigMap `data:` entry `  NAME: |` and its lines indented by 4.
    let entry = |name: &str| -> String {
        let start = yaml.find(&format!("\n  {name}: |\n")).expect("entry") + name.len() + 7;
        yaml[start..]
            .lines()
            .take_while(|l| l.is_empty() || l.starts_with("    "))
            .map(|l| l.get(4..).unwrap_or("").to_string() + "\n")
            .collect()
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("customers.dcs"), entry("customers.dcs")).unwrap();
    let path = dir.path().join("nightly.toml");
    std::fs::write(&path, entry("nightly.toml")).unwrap();
    let suite = Suite::load(&path).unwrap();
    assert_eq!(suite.datasets[0].remote_name(), "customers");
    assert_eq!(suite.datasets[0].checks.len(), 3);
    // No table here: the operator's registration has it (cluster mode only).
    assert!(suite.require_tables(&path).is_err());
    let dcs = dpincon_engine::Constraints::from(&suite.datasets[0].constraints).parse().unwrap();
    assert_eq!(dcs.len(), 2);
}
