//! Test harness: real coordinator, scheduler and executor processes on
//! 127.0.0.1, a generated table, and the embedded run to compare with.

#![allow(dead_code)] // Each test file uses part of the harness.

pub mod pki;

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use dpincon_client::Client;
use dpincon_client::ClientTls;
use dpincon_client::Token;
use dpincon_engine::{DataFormat, JobConfig, NoProgress, Report};
use dpincon_graph::edge_stream_fingerprint;

// The report's key paths, as `dpincon-engine` pins them.
#[path = "../../../dpincon-engine/tests/support/report_keys.rs"]
mod report_keys;

/// Client tokens (`alice` and `bob` in the coordinator's token file).
pub const ALICE: &str = "alice-token-7d0e9b2a";
pub const BOB: &str = "bob-token-51c3aa08ff";
/// The dataset every test cluster registers.
pub const DATASET: &str = "table";
/// The declared schema of `write_table`'s table.
pub const SCHEMA: &str =
    "ID:int,SSN:string,Zip:int,City:string,State:string,Salary:int,Rate:float,Age:int,Tenure:int";

/// A child process killed (SIGKILL) and reaped when dropped.
pub struct Proc {
    child: Child,
    /// The address it printed (`listening on ADDR`).
    pub addr: String,
    /// Its standard error.
    pub log: PathBuf,
}

/// A process that did not say it listens: what it printed instead, and
/// its standard error.
#[derive(Debug, thiserror::Error)]
#[error("{bin} did not start: {line:?}\n{log}")]
pub struct NotStarted {
    /// The binary.
    pub bin: String,
    /// Its first line of output (empty if none came within a minute).
    pub line: String,
    /// Its standard error.
    pub log: String,
}

impl Proc {
    /// Starts `bin` with `args`; waits (bounded) for the first line of its
    /// output, its readiness signal.
    pub fn start(bin: &str, args: &[&str], log: PathBuf) -> Proc {
        Proc::try_start(bin, args, log).unwrap_or_else(|why| panic!("{why}"))
    }

    /// [`Proc::start`], or why the process did not start (its log).
    pub fn try_start(bin: &str, args: &[&str], log: PathBuf) -> Result<Proc, NotStarted> {
        Proc::try_start_env(bin, args, &[], log)
    }

