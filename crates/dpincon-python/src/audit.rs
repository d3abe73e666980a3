//! The audits: `Suite` (a TOML file, or a dict of the same keys read by
//! the same serde definitions), `Suite.run` (dpincon-audit's session: the
//! run `dpincon-cli audit` makes, with the same history and reports) and
//! its typed `AuditResult`, and the history's trends.

use std::path::PathBuf;
use std::sync::Arc;

use dpincon_audit::history::{Point, Trend};
use dpincon_audit::session;
use dpincon_audit::time::Tz;
use dpincon_audit::{
    AuditError, AuditRun, CheckResult as Check, DatasetBudget, DatasetResult as Dataset, Failure,
    Finished, Job, Reason, RunOptions, Session, Suite as AuditSuite,
};
use dpincon_engine::gate::run_gated_night;
use dpincon_engine::{LocalLoader, NoProgress, Report, run_job_with};
use pyo3::create_exception;
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::interrupt::{self, Ends, Interruptible, Stop, Watch};
use crate::module::{ConfigError, DpinconError, block_on, fspath, text_of, to_python, with_detail};

create_exception!(
    dpincon,
    SuiteError,
    DpinconError,
    "The suite cannot be read or is invalid (`e.detail` names the file or dict, the line and \
     the key): nothing was run, charged or written."
);
create_exception!(
    dpincon,
    HistoryError,
    DpinconError,
    "The suite's history store cannot be opened, read or written."
);
create_exception!(
    dpincon,
    ReportError,
    DpinconError,
    "A report could not be written. The run is in the history and the webhook was told."
);

/// The public reasons of the audit's own errors (`str(e)`); the message,
/// which may quote a table's header, is the detail.
const INVALID_SUITE: &str = "invalid suite";
const UNUSABLE_HISTORY: &str = "unusable history";
const INVALID_TEST_CLOCK: &str = "invalid test clock";
const REPORT_NOT_WRITTEN: &str = "report not written";
const INTERRUPTED: &str = "interrupted";

/// What a suite built from a dict is called in errors, where a file's
/// path would be.
const FROM_DICT: &str = "<dict>";

/// The audit's error as its typed exception.
fn audit_error(e: AuditError) -> PyErr {
    let detail = e.to_string();
    let (err, reason) = match e {
        AuditError::Read { .. } | AuditError::Suite { .. } => {
            (SuiteError::new_err(INVALID_SUITE), INVALID_SUITE)
        }
        AuditError::History { .. } => (HistoryError::new_err(UNUSABLE_HISTORY), UNUSABLE_HISTORY),
        AuditError::Time(_) | AuditError::TestClock(_) => {
            (ConfigError::new_err(INVALID_TEST_CLOCK), INVALID_TEST_CLOCK)
        }
        AuditError::Report { .. } => (ReportError::new_err(REPORT_NOT_WRITTEN), REPORT_NOT_WRITTEN),
        // The caller raised KeyboardInterrupt already: nobody sees this.
        AuditError::Interrupted => (DpinconError::new_err(INTERRUPTED), INTERRUPTED),
    };
    with_detail(err, reason, &detail)
}

/// One dataset's job in a suite run from Python: stopped by `stop` as
/// `measure`'s job is by its gate (module `interrupt`), and not started
/// once `stop` was cancelled.
async fn run_dataset(stop: &Stop, job: Job) -> Result<Report, Failure> {
    let Some(gate) = stop.begin() else {
        return Err(Failure::interrupted());
    };
    let _ends = Ends(gate.clone());
    match job {
        Job::Release(config) => {
            let loader = Interruptible { loader: LocalLoader, gate: gate.clone() };
            run_job_with(&config, &Watch(gate), &loader).await
        }
        // A gated night's charges are not behind one loader step: its gate
        // commits as it starts, so an interrupt waits for its end.
        Job::Gated(config, settings) => match gate.commit() {
            Ok(()) => run_gated_night(&config, &settings, &NoProgress).await,
            Err(e) => Err(e),
        },
    }
    .map_err(Failure::from)
}

/// An audit suite: datasets, their budgets and the checks on their
/// releases, validated as `dpincon-cli audit` validates a suite file.
#[pyclass(frozen, name = "Suite", module = "dpincon._dpincon")]
struct PySuite {
    suite: AuditSuite,
    /// The file it was read from (or `<dict>`), which errors name.
    origin: PathBuf,
}

