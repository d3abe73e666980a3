//! TLS everywhere (issue 27): clients reach the coordinator over TLS, and
//! the cluster's own hops (coordinator → scheduler, executors → scheduler,
//! shuffle and result fetches from the executors' Flight servers) over
//! mutual TLS from one cluster CA. Real processes on loopback; peers
//! without a certificate from that CA are refused before any plan runs or
//! any file is read.

mod common;

use std::path::{Path, PathBuf};

use arrow_flight::Ticket;
use arrow_flight::flight_service_client::FlightServiceClient;
use ballista_core::serde::protobuf::GetJobStatusParams;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use common::pki::{CLUSTER_NAME, cluster_args, path, strs, write_pki};
use common::{
    ALICE, Ballista, Proc, comparable, embedded, embedded_job, job, test_config, write_table,
};
use dpincon_client::Client;
use dpincon_client::ClientTls;
use dpincon_client::Token;
use serde_json::json;
use tonic::Code;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};

/// A channel to `addr`: plain, or TLS trusting `ca_dir`'s CA and
/// presenting `identity`'s certificate from `identity_dir`.
fn channel(addr: &str, tls: Option<(&Path, Option<(&Path, &str)>)>) -> Channel {
    let Some((ca_dir, identity)) = tls else {
        return Endpoint::from_shared(format!("http://{addr}")).unwrap().connect_lazy();
    };
    let mut config = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(std::fs::read(ca_dir.join("ca.pem")).unwrap()))
        .domain_name(CLUSTER_NAME);
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

#[tokio::test(flavor = "multi_thread")]
async fn the_cluster_runs_over_mutual_tls_and_refuses_every_peer_without_its_ca() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_pki(d);
    let other = tempfile::tempdir().unwrap();
    write_pki(other.path());
    let (data, constraints) = write_table(d, 1000);

    let node = cluster_args(d, "node");
    let ballista = Ballista::start_secured(d, "tls", 2, &[], &strs(&node));
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
    let got: serde_json::Value = serde_json::from_str(&got).unwrap();
    assert_eq!(comparable(&got), comparable(&want));
    assert_eq!(client.status(&id).await.unwrap().edge_fingerprint, want_fp);

    // Clients of the coordinator: plain HTTP/2, or TLS without its CA, get nowhere.
    let plain = Client::new(&format!("http://{}", coordinator.addr), &token, None).unwrap();
    assert!(plain.status(&id).await.is_err());
    let wrong_ca =
        ClientTls::load(Some(&other.path().join("ca.pem")), Some("localhost".into())).unwrap();
    assert!(Client::new(&url, &token, wrong_ca.as_ref()).unwrap().status(&id).await.is_err());

    // The scheduler: a cluster certificate gets an answer; a plain client, a
    // client without a certificate, and one from another CA do not.
    let scheduler = ballista.scheduler.addr.as_str();
    scheduler_call(channel(scheduler, Some((d, Some((d, "coordinator"))))))
        .await
        .expect("a cluster peer reaches the scheduler");
    refused(scheduler_call(channel(scheduler, None)).await, "plain gRPC to the scheduler");
    refused(scheduler_call(channel(scheduler, Some((d, None)))).await, "no client certificate");
    refused(
        scheduler_call(channel(scheduler, Some((d, Some((other.path(), "node")))))).await,
        "a certificate from another CA",
    );

    // An executor's Flight port (shuffle partitions): the same.
    for executor in &ballista.executors {
        let addr = executor.addr.as_str();
        let admitted = flight_call(channel(addr, Some((d, Some((d, "coordinator")))))).await;
        assert!(
            !matches!(&admitted, Err(s) if at_transport(s)),
            "a cluster peer reaches the Flight service: {admitted:?}"
        );
        refused(flight_call(channel(addr, None)).await, "plain Flight do_get");
        refused(
            flight_call(channel(addr, Some((d, Some((other.path(), "node")))))).await,
            "Flight do_get with another CA's certificate",
        );
    }

    // An executor with another CA's certificate never connects (its dial
    // fails the handshake, retried); one without TLS connects, but every
    // poll (how a pull-scheduled executor registers and gets work) fails in
    // the transport.
    let rogue_certs = cluster_args(other.path(), "node");
    let mut rogues = Vec::new();
    for (tag, security, symptom) in [
        ("rogue-ca", strs(&rogue_certs), "Failed to connect to scheduler"),
        ("rogue-plain", vec!["--insecure-plaintext"], "poll work loop failed"),
    ] {
        let mut args = vec!["--scheduler", ballista.url.as_str(), "--listen", "127.0.0.1:0"];
        args.extend(security);
        let log = d.join(format!("{tag}.log"));
        let child = std::process::Command::new(common::executor_binary())
            .args(&args)
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let read = || std::fs::read_to_string(&log).unwrap_or_default();
        common::within(async {
            while !read().contains(symptom) {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        })
        .await;
        // Refused below gRPC: a failed handshake, or (a plaintext HTTP/2
        // client against TLS) a connection hyper gives up on.
        let text = read();
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
    let logged = std::fs::read_to_string(log("s.log")).unwrap();
    assert!(why.contains("did not start") && logged.contains("needs mutual TLS"), "{logged}");
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
