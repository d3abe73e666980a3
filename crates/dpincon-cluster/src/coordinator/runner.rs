//! Running accepted jobs, each in the slot it booked at acceptance
//! ([`crate::schedule`]) and in a process of its own
//! ([`crate::job_process`]), and recording how each ended.
//!
//! Every job here was charged when it was accepted. On a fixed-time
//! coordinator every job starts at its slot's start, never earlier nor
//! later for any other job's sake, and is killed at its slot's end; what
//! happens after its end (the log's line, the overrun count, the job
//! leaving memory) waits for that end too, so nothing anyone observes
//! moves with how long a job ran. On a when-done coordinator up to K jobs
//! run at once, first come first served. The store records the end at
//! once; clients see it from the release time on
//! ([`crate::store::Slot::released`]). How a job failed is one public
//! reason; the engine's message goes to the operator's log only for
//! non-private jobs or with `--log-private-values`.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use dpincon_ballista::tls::ClusterTls;
use dpincon_ballista::{BallistaJobId, Scheduler};
use dpincon_proto::v1::{FailureReason, JobState, JobStatus, PhaseTime};
use prost::Message;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;
use tokio::sync::{Semaphore, mpsc, watch};

use crate::ClusterError;
use crate::detection::{DetectSeconds, DetectStats};
use crate::job_process::{ChildMessage, JobSpec};
use crate::store::{Ending, now_ms};

use super::active::Active;
use super::shared::Shared;

/// Runs accepted jobs on a runtime of their own: each fixed-time job in a
/// task that waits for its slot (the bookings keep K at once), when-done
/// jobs as one of K permits frees, in acceptance order.
pub(crate) fn run_queue(mut rx: mpsc::UnboundedReceiver<Arc<Active>>, shared: Arc<Shared>) {
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the job runtime: {e}");
            std::process::exit(1);
        }
    };
    let permits = Arc::new(Semaphore::new(shared.options.config.limits.slots));
    runtime.block_on(async move {
        while let Some(job) = rx.recv().await {
            let permit = if job.slot.fixed {
                None
            } else {
                let mut cancel = job.cancel.subscribe();
                tokio::select! {
                    permit = permits.clone().acquire_owned() => permit.ok(),
                    _ = async { let _ = cancel.wait_for(|c| *c).await; } => None,
                }
            };
            let shared = shared.clone();
            tokio::spawn(async move {
                run_one(&job, &shared).await;
                drop(permit);
            });
        }
    });
}

/// Sleeps until Unix millisecond `at` (at once if it is past).
pub(crate) async fn sleep_until_ms(at: i64) {
    let wait = at.saturating_sub(now_ms());
    if wait > 0 {
        tokio::time::sleep(Duration::from_millis(wait as u64)).await;
    }
}

/// How the child process ended, as the coordinator saw it.
enum Outcome {
    /// The report, and a gated night's ε of its hold used.
    Succeeded(String, Option<f64>),
    Failed(FailureReason, String),
    Cancelled,
}

