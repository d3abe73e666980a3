//! Running accepted jobs, one at a time, through
//! `dpincon_engine::run_job_with` with a `BallistaLoader` (detection on
//! the Ballista cluster), and recording how each ended.
//!
//! A job is marked running in the store before the engine can charge the
//! ledger, and its report is stored in the statement that marks it
//! succeeded (see `store`). How it failed is mapped to a public reason; the
//! full message goes to the coordinator's log and the store only, except
//! for non-private jobs of test clusters.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use dpincon_engine::{EngineError, Phase, Progress, run_job_with};
use dpincon_proto::v1::{FailureReason, JobState, JobStatus, PhaseTime};
use prost::Message;
use tokio::sync::{mpsc, watch};

use crate::coordinator::Shared;
use crate::store::Ending;
use crate::submission::{Accepted, reason_text};
use dpincon_ballista::BallistaLoader;

/// A job accepted and not yet ended, in memory. Finished jobs live only in
/// the store, so memory is bounded by the queue limit.
#[derive(Debug)]
pub(crate) struct Active {
    pub id: String,
    /// Submission order, for queue positions.
    pub seq: u64,
    pub accepted: Accepted,
    /// The full status (operator and non-private view).
    pub status: Arc<watch::Sender<JobStatus>>,
    pub cancel: watch::Sender<bool>,
    /// The engine has charged the ledger (its measure phase started): the
    /// job's ε is in the ledger, no longer a reservation.
    pub charged: AtomicBool,
}

impl Active {
    pub(crate) fn new(id: String, seq: u64, accepted: Accepted) -> Self {
        let status = JobStatus {
            job_id: id.clone(),
            state: JobState::Queued as i32,
            ..JobStatus::default()
        };
        Active {
            id,
            seq,
            accepted,
            status: Arc::new(watch::Sender::new(status)),
            cancel: watch::Sender::new(false),
            charged: AtomicBool::new(false),
        }
    }
}

/// Runs queued jobs one at a time, on a runtime of their own (CPU-bound
/// phases never starve the RPC server).
pub(crate) fn run_queue(mut rx: mpsc::UnboundedReceiver<Arc<Active>>, shared: Arc<Shared>) {
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the job runtime: {e}");
            std::process::exit(1);
        }
    };
    runtime.block_on(async move {
        while let Some(job) = rx.recv().await {
            run_one(&job, &shared).await;
        }
    });
}

/// Records the engine's phases in the job's status, and when the table
/// starts being read (failures before that depend on no row) and when the
/// ledger has been charged (the measure phase starts right after).
struct StatusProgress<'a> {
    status: &'a watch::Sender<JobStatus>,
    read_started: AtomicBool,
    charged: &'a AtomicBool,
}

fn phase_key(phase: Phase) -> &'static str {
    match phase {
        Phase::Read => "read",
        Phase::Detect => "detect",
        Phase::Measure => "measure",
    }
}

impl Progress for StatusProgress<'_> {
    fn start(&self, phase: Phase) {
        match phase {
            Phase::Read => self.read_started.store(true, Ordering::SeqCst),
            Phase::Measure => self.charged.store(true, Ordering::SeqCst),
            Phase::Detect => {}
        }
        self.status.send_modify(|s| s.phase = phase_key(phase).into());
    }

    fn finish(&self, phase: Phase, seconds: f64) {
        self.status.send_modify(|s| {
            s.phases.push(PhaseTime { phase: phase_key(phase).into(), seconds });
            s.phase.clear();
        });
    }
}

/// The public reason of an engine failure (its message is shown to a
/// private job's client only for [`FailureReason::InvalidJob`]).
fn classify(error: &EngineError, read_started: bool) -> FailureReason {
    match error {
        // The cap was reached between admission and the charge (admission
        // reserves queued jobs' ε, so only an edited ledger gets here).
        EngineError::Ledger { message, .. } if message.contains("cap exceeded") => {
            FailureReason::BudgetExhausted
        }
        // Option checks run before the first row is read: nothing in them
        // depends on the data.
        EngineError::Config(_) if !read_started => FailureReason::InvalidJob,
        _ => FailureReason::Internal,
    }
}

/// The report as a client sees it: the dataset's name instead of the
/// operator's paths (table, constraint file, ledger).
fn client_report(report: &dpincon_engine::Report, dataset: &str) -> Result<String, String> {
    let mut value = serde_json::to_value(report).map_err(|e| e.to_string())?;
    value["data"] = serde_json::Value::String(format!("dataset {dataset}"));
    value["constraints"] = serde_json::Value::String("inline".into());
    if let Some(ledger) = value.pointer_mut("/budget/ledger").filter(|l| l.is_object()) {
        ledger["path"] = serde_json::Value::String(format!("ledger of dataset {dataset}"));
    }
    serde_json::to_string_pretty(&value).map(|s| s + "\n").map_err(|e| e.to_string())
}

