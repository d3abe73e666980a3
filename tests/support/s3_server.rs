//! A throwaway S3-compatible server for tests: `moto_server` (Python moto,
//! `pip install 'moto[server]'`) on a free loopback port, with an IAM user
//! whose key may do anything on S3. Killed on drop.
//!
//! moto accepts any credentials until [`S3Server::enforce_credentials`];
//! then it checks signatures as S3 does, except that it miscomputes them
//! for a listing whose `prefix` holds a `/` (moto 5.2 re-encodes the
//! query: boto3's own requests fail the same way), so tests list nested
//! prefixes before enforcing.
//!
//! Shared by several test crates (`#[path]`); they need `object_store`
//! as a dev-dependency (objects are written with it, signed).

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running server.
pub struct S3Server {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// The IAM user's key id.
    pub access_key: String,
    /// Its secret (tests check it is never printed).
    pub secret_key: String,
}

fn moto_server() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join("moto_server")).find(|p| p.is_file())
}

impl S3Server {
    /// Starts a server with `buckets`, or `None` (with a message) when
    /// `moto_server` is absent and `DPINCON_REQUIRE_S3` is unset. Panics
    /// when it is required but absent, or does not start.
    pub fn start(buckets: &[&str]) -> Option<S3Server> {
        let Some(bin) = moto_server() else {
            assert!(
                std::env::var_os("DPINCON_REQUIRE_S3").is_none(),
                "DPINCON_REQUIRE_S3 is set but moto_server is not on the PATH \
                 (pip install 'moto[server]')"
            );
            eprintln!(
                "SKIPPED: no moto_server on the PATH; pip install 'moto[server]', or set \
                 DPINCON_REQUIRE_S3=1 to make this a failure"
            );
            return None;
        };
        let port = free_port();
        let child = Command::new(bin)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("moto_server starts");
        let mut server =
            S3Server { child, port, access_key: String::new(), secret_key: String::new() };
        let deadline = Instant::now() + Duration::from_secs(60);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "moto_server did not listen within 60 s");
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("moto_server exited: {status}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // Set up while moto accepts anything.
        let iam = "AWS4-HMAC-SHA256 Credential=AKIASETUP/20240101/us-east-1/iam/aws4_request, \
                   SignedHeaders=host, Signature=0";
        let form = |server: &S3Server, body: &str| server.request("POST", "/", Some(iam), body);
        form(&server, "Action=CreateUser&UserName=dpincon&Version=2010-05-08");
        let key = form(&server, "Action=CreateAccessKey&UserName=dpincon&Version=2010-05-08");
        server.access_key = between(&key, "<AccessKeyId>", "</AccessKeyId>");
        server.secret_key = between(&key, "<SecretAccessKey>", "</SecretAccessKey>");
        let policy = "%7B%22Version%22%3A%222012-10-17%22%2C%22Statement%22%3A%5B%7B%22Effect%22%3A\
                      %22Allow%22%2C%22Action%22%3A%22s3%3A*%22%2C%22Resource%22%3A%22*%22%7D%5D%7D";
        form(
            &server,
            &format!(
                "Action=PutUserPolicy&UserName=dpincon&PolicyName=s3&PolicyDocument={policy}\
             &Version=2010-05-08"
            ),
        );
        let s3 = iam.replace("/iam/", "/s3/");
        for bucket in buckets {
            server.request("PUT", &format!("/{bucket}"), Some(&s3), "");
        }
        Some(server)
    }

    /// From now on, only the user's key, correctly signed, is accepted.
    pub fn enforce_credentials(&self) {
        self.request("POST", "/moto-api/reset-auth", None, "0");
    }

    /// One plain HTTP/1.1 request; the response body. Panics unless 2xx.
    fn request(&self, method: &str, path: &str, auth: Option<&str>, body: &str) -> String {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        let auth = auth.map(|a| format!("Authorization: {a}\r\n")).unwrap_or_default();
        let content = if method == "POST" && path == "/" {
            "Content-Type: application/x-www-form-urlencoded\r\n"
        } else {
            ""
        };
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n{auth}{content}Content-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            self.port,
            body.len()
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        assert!(
            response.starts_with("HTTP/1.1 2") || response.starts_with("HTTP/1.0 2"),
            "{method} {path}: {response}"
        );
        response.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default()
    }

    /// The endpoint URL.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The standard environment a process reads the store with (nothing
    /// else of the caller's AWS settings: its files are pointed away).
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT", self.endpoint()),
            ("AWS_ACCESS_KEY_ID", self.access_key.clone()),
            ("AWS_SECRET_ACCESS_KEY", self.secret_key.clone()),
            ("AWS_REGION", "us-east-1".into()),
            ("AWS_ALLOW_HTTP", "true".into()),
            ("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/dpincon-test".into()),
            ("AWS_CONFIG_FILE", "/nonexistent/dpincon-test".into()),
        ]
    }

    /// The same as `object_store` settings (lower-case keys), for clients
    /// built in the test itself.
    pub fn settings(&self) -> Vec<(String, String)> {
        self.env()
            .into_iter()
            .filter(|(k, _)| !k.ends_with("_FILE"))
            .map(|(k, v)| (k.to_ascii_lowercase(), v))
            .collect()
    }
}

impl S3Server {
    /// Writes `bytes` at `bucket/key`, signed with the user's key.
    pub async fn put(&self, bucket: &str, key: &str, bytes: Vec<u8>) {
        use object_store::ObjectStoreExt;
        let mut builder = object_store::aws::AmazonS3Builder::new().with_bucket_name(bucket);
        for (k, v) in self.settings() {
            builder = builder.with_config(k.parse().unwrap(), v);
        }
        let store = builder.build().unwrap();
        store.put(&object_store::path::Path::from(key), bytes.into()).await.unwrap();
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn between(text: &str, start: &str, end: &str) -> String {
    let from = text.find(start).unwrap_or_else(|| panic!("no {start} in {text}")) + start.len();
    text[from..from + text[from..].find(end).unwrap()].to_string()
}

/// A loopback port nobody listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}
