//! S3 and S3-compatible object stores as a source: `s3://bucket/key` (one
//! CSV or Parquet object) or `s3://bucket/prefix/` (every Parquet object
//! under the prefix, one table), read with the `object_store` crate.
//!
//! **Row order.** A tuple's id is its row position (SPEC §1). A prefix is
//! read in key order (byte order of the full keys, as S3 lists them; we
//! sort again rather than trust a store), each object's row groups in
//! order: the table is the objects' rows concatenated, so the same objects
//! give the same ids, the embedded run and the executors alike. Only keys
//! ending in `.parquet` or `.pq` belong to a prefix (writers leave
//! `_SUCCESS` and the like beside them); every object must have the first
//! one's columns. A URL ending in `/` (or a bare bucket) is a prefix; any
//! other is one object, whose format comes from its extension as a file's.
//!
//! **Settings** are `object_store`'s standard ones, from the environment:
//! `AWS_REGION`, `AWS_ENDPOINT` (an S3-compatible store; requests are then
//! path-style unless `AWS_VIRTUAL_HOSTED_STYLE_REQUEST=true`),
//! `AWS_ALLOW_HTTP=true` for a plain-HTTP endpoint, `AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, web identity (IRSA) or the
//! instance's role; and, for what the environment leaves unset, the usual
//! AWS files (`~/.aws/credentials` and `~/.aws/config`, profile
//! `AWS_PROFILE` or `default`; see [`aws_files`]).
//!
//! **Secrets** never appear in a message: a URL carries none (one with
//! `user@` is refused without being echoed), store errors are described by
//! kind (missing bucket, missing object, access denied, endpoint
//! unreachable) with no response body, and the secret key and session
//! token are cut from whatever text remains.
//!
//! A CSV object is fetched whole into memory and read by the CSV path (a
//! cluster streams it once to cut it into ranges of records, which the
//! executors fetch by range: [`split_object_csv`]); a Parquet object is
//! read by ranges (footer, then row groups).

pub mod aws_files;

mod table;

use std::fmt;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use arrow::datatypes::Schema;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::path::Path as ObjectPath;
use object_store::{BackoffConfig, ClientConfigKey, ObjectStoreExt, RetryConfig};

use crate::{DataFormat, ReadOptions, SourceError, TableData};

pub use table::{ObjectReader, ObjectTable, TableObject};

/// The scheme of an object URL.
const SCHEME: &str = "s3://";

/// `s3://bucket/key`, parsed. Holds no credential: its `Display` is safe
/// to show anywhere.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObjectUrl {
    bucket: String,
    key: String,
}

impl ObjectUrl {
    /// Whether `data` names an object store rather than a file.
    pub fn is_url(data: &str) -> bool {
        data.len() >= SCHEME.len() && data[..SCHEME.len()].eq_ignore_ascii_case(SCHEME)
    }

    /// The URL `path` holds, if it is one (`None` for a local path).
    pub fn of_path(path: &Path) -> Option<Result<ObjectUrl, SourceError>> {
        let text = path.to_str()?;
        Self::is_url(text).then(|| Self::parse(text))
    }

    /// Parses `s3://bucket[/key]`.
    pub fn parse(url: &str) -> Result<ObjectUrl, SourceError> {
        let refuse = |shown: &str, message: &str| SourceError::Object {
            url: shown.to_string(),
            message: message.to_string(),
        };
        if !Self::is_url(url) {
            return Err(refuse(url, "an object URL starts with s3://"));
        }
        let rest = &url[SCHEME.len()..];
        let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.contains('@') || bucket.contains(':') {
            // Never echo what may be a key and a secret.
            let host = &bucket[bucket.rfind('@').map_or(0, |i| i + 1)..];
            return Err(refuse(
                &format!("{SCHEME}…@{host}/{key}"),
                "credentials do not belong in the URL: give them in the environment \
                 (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) or the AWS files",
            ));
        }
        if bucket.is_empty()
            || !bucket.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        {
            return Err(refuse(url, "not a bucket name (letters, digits, '.', '-', '_')"));
        }
        if key.contains(['?', '#']) {
            return Err(refuse(url, "an object URL has no query or fragment"));
        }
        let parsed = ObjectUrl { bucket: bucket.to_string(), key: key.to_string() };
        parsed.path()?;
        Ok(parsed)
    }

    /// The bucket.
    pub fn bucket(&self) -> &str {
        &self.bucket
    }