#[pymethods]
impl PySuite {
    /// Reads the suite file at `path` (TOML), as `dpincon-cli audit --suite`.
    #[staticmethod]
    fn from_toml(py: Python<'_>, path: &Bound<'_, PyAny>) -> PyResult<Self> {
        let path = fspath(path)?;
        // Declared schemas are checked against their tables' headers.
        let suite = py.detach(|| AuditSuite::load(&path)).map_err(audit_error)?;
        Ok(PySuite { suite, origin: path })
    }

    /// A suite from a dict of the file's keys (what `tomllib.load` reads
    /// from a suite file), relative paths against `base_dir` (default: the
    /// current directory, as a suite file in it).
    #[staticmethod]
    #[pyo3(signature = (suite, *, base_dir=None))]
    fn from_dict(
        py: Python<'_>,
        suite: &Bound<'_, PyAny>,
        base_dir: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let base = base_dir.map(fspath).transpose()?.unwrap_or_default();
        let origin = PathBuf::from(FROM_DICT);
        let parsed: AuditSuite = pythonize::depythonize(suite).map_err(|e| {
            let source = dpincon_audit::SuiteError::Keys(e.to_string());
            audit_error(AuditError::Suite { path: origin.clone(), source })
        })?;
        let suite = py.detach(|| parsed.checked(&origin, &base)).map_err(audit_error)?;
        Ok(PySuite { suite, origin })
    }

    /// The suite's name (the history and the reports are keyed by it).
    #[getter]
    fn name(&self) -> &str {
        &self.suite.name
    }

    /// The history database.
    #[getter]
    fn history_path(&self) -> PathBuf {
        self.suite.history_path()
    }

    /// The datasets' names, in order.
    #[getter]
    fn datasets(&self) -> Vec<String> {
        self.suite.datasets.iter().map(|d| d.name.clone()).collect()
    }

    /// The suite as validated: the file's keys, paths resolved, defaults
    /// filled in (a `[notify]` webhook URL is left out: it is a secret).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.suite)
    }

    /// Runs the suite as `dpincon-cli audit --suite ... [--out OUT]
    /// [--seed SEED] [--as-of AS_OF]` does, with the GIL released.
    #[pyo3(signature = (*, out=None, seed=None, as_of=None))]
    fn run(
        &self,
        py: Python<'_>,
        out: Option<&Bound<'_, PyAny>>,
        seed: Option<u64>,
        as_of: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<AuditResult> {
        let options = RunOptions {
            out: out.map(fspath).transpose()?,
            seed,
            as_of: as_of.map(date_text).transpose()?,
        };
        let (suite, origin) = (self.suite.clone(), self.origin.clone());
        let zone = suite.zone();
        let stop = Arc::new(Stop::default());
        let stopping = stop.clone();
        let work = move || {
            block_on(async {
                let session = Session::open(&suite, &options)?;
                session
                    .run_with(&origin, &*stopping, async |job, _: &str| {
                        run_dataset(&stopping, job).await
                    })
                    .await
            })
        };
        let finished = interrupt::run(py, move || stop.cancel(), work)?
            .map_err(|e| {
                let reason = Reason::Internal.text();
                with_detail(
                    DpinconError::new_err(reason),
                    reason,
                    &format!("cannot start the runtime: {e}"),
                )
            })?
            .map_err(audit_error)?;
        Ok(AuditResult::new(finished, zone))
    }

    /// Each check's nights in the history, oldest first.
    fn history(&self, py: Python<'_>) -> PyResult<Vec<PyTrend>> {
        let trends = py.detach(|| session::trends(&self.suite)).map_err(audit_error)?;
        Ok(trends.into_iter().map(PyTrend::from).collect())
    }

    fn __repr__(&self) -> String {
        format!("Suite({:?}, datasets={:?})", self.suite.name, self.datasets())
    }
}

/// `as_of=`: a string as given, or a `datetime.date`'s ISO text.
fn date_text(value: &Bound<'_, PyAny>) -> PyResult<String> {
    match value.cast::<PyString>() {
        Ok(text) => Ok(text.to_str()?.to_owned()),
        Err(_) => value.call_method0("isoformat")?.extract(),
    }
}

