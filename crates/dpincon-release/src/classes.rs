//! I_P by class count (issue 28; README, "I_P by class count"): when every
//! constraint is a key or an FD of one attribute set X, a group of rows
//! agreeing on X is complete multipartite by its B-tuple, and every row of
//! a group with two classes conflicts. Σ over such groups and classes of
//! min(class, τ), capped(τ), is then a lower bound on I_P, exact once τ
//! reaches the largest class, with node sensitivity τ + 1 (proof and
//! exhaustive check: `dpincon_detect::fd_classes`). So is f_P(G_τ), and
//! hence their maximum, which `ub-direct` releases at τ.
//!
//! On duplicated keys the classes are a few rows while the groups, hence
//! the degrees, are large: τ is small where the projection alone needs θ
//! near the largest group, and needs no degree bound at all. `ub-direct`
//! draws the largest class and the excess over a small τ (module docs of
//! [`class_bound`]) and picks τ from them: the choice reads released values
//! only.

use dpincon_mechanisms::{Budget, DiscreteLaplace, NoiseRng};
use serde::{Deserialize, Serialize};

use crate::ReleaseError;
use crate::miss::BOUND_MISS;

/// The classes of the table's keys and FDs (private: exact counts): of its
/// one X, or, when the FDs have several X, of each (`others`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClassFacts {
    /// X's constraints include a key: every row is its own class (τ = 1 is
    /// exact and public).
    pub key: bool,
    /// The largest class in any group (sensitivity 1).
    pub max_class: u64,
    /// Rows with X but a NULL B, left out of the count (sensitivity 1).
    pub null_rows: u64,
    /// (class size, classes of that size) over groups of two classes or more.
    pub sizes: Vec<(u64, u64)>,
    /// Σ over every class, pure groups' too, of max(class − `excess_from`,
    /// 0): at least what capped(τ) misses for τ ≥ `excess_from`, NULLs
    /// aside (sensitivity 1; `dpincon_detect::ConflictClasses::excess`).
    pub excess: u64,
    /// The small τ `excess` counts from (`dpincon_detect::EXCESS_FROM`).
    pub excess_from: u32,
    /// With several X: `sizes` of each X but the first (only the count at
    /// θ* reads them; `key`, `max_class`, `null_rows` and `excess` are the
    /// first X's and unused).
    pub others: Vec<Vec<(u64, u64)>>,
    /// With several X: the leading count over them and what it misses
    /// (the fifteenth round).
    pub leading: Option<LeadingFacts>,
}

/// I_P's leading count over several X (`dpincon_detect::leading_count`:
/// the rows among the first τ₀ of their class in a group of two classes
/// or more, under any X), at most I_P, and M (`leading_miss`), at least
/// what it misses of I_P; with their node sensitivities 1 + k_key +
/// k_fd·τ₀ and k_fd·(τ₀ + 1), public (they read which X are keys, from
/// the constraints); M's is 0 over keys alone. Proofs:
/// `dpincon_detect`'s module `leading`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LeadingFacts {
    /// The leading count (private).
    pub count: u64,
    /// M (private).
    pub miss: u64,
    /// The count's sensitivity.
    pub count_sensitivity: u64,
    /// M's sensitivity.
    pub miss_sensitivity: u64,
}

impl ClassFacts {
    /// Every constraint is a key or an FD of one X.
    pub fn one_x(&self) -> bool {
        self.others.is_empty()
    }

    /// Σ min(class, τ) over one X's impure groups' classes, the largest
    /// over the X: at most I_P. Each X's sum moves by at most τ + 1 when a
    /// row is added or removed, so their maximum does too.
    pub fn capped(&self, tau: u32) -> u64 {
        let tau = u64::from(tau);
        let sum = |sizes: &[(u64, u64)]| -> u64 {
            sizes.iter().map(|&(size, count)| size.min(tau).saturating_mul(count)).sum()
        };
        self.others.iter().map(|s| sum(s)).fold(sum(&self.sizes), u64::max)
    }
}

/// Releases M + DLap(Δ_M/ε) with `look`, and its high-confidence bound
/// (the noise's 99.5% quantile above it).
pub(crate) fn leading_miss(
    facts: &LeadingFacts,
    look: Budget,
    rng: &mut NoiseRng,
) -> Result<(i64, u64), ReleaseError> {
    let noise = DiscreteLaplace::new(facts.miss_sensitivity, look.value())?;
    let miss = noise.release(facts.miss as i64, rng);
    let high = miss.saturating_add(noise.upper_quantile(BOUND_MISS) as i64).max(0) as u64;
    Ok((miss, high))
}