    /// [`Proc::try_start`] with `env` set in its environment.
    pub fn try_start_env(
        bin: &str,
        args: &[&str],
        env: &[(&str, &str)],
        log: PathBuf,
    ) -> Result<Proc, NotStarted> {
        let mut child = Command::new(bin)
            .args(args)
            .envs(env.iter().copied())
            .env_remove("DPINCON_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(File::create(&log).expect("log file"))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {bin}: {e}"));
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let first = lines.next().and_then(Result::ok).unwrap_or_default();
            let _ = tx.send(first);
            // Keep draining so the child never blocks on a full pipe.
            for _ in lines {}
        });
        let mut proc = Proc { child, addr: String::new(), log };
        let line = rx.recv_timeout(Duration::from_secs(60)).unwrap_or_default();
        let Some(addr) = line.strip_prefix("listening on ") else {
            let _ = proc.child.wait();
            return Err(NotStarted { bin: bin.into(), line, log: proc.logs() });
        };
        proc.addr = addr.trim().to_string();
        Ok(proc)
    }

    /// `http://ADDR`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The port it listens on.
    pub fn port(&self) -> &str {
        self.addr.rsplit(':').next().expect("addr has a port")
    }

    /// SIGKILL now.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Its standard error so far.
    pub fn logs(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The coordinator under test (this crate's binary).
pub const COORDINATOR: &str = env!("CARGO_BIN_EXE_dpincon-coordinator");

/// `dpincon-ballista`'s process binary `name`, built beside the
/// coordinator: `cargo test --workspace` builds it (that crate has
/// integration tests); `cargo test -p dpincon-cluster` alone does not, so
/// say how. Cargo gives `CARGO_BIN_EXE_*` for a crate's own binaries only.
fn ballista_binary(name: &str) -> String {
    let path = PathBuf::from(COORDINATOR).with_file_name(name);
    assert!(
        path.exists(),
        "{name} is not built: run `cargo build -p dpincon-ballista --bins --features \
         failpoints` first (`cargo test --workspace` builds it)"
    );
    path.to_string_lossy().into_owned()
}

/// The scheduler binary (`dpincon-ballista`'s).
pub fn scheduler_binary() -> String {
    ballista_binary("dpincon-scheduler")
}

/// The executor binary (`dpincon-ballista`'s).
pub fn executor_binary() -> String {
    ballista_binary("dpincon-executor")
}

/// The CLI binary, built beside the cluster binaries by `cargo test --workspace`.
pub fn cli_binary() -> Option<PathBuf> {
    let path = PathBuf::from(COORDINATOR).with_file_name("dpincon-cli");
    path.exists().then_some(path)
}

/// Runs the CLI with `args` as the client holding `token`.
pub fn cli(bin: &Path, args: &[&str], token: &str) -> Output {
    Command::new(bin).args(args).env("DPINCON_TOKEN", token).output().unwrap()
}

/// An executor argument that is not one: arms the `detect-task` failpoint
/// in the executors' environment, so that each detection task waits `ms`
/// first and a test can act while a job runs. Needs executors built with
/// failpoints (checked at start).
pub fn task_delay(ms: u64) -> String {
    format!("{}=detect-task=sleep({ms})", dpincon_failpoint::ENV)
}

/// A scheduler and its executors (a Ballista cluster of our binaries).
pub struct Ballista {
    pub scheduler: Proc,
    pub executors: Vec<Proc>,
    /// The scheduler's URL (https with cluster TLS).
    pub url: String,
}

impl Ballista {
    /// A scheduler noticing a silent executor within 5 s, and `executors`
    /// executors of two slots each (heartbeat every second), started with
    /// `executor_args` (a [`task_delay`] among them goes to their
    /// environment); logs in `dir`, named after `tag`.
    pub fn start(dir: &Path, tag: &str, executors: usize, executor_args: &[&str]) -> Ballista {
        Ballista::start_secured(dir, tag, executors, executor_args, &["--insecure-plaintext"])
    }

    /// [`Ballista::start`] with `security` arguments (the cluster's TLS
    /// credentials, or `--insecure-plaintext`) for every process; with
    /// `--cluster-ca`, the scheduler's URL is https. A certificate of
    /// [`pki::OWN_ROLE`] is each process's own role's ([`pki::for_role`]).
    pub fn start_secured(
        dir: &Path,
        tag: &str,
        executors: usize,
        executor_args: &[&str],
        security: &[&str],
    ) -> Ballista {
        let mut args = vec![
            "--listen",
            "127.0.0.1:0",
            "--executor-timeout-secs",
            "5",
            // Longer than any test: a job's files must go because it
            // deletes them, not because the scheduler's retention ran out.
            "--result-retention-secs",
            "3600",
        ];
        let scheduler_security = pki::for_role(security, "scheduler");
        args.extend(pki::strs(&scheduler_security));
        let scheduler =
            Proc::start(&scheduler_binary(), &args, dir.join(format!("{tag}-scheduler.log")));
        let executor_security = pki::for_role(security, "executor");
        let scheme = if security.contains(&"--cluster-ca") { "https" } else { "http" };
        let failpoint = format!("{}=", dpincon_failpoint::ENV);
        let (env, executor_args): (Vec<&str>, Vec<&str>) =
            executor_args.iter().partition(|a| a.starts_with(&failpoint));
        let env: Vec<(&str, &str)> = env.iter().filter_map(|e| e.split_once('=')).collect();
        let url = format!("{scheme}://{}", scheduler.addr);
        let executors = (0..executors)
            .map(|i| {
                let mut args = vec![
                    "--scheduler",
                    url.as_str(),
                    "--listen",
                    "127.0.0.1:0",
                    "--slots",
                    "2",
                    "--heartbeat-secs",
                    "1",
                ];
                // Plans may scan the test's tables only (issue 27).
                args.extend_from_slice(&["--allow-tables", path_str(dir)]);
                let work = work_dir(dir, tag, i);
                std::fs::create_dir_all(&work).unwrap();
                args.extend_from_slice(&["--work-dir", leak(work)]);
                args.extend_from_slice(&executor_args);
                args.extend(pki::strs(&executor_security));
                let log = dir.join(format!("{tag}-executor{i}.log"));
                let executor = Proc::try_start_env(&executor_binary(), &args, &env, log)
                    .unwrap_or_else(|why| panic!("{why}"));
                // A binary with failpoints says which are armed before it listens.
                assert!(
                    env.is_empty() || executor.logs().contains("dpincon failpoints armed"),
                    "the executor has no failpoints: run `cargo build -p dpincon-ballista \
                     --bins --features failpoints`"
                );
                executor
            })
            .collect();
        Ballista { scheduler, executors, url }
    }

    /// `--scheduler URL` for a coordinator.
    pub fn coordinator_args(&self) -> [String; 2] {
        ["--scheduler".into(), self.url.clone()]
    }

    /// Every process's log.
    pub fn logs(&self) -> String {
        let mut out = format!("--- scheduler\n{}", self.scheduler.logs());
        for (i, e) in self.executors.iter().enumerate() {
            out += &format!("--- executor {i}\n{}", e.logs());
        }
        out
    }
}

/// Executor `i`'s work directory (shuffle files) in a cluster tagged `tag`.
pub fn work_dir(dir: &Path, tag: &str, i: usize) -> PathBuf {
    dir.join(format!("{tag}-executor{i}-work"))
}

/// A `&'static str` of a path, for argument lists (tests only).
fn leak(path: PathBuf) -> &'static str {
    Box::leak(path.display().to_string().into_boxed_str())
}

/// Every file under `dir`, recursively.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() { stack.push(path) } else { out.push(path) }
        }
    }
    out
}

