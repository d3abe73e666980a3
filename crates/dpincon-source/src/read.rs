//! Reading a local table: formats, schema overrides, read options.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::ArrayRef;
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use dpincon_constraints::{ColumnKind, TableSchema};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::SourceError;
use crate::arrow_io::{BATCH_ROWS, clean_message};

/// The file format of a table (`format = "csv" | "parquet"` in job files).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DataFormat {
    /// Comma-separated values with a header row.
    Csv,
    /// Apache Parquet.
    Parquet,
}

/// A data format's name that is neither `csv` nor `parquet`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown data format '{0}' (use csv or parquet)")]
pub struct UnknownFormat(pub String);

impl std::str::FromStr for DataFormat {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Self, UnknownFormat> {
        match s {
            "csv" => Ok(DataFormat::Csv),
            "parquet" => Ok(DataFormat::Parquet),
            other => Err(UnknownFormat(other.to_string())),
        }
    }
}

impl DataFormat {
    /// The format a path's extension suggests (`.parquet`/`.pq`, else CSV;
    /// an object-store prefix holds Parquet).
    pub fn from_path(path: &Path) -> Self {
        if let Some(Ok(url)) = crate::ObjectUrl::of_path(path)
            && url.is_prefix()
        {
            return DataFormat::Parquet;
        }
        match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
            Some("parquet" | "pq") => DataFormat::Parquet,
            _ => DataFormat::Csv,
        }
    }
}

/// A column type a user forces, e.g. `Zip:string`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaOverride {
    /// The column.
    pub column: String,
    /// Its type.
    pub data_type: DataType,
}

/// Parses `Name:type` entries, separated by commas or new lines, with types
/// `int`, `float`, `string`, `bool` (and Arrow's names `int64`, `float64`, `utf8`).
pub fn parse_schema_override(text: &str) -> Result<Vec<SchemaOverride>, SourceError> {
    text.split([',', '\n'])
        .map(str::trim)
        .filter(|s| !s.is_empty() && !s.starts_with('#'))
        .map(|entry| {
            let (column, ty) = entry.rsplit_once(':').ok_or_else(|| {
                SourceError::Schema(format!("'{entry}' is not of the form Column:type"))
            })?;
            let data_type = match ty.trim().to_ascii_lowercase().as_str() {
                "int" | "int64" | "integer" => DataType::Int64,
                "float" | "float64" | "double" => DataType::Float64,
                "string" | "str" | "utf8" | "text" => DataType::Utf8,
                "bool" | "boolean" => DataType::Boolean,
                other => {
                    return Err(SourceError::Schema(format!(
                        "column '{}': unknown type '{other}' (use int, float, string or bool)",
                        column.trim()
                    )));
                }
            };
            Ok(SchemaOverride { column: column.trim().to_string(), data_type })
        })
        .collect()
}

/// The columns as the constraint binder sees them when every column's type
/// is declared (`entries` in table order): the schema of a table read with
/// these overrides, known without reading a row.
pub fn declared_schema(entries: &[SchemaOverride]) -> TableSchema {
    TableSchema {
        columns: entries.iter().map(|e| (e.column.clone(), column_kind(&e.data_type))).collect(),
    }
}

/// The Arrow schema of a table whose every column's type is declared
/// (`entries` in table order), as the CSV readers decode it: every column
/// nullable (an empty cell is NULL).
pub fn declared_arrow_schema(entries: &[SchemaOverride]) -> Schema {
    Schema::new(
        entries
            .iter()
            .map(|e| Field::new(&e.column, e.data_type.clone(), true))
            .collect::<Vec<_>>(),
    )
}

