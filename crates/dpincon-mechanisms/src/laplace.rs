//! The discrete Laplace mechanism, sampled exactly (SPEC §7).
//!
//! DLap(b): P(k) ∝ exp(−|k|/b) on the integers. Every measure dpincon
//! releases is an integer with an integer sensitivity Δ, so
//! `f(D) + DLap(Δ/ε)` is ε-DP, and sampling it with integer arithmetic
//! avoids the floating-point leak of continuous Laplace (SPEC §6.5,
//! Mironov 2012).
//!
//! The scale `Δ/ε` is a rational `t/s`: ε is rounded *down* to a multiple
//! of 2^-48 (see [`Rational::at_most`]) and `Δ` divided by it exactly, so
//! the scale used is never smaller than `Δ/ε` and the guarantee is at
//! least ε.

use crate::MechanismError;
use crate::bernoulli::bernoulli_exp_neg_unit;
use crate::rational::Rational;
use crate::rng::NoiseRng;
use crate::wide::U256;

/// ε is rounded down to a multiple of 2^-EPSILON_DENOM_BITS. 48 bits keep
/// the relative rounding below 2^-48/ε (negligible for any practical ε)
/// while `Δ · 2^48` still fits in 128 bits for every `u64` sensitivity.
const EPSILON_DENOM_BITS: u32 = 48;

/// The smallest ε [`DiscreteLaplace::new`] accepts: 2^-48 (ε is rounded
/// down to a multiple of it, and must not round to zero). Callers that
/// validate ε up front (the engine) read this, never a copy of the number.
pub const MIN_EPSILON: f64 = 1.0 / (1u64 << EPSILON_DENOM_BITS) as f64;

/// Checks that ε is a finite number > 0 (shared by every mechanism).
pub(crate) fn check_epsilon(epsilon: f64) -> Result<(), MechanismError> {
    if epsilon.is_finite() && epsilon > 0.0 {
        Ok(())
    } else {
        Err(MechanismError::InvalidEpsilon(epsilon))
    }
}

/// ε rounded down to a rational with denominator `2^bits`, refusing ε
/// that would round to zero.
pub(crate) fn epsilon_at_most(epsilon: f64, bits: u32) -> Result<Rational, MechanismError> {
    check_epsilon(epsilon)?;
    let eps = Rational::at_most(epsilon, bits)?;
    if eps.is_zero() {
        return Err(MechanismError::EpsilonTooSmall { epsilon, min: 1.0 / (1u128 << bits) as f64 });
    }
    Ok(eps)
}

/// The discrete Laplace distribution with an exact rational scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiscreteLaplace {
    /// `t/s` in lowest terms, > 0.
    scale: Rational,
}

impl DiscreteLaplace {
    /// DLap(sensitivity/ε): the noise that makes releasing an integer
    /// query of that (public) sensitivity ε-DP.
    ///
    /// The scale is `sensitivity / ε'` with ε' = ε rounded down to a
    /// multiple of 2^-48, i.e. the exact scale rounded *up*.
    ///
    /// # Errors
    /// [`MechanismError::InvalidEpsilon`] unless ε is finite and > 0,
    /// [`MechanismError::EpsilonTooSmall`] if ε < 2^-48,
    /// [`MechanismError::InvalidSensitivity`] if `sensitivity == 0`.
    pub fn new(sensitivity: u64, epsilon: f64) -> Result<Self, MechanismError> {
        check_epsilon(epsilon)?;
        if sensitivity == 0 {
            return Err(MechanismError::InvalidSensitivity { got: 0, max: u64::MAX });
        }
        let eps = epsilon_at_most(epsilon, EPSILON_DENOM_BITS)?;
        // Δ / (a/b) = Δ·b / a; b divides 2^48, so Δ·b < 2^112: no overflow.
        let scale = Rational::new(u128::from(sensitivity) * eps.denom(), eps.numer())?;
        Ok(DiscreteLaplace { scale })
    }

    /// DLap with an explicit rational scale (must be > 0). The caller is
    /// responsible for the scale being at least sensitivity/ε.
    ///
    /// # Errors
    /// [`MechanismError::InvalidScale`] if the scale is zero.
    pub fn with_scale(scale: Rational) -> Result<Self, MechanismError> {
        if scale.is_zero() {
            return Err(MechanismError::InvalidScale(scale.to_string()));
        }
        Ok(DiscreteLaplace { scale })
    }

