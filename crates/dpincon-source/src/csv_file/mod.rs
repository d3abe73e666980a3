//! CSV files: types inferred by Arrow's rules ([`infer`]), rows decoded by
//! arrow-csv.
//!
//! The file is read twice, both times in order: once by the `csv` crate to
//! infer the column types (and to refuse a ragged row or invalid UTF-8 with
//! its line before anything is decoded), once by arrow-csv into batches.
//! No DataFusion session: on a small table its set-up cost more than the
//! whole read. A cluster's executors read byte ranges of it instead
//! ([`ranges`]), every column's type declared.

pub(crate) mod infer;
pub(crate) mod ranges;

use std::fs::File;
use std::io::{BufReader, Read, Seek};
use std::path::Path;
use std::sync::Arc;

use arrow::csv::ReaderBuilder;
use arrow::datatypes::{Field, Schema};
use arrow::record_batch::RecordBatch;

use self::infer::InferredType;
use crate::arrow_io::{BATCH_ROWS, clean_message};
use crate::{ReadOptions, SchemaOverride, SourceError};

/// Reads a CSV file with a header row, in input order; an empty cell is NULL.
pub(crate) fn read_csv(
    path: &Path,
    options: &ReadOptions,
) -> Result<(Arc<Schema>, Vec<RecordBatch>), SourceError> {
    let file = File::open(path)
        .map_err(|e| SourceError::Open { path: path.to_path_buf(), message: e.to_string() })?;
    read_csv_from(file, path, options)
}

/// [`read_csv`] on any seekable bytes (an object fetched from a store);
/// `path` names them in errors.
pub(crate) fn read_csv_from(
    mut source: impl Read + Seek,
    path: &Path,
    options: &ReadOptions,
) -> Result<(Arc<Schema>, Vec<RecordBatch>), SourceError> {
    let read_error = |message: String| SourceError::Read { path: path.to_path_buf(), message };
    let inferred = infer_schema(BufReader::with_capacity(1 << 20, &mut source), options.infer_rows)
        .map_err(|e| read_error(e.to_string()))?;
    let schema = Arc::new(override_schema(inferred, &options.schema)?);
    source.rewind().map_err(|e| read_error(e.to_string()))?;
    let reader = ReaderBuilder::new(schema.clone())
        .with_header(true)
        .with_batch_size(BATCH_ROWS)
        .build(BufReader::with_capacity(1 << 20, source))
        .map_err(|e| read_error(clean_message(&e.to_string())))?;
    let batches = reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| read_error(clean_message(&e.to_string())))?;
    Ok((schema, batches))
}

/// Why a CSV table's schema cannot be inferred.
#[derive(Debug, thiserror::Error)]
enum InferError {
    #[error("the header names column '{0}' twice")]
    TwiceNamed(String),
    /// The `csv` crate's error, in arrow-csv's words ([`csv_message`]).
    #[error("{message}")]
    Csv {
        message: String,
        #[source]
        source: csv::Error,
    },
}

impl InferError {
    fn csv(source: csv::Error, names: &[String]) -> Self {
        InferError::Csv { message: csv_message(&source, names), source }
    }
}

/// The header's names with the types of `infer_rows` rows (all by default).
fn infer_schema(
    reader: impl std::io::Read,
    infer_rows: Option<usize>,
) -> Result<Schema, InferError> {
    let mut csv = csv::ReaderBuilder::new().has_headers(true).from_reader(reader);
    let names: Vec<String> =
        csv.headers().map_err(|e| InferError::csv(e, &[]))?.iter().map(str::to_string).collect();
    for (i, name) in names.iter().enumerate() {
        if names[..i].contains(name) {
            return Err(InferError::TwiceNamed(name.clone()));
        }
    }
    let mut types = vec![InferredType::default(); names.len()];
    let mut record = csv::StringRecord::new();
    let mut rows = 0;
    while rows < infer_rows.unwrap_or(usize::MAX)
        && csv.read_record(&mut record).map_err(|e| InferError::csv(e, &names))?
    {
        rows += 1;
        for (t, cell) in types.iter_mut().zip(record.iter()) {
            if !cell.is_empty() {
                t.update(cell);
            }
        }
    }
    let fields = names.iter().zip(types).map(|(n, t)| Field::new(n, t.data_type(), true));
    Ok(Schema::new(fields.collect::<Vec<_>>()))
}

