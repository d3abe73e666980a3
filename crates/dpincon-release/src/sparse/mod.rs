//! Gated verdicts by the sparse vector technique (README, "Gated
//! verdicts"; issue 48, items 1–3).
//!
//! A nightly check `measure <= T` is what AboveThreshold answers: one
//! charge of ε per *epoch* buys any number of nights that stay inside the
//! band, and the first night outside ends the epoch with an `above` that
//! calls for a fresh release (charged as today). The pieces:
//!
//! - [`Band`], [`Direction`]: the public question, one band per statistic:
//!   a check's half-line, the region between several checks (warn, fail,
//!   `>=`) that the last release fell in, the moved gate around the last
//!   released value, or their intersection;
//! - [`EpochParams`], [`Epoch`], [`EpochSecret`], [`GateVerdict`]: one
//!   AboveThreshold run with ρ ~ DLap(2Δ/ε) once and ν ~ DLap(4Δ/ε) a
//!   night, its secret state (ρ never leaves it), and typed refusals after
//!   the `above`, past the k nights planned, or from a secret that is not
//!   this epoch's;
//! - [`MeasureGate`], [`Statistic`]: what an epoch reads for one released
//!   measure (the statistic the opening release noised and those its
//!   interval's bounds came from, each in its band) and the measure's
//!   interval on a night that passed;
//! - [`Accuracy`], [`alpha_pass`], [`alpha_two_sided`], [`min_epsilon`]:
//!   what a pass guarantees, exactly from discrete Laplace tails, and the
//!   least ε that makes a check useful.
//!
//! θ (hence Δ) is fixed for the epoch: the statistic each night is f(G_θ)
//! at the θ of the release that opened it.

mod accuracy;
mod band;
mod epoch;
mod gated;
#[cfg(test)]
mod tests;

pub use accuracy::{Accuracy, accuracy, alpha_pass, alpha_quiet, alpha_two_sided, min_epsilon};
pub use band::{Band, Direction};
pub use epoch::{Epoch, EpochParams, EpochSecret, GateVerdict};
pub use gated::{GatedStatistic, MeasureGate, NightFacts, Statistic};

use crate::{IntervalBounds, ProjectedMeasure};

/// What a gated pass says about the measure itself, projection included:
/// the statistic f(G_θ) was at most `statistic_hi` (the band's upper end
/// plus α), and with the interval lemma (README, "Intervals") the measure
/// F is at most this. `bounds` must hold on the gated night, not only on
/// the night that opened the epoch: the declared max-rows and n_max − 1 do;
/// a degree bound does when the epoch also gates the night's
/// Σ_X (maxfreq_X − 1) statistic (a second band, README).
pub fn measure_upper_end(
    measure: ProjectedMeasure,
    statistic_hi: u64,
    theta: u32,
    bounds: IntervalBounds,
) -> u64 {
    crate::interval::upper_end(measure, statistic_hi, theta, bounds)
}
