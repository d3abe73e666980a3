use std::path::PathBuf;

use dpincon_source::PostgresSource;
use serde::{Deserialize, Serialize};

/// Everything a job needs: the one configuration type (CLI flags, job files
/// and service requests all become a `JobConfig`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct JobConfig {
    /// The table (CSV or Parquet); with `postgres`, the name ledgers and
    /// reports use for it ([`PostgresSource::display_name`]).
    pub data: PathBuf,
    /// Read the table from PostgreSQL instead of `data`.
    #[serde(default)]
    pub postgres: Option<PostgresSource>,
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
    /// Memory for the graph's adjacency before it spills to the temporary
    /// directory, e.g. `1GiB` (default: no limit). Never changes a result.
    #[serde(default)]
    pub memory_limit: Option<String>,
    /// Refuse to measure a conflict graph of more edges (a public quota
    /// on the measure phase's work; checked before the charge).
    #[serde(default)]
    pub max_edges: Option<u64>,
    /// Test every pair instead of the planned detection (quadratic).
    #[serde(default)]
    pub brute_force: bool,
    /// Also report the exact, NON-PRIVATE values.
    #[serde(default)]
    pub non_private: bool,
    /// ε of each released measure (SPEC §8); no release without it.
    #[serde(default)]
    pub epsilon: Option<f64>,
    /// The measures to release: `mi`, `p`, `r` (default: all three).
    #[serde(default = "default_measures")]
    pub measures: Vec<String>,
    /// How θ* is chosen for I_MI and I_P (default `ub-hem`).
    #[serde(default)]
    pub strategy: Option<String>,
    /// `em` (default) or `permute-and-flip` for each selection step.
    #[serde(default)]
    pub selector: Option<String>,
    /// ε1 and ε2 as shares of ε: selection, release (default 0.4, 0.6).
    #[serde(default)]
    pub epsilon_split: Option<[f64; 2]>,
    /// Candidate degree bounds Θ (default {1,2,5}×10^k up to n_max, and n_max).
    #[serde(default)]
    pub candidates: Option<Vec<u32>>,
    /// The public upper bound n_max on the row count.
    #[serde(default)]
    pub max_rows: Option<u64>,
    /// How I_R is released: `greedy`, `lp` or `combined` (default).
    #[serde(default)]
    pub ir_method: Option<String>,
    /// Seed the noise: test and experiment mode only; the report says so.
    #[serde(default)]
    pub seed: Option<u64>,
    /// The dataset's budget ledger file.
    #[serde(default)]
    pub ledger: Option<PathBuf>,
    /// Total ε the dataset may ever spend (recorded in the ledger).
    #[serde(default)]
    pub budget_cap: Option<f64>,
}

fn default_measures() -> Vec<String> {
    ["mi", "p", "r"].map(String::from).to_vec()
}

impl JobConfig {
    /// A job on the PostgreSQL table or query `source` under `constraints`.
    pub fn postgres(source: PostgresSource, constraints: impl Into<PathBuf>) -> Self {
        let mut config = JobConfig::new(source.display_name(), constraints);
        config.postgres = Some(source);
        config
    }

    /// A job on `data` under `constraints` with every other option at its default.
    pub fn new(data: impl Into<PathBuf>, constraints: impl Into<PathBuf>) -> Self {
        JobConfig {
            data: data.into(),
            postgres: None,
            constraints: constraints.into(),
            format: None,
            schema: None,
            infer_rows: None,
            threads: None,
            memory_limit: None,
            max_edges: None,
            brute_force: false,
            non_private: false,
            epsilon: None,
            measures: default_measures(),
            strategy: None,
            selector: None,
            epsilon_split: None,
            candidates: None,
            max_rows: None,
            ir_method: None,
            seed: None,
            ledger: None,
            budget_cap: None,
        }
    }
}