/// The noisy class bounds (public): the largest class and the NULL rows,
/// one draw each at scale 1/ε_b, and the excess at scale 1/ε_x. The first
/// pair moves by at most 1 in L1 (a row with a NULL B only moves
/// `null_rows`, any other row only `max_class`), the excess by at most 1:
/// ε_b + ε_x in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoisyClassBound {
    /// The largest class, plus noise (1 and exact under a key).
    pub max_class: i64,
    /// Rows left out for a NULL B, plus noise (0 and exact under a key).
    pub null_rows: i64,
    /// The excess over the small τ, plus noise (none under a key).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excess: Option<i64>,
}

/// The budgets of the class looks and of the release they serve.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClassLooks {
    /// ε_b: the largest class and the NULL rows.
    pub bound: Budget,
    /// ε_x: the excess over the small τ.
    pub excess: Budget,
    /// ε2: the release's, whose noise the choice of τ weighs.
    pub release: Budget,
}

/// What the class count's interval rests on, each bound holding with
/// probability at least 1 − 0.25% (or always, under a key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassBounds {
    /// The largest class.
    pub max_class: u64,
    /// The rows a NULL B left out.
    pub null_rows: u64,
    /// The excess over a small τ, bounding what any τ at or above it cuts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excess: Option<ExcessBound>,
}

/// A high-confidence bound on the excess over `from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExcessBound {
    /// The small τ it counts from.
    pub from: u32,
    /// The excess.
    pub high: u64,
}

/// Releases the class bounds with `looks` (nothing under a key) and
/// returns them, τ (at least τ₀ = `excess_from`, 1 under a key) and the
/// interval's bounds.
///
/// τ is the noisy largest class, with no margin unlike d̃ (only impure
/// groups' classes matter and the largest is usually a pure group's), or
/// the small τ₀ = `excess_from` when that costs less: each unit of τ adds
/// 1/ε2 to the release's mean noise, while from τ₀ on the count misses at
/// most the excess over τ₀. So τ₀ is chosen when the noisy excess is at
/// most (τ − τ₀)/ε2. Duplicated keys (classes of a row or two, one
/// outlier class) take τ₀; star-shaped groups, whose large classes make the
/// excess their size, keep the largest class.
pub(crate) fn class_bound(
    facts: &ClassFacts,
    looks: Option<ClassLooks>,
    rng: &mut NoiseRng,
) -> Result<(NoisyClassBound, u32, ClassBounds), ReleaseError> {
    let Some(looks) = looks.filter(|_| !facts.key) else {
        let bound = NoisyClassBound { max_class: 1, null_rows: 0, excess: None };
        return Ok((bound, 1, ClassBounds { max_class: 1, null_rows: 0, excess: None }));
    };
    let noise = DiscreteLaplace::new(1, looks.bound.value())?;
    let max_class = noise.release(facts.max_class as i64, rng);
    let null_rows = noise.release(facts.null_rows as i64, rng);
    let excess_noise = DiscreteLaplace::new(1, looks.excess.value())?;
    let excess = excess_noise.release(facts.excess as i64, rng);
    // τ never goes below τ₀: the noise (scale 1/ε_b, 10 at ε = 0.5) puts
    // the largest class at 1 in a quarter of the runs on FDs whose classes
    // reach 10, and τ = 1 then drops most of I_P (README, the twelfth
    // round). Post-processing of the draw, like every τ here.
    let from = facts.excess_from.max(1);
    let largest = max_class.clamp(i64::from(from), i64::from(u32::MAX)) as u32;
    let tau =
        if largest > from && excess as f64 * looks.release.value() <= f64::from(largest - from) {
            from
        } else {
            largest
        };
    // Three bounds share the class count's miss (module `interval`).
    let q = |n: &DiscreteLaplace| n.upper_quantile(BOUND_MISS / 3.0) as i64;
    let high = |v: i64, n: &DiscreteLaplace| v.saturating_add(q(n)).max(0) as u64;
    let bounds = ClassBounds {
        max_class: high(max_class, &noise).max(1),
        null_rows: high(null_rows, &noise),
        excess: Some(ExcessBound { from, high: high(excess, &excess_noise) }),
    };
    let bound = NoisyClassBound { max_class, null_rows, excess: Some(excess) };
    Ok((bound, tau, bounds))
}

