//! What a client observes: jobs watched with bounded waits, the
//! coordinator's log, and its HTTP endpoints.

use std::time::Duration;

use dpincon_client::{Client, Token};

use super::process::Proc;

pub fn client(coordinator: &Proc, token: &str) -> Client {
    Client::new(&coordinator.url(), &Token::new(token).unwrap(), None).unwrap()
}

/// Awaits `f`, failing the test if it takes more than five minutes (a
/// hung coordinator must not hang the test run).
pub async fn within<T>(f: impl std::future::Future<Output = T>) -> T {
    // Measurement runs (hundreds of queued jobs) raise it.
    let secs = std::env::var("DPINCON_WITHIN_S").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
    tokio::time::timeout(Duration::from_secs(secs), f)
        .await
        .unwrap_or_else(|_| panic!("no answer within {secs} s"))
}

/// Waits (bounded) until `proc`'s log contains `needle`: the coordinator
/// logs `job ID: started` when a job's process starts, which a private
/// client cannot see.
pub async fn wait_for_log(proc: &Proc, needle: &str) {
    within(async {
        while !proc.logs().contains(needle) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
}

/// Watches a non-private job (whose client sees `running`), signalling
/// when it runs; the watcher resolves with its last status.
pub fn watch_until_running(
    c: &Client,
    id: &str,
) -> (
    tokio::sync::oneshot::Receiver<()>,
    tokio::task::JoinHandle<Result<dpincon_proto::v1::JobStatus, dpincon_client::ClientError>>,
) {
    let (running_tx, running) = tokio::sync::oneshot::channel();
    let (c, id) = (c.clone(), id.to_string());
    let watcher = tokio::spawn(async move {
        let mut running_tx = Some(running_tx);
        c.watch(&id, |s| {
            if s.state == dpincon_proto::v1::JobState::Running as i32
                && let Some(tx) = running_tx.take()
            {
                let _ = tx.send(());
            }
        })
        .await
    });
    (running, watcher)
}

/// Unix milliseconds now.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64
}

/// The whole HTTP response to `GET path` at `addr` (bounded wait).
pub async fn http_get(addr: &str, path: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    within(async {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        // Read to the end: the server closes the connection after its answer.
        let request = format!("GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut out = String::new();
        stream.read_to_string(&mut out).await.unwrap();
        out
    })
    .await
}

/// `GET /metrics` at `addr`, read as Prometheus's text format: a 200 in
/// its content type, every sample `NAME{LABELS} VALUE` of a family with
/// a `# TYPE` line, none twice. Each sample's value by `NAME{LABELS}`.
pub async fn scrape_metrics(addr: &str) -> std::collections::HashMap<String, f64> {
    let response = http_get(addr, "/metrics").await;
    let (head, body) = response.split_once("\r\n\r\n").expect("an HTTP response");
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    let head = head.to_ascii_lowercase();
    assert!(head.contains("content-type: text/plain; version=0.0.4"), "{head}");
    let mut typed = std::collections::HashSet::new();
    let mut values = std::collections::HashMap::new();
    for line in body.lines() {
        if let Some(declared) = line.strip_prefix("# TYPE ") {
            typed.insert(declared.split(' ').next().unwrap().to_string());
            continue;
        }
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("{line}"));
        let name = series.split('{').next().unwrap();
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|suffix| name.strip_suffix(suffix).filter(|f| typed.contains(*f)))
            .unwrap_or(name);
        assert!(typed.contains(family), "{line}: no # TYPE for {family}");
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("{line}: not a number"));
        assert!(values.insert(series.to_string(), value).is_none(), "{line}: twice");
    }
    values
}

/// What a client observes of a job: each status with its arrival time.
pub async fn observe(
    c: &dpincon_client::Client,
    id: &str,
) -> Vec<(u64, dpincon_proto::v1::JobStatus)> {
    let mut seen = Vec::new();
    let _ = within(c.watch(id, |s| seen.push((now_ms(), s.clone())))).await;
    seen
}
