//! What a table is and how it is read ([`TableSpec`]), declared once for
//! every entry point (`run`'s flags and job files, coordinator datasets,
//! audit suites), and the one check of a declared schema against its
//! table ([`TableSpec::declared_schema`]).

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use arrow::datatypes::DataType;
use dpincon_constraints::TableSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{
    DataFormat, ObjectUrl, PostgresSource, ReadOptions, SchemaOverride, SourceError, TableData,
    csv_header, declared_schema, parquet_schema, parse_schema_override, read_table,
};

/// Column types, `Name:type, ...` (types `int`, `float`, `string`,
/// `bool`), parsed once where an entry point reads them: each column
/// named once, at least one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnTypes(Vec<SchemaOverride>);

impl ColumnTypes {
    /// The entries, in the order given.
    pub fn entries(&self) -> &[SchemaOverride] {
        &self.0
    }

    /// The column names, in the order given.
    pub fn names(&self) -> Vec<&str> {
        self.0.iter().map(|e| e.column.as_str()).collect()
    }
}

impl FromStr for ColumnTypes {
    type Err = SourceError;

    fn from_str(text: &str) -> Result<Self, SourceError> {
        let entries = parse_schema_override(text)?;
        if entries.is_empty() {
            return Err(SourceError::Schema(
                "no column declared (give every column, e.g. \"Zip:int, City:string\")".into(),
            ));
        }
        for (i, e) in entries.iter().enumerate() {
            if entries[..i].iter().any(|p| p.column == e.column) {
                return Err(SourceError::Schema(format!("column '{}' declared twice", e.column)));
            }
        }
        Ok(ColumnTypes(entries))
    }
}

impl fmt::Display for ColumnTypes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            let ty = match e.data_type {
                DataType::Int64 => "int",
                DataType::Float64 => "float",
                DataType::Boolean => "bool",
                _ => "string",
            };
            write!(f, "{}{}:{ty}", if i == 0 { "" } else { ", " }, e.column)?;
        }
        Ok(())
    }
}

impl Serialize for ColumnTypes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ColumnTypes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(|e: SourceError| serde::de::Error::custom(schema_message(e)))
    }
}

/// A schema error's own words (without the variant's prefix).
fn schema_message(e: SourceError) -> String {
    match e {
        SourceError::Schema(message) => message,
        other => other.to_string(),
    }
}

/// Where a table is and how it is read: a file (`data`: a path, or an
/// `s3://` URL) or a PostgreSQL source, its format and column types. The
/// job's other settings (bounds, ledger) are the engine's `DataSpec`,
/// which flattens this.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(rename_all = "kebab-case")]
pub struct TableSpec {
    /// The table: CSV with a header row, or Parquet; a path or an
    /// `s3://bucket/key` URL (or a prefix of Parquet objects).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "clap", arg(long))]
    pub data: Option<PathBuf>,
    /// A PostgreSQL table or query instead of `data`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "clap", arg(skip))]
    pub postgres: Option<PostgresSource>,
    /// Force the data format instead of going by the extension: csv or parquet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "clap", arg(long = "data-format", id = "data_format"))]
    pub format: Option<DataFormat>,
    /// Column types to force, e.g. `Zip:string,Salary:int`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "clap", arg(long))]
    pub schema: Option<ColumnTypes>,
    /// Infer CSV column types from this many rows (default: all rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "clap", arg(long))]
    pub infer_rows: Option<usize>,
    /// The name of a table handed over in memory (the Python package's
    /// `dataset=`), which has no path to be called by: what its ledger and
    /// report call it. Set by the caller that holds the table, never read
    /// from a job file or a flag (a file names its table by `data`).
    #[serde(skip)]
    #[cfg_attr(feature = "clap", arg(skip))]
    pub dataset: Option<String>,
}

impl TableSpec {
    /// The file or object at `path`.
    pub fn file(path: impl Into<PathBuf>) -> Self {
        TableSpec { data: Some(path.into()), ..TableSpec::default() }
    }

    /// The PostgreSQL table or query `source`.
    pub fn postgres(source: PostgresSource) -> Self {
        TableSpec { postgres: Some(source), ..TableSpec::default() }
    }