    /// Whether it names a prefix (ends in `/`, or is a bare bucket).
    pub fn is_prefix(&self) -> bool {
        self.key.is_empty() || self.key.ends_with('/')
    }

    /// The format its key's extension gives (a prefix holds Parquet).
    pub fn format(&self) -> DataFormat {
        if self.is_prefix() {
            DataFormat::Parquet
        } else {
            DataFormat::from_path(self.key.as_ref())
        }
    }

    /// The key as the store's path (a prefix without its trailing `/`).
    fn path(&self) -> Result<ObjectPath, SourceError> {
        ObjectPath::parse(self.key.trim_end_matches('/')).map_err(|_| SourceError::Object {
            url: self.to_string(),
            message: "not a valid object key (empty, '.' or '..' segments)".into(),
        })
    }

    fn error(&self, message: impl Into<String>) -> SourceError {
        SourceError::Object { url: self.to_string(), message: message.into() }
    }
}

impl fmt::Display for ObjectUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SCHEME}{}/{}", self.bucket, self.key)
    }
}

/// How to reach the store: `object_store`'s settings, from the environment
/// and the AWS files (the product's way), or given (tests). `Debug` shows
/// the keys only.
#[derive(Clone, Default)]
pub struct S3Settings {
    from_env: bool,
    config: Vec<(AmazonS3ConfigKey, String)>,
}

impl fmt::Debug for S3Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keys: Vec<&str> = self.config.iter().map(|(k, _)| k.as_ref()).collect();
        f.debug_struct("S3Settings").field("from_env", &self.from_env).field("keys", &keys).finish()
    }
}

impl S3Settings {
    /// The environment's `AWS_*` settings, then the AWS files for what it
    /// leaves unset.
    pub fn from_env() -> Self {
        S3Settings { from_env: true, config: Vec::new() }
    }

    /// Only these settings (`object_store` key names: `aws_endpoint`,
    /// `aws_access_key_id`, `aws_allow_http`, ...); nothing from the
    /// environment or the files. Panics on an unknown key (tests' API).
    pub fn given<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let config = pairs
            .into_iter()
            .map(|(k, v)| {
                (k.parse().unwrap_or_else(|_| panic!("unknown S3 setting {k}")), v.into())
            })
            .collect();
        S3Settings { from_env: false, config }
    }

    fn builder(&self, bucket: &str) -> AmazonS3Builder {
        let mut builder =
            if self.from_env { AmazonS3Builder::from_env() } else { AmazonS3Builder::new() };
        for (key, value) in &self.config {
            builder = builder.with_config(*key, value);
        }
        if self.from_env {
            builder = aws_files::fill(builder);
        }
        // Fail in seconds, not object_store's three minutes of retries, when
        // the endpoint is down; transient errors still get retried.
        let retry = RetryConfig {
            backoff: BackoffConfig::default(),
            max_retries: 3,
            retry_timeout: Duration::from_secs(30),
        };
        // with_client_options would replace the settings' client keys
        // (AWS_ALLOW_HTTP): set the one key instead, when unset.
        let connect = AmazonS3ConfigKey::Client(ClientConfigKey::ConnectTimeout);
        if builder.get_config_value(&connect).is_none() {
            builder = builder.with_config(connect, "5s");
        }
        builder.with_bucket_name(bucket).with_retry(retry)
    }
}

/// Reads the table at `url` with the environment's settings.
pub(crate) async fn read_object_table(
    url: &ObjectUrl,
    options: &ReadOptions,
    settings: &S3Settings,
) -> Result<TableData, SourceError> {
    ObjectTable::open(url, settings).await?.read(options).await
}

/// [`crate::read_table`] for an object URL with explicit settings.
pub async fn read_object(
    url: &ObjectUrl,
    options: &ReadOptions,
    settings: &S3Settings,
) -> Result<TableData, SourceError> {
    read_object_table(url, options, settings).await
}

/// The Arrow schema of a Parquet table in a store (its objects' footers,
/// checked to agree), no row read.
pub async fn object_parquet_schema(
    url: &ObjectUrl,
    settings: &S3Settings,
) -> Result<Arc<Schema>, SourceError> {
    let table = ObjectTable::open(url, settings).await?;
    Ok(table.footers().await?[0].schema().clone())
}

/// Bytes `range` of an object (cut to its size): a CSV header's line for
/// checks that read no row, or a range of its records.
pub async fn object_head_bytes(
    url: &ObjectUrl,
    range: Range<u64>,
    settings: &S3Settings,
) -> Result<bytes::Bytes, SourceError> {
    let table = ObjectTable::open(url, settings).await?;
    let end = range.end.min(table.objects[0].size);
    let path = ObjectPath::from(table.objects[0].key.as_str());
    table.store.get_range(&path, range.start.min(end)..end).await.map_err(|e| table.describe(&e))
}

