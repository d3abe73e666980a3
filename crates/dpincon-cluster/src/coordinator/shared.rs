//! State the RPC handlers and the job runner share: admission, the charge, what a client may see.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use dpincon_engine::ledger::{self, DirLock};
use dpincon_proto::v1::{FailureReason, JobState, JobStatus};
use prost::Message;
use tokio::sync::mpsc;
use tonic::Status;

use super::active::{Active, SlotUse};
use crate::ClusterError;
use crate::datasets::ReleaseMode;
use crate::schedule::Lanes;
use crate::store::{JobStore, Slot, StoredJob, now_ms};
use crate::submission::{self, Refusal, Rules};

use super::CoordinatorOptions;

/// State shared by the RPC handlers and the job runner.
#[derive(Debug)]
pub(crate) struct Shared {
    pub options: CoordinatorOptions,
    pub store: JobStore,
    /// Queued and running jobs; ended ones are only in the store.
    pub(super) active: Mutex<HashMap<String, Arc<Active>>>,
    /// Serialises admission (queue counts, the charge, the slot, the
    /// insert as one step); holds the lanes' bookings.
    pub(super) admission: tokio::sync::Mutex<Lanes>,
    pub(super) queue: mpsc::UnboundedSender<Arc<Active>>,
    pub(super) next_seq: AtomicU64,
    /// How much of their slots each dataset's jobs used, and overruns
    /// (the operator's log and metrics).
    pub slot_use: Mutex<HashMap<String, SlotUse>>,
    pub(super) _locks: Vec<DirLock>,
}

impl Shared {
    /// Where jobs' graph spill files go (anonymous files,
    /// gone with the process).
    pub fn work_dir(&self) -> PathBuf {
        self.options.config.state_dir.join("work")
    }

