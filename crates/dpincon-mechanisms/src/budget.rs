//! Privacy budgets and their sequential composition (SPEC §8).
//!
//! A [`Budget`] is a validated ε. Splitting one (ε1 = 0.4·ε, ε2 = 0.6·ε in
//! SPEC §4) must never hand out more than the whole: the parts are `f64`,
//! and `0.4·ε + 0.6·ε` computed in floating point can exceed ε by an ulp.
//! [`Budget::split`] therefore checks the *exact* real sum of the parts
//! (with an error-free floating-point expansion, Shewchuk 1997) and lowers
//! the largest part by one ulp until the exact sum is at most ε.
//! [`total`] rounds the other way: the reported sequential-composition
//! total is never below the exact sum, so a ledger cap check built on it
//! errs on the side of refusing.

use std::cmp::Ordering;
use std::fmt;

use crate::MechanismError;
use crate::laplace::check_epsilon;

/// A validated privacy budget ε (finite, > 0).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Budget(f64);

impl Budget {
    /// A budget of ε.
    ///
    /// # Errors
    /// [`MechanismError::InvalidEpsilon`] unless ε is finite and > 0.
    pub fn new(epsilon: f64) -> Result<Self, MechanismError> {
        check_epsilon(epsilon)?;
        Ok(Budget(epsilon))
    }

    /// The ε.
    pub fn value(&self) -> f64 {
        self.0
    }

    /// Split into parts `ε · fraction_i`. The fractions must each be
    /// finite and > 0 and sum to 1 within 1e-9; they are normalised by
    /// their sum, and the parts are then lowered (by ulps) until their
    /// exact sum is at most ε, so the split never creates budget.
    ///
    /// # Errors
    /// [`MechanismError::InvalidFractions`] naming the fractions,
    /// [`MechanismError::UnsplittableBudget`] if a part would underflow to
    /// zero.
    pub fn split(&self, fractions: &[f64]) -> Result<Vec<Budget>, MechanismError> {
        let sum: f64 = fractions.iter().sum();
        let valid = !fractions.is_empty()
            && fractions.iter().all(|f| f.is_finite() && *f > 0.0)
            && (sum - 1.0).abs() <= 1e-9;
        if !valid {
            return Err(MechanismError::InvalidFractions { fractions: fractions.to_vec(), sum });
        }
        let unsplittable = || MechanismError::UnsplittableBudget {
            epsilon: self.0,
            fractions: fractions.to_vec(),
        };
        let mut parts: Vec<f64> = fractions.iter().map(|f| self.0 * (f / sum)).collect();
        // Each part is within a few ulps of its exact share, so a handful
        // of one-ulp steps suffices; the bound only guards the loop.
        for _ in 0..(64 * parts.len() + 64) {
            if parts.iter().any(|p| !(p.is_finite() && *p > 0.0)) {
                return Err(unsplittable());
            }
            let mut terms = parts.clone();
            terms.push(-self.0);
            if matches!(exact_sum_sign(&terms), Some(Ordering::Less | Ordering::Equal)) {
                return Ok(parts.into_iter().map(Budget).collect());
            }
            let largest =
                (0..parts.len()).max_by(|&a, &b| parts[a].total_cmp(&parts[b])).unwrap_or(0);
            parts[largest] = parts[largest].next_down();
        }
        Err(unsplittable())
    }

    /// Sequential composition: the total ε of several releases, rounded
    /// up (see [`total`]).
    pub fn total(parts: &[Budget]) -> f64 {
        total(parts)
    }
}

/// Sequential composition: Σ ε_i as the smallest `f64` that is not below
/// the exact real sum (floating-point addition can fall short of it by an
/// ulp, which a ledger must not under-count). 0 for no budgets.
pub fn total(parts: &[Budget]) -> f64 {
    let values: Vec<f64> = parts.iter().map(|b| b.0).collect();
    // sign(Σ values − s), exactly.
    let excess = |s: f64| {
        let mut terms = values.clone();
        terms.push(-s);
        exact_sum_sign(&terms)
    };
    let mut s: f64 = values.iter().sum();
    // The naive sum is within a few ulps per term, so a few steps suffice;
    // the bounds only guard the loops.
    let steps = 64 * values.len() + 64;
    for _ in 0..steps {
        match excess(s) {
            Some(Ordering::Less | Ordering::Equal) => break,
            Some(Ordering::Greater) => s = s.next_up(),
            None => return f64::INFINITY,
        }
    }
    for _ in 0..steps {
        let lower = s.next_down();
        if matches!(excess(lower), Some(Ordering::Less | Ordering::Equal)) {
            s = lower;
        } else {
            break;
        }
    }
    if matches!(excess(s), Some(Ordering::Less | Ordering::Equal)) { s } else { f64::INFINITY }
}

impl fmt::Display for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Error-free sum of two floats: `a + b = s + e` exactly (Knuth TwoSum).
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