/// The largest I_P consistent with a class count at most `f` at `tau`,
/// the smaller of two bounds (`dpincon_detect::fd_classes`):
/// - classes above τ number at most f/τ (each counts τ) and hold at most
///   max_class − τ rows more each; a row with a NULL B conflicts only in
///   its X group, adding itself and, in a group pure without it, that
///   group's one class: (1 + max_class) per NULL row;
/// - from the excess's τ₀ on: the excess plus τ + 1 per NULL row.
pub(crate) fn class_upper_end(f: u64, tau: u32, bounds: ClassBounds, rows: Option<u64>) -> u64 {
    let (f, t) = (u128::from(f), u128::from(tau.max(1)));
    let (max_class, nulls) = (u128::from(bounds.max_class), u128::from(bounds.null_rows));
    let mut hi = f + f / t * max_class.saturating_sub(t) + nulls * (1 + max_class);
    if let Some(e) = bounds.excess.filter(|e| tau >= e.from) {
        hi = hi.min(f + u128::from(e.high) + nulls * (t + 1));
    }
    hi.min(rows.map_or(u128::MAX, u128::from)).min(u128::from(u64::MAX)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_needs_no_budget_and_caps_at_one() {
        let facts =
            ClassFacts { key: true, max_class: 1, sizes: vec![(1, 7)], ..Default::default() };
        let mut rng = NoiseRng::seeded(1);
        let (bound, tau, bounds) = class_bound(&facts, None, &mut rng).unwrap();
        assert_eq!((tau, bound.max_class, bounds.max_class, bounds.null_rows), (1, 1, 1, 0));
        assert_eq!(facts.capped(tau), 7);
        assert_eq!(class_upper_end(7, 1, bounds, Some(100)), 7);
    }

    #[test]
    fn tau_never_falls_below_tau_zero_when_the_largest_class_draws_low() {
        // Classes of 3 to 10 rows (the suite's sparse FDs): at ε_b = 0.1
        // the largest class's noise (scale 10) draws it at 1 or less in
        // about a quarter of the runs.
        let facts = ClassFacts {
            max_class: 10,
            sizes: vec![(3, 40), (10, 40)],
            excess: 320,
            excess_from: 2,
            ..Default::default()
        };
        let looks = ClassLooks {
            bound: Budget::new(0.1).unwrap(),
            excess: Budget::new(0.025).unwrap(),
            release: Budget::new(0.35).unwrap(),
        };
        let (mut low, mut taus) = (0, Vec::new());
        for seed in 0..400 {
            let mut rng = NoiseRng::seeded(seed);
            let (bound, tau, _) = class_bound(&facts, Some(looks), &mut rng).unwrap();
            low += usize::from(bound.max_class <= 1);
            taus.push(tau);
        }
        assert!((60..=160).contains(&low), "largest class drawn at 1 or less in {low} of 400");
        assert!(taus.iter().all(|&t| t >= 2), "τ below τ₀: {taus:?}");
    }

    #[test]
    fn the_upper_end_covers_the_cut_classes_and_nulls() {
        // Classes 5, 5, 1 in one group: capped at 2 gives 5; I_P is 11.
        let facts = ClassFacts {
            max_class: 5,
            null_rows: 2,
            sizes: vec![(1, 1), (5, 2)],
            excess: 6,
            excess_from: 2,
            ..Default::default()
        };
        assert_eq!(facts.capped(2), 5);
        let bounds = ClassBounds { max_class: 5, null_rows: 2, excess: None };
        // Each NULL row may join a pure group of up to 5 rows.
        let nulls = 2 * (1 + 5);
        let hi = class_upper_end(facts.capped(2), 2, bounds, None);
        assert_eq!(hi, 5 + 5 / 2 * 3 + nulls);
        assert_eq!(class_upper_end(11, 5, bounds, None), 11 + nulls);
        assert_eq!(class_upper_end(11, 5, bounds, Some(12)), 12);
        // From its τ₀ on, the excess bounds the cut and each NULL row
        // counts τ + 1; below τ₀ it does not apply.
        let excess = ClassBounds { excess: Some(ExcessBound { from: 2, high: 6 }), ..bounds };
        assert_eq!(class_upper_end(facts.capped(2), 2, excess, None), 5 + 6 + 2 * 3);
        assert_eq!(facts.capped(1), 3);
        assert_eq!(class_upper_end(3, 1, excess, None), 3 + 3 * 4 + nulls);
    }
}
