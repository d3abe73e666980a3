//! A table in a store: its objects listed in row order, their Parquet footers and ranged reads.

use std::fmt;
use std::io::Cursor;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use arrow::datatypes::Schema;
use arrow::record_batch::RecordBatch;
use futures::future::BoxFuture;
use futures::{FutureExt, TryStreamExt};
use object_store::aws::AmazonS3ConfigKey;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt};
use parquet::arrow::ParquetRecordBatchStreamBuilder;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::arrow::async_reader::AsyncFileReader;
use parquet::errors::ParquetError;
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};
use serde::{Deserialize, Serialize};

use super::{ObjectUrl, S3Settings, error_chain, root_cause, scrub, without_userinfo};
use crate::arrow_io::{BATCH_ROWS, clean_message};
use crate::{DataFormat, ReadOptions, SourceError, TableData};

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
    pub(super) store: Arc<dyn ObjectStore>,
    pub(super) objects: Vec<TableObject>,
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
    pub(super) async fn read(&self, options: &ReadOptions) -> Result<TableData, SourceError> {
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
