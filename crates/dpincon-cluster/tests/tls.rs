//! TLS between clients and the coordinator: a certificate from a test CA;
//! clients trust only that CA. (The coordinator↔Ballista hop is plain gRPC
//! on the cluster's private network: see the crate README.)

mod common;

use std::path::Path;

use common::{
    ALICE, Ballista, Proc, comparable, embedded, embedded_job, job, test_config, write_table,
};
use dpincon_cluster::auth::Token;
use dpincon_cluster::client::Client;
use dpincon_cluster::tls::ClientTls;
use rcgen::{
    BasicConstraints, CertificateParams, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use serde_json::json;

/// Writes ca.pem, server.pem and server.key (for the name `localhost`),
/// and coordinator.pem, coordinator.key (a client certificate).
fn write_certificates(dir: &Path) {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::DigitalSignature];
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    std::fs::write(dir.join("ca.pem"), ca_cert.pem()).unwrap();
    for (name, usage) in [
        ("server", ExtendedKeyUsagePurpose::ServerAuth),
        ("coordinator", ExtendedKeyUsagePurpose::ClientAuth),
    ] {
        let key = KeyPair::generate().unwrap();
        let mut leaf = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
        leaf.extended_key_usages = vec![usage];
        let cert = leaf.signed_by(&key, &issuer).unwrap();
        std::fs::write(dir.join(format!("{name}.pem")), cert.pem()).unwrap();
        std::fs::write(dir.join(format!("{name}.key")), key.serialize_pem()).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_coordinator_over_tls_gives_the_embedded_result() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_certificates(d);
    let (data, constraints) = write_table(d, 1000);
    let path = |f: &str| d.join(f).display().to_string();
    let (cert, key) = (path("server.pem"), path("server.key"));
    let server_tls = ["--tls-cert", cert.as_str(), "--tls-key", key.as_str()];

    let ballista = Ballista::start(d, "tls", 2, &[]);
    let scheduler = ballista.scheduler.url();
    let config = test_config(d, "main");
    let tokens = common::client_tokens(d);
    let mut args = vec![
        "--listen",
        "127.0.0.1:0",
        "--scheduler",
        &scheduler,
        "--config",
        config.to_str().unwrap(),
        "--client-tokens",
        tokens.to_str().unwrap(),
    ];
    args.extend_from_slice(&server_tls);
    // The fingerprint compared below is shown for non-private jobs only.
    let coordinator = Proc::start(common::COORDINATOR, &args, d.join("tls-coord.log"));

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
    let status = client.status(&id).await.unwrap();
    assert_eq!(status.edge_fingerprint, want_fp);

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