/// The columns of a Parquet file as the constraint binder sees them, from
/// its footer alone: the schema its writer declared, no row read.
pub fn parquet_schema(path: &Path) -> Result<TableSchema, SourceError> {
    if let Some(url) = crate::ObjectUrl::of_path(path) {
        let url = url?;
        let settings = crate::S3Settings::from_env();
        let schema =
            crate::object::block_on(crate::object::object_parquet_schema(&url, &settings))?;
        let columns = schema.fields().iter();
        return Ok(TableSchema {
            columns: columns.map(|f| (f.name().clone(), column_kind(f.data_type()))).collect(),
        });
    }
    let file = std::fs::File::open(path)
        .map_err(|e| SourceError::Open { path: path.to_path_buf(), message: e.to_string() })?;
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| SourceError::Read {
            path: path.to_path_buf(),
            message: format!("not a readable Parquet file: {e}"),
        })?;
    let columns = builder.schema().fields().iter();
    Ok(TableSchema {
        columns: columns.map(|f| (f.name().clone(), column_kind(f.data_type()))).collect(),
    })
}

/// The column names of a CSV table's header row, trimmed; only that row
/// is read (of an object, its first 64 KiB).
pub fn csv_header(path: &Path) -> Result<Vec<String>, SourceError> {
    let names = |reader: &mut dyn std::io::Read| {
        let mut csv = csv::ReaderBuilder::new().has_headers(true).from_reader(reader);
        let header = csv.headers().map_err(|e| SourceError::Read {
            path: path.to_path_buf(),
            message: format!("bad header row: {e}"),
        })?;
        Ok(header.iter().map(|h| h.trim().to_string()).collect())
    };
    if let Some(url) = crate::ObjectUrl::of_path(path) {
        let settings = crate::S3Settings::from_env();
        let url = url?;
        let head = crate::object::object_head_bytes(&url, 0..65536, &settings);
        let bytes = crate::object::block_on(head)?;
        return names(&mut &bytes[..]);
    }
    let mut file = std::fs::File::open(path)
        .map_err(|e| SourceError::Open { path: path.to_path_buf(), message: e.to_string() })?;
    names(&mut file)
}

/// How to read a table.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// Force a format; by default the extension decides.
    pub format: Option<DataFormat>,
    /// Column types to force (CSV only); the others are inferred.
    pub schema: Vec<SchemaOverride>,
    /// Rows to infer CSV types from; `None` reads them all, so a typo deep in
    /// a numeric column makes it a string column instead of an error.
    pub infer_rows: Option<usize>,
    /// Threads a local Parquet file's columns are decoded on (0 counts as 1).
    pub threads: usize,
}

/// A table in memory, in input order.
#[derive(Debug, Clone)]
pub struct TableData {
    /// Where it came from.
    pub path: PathBuf,
    /// The Arrow schema.
    pub arrow_schema: Arc<Schema>,
    /// The rows, in input order.
    pub batches: Vec<RecordBatch>,
    /// Number of rows.
    pub rows: u32,
}

impl TableData {
    /// Columns whose type inference found no value (Arrow `Null`: every
    /// cell empty, or no row at all).
    pub fn null_columns(&self) -> Vec<&str> {
        let fields = self.arrow_schema.fields().iter();
        fields.filter(|f| f.data_type() == &DataType::Null).map(|f| f.name().as_str()).collect()
    }

    /// The columns as the constraint binder sees them.
    pub fn schema(&self) -> TableSchema {
        TableSchema {
            columns: self
                .arrow_schema
                .fields()
                .iter()
                .map(|f| (f.name().clone(), column_kind(f.data_type())))
                .collect(),
        }
    }
}

/// How a column of Arrow type `t` is compared.
pub(crate) fn column_kind(t: &DataType) -> ColumnKind {
    use DataType::*;
    match t {
        Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64 | Boolean | Date32
        | Date64 | Timestamp(..) | Time32(_) | Time64(_) => ColumnKind::Int,
        Float16 | Float32 | Float64 | Decimal128(..) | Decimal256(..) => ColumnKind::Float,
        Utf8 | LargeUtf8 | Utf8View => ColumnKind::Str,
        Dictionary(_, value) => column_kind(value),
        _ => ColumnKind::Other,
    }
}