    /// A table the caller holds in memory, called `dataset` (if named).
    pub fn in_memory(dataset: Option<String>) -> Self {
        TableSpec { dataset, ..TableSpec::default() }
    }

    /// `self`, with every setting `over` gives taken from `over` (flags
    /// over a job file); a table `over` names replaces this one's.
    pub fn overridden_by(self, over: TableSpec) -> TableSpec {
        let (data, postgres) = if over.data.is_some() || over.postgres.is_some() {
            (over.data, over.postgres)
        } else {
            (self.data, self.postgres)
        };
        TableSpec {
            data,
            postgres,
            format: over.format.or(self.format),
            schema: over.schema.or(self.schema),
            infer_rows: over.infer_rows.or(self.infer_rows),
            dataset: over.dataset.or(self.dataset),
        }
    }

    /// What ledgers, reports and errors call the table: its path, the
    /// PostgreSQL source's name without its password, or an in-memory
    /// table's `dataset` name (empty when it has none).
    pub fn name(&self) -> PathBuf {
        match (&self.postgres, &self.data, &self.dataset) {
            (Some(pg), _, _) => PathBuf::from(pg.display_name()),
            (None, Some(path), _) => path.clone(),
            (None, None, Some(dataset)) => PathBuf::from(dataset),
            (None, None, None) => PathBuf::new(),
        }
    }

    /// Whether the spec names a table to read (a path or a PostgreSQL
    /// source), as opposed to one the caller hands over in memory.
    pub fn names_a_source(&self) -> bool {
        self.data.is_some() || self.postgres.is_some()
    }

    /// The file's format: declared, else from its extension (`None` for
    /// PostgreSQL or no table).
    pub fn file_format(&self) -> Option<DataFormat> {
        match (&self.postgres, &self.data) {
            (None, Some(path)) => Some(self.format.unwrap_or_else(|| DataFormat::from_path(path))),
            _ => None,
        }
    }

    /// The table as a job reads a declared table (the coordinator's
    /// datasets, the audit's): a CSV column's type is its declared one,
    /// so inference only finds the names (one row) and no private row
    /// decides a type; a Parquet footer declares the types itself (the
    /// declaration was checked against it: [`TableSpec::declared_schema`]).
    pub fn with_declared_types(mut self) -> Self {
        match (self.file_format(), &self.schema) {
            (Some(DataFormat::Csv), Some(_)) => self.infer_rows = Some(1),
            (Some(DataFormat::Parquet), Some(_)) => self.schema = None,
            _ => {}
        }
        self
    }

    /// How the readers read it, decoding on `threads`.
    pub fn read_options(&self, threads: usize) -> ReadOptions {
        ReadOptions {
            format: self.format,
            schema: self.schema.as_ref().map(|s| s.0.clone()).unwrap_or_default(),
            infer_rows: self.infer_rows,
            threads,
        }
    }

    /// Reads the table, in input order (SPEC §1), decoding on `threads`.
    pub async fn read(&self, threads: usize) -> Result<TableData, SourceError> {
        match (&self.postgres, &self.data) {
            (Some(pg), _) => pg.read().await,
            (None, Some(path)) => read_table(path, &self.read_options(threads)).await,
            (None, None) => {
                Err(SourceError::Schema("no table given (`data` or `postgres`)".into()))
            }
        }
    }

    /// The columns as the constraint binder will see them, from the file's
    /// header or footer only (no row read), checked against the declared
    /// `schema`: a CSV header must name exactly the declared columns, in
    /// order; a Parquet footer must hold the same columns and kinds. `None`
    /// when the types are not known without rows (CSV without `schema`,
    /// PostgreSQL). The mismatches are [`SourceError::Schema`]; a file that
    /// cannot be read is its own error.
    pub fn declared_schema(&self) -> Result<Option<TableSchema>, SourceError> {
        let (Some(path), Some(format)) = (&self.data, self.file_format()) else {
            return Ok(None);
        };
        match (format, &self.schema) {
            (DataFormat::Parquet, declared) => {
                let file = parquet_schema(path)?;
                if let Some(declared) = declared
                    && declared_schema(declared.entries()).columns != file.columns
                {
                    return Err(SourceError::Schema(format!(
                        "does not match the Parquet footer of '{}': it has [{}], the schema \
                         [{declared}]",
                        path.display(),
                        describe(&file)
                    )));
                }
                Ok(Some(file))
            }
            (DataFormat::Csv, Some(declared)) => {
                check_header(path, &csv_header(path)?, declared)?;
                Ok(Some(declared_schema(declared.entries())))
            }
            (DataFormat::Csv, None) => Ok(None),
        }
    }
}

