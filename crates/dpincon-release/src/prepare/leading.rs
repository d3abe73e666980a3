//! `ub-direct`'s I_P over several X's keys and FDs: the look at M, what
//! the leading count misses, and the choice it makes between the count at
//! τ₀ and the class count at θ* (README, the fifteenth and sixteenth
//! rounds). Reads only public values, ñ and M's noisy draw.

use dpincon_mechanisms::{Budget, NoiseRng};

use super::take_from_release;
use crate::classes::{ExcessBound, LeadingFacts, leading_miss};
use crate::spec::BudgetUse;
use crate::{ProjectedMeasure, ReleaseError};

use super::choice::LeadingChoice;

/// Share of ε (from the release's) on M, what the leading count over
/// several X misses: the leading count is released where the noisy M,
/// less a slack, is at most the noise it saves, (Δ(θ*) − Δ_lead)/ε2.
/// Chosen among 0.02–0.1 on the training suite and the held-out tables
/// (README, the fifteenth and sixteenth rounds): M is in the hundreds of
/// thousands where it is not near 0.
const LEADING_LOOK_SHARE: f64 = 0.03;
/// The slack, in noise scales Δ_M/ε_l of M's draw: M = 0 leads in 99% of
/// runs however small the saving (README, the sixteenth round).
const LEADING_SLACK: f64 = 4.0;
/// ... and at most this share of ñ: with many X and a small ε the noise
/// scale is in the thousands, where a slack would let an M of several
/// times the rows lead (Flight).
const LEADING_SLACK_ROWS: f64 = 0.5;
/// The look at M runs only where the leading count's sensitivity is at
/// most this share of Δ(θ*): where it would not halve the noise, bias and
/// the look's ε would eat what it saves (the fifteenth round).
const LEADING_NOISE_SHARE: f64 = 0.5;

/// Where the leading count would be released: at τ₀ = `tau`, against the
/// class count at `theta` = θ*; `rows` is ñ (released).
#[derive(Debug, Clone, Copy)]
pub(super) struct LeadingAt {
    pub(super) tau: u32,
    pub(super) theta: u32,
    pub(super) rows: u64,
}

/// The look's outcome: the choice, M's noisy draw (none without a look)
/// and the interval's bound on what the count misses.
pub(super) struct LeadingLook {
    pub(super) choice: LeadingChoice,
    pub(super) miss: Option<i64>,
    pub(super) high: ExcessBound,
}

/// `None` (and no ε spent) where the count's sensitivity Δ_lead is above
/// [`LEADING_NOISE_SHARE`] of Δ(θ*): the class count at θ* is released.
/// Otherwise draws M̃ = M + DLap(Δ_M/ε_l) with [`LEADING_LOOK_SHARE`] of ε
/// from the release's share, and leads iff (M̃ − slack)·ε2 ≤ Δ(θ*) −
/// Δ_lead, the slack min(4·Δ_M/ε_l, ½·ñ). Over keys alone M is 0 with
/// sensitivity 0: it leads with no look and no ε.
pub(super) fn look(
    lead: &LeadingFacts,
    at: LeadingAt,
    epsilon: Budget,
    release: &mut Budget,
    budget: &mut BudgetUse,
    rng: &mut NoiseRng,
) -> Result<Option<LeadingLook>, ReleaseError> {
    let current = ProjectedMeasure::P.sensitivity(at.theta);
    if lead.count_sensitivity as f64 > LEADING_NOISE_SHARE * current as f64 {
        return Ok(None);
    }
    let choice = |look, lead_| LeadingChoice {
        tau: at.tau,
        theta: at.theta,
        sensitivity: lead.count_sensitivity,
        look,
        miss_sensitivity: lead.miss_sensitivity,
        lead: lead_,
    };
    if lead.miss_sensitivity == 0 {
        let high = ExcessBound { from: at.tau, high: 0 };
        return Ok(Some(LeadingLook { choice: choice(None, true), miss: None, high }));
    }
    let look = take_from_release(release, LEADING_LOOK_SHARE, epsilon)?;
    budget.class_bound = look.value();
    let (miss, high) = leading_miss(lead, look, rng)?;
    let saved = current.saturating_sub(lead.count_sensitivity) as f64;
    // M is often exactly 0 (keys, classes of one row), where a draw at
    // scale Δ_M/ε_l lands above a small saving in a third of the runs.
    let scale = lead.miss_sensitivity as f64 / look.value();
    let slack = (LEADING_SLACK * scale).min(LEADING_SLACK_ROWS * at.rows as f64);
    let lead_ = (miss as f64 - slack) * release.value() <= saved;
    Ok(Some(LeadingLook {
        choice: choice(Some(look), lead_),
        miss: Some(miss),
        high: ExcessBound { from: at.tau, high },
    }))
}
