//! Reading and writing tables as rows of optional strings: CSV (header row,
//! empty cell = NULL, RFC 4180 quoting) or Parquet, chosen by extension.
//!
//! Everything here streams: readers hand out one row at a time and writers
//! buffer at most one Arrow batch (Parquet) or one `BufWriter` (CSV). Output
//! goes to a temporary file in the target directory that is renamed over the
//! target only when complete, so an error never leaves a half-written file.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Builder, Int64Builder, RecordBatch, StringBuilder};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use dpincon_source::{InferredType, OutputFile};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use serde::Serialize;

use crate::GenerateError;

/// Rows per Arrow batch when writing Parquet, and per Parquet row group
/// (times 16): bounds the writer's memory whatever the table's size.
const BATCH_ROWS: usize = 8192;
const ROW_GROUP_ROWS: usize = 16 * BATCH_ROWS;

/// A table file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TableFormat {
    /// Comma-separated values with a header row; an empty cell is NULL.
    Csv,
    /// Apache Parquet.
    Parquet,
}

impl TableFormat {
    /// The format a path's extension implies: `.parquet` / `.pq` is Parquet,
    /// anything else CSV (the convention of `dpincon-cli run`).
    pub fn from_path(path: &Path) -> Self {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("parquet") || e.eq_ignore_ascii_case("pq") => {
                TableFormat::Parquet
            }
            _ => TableFormat::Csv,
        }
    }

    /// Parse `csv` or `parquet` (case-insensitive).
    pub fn parse(name: &str) -> Result<Self, GenerateError> {
        match name.to_ascii_lowercase().as_str() {
            "csv" => Ok(TableFormat::Csv),
            "parquet" => Ok(TableFormat::Parquet),
            other => Err(GenerateError::Option(format!(
                "unknown table format '{other}' (expected csv or parquet)"
            ))),
        }
    }
}

/// What a column's values look like, as the engine's CSV type inference
/// (`dpincon_source::InferredType`) sees them: a join semi-lattice
/// `Null < Int < Float < Str` (one textual value makes the whole column a
/// string column; booleans and dates are text here).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    /// No value seen yet (all NULL).
    Null,
    /// An integer the engine reads as one, fitting an i64.
    Int,
    /// A number the engine reads as a float (or an integer that parses
    /// only as one).
    Float,
    /// Anything else.
    Str,
}

impl Kind {
    /// The kind of one non-NULL value: the engine's type of the value
    /// alone, where the value parses as it (a Unicode digit matches
    /// Arrow's `\d` but is no Rust number: text).
    pub(crate) fn of(value: &str) -> Kind {
        match InferredType::of(value).data_type() {
            DataType::Int64 if value.parse::<i64>().is_ok() => Kind::Int,
            DataType::Int64 | DataType::Float64 if value.parse::<f64>().is_ok() => Kind::Float,
            _ => Kind::Str,
        }
    }

    /// The least upper bound.
    pub(crate) fn join(self, other: Kind) -> Kind {
        self.max(other)
    }

    /// Whether values of this kind compare as numbers.
    pub(crate) fn is_numeric(self) -> bool {
        matches!(self, Kind::Int | Kind::Float)
    }
}

/// The kind a Parquet column's Arrow type starts from: a number stays a
/// number as long as its values still parse; every other type (strings,
/// booleans, dates) is written back as text.
fn arrow_kind(t: &DataType) -> Kind {
    if t.is_integer() {
        Kind::Int
    } else if t.is_floating() || matches!(t, DataType::Decimal128(..) | DataType::Decimal256(..)) {
        Kind::Float
    } else {
        Kind::Str
    }
}

/// The column names of a table and the kinds its format fixes up front
/// (Parquet types; `Null` for CSV, whose kinds come from the values).
#[derive(Debug, Clone)]
pub(crate) struct Header {
    pub names: Vec<String>,
    pub kinds: Vec<Kind>,
}

impl Header {
    pub(crate) fn position(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }
}

enum Source {
    Csv(csv::Reader<BufReader<File>>),
    Parquet(ParquetRecordBatchReader),
}

/// A streaming reader of a CSV or Parquet table.
pub(crate) struct TableReader {
    path: PathBuf,
    header: Header,
    source: Source,
}

