//! The extension module: `measure`, its typed results, `Ledger`, and the
//! exceptions; the audits' classes are [`crate::audit`]'s.

use std::path::PathBuf;

use dpincon_audit::{Failure, Reason};
use dpincon_engine::{
    Constraints, EngineError, JobConfig, JobLoader, LocalLoader, Report, TableLoader, run_job_with,
};
use dpincon_release::{ProjectedRelease, RepairRelease};
use dpincon_source::{ChunkedColumn, SourceError, TableData};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use pyo3_arrow::{PyChunkedArray, PyRecordBatchReader};

use crate::interrupt::{self, Ends, Gate, Interruptible, Watch};

create_exception!(
    dpincon,
    DpinconError,
    PyException,
    "A job was refused or failed. `str(e)` is the public reason only (`e.reason`); \
     `e.detail` is the full message, which may quote the table."
);
create_exception!(
    dpincon,
    BudgetExhausted,
    DpinconError,
    "The job would pass the dataset's budget cap: nothing was read, released or charged."
);
create_exception!(
    dpincon,
    LedgerRefused,
    DpinconError,
    "The ledger cannot be used or belongs to another dataset: nothing was charged."
);
create_exception!(
    dpincon,
    ConstraintError,
    DpinconError,
    "The constraints cannot be read or parsed, or do not fit the table (`e.line`, `e.column`)."
);
create_exception!(
    dpincon,
    DataError,
    DpinconError,
    "The table cannot be read or encoded, is empty, or has too many rows."
);
create_exception!(dpincon, ConfigError, DpinconError, "The job's options were refused.");

/// What an in-memory table is called when the caller gives no dataset
/// name (errors only: a ledger needs a name).
const UNNAMED: &str = "in-memory table";

/// A dataset's budget ledger: the JSON-lines file every job on the
/// dataset is charged to, its cap, and (for an in-memory table, which has
/// no path to be known by) the dataset's name.
#[pyclass(frozen, module = "dpincon._dpincon")]
struct Ledger {
    /// The ledger file.
    #[pyo3(get)]
    path: PathBuf,
    /// The total ε the dataset may ever spend.
    #[pyo3(get)]
    cap: Option<f64>,
    /// The dataset's name (required with an in-memory table).
    #[pyo3(get)]
    dataset: Option<String>,
}

#[pymethods]
impl Ledger {
    #[new]
    #[pyo3(signature = (path, cap=None, *, dataset=None))]
    fn new(path: PathBuf, cap: Option<f64>, dataset: Option<String>) -> Self {
        Ledger { path, cap, dataset }
    }

    /// ε spent so far on this ledger (0 before its first charge).
    #[getter]
    fn spent(&self) -> PyResult<f64> {
        let summary = dpincon_engine::ledger::summary(&self.path).map_err(to_py_error)?;
        Ok(summary.spent)
    }

    fn __repr__(&self) -> String {
        format!(
            "Ledger({:?}, cap={}, dataset={})",
            self.path.display().to_string(),
            self.cap.map_or("None".into(), |c| c.to_string()),
            self.dataset.as_ref().map_or("None".into(), |d| format!("{d:?}"))
        )
    }
}

/// One released measure.
#[pyclass(frozen, module = "dpincon._dpincon")]
struct Release {
    /// `mi`, `p` or `r`.
    #[pyo3(get)]
    measure: String,
    /// The released value (noisy, clamped at 0).
    #[pyo3(get)]
    value: i64,
    /// An interval holding the measure itself with probability ≥ `coverage`.
    #[pyo3(get)]
    ci95: (i64, i64),
    /// The interval's coverage (0.95).
    #[pyo3(get)]
    coverage: f64,
    /// ε spent on this measure.
    #[pyo3(get)]
    epsilon: f64,
    /// The release's sensitivity.
    #[pyo3(get)]
    sensitivity: u64,
    /// The discrete Laplace scale of the release (I_R: `None`; each of its
    /// `parts` in `to_dict()` has its own).
    #[pyo3(get)]
    noise_scale: Option<f64>,
    /// The degree bound θ* of I_MI and I_P (I_R: `None`).
    #[pyo3(get)]
    theta: Option<u32>,
    /// The θ strategy (I_MI, I_P) or the I_R method.
    #[pyo3(get)]
    method: String,
}