/// The sign of the exact real sum of `values`, or `None` if an
/// intermediate overflowed. Shewchuk's Grow-Expansion keeps the sum as a
/// non-overlapping expansion ordered by magnitude; its sign is the sign of
/// its largest non-zero component.
fn exact_sum_sign(values: &[f64]) -> Option<Ordering> {
    let mut expansion: Vec<f64> = Vec::with_capacity(values.len() + 1);
    for &b in values {
        let mut q = b;
        let mut next = Vec::with_capacity(expansion.len() + 1);
        for &e in &expansion {
            let (s, h) = two_sum(q, e);
            next.push(h);
            q = s;
        }
        next.push(q);
        expansion = next;
    }
    if expansion.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let top = expansion.iter().rev().find(|x| **x != 0.0).copied();
    Some(match top {
        None => Ordering::Equal,
        Some(x) if x > 0.0 => Ordering::Greater,
        Some(_) => Ordering::Less,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn invalid_epsilons_are_refused() {
        assert_eq!(
            Budget::new(f64::NAN).unwrap_err().to_string(),
            "epsilon must be a finite number > 0, got NaN"
        );
        assert_eq!(
            Budget::new(-0.5).unwrap_err().to_string(),
            "epsilon must be a finite number > 0, got -0.5"
        );
        for bad in [0.0, -0.0, -1.0, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(Budget::new(bad), Err(MechanismError::InvalidEpsilon(bad)));
        }
        assert_eq!(Budget::new(0.25).unwrap().value(), 0.25);
    }

    #[test]
    fn fractions_must_be_positive_and_sum_to_one() {
        let b = Budget::new(1.0).unwrap();
        let err = b.split(&[0.4, 0.5]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "budget fractions must each be a finite number > 0 and sum to 1 (within 1e-9), got [0.4, 0.5] (sum 0.9)"
        );
        for bad in [
            &[][..],
            &[1.2, -0.2],
            &[1.0, 0.0],
            &[f64::NAN, 1.0],
            &[0.5, 0.5 + 1e-8],
            &[f64::INFINITY],
        ] {
            assert!(
                matches!(b.split(bad), Err(MechanismError::InvalidFractions { .. })),
                "{bad:?}"
            );
        }
        // Within tolerance is accepted (and normalised).
        assert!(b.split(&[0.5, 0.5 + 1e-10]).is_ok());
        // Half of the smallest subnormal rounds to zero: refused, not 0.
        assert!(matches!(
            Budget::new(f64::from_bits(1)).unwrap().split(&[0.5, 0.5]),
            Err(MechanismError::UnsplittableBudget { .. })
        ));
    }

    #[test]
    fn paper_split_is_close_and_never_exceeds() {
        let b = Budget::new(1.0).unwrap();
        let parts = b.split(&[0.4, 0.6]).unwrap();
        assert!((parts[0].value() - 0.4).abs() < 1e-15);
        assert!((parts[1].value() - 0.6).abs() < 1e-15);
        assert!(Budget::total(&parts) <= 1.0);
        let quarters = b.split(&[0.25; 4]).unwrap();
        assert!(quarters.iter().all(|q| q.value() == 0.25));
        assert_eq!(total(&quarters), 1.0);
        assert_eq!(total(&[]), 0.0);
    }

    #[test]
    fn exact_sign_sees_what_floating_point_misses() {
        // 1 + 1e-30 − 1 is 0 in f64 but positive exactly.
        assert_eq!(exact_sum_sign(&[1.0, 1e-30, -1.0]), Some(Ordering::Greater));
        assert_eq!(exact_sum_sign(&[1.0, -1e-30, -1.0]), Some(Ordering::Less));
        assert_eq!(exact_sum_sign(&[0.1, 0.2, -0.3]), Some(Ordering::Greater));
        assert_eq!(exact_sum_sign(&[]), Some(Ordering::Equal));
        // total is the smallest f64 at or above the exact sum: the exact
        // 0.1 + 0.2 lies strictly between two floats, so total is above
        // it and its predecessor below it.
        let t = total(&[Budget::new(0.1).unwrap(), Budget::new(0.2).unwrap()]);
        assert_eq!(exact_sum_sign(&[0.1, 0.2, -t]), Some(Ordering::Less));
        assert_eq!(exact_sum_sign(&[0.1, 0.2, -t.next_down()]), Some(Ordering::Greater));
        // 1 + 2^-60 is not a float: total rounds it up, never down to 1.
        let t = total(&[Budget::new(1.0).unwrap(), Budget::new(2f64.powi(-60)).unwrap()]);
        assert_eq!(t, 1.0f64.next_up());
    }

    proptest! {
        #[test]
        fn split_never_creates_budget(
            eps in 1e-6f64..100.0,
            raw in proptest::collection::vec(0.01f64..1.0, 1..8),
        ) {
            let s: f64 = raw.iter().sum();
            let fractions: Vec<f64> = raw.iter().map(|f| f / s).collect();
            let parts = Budget::new(eps).unwrap().split(&fractions).unwrap();
            let mut terms: Vec<f64> = parts.iter().map(Budget::value).collect();
            terms.push(-eps);
            prop_assert_ne!(exact_sum_sign(&terms), Some(Ordering::Greater));
            for (p, f) in parts.iter().zip(&fractions) {
                prop_assert!((p.value() - eps * f).abs() <= 1e-12 * eps);
            }
            // And the rounded-up total never reports less than was spent.
            let t = total(&parts);
            let mut terms: Vec<f64> = parts.iter().map(Budget::value).collect();
            terms.push(-t);
            prop_assert_ne!(exact_sum_sign(&terms), Some(Ordering::Greater));
            prop_assert!(t <= eps);
        }
    }
}
