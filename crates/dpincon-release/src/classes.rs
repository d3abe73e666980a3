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
//! near the largest group. `ub-direct` releases a noisy largest class as
//! τ and uses the class count when τ is at most the θ the degree bound
//! allows: the choice reads released values only.

use dpincon_mechanisms::{Budget, DiscreteLaplace, NoiseRng};
use serde::{Deserialize, Serialize};

use crate::ReleaseError;
use crate::interval::{BOUND_MISS, upper_quantile};

/// The classes of the table's one X (private: exact counts).
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
}

impl ClassFacts {
    /// Σ min(class, τ) over the impure groups' classes: at most I_P.
    pub fn capped(&self, tau: u32) -> u64 {
        let tau = u64::from(tau);
        self.sizes.iter().map(|&(size, count)| size.min(tau).saturating_mul(count)).sum()
    }
}

/// The noisy class bounds (public): the largest class and the NULL rows,
/// one draw each at scale 1/ε_c. The pair moves by at most 1 in L1: a row
/// with a NULL B only moves `null_rows`, any other row only `max_class`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoisyClassBound {
    /// The largest class, plus noise (1 and exact under a key).
    pub max_class: i64,
    /// Rows left out for a NULL B, plus noise (0 and exact under a key).
    pub null_rows: i64,
}

/// What the class count's interval rests on, each bound holding with
/// probability at least 1 − 0.25% (or always, under a key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassBounds {
    /// The largest class.
    pub max_class: u64,
    /// The rows a NULL B left out.
    pub null_rows: u64,
}

/// Releases the class bounds with `eps` (nothing under a key) and returns
/// them, τ = the noisy largest class (at least 1) and the interval's bounds.
pub(crate) fn class_bound(
    facts: &ClassFacts,
    eps: Option<Budget>,
    rng: &mut NoiseRng,
) -> Result<(NoisyClassBound, u32, ClassBounds), ReleaseError> {
    let Some(eps) = eps.filter(|_| !facts.key) else {
        let bound = NoisyClassBound { max_class: 1, null_rows: 0 };
        return Ok((bound, 1, ClassBounds { max_class: 1, null_rows: 0 }));
    };
    let noise = DiscreteLaplace::new(1, eps.value())?;
    let max_class = noise.release(facts.max_class as i64, rng);
    let null_rows = noise.release(facts.null_rows as i64, rng);
    // τ is the noisy largest class itself, with no margin unlike d̃: only
    // impure groups' classes matter and the largest is usually a pure
    // group's; a τ below an impure class cuts it, as the interval allows.
    let tau = max_class.clamp(1, i64::from(u32::MAX)) as u32;
    let q = upper_quantile(&noise, BOUND_MISS / 2.0) as i64;
    let high = |v: i64| v.saturating_add(q).max(0) as u64;
    let bounds = ClassBounds { max_class: high(max_class).max(1), null_rows: high(null_rows) };
    Ok((NoisyClassBound { max_class, null_rows }, tau, bounds))
}

/// The largest I_P consistent with a class count at most `f` at `tau`:
/// classes above τ number at most f/τ (each counts τ) and hold at most
/// max_class − τ rows more each; NULLs left out `null_rows` more.
pub(crate) fn class_upper_end(f: u64, tau: u32, bounds: ClassBounds, rows: Option<u64>) -> u64 {
    let tau = u128::from(tau.max(1));
    let f = u128::from(f);
    let lost = u128::from(bounds.max_class).saturating_sub(tau);
    let hi = f + f / tau * lost + u128::from(bounds.null_rows);
    hi.min(rows.map_or(u128::MAX, u128::from)).min(u128::from(u64::MAX)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_needs_no_budget_and_caps_at_one() {
        let facts = ClassFacts { key: true, max_class: 1, null_rows: 0, sizes: vec![(1, 7)] };
        let mut rng = NoiseRng::seeded(1);
        let (bound, tau, bounds) = class_bound(&facts, None, &mut rng).unwrap();
        assert_eq!((tau, bound.max_class, bounds.max_class, bounds.null_rows), (1, 1, 1, 0));
        assert_eq!(facts.capped(tau), 7);
        assert_eq!(class_upper_end(7, 1, bounds, Some(100)), 7);
    }

    #[test]
    fn the_upper_end_covers_the_cut_classes_and_nulls() {
        // Classes 5, 5, 1 in one group: capped at 2 gives 5; I_P is 11.
        let facts =
            ClassFacts { key: false, max_class: 5, null_rows: 2, sizes: vec![(1, 1), (5, 2)] };
        assert_eq!(facts.capped(2), 5);
        let bounds = ClassBounds { max_class: 5, null_rows: 2 };
        let hi = class_upper_end(facts.capped(2), 2, bounds, None);
        assert!(hi >= 11 + 2, "{hi}");
        assert_eq!(class_upper_end(11, 5, bounds, None), 13);
        assert_eq!(class_upper_end(11, 5, bounds, Some(12)), 12);
    }
}
