//! A test cluster's credentials: one CA, the coordinator's client-facing
//! certificate and one cluster certificate per role (issues 27 and 47).

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

/// The cluster's name (the processes' default `--cluster-tls-name`).
pub const CLUSTER_NAME: &str = "dpincon-cluster";

/// The cluster certificates' roles, each written as `ROLE.pem`/`.key`.
pub const ROLES: [&str; 3] = ["scheduler", "executor", "coordinator"];

/// Stands for "each process's own role" in [`cluster_args`]:
/// `Ballista::start_secured` gives the scheduler `scheduler.pem` and the
/// executors `executor.pem` for it ([`for_role`]).
pub const OWN_ROLE: &str = "node";

/// The DNS name `role`'s certificate carries: `scheduler.dpincon-cluster`.
pub fn role_name(role: &str) -> String {
    format!("{role}.{CLUSTER_NAME}")
}

/// Writes a CA (`ca.pem`), the coordinator's client-facing certificate
/// (`server.pem`/`.key`, for `localhost`) and a cluster certificate per
/// role of [`ROLES`] (`ROLE.pem`/`.key`, carrying [`role_name`], server
/// and client use) in `dir`.
pub fn write_pki(dir: &Path) {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::DigitalSignature];
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    std::fs::write(dir.join("ca.pem"), ca_cert.pem()).unwrap();
    let both = vec![ExtendedKeyUsagePurpose::ServerAuth, ExtendedKeyUsagePurpose::ClientAuth];
    let mut leaves =
        vec![("server", "localhost".to_string(), vec![ExtendedKeyUsagePurpose::ServerAuth])];
    leaves.extend(ROLES.map(|role| (role, role_name(role), both.clone())));
    for (name, san, usages) in leaves {
        let key = KeyPair::generate().unwrap();
        let mut leaf = CertificateParams::new(vec![san]).unwrap();
        leaf.extended_key_usages = usages;
        let cert = leaf.signed_by(&key, &issuer).unwrap();
        std::fs::write(dir.join(format!("{name}.pem")), cert.pem()).unwrap();
        std::fs::write(dir.join(format!("{name}.key")), key.serialize_pem()).unwrap();
    }
}

pub fn path(dir: &Path, file: &str) -> String {
    dir.join(file).display().to_string()
}

/// `--cluster-*` arguments with `role`'s certificate from `dir` (a role of
/// [`ROLES`], or [`OWN_ROLE`]).
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

/// `security` arguments for a process of `role`: an [`OWN_ROLE`]
/// certificate and key become `role`'s, anything else is kept as given
/// (`--insecure-plaintext`, or a named role's certificate, even the
/// wrong one).
pub fn for_role(security: &[&str], role: &str) -> Vec<String> {
    security
        .iter()
        .map(|arg| {
            let path = PathBuf::from(arg);
            let own = |ext: &str| path.file_name() == Some(format!("{OWN_ROLE}.{ext}").as_ref());
            match ["pem", "key"].into_iter().find(|ext| own(ext)) {
                Some(ext) => path.with_file_name(format!("{role}.{ext}")).display().to_string(),
                None => arg.to_string(),
            }
        })
        .collect()
}

pub fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}
