//! Gated nights (issue 48; dpincon-release README, "Gated verdicts"): a
//! nightly job whose measures answer from a running sparse-vector epoch
//! when they can, and release afresh only when the epoch's `above` (or
//! its absence) calls for it.
//!
//! Per measure, an epoch opens with a fresh release, charged ε (as any
//! job's) plus the gate's ε, both before any noise; its
//! [`MeasureGate`] fixes θ and the bands from that release. Each later
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
use dpincon_release::{Direction, MeasureGate};
use serde::{Deserialize, Serialize};

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

/// What a measure's night was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GateOutcome {
    /// The epoch passed: the opening release stands, within the gate's
    /// interval. Nothing charged.
    Pass,
    /// A fresh release (in the report's `measures`) opened a new epoch.
    Fresh,
}

/// Why a measure released afresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpenReason {
    /// No epoch yet.
    First,
    /// The epoch answered `above`: the measure moved or crossed a check.
    Above,
    /// The epoch's planned nights are used up.
    Exhausted,
    /// The suite's settings for it changed (ε, β, nights, checks).
    Changed,
    /// The state was missing, unreadable or behind the history: a new,
    /// charged epoch (ρ is never redrawn for free).
    Lost,
    /// A fresh release charged before a crash and never stored: drawn
    /// again under its charge (nothing of the first draw was published).
    Recovered,
}

/// An epoch's public figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpochReport {
    /// The job whose release opened it.
    pub opened_by: String,
    /// ε of its gate.
    pub epsilon: f64,
    /// ε of its opening release.
    pub release_epsilon: f64,
    /// Δ of the night's query.
    pub sensitivity: u64,
    /// Nights planned.
    pub nights: u32,
    /// Nights answered so far (tonight's included).
    pub nights_used: u32,
    /// β.
    pub beta: f64,
    /// α: with probability ≥ 1 − β every pass of the epoch had each
    /// statistic within α of its band.
    pub alpha: u64,
    /// α₂: also, no night α₂ inside the bands ended it.
    pub alpha_two_sided: u64,
    /// α_q ≤ α₂: with probability ≥ 1 − β, no night α_q inside the bands
    /// ends the epoch (the default `moved`).
    pub alpha_quiet: u64,
    /// The moved gate's width past the release noise.
    pub moved: u64,
    /// The statistics and their bands.
    pub gate: MeasureGate,
}

/// One measure's night.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateReport {
    /// The measure.
    pub measure: Measure,
    /// Pass or fresh.
    pub outcome: GateOutcome,
    /// Why fresh.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<OpenReason>,
    /// The value shown: the opening release's, clamped into `ci95` on a
    /// pass; tonight's release when fresh.
    pub value: i64,
    /// On a pass, the gate's interval (α and the bands; it holds the
    /// measure with probability ≥ 1 − β); when fresh, the release's.
    pub ci95: [i64; 2],
    /// The epoch answering tonight, or opened tonight.
    pub epoch: EpochReport,
}