/// The folder a run's reports were written into, and their paths.
#[pyclass(frozen, get_all, skip_from_py_object, module = "dpincon._dpincon")]
#[derive(Clone)]
struct Reports {
    /// The folder (`out=`).
    dir: PathBuf,
    /// `report.json`.
    json: PathBuf,
    /// `junit.xml`.
    junit: PathBuf,
    /// `report.html`.
    html: PathBuf,
}

#[pymethods]
impl Reports {
    fn __repr__(&self) -> String {
        format!("Reports({:?})", self.dir.display().to_string())
    }
}

/// One check's outcome.
#[pyclass(frozen, get_all, skip_from_py_object, name = "CheckResult", module = "dpincon._dpincon")]
#[derive(Clone)]
struct PyCheckResult {
    name: String,
    dataset: String,
    measure: String,
    threshold: f64,
    at_least: bool,
    value: Option<i64>,
    ci95: Option<(i64, i64)>,
    epsilon: Option<f64>,
    verdict: String,
    warn_only: bool,
    message: String,
}

impl From<&Check> for PyCheckResult {
    fn from(c: &Check) -> Self {
        PyCheckResult {
            name: c.name.clone(),
            dataset: c.dataset.clone(),
            measure: c.measure.name().into(),
            threshold: c.threshold,
            at_least: c.at_least,
            value: c.value,
            ci95: c.ci95.map(|[lo, hi]| (lo, hi)),
            epsilon: c.epsilon,
            verdict: c.verdict.name().into(),
            warn_only: c.warn_only,
            message: c.message.clone(),
        }
    }
}

#[pymethods]
impl PyCheckResult {
    fn __repr__(&self) -> String {
        format!("CheckResult({:?}, verdict={:?})", self.name, self.verdict)
    }
}

/// One dataset's outcome.
#[pyclass(frozen, skip_from_py_object, name = "DatasetResult", module = "dpincon._dpincon")]
#[derive(Clone)]
struct PyDatasetResult {
    #[pyo3(get)]
    name: String,
    #[pyo3(get)]
    data: String,
    #[pyo3(get)]
    status: String,
    #[pyo3(get)]
    job_id: Option<String>,
    #[pyo3(get)]
    seeded: bool,
    #[pyo3(get)]
    error: Option<String>,
    #[pyo3(get)]
    detail: Option<String>,
    #[pyo3(get)]
    version: Option<String>,
    #[pyo3(get)]
    checks: Vec<PyCheckResult>,
    budget: DatasetBudget,
}

#[pymethods]
impl PyDatasetResult {
    /// The dataset's budget before the run, as report.json has it.
    #[getter]
    fn budget<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.budget)
    }

    fn __repr__(&self) -> String {
        format!("DatasetResult({:?}, status={:?})", self.name, self.status)
    }
}

impl PyDatasetResult {
    fn new(d: &Dataset, detail: Option<String>) -> Self {
        PyDatasetResult {
            name: d.name.clone(),
            data: d.data.clone(),
            status: text_of(&d.status),
            job_id: d.job_id.clone(),
            seeded: d.seeded,
            error: d.error.map(|r| r.text().into()),
            detail,
            version: d.version.clone(),
            checks: d.checks.iter().map(PyCheckResult::from).collect(),
            budget: d.budget.clone(),
        }
    }
}

/// A suite's run: its verdicts, exit status, written reports and alert.
#[pyclass(frozen, module = "dpincon._dpincon")]
struct AuditResult {
    run: AuditRun,
    zone: Option<Tz>,
    #[pyo3(get)]
    datasets: Vec<PyDatasetResult>,
    #[pyo3(get)]
    reports: Option<Reports>,
    #[pyo3(get)]
    notified: Option<usize>,
    #[pyo3(get)]
    notify_error: Option<String>,
}

impl AuditResult {
    fn new(finished: Finished, zone: Option<Tz>) -> Self {
        let Finished { run, details, reports, notified } = finished;
        let detail =
            |name: &str| details.iter().find(|d| d.dataset == name).map(|d| d.message.clone());
        let datasets =
            run.datasets.iter().map(|d| PyDatasetResult::new(d, detail(&d.name))).collect();
        let reports = reports.map(|dir| Reports {
            json: dir.join("report.json"),
            junit: dir.join("junit.xml"),
            html: dir.join("report.html"),
            dir,
        });
        let (notified, notify_error) = match notified {
            None => (None, None),
            Some(Ok(n)) => (Some(n), None),
            Some(Err(e)) => (None, Some(e.to_string())),
        };
        AuditResult { run, zone, datasets, reports, notified, notify_error }
    }
}