    /// What submissions are checked against.
    pub(super) fn rules(&self) -> Rules<'_> {
        Rules { datasets: &self.options.config.datasets, limits: &self.options.config.limits }
    }

    /// Drops an ended job from memory (the store has it).
    pub fn forget(&self, id: &str) {
        self.active.lock().expect("active jobs poisoned").remove(id);
    }

    pub(super) fn active(&self, id: &str) -> Option<Arc<Active>> {
        self.active.lock().expect("active jobs poisoned").get(id).cloned()
    }

    /// Whether every job is fixed-time (the coordinator's datasets are).
    pub fn fixed_time(&self) -> bool {
        self.options.config.release == ReleaseMode::FixedTime
    }

    /// Jobs accepted and waiting for their slot at `now_ms`. On a
    /// fixed-time coordinator that is read from the bookings (public),
    /// not from whether the runner has started them yet.
    pub fn waiting(&self, now_ms: i64) -> Vec<Arc<Active>> {
        let fixed = self.fixed_time();
        let active = self.active.lock().expect("active jobs poisoned");
        active.values().filter(|j| j.waiting(fixed, now_ms)).cloned().collect()
    }

    /// The job's full status: live while it is active, else from the store.
    pub(super) fn full_status(&self, stored: &StoredJob) -> JobStatus {
        if let Some(job) = self.active(&stored.id) {
            let mut status = job.status.borrow().clone();
            let now = now_ms();
            if job.waiting(self.fixed_time(), now) {
                status.queue_position =
                    self.waiting(now).iter().filter(|j| j.seq < job.seq).count() as u32;
            }
            return status;
        }
        if let Some(full) = stored.detail.as_deref().and_then(|d| JobStatus::decode(d).ok()) {
            return full;
        }
        JobStatus {
            job_id: stored.id.clone(),
            state: stored.state as i32,
            reason: stored.reason as i32,
            error: match stored.state {
                JobState::Failed => stored.error.clone(),
                JobState::Cancelled => "cancelled by a client".into(),
                _ => String::new(),
            },
            ..JobStatus::default()
        }
    }

    /// The status a client sees: `queued` until its release time (on a
    /// fixed-time coordinator, every job's slot's end), then its end; a
    /// private job shows only its state and public reason, a non-private
    /// one of a test dataset its counts too (its phase times only when
    /// jobs end when done: elsewhere they would time the jobs beside it).
    pub(super) fn status_of(&self, stored: &StoredJob) -> JobStatus {
        let full = self.full_status(stored);
        client_view(&full, stored.slot, stored.non_private, now_ms())
    }

    /// The job `id` if `client` owns it.
    pub(super) fn owned(&self, id: &str, client: &str) -> Result<StoredJob, Status> {
        match self.store.get(id).map_err(internal)? {
            Some(job) if job.owner == client => Ok(job),
            _ => Err(Status::not_found(format!("no job '{id}'"))),
        }
    }

    /// Checks the queue limits, charges the dataset's ledger, fixes the
    /// job's slot, then stores and queues it. A recovered job (accepted by
    /// a previous process) was charged then: it only gets a new slot.
    pub(super) async fn admit(
        &self,
        client: &str,
        accepted: submission::Accepted,
        recovered: Option<StoredJob>,
    ) -> Result<String, Refusal> {
        let mut lanes = self.admission.lock().await;
        let dataset = accepted.dataset.clone();
        let limits = &self.options.config.limits;
        let now = now_ms();
        let waiting = self.waiting(now);
        let all = waiting.len();
        let mine = waiting.iter().filter(|j| j.owner == client).count();
        if recovered.is_none() && all >= limits.max_queued {
            return Err(Refusal::new(
                FailureReason::QueueFull,
                format!("{all} jobs are waiting; submit again later"),
            ));
        }
        if recovered.is_none() && mine >= limits.max_queued_per_client {
            return Err(Refusal::new(
                FailureReason::QueueFull,
                format!(
                    "{mine} of your jobs are waiting (the limit per client); submit again later"
                ),
            ));
        }
        // A gated night's epochs have one writer: one night per dataset
        // is booked until its release time (a function of acceptance
        // times, as every slot).
        if recovered.is_none() && accepted.gate().is_some() {
            let active = self.active.lock().expect("active jobs poisoned");
            let booked = active
                .values()
                .any(|j| j.accepted.dataset.name == dataset.name && j.accepted.gate().is_some());
            if booked {
                return Err(Refusal::new(
                    FailureReason::QueueFull,
                    format!(
                        "a gated night of dataset '{}' is booked and not yet released; submit \
                         again after its release time",
                        dataset.name
                    ),
                ));
            }
        }
        // The slot: from acceptance and the lanes' bookings only (public).
        // Booked below only once the job is charged and stored.
        let length_ms = i64::try_from(dataset.job_deadline.as_millis()).unwrap_or(i64::MAX);
        let mut booked = lanes.clone();
        let booking = booked.book(now, length_ms);
        let slot =
            Slot { start_ms: booking.start_ms, end_ms: booking.end_ms, fixed: self.fixed_time() };
        let (id, prepaid) = match &recovered {
            Some(job) => {
                self.store.reslot(&job.id, slot).map_err(|e| {
                    eprintln!("job {}: cannot give it a new slot: {e}", job.id);
                    Refusal::new(FailureReason::Internal, "the job store refused the job")
                })?;
                (job.id.clone(), job.prepaid.clone())
            }
            None => {
                let id = dpincon_engine::new_job_id().map_err(|e| {
                    eprintln!("cannot make a job id: {e}");
                    Refusal::new(FailureReason::Internal, "no job id")
                })?;
                // The charge comes first: from here on every outcome is paid.
                let prepaid = self.charge(&id, &accepted)?;
                let stored = StoredJob {
                    id: id.clone(),
                    owner: client.to_string(),
                    dataset: dataset.name.clone(),
                    request: accepted.request.clone(),
                    non_private: accepted.non_private,
                    state: JobState::Queued,
                    reason: FailureReason::Unspecified,
                    error: String::new(),
                    report: None,
                    detail: None,
                    slot,
                    prepaid: prepaid.clone(),
                };
                self.store.insert(&stored).map_err(|e| {
                    eprintln!("job {id}: charged but cannot be stored: {e}");
                    Refusal::new(FailureReason::Internal, "the job store refused the job")
                })?;
                (id, prepaid)
            }
        };
        *lanes = booked;
        let seq = self.next_seq.fetch_add(1, Ordering::SeqCst);
        let job =
            Arc::new(Active::new(id.clone(), client.to_string(), seq, accepted, slot, prepaid));
        self.active.lock().expect("active jobs poisoned").insert(id.clone(), job.clone());
        if self.queue.send(job).is_err() {
            return Err(Refusal::new(FailureReason::Internal, "the job runner has stopped"));
        }
        eprintln!("job {id}: queued for {client} on dataset {}", dataset.name);
        Ok(id)
    }

    /// Records the job's ε in its dataset's ledger (fsynced) or refuses it
    /// (over the cap: nothing is recorded).
    pub(super) fn charge(
        &self,
        id: &str,
        accepted: &submission::Accepted,
    ) -> Result<dpincon_engine::Prepaid, Refusal> {
        let dataset = &accepted.dataset;
        let charges = accepted.charges();
        let prepaid = |ledger| dpincon_engine::Prepaid {
            job_id: id.to_string(),
            ledger,
            quota_epsilon: accepted.quota_epsilon(),
        };
        if charges.is_empty() {
            return Ok(prepaid(None));
        }
        let cap = Some(dataset.budget_cap());
        match ledger::charge(dataset.ledger(), &dataset.table.name(), cap, id, &charges) {
            Ok(state) => Ok(prepaid(Some(state))),
            Err(e) => {
                eprintln!(
                    "dataset {}: refusing a job of ε = {}: {e}",
                    dataset.name, accepted.total_epsilon
                );
                Err(if e.to_string().contains("cap exceeded") {
                    Refusal::new(
                        FailureReason::BudgetExhausted,
                        format!(
                            "dataset '{}' cannot fund ε = {} more within its cap {} (see the \
                             operator)",
                            dataset.name,
                            accepted.total_epsilon,
                            dataset.budget_cap()
                        ),
                    )
                } else {
                    Refusal::new(FailureReason::Internal, "the dataset's ledger cannot be read")
                })
            }
        }
    }
}