/// A CSV `header` must name exactly the `declared` columns, in order. The
/// messages of this check read after "`schema` " ("`schema` must declare ...").
pub fn check_header(
    path: &Path,
    header: &[String],
    declared: &ColumnTypes,
) -> Result<(), SourceError> {
    let names = declared.names();
    if header != names {
        return Err(SourceError::Schema(format!(
            "must declare every column of '{}' in order: the header has [{}], the schema [{}]",
            path.display(),
            header.join(", "),
            names.join(", ")
        )));
    }
    Ok(())
}

fn describe(schema: &TableSchema) -> String {
    let columns = schema.columns.iter().map(|(n, k)| format!("{n}:{k:?}"));
    columns.collect::<Vec<_>>().join(", ")
}

/// Whether `path` is an object-store URL (never relative to a file that
/// names it).
pub fn is_object_url(path: &Path) -> bool {
    path.to_str().is_some_and(ObjectUrl::is_url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_types_name_each_column_once_and_print_as_they_parse() {
        let types: ColumnTypes = "Zip:int, City:string,ok:boolean".parse().unwrap();
        assert_eq!(types.to_string(), "Zip:int, City:string, ok:bool");
        assert_eq!(types.to_string().parse::<ColumnTypes>().unwrap(), types);
        let refused = |text: &str| schema_message(text.parse::<ColumnTypes>().unwrap_err());
        assert!(refused("Zip").contains("'Zip' is not of the form Column:type"));
        assert!(refused("Zip:integer64").contains("unknown type 'integer64'"));
        assert!(refused(" , ").contains("no column declared"));
        assert!(refused("Zip:int,Zip:string").contains("'Zip' declared twice"));
    }

    #[test]
    fn a_csv_header_must_name_the_declared_columns_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("t.csv");
        std::fs::write(&csv, "Zip, City\n9x12,LA\n").unwrap();
        let mut spec = TableSpec::file(&csv);
        assert!(spec.declared_schema().unwrap().is_none(), "no declared types: none known");
        spec.schema = Some("Zip:int, City:string".parse().unwrap());
        assert_eq!(spec.declared_schema().unwrap().unwrap().columns.len(), 2);
        spec.schema = Some("City:string, Zip:int".parse().unwrap());
        let err = spec.declared_schema().unwrap_err().to_string();
        assert!(err.contains("the header has [Zip, City], the schema [City, Zip]"), "{err}");
        let missing = TableSpec { data: Some(dir.path().join("none.csv")), ..spec };
        assert!(matches!(missing.declared_schema(), Err(SourceError::Open { .. })));
    }

    #[test]
    fn a_declared_csv_infers_names_only_and_the_name_is_the_path_or_the_redacted_source() {
        let spec = TableSpec { schema: Some("A:int".parse().unwrap()), ..TableSpec::file("t.csv") };
        assert_eq!(spec.clone().with_declared_types().infer_rows, Some(1));
        let parquet = TableSpec { data: Some("t.parquet".into()), ..spec.clone() };
        let read = parquet.with_declared_types();
        assert_eq!((read.infer_rows, read.schema), (None, None), "the footer declares the types");
        assert_eq!(spec.name(), PathBuf::from("t.csv"));
        let pg = PostgresSource {
            url: "postgres://u:secret@h:5432/db".into(),
            table: Some("t".into()),
            query: None,
            order_by: None,
            password_env: None,
        };
        let name = TableSpec::postgres(pg).name().display().to_string();
        assert!(name.contains("table t") && !name.contains("secret"), "{name}");
    }
}