/// A coordinator with its Ballista cluster.
pub struct Cluster {
    pub ballista: Ballista,
    pub coordinator: Proc,
    pub dir: PathBuf,
    /// How clients reach the coordinator over TLS ([`Cluster::start_tls`]).
    pub client_tls: Option<ClientTls>,
}

impl Cluster {
    /// A scheduler and `executors` executors started with
    /// `executor_args`, then a coordinator using them, started with
    /// `coordinator_args` and the configuration [`config`]`(dir, "main")`.
    pub fn start(
        dir: &Path,
        executors: usize,
        executor_args: &[&str],
        coordinator_args: &[&str],
    ) -> Self {
        Cluster::start_with(dir, &config(dir, "main"), executors, executor_args, coordinator_args)
    }

    /// [`Cluster::start`] with the coordinator configuration `config`.
    pub fn start_with(
        dir: &Path,
        config: &Path,
        executors: usize,
        executor_args: &[&str],
        coordinator_args: &[&str],
    ) -> Self {
        let ballista = Ballista::start(dir, "main", executors, executor_args);
        let mut args = vec!["--config", path_str(config)];
        args.extend_from_slice(coordinator_args);
        let scheduler = ballista.coordinator_args();
        let scheduler: Vec<&str> = scheduler.iter().map(String::as_str).collect();
        let coordinator = coordinator(dir, &scheduler, &args);
        Cluster { ballista, coordinator, dir: dir.to_path_buf(), client_tls: None }
    }

    /// [`Cluster::start_with`] as in production: mutual TLS from one CA
    /// ([`pki::write_pki`] in `dir`) on every hop of the cluster, and TLS
    /// between clients and the coordinator.
    pub fn start_tls(dir: &Path, config: &Path, executors: usize, executor_args: &[&str]) -> Self {
        pki::write_pki(dir);
        // Each Ballista process presents its own role's certificate.
        let own = pki::cluster_args(dir, pki::OWN_ROLE);
        let ballista =
            Ballista::start_secured(dir, "main", executors, executor_args, &pki::strs(&own));
        let (cert, key) = (pki::path(dir, "server.pem"), pki::path(dir, "server.key"));
        let mut args = vec!["--config", path_str(config), "--tls-cert", &cert, "--tls-key", &key];
        let cluster = pki::cluster_args(dir, "coordinator");
        args.extend(pki::strs(&cluster));
        let coordinator = coordinator(dir, &["--scheduler", &ballista.url], &args);
        let client_tls = ClientTls::load(Some(&dir.join("ca.pem")), Some("localhost".into()))
            .expect("the test CA loads");
        Cluster { ballista, coordinator, dir: dir.to_path_buf(), client_tls }
    }

