//! Gated nights (issue 48; dpincon-release README, "Gated verdicts"): a
//! nightly job whose measures answer from a running sparse-vector epoch
//! when they can, and release afresh only when the epoch's `above` (or
//! its absence) calls for it.
//!
//! Per measure, an epoch opens with a fresh release, charged ε (as any
//! job's) plus the gate's ε, both before any noise; its
//! [`MeasureGate`](dpincon_release::MeasureGate) fixes θ and the bands from that release. Each later
//! night reads the gate's statistics and asks the epoch: a pass re-serves
//! the opening release's value with the gate's interval, at no charge; an
//! `above` ends the epoch, and the same night opens the next one. The
//! state (ρ) lives in an owner-only file beside the ledger (module `state`).

mod night;
mod plan;
mod state;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use dpincon_api::Measure;
use dpincon_release::Direction;
use serde::{Deserialize, Serialize};

pub use crate::report::{EpochReport, GateOutcome, GateReport, OpenReason};
pub use night::{run_gated_night, run_prepaid_gated_night};
pub use plan::{DEFAULT_BETA, GatePlan, PlanError};

/// A gated dataset's public settings for one night.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateOptions {
    /// The state file (secret: ρ), beside the ledger.
    pub state: PathBuf,
    /// ε of each epoch's gate, per measure (charged when it opens).
    pub epsilon: f64,
    /// Nights an epoch may answer: the plan's horizon.
    pub nights: u32,
    /// β: every pass of an epoch holds its α with probability ≥ 1 − β.
    pub beta: f64,
    /// How far a measure may move past its release's noise before a
    /// fresh release, in the measure's units (`None`: the epoch's quiet
    /// width α_q, so that an unmoved measure ends its epoch with
    /// probability at most β over the nights planned).
    pub moved: Option<u64>,
    /// The checks, whose thresholds cut the bands.
    pub checks: Vec<GateCheck>,
    /// The epochs the history shows.
    #[serde(flatten)]
    pub history: PublishedEpochs,
}

/// The epochs a dataset's published nights show (an audit's history, a
/// coordinator's job store).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublishedEpochs {
    /// Each measure's latest epoch.
    pub published: BTreeMap<Measure, PublishedEpoch>,
    /// Every earlier epoch: a state holding one of these is a stale copy.
    pub retired: BTreeSet<String>,
}

impl PublishedEpochs {
    /// Records one published night of `measure`'s epoch opened by
    /// `opened_by`, which had answered `nights_used` nights (oldest first).
    pub fn record(&mut self, measure: Measure, opened_by: &str, nights_used: u32) {
        let latest = self
            .published
            .entry(measure)
            .or_insert_with(|| PublishedEpoch { opened_by: opened_by.into(), nights: 0 });
        if latest.opened_by != opened_by {
            self.retired.insert(std::mem::replace(&mut latest.opened_by, opened_by.into()));
        }
        latest.nights = nights_used;
    }
}

/// The ledger records opening an epoch of each of `measures` is charged:
/// its release under the measure's name, its gate under `gate-` and the
/// name (the embedded night's charge, a coordinator night's hold).
pub fn epoch_charges(
    measures: &[Measure],
    release_epsilon: f64,
    gate_epsilon: f64,
) -> Vec<(&'static str, f64)> {
    let gate = |m: Measure| match m {
        Measure::Mi => "gate-mi",
        Measure::P => "gate-p",
        Measure::R => "gate-r",
    };
    measures.iter().flat_map(|&m| [(m.name(), release_epsilon), (gate(m), gate_epsilon)]).collect()
}

/// A check on a measure: `measure <op> threshold`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateCheck {
    /// The measure.
    pub measure: Measure,
    /// `<=` or `>=`.
    pub direction: Direction,
    /// The threshold, an integer (⌊T⌋ for `<=`, ⌈T⌉ for `>=`).
    pub threshold: i64,
}

/// An epoch as the history shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublishedEpoch {
    /// The job that opened it.
    pub opened_by: String,
    /// Nights it answered that were published.
    pub nights: u32,
}