/// The `csv` crate's errors in arrow-csv's words, with the line (and the
/// column, once the header's `names` are known).
fn csv_message(e: &csv::Error, names: &[String]) -> String {
    let at = |pos: Option<&csv::Position>| pos.map(|p| format!(" at line {}", p.line()));
    match e.kind() {
        csv::ErrorKind::UnequalLengths { pos, expected_len, len } => format!(
            "Encountered unequal lengths between records on CSV file. Expected {expected_len} \
             records, found {len} records{}",
            at(pos.as_ref()).unwrap_or_default()
        ),
        csv::ErrorKind::Utf8 { pos, err } => {
            let field = err.field();
            let column = names.get(field).map(|n| format!("column '{n}' ")).unwrap_or_default();
            format!(
                "invalid UTF-8 in {column}(field {field}){}",
                at(pos.as_ref()).unwrap_or_default()
            )
        }
        _ => e.to_string(),
    }
}

fn override_schema(inferred: Schema, overrides: &[SchemaOverride]) -> Result<Schema, SourceError> {
    for o in overrides {
        if inferred.field_with_name(&o.column).is_err() {
            let names: Vec<&str> = inferred.fields().iter().map(|f| f.name().as_str()).collect();
            return Err(SourceError::Schema(format!(
                "unknown column '{}' (columns: {})",
                o.column,
                names.join(", ")
            )));
        }
    }
    let fields: Vec<Field> = inferred
        .fields()
        .iter()
        .map(|f| match overrides.iter().find(|o| &o.column == f.name()) {
            Some(o) => Field::new(f.name(), o.data_type.clone(), true),
            None => f.as_ref().clone(),
        })
        .collect();
    Ok(Schema::new(fields))
}

#[cfg(test)]
mod tests {
    use arrow::csv::reader::Format;
    use arrow::datatypes::DataType;

    use super::*;

    fn ours(text: &str) -> Result<Schema, InferError> {
        infer_schema(text.as_bytes(), None)
    }

    #[test]
    fn schemas_match_arrow_csv_on_mixed_columns() {
        let text = "I,F,B,D,T,S,N,M\n\
                    1,1.5,true,2020-01-01,2020-01-01 00:00:00,x,,1\n\
                    -2,3,False,2021-12-31,2020-01-01T00:00:00.25,7,,2.0\n\
                    ,,,,,,,\n\
                    4,NaN,TRUE,2022-02-02,2020-01-01 00:00:00,\"q,r\",,2020-01-01\n";
        let (arrow, _) =
            Format::default().with_header(true).infer_schema(text.as_bytes(), None).unwrap();
        let ours = ours(text).unwrap();
        assert_eq!(ours, arrow);
        let types: Vec<&DataType> = ours.fields().iter().map(|f| f.data_type()).collect();
        assert_eq!(types[0], &DataType::Int64);
        assert_eq!(types[1], &DataType::Float64);
        assert_eq!(types[6], &DataType::Null);
        assert_eq!(types[7], &DataType::Utf8);
    }

    #[test]
    fn infer_rows_limits_the_rows_looked_at() {
        let text = "A\n1\n2\nx\n";
        assert_eq!(
            infer_schema(text.as_bytes(), Some(2)).unwrap().field(0).data_type(),
            &DataType::Int64
        );
        assert_eq!(ours(text).unwrap().field(0).data_type(), &DataType::Utf8);
    }

    #[test]
    fn bad_files_are_refused_with_their_line() {
        let ragged = ours("A,B\n1,2\n3\n").unwrap_err().to_string();
        assert!(
            ragged.contains("Expected 2 records, found 1") && ragged.contains("line 3"),
            "{ragged}"
        );
        let utf8 = infer_schema(&b"A,B\n1,a\n1,\xff\n"[..], None).unwrap_err().to_string();
        assert!(utf8.contains("column 'B' (field 1) at line 3"), "{utf8}");
        let twice = ours("A,B,A\n1,2,3\n").unwrap_err().to_string();
        assert!(twice.contains("'A' twice"), "{twice}");
    }
}
