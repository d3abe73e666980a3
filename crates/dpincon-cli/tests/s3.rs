//! `run --data s3://…` and audit suites on S3 tables, through the real
//! binary against a real S3-compatible server (moto, see
//! `tests/support/s3_server.rs`): the same seeded report as the local
//! file for a CSV object and a prefix of Parquet objects; each bad input
//! refused with exit 1 (audit: the dataset's fixed reason, exit 3, the
//! other datasets still run), naming the URL, never the secret, nothing
//! charged.

#[path = "../../../tests/support/s3_server.rs"]
mod s3_server;

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use dpincon_engine::{MeasuresReport, NonPrivateReport, Report};
use s3_server::{S3Server, free_port};

/// A → B on 300 rows: groups of A with a few differing B values.
fn table() -> RecordBatch {
    let a: Vec<i64> = (0..300).map(|i| i % 23).collect();
    let b: Vec<String> = (0..300).map(|i| format!("b{}", (i * 7) % 4)).collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new("A", DataType::Int64, true),
        Field::new("B", DataType::Utf8, true),
    ]));
    let columns: Vec<ArrayRef> =
        vec![Arc::new(Int64Array::from(a)), Arc::new(StringArray::from(b))];
    RecordBatch::try_new(schema, columns).unwrap()
}

fn csv(batch: &RecordBatch) -> Vec<u8> {
    let mut out = Vec::new();
    arrow::csv::WriterBuilder::new().with_header(true).build(&mut out).write(batch).unwrap();
    out
}

fn parquet(batch: &RecordBatch, group_rows: usize) -> Vec<u8> {
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(group_rows))
        .build();
    let mut out = Vec::new();
    let mut writer =
        parquet::arrow::ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
    writer.write(batch).unwrap();
    writer.close().unwrap();
    out
}

fn cli(env: &[(&str, String)], args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_dpincon-cli"));
    for (k, v) in env {
        command.env(k, v);
    }
    command.args(args).output().unwrap()
}

/// What two sources of the same rows must agree on: the seeded releases
/// and the exact values.
type Released = (Option<MeasuresReport>, Option<NonPrivateReport>);

/// The seeded, non-private report of `data` (exit 0 required): its
/// releases and exact values.
fn report(env: &[(&str, String)], dir: &Path, data: &str) -> Released {
    let dcs = dir.join("fd.txt");
    let out = cli(
        env,
        &[
            "run",
            "--data",
            data,
            "--constraints",
            dcs.to_str().unwrap(),
            "--epsilon",
            "1",
            "--seed",
            "7",
            "--non-private",
            "--max-rows",
            "1000",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{data}: {}", String::from_utf8_lossy(&out.stderr));
    let report: Report = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report.data, data);
    (report.measures, report.non_private)
}

#[test]
fn run_and_audit_read_s3_tables() {
    let Some(server) = S3Server::start(&["tables"]) else {
        return;
    };
    let env = server.env();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("fd.txt"), "FD: A -> B\n").unwrap();
    let all = table();
    let local = dir.path().join("t.csv");
    std::fs::write(&local, csv(&all)).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        server.put("tables", "t.csv", csv(&all)).await;
        server.put("tables", "t/part-1.parquet", parquet(&all.slice(120, 180), 50)).await;
        server.put("tables", "t/part-0.parquet", parquet(&all.slice(0, 120), 70)).await;
        server.put("tables", "bad.parquet", csv(&all)).await;
    });

    let want = report(&env, dir.path(), local.to_str().unwrap());
    assert!(want.1.as_ref().expect("a --non-private run").edges > 0, "{want:?}");
    assert_eq!(report(&env, dir.path(), "s3://tables/t.csv"), want);
    assert_eq!(report(&env, dir.path(), "s3://tables/t/"), want);

    audit_suite(&env, &server, dir.path());
    bad_input(&server, dir.path());
}