    /// The exact scale `t/s`.
    pub fn scale(&self) -> Rational {
        self.scale
    }

    /// The scale as an `f64`, for reporting.
    pub fn scale_f64(&self) -> f64 {
        self.scale.to_f64()
    }

    /// One exact draw from DLap(t/s): CKS 2020, Algorithm 2.
    ///
    /// 1. U uniform in `[0, t)`; accept with Bernoulli(exp(−U/t)), else
    ///    restart. 2. V ~ Geometric(1 − e^-1) by Bernoulli(exp(−1)) trials.
    /// 3. X = U + t·V is geometric with P(X = x) ∝ exp(−x/t).
    /// 4. Y = ⌊X/s⌋ is geometric with P(Y = y) ∝ exp(−y·s/t).
    /// 5. A fair sign coin B; reject (B = 1, Y = 0) so 0 is not counted
    ///    twice; return ±Y.
    ///
    /// X is computed in 256 bits, so nothing overflows; |Y| ≥ 2^63 (an
    /// event of probability about exp(−2^63·s/t)) saturates to `i64::MAX`
    /// in magnitude.
    pub fn sample(&self, rng: &mut NoiseRng) -> i64 {
        let (t, s) = (self.scale.numer(), self.scale.denom());
        loop {
            let u = rng.uniform_below(t);
            if !bernoulli_exp_neg_unit(rng, u, t) {
                continue;
            }
            let mut v: u128 = 0;
            while bernoulli_exp_neg_unit(rng, 1, 1) {
                v += 1;
            }
            // t·V + U ≤ (2^128 − 1)·2^128 < 2^256: the addition cannot fail.
            let x = U256::mul(t, v)
                .checked_add_u128(u)
                .unwrap_or(U256 { hi: u128::MAX, lo: u128::MAX });
            let y = x.div_rem(s).0.saturating_u128();
            let negative = rng.coin();
            if negative && y == 0 {
                continue;
            }
            let magnitude = i64::try_from(y).unwrap_or(i64::MAX);
            return if negative { -magnitude } else { magnitude };
        }
    }

    /// `value + noise`, saturating at the `i64` range (post-processing,
    /// so saturation costs no privacy).
    pub fn release(&self, value: i64, rng: &mut NoiseRng) -> i64 {
        value.saturating_add(self.sample(rng))
    }

    /// `e^{-1/b}` for the scale b, with `1 − e^{-1/b}` computed accurately.
    fn ratio(&self) -> (f64, f64) {
        let inv = 1.0 / self.scale_f64();
        ((-inv).exp(), -(-inv).exp_m1())
    }

    /// The exact law P(k) = (1 − e^{-1/b}) / (1 + e^{-1/b}) · e^{-|k|/b},
    /// evaluated in floating point. For tests and reporting only.
    pub fn pmf(&self, k: i64) -> f64 {
        let (r, one_minus_r) = self.ratio();
        one_minus_r / (1.0 + r) * (-(k.unsigned_abs() as f64) / self.scale_f64()).exp()
    }

    /// P(|X| > h) = 2·e^{-(h+1)/b} / (1 + e^{-1/b}), in floating point.
    /// For reporting only.
    pub fn tail(&self, h: u64) -> f64 {
        let (r, _) = self.ratio();
        2.0 * (-((h as f64) + 1.0) / self.scale_f64()).exp() / (1.0 + r)
    }

    /// The smallest `h` with P(|X| ≤ h) ≥ 0.95: the half-width of a 95%
    /// interval for the noise, a function of the public scale only.
    /// Saturates at `u64::MAX` for absurdly large scales.
    pub fn ci95_halfwidth(&self) -> u64 {
        self.halfwidth(0.05)
    }

    /// The one-sided quantile: the smallest `h` with P(X > h) ≤ `miss`
    /// (0 < miss < ½). Public scale only.
    pub fn upper_quantile(&self, miss: f64) -> u64 {
        // Symmetric: P(X > h) = P(|X| > h)/2.
        self.halfwidth(2.0 * miss)
    }

