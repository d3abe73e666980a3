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
//! A CSV object is fetched whole into memory and read by the CSV path; a
//! Parquet object is read by ranges (footer, then row groups).

pub mod aws_files;

use std::fmt;
use std::io::Cursor;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use arrow::datatypes::Schema;
use arrow::record_batch::RecordBatch;
use futures::future::BoxFuture;
use futures::{FutureExt, TryStreamExt};
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::path::Path as ObjectPath;
use object_store::{BackoffConfig, ClientConfigKey, ObjectStore, ObjectStoreExt, RetryConfig};
use parquet::arrow::ParquetRecordBatchStreamBuilder;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::arrow::async_reader::AsyncFileReader;
use parquet::errors::ParquetError;
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};
use serde::{Deserialize, Serialize};

use crate::read::{BATCH_ROWS, clean_message};
use crate::{DataFormat, ReadOptions, SourceError, TableData};

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

/// One object of a table: its key and size (what every reader of the
/// table agrees on, so the executors read the objects the job listed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableObject {
    /// The object's key in the bucket.
    pub key: String,
    /// Its size in bytes.
    pub size: u64,
}

/// A table in an object store: the store, and the objects that hold it,
/// in row order.
pub struct ObjectTable {
    url: ObjectUrl,
    store: Arc<dyn ObjectStore>,
    objects: Vec<TableObject>,
    /// Where the store is, for messages (no credential).
    endpoint: String,
    /// Texts cut from any message (the secret key, the session token).
    secrets: Vec<String>,
}

impl fmt::Debug for ObjectTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectTable")
            .field("url", &self.url)
            .field("objects", &self.objects)
            .finish()
    }
}

impl ObjectTable {
    /// Connects to `url`'s bucket with `objects` already known (an
    /// executor's side: the job listed them). Nothing is requested yet.
    pub fn with_objects(
        url: &ObjectUrl,
        objects: Vec<TableObject>,
        settings: &S3Settings,
    ) -> Result<ObjectTable, SourceError> {
        let builder = settings.builder(&url.bucket);
        let value = |k: AmazonS3ConfigKey| builder.get_config_value(&k);
        let endpoint = match value(AmazonS3ConfigKey::Endpoint) {
            Some(e) => without_userinfo(&e),
            None => format!(
                "AWS S3 ({})",
                value(AmazonS3ConfigKey::Region).unwrap_or_else(|| "us-east-1".into())
            ),
        };
        let secrets = [AmazonS3ConfigKey::SecretAccessKey, AmazonS3ConfigKey::Token]
            .into_iter()
            .filter_map(value)
            .filter(|s| s.len() >= 4)
            .collect();
        let store = builder.build().map_err(|e| {
            let message = scrub(&e.to_string(), &[]);
            url.error(format!("bad S3 settings: {}", message.split('<').next().unwrap_or("")))
        })?;
        Ok(ObjectTable { url: url.clone(), store: Arc::new(store), objects, endpoint, secrets })
    }

    /// Connects and finds the table's objects: the object itself (checked
    /// to exist), or a prefix's Parquet objects in key order.
    pub async fn open(url: &ObjectUrl, settings: &S3Settings) -> Result<ObjectTable, SourceError> {
        let mut table = Self::with_objects(url, Vec::new(), settings)?;
        let path = url.path()?;
        if url.is_prefix() {
            let prefix = (!url.key.trim_end_matches('/').is_empty()).then_some(&path);
            let listed: Vec<_> =
                table.store.list(prefix).try_collect().await.map_err(|e| table.describe(&e))?;
            let mut objects: Vec<TableObject> = listed
                .into_iter()
                .map(|m| TableObject { key: m.location.to_string(), size: m.size })
                .filter(|o| DataFormat::from_path(o.key.as_ref()) == DataFormat::Parquet)
                .collect();
            objects.sort_by(|a, b| a.key.cmp(&b.key));
            if objects.is_empty() {
                return Err(url.error("no Parquet object (.parquet, .pq) under this prefix"));
            }
            table.objects = objects;
        } else {
            let meta = match table.store.head(&path).await {
                Ok(meta) => meta,
                // A HEAD answer has no body to tell a missing bucket from a
                // missing key: a listing's does.
                Err(e @ object_store::Error::NotFound { .. }) => {
                    let probe = table.store.list_with_delimiter(Some(&path)).await;
                    return Err(table.describe(probe.as_ref().err().unwrap_or(&e)));
                }
                Err(e) => return Err(table.describe(&e)),
            };
            table.objects = vec![TableObject { key: url.key.clone(), size: meta.size }];
        }
        Ok(table)
    }