/// Exit 1, the URL and `expect` on stderr, no secret anywhere, nothing
/// written, nothing charged.
fn refused(env: &[(&str, String)], server: &S3Server, dir: &Path, data: &str, expect: &str) {
    let (dcs, out, ledger) = (dir.join("fd.txt"), dir.join("r.json"), dir.join("r.ledger"));
    let args = [
        "run",
        "--data",
        data,
        "--constraints",
        dcs.to_str().unwrap(),
        "--epsilon",
        "1",
        "--output",
        out.to_str().unwrap(),
        "--ledger",
        ledger.to_str().unwrap(),
        "--budget-cap",
        "10",
    ];
    let run = cli(env, &args);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{data}: {stderr}");
    assert!(stderr.contains(&format!("'{data}'")) && stderr.contains(expect), "{stderr}");
    assert!(!stderr.contains(&server.secret_key) && run.stdout.is_empty(), "{stderr}");
    assert!(!out.exists() && !ledger.exists(), "{data}: written or charged");
}

fn bad_input(server: &S3Server, dir: &Path) {
    let env = server.env();
    refused(&env, server, dir, "s3://no-such-bucket/t.csv", "does not exist");
    refused(&env, server, dir, "s3://tables/none.csv", "no such object");
    refused(&env, server, dir, "s3://tables/bad.parquet", "not Parquet");
    let closed = format!("http://127.0.0.1:{}", free_port());
    let mut down = env.clone();
    down.retain(|(k, _)| *k != "AWS_ENDPOINT");
    down.push(("AWS_ENDPOINT", closed.clone()));
    refused(&down, server, dir, "s3://tables/t.csv", &format!("cannot reach {closed}"));
    server.enforce_credentials();
    let mut wrong = env.clone();
    wrong.retain(|(k, _)| *k != "AWS_SECRET_ACCESS_KEY");
    wrong.push(("AWS_SECRET_ACCESS_KEY", "not-the-secret".into()));
    refused(&wrong, server, dir, "s3://tables/t.csv", "access denied");
}

/// A suite of an S3 CSV object, an S3 prefix and a missing object: the
/// first two release, the third fails with the fixed reason (its detail on
/// standard error, the URL and no secret), exit 3, and it charges nothing.
fn audit_suite(env: &[(&str, String)], server: &S3Server, dir: &Path) {
    let dataset = |name: &str, data: &str| {
        format!(
            "[[dataset]]\nname = \"{name}\"\ndata = \"{data}\"\nconstraints = \"fd.txt\"\n\
             epsilon = 1\nmax-rows = 1000\nledger = \"{name}.ledger\"\nbudget-cap = 100\n\
             [[dataset.check]]\nname = \"{name}-pairs\"\nmeasure = \"mi\"\nmax = 100000\n"
        )
    };
    let suite = format!(
        "name = \"s3\"\n{}{}{}",
        dataset("csv", "s3://tables/t.csv"),
        dataset("prefix", "s3://tables/t/"),
        dataset("missing", "s3://tables/missing.csv")
    );
    let path = dir.join("suite.toml");
    std::fs::write(&path, suite).unwrap();
    let out = dir.join("audit");
    let run = cli(
        env,
        &[
            "audit",
            "--suite",
            path.to_str().unwrap(),
            "--seed",
            "1",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let (stdout, stderr) =
        (String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr));
    assert_eq!(run.status.code(), Some(3), "{stdout}{stderr}");
    assert!(stderr.contains("'s3://tables/missing.csv'") && stderr.contains("no such object"));
    let report = std::fs::read_to_string(out.join("report.json")).unwrap();
    assert!(!report.contains(&server.secret_key) && !stdout.contains(&server.secret_key));
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    let datasets = report["datasets"].as_array().unwrap();
    assert_eq!(datasets[0]["data"], "s3://tables/t.csv", "{report}");
    assert_eq!(datasets[1]["data"], "s3://tables/t/", "{report}");
    for d in &datasets[..2] {
        assert!(d["error"].is_null(), "{d}");
    }
    assert_eq!(datasets[2]["error"], "unreadable data", "{report}");
    assert!(dir.join("csv.ledger").exists() && dir.join("prefix.ledger").exists());
    assert!(!dir.join("missing.ledger").exists(), "a failed read charges nothing");
}
