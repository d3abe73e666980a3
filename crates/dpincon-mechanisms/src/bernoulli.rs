//! Exact Bernoulli samplers on rationals (Canonne, Kamath, Steinke 2020,
//! "The Discrete Gaussian for Differential Privacy", Algorithm 1).
//!
//! Integer arithmetic only: every decision compares a uniform integer with
//! a rational's numerator, so the probability of each outcome is exactly
//! the rational (or `exp(−γ)` for a rational γ), with no floating-point
//! rounding that could depend on a secret (SPEC §6.5, §7).

use crate::MechanismError;
use crate::rational::Rational;
use crate::rng::NoiseRng;
use crate::wide::U256;

/// Bernoulli(p) for a rational `p ∈ [0, 1]`: `true` with probability
/// exactly `p`.
///
/// # Errors
/// [`MechanismError::InvalidRational`] if `p > 1`.
pub fn bernoulli(rng: &mut NoiseRng, p: &Rational) -> Result<bool, MechanismError> {
    if p.numer() > p.denom() {
        return Err(MechanismError::InvalidRational {
            num: p.numer(),
            den: p.denom(),
            reason: "a probability must be at most 1",
        });
    }
    Ok(bernoulli_ratio(rng, p.numer(), p.denom()))
}

/// Bernoulli(exp(−γ)) for a rational `γ ≥ 0`: `true` with probability
/// exactly `exp(−γ)`.
pub fn bernoulli_exp_neg(rng: &mut NoiseRng, gamma: &Rational) -> bool {
    let frac = gamma.fract();
    bernoulli_exp_neg_parts(rng, U256::from_u128(gamma.floor()), frac.numer(), frac.denom())
}

/// Bernoulli(num/den) with `num ≤ den`, `den > 0`.
pub(crate) fn bernoulli_ratio(rng: &mut NoiseRng, num: u128, den: u128) -> bool {
    debug_assert!(den > 0 && num <= den);
    rng.uniform_below(den) < num
}

/// Bernoulli(exp(−γ)) for `γ = whole + num/den`, `num < den`.
///
/// CKS Algorithm 1, second half: `exp(−γ) = exp(−1)^whole · exp(−num/den)`
/// and a product of independent Bernoullis is the Bernoulli of the
/// product, so run `whole` trials of Bernoulli(exp(−1)), stopping at the
/// first failure, then one Bernoulli(exp(−num/den)). `whole` may be huge
/// (it is a 256-bit count): the loop still ends after about 1.6 trials on
/// average, because each trial fails with probability 1 − 1/e.
pub(crate) fn bernoulli_exp_neg_parts(
    rng: &mut NoiseRng,
    whole: U256,
    num: u128,
    den: u128,
) -> bool {
    debug_assert!(num < den);
    let mut remaining = whole;
    while !remaining.is_zero() {
        if !bernoulli_exp_neg_unit(rng, 1, 1) {
            return false;
        }
        remaining = remaining.dec();
    }
    bernoulli_exp_neg_unit(rng, num, den)
}

/// Bernoulli(exp(−γ)) for `γ = num/den ∈ [0, 1]` (CKS Algorithm 1, first
/// half).
///
/// Draw A_k ~ Bernoulli(γ/k) for k = 1, 2, … until the first failure at
/// K; then P(K > k) = γ^k/k! and P(K odd) = Σ_j (−γ)^j/j! = exp(−γ).
/// Bernoulli(γ/k) is drawn as Bernoulli(1/k) AND Bernoulli(num/den), two
/// independent events whose joint probability is γ/k; this avoids the
/// product `den·k`, which could overflow.
pub(crate) fn bernoulli_exp_neg_unit(rng: &mut NoiseRng, num: u128, den: u128) -> bool {
    debug_assert!(den > 0 && num <= den);
    let mut k: u128 = 1;
    loop {
        let a = rng.uniform_below(k) == 0 && bernoulli_ratio(rng, num, den);
        if !a {
            return k % 2 == 1;
        }
        k += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn degenerate_cases_are_deterministic() {
        let mut rng = NoiseRng::seeded(11);
        for _ in 0..1000 {
            assert!(bernoulli_exp_neg(&mut rng, &Rational::ZERO));
            assert!(bernoulli(&mut rng, &Rational::ONE).unwrap());
            assert!(!bernoulli(&mut rng, &Rational::ZERO).unwrap());
        }
        assert!(bernoulli(&mut rng, &Rational::new(3, 2).unwrap()).is_err());
    }

    #[test]
    fn huge_gamma_terminates_and_is_false() {
        let mut rng = NoiseRng::seeded(12);
        let huge = U256 { hi: u128::MAX, lo: 0 };
        for _ in 0..1000 {
            assert!(!bernoulli_exp_neg_parts(&mut rng, huge, 1, 2));
            assert!(!bernoulli_exp_neg(&mut rng, &Rational::from_integer(1 << 100)));
        }
    }
}