async fn run_one(job: &Active, shared: &Shared) {
    let id = &job.id;
    let mut cancel = job.cancel.subscribe();
    // A fixed-time job starts at its slot's start, never before, and no
    // other job's run moves it.
    if job.slot.fixed {
        tokio::select! {
            _ = sleep_until_ms(job.slot.start_ms) => {}
            _ = async { let _ = cancel.wait_for(|c| *c).await; } => {}
        }
    }
    if *job.cancel.borrow() {
        return shared.forget(id); // Cancelled while queued: already ended.
    }
    let started_ms = now_ms();
    match shared.store.start(id, started_ms) {
        Ok(true) => {}
        Ok(false) => return shared.forget(id),
        Err(e) => {
            eprintln!("job {id}: {e}");
            return shared.forget(id);
        }
    }
    job.status.send_modify(|s| s.state = JobState::Running as i32);
    eprintln!("job {id}: started");
    let reveal = job.accepted.non_private || shared.options.log_private_values;
    let mut stats = None;
    let outcome = match child_spec(job, shared) {
        Ok(spec) => run_child(job, shared, &spec, reveal, &mut cancel, &mut stats).await,
        Err(e) => Outcome::Failed(FailureReason::Internal, e.to_string()),
    };
    if let Some(s) = &stats {
        // Where detection's time went: it grows with the data, so only
        // where the operator may see such figures.
        if reveal {
            let DetectSeconds { job: ballista, fetch, assemble } = s.seconds;
            let mib = s.received as f64 / f64::from(1 << 20);
            eprintln!(
                "job {}: detection: Ballista job {ballista:.1}s, fetch {fetch:.1}s, \
                 assemble {assemble:.1}s ({mib:.0} MiB of row records and groups)",
                job.id
            );
        }
        job.status.send_modify(|status| {
            status.tasks_total = s.tasks;
            status.tasks_done = s.tasks;
            status.edges = s.edges;
            status.edge_fingerprint = s.fingerprint.clone().unwrap_or_default();
        });
    }
    let ended_ms = now_ms();
    let non_private = job.accepted.non_private;
    let mut spent = None;
    let (state, reason, full, report) = match outcome {
        Outcome::Cancelled => {
            (JobState::Cancelled, FailureReason::Unspecified, "cancelled by a client".into(), None)
        }
        Outcome::Succeeded(report, used) => {
            spent = used;
            (JobState::Succeeded, FailureReason::Unspecified, String::new(), Some(report))
        }
        Outcome::Failed(reason, message) => (JobState::Failed, reason, message, None),
    };
    // A private job's store keeps the public text only; its detail went to
    // the operator's log only if `reveal`.
    let kept = match state {
        JobState::Failed if !non_private => reason.text().to_string(),
        _ => full.clone(),
    };
    let mut last = job.status.borrow().clone();
    last.state = state as i32;
    last.reason = reason as i32;
    last.error = kept.clone();
    last.phase.clear();
    let detail = non_private.then(|| last.encode_to_vec());
    let end = Ending {
        state,
        reason,
        error: &kept,
        report: report.as_deref(),
        detail: detail.as_deref(),
    };
    // Stored first, then announced: a client told the job ended finds its
    // end (and report) in the store.
    if let Err(e) = shared.store.finish(id, &end) {
        eprintln!("job {id}: cannot record its end: {e}");
    }
    // Everything else about the end waits for the release time: the log's
    // line, the overrun count and the job leaving memory (which the queue
    // counts read) would otherwise show when it really ended.
    if job.slot.fixed {
        sleep_until_ms(job.slot.end_ms).await;
    }
    log_end(id, &last, &full, reveal);
    if let (Some(_), Some(used)) = (job.accepted.gate(), spent) {
        return_unused(job, used);
    }
    if state != JobState::Cancelled {
        let used =
            (ended_ms - started_ms) as f64 / (job.slot.end_ms - job.slot.start_ms).max(1) as f64;
        let overrun = reason == FailureReason::DeadlineExceeded;
        let dataset = &job.accepted.dataset.name;
        let mut slot_use = shared.slot_use.lock().expect("slot use poisoned");
        let use_of = slot_use.entry(dataset.clone()).or_default();
        use_of.record(used, overrun);
        if overrun {
            eprintln!(
                "dataset {dataset}: {} job(s) stopped at their deadline since start \
                 (job-deadline {:?}; raise it if this grows)",
                use_of.overruns, job.accepted.dataset.job_deadline
            );
        }
    }
    job.status.send_replace(last);
    shared.forget(id);
}

/// Gives back the part of a gated night's hold it did not use, at its
/// release time: from then on its gates' answers are public, and the
/// returned ε is a function of them ([`crate::gated`]). A night that did
/// not succeed keeps its whole hold.
fn return_unused(job: &Active, used: f64) {
    let held = job.accepted.total_epsilon;
    let unused = held - used;
    if unused <= held * 1e-9 {
        return;
    }
    let dataset = &job.accepted.dataset;
    match dpincon_engine::ledger::return_unused(dataset.ledger(), &job.id, unused) {
        Ok(state) => eprintln!(
            "dataset {}: gated night {} used ε {used:.3} of its hold {held:.3}; ε {unused:.3} \
             returned (spent {:.3})",
            dataset.name, job.id, state.spent_after
        ),
        Err(e) => eprintln!("dataset {}: gated night {}: {e}", dataset.name, job.id),
    }
}

