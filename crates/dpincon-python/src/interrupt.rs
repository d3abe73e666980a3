//! Ctrl-C during a job: `KeyboardInterrupt` promptly, and no charge after it.
//!
//! A job runs with the GIL released, so Python's SIGINT handler only sets
//! a flag that nobody reads until the job returns. [`run`] therefore runs
//! the job on a thread of its own and waits for it here, re-taking the
//! GIL every [`POLL`] to run the signal handlers (`py.check_signals()`).
//! When one raises, the job is abandoned and the exception returned.
//!
//! An abandoned job must not charge its ledger afterwards: the caller was
//! told the job did not happen. The engine charges a job's ledger between
//! detection and the first noise draw ([`dpincon_engine::run_job_with`]),
//! so the job's loader is wrapped ([`Interruptible`]) and its [`Gate`]
//! decides, under one lock, which of the two comes first:
//! - the interrupt, while the job reads or detects (`Running`): the job is
//!   `Cancelled`, and its loader fails at its next step (detection skipped;
//!   a read that awaits stops at once), before the charge is reached;
//! - the end of detection (`Committed`): from there the job goes straight
//!   to the charge (or fails before it). An interrupt then waits, without
//!   the GIL, until the charge is durable (`Charged`, the measure phase
//!   starts) or the job ended (`Done`), and only then raises: the ledger
//!   shows the job's whole charge, never half of it and never one made
//!   after the `KeyboardInterrupt`. The releases are not returned: a
//!   charged, unseen release over-counts, the safe side.
//!
//! The abandoned thread ends on its own (after detection at the latest);
//! it writes nothing and releases nothing.
//!
//! A suite (`Suite.run`) runs its datasets' jobs one after another on one
//! such thread; its [`Stop`] hands each job a gate and, on an interrupt,
//! refuses every later job and interrupts the running one through its
//! gate. The session then neither records nor reports the run
//! (`dpincon_audit::Observer::cancelled`).

use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use dpincon_engine::{BoundTable, Detected, EngineError, JobLoader, LoadContext, Phase, Progress};
use pyo3::prelude::*;

/// How often a waiting call runs Python's signal handlers.
const POLL: Duration = Duration::from_millis(20);

/// The stack of a job's thread: a main thread's, where the job used to run.
const STACK: usize = 8 << 20;

/// Where a job stands with respect to its ledger charge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Reading or detecting: an interrupt cancels it.
    Running,
    /// Interrupted before detection ended: it must not charge.
    Cancelled,
    /// Detection ended: the charge comes next.
    Committed,
    /// The charge is durable (the measure phase started).
    Charged,
    /// The job ended (its thread returned).
    Done,
}

/// A job's [`Stage`], shared by its thread and the waiting caller.
#[derive(Debug)]
pub(crate) struct Gate {
    stage: Mutex<Stage>,
    changed: Condvar,
    /// Wakes a read awaiting in [`Interruptible::read`] on cancellation.
    cancel: tokio::sync::Notify,
}

