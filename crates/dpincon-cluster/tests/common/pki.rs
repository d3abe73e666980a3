//! A test cluster's credentials: one CA, the coordinator's client-facing
//! certificate and the cluster's certificates (issue 27).

use std::path::Path;

use rcgen::{
    BasicConstraints, CertificateParams, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

/// The name cluster certificates carry.
pub const CLUSTER_NAME: &str = "dpincon-cluster";

/// Writes a CA (`ca.pem`), the coordinator's client-facing certificate
/// (`server.pem`/`.key`, for `localhost`) and cluster certificates
/// `node.pem`/`.key` and `coordinator.pem`/`.key` (for [`CLUSTER_NAME`],
/// server and client use) in `dir`.
pub fn write_pki(dir: &Path) {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::DigitalSignature];
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    std::fs::write(dir.join("ca.pem"), ca_cert.pem()).unwrap();
    let both = vec![ExtendedKeyUsagePurpose::ServerAuth, ExtendedKeyUsagePurpose::ClientAuth];
    for (name, san, usages) in [
        ("server", "localhost", vec![ExtendedKeyUsagePurpose::ServerAuth]),
        ("node", CLUSTER_NAME, both.clone()),
        ("coordinator", CLUSTER_NAME, both),
    ] {
        let key = KeyPair::generate().unwrap();
        let mut leaf = CertificateParams::new(vec![san.to_string()]).unwrap();
        leaf.extended_key_usages = usages;
        let cert = leaf.signed_by(&key, &issuer).unwrap();
        std::fs::write(dir.join(format!("{name}.pem")), cert.pem()).unwrap();
        std::fs::write(dir.join(format!("{name}.key")), key.serialize_pem()).unwrap();
    }
}

pub fn path(dir: &Path, file: &str) -> String {
    dir.join(file).display().to_string()
}

/// `--cluster-*` arguments with `role`'s certificate from `dir`.
pub fn cluster_args(dir: &Path, role: &str) -> Vec<String> {
    let (cert, key) = (format!("{role}.pem"), format!("{role}.key"));
    vec![
        "--cluster-ca".into(),
        path(dir, "ca.pem"),
        "--cluster-cert".into(),
        path(dir, &cert),
        "--cluster-key".into(),
        path(dir, &key),
    ]
}

pub fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}