/// Runs the engine on the job; `None` if a client cancelled it first.
async fn run_engine(
    job: &Active,
    shared: &Shared,
    constraints: &std::path::Path,
) -> Option<Result<dpincon_engine::Report, (FailureReason, String)>> {
    let config = job.accepted.job_config(constraints);
    let progress = StatusProgress {
        status: &job.status,
        read_started: AtomicBool::new(false),
        charged: &job.charged,
    };
    let options = &shared.options.ballista;
    let mut loader = BallistaLoader::new(&options.scheduler, shared.work_dir());
    loader.partitions = options.partitions.max(1);
    loader.graph_memory = options.graph_memory;
    let mut cancel = job.cancel.subscribe();
    let outcome = tokio::select! {
        // A job that finished wins over a late cancel: its budget is spent.
        biased;
        r = run_job_with(&config, &progress, &loader) => Some(r.map_err(|e| {
            let read_started = progress.read_started.load(Ordering::SeqCst);
            (classify(&e, read_started), e.to_string())
        })),
        // Dropping the engine's future drops the result stream: the
        // Ballista client stops fetching; the scheduler finishes or
        // abandons the stages (they write only shuffle files).
        _ = cancel.wait_for(|c| *c) => None,
    };
    if let Some(stats) = loader.stats() {
        job.status.send_modify(|s| {
            s.tasks_total = stats.tasks as u32;
            s.tasks_done = stats.tasks as u32;
            s.edges = stats.fingerprint.edges;
            s.edge_fingerprint = stats.fingerprint.to_string();
        });
    }
    outcome
}

async fn run_one(job: &Active, shared: &Shared) {
    let id = &job.id;
    if *job.cancel.borrow() {
        return; // Cancelled while queued: already ended.
    }
    match shared.store.start(id) {
        Ok(true) => {}
        Ok(false) => return shared.forget(id),
        Err(e) => {
            eprintln!("job {id}: {e}");
            return shared.forget(id);
        }
    }
    job.status.send_modify(|s| s.state = JobState::Running as i32);
    eprintln!("job {id}: running on dataset {}", job.accepted.dataset.name);
    let constraints = shared.constraint_path(id);
    let outcome = match std::fs::write(&constraints, job.accepted.constraints()) {
        Err(e) => Some(Err((
            FailureReason::Internal,
            format!("cannot write '{}': {e}", constraints.display()),
        ))),
        Ok(()) => run_engine(job, shared, &constraints).await,
    };
    let _ = std::fs::remove_file(&constraints);
    let non_private = job.accepted.non_private;
    let dataset = job.accepted.dataset.name.as_str();
    let (state, reason, full, report) = match outcome {
        None => {
            (JobState::Cancelled, FailureReason::Unspecified, "cancelled by a client".into(), None)
        }
        Some(Ok(report)) => match client_report(&report, dataset) {
            Ok(json) => {
                (JobState::Succeeded, FailureReason::Unspecified, String::new(), Some(json))
            }
            Err(e) => (
                JobState::Failed,
                FailureReason::Internal,
                format!("cannot serialise the report: {e}"),
                None,
            ),
        },
        Some(Err((reason, message))) => (JobState::Failed, reason, message, None),
    };
    let shown = match state {
        JobState::Failed if non_private => full.clone(),
        JobState::Failed => public_error(reason, &full),
        _ => full.clone(),
    };
    // Stored first, then announced: a client told the job ended finds its
    // end (and report) in the store.
    let mut last = job.status.borrow().clone();
    last.state = state as i32;
    last.reason = reason as i32;
    last.error = shown;
    last.phase.clear();
    let detail = non_private.then(|| last.encode_to_vec());
    let end = Ending {
        state,
        reason,
        error: &full,
        report: report.as_deref(),
        detail: detail.as_deref(),
    };
    log_end(id, &last, &full);
    if let Err(e) = shared.store.finish(id, &end) {
        eprintln!("job {id}: cannot record its end: {e}");
    }
    job.status.send_replace(last);
    shared.forget(id);
}

/// What a private job's client is told of a failure: the reason's fixed
/// text, plus the engine's message only when it was produced before any
/// row was read.
fn public_error(reason: FailureReason, full: &str) -> String {
    if reason == FailureReason::InvalidJob {
        format!("{}: {full}", reason_text(reason))
    } else {
        reason_text(reason).to_string()
    }
}

/// One line per job on standard error, with every figure (the operator's
/// log: it may hold what clients never see).
fn log_end(id: &str, s: &JobStatus, error: &str) {
    let phases: Vec<String> =
        s.phases.iter().map(|p| format!("{} {:.3}s", p.phase, p.seconds)).collect();
    eprintln!(
        "job {id}: {} {}| detection tasks {} | edges {} fingerprint {} | {}",
        crate::client::state_name(s.state),
        if error.is_empty() { String::new() } else { format!("({error}) ") },
        s.tasks_total,
        s.edges,
        s.edge_fingerprint,
        phases.join(", ")
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_option_errors_before_reading_are_shown() {
        let config = EngineError::Config("unknown strategy 'x'".into());
        assert_eq!(classify(&config, false), FailureReason::InvalidJob);
        assert_eq!(classify(&config, true), FailureReason::Internal);
        let cap = EngineError::Ledger {
            path: "/l".into(),
            message: "budget cap exceeded: the dataset has spent".into(),
        };
        assert_eq!(classify(&cap, true), FailureReason::BudgetExhausted);
        let read = EngineError::Source(dpincon_source::SourceError::Schema("x".into()));
        assert_eq!(classify(&read, false), FailureReason::Internal);
    }
}
