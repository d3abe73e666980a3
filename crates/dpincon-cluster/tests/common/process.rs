//! The processes under test: a coordinator (this crate's binary) and a
//! Ballista scheduler with executors (`dpincon-ballista`'s), each killed
//! and reaped when dropped.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use dpincon_client::{Client, ClientTls, Token};

use super::config::{ALICE, client_tokens, config, path_str, test_config};
use super::observe::client;
use super::pki;

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

/// The process id, for signals.
impl Proc {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// A free loopback port, as `127.0.0.1:PORT`.
pub fn free_port() -> String {
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    probe.local_addr().unwrap().to_string()
}