    /// The objects, in row order.
    pub fn objects(&self) -> &[TableObject] {
        &self.objects
    }

    /// The URL of object `i`.
    pub fn object_url(&self, i: usize) -> ObjectUrl {
        ObjectUrl { bucket: self.url.bucket.clone(), key: self.objects[i].key.clone() }
    }

    /// A Parquet reader of object `i` (ranges on demand).
    pub fn parquet_reader(&self, i: usize) -> ObjectReader {
        let object = &self.objects[i];
        ObjectReader {
            store: self.store.clone(),
            path: ObjectPath::from(object.key.as_str()),
            size: object.size,
        }
    }

    /// Object `i`'s Parquet footer.
    pub async fn footer(&self, i: usize) -> Result<ArrowReaderMetadata, SourceError> {
        let mut reader = self.parquet_reader(i);
        ArrowReaderMetadata::load_async(&mut reader, ArrowReaderOptions::default())
            .await
            .map_err(|e| self.parquet_error(i, &e))
    }

    /// Every object's footer, checked to agree on the columns (names and
    /// types, in order) with the first.
    pub async fn footers(&self) -> Result<Vec<ArrowReaderMetadata>, SourceError> {
        let mut footers: Vec<ArrowReaderMetadata> = Vec::with_capacity(self.objects.len());
        for i in 0..self.objects.len() {
            let footer = self.footer(i).await?;
            if let Some(first) = footers.first()
                && !same_columns(first.schema(), footer.schema())
            {
                return Err(self.object_url(i).error(format!(
                    "its columns [{}] differ from those of {} [{}]: a prefix is one table",
                    columns(footer.schema()),
                    self.object_url(0),
                    columns(first.schema())
                )));
            }
            footers.push(footer);
        }
        Ok(footers)
    }

    /// A Parquet error on object `i`, named by its URL (a store error
    /// inside it described as [`Self::describe`] does).
    pub fn parquet_error(&self, i: usize, e: &ParquetError) -> SourceError {
        if let ParquetError::External(inner) = e
            && let Some(store) = inner.downcast_ref::<object_store::Error>()
        {
            return match self.describe(store) {
                SourceError::Object { message, .. } => self.object_url(i).error(message),
                other => other,
            };
        }
        let mut message = scrub(&clean_message(&e.to_string()), &self.secrets);
        if message.contains("Invalid Parquet file") && !message.contains("not Parquet") {
            message += " (the object is not Parquet)";
        }
        // An object_store error inside a Parquet one: keep it short.
        let message = message.split('<').next().unwrap_or_default().trim().to_string();
        self.object_url(i).error(format!("not a readable Parquet object: {message}"))
    }

    /// Describes a store error by its kind; no response body, no secret.
    pub fn describe(&self, e: &object_store::Error) -> SourceError {
        use object_store::Error as E;
        let chain = error_chain(e);
        // Listings fail as `Generic` with the status and S3's code in the
        // text; reads have typed kinds.
        let status = |code: &str| chain.contains(&format!("status code: {code}"));
        let message = match e {
            _ if chain.contains("NoSuchBucket") => {
                format!("bucket '{}' does not exist at {}", self.url.bucket, self.endpoint)
            }
            E::NotFound { .. } => format!("no such object at {}", self.endpoint),
            _ if status("404") => format!("no such object at {}", self.endpoint),
            E::PermissionDenied { .. } | E::Unauthenticated { .. } => self.denied(),
            _ if status("403") || status("401") => self.denied(),
            _ if chain.contains("error sending request") || chain.contains("connect") => {
                format!("cannot reach {}: {}", self.endpoint, root_cause(e))
            }
            _ => chain.split('<').next().unwrap_or_default().trim().to_string(),
        };
        self.url.error(scrub(&message, &self.secrets))
    }

    fn denied(&self) -> String {
        format!(
            "access denied by {}: the credentials are missing or wrong, or may not read it \
             (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or the pod's role)",
            self.endpoint
        )
    }