impl TableReader {
    /// Open `path`, by extension.
    pub(crate) fn open(path: &Path) -> Result<Self, GenerateError> {
        let file = File::open(path)
            .map_err(|source| GenerateError::Read { path: path.to_path_buf(), source })?;
        let format_err =
            |message: String| GenerateError::Format { path: path.to_path_buf(), message };
        match TableFormat::from_path(path) {
            TableFormat::Csv => {
                let mut reader = csv::ReaderBuilder::new()
                    .has_headers(true)
                    .flexible(false)
                    .from_reader(BufReader::with_capacity(1 << 20, file));
                let names: Vec<String> = reader
                    .headers()
                    .map_err(|e| csv_error(path, e))?
                    .iter()
                    .map(str::to_string)
                    .collect();
                if names.is_empty() || names.iter().all(String::is_empty) {
                    return Err(format_err("no header row (the file is empty)".into()));
                }
                let kinds = vec![Kind::Null; names.len()];
                Ok(TableReader {
                    path: path.into(),
                    header: Header { names, kinds },
                    source: Source::Csv(reader),
                })
            }
            TableFormat::Parquet => {
                let builder = ParquetRecordBatchReaderBuilder::try_new(file)
                    .map_err(|e| format_err(format!("not a readable Parquet file: {e}")))?;
                let schema = builder.schema().clone();
                let reader = builder
                    .with_batch_size(BATCH_ROWS)
                    .build()
                    .map_err(|e| format_err(format!("not a readable Parquet file: {e}")))?;
                let names = schema.fields().iter().map(|f| f.name().clone()).collect();
                let kinds = schema.fields().iter().map(|f| arrow_kind(f.data_type())).collect();
                Ok(TableReader {
                    path: path.into(),
                    header: Header { names, kinds },
                    source: Source::Parquet(reader),
                })
            }
        }
    }

    pub(crate) fn header(&self) -> &Header {
        &self.header
    }

    /// Call `f(row, values)` for every row in order (`row` 0-based; `None`
    /// is NULL); returns the number of rows.
    pub(crate) fn for_each(
        self,
        mut f: impl FnMut(u64, &[Option<&str>]) -> Result<(), GenerateError>,
    ) -> Result<u64, GenerateError> {
        let path = self.path;
        let mut row = 0u64;
        match self.source {
            Source::Csv(mut reader) => {
                let mut record = csv::StringRecord::new();
                loop {
                    match reader.read_record(&mut record) {
                        Ok(true) => {}
                        Ok(false) => break,
                        Err(e) => return Err(csv_error(&path, e)),
                    }
                    let values: Vec<Option<&str>> =
                        record.iter().map(|v| (!v.is_empty()).then_some(v)).collect();
                    f(row, &values)?;
                    row += 1;
                }
            }
            Source::Parquet(reader) => {
                let options = FormatOptions::default();
                for batch in reader {
                    let batch = batch.map_err(|e| GenerateError::Format {
                        path: path.clone(),
                        message: format!("cannot read Parquet batch after row {row}: {e}"),
                    })?;
                    let mut columns: Vec<Vec<Option<String>>> = Vec::new();
                    for (c, array) in batch.columns().iter().enumerate() {
                        let formatter =
                            ArrayFormatter::try_new(array.as_ref(), &options).map_err(|e| {
                                GenerateError::Format {
                                    path: path.clone(),
                                    message: format!(
                                        "column '{}': cannot display its type: {e}",
                                        self.header.names[c]
                                    ),
                                }
                            })?;
                        columns.push(
                            (0..batch.num_rows())
                                .map(|i| {
                                    (!array.is_null(i)).then(|| formatter.value(i).to_string())
                                })
                                .collect(),
                        );
                    }
                    for i in 0..batch.num_rows() {
                        let values: Vec<Option<&str>> =
                            columns.iter().map(|c| c[i].as_deref()).collect();
                        f(row, &values)?;
                        row += 1;
                    }
                }
            }
        }
        Ok(row)
    }
}

fn csv_error(path: &Path, e: csv::Error) -> GenerateError {
    let line = e.position().map(|p| format!("line {}: ", p.line())).unwrap_or_default();
    let message = match e.kind() {
        csv::ErrorKind::Io(io) => {
            return GenerateError::Read {
                path: path.into(),
                source: std::io::Error::new(io.kind(), io.to_string()),
            };
        }
        csv::ErrorKind::UnequalLengths { expected_len, len, .. } => {
            format!("{line}{len} fields where the header has {expected_len}")
        }
        csv::ErrorKind::Utf8 { .. } => format!("{line}not valid UTF-8"),
        _ => format!("{line}{e}"),
    };
    GenerateError::Format { path: path.into(), message }
}