#[pymethods]
impl Release {
    fn __repr__(&self) -> String {
        format!(
            "Release(measure={:?}, value={}, ci95=({}, {}), epsilon={})",
            self.measure, self.value, self.ci95.0, self.ci95.1, self.epsilon
        )
    }
}

/// A serde enum's text (`ub-direct`, `combined`).
pub(crate) fn text_of(value: &impl serde::Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        other => format!("{other:?}"),
    }
}

impl Release {
    fn projected(measure: &str, r: &ProjectedRelease) -> Self {
        Release {
            measure: measure.into(),
            value: r.value,
            ci95: (r.ci95[0], r.ci95[1]),
            coverage: r.coverage,
            epsilon: r.epsilon,
            sensitivity: r.sensitivity,
            noise_scale: Some(r.noise_scale),
            theta: Some(r.theta),
            method: text_of(&r.strategy),
        }
    }

    fn repair(r: &RepairRelease) -> Self {
        Release {
            measure: "r".into(),
            value: r.value,
            ci95: (r.ci95[0], r.ci95[1]),
            coverage: r.coverage,
            epsilon: r.epsilon,
            sensitivity: r.sensitivity,
            noise_scale: None,
            theta: None,
            method: text_of(&r.method),
        }
    }
}

/// A job's outcome: the releases, the budget, and (only with
/// `non_private=True`) the exact values. `to_json()` is the CLI's report.
#[pyclass(frozen, module = "dpincon._dpincon")]
struct Measurement {
    report: Report,
}

#[pymethods]
impl Measurement {
    /// The job's id, as the ledger records it.
    #[getter]
    fn job_id(&self) -> &str {
        &self.report.job_id
    }

    /// The noise was seeded (`seed=`): a test, not a release to publish.
    #[getter]
    fn seeded(&self) -> bool {
        self.report.seeded
    }

    /// What the report calls the table (its path or dataset name).
    #[getter]
    fn data(&self) -> &str {
        &self.report.data
    }

    /// I_MI, the conflicting pairs of rows, if released.
    #[getter]
    fn i_mi(&self) -> Option<Release> {
        let mi = self.report.measures.as_ref()?.mi.as_ref()?;
        Some(Release::projected("mi", mi))
    }

    /// I_P, the rows in some conflict, if released.
    #[getter]
    fn i_p(&self) -> Option<Release> {
        let p = self.report.measures.as_ref()?.p.as_ref()?;
        Some(Release::projected("p", p))
    }

    /// I_R, the rows to delete to make the table consistent, if released.
    #[getter]
    fn i_r(&self) -> Option<Release> {
        self.report.measures.as_ref()?.r.as_ref().map(Release::repair)
    }

    /// ε of each measure.
    #[getter]
    fn epsilon(&self) -> Option<f64> {
        self.report.budget.as_ref().map(|b| b.per_measure)
    }

    /// The job's total ε (the sum over its measures).
    #[getter]
    fn spent(&self) -> Option<f64> {
        self.report.budget.as_ref().map(|b| b.total)
    }

    /// The ledger after the charge: a dict with `path`, `cap`,
    /// `spent_before`, `spent_after`; `None` without a ledger.
    #[getter]
    fn ledger<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let state = self.report.budget.as_ref().and_then(|b| b.ledger.as_ref());
        state.map(|s| to_python(py, s)).transpose()
    }

    /// The exact values (labelled NON-PRIVATE), only with
    /// `non_private=True`; else `None`.
    #[getter]
    fn non_private<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.report.non_private.as_ref().map(|n| to_python(py, n)).transpose()
    }

    /// The report as the CLI's `run --format json` writes it.
    fn to_json(&self) -> PyResult<String> {
        let json = serde_json::to_string_pretty(&self.report)
            .map_err(|e| DpinconError::new_err(e.to_string()))?;
        Ok(json + "\n")
    }

    /// The report as plain Python values (`json.loads(to_json())`).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.report)
    }

    fn __repr__(&self) -> String {
        let released: Vec<String> = [self.i_mi(), self.i_p(), self.i_r()]
            .into_iter()
            .flatten()
            .map(|r| format!("i_{}={}", r.measure, r.value))
            .collect();
        let seeded = if self.report.seeded { "True" } else { "False" };
        format!("Measurement({}, seeded={seeded})", released.join(", "))
    }
}