/// A job's status as its client sees it at `now_ms`: how it ended once
/// that is released (a cancel at once: the client's own act), else
/// `queued`, never `running`. A private job shows its state and public
/// reason only; a non-private one its counts too, and its phases only when
/// its end shows as it comes (`slot.fixed` false: when-done coordinators).
fn client_view(full: &JobStatus, slot: Slot, non_private: bool, now_ms: i64) -> JobStatus {
    let release_at_unix_ms = if slot.fixed { slot.end_ms.max(0) as u64 } else { 0 };
    if non_private && !slot.fixed {
        return JobStatus { release_at_unix_ms, ..full.clone() };
    }
    let ended = match JobState::try_from(full.state) {
        Ok(JobState::Cancelled) => true,
        Ok(JobState::Succeeded | JobState::Failed) => slot.released(now_ms),
        _ => false,
    };
    if !ended {
        return JobStatus {
            job_id: full.job_id.clone(),
            state: JobState::Queued as i32,
            release_at_unix_ms,
            ..JobStatus::default()
        };
    }
    if non_private {
        // Counts and the fingerprint are the test data's; how long phases
        // took depends on the jobs that ran beside this one.
        return JobStatus {
            release_at_unix_ms,
            phases: Vec::new(),
            phase: String::new(),
            ..full.clone()
        };
    }
    JobStatus { release_at_unix_ms, ..private_view(full) }
}

/// Only what a private job's client may see: id, state, public reason.
fn private_view(full: &JobStatus) -> JobStatus {
    JobStatus {
        job_id: full.job_id.clone(),
        state: full.state,
        reason: full.reason,
        error: full.error.clone(),
        ..JobStatus::default()
    }
}

pub(super) fn internal(e: ClusterError) -> Status {
    eprintln!("error: {e}");
    Status::internal(FailureReason::Internal.text())
}

pub(super) fn is_terminal(state: i32) -> bool {
    matches!(
        JobState::try_from(state),
        Ok(JobState::Succeeded | JobState::Failed | JobState::Cancelled)
    )
}
