//! A job's configuration: the operator's [`DataSpec`] and the options
//! anyone may set ([`ReleaseOptions`], [`TestOptions`]), one type each.

use std::path::PathBuf;

use dpincon_api::{ByteSize, ReleaseOptions, TestOptions};
use dpincon_source::{DataFormat, PostgresSource};
use serde::{Deserialize, Serialize};

/// Everything a job needs: the one configuration type (CLI flags, job files
/// and the coordinator's jobs all become a `JobConfig`). A job file is one
/// flat table of kebab-case keys; a key no part declares is refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct JobConfig {
    /// The constraint file.
    pub constraints: PathBuf,
    /// The table, how it is read, its public bounds and its ledger.
    #[serde(flatten)]
    pub data: DataSpec,
    /// How the measures are released.
    #[serde(flatten)]
    pub release: ReleaseOptions,
    /// Seed, exact values, brute-force detection.
    #[serde(flatten)]
    pub test: TestOptions,
}

/// What only an operator sets on a coordinator (a client names a dataset
/// instead): where the table is and how it is read, the public bounds and
/// quotas of its jobs, and its budget ledger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct DataSpec {
    /// The table (CSV or Parquet); with `postgres`, the name ledgers and
    /// reports use for it ([`PostgresSource::display_name`]).
    #[serde(rename = "data")]
    pub path: PathBuf,
    /// Read the table from PostgreSQL instead of `data`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postgres: Option<PostgresSource>,
    /// Force `csv` or `parquet` instead of going by the extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<DataFormat>,
    /// Column types to force, `Name:type,...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Rows to infer CSV column types from (default: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infer_rows: Option<usize>,
    /// Detection threads (default: all cores).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    /// Memory for the graph's adjacency before it spills to the temporary
    /// directory, e.g. `1GiB` (default: no limit). Never changes a result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit: Option<ByteSize>,
    /// Refuse to measure a conflict graph of more edges (a public quota
    /// on the measure phase's work; checked before the charge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_edges: Option<u64>,
    /// The public upper bound n_max on the row count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rows: Option<u64>,
    /// The dataset's budget ledger file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger: Option<PathBuf>,
    /// Total ε the dataset may ever spend (recorded in the ledger).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_cap: Option<f64>,
}

impl DataSpec {
    /// The table at `path`, every other setting at its default.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        DataSpec {
            path: path.into(),
            postgres: None,
            format: None,
            schema: None,
            infer_rows: None,
            threads: None,
            memory_limit: None,
            max_edges: None,
            max_rows: None,
            ledger: None,
            budget_cap: None,
        }
    }

    /// The PostgreSQL table or query `source`.
    pub fn postgres(source: PostgresSource) -> Self {
        DataSpec { postgres: Some(source.clone()), ..DataSpec::new(source.display_name()) }
    }

    /// The keys only an operator sets.
    pub fn keys() -> &'static [&'static str] {
        dpincon_api::keys::<DataSpec>()
    }
}

impl JobConfig {
    /// A job on the PostgreSQL table or query `source` under `constraints`.
    pub fn postgres(source: PostgresSource, constraints: impl Into<PathBuf>) -> Self {
        JobConfig::with(DataSpec::postgres(source), constraints)
    }

    /// A job on `data` under `constraints` with every other option at its default.
    pub fn new(data: impl Into<PathBuf>, constraints: impl Into<PathBuf>) -> Self {
        JobConfig::with(DataSpec::new(data), constraints)
    }

    /// A job on the table `data` describes, with the default options.
    pub fn with(data: DataSpec, constraints: impl Into<PathBuf>) -> Self {
        JobConfig {
            constraints: constraints.into(),
            data,
            release: ReleaseOptions::default(),
            test: TestOptions::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use dpincon_api::{Measure, Strategy};

    use super::*;

    const FILE: &str = "data = \"t.csv\"\nconstraints = \"t.dcs\"\nformat = \"csv\"\n\
        epsilon = 1\nmeasures = [\"mi\"]\nstrategy = \"gem\"\nseed = 7\nledger = \"t.ledger\"\n";

    #[test]
    fn a_job_file_is_one_flat_table_of_its_parts_keys() {
        let job: JobConfig = toml::from_str(FILE).unwrap();
        assert_eq!(job.data.path, PathBuf::from("t.csv"));
        assert_eq!(job.data.format, Some(DataFormat::Csv));
        assert_eq!(job.data.ledger, Some(PathBuf::from("t.ledger")));
        assert_eq!(job.release.measures, Some(vec![Measure::Mi]));
        assert_eq!(job.release.strategy, Some(Strategy::Gem));
        assert_eq!(job.test.seed, Some(7));
        // The coordinator's job process reads what the coordinator wrote.
        let json = serde_json::to_string(&job).unwrap();
        assert_eq!(serde_json::from_str::<JobConfig>(&json).unwrap(), job);
    }

    #[test]
    fn unknown_keys_and_bad_values_are_refused_by_name() {
        for (line, needle) in [
            ("nope = 1", "unknown field `nope`"),
            ("dataset = \"t\"", "unknown field `dataset`"),
            ("strategy = \"best\"", "unknown strategy 'best'"),
            ("format = \"xlsx\"", "unknown variant `xlsx`, expected `csv` or `parquet`"),
        ] {
            let text = FILE.replace("strategy = \"gem\"\n", "").replace("format = \"csv\"\n", "");
            let message =
                toml::from_str::<JobConfig>(&format!("{text}{line}\n")).unwrap_err().to_string();
            assert!(message.contains(needle), "{line}: {message}");
        }
    }

    #[test]
    fn the_operators_keys_are_the_data_specs() {
        let keys = DataSpec::keys();
        for key in
            ["data", "postgres", "schema", "memory-limit", "max-rows", "ledger", "budget-cap"]
        {
            assert!(keys.contains(&key), "{key}");
        }
        assert!(!keys.contains(&"epsilon") && !keys.contains(&"seed"));
    }
}