/// `value` as `json.loads` would read its JSON (lists, not tuples, for
/// fixed arrays such as `ci95`).
pub(crate) fn to_python<'py>(
    py: Python<'py>,
    value: &impl serde::Serialize,
) -> PyResult<Bound<'py, PyAny>> {
    let failed = |e: &dyn std::fmt::Display| DpinconError::new_err(e.to_string());
    let json = serde_json::to_value(value).map_err(|e| failed(&e))?;
    pythonize::pythonize(py, &json).map_err(|e| failed(&e))
}

/// The keys the positional arguments and `ledger=` set: refused among
/// the options, so each thing is said once.
const SET_ELSEWHERE: [&str; 5] = ["data", "constraints", "ledger", "budget-cap", "dataset"];

/// Measures a table's inconsistency with ε-differential privacy: see the
/// package's `measure` (python/dpincon/__init__.py) for the arguments.
#[pyfunction]
#[pyo3(signature = (table, constraints, *, ledger=None, dataset=None, **options))]
fn measure(
    py: Python<'_>,
    table: Option<&Bound<'_, PyAny>>,
    constraints: &Bound<'_, PyAny>,
    ledger: Option<PyRef<'_, Ledger>>,
    dataset: Option<String>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Measurement> {
    let keys = PyDict::new(py);
    if let Some(options) = options {
        for (key, value) in options.iter() {
            let key = key.extract::<String>()?.replace('_', "-");
            if SET_ELSEWHERE.contains(&key.as_str()) {
                return Err(config_error(&format!(
                    "`{key}` is not an option here: give the table, the constraints and \
                     ledger=Ledger(path, cap, dataset=...) as measure's own arguments"
                )));
            }
            if !value.is_none() {
                keys.set_item(key, value)?;
            }
        }
    }
    // Text is the constraints themselves; a path (os.PathLike) is a file.
    let constraints = match constraints.cast::<PyString>() {
        Ok(text) => Constraints::Inline { inline: text.to_str()?.to_owned() },
        Err(_) => Constraints::File(fspath(constraints)?),
    };
    let stream = match table {
        Some(t) if t.hasattr("__arrow_c_stream__")? => Some(t.clone().unbind()),
        Some(t) => {
            let path = fspath(t).map_err(|_| {
                PyTypeError::new_err(
                    "table: expected a path (str or os.PathLike) or an object with \
                     __arrow_c_stream__ (a pyarrow Table, a Polars or pandas DataFrame...)",
                )
            })?;
            keys.set_item("data", path.display().to_string())?;
            None
        }
        None => None,
    };
    let dataset = match (dataset, ledger.as_ref().and_then(|l| l.dataset.clone())) {
        (Some(a), Some(b)) if a != b => {
            return Err(config_error("dataset= and the ledger's dataset name differ"));
        }
        (a, b) => a.or(b),
    };
    if stream.is_none() && dataset.is_some() {
        return Err(config_error(
            "a dataset name is for an in-memory table: a file or PostgreSQL source is named \
             by its path or URL",
        ));
    }
    if let Some(ledger) = &ledger {
        keys.set_item("ledger", ledger.path.display().to_string())?;
        if let Some(cap) = ledger.cap {
            keys.set_item("budget-cap", cap)?;
        }
    }
    // The constraints go in typed: their text is never a path.
    keys.set_item("constraints", "-")?;
    let mut config: JobConfig =
        pythonize::depythonize(keys.as_any()).map_err(|e| config_error(&e.to_string()))?;
    config.constraints = constraints;
    config.table.dataset = dataset.clone();

    let outcome = match stream {
        None => run_job(py, &config, LocalLoader)?,
        Some(stream) => {
            let name = dataset.unwrap_or_else(|| UNNAMED.into());
            // The stream is opened only once the options and the ledger
            // passed (a refused job leaves a one-shot reader unread), and
            // read with the GIL released: producers that need it take it.
            run_job(py, &config, TableLoader::reading(move || read_stream(stream, name)))?
        }
    };
    let outcome = outcome
        .map_err(|e| EngineError::Config(format!("cannot start the runtime: {e}")))
        .flatten();
    match outcome {
        Ok(report) => Ok(Measurement { report }),
        Err(e) => Err(engine_error(py, e, &config)),
    }
}

/// Runs `config`'s job with `loader` on a thread of its own, the GIL
/// released, and returns its outcome; a `KeyboardInterrupt` (Ctrl-C)
/// returns at once, with nothing charged after it ([`interrupt`]).
fn run_job(
    py: Python<'_>,
    config: &JobConfig,
    loader: impl JobLoader + Send + 'static,
) -> PyResult<std::io::Result<Result<Report, EngineError>>> {
    let gate = Gate::new();
    let loader = Interruptible { loader, gate: gate.clone() };
    let (watch, ends) = (Watch(gate.clone()), Ends(gate.clone()));
    let config = config.clone();
    interrupt::run(
        py,
        move || gate.interrupt(),
        move || {
            let _ends = ends;
            block_on(run_job_with(&config, &watch, &loader))
        },
    )
}

/// `__arrow_c_stream__`'s batches, read into a table called `name`; a
/// Polars DataFrame column by column ([`polars_columns`]).
fn read_stream(stream: Py<PyAny>, name: String) -> Result<TableData, EngineError> {
    enum Input {
        Batches(Box<dyn arrow::record_batch::RecordBatchReader + Send>),
        Columns(Vec<ChunkedColumn>),
    }
    let unreadable = |message: String| SourceError::Read { path: name.clone().into(), message };
    let input = Python::attach(|py| {
        let table = stream.bind(py);
        match polars_columns(table)? {
            Some(columns) => Ok(Input::Columns(columns)),
            None => table.extract::<PyRecordBatchReader>()?.into_reader().map(Input::Batches),
        }
    })
    .map_err(|e| unreadable(format!("not a readable Arrow stream: {e}")))?;
    Ok(match input {
        Input::Batches(reader) => dpincon_source::read_batches(name, reader)?,
        Input::Columns(columns) => dpincon_source::read_columns(name, columns)?,
    })
}

/// A Polars DataFrame's columns, each from its Series'
/// `__arrow_c_stream__`, chunks as Polars holds them; `None` for any other
/// table. The frame's own stream rechunks every column into one batch
/// first, and the frame keeps that copy: 170 MiB on the README's 10^6-row
/// Tax table, about what the frame held before.
fn polars_columns(table: &Bound<'_, PyAny>) -> PyResult<Option<Vec<ChunkedColumn>>> {
    let polars = table.get_type().module()?.to_str()?.starts_with("polars.");
    if !polars || !table.hasattr("get_columns")? {
        return Ok(None);
    }
    let columns = table.call_method0("get_columns")?;
    let columns = columns.try_iter()?.map(|series| {
        let (chunks, field) = series?.extract::<PyChunkedArray>()?.into_inner();
        Ok((field, chunks))
    });
    columns.collect::<PyResult<_>>().map(Some)
}

/// Runs a job's or an audit's future on a runtime of its own (the CLI's
/// kind): the caller's thread blocks, without the GIL.
pub(crate) fn block_on<T>(future: impl std::future::Future<Output = T>) -> std::io::Result<T> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    Ok(runtime.block_on(future))
}

