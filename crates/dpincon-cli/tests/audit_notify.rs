//! `dpincon-cli audit` with a `[notify]` webhook: a real HTTP server on
//! loopback receives exactly the run's fail, warn and budget-low lines,
//! with no cell, path, engine message or the URL's secret in them, and
//! nothing for a passing suite; a webhook that is down, answers 500 or
//! never answers, or whose variable is unset, is one line on standard
//! error and leaves the exit code and the reports as they were.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::mpsc::{Receiver, channel};

/// What the webhook received: the request line, its Content-Type, its body.
#[derive(Debug)]
struct Request {
    line: String,
    content_type: String,
    body: String,
}

/// An HTTP server on loopback answering every request with `status` and
/// recording it first: when the CLI has exited, every request it sent is
/// in the channel (it waits for the answer), so no test waits for time.
fn webhook(status: &'static str) -> (u16, Receiver<Request>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let mut stream = stream.unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let (mut length, mut content_type) = (0, String::new());
            loop {
                let mut header = String::new();
                reader.read_line(&mut header).unwrap();
                let header = header.trim_end();
                if header.is_empty() {
                    break;
                }
                let (name, value) = header.split_once(':').unwrap();
                match name.to_ascii_lowercase().as_str() {
                    "content-length" => length = value.trim().parse().unwrap(),
                    "content-type" => content_type = value.trim().to_string(),
                    _ => {}
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let body = String::from_utf8(body).unwrap();
            tx.send(Request { line: line.trim_end().into(), content_type, body }).unwrap();
            let answer =
                format!("HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            stream.write_all(answer.as_bytes()).unwrap();
            // Close our side gracefully and read the client's to its end: a
            // socket closed with unread bytes resets, and the client could
            // see the reset before the answer.
            let _ = stream.shutdown(std::net::Shutdown::Write);
            let _ = std::io::copy(&mut reader, &mut std::io::sink());
        }
    });
    (port, rx)
}

/// A loopback port nobody listens on.
fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The secret part of the webhook's URL, as in a Slack webhook.
const TOKEN: &str = "T000/B000/SECRET-hook-token";

