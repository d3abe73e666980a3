//! The public bounds prepare releases before the pass: the row bound ñ
//! and the degree bound d̃ (SPEC §4), each drawn once or twice and
//! averaged by inverse variance.

use dpincon_mechanisms::{Budget, DiscreteLaplace, NoiseRng};

use super::candidates::clamp_theta;
use crate::ReleaseError;
use crate::miss::BOUND_MISS;
use crate::spec::{BudgetUse, DegreeTerms, MaxRows, NoisyDegreeBound, ProjectedSpec, TableFacts};

/// Share of ε1 spent on ñ when the job declares no row bound (SPEC §4).
pub(crate) const MAX_ROWS_SHARE: f64 = 0.05;
/// Upward margin on the minimal-set d̃, in standard deviations of its noise.
/// d̃ below the true maximum degree truncates (biases) the release, above it
/// only adds noise: half a standard deviation had the lowest mean error on
/// the training tables (README of this crate).
const DEGREE_BOUND_MARGIN_SD: f64 = 0.5;

/// `b` split into `first` and the rest of it.
pub(crate) fn split2(b: Budget, first: f64) -> Result<(Budget, Budget), ReleaseError> {
    let parts = b.split(&[first, 1.0 - first])?;
    Ok((parts[0], parts[1]))
}

/// A row bound: n_max in use, ñ (at least 1), and the interval's bound.
pub(crate) struct RowBound {
    pub(crate) bound: MaxRows,
    pub(crate) rows: u64,
    /// ñ plus its noise's 99.5% quantile, or the declared n_max.
    pub(crate) high: u64,
}

/// Releases ñ = n + DLap(1/ε_n) with `share` of `source` and returns
/// n_max = ñ + ⌈ln 20 / ε_n⌉, ñ itself and the budget left of `source`;
/// or the declared bound and all of `source` (SPEC §4). With `sharpen`,
/// ñ is drawn beside a declared bound too: n_max stays the declared one,
/// but the noise caps, the floor and the interval read the smaller of it
/// and ñ's 99.5% upper bound (so a noisy ñ never undercuts n where the
/// declared bound would not: small tables keep theirs). An audit declares a generous
/// public bound (twice the rows is common), which would double I_P's
/// noise cap and leave its interval's upper end at the bound.
pub(crate) fn row_bound(
    spec: &ProjectedSpec,
    facts: &TableFacts,
    source: Budget,
    share: f64,
    sharpen: bool,
    budget: &mut BudgetUse,
    rng: &mut NoiseRng,
) -> Result<(RowBound, Option<Budget>), ReleaseError> {
    let declared = spec.max_rows;
    if let Some(value) = declared
        && !sharpen
    {
        let bound = MaxRows { value, estimated: false };
        return Ok((RowBound { bound, rows: value, high: value }, Some(source)));
    }
    let (eps_n, rest) = if share < 1.0 {
        let (a, b) = split2(source, share)?;
        (a, Some(b))
    } else {
        (source, None)
    };
    budget.max_rows = eps_n.value();
    let noise = DiscreteLaplace::new(1, eps_n.value())?;
    let noisy = noise.release(facts.rows as i64, rng).max(1);
    let high = (noisy as u64).saturating_add(noise.upper_quantile(BOUND_MISS));
    let bound = match declared {
        Some(value) => {
            let bound = MaxRows { value, estimated: false };
            return Ok((RowBound { bound, rows: high.min(value), high: high.min(value) }, rest));
        }
        None => {
            let margin = (20f64.ln() / eps_n.value()).ceil() as i64;
            MaxRows { value: noisy.saturating_add(margin) as u64, estimated: true }
        }
    };
    Ok((RowBound { bound, rows: noisy as u64, high }, rest))
}

/// [`row_bound`] with [`MAX_ROWS_SHARE`] of `source`: the rest is returned.
pub(crate) fn row_bound_share(
    spec: &ProjectedSpec,
    facts: &TableFacts,
    source: Budget,
    sharpen: bool,
    budget: &mut BudgetUse,
    rng: &mut NoiseRng,
) -> Result<(RowBound, Budget), ReleaseError> {
    let (bound, rest) = row_bound(spec, facts, source, MAX_ROWS_SHARE, sharpen, budget, rng)?;
    Ok((bound, rest.expect("a share below 1 leaves a rest")))
}