/// `os.fspath(value)`.
pub(crate) fn fspath(value: &Bound<'_, PyAny>) -> PyResult<PathBuf> {
    let os = value.py().import("os")?;
    os.call_method1("fspath", (value,))?.extract()
}

fn config_error(message: &str) -> PyErr {
    let reason = Reason::InvalidJob.text();
    with_detail(ConfigError::new_err(reason), reason, message)
}

/// An exception whose `str()` is the public `reason`, with `reason` and
/// the full `detail` as attributes.
pub(crate) fn with_detail(err: PyErr, reason: &str, detail: &str) -> PyErr {
    Python::attach(|py| {
        let value = err.value(py);
        let set = value.setattr("reason", reason).and_then(|()| value.setattr("detail", detail));
        match set {
            Ok(()) => err,
            Err(e) => e,
        }
    })
}

/// Any engine error without a job (e.g. reading a ledger).
fn to_py_error(e: EngineError) -> PyErr {
    Python::attach(|py| engine_error(py, e, &JobConfig::with(Default::default(), "-")))
}

/// The engine's error as its typed exception: the public reason the
/// audits give (classified by kind, never by text), the detail beside it.
/// A ledger's refusal is an exhausted budget when the ledger's own
/// figures (public: ε and caps) are past the cap, as in the audit.
fn engine_error(py: Python<'_>, e: EngineError, config: &JobConfig) -> PyErr {
    let (line, column) = match &e {
        EngineError::Constraint { source, .. } => constraint_position(source),
        _ => (None, None),
    };
    let mut failure = Failure::from(e);
    if failure.reason == Reason::LedgerRefused && over_cap(config) {
        failure.reason = Reason::BudgetExhausted;
    }
    let text = failure.reason.text();
    let err = match failure.reason {
        Reason::BudgetExhausted => BudgetExhausted::new_err(text),
        Reason::LedgerRefused => LedgerRefused::new_err(text),
        Reason::BadConstraint => ConstraintError::new_err(text),
        Reason::UnreadableData => DataError::new_err(text),
        Reason::InvalidJob => ConfigError::new_err(text),
        _ => DpinconError::new_err(text),
    };
    let err = with_detail(err, text, &failure.detail);
    if failure.reason == Reason::BadConstraint {
        let value = err.value(py);
        if let Err(e) = value.setattr("line", line).and_then(|()| value.setattr("column", column)) {
            return e;
        }
    }
    err
}