/// A table handed over as a stream of record batches (an Arrow C stream
/// from Python: pyarrow, Polars, pandas, DuckDB), called `path` in errors
/// and reports. Read batch by batch and kept as the batches come: their
/// buffers are the producer's, not copies (the encoder reads any string,
/// dictionary or numeric width). Row ids are the stream's
/// order. A batch whose column types differ from the stream's schema, or
/// a stream error, is a [`SourceError::Read`].
pub fn read_batches(
    path: impl Into<PathBuf>,
    reader: impl arrow::record_batch::RecordBatchReader,
) -> Result<TableData, SourceError> {
    let path = path.into();
    let schema = reader.schema();
    let read_error = |message: String| SourceError::Read { path: path.clone(), message };
    let types = |s: &Schema| s.fields().iter().map(|f| f.data_type().clone()).collect::<Vec<_>>();
    let want = types(&schema);
    let mut batches = Vec::new();
    let mut total: u64 = 0;
    for batch in reader {
        let batch = batch.map_err(|e| read_error(clean_message(&e.to_string())))?;
        // Names, nullability and metadata may vary by batch (the binder
        // reads the stream's); the encoder needs the types.
        if types(batch.schema_ref()) != want {
            return Err(read_error(format!(
                "batch {} does not have the stream's column types",
                batches.len()
            )));
        }
        if batch.num_rows() == 0 {
            continue;
        }
        total += batch.num_rows() as u64;
        if total > u64::from(u32::MAX) {
            return Err(SourceError::TooManyRows { path, rows: total });
        }
        batches.push(batch);
    }
    Ok(TableData { path, arrow_schema: schema, batches, rows: total as u32 })
}

/// Reads `path` in input order: CSV with arrow-csv, Parquet with the
/// `parquet` crate's Arrow reader (one file, its row groups in order). An
/// `s3://` URL is read from its store with the environment's settings
/// ([`crate::object`]).
pub async fn read_table(path: &Path, options: &ReadOptions) -> Result<TableData, SourceError> {
    if let Some(url) = crate::ObjectUrl::of_path(path) {
        let settings = crate::S3Settings::from_env();
        return crate::object::read_object(&url?, options, &settings).await;
    }
    let open_error = |message: String| SourceError::Open { path: path.to_path_buf(), message };
    let meta = std::fs::metadata(path).map_err(|e| open_error(e.to_string()))?;
    if !meta.is_file() {
        return Err(open_error("not a regular file".into()));
    }
    let format = options.format.unwrap_or_else(|| DataFormat::from_path(path));
    let (arrow_schema, batches) = match format {
        DataFormat::Parquet => {
            if !options.schema.is_empty() {
                return Err(SourceError::Schema(
                    "a Parquet file carries its own schema; --schema is for CSV".into(),
                ));
            }
            read_parquet(path, options.threads)?
        }
        DataFormat::Csv => crate::csv_file::read_csv(path, options)?,
    };
    let total: u64 = batches.iter().map(|b| b.num_rows() as u64).sum();
    let rows = u32::try_from(total)
        .map_err(|_| SourceError::TooManyRows { path: path.to_path_buf(), rows: total })?;
    Ok(TableData { path: path.to_path_buf(), arrow_schema, batches, rows })
}

