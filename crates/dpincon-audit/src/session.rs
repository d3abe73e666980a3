//! One audit run from start to finish, as `dpincon-cli audit` and the
//! Python package (`dpincon.Suite.run`) both do it: date the run, run the
//! datasets, record the run in the history, write the reports, tell the
//! webhook. The two callers differ only in what they show along the way
//! ([`Observer`]), so a run from Python writes the reports and history a
//! CLI run would.
//!
//! The order is the audit's guarantees:
//! - the history is opened and the test clock checked first, so a broken
//!   store or a clock going back in time fails before any budget is spent;
//! - the run is recorded before any report is written, and the webhook is
//!   told last: an alert is best effort and can neither lose a result nor
//!   change the exit status (a report that cannot be written still does).
//!
//! Datasets run in this process ([`Session::run_here`]) or elsewhere: a
//! caller with its own way to run them (the CLI's `--coordinator`, which
//! needs the gRPC client this crate does not link) hands the outcome to
//! [`Session::finish`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use dpincon_engine::gate::run_gated_night;
use dpincon_engine::{NoProgress, Progress, Report, run_job};

use crate::history::History;
use crate::notify::{self, NotifyError};
use crate::{AuditError, AuditOutcome, AuditRun, Detail, Failure, Job, RunContext, Suite, report};

/// How to run a suite (`dpincon-cli audit`'s `--out`, `--seed`, `--as-of`).
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Write `report.json`, `junit.xml` and `report.html` into this folder.
    pub out: Option<PathBuf>,
    /// TEST MODE: seed the noise; every report says so.
    pub seed: Option<u64>,
    /// TEST MODE: date the run by this test clock (`YYYY-MM-DD`, 00:00 in
    /// the suite's time zone, or an RFC 3339 instant) instead of now.
    pub as_of: Option<String>,
}

/// What a run shows as it goes. The CLI prints each step; the Python
/// package shows nothing, its result holds the same. Every method does
/// nothing unless overridden.
pub trait Observer {
    /// The progress of `dataset`'s job, while it runs in this process.
    fn progress(&self, _dataset: &str) -> Box<dyn Progress> {
        Box::new(NoProgress)
    }

    /// Every dataset has run; these had no release. Their messages are the
    /// operator's only: they may quote the data.
    fn failures(&self, _details: &[Detail]) {}

    /// The run is in the history.
    fn recorded(&self, _suite: &Suite, _run: &AuditRun) {}

    /// The reports are written into `dir`.
    fn reports_written(&self, _dir: &Path) {}

    /// The webhook was told of the run (the number of events sent), or not.
    fn notified(&self, _result: &Result<usize, NotifyError>) {}

    /// Whether the caller gave up on the run (Python's Ctrl-C): no dataset
    /// starts once it did, and the run ends [`AuditError::Interrupted`],
    /// neither recorded nor reported. Datasets already charged keep their
    /// charges (the ledger is the budget's truth; the safe side).
    fn cancelled(&self) -> bool {
        false
    }
}

/// An [`Observer`] that shows nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Quiet;

impl Observer for Quiet {}

/// A run recorded, its reports written and the webhook told.
#[derive(Debug)]
pub struct Finished {
    /// The run, as the history and the reports hold it.
    pub run: AuditRun,
    /// Why each dataset without a release has none, in full: for the
    /// operator only (it may quote the data), never in a report.
    pub details: Vec<Detail>,
    /// The folder the reports were written into, if asked for.
    pub reports: Option<PathBuf>,
    /// What the webhook was told: the number of events sent, or why none
    /// was; `None` without `[notify]`.
    pub notified: Option<Result<usize, NotifyError>>,
}

/// A run of a suite between its start and its record: the history is
/// open and the run dated.
pub struct Session<'a> {
    suite: &'a Suite,
    out: Option<PathBuf>,
    history: History,
    ctx: RunContext,
}