/// The 1-based line (and column, for a syntax error) a constraint error
/// points at.
fn constraint_position(e: &dpincon_constraints::ConstraintError) -> (Option<usize>, Option<usize>) {
    use dpincon_constraints::ConstraintError::*;
    match e {
        Syntax { line, column, .. } => (Some(*line), Some(*column)),
        UnknownColumn { line, .. } | Type { line, .. } | Unary { line, .. } => (Some(*line), None),
        Empty => (None, None),
    }
}

/// Whether the job's ε would pass its ledger's cap by the ledger's own
/// figures.
fn over_cap(config: &JobConfig) -> bool {
    let Some(path) = &config.data.ledger else { return false };
    let Ok((spent, stored)) = dpincon_engine::ledger::spent(path) else { return false };
    let cap = match (stored, config.data.budget_cap) {
        (Some(s), Some(g)) => s.min(g),
        (s, g) => match s.or(g) {
            Some(cap) => cap,
            None => return false,
        },
    };
    let job = config.release.epsilon.unwrap_or(0.0) * config.release.measures().len() as f64;
    spent + job > cap
}

/// Adds the job's function, classes and exceptions to the module `m`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(measure, m)?)?;
    m.add_class::<Ledger>()?;
    m.add_class::<Release>()?;
    m.add_class::<Measurement>()?;
    m.add("DpinconError", py.get_type::<DpinconError>())?;
    m.add("BudgetExhausted", py.get_type::<BudgetExhausted>())?;
    m.add("LedgerRefused", py.get_type::<LedgerRefused>())?;
    m.add("ConstraintError", py.get_type::<ConstraintError>())?;
    m.add("DataError", py.get_type::<DataError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())
}
