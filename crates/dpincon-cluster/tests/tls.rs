//! TLS everywhere (issue 27): clients reach the coordinator over TLS, and
//! the cluster's own hops (coordinator → scheduler, executors → scheduler,
//! shuffle and result fetches from the executors' Flight servers) over
//! mutual TLS from one cluster CA. Real processes on loopback; peers
//! without a certificate from that CA are refused before any plan runs or
//! any file is read. Each role has its own certificate name (issue 47): a
//! certificate of another role cannot serve as the scheduler, and the
//! listeners admit executors' and the coordinator's certificates only.

mod common;

use std::path::{Path, PathBuf};

use arrow_flight::Ticket;
use arrow_flight::flight_service_client::FlightServiceClient;
use ballista_core::serde::protobuf::GetJobStatusParams;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use common::pki::{CLUSTER_NAME, OWN_ROLE, cluster_args, path, role_name, strs, write_pki};
use common::{
    ALICE, Ballista, Proc, comparable, embedded, embedded_job, job, test_config, write_table,
};
use dpincon_ballista::JobProgress;
use dpincon_ballista::tls::{ClusterTls, ClusterTlsFiles, Role};
use dpincon_client::Client;
use dpincon_client::ClientTls;
use dpincon_client::Token;
use serde_json::json;
use tonic::Code;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};

/// A channel to `addr`, where a process of role `server` listens: plain,
/// or TLS trusting `ca_dir`'s CA, expecting `server`'s name and presenting
/// `identity`'s certificate from `identity_dir`.
fn channel(addr: &str, server: &str, tls: Option<(&Path, Option<(&Path, &str)>)>) -> Channel {
    let Some((ca_dir, identity)) = tls else {
        return Endpoint::from_shared(format!("http://{addr}")).unwrap().connect_lazy();
    };
    let mut config = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(std::fs::read(ca_dir.join("ca.pem")).unwrap()))
        .domain_name(role_name(server));
    if let Some((dir, role)) = identity {
        let cert = std::fs::read(dir.join(format!("{role}.pem"))).unwrap();
        let key = std::fs::read(dir.join(format!("{role}.key"))).unwrap();
        config = config.identity(Identity::from_pem(cert, key));
    }
    Endpoint::from_shared(format!("https://{addr}"))
        .unwrap()
        .tls_config(config)
        .unwrap()
        .connect_lazy()
}

async fn scheduler_call(channel: Channel) -> Result<(), tonic::Status> {
    let params = GetJobStatusParams { job_id: "no-such-job".into() };
    SchedulerGrpcClient::new(channel).get_job_status(params).await.map(drop)
}

async fn flight_call(channel: Channel) -> Result<(), tonic::Status> {
    // Not a real partition: a peer the server lets in gets the service's
    // own answer, one it does not gets no further than the handshake.
    let ticket = Ticket { ticket: b"not a ticket".to_vec().into() };
    FlightServiceClient::new(channel).do_get(ticket).await.map(drop)
}

/// Whether a call failed in the transport (handshake, or HTTP/2 framing of
/// a plaintext peer), never reaching the service.
fn at_transport(status: &tonic::Status) -> bool {
    use std::error::Error as _;
    status.code() == Code::Unavailable
        || status.source().is_some_and(|e| e.downcast_ref::<tonic::transport::Error>().is_some())
}

/// A refusal at the transport: the call never reached the service.
fn refused(outcome: Result<(), tonic::Status>, what: &str) {
    match outcome {
        Err(status) if at_transport(&status) => {}
        other => panic!("{what}: expected a refused connection, got {other:?}"),
    }
}

