//! Exact non-negative rationals with 128-bit numerator and denominator.
//!
//! Noise scales and ε enter the exact samplers as rationals, so that no
//! floating-point operation ever touches a secret value (SPEC §6.5, §7).
//! `f64` appears here only on **public** parameters (ε, a sensitivity
//! ratio, the public part of a score), and every conversion from `f64`
//! rounds in the direction that keeps the privacy guarantee:
//!
//! * [`Rational::at_least`] for a noise *scale* (a larger scale is more
//!   noise, never less privacy);
//! * [`Rational::at_most`] for an ε (a smaller ε is a stronger guarantee).
//!
//! Both multiply by a power of two, which is exact in binary floating
//! point, then take `ceil`/`floor`, which are exact too: the rounding
//! direction is guaranteed, not merely likely. Arithmetic is checked and
//! reports overflow as [`MechanismError::Overflow`]; nothing wraps.

use std::cmp::Ordering;
use std::fmt;

use crate::MechanismError;
use crate::wide::U256;

/// An exact non-negative rational `num / den`, always in lowest terms
/// with `den > 0` (so the derived equality is equality of values).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rational {
    num: u128,
    den: u128,
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `2^128` as an `f64` (exactly representable).
const TWO_POW_128: f64 = 340_282_366_920_938_463_463_374_607_431_768_211_456.0;

impl Rational {
    /// Zero.
    pub const ZERO: Rational = Rational { num: 0, den: 1 };
    /// One.
    pub const ONE: Rational = Rational { num: 1, den: 1 };

    /// `num / den`, reduced.
    ///
    /// # Errors
    /// [`MechanismError::InvalidRational`] if `den == 0`.
    pub fn new(num: u128, den: u128) -> Result<Self, MechanismError> {
        if den == 0 {
            return Err(MechanismError::InvalidRational { num, den, reason: "zero denominator" });
        }
        let g = gcd(num, den);
        Ok(Rational { num: num / g, den: den / g })
    }

    /// The integer `n`.
    pub fn from_integer(n: u128) -> Self {
        Rational { num: n, den: 1 }
    }

    /// A rational **≥ x** with denominator `2^denom_bits` (before
    /// reduction): `ceil(x · 2^k) / 2^k`. Use it to round a public noise
    /// scale *up*.
    ///
    /// `x · 2^k` is exact in `f64` (only the exponent changes) and `ceil`
    /// is exact, so the result is never below `x`.
    ///
    /// # Errors
    /// [`MechanismError::NotRepresentable`] if `x` is NaN, infinite,
    /// negative, `denom_bits > 127`, or `ceil(x · 2^k) ≥ 2^128`.
    pub fn at_least(x: f64, denom_bits: u32) -> Result<Self, MechanismError> {
        let err = MechanismError::NotRepresentable { value: x, denom_bits };
        if !x.is_finite() || x < 0.0 || denom_bits > 127 {
            return Err(err);
        }
        let pow = (1u128 << denom_bits) as f64; // exact: a power of two
        let scaled = (x * pow).ceil();
        if scaled >= TWO_POW_128 {
            return Err(err);
        }
        // `scaled` is an integer-valued f64 below 2^128: the cast is exact.
        Rational::new(scaled as u128, 1u128 << denom_bits)
    }

    /// A rational **≤ x** with denominator `2^denom_bits` (before
    /// reduction): `floor(x · 2^k) / 2^k`. Use it to round a public ε
    /// *down*. Values too large for 128 bits saturate to
    /// `(2^128 − 1) / 2^k`, which is still ≤ x.
    ///
    /// # Errors
    /// [`MechanismError::NotRepresentable`] if `x` is NaN, infinite,
    /// negative, or `denom_bits > 127`.
    pub fn at_most(x: f64, denom_bits: u32) -> Result<Self, MechanismError> {
        if !x.is_finite() || x < 0.0 || denom_bits > 127 {
            return Err(MechanismError::NotRepresentable { value: x, denom_bits });
        }
        let pow = (1u128 << denom_bits) as f64;
        let scaled = (x * pow).floor(); // may be +inf for huge x: saturates below
        let num = if scaled >= TWO_POW_128 { u128::MAX } else { scaled as u128 };
        Rational::new(num, 1u128 << denom_bits)
    }