/// The file's columns dealt out to up to `threads` readers (column `i` to
/// reader `i % readers`), each decoding its own in the file's batches, and
/// stitched back batch by batch: the same batches as one reader's.
fn read_parquet(
    path: &Path,
    threads: usize,
) -> Result<(Arc<Schema>, Vec<RecordBatch>), SourceError> {
    let read_error = |e: &dyn std::fmt::Display| SourceError::Read {
        path: path.to_path_buf(),
        message: clean_message(&e.to_string()),
    };
    let builder = || {
        let file = std::fs::File::open(path)
            .map_err(|e| SourceError::Open { path: path.to_path_buf(), message: e.to_string() })?;
        ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| read_error(&e))
    };
    let first = builder()?;
    let schema = first.schema().clone();
    let readers = threads.clamp(1, schema.fields().len().max(1));
    let read = |builder: ParquetRecordBatchReaderBuilder<std::fs::File>, reader: usize| {
        let builder = if readers == 1 {
            builder
        } else {
            let columns = (reader..schema.fields().len()).step_by(readers);
            let mask = ProjectionMask::roots(builder.parquet_schema(), columns);
            builder.with_projection(mask)
        };
        let batches = builder.with_batch_size(BATCH_ROWS).build().map_err(|e| read_error(&e))?;
        batches.collect::<Result<Vec<_>, _>>().map_err(|e| read_error(&e))
    };
    if readers == 1 {
        return Ok((schema.clone(), read(first, 0)?));
    }
    let parts: Vec<Vec<RecordBatch>> = std::thread::scope(|scope| {
        let read = &read;
        let helpers: Vec<_> =
            (1..readers).map(|r| scope.spawn(move || read(builder()?, r))).collect();
        let mut parts = vec![read(first, 0)];
        parts.extend(helpers.into_iter().map(|h| h.join().expect("parquet reader panicked")));
        parts.into_iter().collect::<Result<Vec<_>, SourceError>>()
    })?;
    let batches = parts[0].len();
    if parts.iter().any(|p| p.len() != batches) {
        return Err(read_error(&"columns of unequal length"));
    }
    let mut stitched = Vec::with_capacity(batches);
    for b in 0..batches {
        let mut columns: Vec<Option<ArrayRef>> = vec![None; schema.fields().len()];
        for (r, part) in parts.iter().enumerate() {
            for (k, column) in part[b].columns().iter().enumerate() {
                columns[r + k * readers] = Some(column.clone());
            }
        }
        let columns = columns.into_iter().map(|c| c.expect("every column read")).collect();
        stitched.push(RecordBatch::try_new(schema.clone(), columns).map_err(|e| read_error(&e))?);
    }
    Ok((schema, stitched))
}

#[cfg(test)]
mod tests {
    use arrow::array::{Float64Array, Int64Array, StringArray};

    use super::*;

    /// Columns dealt out to readers and stitched back give the one
    /// reader's batches, over row groups that batches straddle.
    #[test]
    fn parquet_columns_read_on_threads_are_the_same_table() {
        let rows = 20_000;
        let schema = Arc::new(Schema::new(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("b", DataType::Utf8, true),
            Field::new("c", DataType::Float64, false),
            Field::new("d", DataType::Utf8, false),
            Field::new("e", DataType::Int64, false),
        ]));
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from_iter((0..rows).map(|i| (i % 9 != 0).then_some(i % 101)))),
            Arc::new(StringArray::from_iter(
                (0..rows).map(|i| (i % 4 != 0).then(|| format!("b{i}"))),
            )),
            Arc::new(Float64Array::from_iter_values((0..rows).map(|i| i as f64 / 7.0))),
            Arc::new(StringArray::from_iter_values((0..rows).map(|i| format!("d{}", i % 13)))),
            Arc::new(Int64Array::from_iter_values((0..rows).map(|i| -i))),
        ];
        let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let props = parquet::file::properties::WriterProperties::builder()
            .set_max_row_group_row_count(Some(7_000))
            .build();
        let file = std::fs::File::create(&path).unwrap();
        let mut writer = parquet::arrow::ArrowWriter::try_new(file, schema, Some(props)).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        let (schema, one) = read_parquet(&path, 1).unwrap();
        assert_eq!(arrow::compute::concat_batches(&schema, &one).unwrap(), batch);
        for threads in [2, 3, 5, 9] {
            let (got_schema, got) = read_parquet(&path, threads).unwrap();
            assert_eq!(
                (got_schema.clone(), got),
                (schema.clone(), one.clone()),
                "{threads} threads"
            );
        }
    }
}