    /// Reads the whole table in row order (the embedded path).
    async fn read(&self, options: &ReadOptions) -> Result<TableData, SourceError> {
        let format = options.format.unwrap_or_else(|| self.url.format());
        let (schema, batches) = match format {
            DataFormat::Csv if self.url.is_prefix() => {
                return Err(self.url.error("a prefix is read as Parquet objects only"));
            }
            DataFormat::Csv => {
                let path = ObjectPath::from(self.objects[0].key.as_str());
                let fetched = async { self.store.get(&path).await?.bytes().await };
                let bytes = fetched.await.map_err(|e| self.describe(&e))?;
                let name = self.url.to_string();
                crate::csv_file::read_csv_from(Cursor::new(bytes), Path::new(&name), options)?
            }
            DataFormat::Parquet => {
                if !options.schema.is_empty() {
                    return Err(SourceError::Schema(
                        "a Parquet table carries its own schema; --schema is for CSV".into(),
                    ));
                }
                self.read_parquet().await?
            }
        };
        let total: u64 = batches.iter().map(|b| b.num_rows() as u64).sum();
        let path = self.url.to_string().into();
        let rows = u32::try_from(total).map_err(|_| SourceError::TooManyRows {
            path: self.url.to_string().into(),
            rows: total,
        })?;
        Ok(TableData { path, arrow_schema: schema, batches, rows })
    }

    async fn read_parquet(&self) -> Result<(Arc<Schema>, Vec<RecordBatch>), SourceError> {
        let footers = self.footers().await?;
        let schema = footers[0].schema().clone();
        let mut batches = Vec::new();
        for (i, footer) in footers.into_iter().enumerate() {
            let builder =
                ParquetRecordBatchStreamBuilder::new_with_metadata(self.parquet_reader(i), footer);
            let stream = builder
                .with_batch_size(BATCH_ROWS)
                .build()
                .map_err(|e| self.parquet_error(i, &e))?;
            let read: Vec<RecordBatch> =
                stream.try_collect().await.map_err(|e| self.parquet_error(i, &e))?;
            // The first object's schema for all: same columns, checked.
            for batch in read {
                batches.push(
                    batch.with_schema(schema.clone()).map_err(|e| {
                        self.object_url(i).error(format!("its columns differ: {e}"))
                    })?,
                );
            }
        }
        Ok((schema, batches))
    }
}

/// Reads one Parquet object by ranges: the footer, then the row groups'
/// column chunks (`AsyncFileReader` over `object_store`; a store error
/// stays typed inside `ParquetError::External`).
pub struct ObjectReader {
    store: Arc<dyn ObjectStore>,
    path: ObjectPath,
    size: u64,
}

impl AsyncFileReader for ObjectReader {
    fn get_bytes(
        &mut self,
        range: Range<u64>,
    ) -> BoxFuture<'_, parquet::errors::Result<bytes::Bytes>> {
        async move {
            self.store
                .get_range(&self.path, range)
                .await
                .map_err(|e| ParquetError::External(Box::new(e)))
        }
        .boxed()
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<Range<u64>>,
    ) -> BoxFuture<'_, parquet::errors::Result<Vec<bytes::Bytes>>> {
        async move {
            self.store
                .get_ranges(&self.path, &ranges)
                .await
                .map_err(|e| ParquetError::External(Box::new(e)))
        }
        .boxed()
    }

    fn get_metadata<'a>(
        &'a mut self,
        options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, parquet::errors::Result<Arc<ParquetMetaData>>> {
        async move {
            let size = self.size;
            let reader = ParquetMetaDataReader::new()
                .with_metadata_options(options.map(|o| o.metadata_options().clone()));
            Ok(Arc::new(reader.load_and_finish(self, size).await?))
        }
        .boxed()
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

/// The first bytes of an object (a CSV header's line, for checks that read
/// no row): at most `range.end` bytes.
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

fn same_columns(a: &Schema, b: &Schema) -> bool {
    a.fields().len() == b.fields().len()
        && a.fields()
            .iter()
            .zip(b.fields().iter())
            .all(|(x, y)| x.name() == y.name() && x.data_type() == y.data_type())
}

fn columns(schema: &Schema) -> String {
    let fields = schema.fields().iter().map(|f| format!("{}:{}", f.name(), f.data_type()));
    fields.collect::<Vec<_>>().join(", ")
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
