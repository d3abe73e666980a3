//! A whole run (`session`, what `dpincon-cli audit` and the Python
//! package's `Suite.run` call): the observer is told each step in order,
//! the history and reports are written, a report that cannot be written
//! is an error once the run is recorded; a suite built in code is the
//! suite its file is.

use std::cell::RefCell;
use std::path::Path;

use dpincon_audit::history::History;
use dpincon_audit::session::{self, Observer, Quiet};
use dpincon_audit::{AuditError, AuditRun, DatasetStatus, Detail, ExitStatus, RunOptions, Suite};

/// Dataset `t` has one conflicting group (A → B); dataset `gone`'s table
/// is missing.
fn fixture(dir: &Path) -> std::path::PathBuf {
    std::fs::write(dir.join("t.csv"), "A,B\na,1\na,2\na,3\nb,1\n").unwrap();
    std::fs::write(dir.join("t.dcs"), "FD: A -> B\n").unwrap();
    let path = dir.join("suite.toml");
    let dataset = |name: &str, data: &str| {
        format!(
            "[[dataset]]\nname = \"{name}\"\ndata = \"{data}\"\nconstraints = \"t.dcs\"\n\
             epsilon = 10000\nmax-rows = 10\nledger = \"{name}.ledger\"\nbudget-cap = 100000\n\
             [[dataset.check]]\nname = \"{name}-pairs\"\nmeasure = \"mi\"\nmax = 10\n"
        )
    };
    let text = format!("name = \"s\"\n{}{}", dataset("t", "t.csv"), dataset("gone", "gone.csv"));
    std::fs::write(&path, text).unwrap();
    path
}

/// Every step it is told, in order.
#[derive(Default)]
struct Steps(RefCell<Vec<String>>);

impl Observer for Steps {
    fn failures(&self, details: &[Detail]) {
        let names: Vec<&str> = details.iter().map(|d| d.dataset.as_str()).collect();
        self.0.borrow_mut().push(format!("failures {}", names.join(",")));
    }

    fn recorded(&self, _suite: &Suite, run: &AuditRun) {
        self.0.borrow_mut().push(format!("recorded {:?}", run.status));
    }

    fn reports_written(&self, dir: &Path) {
        self.0.borrow_mut().push(format!("reports {}", dir.file_name().unwrap().display()));
    }
}

#[tokio::test]
async fn a_run_is_recorded_then_reported_and_its_observer_told_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture(dir.path());
    let suite = Suite::load(&path).unwrap();
    let out = dir.path().join("out");
    let options =
        RunOptions { out: Some(out.clone()), seed: Some(1), as_of: Some("2026-03-01".into()) };
    let steps = Steps::default();
    let finished = session::run_here(&suite, &path, &options, &steps).await.unwrap();

    assert_eq!(steps.0.into_inner(), ["failures gone", "recorded Error", "reports out"]);
    let run = &finished.run;
    assert_eq!((run.status, run.test_clock.as_deref()), (ExitStatus::Error, Some("2026-03-01")));
    let status: Vec<_> = run.datasets.iter().map(|d| d.status).collect();
    assert_eq!(status, [DatasetStatus::Ran, DatasetStatus::Error]);
    assert_eq!(finished.details.len(), 1);
    assert!(finished.details[0].message.contains("gone.csv"));
    assert_eq!(finished.reports.as_deref(), Some(out.as_path()));
    assert!(finished.notified.is_none(), "no [notify]");
    let written = std::fs::read_to_string(out.join("report.json")).unwrap();
    assert_eq!(written, dpincon_audit::report::json::render(run));
    for file in ["junit.xml", "report.html"] {
        assert!(out.join(file).exists(), "{file}");
    }
    let trends = session::trends(&suite).unwrap();
    assert_eq!(trends.len(), 1, "the missing table's check has no release to trend");
    assert_eq!(trends[0].points[0].started_unix, run.started_unix);
}

#[tokio::test]
async fn a_report_that_cannot_be_written_is_an_error_once_the_run_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture(dir.path());
    let suite = Suite::load(&path).unwrap();
    // A file where the reports' folder should be.
    let out = dir.path().join("out");
    std::fs::write(&out, "").unwrap();
    let options = RunOptions { out: Some(out), ..RunOptions::default() };
    let e = session::run_here(&suite, &path, &options, &Quiet).await.unwrap_err();
    assert!(matches!(e, AuditError::Report { .. }), "{e}");
    let history = History::open(&suite.history_path()).unwrap();
    assert!(history.latest_started("s").unwrap().is_some(), "the run was recorded");
}

#[test]
fn a_suite_built_in_code_is_the_suite_its_file_is() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture(dir.path());
    let text = std::fs::read_to_string(&path).unwrap();
    // The file's keys through another serde format (as a Python dict is).
    let keys = serde_json::to_value(toml::from_str::<toml::Value>(&text).unwrap()).unwrap();
    let built: Suite = serde_json::from_value(keys.clone()).unwrap();
    let built = built.checked(Path::new("<dict>"), dir.path()).unwrap();
    let loaded = Suite::load(&path).unwrap();
    assert_eq!(serde_json::to_value(&built).unwrap(), serde_json::to_value(&loaded).unwrap());
    assert_eq!(built.history_path(), dir.path().join("audit-history.sqlite"));

    // Validated as a file is, named by its origin.
    let mut bad = keys;
    bad["dataset"][0]["budget-cap"] = (-1).into();
    let bad: Suite = serde_json::from_value(bad).unwrap();
    let e = bad.checked(Path::new("<dict>"), dir.path()).unwrap_err().to_string();
    assert_eq!(e, "<dict>: dataset 't': budget-cap = -1 must be a positive number");
}
