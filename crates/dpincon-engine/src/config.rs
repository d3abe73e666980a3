use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Everything a job needs: the one configuration type (CLI flags, job files
/// and service requests all become a `JobConfig`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct JobConfig {
    /// The table (CSV or Parquet).
    pub data: PathBuf,
    /// The constraint file.
    pub constraints: PathBuf,
    /// Force `csv` or `parquet` instead of going by the extension.
    #[serde(default)]
    pub format: Option<String>,
    /// Column types to force, `Name:type,...`.
    #[serde(default)]
    pub schema: Option<String>,
    /// Rows to infer CSV column types from (default: all).
    #[serde(default)]
    pub infer_rows: Option<usize>,
    /// Detection threads (default: all cores).
    #[serde(default)]
    pub threads: Option<usize>,
    /// Test every pair instead of the planned detection (quadratic).
    #[serde(default)]
    pub brute_force: bool,
    /// Also report the exact, NON-PRIVATE values.
    #[serde(default)]
    pub non_private: bool,
}

impl JobConfig {
    /// A job on `data` under `constraints` with every other option at its default.
    pub fn new(data: impl Into<PathBuf>, constraints: impl Into<PathBuf>) -> Self {
        JobConfig {
            data: data.into(),
            constraints: constraints.into(),
            format: None,
            schema: None,
            infer_rows: None,
            threads: None,
            brute_force: false,
            non_private: false,
        }
    }
}
