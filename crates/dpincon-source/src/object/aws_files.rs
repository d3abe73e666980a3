//! The usual AWS files, for what the environment leaves unset:
//! `~/.aws/credentials` (or `AWS_SHARED_CREDENTIALS_FILE`) gives
//! `aws_access_key_id`, `aws_secret_access_key`, `aws_session_token`;
//! `~/.aws/config` (or `AWS_CONFIG_FILE`) gives `region` and
//! `endpoint_url`. The profile is `AWS_PROFILE`, else `default` (`[NAME]`
//! in the credentials file, `[profile NAME]` or `[default]` in the config).
//! `object_store` reads neither file; the AWS CLI and SDKs read both, so an
//! operator's machine set up for them works here too. A key from the
//! environment always wins, and a key id from the file is taken only with
//! its secret (never one from each place).

use std::collections::HashMap;
use std::path::PathBuf;

use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey as Key};

/// `builder` with the files' values for the keys it lacks.
pub(crate) fn fill(mut builder: AmazonS3Builder) -> AmazonS3Builder {
    let profile = std::env::var("AWS_PROFILE").unwrap_or_else(|_| "default".into());
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
    let file = |var: &str, name: &str| {
        std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| home.join(".aws").join(name))
    };
    let credentials = read(&file("AWS_SHARED_CREDENTIALS_FILE", "credentials"), &profile, false);
    let config = read(&file("AWS_CONFIG_FILE", "config"), &profile, true);
    let unset = |b: &AmazonS3Builder, k: Key| b.get_config_value(&k).is_none();
    if unset(&builder, Key::AccessKeyId) && unset(&builder, Key::SecretAccessKey) {
        // The config file may hold keys too; the credentials file wins.
        let from = |name: &str| credentials.get(name).or_else(|| config.get(name));
        if let (Some(id), Some(secret)) = (from("aws_access_key_id"), from("aws_secret_access_key"))
        {
            builder = builder.with_access_key_id(id).with_secret_access_key(secret);
            if let Some(token) = from("aws_session_token") {
                builder = builder.with_token(token);
            }
        }
    }
    if unset(&builder, Key::Region)
        && let Some(region) = config.get("region")
    {
        builder = builder.with_region(region);
    }
    if unset(&builder, Key::Endpoint)
        && let Some(endpoint) = config.get("endpoint_url")
    {
        builder = builder.with_endpoint(endpoint);
    }
    builder
}

/// The `key = value` lines of `profile`'s section of an INI file (empty
/// when the file or the section is missing).
fn read(path: &std::path::Path, profile: &str, config: bool) -> HashMap<String, String> {
    std::fs::read_to_string(path).map(|text| section(&text, profile, config)).unwrap_or_default()
}

fn section(text: &str, profile: &str, config: bool) -> HashMap<String, String> {
    let wanted = |name: &str| match name.strip_prefix("profile ") {
        Some(p) => config && p.trim() == profile,
        None => name == profile && (!config || name == "default"),
    };
    let mut inside = false;
    let mut values = HashMap::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('#') || line.starts_with(';') || line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            inside = wanted(name.trim());
        } else if inside && let Some((k, v)) = line.split_once('=') {
            values.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    values
}

#[cfg(test)]
mod tests {
    use super::section;

    #[test]
    fn profiles_are_read_from_their_sections() {
        let credentials = "[default]\naws_access_key_id = A\naws_secret_access_key = S\n\
                           [audit]\naws_access_key_id=B\n# comment\naws_secret_access_key=T\n";
        assert_eq!(section(credentials, "default", false)["aws_access_key_id"], "A");
        assert_eq!(section(credentials, "audit", false)["aws_secret_access_key"], "T");
        assert!(section(credentials, "other", false).is_empty());
        let config = "[default]\nregion = eu-west-1\n[profile audit]\nregion = us-east-2\n\
                      endpoint_url = http://minio:9000\n";
        assert_eq!(section(config, "default", true)["region"], "eu-west-1");
        assert_eq!(section(config, "audit", true)["endpoint_url"], "http://minio:9000");
    }
}