#[pymethods]
impl AuditResult {
    /// The suite's name.
    #[getter]
    fn suite(&self) -> &str {
        &self.run.suite
    }

    /// The worst outcome: `pass`, `warn`, `fail` or `error`.
    #[getter]
    fn status(&self) -> String {
        text_of(&self.run.status)
    }

    /// The CLI's exit code: 0 pass, 1 inconclusive or warn, 2 fail, 3 error.
    #[getter]
    fn exit_code(&self) -> u8 {
        self.run.exit_code
    }

    /// The run's start, seconds since the epoch (the test clock's, with one).
    #[getter]
    fn started_unix(&self) -> u64 {
        self.run.started_unix
    }

    /// TEST MODE: `as_of=` as given, when a test clock dated the run.
    #[getter]
    fn test_clock(&self) -> Option<&str> {
        self.run.test_clock.as_deref()
    }

    /// Every check, in suite order.
    #[getter]
    fn checks(&self) -> Vec<PyCheckResult> {
        self.run.checks().map(PyCheckResult::from).collect()
    }

    /// The lines `dpincon-cli audit` prints for the run.
    fn summary(&self) -> String {
        dpincon_audit::report::text::summary(&self.run, self.zone)
    }

    /// `report.json`'s text.
    fn to_json(&self) -> String {
        dpincon_audit::report::json::render(&self.run)
    }

    /// `report.json` as plain Python values.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.run)
    }

    fn __repr__(&self) -> String {
        format!(
            "AuditResult({:?}, status={:?}, exit_code={})",
            self.run.suite,
            self.status(),
            self.run.exit_code
        )
    }
}

/// One night of one check in the history.
#[pyclass(frozen, get_all, skip_from_py_object, name = "Point", module = "dpincon._dpincon")]
#[derive(Clone)]
struct PyPoint {
    started_unix: u64,
    value: i64,
    ci95: (i64, i64),
    threshold: f64,
    verdict: String,
    changed: bool,
    test_clock: bool,
    reserved: bool,
    gated: bool,
}

impl From<Point> for PyPoint {
    fn from(p: Point) -> Self {
        PyPoint {
            started_unix: p.started_unix,
            value: p.value,
            ci95: (p.ci95[0], p.ci95[1]),
            threshold: p.threshold,
            verdict: p.verdict,
            changed: p.changed,
            test_clock: p.test_clock,
            reserved: p.reserved,
            gated: p.gated,
        }
    }
}

#[pymethods]
impl PyPoint {
    fn __repr__(&self) -> String {
        format!(
            "Point(started_unix={}, value={}, ci95=({}, {}), verdict={:?})",
            self.started_unix, self.value, self.ci95.0, self.ci95.1, self.verdict
        )
    }
}

/// A check's nights in the history, oldest first.
#[pyclass(frozen, get_all, skip_from_py_object, name = "Trend", module = "dpincon._dpincon")]
#[derive(Clone)]
struct PyTrend {
    dataset: String,
    check: String,
    measure: String,
    points: Vec<PyPoint>,
}

impl From<Trend> for PyTrend {
    fn from(t: Trend) -> Self {
        PyTrend {
            dataset: t.dataset,
            check: t.check,
            measure: t.measure.name().into(),
            points: t.points.into_iter().map(PyPoint::from).collect(),
        }
    }
}

#[pymethods]
impl PyTrend {
    fn __repr__(&self) -> String {
        format!("Trend({:?}, nights={})", self.check, self.points.len())
    }
}

/// Adds the audit's classes and exceptions to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<PySuite>()?;
    m.add_class::<AuditResult>()?;
    m.add_class::<PyDatasetResult>()?;
    m.add_class::<PyCheckResult>()?;
    m.add_class::<Reports>()?;
    m.add_class::<PyTrend>()?;
    m.add_class::<PyPoint>()?;
    m.add("SuiteError", py.get_type::<SuiteError>())?;
    m.add("HistoryError", py.get_type::<HistoryError>())?;
    m.add("ReportError", py.get_type::<ReportError>())?;
    Ok(())
}