    /// [`Cluster::start`] on a test dataset ([`test_config`]).
    pub fn start_test(
        dir: &Path,
        executors: usize,
        executor_args: &[&str],
        coordinator_args: &[&str],
    ) -> Self {
        let config = test_config(dir, "main");
        Cluster::start_with(dir, &config, executors, executor_args, coordinator_args)
    }

    /// A client of the coordinator: alice.
    pub fn client(&self) -> Client {
        match &self.client_tls {
            Some(tls) => {
                let url = format!("https://{}", self.coordinator.addr);
                Client::new(&url, &Token::new(ALICE).unwrap(), Some(tls)).unwrap()
            }
            None => client(&self.coordinator, ALICE),
        }
    }

    /// Every process's log, for failure messages.
    pub fn logs(&self) -> String {
        format!("--- coordinator\n{}{}", self.coordinator.logs(), self.ballista.logs())
    }
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temporary paths")
}

/// Writes the client token file (alice, bob) in `dir`; returns its path.
pub fn client_tokens(dir: &Path) -> PathBuf {
    let path = dir.join("clients.txt");
    std::fs::write(&path, format!("# test clients\nalice {ALICE}\nbob {BOB}\n")).unwrap();
    path
}

/// Writes a coordinator configuration registering `dir/table.csv` as
/// [`DATASET`] (cap 1000, 100 per job), with its state and ledger under
/// `dir/tag/`, and `extra` appended; returns its path. The dataset accepts
/// the deadline channel (no max-edges): tests that bound work say so.
pub fn config_with(dir: &Path, tag: &str, dataset: &str, extra: &str) -> PathBuf {
    let root = dir.join(tag);
    std::fs::create_dir_all(root.join("ledgers")).unwrap();
    let text = format!(
        "state-dir = {state:?}\n{extra}\n[datasets.{DATASET}]\ndata = {data:?}\n\
         schema = {SCHEMA:?}\nledger = {ledger:?}\naccept-deadline-channel = true\n{dataset}\n",
        state = path_str(&root.join("state")),
        data = path_str(&dir.join("table.csv")),
        ledger = path_str(&ledger_path(dir, tag)),
    );
    let path = root.join("coordinator.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Dataset keys of the harness's tests that are not about timing: results
/// show when jobs end (the operator accepts the timing channel).
pub const WHEN_DONE: &str = "release = \"when-done\"\naccept-timing-channel = true\n";
/// Dataset keys of a test dataset: also non-private jobs and seeds.
pub const TEST_DATASET: &str =
    "release = \"when-done\"\naccept-timing-channel = true\nallow-non-private = true\n";

/// [`config_with`] with a cap of 1000 and 100 per job: a private dataset
/// whose results show when jobs end ([`WHEN_DONE`]).
pub fn config(dir: &Path, tag: &str) -> PathBuf {
    config_with(dir, tag, &format!("budget-cap = 1000.0\nmax-job-epsilon = 100.0\n{WHEN_DONE}"), "")
}

/// [`config`] for a test dataset ([`TEST_DATASET`]): seeds and exact values.
pub fn test_config(dir: &Path, tag: &str) -> PathBuf {
    config_with(
        dir,
        tag,
        &format!("budget-cap = 1000.0\nmax-job-epsilon = 100.0\n{TEST_DATASET}"),
        "",
    )
}

/// The ledger of [`config`]`(dir, tag)`.
pub fn ledger_path(dir: &Path, tag: &str) -> PathBuf {
    dir.join(tag).join("ledgers").join("table.jsonl")
}

/// ε charged in a ledger file (0 when it does not exist), and its records.
pub fn ledger_charges(path: &Path) -> (f64, Vec<serde_json::Value>) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|l| l.get("job").is_some())
        .collect();
    // Charges, less what gated nights' holds gave back.
    let spent = records
        .iter()
        .map(|r| r["epsilon"].as_f64().unwrap_or(0.0) - r["returned"].as_f64().unwrap_or(0.0))
        .sum();
    (spent, records)
}