/// ñ drawn again with `second` and averaged with the `first` draw (made
/// with `first_epsilon`) by inverse variance: post-processing of two ε-DP
/// counts. The first's 5% of ε1 left θ_c = ⌊0.1·ñ⌋ anywhere from 30 to 170
/// on 1,000 rows at ε = 0.5 (noise scale 280; README, "the eighth round").
pub(crate) fn sharper_rows(
    facts: &TableFacts,
    (first, first_epsilon): (u64, f64),
    second: Budget,
    rng: &mut NoiseRng,
) -> Result<u64, ReleaseError> {
    let noise = DiscreteLaplace::new(1, second.value())?;
    let drawn = noise.release(facts.rows as i64, rng) as f64;
    let (w1, w2) = (first_epsilon.powi(2), second.value().powi(2));
    Ok(((w1 * first as f64 + w2 * drawn) / (w1 + w2)).round().max(1.0) as u64)
}

/// d̃ = Σ_X (maxfreq_X − 1) + DLap(k/ε0) over `terms` (k terms, cross
/// equalities' included): a neighbour moves each maxfreq by at most 1, so
/// the sum by at most k, and one draw at scale k/ε0 is ε0-DP. (The paper
/// draws k times, once per set, for the same ε0: √k times the noise.)
/// Also returns the degree bound that holds with probability ≥ 1 −
/// [`BOUND_MISS`]: d̃ plus the noise's one-sided quantile.
pub(crate) fn noisy_degree_bound(
    terms: DegreeTerms,
    eps0: Budget,
    margin_sd: f64,
    rng: &mut NoiseRng,
) -> Result<(NoisyDegreeBound, u64), ReleaseError> {
    let k = terms.count;
    let noise = DiscreteLaplace::new(k as u64, eps0.value())?;
    let value = noise.release(terms.sum, rng);
    // DLap(s) has standard deviation ≈ s·√2; public.
    let margin = (margin_sd * noise.scale_f64() * 2f64.sqrt()).ceil() as i64;
    let high = value.saturating_add(noise.upper_quantile(BOUND_MISS) as i64).max(1) as u64;
    Ok((NoisyDegreeBound { value, sets: k, margin, largest_term: None }, high))
}

/// The standard deviation of d̃ over `sets` minimal sets, drawn once per
/// ε in `epsilons` and averaged by inverse variance: √2·k/√(Σ ε²) (DLap(s)
/// has standard deviation ≈ s·√2). Public: it reads only k and the budget.
pub(crate) fn degree_noise_sd(sets: usize, epsilons: &[f64]) -> f64 {
    2f64.sqrt() * sets as f64 / epsilons.iter().map(|e| e * e).sum::<f64>().sqrt()
}

/// d̃ drawn again with `second` and averaged with the `first` (drawn with
/// `first_epsilon`) by inverse variance: post-processing of two ε-DP sums,
/// whose average has standard deviation √2·k/√(ε0² + ε_s²); the margin is
/// half of it. The high-confidence bound is the lower of the two draws'
/// own, each at half the miss (a union bound keeps the miss).
pub(crate) fn sharper_degree_bound(
    facts: &TableFacts,
    (first, first_epsilon): (NoisyDegreeBound, f64),
    second: Budget,
    rng: &mut NoiseRng,
) -> Result<(NoisyDegreeBound, u64), ReleaseError> {
    let k = first.sets;
    let noise = DiscreteLaplace::new(k as u64, second.value())?;
    let drawn = noise.release(facts.degree_terms(true).sum, rng);
    let (w1, w2) = (first_epsilon.powi(2), second.value().powi(2));
    let value = ((w1 * first.value as f64 + w2 * drawn as f64) / (w1 + w2)).round() as i64;
    let sd = degree_noise_sd(k, &[first_epsilon, second.value()]);
    let margin = (DEGREE_BOUND_MARGIN_SD * sd).ceil() as i64;
    let first_noise = DiscreteLaplace::new(k as u64, first_epsilon)?;
    let high = |value: i64, noise: &DiscreteLaplace| {
        value.saturating_add(noise.upper_quantile(BOUND_MISS / 2.0) as i64).max(1) as u64
    };
    let high = high(first.value, &first_noise).min(high(drawn, &noise));
    Ok((NoisyDegreeBound { value, sets: k, margin, largest_term: None }, high))
}

/// `ub-direct`'s and `ub-gem`'s d̃ over the minimal equality sets with `eps0`
/// (margin ½ sd), the θ it allows (d̃ + margin, at least 1) and its
/// high-confidence degree bound.
pub(crate) fn minimal_set_bound(
    facts: &TableFacts,
    eps0: Budget,
    budget: &mut BudgetUse,
    rng: &mut NoiseRng,
) -> Result<(NoisyDegreeBound, u32, u64), ReleaseError> {
    budget.degree_bound = eps0.value();
    let (bound, high) =
        noisy_degree_bound(facts.degree_terms(true), eps0, DEGREE_BOUND_MARGIN_SD, rng)?;
    let top = clamp_theta(bound.value.saturating_add(bound.margin).max(1) as u64);
    Ok((bound, top, high))
}
