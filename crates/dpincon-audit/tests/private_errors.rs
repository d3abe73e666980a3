//! A dataset's failure reaches the reports and the history only as a fixed
//! public reason. With a typo cell (`9x12`) in a numeric column, neither
//! report.json, junit.xml, report.html nor any row of the history holds
//! the cell, the type inferred from it or the engine's message: those are
//! the operator's detail alone. A declared schema reads no type from a row;
//! the same typo is then an unreadable table, and nothing is charged.

use std::path::Path;

use dpincon_audit::history::History;
use dpincon_audit::{AuditOutcome, DatasetStatus, Reason, RunContext, Suite, report, run_suite};
use dpincon_engine::{NoProgress, run_job};
use rusqlite::types::ValueRef;

const CLEAN: &str = "Zip,City\n10001,NYC\n10001,Boston\n90012,LA\n20002,DC\n";
const TYPO: &str = "Zip,City\n10001,NYC\n10001,Boston\n9x12,LA\n20002,DC\n";
/// Binding `t1.Zip > 100` needs a numeric Zip: with `9x12` inferred in, it
/// is a string column and the engine's message names its inferred type.
const DCS: &str = "not(t1.Zip=t2.Zip & t1.City!=t2.City & t1.Zip > 100)\n";

fn write_suite(dir: &Path, schema: &str) -> std::path::PathBuf {
    std::fs::write(dir.join("t.dcs"), DCS).unwrap();
    let path = dir.join("suite.toml");
    let text = format!(
        "name = \"s\"\n[[dataset]]\nname = \"t\"\ndata = \"t.csv\"\n{schema}constraints = \"t.dcs\"\n\
         epsilon = 1\nmax-rows = 10\nledger = \"t.ledger\"\nbudget-cap = 100\n\
         [[dataset.check]]\nname = \"pairs\"\nmeasure = \"mi\"\nmax = 5\n"
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs the suite, appends it to the history and writes the reports.
async fn audit(path: &Path) -> AuditOutcome {
    let suite = Suite::load(path).unwrap();
    let outcome = run_suite(&suite, &RunContext::now(Some(1)), async |config, _name: &str| {
        Ok(run_job(config.config(), &NoProgress).await?)
    })
    .await;
    let mut history = History::open(suite.history.as_deref().unwrap()).unwrap();
    history.append(&outcome.run).unwrap();
    let out = path.parent().unwrap().join("out");
    report::write_all(&out, &outcome.run, &history.trends("s").unwrap()).unwrap();
    outcome
}

/// Every text a report or the history holds: the three files' bytes, the
/// database file's bytes and every value of every row of every table.
fn published(dir: &Path) -> Vec<(String, String)> {
    let mut texts: Vec<(String, String)> = ["report.json", "junit.xml", "report.html"]
        .iter()
        .map(|f| (f.to_string(), bytes(&dir.join("out").join(f))))
        .collect();
    let db = dir.join("audit-history.sqlite");
    texts.push(("the history file".into(), bytes(&db)));
    let conn = rusqlite::Connection::open(&db).unwrap();
    let mut tables = conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").unwrap();
    let tables: Vec<String> =
        tables.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
    assert!(tables.contains(&"runs".to_string()) && tables.contains(&"checks".to_string()));
    for table in tables {
        let mut rows = conn.prepare(&format!("SELECT * FROM {table}")).unwrap();
        let columns = rows.column_count();
        let mut rows = rows.query([]).unwrap();
        while let Some(row) = rows.next().unwrap() {
            for i in 0..columns {
                let value = match row.get_ref(i).unwrap() {
                    ValueRef::Text(t) | ValueRef::Blob(t) => String::from_utf8_lossy(t).into(),
                    ValueRef::Integer(v) => v.to_string(),
                    ValueRef::Real(v) => v.to_string(),
                    ValueRef::Null => String::new(),
                };
                texts.push((format!("history {table} row"), value));
            }
        }
    }
    texts
}

fn bytes(path: &Path) -> String {
    String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned()
}

fn assert_absent(dir: &Path, secrets: &[&str]) {
    for (what, text) in published(dir) {
        for secret in secrets {
            assert!(!text.contains(secret), "{what} holds {secret:?}");
        }
    }
}

#[tokio::test]
async fn an_inferred_type_error_is_reported_as_its_fixed_reason_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_suite(dir.path(), "");
    std::fs::write(dir.path().join("t.csv"), TYPO).unwrap();
    let outcome = audit(&path).await;
    let d = &outcome.run.datasets[0];
    assert_eq!((d.status, d.error), (DatasetStatus::Error, Some(Reason::BadConstraint)));
    assert_eq!(outcome.run.exit_code, 3);
    let check = &d.checks[0];
    assert_eq!(check.message, "no release: bad constraint");
    // The operator's detail names the column's type, inferred from the typo.
    let [detail] = &outcome.details[..] else { panic!("{:?}", outcome.details) };
    assert_eq!((detail.dataset.as_str(), detail.reason), ("t", Reason::BadConstraint));
    assert!(detail.message.contains("t1.Zip (string)"), "{}", detail.message);
    assert_absent(dir.path(), &["9x12", "(string)", &detail.message]);
    let json: serde_json::Value =
        serde_json::from_str(&bytes(&dir.path().join("out/report.json"))).unwrap();
    assert_eq!(json["datasets"][0]["error"], "bad constraint");
    assert!(!dir.path().join("t.ledger").exists(), "nothing charged");
}

#[tokio::test]
async fn with_a_declared_schema_a_typo_cell_is_unreadable_data_and_nothing_is_charged() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_suite(dir.path(), "schema = \"Zip:int, City:string\"\n");
    std::fs::write(dir.path().join("t.csv"), CLEAN).unwrap();
    let first = audit(&path).await;
    assert_eq!(first.run.datasets[0].status, DatasetStatus::Ran, "{:?}", first.details);
    let ledger = std::fs::read(dir.path().join("t.ledger")).unwrap();

    std::fs::write(dir.path().join("t.csv"), TYPO).unwrap();
    let outcome = audit(&path).await;
    let d = &outcome.run.datasets[0];
    assert_eq!((d.status, d.error), (DatasetStatus::Error, Some(Reason::UnreadableData)));
    assert_eq!(d.checks[0].message, "no release: unreadable data");
    // The engine's words quote the cell; they are the operator's only.
    let [detail] = &outcome.details[..] else { panic!("{:?}", outcome.details) };
    assert_eq!(detail.reason, Reason::UnreadableData);
    assert!(detail.message.contains("9x12"), "{}", detail.message);
    assert_absent(dir.path(), &["9x12", "(string)", &detail.message]);
    assert_eq!(std::fs::read(dir.path().join("t.ledger")).unwrap(), ledger, "nothing charged");
    // Both nights are in the history; the second without a release.
    let history = History::open(&dir.path().join("audit-history.sqlite")).unwrap();
    assert_eq!(history.trends("s").unwrap()[0].points.len(), 1);
}