/// A coordinator started with `scheduler` arguments and `extra` (which
/// must include `--config`); clients from [`client_tokens`].
pub fn coordinator(dir: &Path, scheduler: &[&str], extra: &[&str]) -> Proc {
    try_coordinator(dir, scheduler, extra).unwrap_or_else(|why| panic!("{why}"))
}

/// [`coordinator`], or why it did not start.
pub fn try_coordinator(dir: &Path, scheduler: &[&str], extra: &[&str]) -> Result<Proc, NotStarted> {
    try_coordinator_env(dir, scheduler, extra, &[])
}

/// [`try_coordinator`] with `env` in the coordinator's environment (and
/// so its job processes'), e.g. a failpoint.
pub fn try_coordinator_env(
    dir: &Path,
    scheduler: &[&str],
    extra: &[&str],
    env: &[(&str, &str)],
) -> Result<Proc, NotStarted> {
    let tokens = client_tokens(dir);
    let mut args = vec!["--listen", "127.0.0.1:0", "--client-tokens", path_str(&tokens)];
    args.extend_from_slice(scheduler);
    args.extend_from_slice(extra);
    // Tests of TLS bring their credentials; the others run without.
    if !extra.iter().any(|a| a.starts_with("--cluster-ca") || a.starts_with("--tls-cert")) {
        args.push("--insecure-plaintext");
    }
    let n = std::fs::read_dir(dir).map_or(0, |d| d.count());
    Proc::try_start_env(COORDINATOR, &args, env, dir.join(format!("coordinator{n}.log")))
}

/// A client job on [`DATASET`] with the constraints of `write_table`
/// (read from `constraints`) and the keys of `extra` (a JSON object).
pub fn job(constraints: &Path, extra: serde_json::Value) -> serde_json::Value {
    let mut job = serde_json::json!({
        "dataset": DATASET,
        "constraints": std::fs::read_to_string(constraints).unwrap(),
    });
    for (k, v) in extra.as_object().expect("an object") {
        job[k] = v.clone();
    }
    job
}

/// The embedded job equal to a cluster job on [`DATASET`]: the declared
/// schema, and the client's release options.
pub fn embedded_job(data: &Path, constraints: &Path, client: &serde_json::Value) -> JobConfig {
    let mut job = JobConfig::new(data, constraints);
    job.table.format = Some(DataFormat::Csv);
    job.table.schema = Some(SCHEMA.parse().unwrap());
    job.table.infer_rows = Some(1);
    // The client's keys, read as the coordinator reads them.
    job.release = serde_json::from_value(client.clone()).expect("release options");
    job.test = serde_json::from_value(client.clone()).expect("test options");
    job
}

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