/// A → B with one violating group of three rows: I_MI = I_P = 3, released
/// at ε = 1e4 (seeded), so `max = 1` fails and `max = 10` passes. ε per
/// run is 2e4: a cap of 1e5 leaves 4 nights after the first run (budget
/// low), 1e9 leaves plenty. `broken`: a second dataset whose table has a
/// typo cell under a declared int schema (no release: exit 3).
fn suite(dir: &Path, max: u32, cap: f64, notify: &str, broken: bool) -> String {
    std::fs::write(dir.join("t.csv"), "A,B\na,1\na,2\na,3\nb,1\n").unwrap();
    std::fs::write(dir.join("t.dcs"), "FD: A -> B\n").unwrap();
    std::fs::write(dir.join("u.csv"), "Zip,City\n10001,NYC\n9x12,LA\n").unwrap();
    std::fs::write(dir.join("u.dcs"), "FD: Zip -> City\n").unwrap();
    let mut text = format!(
        "name = \"nightly\"\n[notify]\n{notify}\n\
         [[dataset]]\nname = \"t\"\ndata = \"t.csv\"\nconstraints = \"t.dcs\"\n\
         measures = [\"mi\", \"p\"]\nepsilon = 10000\nmax-rows = 10\nledger = \"t.ledger\"\n\
         budget-cap = {cap}\n\
         [[dataset.check]]\nname = \"pairs\"\nmeasure = \"mi\"\nmax = {max}\n\
         [[dataset.check]]\nname = \"rows\"\nmeasure = \"p\"\nmax = {max}\nseverity = \"warn\"\n\
         [[dataset.check]]\nname = \"loose\"\nmeasure = \"mi\"\nmax = 10\n"
    );
    if broken {
        text += "[[dataset]]\nname = \"u\"\ndata = \"u.csv\"\nschema = \"Zip:int, City:string\"\n\
                 constraints = \"u.dcs\"\nepsilon = 1\nmax-rows = 10\nledger = \"u.ledger\"\n\
                 budget-cap = 1000000000\n\
                 [[dataset.check]]\nname = \"zip-pairs\"\nmeasure = \"mi\"\nmax = 1\n";
    }
    let path = dir.join("suite.toml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// `audit --seed 1 --out DIR/out` with `env` set.
fn audit(suite: &str, dir: &Path, env: &[(&str, String)]) -> Output {
    let out = dir.join("out");
    let mut command = Command::new(env!("CARGO_BIN_EXE_dpincon-cli"));
    command.args(["audit", "--suite", suite, "--seed", "1", "--out", out.to_str().unwrap()]);
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

fn report(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("out/report.json")).unwrap()).unwrap()
}

/// The 95% interval report.json gives check `name`.
fn ci95(report: &serde_json::Value, name: &str) -> (i64, i64) {
    let datasets = report["datasets"].as_array().unwrap();
    let check = datasets
        .iter()
        .flat_map(|d| d["checks"].as_array().unwrap())
        .find(|c| c["name"] == name)
        .unwrap();
    (check["ci95"][0].as_i64().unwrap(), check["ci95"][1].as_i64().unwrap())
}

#[test]
fn the_webhook_gets_exactly_the_fail_warn_and_budget_low_lines() {
    let dir = tempfile::tempdir().unwrap();
    let (port, received) = webhook("200 OK");
    let path = suite(dir.path(), 1, 100_000.0, "webhook-env = \"AUDIT_HOOK\"", true);
    let url = format!("http://127.0.0.1:{port}/services/{TOKEN}");
    let out = audit(&path, dir.path(), &[("AUDIT_HOOK", url)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // u has no release: exit 3, its detail (the cell) on standard error.
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("9x12") && !stderr.contains("notify"), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("notify: 3 event(s) sent to the webhook"), "{stdout}");

    let requests: Vec<Request> = received.try_iter().collect();
    assert_eq!(requests.len(), 1, "{requests:?}");
    let request = &requests[0];
    assert_eq!(request.line, format!("POST /services/{TOKEN} HTTP/1.1"));
    assert_eq!(request.content_type, "application/json");
    // Exactly the three lines, from the public report's own intervals.
    let report = report(dir.path());
    let (pairs, rows) = (ci95(&report, "pairs"), ci95(&report, "rows"));
    let expected = serde_json::json!({ "text": format!(
        "[nightly] FAIL dataset t, check pairs (mi): 95% interval [{}, {}] above the threshold 1\n\
         [nightly] WARN dataset t, check rows (p): 95% interval [{}, {}] above the threshold 1\n\
         [nightly] BUDGET-LOW dataset t: ε 80000 left of 100000, 4 nights left (alert below 14)",
        pairs.0, pairs.1, rows.0, rows.1
    )});
    let body: serde_json::Value = serde_json::from_str(&request.body).unwrap();
    assert_eq!(body, expected);
    // No cell, no engine message or reason, no path, no secret.
    let dir_text = dir.path().display().to_string();
    for leak in
        ["9x12", "NYC", "unreadable", "u.csv", "t.csv", "ledger", &dir_text, "SECRET", "AUDIT_HOOK"]
    {
        assert!(!request.body.contains(leak), "{leak} in {}", request.body);
    }
}

#[test]
fn a_passing_suite_sends_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (port, received) = webhook("200 OK");
    let notify = format!("webhook = \"http://127.0.0.1:{port}/hook\"");
    let path = suite(dir.path(), 10, 1e9, &notify, false);
    let out = audit(&path, dir.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("notify"));
    assert_eq!(received.try_iter().count(), 0);
}

/// Each broken webhook: the audit's own exit code (2: `pairs` fails), its
/// reports and history written, and one line on standard error that
/// names neither the URL nor its secret.
#[test]
fn a_broken_webhook_never_changes_the_audit() {
    let (port_500, received_500) = webhook("500 Internal Server Error");
    // Bound and never accepted: the kernel completes the connection, no
    // answer ever comes, and the suite's `timeout` ends the wait.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_port = silent.local_addr().unwrap().port();
    let cases = [
        (format!("webhook = \"http://127.0.0.1:{}/{TOKEN}\"", closed_port()), "cannot connect"),
        (format!("webhook = \"http://127.0.0.1:{port_500}/{TOKEN}\""), "the webhook answered 500"),
        (
            format!("webhook = \"http://127.0.0.1:{silent_port}/{TOKEN}\"\ntimeout = 0.5"),
            "timed out",
        ),
        (
            "webhook-env = \"DPINCON_TEST_UNSET_AUDIT_HOOK\"".into(),
            "the environment variable DPINCON_TEST_UNSET_AUDIT_HOOK is not set",
        ),
    ];
    for (notify, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        let path = suite(dir.path(), 1, 100_000.0, &notify, false);
        let out = audit(&path, dir.path(), &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{notify}: {stderr}");
        let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("notify")).collect();
        assert_eq!(lines.len(), 1, "{notify}: {stderr}");
        assert!(lines[0].starts_with("notify: webhook not sent: "), "{stderr}");
        assert!(lines[0].contains(expected), "{notify}: {stderr}");
        assert!(!stderr.contains("SECRET") && !stderr.contains("127.0.0.1"), "{stderr}");
        assert_eq!(report(dir.path())["exit_code"], 2);
        for file in ["out/junit.xml", "out/report.html", "audit-history.sqlite", "t.ledger"] {
            assert!(dir.path().join(file).exists(), "{file}");
        }
    }
    assert_eq!(received_500.try_iter().count(), 1);
    drop(silent);
}