impl Gate {
    pub(crate) fn new() -> Arc<Gate> {
        Arc::new(Gate {
            stage: Mutex::new(Stage::Running),
            changed: Condvar::new(),
            cancel: tokio::sync::Notify::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Stage> {
        self.stage.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Moves to `to` (a job's own steps; a cancelled job stays cancelled).
    fn advance(&self, to: Stage) {
        let mut stage = self.lock();
        if *stage != Stage::Cancelled || to == Stage::Done {
            *stage = to;
        }
        self.changed.notify_all();
    }

    /// The job's check before each of its steps: refused once cancelled.
    fn proceed(&self) -> Result<(), EngineError> {
        match *self.lock() {
            Stage::Cancelled => Err(interrupted()),
            _ => Ok(()),
        }
    }

    /// Detection ended: the job may go on to its charge, unless cancelled.
    pub(crate) fn commit(&self) -> Result<(), EngineError> {
        let mut stage = self.lock();
        match *stage {
            Stage::Cancelled => Err(interrupted()),
            _ => {
                *stage = Stage::Committed;
                Ok(())
            }
        }
    }

    /// The caller was interrupted: cancels a job that has not committed,
    /// else waits until its charge is durable or it ended.
    pub(crate) fn interrupt(&self) {
        let mut stage = self.lock();
        if *stage == Stage::Running {
            *stage = Stage::Cancelled;
            drop(stage);
            self.cancel.notify_waiters();
            return;
        }
        while *stage == Stage::Committed {
            stage = self.changed.wait(stage).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    /// Resolves once the job is cancelled.
    async fn cancelled(&self) {
        loop {
            let notified = self.cancel.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if *self.lock() == Stage::Cancelled {
                return;
            }
            notified.await;
        }
    }
}

/// The error an abandoned job ends with (nobody sees it: the caller has
/// already raised `KeyboardInterrupt`).
fn interrupted() -> EngineError {
    EngineError::Config("interrupted (KeyboardInterrupt): nothing charged".into())
}

/// A job's loader, stopped by its [`Gate`] before the charge.
pub(crate) struct Interruptible<L> {
    pub(crate) loader: L,
    pub(crate) gate: Arc<Gate>,
}

impl<L: JobLoader> JobLoader for Interruptible<L> {
    type Input = L::Input;
    type Stats = L::Stats;

    async fn read(&self, job: LoadContext<'_>) -> Result<BoundTable<L::Input>, EngineError> {
        self.gate.proceed()?;
        tokio::select! {
            read = self.loader.read(job) => read,
            () = self.gate.cancelled() => Err(interrupted()),
        }
    }

    async fn detect(
        &self,
        job: LoadContext<'_>,
        input: L::Input,
    ) -> Result<Detected<L::Stats>, EngineError> {
        self.gate.proceed()?;
        let detected = self.loader.detect(job, input).await?;
        self.gate.commit()?;
        Ok(detected)
    }
}

/// A job's progress: the measure phase starts once the charge is durable.
pub(crate) struct Watch(pub(crate) Arc<Gate>);

impl Progress for Watch {
    fn start(&self, phase: Phase) {
        if phase == Phase::Measure {
            self.0.advance(Stage::Charged);
        }
    }

    fn finish(&self, _: Phase, _: f64) {}
}

/// Marks its gate's job `Done` when dropped: the job's end, a panic's too.
pub(crate) struct Ends(pub(crate) Arc<Gate>);

impl Drop for Ends {
    fn drop(&mut self) {
        self.0.advance(Stage::Done);
    }
}

/// A suite run's datasets, as one Ctrl-C stops them (`Suite.run`): no
/// dataset's job starts after it, and the one running is stopped as
/// `measure`'s job is ([`Gate::interrupt`]). A gated night is not
/// cancelled (its gate commits as it starts): an interrupt waits for it.
#[derive(Debug, Default)]
pub(crate) struct Stop {
    state: Mutex<StopState>,
}

#[derive(Debug, Default)]
struct StopState {
    cancelled: bool,
    /// The running dataset's gate.
    current: Option<Arc<Gate>>,
}

impl Stop {
    fn lock(&self) -> MutexGuard<'_, StopState> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The gate of the next dataset's job, or `None` once cancelled: one
    /// lock with [`Stop::cancel`], so no job starts unseen by it.
    pub(crate) fn begin(&self) -> Option<Arc<Gate>> {
        let mut state = self.lock();
        if state.cancelled {
            return None;
        }
        let gate = Gate::new();
        state.current = Some(gate.clone());
        Some(gate)
    }

    /// The caller was interrupted: no job starts from now on, and the
    /// running one is cancelled before its charge or waited for.
    pub(crate) fn cancel(&self) {
        let current = {
            let mut state = self.lock();
            state.cancelled = true;
            state.current.take()
        };
        if let Some(gate) = current {
            gate.interrupt();
        }
    }
}

/// The session's view of a stopped suite: no dataset starts once
/// [`Stop::cancel`] was called, and the run is neither recorded nor
/// reported. It shows nothing else (the result holds it all).
impl dpincon_audit::Observer for Stop {
    fn cancelled(&self) -> bool {
        self.lock().cancelled
    }
}

/// Runs `work` on a thread of its own and waits for it without the GIL,
/// running Python's signal handlers every [`POLL`]: a `KeyboardInterrupt`
/// (or any exception a handler raises) is returned once `interrupt` (run
/// without the GIL) has made sure that `work` charges nothing after it:
/// [`Gate::interrupt`] for a job, [`Stop::cancel`] for a suite (see the
/// module's notes). `work` marks its gates `Done` itself ([`Ends`]).
pub(crate) fn run<T: Send + 'static>(
    py: Python<'_>,
    interrupt: impl FnOnce() + Send,
    work: impl FnOnce() -> T + Send + 'static,
) -> PyResult<T> {
    let (done, mut result) = mpsc::channel();
    std::thread::Builder::new().name("dpincon-job".into()).stack_size(STACK).spawn(move || {
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(work));
        // The caller may have gone (interrupted): nobody to tell.
        let _ = done.send(outcome);
    })?;
    loop {
        // The receiver is `Send`, not `Sync`: it goes along and comes back.
        let received;
        (received, result) = py.detach(move || (result.recv_timeout(POLL), result));
        match received {
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            Err(RecvTimeoutError::Timeout) => {
                if let Err(raised) = py.check_signals() {
                    py.detach(interrupt);
                    return Err(raised);
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                unreachable!("the job's thread sends its outcome before it ends")
            }
        }
    }
}