    /// The smallest `h` with P(|X| > h) ≤ `miss` (0 < miss < 1): the
    /// half-width of a (1 − miss) interval for the noise. Public scale only.
    pub fn halfwidth(&self, miss: f64) -> u64 {
        let b = self.scale_f64();
        let (r, _) = self.ratio();
        // tail(h) ≤ miss ⇔ h + 1 ≥ b·ln(2 / (miss·(1 + r))).
        let start = (b * (2.0 / (miss * (1.0 + r))).ln()).ceil() - 1.0;
        let mut h = if start <= 0.0 { 0 } else { start as u64 };
        // Guard against the closed form being off by a rounding error.
        for _ in 0..4 {
            if h > 0 && self.tail(h - 1) <= miss {
                h -= 1;
            }
        }
        for _ in 0..4 {
            if self.tail(h) > miss {
                h = h.saturating_add(1);
            }
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_is_sensitivity_over_epsilon_rounded_up() {
        let d = DiscreteLaplace::new(1, 1.0).unwrap();
        assert_eq!(d.scale(), Rational::ONE);
        let d = DiscreteLaplace::new(3, 0.5).unwrap();
        assert_eq!(d.scale(), Rational::from_integer(6));
        // 0.1 is not dyadic: the scale is slightly above 10, never below.
        let d = DiscreteLaplace::new(1, 0.1).unwrap();
        assert!(d.scale() > Rational::from_integer(10));
        assert!(d.scale_f64() - 10.0 < 1e-9);
        let d = DiscreteLaplace::new(u64::MAX, 1e-14).unwrap();
        assert!(d.scale_f64() > 1e33);
    }

    #[test]
    fn invalid_parameters_are_refused() {
        assert_eq!(
            DiscreteLaplace::new(1, f64::NAN).unwrap_err().to_string(),
            "epsilon must be a finite number > 0, got NaN"
        );
        for eps in [0.0, -1.0, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(DiscreteLaplace::new(1, eps), Err(MechanismError::InvalidEpsilon(eps)));
        }
        assert!(matches!(
            DiscreteLaplace::new(1, 1e-16),
            Err(MechanismError::EpsilonTooSmall { .. })
        ));
        assert!(matches!(
            DiscreteLaplace::new(0, 1.0),
            Err(MechanismError::InvalidSensitivity { got: 0, .. })
        ));
        assert!(DiscreteLaplace::with_scale(Rational::ZERO).is_err());
    }

    #[test]
    fn pmf_sums_to_one() {
        for b in [0.5, 1.0, 3.0, 10.0] {
            let d = DiscreteLaplace::with_scale(Rational::at_least(b, 8).unwrap()).unwrap();
            let total: f64 = (-2000..=2000).map(|k| d.pmf(k)).sum();
            assert!((total - 1.0).abs() < 1e-12, "b = {b}: {total}");
            // tail agrees with the pmf.
            let inside: f64 = (-5..=5).map(|k| d.pmf(k)).sum();
            assert!((1.0 - inside - d.tail(5)).abs() < 1e-12);
        }
    }

    #[test]
    fn extreme_scales_sample_and_saturate() {
        let mut rng = NoiseRng::seeded(5);
        // Tiny scale: essentially always 0.
        let tiny = DiscreteLaplace::new(1, 1e20).unwrap();
        for _ in 0..1000 {
            assert_eq!(tiny.sample(&mut rng), 0);
        }
        assert_eq!(tiny.ci95_halfwidth(), 0);
        // Enormous scale: draws saturate instead of wrapping.
        let huge = DiscreteLaplace::new(u64::MAX, 1e-14).unwrap();
        let mut saturated = 0;
        for _ in 0..1000 {
            let x = huge.sample(&mut rng);
            assert!(x != i64::MIN);
            if x.unsigned_abs() == i64::MAX as u64 {
                saturated += 1;
            }
        }
        assert!(saturated > 900);
        assert_eq!(huge.ci95_halfwidth(), u64::MAX);
        // Releases saturate at the i64 range instead of overflowing.
        for value in [i64::MAX, i64::MIN, 0] {
            let _ = huge.release(value, &mut rng);
        }
    }
}
