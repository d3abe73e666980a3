//! A job accepted and not yet ended, and how much of their slots ended
//! jobs used: what the shared state holds and the runner runs and records.

use std::sync::Arc;

use dpincon_engine::Prepaid;
use dpincon_proto::v1::{JobState, JobStatus};
use tokio::sync::watch;

use crate::store::Slot;
use crate::submission::Accepted;

/// A job accepted and not yet ended, in memory. Finished jobs live only in
/// the store, so memory is bounded by the queue limit.
#[derive(Debug)]
pub(crate) struct Active {
    pub id: String,
    /// The client that submitted it.
    pub owner: String,
    /// Submission order, for queue positions.
    pub seq: u64,
    pub accepted: Accepted,
    /// Its time slot, fixed at acceptance.
    pub slot: Slot,
    /// The charge made at acceptance.
    pub prepaid: Prepaid,
    /// The full status (operator and non-private view).
    pub status: Arc<watch::Sender<JobStatus>>,
    pub cancel: watch::Sender<bool>,
}

impl Active {
    pub(crate) fn new(
        id: String,
        owner: String,
        seq: u64,
        accepted: Accepted,
        slot: Slot,
        prepaid: Prepaid,
    ) -> Self {
        let status = JobStatus {
            job_id: id.clone(),
            state: JobState::Queued as i32,
            ..JobStatus::default()
        };
        Active {
            id,
            owner,
            seq,
            accepted,
            slot,
            prepaid,
            status: Arc::new(watch::Sender::new(status)),
            cancel: watch::Sender::new(false),
        }
    }

    /// Still waiting for its slot at `now_ms`: on a fixed-time coordinator
    /// read from its booking (public), elsewhere from its state.
    pub(crate) fn waiting(&self, fixed_time: bool, now_ms: i64) -> bool {
        let queued = self.status.borrow().state == JobState::Queued as i32;
        if fixed_time { queued && now_ms < self.slot.start_ms } else { queued }
    }
}

/// How much of their slots a dataset's jobs used: the operator's aggregate
/// for sizing `job-deadline` (metrics `dpincon_slot_use`), never per job.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct SlotUse {
    /// Jobs that ended using at most each of [`SlotUse::BOUNDS`] of their
    /// slot (not cumulative).
    pub within: [u64; SlotUse::BOUNDS.len()],
    /// Jobs stopped at their slot's end.
    pub overruns: u64,
}

impl SlotUse {
    /// The histogram's upper bounds, as fractions of the slot.
    pub const BOUNDS: [f64; 6] = [0.1, 0.25, 0.5, 0.75, 0.9, 1.0];

    pub(super) fn record(&mut self, used: f64, overrun: bool) {
        if overrun {
            self.overruns += 1;
        } else if let Some(i) = Self::BOUNDS.iter().position(|b| used <= *b) {
            self.within[i] += 1;
        } else {
            // Ended after the slot's end but before the kill landed.
            self.within[Self::BOUNDS.len() - 1] += 1;
        }
    }
}
