//! TLS end to end: coordinator and workers with certificates from a test
//! CA; clients trust only that CA.

mod common;

use std::path::Path;

use common::{Proc, TOKEN, comparable, embedded, write_table};
use dpincon_cluster::auth::Token;
use dpincon_cluster::client::Client;
use dpincon_cluster::tls::ClientTls;
use dpincon_engine::JobConfig;
use rcgen::{
    BasicConstraints, CertificateParams, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

/// Writes ca.pem, server.pem and server.key (for the name `localhost`).
fn write_certificates(dir: &Path) {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::DigitalSignature];
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate().unwrap();
    let mut leaf = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let cert = leaf.signed_by(&key, &issuer).unwrap();
    std::fs::write(dir.join("ca.pem"), ca_cert.pem()).unwrap();
    std::fs::write(dir.join("server.pem"), cert.pem()).unwrap();
    std::fs::write(dir.join("server.key"), key.serialize_pem()).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cluster_over_tls_gives_the_embedded_result() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_certificates(d);
    let (data, constraints) = write_table(d, 1000);
    let path = |f: &str| d.join(f).display().to_string();
    let (cert, key, ca) = (path("server.pem"), path("server.key"), path("ca.pem"));
    let server_tls = ["--tls-cert", cert.as_str(), "--tls-key", key.as_str()];

    let workers: Vec<Proc> = (0..2)
        .map(|i| {
            let mut args = vec!["--listen", "127.0.0.1:0"];
            args.extend_from_slice(&server_tls);
            Proc::start(common::WORKER, &args, TOKEN, d.join(format!("tls-worker{i}.log")))
        })
        .collect();
    let urls: Vec<String> = workers.iter().map(|w| format!("https://{}", w.addr)).collect();
    let urls = urls.join(",");
    let mut args = vec!["--listen", "127.0.0.1:0", "--workers", &urls];
    args.extend_from_slice(&server_tls);
    // Workers are reached by IP: the name their certificate must carry.
    args.extend_from_slice(&["--tls-ca", &ca, "--tls-domain", "localhost"]);
    // The fingerprint compared below is shown for non-private jobs only.
    args.push("--allow-non-private");
    let coordinator = Proc::start(common::COORDINATOR, &args, TOKEN, d.join("tls-coord.log"));

    let token = Token::new(TOKEN).unwrap();
    let tls = ClientTls::load(Some(&d.join("ca.pem")), Some("localhost".into())).unwrap();
    let url = format!("https://{}", coordinator.addr);
    let client = Client::new(&url, &token, tls.as_ref()).unwrap();
    let mut job = JobConfig::new(&data, &constraints);
    job.epsilon = Some(1.0);
    job.seed = Some(5);
    job.non_private = true;
    let (want, want_fp) = embedded(&job).await;
    let id = client.submit(&job).await.unwrap();
    let got = client
        .wait(&id, |_| {})
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}\n{}", coordinator.logs(), workers[0].logs()));
    let got: serde_json::Value = serde_json::from_str(&got).unwrap();
    assert_eq!(comparable(&got), comparable(&want));
    let status = client.status(&id).await.unwrap();
    assert_eq!((status.workers, status.edge_fingerprint), (2, want_fp));

    // Plain HTTP/2 to a TLS server gets nowhere; nor does TLS without the CA.
    let plain = Client::new(&format!("http://{}", coordinator.addr), &token, None).unwrap();
    assert!(plain.status(&id).await.is_err());
    let other_dir = tempfile::tempdir().unwrap();
    write_certificates(other_dir.path());
    let wrong_ca =
        ClientTls::load(Some(&other_dir.path().join("ca.pem")), Some("localhost".into())).unwrap();
    let untrusting = Client::new(&url, &token, wrong_ca.as_ref()).unwrap();
    assert!(untrusting.status(&id).await.is_err());
}