/// A refusal of the client's role: past the handshake (a certificate from
/// the cluster CA), refused before the service.
fn denied(outcome: Result<(), tonic::Status>, what: &str) {
    match outcome {
        Err(status) if status.code() == Code::PermissionDenied => {}
        other => panic!("{what}: expected PERMISSION_DENIED, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_cluster_runs_over_mutual_tls_and_refuses_every_peer_without_its_ca() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_pki(d);
    let other = tempfile::tempdir().unwrap();
    write_pki(other.path());
    let (data, constraints) = write_table(d, 1000);

    // Each process its own role's certificate.
    let own = cluster_args(d, OWN_ROLE);
    let ballista = Ballista::start_secured(d, "tls", 2, &[], &strs(&own));
    let config = test_config(d, "main");
    let tokens = common::client_tokens(d);
    let (cert, key) = (path(d, "server.pem"), path(d, "server.key"));
    let mut args = vec![
        "--listen",
        "127.0.0.1:0",
        "--scheduler",
        &ballista.url,
        "--config",
        config.to_str().unwrap(),
        "--client-tokens",
        tokens.to_str().unwrap(),
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
    ];
    let coordinator_cluster = cluster_args(d, "coordinator");
    args.extend(strs(&coordinator_cluster));
    let coordinator = Proc::start(common::COORDINATOR, &args, d.join("tls-coord.log"));

    // The same result and edge stream as the embedded run, over TLS.
    let token = Token::new(ALICE).unwrap();
    let tls = ClientTls::load(Some(&d.join("ca.pem")), Some("localhost".into())).unwrap();
    let url = format!("https://{}", coordinator.addr);
    let client = Client::new(&url, &token, tls.as_ref()).unwrap();
    let remote = job(&constraints, json!({"epsilon": 1.0, "seed": 5, "non-private": true}));
    let (want, want_fp) = embedded(&embedded_job(&data, &constraints, &remote)).await;
    let id = client.submit(&remote).await.unwrap();
    let got = client
        .wait(&id, |_| {})
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}\n{}", coordinator.logs(), ballista.logs()));
    assert_eq!(comparable(&common::report(&got)), comparable(&want));
    assert_eq!(client.status(&id).await.unwrap().edge_fingerprint, want_fp);

    // Clients of the coordinator: plain HTTP/2, or TLS without its CA, get nowhere.
    let plain = Client::new(&format!("http://{}", coordinator.addr), &token, None).unwrap();
    assert!(plain.status(&id).await.is_err());
    let wrong_ca =
        ClientTls::load(Some(&other.path().join("ca.pem")), Some("localhost".into())).unwrap();
    assert!(Client::new(&url, &token, wrong_ca.as_ref()).unwrap().status(&id).await.is_err());

    // The scheduler: the coordinator's and an executor's certificates get
    // an answer; the scheduler's own role is not a client of it; a plain
    // client, a client without a certificate, one from another CA, and one
    // expecting another role's name there do not get past the handshake.
    let scheduler = ballista.scheduler.addr.as_str();
    for role in ["coordinator", "executor"] {
        scheduler_call(channel(scheduler, "scheduler", Some((d, Some((d, role))))))
            .await
            .unwrap_or_else(|e| panic!("the {role} reaches the scheduler: {e:?}"));
    }
    denied(
        scheduler_call(channel(scheduler, "scheduler", Some((d, Some((d, "scheduler")))))).await,
        "a scheduler's certificate calling the scheduler",
    );
    let plain = channel(scheduler, "scheduler", None);
    refused(scheduler_call(plain).await, "plain gRPC to the scheduler");
    let anonymous = channel(scheduler, "scheduler", Some((d, None)));
    refused(scheduler_call(anonymous).await, "no client certificate");
    refused(
        scheduler_call(channel(
            scheduler,
            "scheduler",
            Some((d, Some((other.path(), "executor")))),
        ))
        .await,
        "a certificate from another CA",
    );
    refused(
        scheduler_call(channel(scheduler, "executor", Some((d, Some((d, "coordinator")))))).await,
        "the scheduler where an executor was expected",
    );

    // An executor's Flight port (shuffle partitions): the same, for
    // executors and the coordinator.
    for executor in &ballista.executors {
        let addr = executor.addr.as_str();
        for role in ["coordinator", "executor"] {
            let admitted = flight_call(channel(addr, "executor", Some((d, Some((d, role)))))).await;
            assert!(
                !matches!(&admitted, Err(s) if at_transport(s) || s.code() == Code::PermissionDenied),
                "the {role} reaches the Flight service: {admitted:?}"
            );
        }
        denied(
            flight_call(channel(addr, "executor", Some((d, Some((d, "scheduler")))))).await,
            "Flight do_get with the scheduler's certificate",
        );
        refused(flight_call(channel(addr, "executor", None)).await, "plain Flight do_get");
        refused(
            flight_call(channel(addr, "executor", Some((d, Some((other.path(), "executor"))))))
                .await,
            "Flight do_get with another CA's certificate",
        );
        refused(
            flight_call(channel(addr, "scheduler", Some((d, Some((d, "coordinator")))))).await,
            "an executor where the scheduler was expected",
        );
    }

    // An executor with another CA's certificate never connects (its dial
    // fails the handshake, retried); one without TLS connects, but every
    // poll (how a pull-scheduled executor registers and gets work) fails in
    // the transport.
    let rogue_certs = cluster_args(other.path(), "executor");
    let mut rogues = Vec::new();
    for (tag, security, symptom) in [
        ("rogue-ca", strs(&rogue_certs), "Failed to connect to scheduler"),
        ("rogue-plain", vec!["--insecure-plaintext"], "poll work loop failed"),
    ] {
        let mut args = vec!["--scheduler", ballista.url.as_str(), "--listen", "127.0.0.1:0"];
        args.extend(["--allow-tables", d.to_str().unwrap()]);
        args.extend(security);
        let log = d.join(format!("{tag}.log"));
        let child = start_unannounced_executor(&args, &log, std::process::Stdio::null());
        // Refused below gRPC: a failed handshake, or (a plaintext HTTP/2
        // client against TLS) a connection hyper gives up on.
        let text = log_once(&log, |text| text.contains(symptom)).await;
        assert!(
            ["transport error", "transport::Error", "operation was canceled"]
                .iter()
                .any(|symptom| text.contains(symptom)),
            "{tag}: {text}"
        );
        rogues.push((child, log));
    }
    // With the rogues up, jobs still run on the cluster's executors only.
    let id = client.submit(&remote).await.unwrap();
    client.wait(&id, |_| {}).await.unwrap();
    assert_eq!(client.status(&id).await.unwrap().edge_fingerprint, want_fp);
    // No shuffle or edge file of the jobs is left: the job process deletes
    // its Ballista job's files once it has read the result (the executors
    // delete them at their next poll); its graph spill is anonymous.
    common::within(async {
        while (0..2).any(|i| !common::files_under(&common::work_dir(d, "tls", i)).is_empty()) {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    })
    .await;
    assert!(common::files_under(&d.join("main").join("state").join("work")).is_empty());
    for (mut child, log) in rogues {
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(!text.contains("task"), "a rogue executor ran a task: {text}");
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// The coordinator's cluster credentials from `dir`, loaded.
fn coordinator_tls(dir: &Path) -> ClusterTls {
    ClusterTls::load(&ClusterTlsFiles {
        ca: dir.join("ca.pem"),
        cert: dir.join("coordinator.pem"),
        key: dir.join("coordinator.key"),
        cluster: CLUSTER_NAME.into(),
        role: Role::Coordinator,
    })
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_executor_certificate_cannot_serve_as_the_scheduler() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_pki(d);
    let (_, constraints) = write_table(d, 200);
    let tables = d.to_str().unwrap();
    // A scheduler holding an executor's certificate (as one stolen from an
    // executor's pod would be): signed by the cluster CA, but not named as
    // the scheduler. It starts, saying its peers will refuse it.
    let stolen = cluster_args(d, "executor");
    let mut args = vec!["--listen", "127.0.0.1:0"];
    args.extend(strs(&stolen));
    let rogue = Proc::start(&common::scheduler_binary(), &args, d.join("rogue-scheduler.log"));
    let want = format!("does not carry the DNS name {}", role_name("scheduler"));
    assert!(rogue.logs().contains(&want), "{}", rogue.logs());
    let rogue_url = format!("https://{}", rogue.addr);

    // An executor never registers with it: each dial fails the handshake
    // (Ballista retries for ever; the executor never listens).
    let executor_certs = cluster_args(d, "executor");
    let executor_args = |url: &str| -> Vec<String> {
        let mut args: Vec<String> =
            ["--scheduler", url, "--listen", "127.0.0.1:0", "--allow-tables", tables]
                .map(String::from)
                .to_vec();
        args.extend(executor_certs.iter().cloned());
        args
    };
    let log = d.join("refusing-executor.log");
    let mut refusing = start_unannounced_executor(
        &strs(&executor_args(&rogue_url)),
        &log,
        std::process::Stdio::piped(),
    );
    let read = || std::fs::read_to_string(&log).unwrap_or_default();
    log_once(&log, |text| text.matches("Failed to connect to scheduler").count() >= 2).await;
    assert!(read().contains("transport error"), "{}", read());
    assert!(refusing.try_wait().unwrap().is_none(), "{}", read());
    let _ = refusing.kill();
    let out = refusing.wait_with_output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("listening on"), "{}", read());

    // The coordinator's client (its job processes, its cancels): refused in
    // the handshake, the name not the scheduler's.
    let tls = coordinator_tls(d);
    let why = dpincon_ballista::Scheduler::connect(&rogue_url, Some(&tls)).await.unwrap_err();
    assert!(why.to_string().contains("NotValidForName"), "{why}");
    // And a job on a coordinator dialling it fails without reaching it.
    let config = test_config(d, "main");
    let mut coordinator_args = vec!["--config", config.to_str().unwrap()];
    let (cert, key) = (path(d, "server.pem"), path(d, "server.key"));
    coordinator_args.extend(["--tls-cert", &cert, "--tls-key", &key]);
    let coordinator_certs = cluster_args(d, "coordinator");
    coordinator_args.extend(strs(&coordinator_certs));
    let coordinator = common::coordinator(d, &["--scheduler", &rogue_url], &coordinator_args);
    let client_tls = ClientTls::load(Some(&d.join("ca.pem")), Some("localhost".into())).unwrap();
    let url = format!("https://{}", coordinator.addr);
    let client = Client::new(&url, &Token::new(ALICE).unwrap(), client_tls.as_ref()).unwrap();
    let id = client
        .submit(&job(&constraints, json!({"epsilon": 1.0, "non-private": true})))
        .await
        .unwrap();
    let failed = common::within(client.wait(&id, |_| {})).await.unwrap_err().to_string();
    let seen = format!("{failed}\n{}", coordinator.logs());
    assert!(seen.contains("NotValidForName"), "{seen}");

    // The same executor and client reach a scheduler holding its own
    // certificate (the whole cluster runs jobs so in the test above).
    let own = cluster_args(d, "scheduler");
    let mut args = vec!["--listen", "127.0.0.1:0"];
    args.extend(strs(&own));
    let scheduler = Proc::start(&common::scheduler_binary(), &args, d.join("scheduler.log"));
    assert!(!scheduler.logs().contains("WARNING"), "{}", scheduler.logs());
    let scheduler_url = format!("https://{}", scheduler.addr);
    let args = executor_args(&scheduler_url);
    let _executor = Proc::start(&common::executor_binary(), &strs(&args), d.join("executor.log"));
    let mut connected = dpincon_ballista::Scheduler::connect(&scheduler_url, Some(&tls))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", scheduler.logs()));
    let unknown = dpincon_ballista::BallistaJobId("no-such-job".into());
    assert_eq!(connected.progress(&unknown).await.unwrap(), JobProgress::Pending);
}

#[test]
fn no_process_starts_without_tls_unless_told_it_is_a_test() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_table(d, 10);
    let config = test_config(d, "main");
    let tokens = common::client_tokens(d);
    let log = |name: &str| -> PathBuf { d.join(name) };
    // A scheduler and an executor need the cluster's credentials.
    let why =
        Proc::try_start(&common::scheduler_binary(), &["--listen", "127.0.0.1:0"], log("s.log"))
            .err()
            .expect("a scheduler without TLS must not start");
    assert!(why.log.contains("needs mutual TLS"), "{why}");
    let args = ["--scheduler", "https://127.0.0.1:1", "--listen", "127.0.0.1:0"];
    assert!(Proc::try_start(&common::executor_binary(), &args, log("e.log")).is_err());
    assert!(std::fs::read_to_string(log("e.log")).unwrap().contains("needs mutual TLS"));
    // A coordinator refuses to serve clients in plaintext.
    let coordinator = [
        "--listen",
        "127.0.0.1:0",
        "--scheduler",
        "http://127.0.0.1:1",
        "--config",
        config.to_str().unwrap(),
        "--client-tokens",
        tokens.to_str().unwrap(),
        "--cluster-ca",
        "ca.pem",
    ];
    assert!(Proc::try_start(common::COORDINATOR, &coordinator, log("c.log")).is_err());
    let logged = std::fs::read_to_string(log("c.log")).unwrap();
    assert!(logged.contains("needs mutual TLS") || logged.contains("served over TLS"), "{logged}");
    // --insecure-plaintext says so at start.
    let mut test_only = coordinator[..8].to_vec();
    test_only.push("--insecure-plaintext");
    let started = Proc::start(common::COORDINATOR, &test_only, log("c2.log"));
    assert!(started.logs().contains("--insecure-plaintext"), "{}", started.logs());
}

/// An executor whose scheduler may refuse it, so that it never announces
/// itself (`Proc::start` would wait for that): started with `args`, its
/// standard error in `log`.
fn start_unannounced_executor(
    args: &[&str],
    log: &Path,
    stdout: std::process::Stdio,
) -> std::process::Child {
    std::process::Command::new(common::executor_binary())
        .args(args)
        .stdout(stdout)
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap()
}

/// `log`'s text once `done` holds of it (a bounded wait).
async fn log_once(log: &Path, done: impl Fn(&str) -> bool) -> String {
    let read = || std::fs::read_to_string(log).unwrap_or_default();
    common::within(async {
        loop {
            let text = read();
            if done(&text) {
                return text;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await
}