/// Cuts the CSV object at `url` into at most `parts` ranges of whole
/// records of at least `min_bytes` (`CsvSplitter`), streaming it once.
pub async fn split_object_csv(
    url: &ObjectUrl,
    parts: usize,
    min_bytes: u64,
    settings: &S3Settings,
) -> Result<crate::CsvSplit, SourceError> {
    use futures::TryStreamExt;
    let table = ObjectTable::open(url, settings).await?;
    let object = &table.objects[0];
    let path = ObjectPath::from(object.key.as_str());
    let fetched = table.store.get(&path).await.map_err(|e| table.describe(&e))?;
    let mut stream = fetched.into_stream();
    let mut splitter = crate::CsvSplitter::new(object.size, parts, min_bytes);
    while let Some(chunk) = stream.try_next().await.map_err(|e| table.describe(&e))? {
        splitter.feed(&chunk);
    }
    splitter.finish(Path::new(&url.to_string()))
}

/// Runs `future` to its end from synchronous code, inside or outside a
/// Tokio runtime (a thread of its own with a current-thread runtime).
pub fn block_on<F: std::future::Future + Send>(future: F) -> F::Output
where
    F::Output: Send,
{
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a current-thread runtime")
                    .block_on(future)
            })
            .join()
            .expect("the object-store thread panicked")
    })
}

/// Every message in `e`'s source chain, joined.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// The innermost cause (`Connection refused (os error 111)`).
fn root_cause(e: &dyn std::error::Error) -> String {
    let mut last = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        last = s.to_string();
        source = s.source();
    }
    last.split('<').next().unwrap_or_default().trim().to_string()
}

/// `text` with every secret replaced.
fn scrub(text: &str, secrets: &[String]) -> String {
    secrets.iter().fold(text.to_string(), |t, s| t.replace(s.as_str(), "***"))
}

/// An endpoint URL without `user:password@`.
fn without_userinfo(endpoint: &str) -> String {
    match endpoint.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
            let host = &authority[authority.rfind('@').map_or(0, |i| i + 1)..];
            let path = if path.is_empty() { String::new() } else { format!("/{path}") };
            format!("{scheme}://{host}{path}")
        }
        None => endpoint[endpoint.rfind('@').map_or(0, |i| i + 1)..].to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_into_objects_and_prefixes() {
        let one = ObjectUrl::parse("s3://tables/tax/part.parquet").unwrap();
        assert_eq!((one.bucket(), one.is_prefix()), ("tables", false));
        assert_eq!(one.format(), DataFormat::Parquet);
        assert_eq!(one.to_string(), "s3://tables/tax/part.parquet");
        assert_eq!(ObjectUrl::parse("s3://tables/t.csv").unwrap().format(), DataFormat::Csv);
        let prefix = ObjectUrl::parse("s3://tables/tax/").unwrap();
        assert!(prefix.is_prefix() && prefix.format() == DataFormat::Parquet);
        assert!(ObjectUrl::parse("s3://tables").unwrap().is_prefix());
        assert!(ObjectUrl::of_path(Path::new("/tmp/t.csv")).is_none());
        assert!(ObjectUrl::of_path(Path::new("s3://b/k.csv")).unwrap().is_ok());
        for bad in ["s3://", "s3:///k", "s3://b/a//c", "s3://b/k?x=1", "s3://b c/k"] {
            assert!(ObjectUrl::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn credentials_in_a_url_are_refused_unseen() {
        let e = ObjectUrl::parse("s3://AKIAX:s3cretKey@bucket/k.csv").unwrap_err().to_string();
        assert!(!e.contains("s3cretKey") && !e.contains("AKIAX"), "{e}");
        assert!(e.contains("credentials do not belong in the URL"), "{e}");
        assert_eq!(without_userinfo("http://u:pw@minio:9000/x"), "http://minio:9000/x");
        assert_eq!(scrub("a s3cret b", &["s3cret".into()]), "a *** b");
    }

    #[test]
    fn settings_show_their_keys_only() {
        let s = S3Settings::given([("aws_secret_access_key", "s3cretKey"), ("aws_region", "x")]);
        let shown = format!("{s:?}");
        assert!(!shown.contains("s3cretKey") && shown.contains("aws_secret_access_key"), "{shown}");
    }
}