    /// Numerator (in lowest terms).
    pub fn numer(&self) -> u128 {
        self.num
    }

    /// Denominator (in lowest terms, > 0).
    pub fn denom(&self) -> u128 {
        self.den
    }

    /// Whether the value is zero.
    pub fn is_zero(&self) -> bool {
        self.num == 0
    }

    /// `floor(self)`.
    pub fn floor(&self) -> u128 {
        self.num / self.den
    }

    /// `self − floor(self)`, in `[0, 1)`.
    pub fn fract(&self) -> Rational {
        // Already coprime: gcd(num mod den, den) = gcd(num, den) = 1.
        Rational { num: self.num % self.den, den: self.den }
    }

    /// Nearest `f64` (approximately); for reporting only, never for
    /// sampling.
    pub fn to_f64(&self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// `self + other`.
    ///
    /// # Errors
    /// [`MechanismError::Overflow`] if the result does not fit.
    pub fn checked_add(&self, other: &Rational) -> Result<Rational, MechanismError> {
        let over = || MechanismError::Overflow("Rational::checked_add");
        let g = gcd(self.den, other.den);
        let (b, d) = (self.den / g, other.den / g);
        let num = self
            .num
            .checked_mul(d)
            .and_then(|x| other.num.checked_mul(b).and_then(|y| x.checked_add(y)))
            .ok_or_else(over)?;
        let den = self.den.checked_mul(d).ok_or_else(over)?;
        Rational::new(num, den)
    }

    /// `self − other`.
    ///
    /// # Errors
    /// [`MechanismError::Overflow`] if `other > self` (rationals here are
    /// non-negative) or an intermediate does not fit.
    pub fn checked_sub(&self, other: &Rational) -> Result<Rational, MechanismError> {
        let over = || MechanismError::Overflow("Rational::checked_sub");
        let g = gcd(self.den, other.den);
        let (b, d) = (self.den / g, other.den / g);
        let x = self.num.checked_mul(d).ok_or_else(over)?;
        let y = other.num.checked_mul(b).ok_or_else(over)?;
        let num = x.checked_sub(y).ok_or_else(over)?;
        let den = self.den.checked_mul(d).ok_or_else(over)?;
        Rational::new(num, den)
    }

    /// `self · other`.
    ///
    /// # Errors
    /// [`MechanismError::Overflow`] if the result does not fit.
    pub fn checked_mul(&self, other: &Rational) -> Result<Rational, MechanismError> {
        let over = || MechanismError::Overflow("Rational::checked_mul");
        // Cross-reduce first so that representable results do not overflow.
        let g1 = gcd(self.num, other.den);
        let g2 = gcd(other.num, self.den);
        let num = (self.num / g1).checked_mul(other.num / g2).ok_or_else(over)?;
        let den = (self.den / g2).checked_mul(other.den / g1).ok_or_else(over)?;
        Rational::new(num, den)
    }

    /// `self / other`.
    ///
    /// # Errors
    /// [`MechanismError::InvalidRational`] if `other` is zero,
    /// [`MechanismError::Overflow`] if the result does not fit.
    pub fn checked_div(&self, other: &Rational) -> Result<Rational, MechanismError> {
        if other.is_zero() {
            return Err(MechanismError::InvalidRational {
                num: other.num,
                den: other.den,
                reason: "division by zero",
            });
        }
        let inverse = Rational { num: other.den, den: other.num };
        self.checked_mul(&inverse).map_err(|_| MechanismError::Overflow("Rational::checked_div"))
    }
}

impl Ord for Rational {
    /// Exact comparison by 256-bit cross-multiplication.
    fn cmp(&self, other: &Self) -> Ordering {
        U256::mul(self.num, other.den).cmp(&U256::mul(other.num, self.den))
    }
}

impl PartialOrd for Rational {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Rational {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.den == 1 {
            write!(f, "{}", self.num)
        } else {
            write!(f, "{}/{}", self.num, self.den)
        }
    }
}

impl fmt::Debug for Rational {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Rational({}/{})", self.num, self.den)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn r(n: u128, d: u128) -> Rational {
        Rational::new(n, d).unwrap()
    }