/// The child's spec; a gated night's options read the epochs its
/// dataset's earlier nights published (the job store).
fn child_spec(job: &Active, shared: &Shared) -> Result<JobSpec, ClusterError> {
    let gate = match job.accepted.gate() {
        Some(gate) => {
            let dataset = &job.accepted.dataset.name;
            let stored = shared.store.reports(dataset)?;
            let reports: Vec<dpincon_engine::Report> = stored
                .iter()
                .filter_map(|r| serde_json::from_str::<dpincon_engine::Report>(r).ok())
                .filter(|r| r.gated.is_some())
                .collect();
            Some(gate.options(&reports))
        }
        None => None,
    };
    Ok(JobSpec {
        config: job.accepted.job_config(),
        prepaid: job.prepaid.clone(),
        ballista: shared.options.ballista.clone(),
        work_dir: shared.work_dir(),
        dataset: job.accepted.dataset.name.clone(),
        max_memory: job.accepted.dataset.max_job_memory,
        max_spill_bytes: job.accepted.dataset.max_spill_bytes,
        fixed_time: job.slot.fixed,
        gate,
    })
}

/// Runs `spec` in a child process until it reports, its slot ends (killed:
/// deadline exceeded) or its client cancels it (killed).
async fn run_child(
    job: &Active,
    shared: &Shared,
    spec: &JobSpec,
    reveal: bool,
    cancel: &mut watch::Receiver<bool>,
    stats: &mut Option<DetectStats>,
) -> Outcome {
    let id = &job.id;
    let spawned = Command::new(&shared.options.job_program)
        .arg("run-job")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => return Outcome::Failed(FailureReason::Internal, format!("cannot start: {e}")),
    };
    let input = serde_json::to_vec(spec).expect("a job spec serialises");
    let mut stdin = child.stdin.take().expect("piped stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
    let stderr = child.stderr.take().expect("piped stderr");
    // The child's standard error may quote rows: the operator's log only
    // when `reveal`; an allocation failure is noted either way (a quota).
    let prefix = format!("job {id}: ");
    let out_of_memory = tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        let mut oom = false;
        while let Ok(Some(line)) = lines.next_line().await {
            oom |= line.starts_with("memory allocation of");
            if reveal {
                eprintln!("{prefix}{line}");
            }
        }
        oom
    });
    // The child's Ballista job, cancelled below if the child is killed or
    // dies before reporting (it cleans up after itself otherwise).
    let mut submitted = None;
    let talk = async {
        stdin.write_all(&input).await.map_err(ChildError::Send)?;
        drop(stdin);
        let mut last = None;
        while let Some(line) = stdout.next_line().await.map_err(ChildError::Read)? {
            match serde_json::from_str::<ChildMessage>(&line) {
                Ok(ChildMessage::Submitted(ballista)) => submitted = Some(ballista),
                Ok(ChildMessage::Start(phase)) => {
                    job.status.send_modify(|s| s.phase = phase.key().into())
                }
                Ok(ChildMessage::Finish(phase, seconds)) => job.status.send_modify(|s| {
                    s.phases.push(PhaseTime { phase: phase.key().into(), seconds });
                    s.phase.clear();
                }),
                Ok(end) => last = Some(end),
                Err(e) => return Err(ChildError::Message(e)),
            }
        }
        Ok::<_, ChildError>(last)
    };
    let deadline = job.slot.end_ms;
    // (The watch's guard is dropped before anything else awaits.)
    let result = tokio::select! {
        r = talk => Some(Some(r)),
        _ = sleep_until_ms(deadline) => Some(None),
        _ = async { let _ = cancel.wait_for(|c| *c).await; } => None,
    };
    let Some(result) = result else {
        let _ = child.kill().await;
        cancel_ballista(shared, job, submitted, reveal);
        return Outcome::Cancelled;
    };
    let Some(result) = result else {
        let _ = child.kill().await;
        cancel_ballista(shared, job, submitted, reveal);
        return Outcome::Failed(
            FailureReason::DeadlineExceeded,
            "still running at the end of its slot: stopped".into(),
        );
    };
    let status = child.wait().await;
    let oom = out_of_memory.await.unwrap_or(false);
    if !matches!(result, Ok(Some(ChildMessage::Succeeded { .. } | ChildMessage::Failed { .. }))) {
        cancel_ballista(shared, job, submitted, reveal);
    }
    match result {
        Ok(Some(ChildMessage::Succeeded { report, stats: s, spent })) => {
            *stats = s;
            // Stored as its client will read it.
            match serde_json::to_string_pretty(&report) {
                Ok(json) => Outcome::Succeeded(json + "\n", spent),
                Err(e) => Outcome::Failed(
                    FailureReason::Internal,
                    format!("cannot serialise the report: {e}"),
                ),
            }
        }
        Ok(Some(ChildMessage::Failed { reason, detail, stats: s })) => {
            *stats = s;
            Outcome::Failed(reason, detail)
        }
        _ if oom => Outcome::Failed(
            FailureReason::OverQuota,
            "the job process ran out of its max-job-memory".into(),
        ),
        Ok(_) => Outcome::Failed(
            FailureReason::Internal,
            format!("the job process ended without an outcome ({status:?})"),
        ),
        Err(e) => Outcome::Failed(FailureReason::Internal, e.to_string()),
    }
}

