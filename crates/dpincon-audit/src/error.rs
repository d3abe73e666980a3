//! The audit's one error type, and the reasons a suite is refused (its
//! source when the suite is at fault).

use std::path::PathBuf;

use dpincon_api::toml_file::TomlError;
use dpincon_api::{Duration, Measure};
use dpincon_engine::gate::PlanError;
use dpincon_source::SourceError;

use dpincon_engine::validate::{MAX_EPSILON, MIN_EPSILON};

use crate::notify::NotifyKeyError;
use crate::time::TimeError;

/// The crate's one error type.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The suite file cannot be read.
    #[error("cannot read suite '{path}': {message}")]
    Read {
        /// The suite file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The suite is malformed or inconsistent (the message names the line
    /// or the dataset/check at fault).
    #[error("{path}: {source}")]
    Suite {
        /// The suite file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: SuiteError,
    },
    /// The history store cannot be used.
    #[error("history '{path}': {message}")]
    History {
        /// The database file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The test clock (`--as-of`) is malformed.
    #[error(transparent)]
    Time(#[from] TimeError),
    /// The test clock (`--as-of`) is earlier than the suite's latest run in
    /// the history (the message names both dates).
    #[error("{0}")]
    TestClock(String),
    /// A report cannot be written.
    #[error("cannot write report '{path}': {message}")]
    Report {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The caller gave up on the run ([`crate::Observer::cancelled`]):
    /// it is neither recorded nor reported.
    #[error("the run was interrupted: neither recorded nor reported")]
    Interrupted,
}

/// Why a suite is refused, naming the key, dataset or check at fault.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// The file's keys or values (an unknown key, a wrong type), by line.
    #[error(transparent)]
    Toml(#[from] TomlError),
    /// Another format's deserializer refused the keys (the Python
    /// package's dicts), in its own words.
    #[error("{0}")]
    Keys(String),
    /// No `[[dataset]]`.
    #[error("the suite has no [[dataset]]")]
    NoDatasets,
    /// `time-zone` is no IANA name.
    #[error(transparent)]
    Zone(#[from] TimeError),
    /// `[notify]` is malformed.
    #[error("[notify]: {0}")]
    Notify(#[source] NotifyKeyError),
    /// `horizon` is not a whole number of days up to a century.
    #[error("horizon = \"{0}\" must be a number of days or weeks, e.g. \"365d\"")]
    Horizon(Duration),
    /// Two datasets share a name.
    #[error("duplicate dataset name '{0}'")]
    DuplicateDataset(String),
    /// Two checks share a name.
    #[error("duplicate check name '{0}'")]
    DuplicateCheck(String),
    /// A dataset without a constraint file.
    #[error("dataset '{0}' has no constraints file")]
    NoConstraints(String),
    /// A dataset without checks.
    #[error("dataset '{0}' has no [[dataset.check]]")]
    NoChecks(String),
    /// A dataset that names no table, in a run that reads it here.
    #[error(
        "dataset '{0}' has no `data` or `postgres` (only a run with --coordinator, where the \
         operator registered the table, may omit them)"
    )]
    NoTable(String),
    /// A dataset's keys.
    #[error("dataset '{name}': {source}")]
    Dataset {
        /// The dataset.
        name: String,
        /// What is wrong (boxed: the largest of the reasons).
        #[source]
        source: Box<DatasetError>,
    },
    /// A check's keys.
    #[error("check '{name}': {source}")]
    Check {
        /// The check.
        name: String,
        /// What is wrong.
        #[source]
        source: CheckError,
    },
}

/// What is wrong with one dataset's keys.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    /// Both `data` and `postgres`.
    #[error("give `data` or `postgres`, not both")]
    DataAndPostgres,
    /// The `postgres` table is malformed.
    #[error(transparent)]
    Postgres(SourceError),
    /// `format` or `schema` (the key) beside `postgres`.
    #[error(
        "`{0}` describes a `data` file; a PostgreSQL source's column types come from the server"
    )]
    NotAFile(&'static str),
    /// `format` or `schema` (the key) without `data`.
    #[error(
        "`{0}` describes `data`, which this dataset does not give (with --coordinator the \
         operator declares the table)"
    )]
    NoData(&'static str),
    /// `infer-rows`, which a suite does not take.
    #[error(
        "`infer-rows`: a suite declares its column types (`schema`) or lets the engine read \
         every row"
    )]
    InferRows,
    /// A table without a ledger.
    #[error(
        "`ledger` is required: the file that keeps the ε this table has spent (no default, so \
         renaming the dataset cannot reset its budget)"
    )]
    NoLedger,
    /// `ledger = ""`.
    #[error("`ledger` is empty")]
    EmptyLedger,
    /// More than one of the version keys (named).
    #[error("give at most one of `{}`", .0.join("`, `"))]
    VersionKeys(Vec<&'static str>),
    /// A malformed literal `version`.
    #[error("`version` {0}")]
    Version(#[source] MalformedVersion),
    /// `version-env` is no variable's name.
    #[error("`version-env` = {0:?} is not an environment variable's name")]
    VersionEnv(String),
    /// `version-file = ""`.
    #[error("`version-file` is empty")]
    EmptyVersionFile,
    /// `version-file` is the table.
    #[error(
        "`version-file` names the table itself: the version is a short id the load job \
         writes, never the table's contents"
    )]
    VersionFileIsTable,
    /// ε outside the engine's public limits.
    #[error("epsilon = {0} must be finite, between {MIN_EPSILON} and {MAX_EPSILON}")]
    Epsilon(f64),
    /// A required key is missing.
    #[error("missing field `{0}`")]
    Missing(&'static str),
    /// `budget-cap` is not positive.
    #[error("budget-cap = {0} must be a positive number")]
    BudgetCap(f64),
    /// `max-rows = 0`.
    #[error("max-rows must be at least 1")]
    NoRows,
    /// `runs-per-day` is not positive.
    #[error("runs-per-day = {0} must be a positive number")]
    RunsPerDay(f64),
    /// `[dataset.gate]` without the suite's `horizon`.
    #[error("a gated dataset needs the suite's `horizon` (e.g. horizon = \"365d\")")]
    NoHorizon,
    /// The gate's plan does not fit (`GatePlan::check`).
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The declared `schema` is malformed or does not match the table (the
    /// table reader's words).
    #[error("`schema` {0}")]
    Schema(String),
}

/// What is wrong with one check's keys.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CheckError {
    /// Its measure is not among the dataset's `measures`.
    #[error("measure '{measure}' is not released by dataset '{dataset}' (measures: {})",
        released.iter().map(|m| m.name()).collect::<Vec<_>>().join(", "))]
    NotReleased {
        /// The check's measure.
        measure: Measure,
        /// The dataset.
        dataset: String,
        /// The dataset's measures.
        released: Vec<Measure>,
    },
    /// Two or three of the thresholds.
    #[error("give one of max, max-fraction and min")]
    Thresholds,
    /// None of them.
    #[error("needs max, max-fraction or min")]
    NoThreshold,
    /// A threshold (the key) that is negative or not finite.
    #[error("{key} = {value} must be a finite number ≥ 0")]
    Threshold {
        /// `max`, `max-fraction` or `min`.
        key: &'static str,
        /// The value given.
        value: f64,
    },
}

/// Why a value is not a version; it is never quoted (a file named by
/// mistake may be the table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum MalformedVersion {
    /// Nothing but blanks.
    #[error("is empty")]
    Empty,
    /// A line break.
    #[error("holds more than one line (a version is one short id, not the table)")]
    Lines,
    /// Longer than the limit (bytes; [`crate::version::MAX_VERSION_BYTES`]).
    #[error("is longer than {0} bytes (a version is one short id)")]
    Long(usize),
    /// A control character.
    #[error("holds a control character")]
    Control,
    /// A `version-file` that is not UTF-8.
    #[error("is not UTF-8 text")]
    NotUtf8,
}
