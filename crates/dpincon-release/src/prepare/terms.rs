//! `ub-direct`'s I_MI where d̃ sums many comparable terms (README of this
//! crate, "the seventeenth round"): a wide table with FDs over a dozen
//! different X has d̃ ≈ Σ_X (maxfreq_X − 1), ten times the largest degree,
//! since a row rarely conflicts under every X at once. A noisy largest
//! term says when the sum is that loose, and a GEM step then reads the
//! projection curve between the two.

use dpincon_mechanisms::{Budget, DiscreteLaplace, NoiseRng};

use super::bounds::split2;
use super::candidates::halving_candidates;
use super::{THETA_FLOOR, generalized, take_from_release};
use crate::prepare::Choice;
use crate::spec::{BudgetUse, NoisyDegreeBound, ProjectedSpec, TableFacts};
use crate::{ProjectedMeasure, ReleaseError};

/// Share of ε (from the release's) on the largest term, wherever d̃ sums
/// at least [`SPREAD_RATIO`] terms (chosen with the next three on the training suite, the
/// wide tables and the held-out sets, among 0.03 and 0.05).
const LARGEST_TERM_SHARE: f64 = 0.05;
/// The GEM step runs where d̃ + margin is at least this many times the
/// largest term's high reading (among 2–5: at 2 Hospital, whose rows do
/// conflict under two X of about 400 rows each, loses its θ).
const SPREAD_RATIO: f64 = 4.0;
/// The high reading: the term plus this many noise scales (among 0–2).
const LARGEST_TERM_SCALES: f64 = 1.0;
/// Share of ε (from the release's) on that GEM step (as the fourteenth
/// round's).
const ABOVE_TERM_GEM_SHARE: f64 = 0.2;
/// Share of the release's ε on a second release at d̃ + margin, read only
/// for the interval's upper end: below D the lemma's end is about f·2D/θ*
/// (0.15 and 0.25 tried on the `wide` family: the same point error, the
/// widths 25–30% narrower at 0.25).
const UPPER_RELEASE_SHARE: f64 = 0.25;

/// Where `spec` is I_MI and d̃ sums at least [`SPREAD_RATIO`] terms: spends the look at
/// the largest term (recorded in `bound`), and when `top` = d̃ + margin is
/// at least [`SPREAD_RATIO`] times its high reading, returns a GEM step
/// over the halvings of `top` down to the term, with the ε of a second
/// release at `top` for the interval. `None` otherwise (nothing spent where
/// the rule does not apply).
pub(super) fn above_largest_term(
    spec: &ProjectedSpec,
    facts: &TableFacts,
    top: u32,
    release: &mut Budget,
    budget: &mut BudgetUse,
    bound: &mut NoisyDegreeBound,
    rng: &mut NoiseRng,
) -> Result<Option<(Choice, Budget)>, ReleaseError> {
    // The sum is at most `terms` times its largest term: with fewer than
    // SPREAD_RATIO terms only noise could pass the test (public: k alone).
    let largest = facts.largest_degree_term();
    if spec.measure != ProjectedMeasure::Mi || (largest.terms as f64) < SPREAD_RATIO {
        return Ok(None);
    }
    // A maximum of sensitivity-1 (cross: 2) terms moves by at most as much.
    let look = take_from_release(release, LARGEST_TERM_SHARE, spec.epsilon)?;
    let noise = DiscreteLaplace::new(largest.sensitivity, look.value())?;
    let term = noise.release(largest.value, rng);
    budget.degree_bound += look.value();
    bound.largest_term = Some(term);
    let high = (term as f64 + LARGEST_TERM_SCALES * noise.scale_f64()).max(1.0);
    if f64::from(top) < SPREAD_RATIO * high {
        return Ok(None);
    }
    let lower = (term.max(0) as u64).clamp(u64::from(THETA_FLOOR), u64::from(top)) as u32;
    let mut candidates: Vec<u32> =
        halving_candidates(top).into_iter().filter(|&t| t > lower).collect();
    candidates.insert(0, lower);
    let epsilon = take_from_release(release, ABOVE_TERM_GEM_SHARE, spec.epsilon)?;
    let (upper, rest) = split2(*release, UPPER_RELEASE_SHARE)?;
    *release = rest;
    Ok(Some((generalized(candidates, epsilon), upper)))
}