/// Why the talk with a job process broke off.
#[derive(Debug, thiserror::Error)]
enum ChildError {
    #[error("cannot send the job: {0}")]
    Send(#[source] std::io::Error),
    #[error(transparent)]
    Read(std::io::Error),
    #[error("unreadable message from the job process: {0}")]
    Message(#[source] serde_json::Error),
}

/// Cancels the Ballista job of a child that was killed or died: its tasks
/// stop and its files go at once (issue 27). In the background, so that
/// the job's end is recorded when it would have been without it; the log's
/// line waits for the release time unless `reveal` (a child dies when its
/// data makes it).
fn cancel_ballista(shared: &Shared, active: &Active, job: Option<BallistaJobId>, reveal: bool) {
    let Some(job) = job else { return };
    let ballista = shared.options.ballista.clone();
    let id = active.id.clone();
    let quiet_until = (active.slot.fixed && !reveal).then_some(active.slot.end_ms);
    tokio::spawn(async move {
        let cancelled = async {
            let tls = ballista.tls.as_ref().map(ClusterTls::load).transpose()?;
            Scheduler::connect(&ballista.scheduler, tls.as_ref()).await?.cancel(&job).await
        };
        let cancelled = cancelled.await;
        if let Some(at) = quiet_until {
            sleep_until_ms(at).await;
        }
        match cancelled {
            Ok(()) => eprintln!("job {id}: Ballista job {job} cancelled"),
            Err(e) => eprintln!("job {id}: cannot cancel Ballista job {job}: {e}"),
        }
    });
}

/// One line per job on standard error. Figures and the engine's message
/// only when `reveal` (non-private jobs, `--log-private-values`): counts,
/// fingerprints and phase times of a private job depend on its rows.
fn log_end(id: &str, s: &JobStatus, error: &str, reveal: bool) {
    let state = dpincon_proto::state_name(s.state);
    if !reveal {
        let reason = FailureReason::try_from(s.reason).unwrap_or(FailureReason::Internal);
        let why = if s.state == JobState::Failed as i32 { reason.text() } else { "" };
        eprintln!("job {id}: {state} {why}");
        return;
    }
    let phases: Vec<String> =
        s.phases.iter().map(|p| format!("{} {:.3}s", p.phase, p.seconds)).collect();
    eprintln!(
        "job {id}: {state} {}| detection tasks {} | edges {} fingerprint {} | {}",
        if error.is_empty() { String::new() } else { format!("({error}) ") },
        s.tasks_total,
        s.edges,
        s.edge_fingerprint,
        phases.join(", ")
    );
}