/// The output path must not be the input (SPEC §9: never modify the input).
/// Compares canonical paths, so `./a.csv`, a symlink or a hard-to-spot
/// `../dir/a.csv` are all caught; an input that does not exist is an error.
pub(crate) fn check_distinct(input: &Path, out: &Path) -> Result<(), GenerateError> {
    let canonical_in = std::fs::canonicalize(input)
        .map_err(|source| GenerateError::Read { path: input.into(), source })?;
    let canonical_out = match std::fs::canonicalize(out) {
        Ok(p) => p,
        // The output does not exist yet: compare its would-be location.
        Err(_) => match (out.parent(), out.file_name()) {
            (Some(parent), Some(name)) => {
                let parent = if parent.as_os_str().is_empty() { Path::new(".") } else { parent };
                match std::fs::canonicalize(parent) {
                    Ok(p) => p.join(name),
                    Err(_) => return Ok(()), // the write will report the missing folder
                }
            }
            _ => return Ok(()),
        },
    };
    if canonical_in == canonical_out {
        return Err(GenerateError::SameFile { path: out.into() });
    }
    Ok(())
}

enum Sink {
    Csv(csv::Writer<BufWriter<File>>),
    Parquet(ParquetSink),
}

struct ParquetSink {
    writer: ArrowWriter<File>,
    schema: SchemaRef,
    builders: Vec<ColumnBuilder>,
    buffered: usize,
}

enum ColumnBuilder {
    Int(Int64Builder),
    Float(Float64Builder),
    Str(StringBuilder),
}

impl ColumnBuilder {
    fn finish(&mut self) -> ArrayRef {
        match self {
            ColumnBuilder::Int(b) => Arc::new(b.finish()),
            ColumnBuilder::Float(b) => Arc::new(b.finish()),
            ColumnBuilder::Str(b) => Arc::new(b.finish()),
        }
    }
}

/// A streaming writer to an [`OutputFile`] that becomes `out` on
/// [`TableWriter::finish`]; dropped unfinished, `out` is left as it was.
pub(crate) struct TableWriter {
    out: PathBuf,
    names: Vec<String>,
    file: OutputFile,
    sink: Sink,
    rows: u64,
}

impl TableWriter {
    /// Start writing `out` in `format`. `kinds` fixes the Parquet column
    /// types (`Int` → Int64, `Float` → Float64, else Utf8); CSV ignores it.
    pub(crate) fn create(
        out: &Path,
        format: TableFormat,
        names: &[String],
        kinds: &[Kind],
    ) -> Result<Self, GenerateError> {
        let write_err = |source| GenerateError::Write { path: out.into(), source };
        let output = OutputFile::create(out).map_err(write_err)?;
        let file = output.file().try_clone().map_err(write_err)?;
        let sink = match format {
            TableFormat::Csv => {
                let mut w =
                    csv::WriterBuilder::new().from_writer(BufWriter::with_capacity(1 << 20, file));
                w.write_record(names).map_err(|e| write_err(e.into()))?;
                Sink::Csv(w)
            }
            TableFormat::Parquet => {
                let fields: Vec<Field> = names
                    .iter()
                    .zip(kinds)
                    .map(|(n, k)| {
                        let t = match k {
                            Kind::Int => DataType::Int64,
                            Kind::Float => DataType::Float64,
                            Kind::Null | Kind::Str => DataType::Utf8,
                        };
                        Field::new(n, t, true)
                    })
                    .collect();
                let schema = Arc::new(Schema::new(fields));
                let props = WriterProperties::builder()
                    .set_compression(Compression::SNAPPY)
                    .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
                    .build();
                let writer = ArrowWriter::try_new(file, schema.clone(), Some(props))
                    .map_err(|e| write_err(std::io::Error::other(e)))?;
                let builders = kinds
                    .iter()
                    .map(|k| match k {
                        Kind::Int => ColumnBuilder::Int(Int64Builder::with_capacity(BATCH_ROWS)),
                        Kind::Float => {
                            ColumnBuilder::Float(Float64Builder::with_capacity(BATCH_ROWS))
                        }
                        Kind::Null | Kind::Str => ColumnBuilder::Str(StringBuilder::new()),
                    })
                    .collect();
                Sink::Parquet(ParquetSink { writer, schema, builders, buffered: 0 })
            }
        };
        Ok(TableWriter { out: out.into(), names: names.to_vec(), file: output, sink, rows: 0 })
    }

    /// Append one row with every cell set ([`TableWriter::write_row`]).
    pub(crate) fn write_cells(&mut self, cells: &[String]) -> Result<(), GenerateError> {
        let values: Vec<Option<&str>> = cells.iter().map(|c| Some(c.as_str())).collect();
        self.write_row(&values)
    }