/// The process id, for signals.
impl Proc {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// A deterministic pseudo-random generator (tests need no rand crate).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Writes a table of `rows` rows with FD, key, two-inequality (with and
/// without equality) conflicts and some NULLs, and its constraints.
/// Returns (data, constraints).
pub fn write_table(dir: &Path, rows: usize) -> (PathBuf, PathBuf) {
    let mut rng = Lcg(20240611);
    let states = ["AL", "AK", "AZ", "CA", "CO", "NY", "TX", "WA", "OR", "NV"];
    let mut csv = String::from("ID,SSN,Zip,City,State,Salary,Rate,Age,Tenure\n");
    for id in 0..rows {
        let zip = rng.below(300);
        // City follows Zip, with typos (FD violations) and NULLs.
        let city = match rng.below(100) {
            0 => String::new(),
            1..=3 => format!("City{}x", zip),
            _ => format!("City{zip}"),
        };
        // SSN mostly unique; some repeat (key violations).
        let ssn = if rng.below(100) < 2 { rng.below(40) } else { 1000 + id as u64 };
        let state = states[(zip % 10) as usize];
        let salary = 20_000 + rng.below(100_000);
        // Rate grows with Salary except in a few rows (two-inequality DC).
        let rate = if rng.below(100) < 3 {
            format!("{:.2}", (salary as f64) / 10_000.0 - 1.0 - rng.below(300) as f64 / 100.0)
        } else {
            format!("{:.2}", (salary as f64) / 10_000.0)
        };
        let salary = if rng.below(100) == 0 { String::new() } else { salary.to_string() };
        // Tenure grows with Age except in a few rows (no equality at all).
        let age = 18 + rng.below(50);
        let tenure = if rng.below(200) == 0 { age + rng.below(20) } else { age / 3 };
        csv += &format!(
            "{id},{:03}-{:02}-{:04},{zip},{city},{state},{salary},{rate},{age},{tenure}\n",
            ssn % 1000,
            ssn / 1000 % 100,
            ssn / 100_000
        );
    }
    let data = dir.join("table.csv");
    std::fs::write(&data, csv).unwrap();
    let constraints = dir.join("table.dcs");
    std::fs::write(
        &constraints,
        "FD: Zip -> City\n\
         not(t1.SSN=t2.SSN)\n\
         not(t1.State=t2.State & t1.Salary>t2.Salary & t1.Rate<t2.Rate)\n\
         not(t1.Age<t2.Age & t1.Tenure>t2.Tenure)\n",
    )
    .unwrap();
    (data, constraints)
}

/// The embedded run's report, written and read back as a remote one
/// arrives ([`report`]), and its edge-stream fingerprint.
pub async fn embedded(job: &JobConfig) -> (Report, String) {
    let ran = dpincon_engine::run_job(job, &NoProgress).await.expect("embedded run");
    let loaded = dpincon_engine::load(job, &NoProgress).await.expect("embedded load");
    let fingerprint = edge_stream_fingerprint(loaded.graph.edges()).to_string();
    (report(&serde_json::to_string(&ran).unwrap()), fingerprint)
}

/// A report's text read as the typed [`Report`] (a missing required field
/// fails here), through `serde_json::Value` on every side: serde_json's
/// default float parsing may miss the last bit, the same way on both. A
/// field renamed on both sides (one struct writes both) reads back alike,
/// so every key path must also be one `dpincon-engine` pins
/// (`tests/report_keys.txt`, kept by its `tests/report.rs`).
pub fn report(text: &str) -> Report {
    let json: serde_json::Value = serde_json::from_str(text).expect("report JSON");
    let paths = report_keys::key_paths(&json);
    let pinned =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../dpincon-engine/tests/report_keys.txt");
    let pinned = std::fs::read_to_string(pinned).unwrap();
    let pinned: std::collections::BTreeSet<&str> = pinned.lines().collect();
    let unknown: Vec<&String> = paths.iter().filter(|p| !pinned.contains(p.as_str())).collect();
    assert!(unknown.is_empty(), "report keys not pinned by dpincon-engine: {unknown:?}");
    serde_json::from_value(json).unwrap_or_else(|e| panic!("not a report ({e}): {text}"))
}

/// What must agree between runs: all but the job id, the ledger, timings,
/// paths and the thread count.
pub fn comparable(report: &Report) -> Report {
    let mut report = report.clone();
    report.job_id.clear();
    report.data.clear();
    report.constraints.clear();
    report.detection.threads = 0;
    report.timings = None;
    if let Some(budget) = report.budget.as_mut() {
        budget.ledger = None;
    }
    // The exact I_R needs the whole adjacency: skipped under --memory-limit.
    if let Some(exact) = report.non_private.as_mut() {
        exact.repair = None;
    }
    report
}

/// The report's exact values (a non-private job's).
pub fn exact(report: &Report) -> &dpincon_engine::NonPrivateReport {
    report.non_private.as_ref().expect("a non-private report")
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

/// A dataset table for `[datasets.NAME]` on `data`, fixed-time with
/// `deadline`, its ledger in `dir/main/ledgers/NAME.jsonl`; it accepts the
/// deadline channel unless given max-edges.
pub fn fixed_dataset(
    dir: &std::path::Path,
    name: &str,
    data: &std::path::Path,
    deadline: &str,
) -> String {
    format!(
        "[datasets.{name}]\ndata = {:?}\nschema = {:?}\nledger = {:?}\nbudget-cap = 100.0\n\
         max-job-epsilon = 10.0\njob-deadline = {deadline:?}\naccept-deadline-channel = true\n",
        data.to_str().unwrap(),
        SCHEMA,
        dir.join("main").join("ledgers").join(format!("{name}.jsonl")).to_str().unwrap(),
    )
}

/// A free loopback port, as `127.0.0.1:PORT`.
pub fn free_port() -> String {
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    probe.local_addr().unwrap().to_string()
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