    #[test]
    fn reduces_and_compares() {
        assert_eq!(r(6, 4), r(3, 2));
        assert_eq!(r(0, 7), Rational::ZERO);
        assert!(r(1, 3) < r(1, 2));
        assert!(r(u128::MAX, u128::MAX - 1) > Rational::ONE);
        assert!(Rational::new(1, 0).is_err());
        assert_eq!(r(7, 2).floor(), 3);
        assert_eq!(r(7, 2).fract(), r(1, 2));
        assert_eq!(r(7, 2).to_string(), "7/2");
        assert_eq!(r(4, 2).to_string(), "2");
    }

    #[test]
    fn arithmetic_is_exact_and_checked() {
        assert_eq!(r(1, 3).checked_add(&r(1, 6)).unwrap(), r(1, 2));
        assert_eq!(r(1, 2).checked_sub(&r(1, 3)).unwrap(), r(1, 6));
        assert!(r(1, 3).checked_sub(&r(1, 2)).is_err());
        assert_eq!(r(2, 3).checked_mul(&r(9, 4)).unwrap(), r(3, 2));
        assert_eq!(r(2, 3).checked_div(&r(4, 9)).unwrap(), r(3, 2));
        assert!(r(2, 3).checked_div(&Rational::ZERO).is_err());
        let big = Rational::from_integer(u128::MAX);
        assert_eq!(
            big.checked_add(&Rational::ONE),
            Err(MechanismError::Overflow("Rational::checked_add"))
        );
        assert!(big.checked_mul(&Rational::from_integer(2)).is_err());
        // Cross-reduction keeps representable products representable.
        assert_eq!(big.checked_mul(&r(1, u128::MAX)).unwrap(), Rational::ONE);
    }

    #[test]
    fn float_conversions_round_in_the_safe_direction() {
        // 0.1 is not dyadic: the two roundings straddle it.
        let up = Rational::at_least(0.1, 32).unwrap();
        let down = Rational::at_most(0.1, 32).unwrap();
        assert!(down < up);
        assert_eq!(up.checked_sub(&down).unwrap(), r(1, 1 << 32));
        // Dyadic values are exact.
        assert_eq!(Rational::at_least(0.75, 8).unwrap(), r(3, 4));
        assert_eq!(Rational::at_most(0.75, 8).unwrap(), r(3, 4));
        // Below the grid: at_most gives 0, at_least the first grid point.
        assert_eq!(Rational::at_most(1e-20, 32).unwrap(), Rational::ZERO);
        assert_eq!(Rational::at_least(1e-20, 32).unwrap(), r(1, 1 << 32));
        // Saturation only in the safe direction.
        assert_eq!(Rational::at_most(1e300, 0).unwrap().numer(), u128::MAX);
        assert!(Rational::at_least(1e300, 0).is_err());
        for bad in [f64::NAN, f64::INFINITY, -1.0] {
            assert!(Rational::at_least(bad, 8).is_err());
            assert!(Rational::at_most(bad, 8).is_err());
        }
        assert!(Rational::at_most(1.0, 128).is_err());
    }

    proptest! {
        #[test]
        fn at_least_and_at_most_bracket_x(x in 0.0f64..1e12, k in 0u32..=64) {
            let up = Rational::at_least(x, k).unwrap();
            let down = Rational::at_most(x, k).unwrap();
            // Exact check: compare numerators against x · 2^k, which is
            // exact in f64, on the common denominator 2^k.
            let pow = (1u128 << k) as f64;
            let scale = |q: &Rational| q.numer() * ((1u128 << k) / q.denom());
            prop_assert!(scale(&up) as f64 >= x * pow);
            prop_assert!(scale(&down) as f64 <= x * pow);
            prop_assert!(scale(&up) - scale(&down) <= 1);
        }

        #[test]
        fn order_matches_cross_multiplication(a in 0u64.., b in 1u64.., c in 0u64.., d in 1u64..) {
            let (x, y) = (r(a.into(), b.into()), r(c.into(), d.into()));
            let lhs = u128::from(a) * u128::from(d);
            let rhs = u128::from(c) * u128::from(b);
            prop_assert_eq!(x.cmp(&y), lhs.cmp(&rhs));
        }
    }
}