impl<'a> Session<'a> {
    /// Opens `suite`'s history and dates the run: a broken store or a test
    /// clock before the latest recorded night fails here, before any
    /// budget is spent.
    pub fn open(suite: &'a Suite, options: &RunOptions) -> Result<Session<'a>, AuditError> {
        let history = History::open(&suite.history_path())?;
        let ctx = RunContext::load(suite, &history, options.as_of.as_deref(), options.seed)?;
        Ok(Session { suite, out: options.out.clone(), history, ctx })
    }

    /// The run's clock, seed and what it may re-serve.
    pub fn context(&self) -> &RunContext {
        &self.ctx
    }

    /// The ε this suite's runs were charged, per dataset
    /// ([`History::charged`]): a remote run's budget plan.
    pub fn charged(&self) -> Result<BTreeMap<String, f64>, AuditError> {
        self.history.charged(&self.suite.name)
    }

    /// Runs every dataset's job in this process (the suite loaded from
    /// `path`, which errors name), then [`Session::finish`]es.
    pub async fn run_here(
        self,
        path: &Path,
        observer: &dyn Observer,
    ) -> Result<Finished, AuditError> {
        self.run_with(path, observer, async |job, name: &str| {
            let progress = observer.progress(name);
            match job {
                Job::Release(config) => run_job(&config, progress.as_ref()).await,
                Job::Gated(config, gate) => {
                    run_gated_night(&config, &gate, progress.as_ref()).await
                }
            }
            .map_err(Failure::from)
        })
        .await
    }

    /// [`Session::run_here`] with each dataset's job run by `exec` (the
    /// Python package's, which it can interrupt), unless the `observer`
    /// has [`Observer::cancelled`] the run.
    pub async fn run_with(
        self,
        path: &Path,
        observer: &dyn Observer,
        exec: impl AsyncFn(Job, &str) -> Result<Report, Failure>,
    ) -> Result<Finished, AuditError> {
        self.suite.require_tables(path)?;
        let outcome = crate::run_suite(self.suite, &self.ctx, async |job, name: &str| {
            if observer.cancelled() {
                return Err(Failure::interrupted());
            }
            exec(job, name).await
        })
        .await;
        if observer.cancelled() {
            return Err(AuditError::Interrupted);
        }
        self.finish(outcome, observer).await
    }

    /// Records `outcome` in the history, writes the reports (when asked
    /// for) and tells the suite's webhook. A report that cannot be written
    /// is an error, returned once the webhook was told.
    pub async fn finish(
        mut self,
        outcome: AuditOutcome,
        observer: &dyn Observer,
    ) -> Result<Finished, AuditError> {
        let AuditOutcome { run, details } = outcome;
        observer.failures(&details);
        self.history.append(&run)?;
        observer.recorded(self.suite, &run);
        let written = match &self.out {
            Some(out) => self
                .history
                .trends(&self.suite.name)
                .and_then(|trends| report::write_all(out, &run, &trends))
                .map(|()| observer.reports_written(out)),
            None => Ok(()),
        };
        let notified = match &self.suite.notify {
            Some(settings) => {
                let result = notify::notify(&run, settings).await;
                observer.notified(&result);
                Some(result)
            }
            None => None,
        };
        written?;
        Ok(Finished { run, details, reports: self.out, notified })
    }
}

/// Runs `suite` (loaded from `path`, which errors name) in this process
/// with `options`: [`Session::open`], then [`Session::run_here`].
pub async fn run_here(
    suite: &Suite,
    path: &Path,
    options: &RunOptions,
    observer: &dyn Observer,
) -> Result<Finished, AuditError> {
    Session::open(suite, options)?.run_here(path, observer).await
}

/// `suite`'s history: each check's nights, oldest first.
pub fn trends(suite: &Suite) -> Result<Vec<crate::history::Trend>, AuditError> {
    History::open(&suite.history_path())?.trends(&suite.name)
}