    /// Append one row (`None` is NULL: an empty CSV cell, a Parquet null).
    pub(crate) fn write_row(&mut self, values: &[Option<&str>]) -> Result<(), GenerateError> {
        let out = &self.out;
        match &mut self.sink {
            Sink::Csv(w) => {
                w.write_record(values.iter().map(|v| v.unwrap_or("")))
                    .map_err(|e| GenerateError::Write { path: out.clone(), source: e.into() })?;
            }
            Sink::Parquet(p) => {
                for (c, (builder, value)) in p.builders.iter_mut().zip(values).enumerate() {
                    let bad = |what: &str| GenerateError::Cell {
                        path: out.clone(),
                        row: self.rows + 1,
                        column: self.names[c].clone(),
                        message: format!("'{}' is not {what}", value.unwrap_or("")),
                    };
                    match (builder, value) {
                        (ColumnBuilder::Int(b), None) => b.append_null(),
                        (ColumnBuilder::Float(b), None) => b.append_null(),
                        (ColumnBuilder::Str(b), None) => b.append_null(),
                        (ColumnBuilder::Int(b), Some(v)) => {
                            b.append_value(v.parse().map_err(|_| bad("a 64-bit integer"))?)
                        }
                        (ColumnBuilder::Float(b), Some(v)) => {
                            b.append_value(v.parse().map_err(|_| bad("a number"))?)
                        }
                        (ColumnBuilder::Str(b), Some(v)) => b.append_value(v),
                    }
                }
                p.buffered += 1;
                if p.buffered == BATCH_ROWS {
                    p.flush(out)?;
                }
            }
        }
        self.rows += 1;
        Ok(())
    }

    /// Flush the sink and commit the file to `out`; returns the number of
    /// rows written.
    pub(crate) fn finish(self) -> Result<u64, GenerateError> {
        let out = self.out;
        let write_err = |source| GenerateError::Write { path: out.clone(), source };
        match self.sink {
            Sink::Csv(w) => {
                let mut inner = w.into_inner().map_err(|e| write_err(e.into_error()))?;
                inner.flush().map_err(write_err)?;
            }
            Sink::Parquet(mut p) => {
                p.flush(&out)?;
                p.writer.close().map_err(|e| write_err(std::io::Error::other(e)))?;
            }
        }
        self.file.commit().map_err(write_err)?;
        Ok(self.rows)
    }
}

impl ParquetSink {
    fn flush(&mut self, out: &Path) -> Result<(), GenerateError> {
        if self.buffered == 0 {
            return Ok(());
        }
        let columns = self.builders.iter_mut().map(ColumnBuilder::finish).collect();
        let write_err =
            |e: String| GenerateError::Write { path: out.into(), source: std::io::Error::other(e) };
        let batch = RecordBatch::try_new(self.schema.clone(), columns)
            .map_err(|e| write_err(e.to_string()))?;
        self.writer.write(&batch).map_err(|e| write_err(e.to_string()))?;
        self.buffered = 0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_arrow_inference() {
        for (v, k) in [
            ("0", Kind::Int),
            ("-12", Kind::Int),
            ("043721", Kind::Int),
            ("0.0", Kind::Float),
            ("0.", Kind::Float),
            (".5", Kind::Float),
            ("1e6", Kind::Float),
            ("-2.5E-3", Kind::Float),
            // Past an i64 the engine reads the column as text, as Arrow does.
            ("99999999999999999999", Kind::Str),
            ("NaN", Kind::Float),
            ("-inf", Kind::Float),
            ("\u{663}", Kind::Str),
            ("", Kind::Str),
            (".", Kind::Str),
            ("-", Kind::Str),
            ("1e", Kind::Str),
            ("e5", Kind::Str),
            ("12a", Kind::Str),
            ("1.2.3", Kind::Str),
            ("CA", Kind::Str),
        ] {
            assert_eq!(Kind::of(v), k, "{v:?}");
        }
        assert_eq!(Kind::Int.join(Kind::Float), Kind::Float);
        assert_eq!(Kind::Null.join(Kind::Int), Kind::Int);
        assert_eq!(Kind::Str.join(Kind::Int), Kind::Str);
    }

    #[test]
    fn format_by_extension() {
        assert_eq!(TableFormat::from_path(Path::new("a/b.PARQUET")), TableFormat::Parquet);
        assert_eq!(TableFormat::from_path(Path::new("a/b.csv")), TableFormat::Csv);
        assert_eq!(TableFormat::from_path(Path::new("noext")), TableFormat::Csv);
        assert!(TableFormat::parse("xlsx").is_err());
    }
}
