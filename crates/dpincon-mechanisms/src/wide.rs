//! Minimal 256-bit unsigned arithmetic, enough for exact products of two
//! `u128` and their division by a `u128`.
//!
//! The exponential mechanism needs γ = ε'·(q* − q_i)/(2Δ) exactly; the
//! numerator is a product of two 128-bit numbers. Rather than fail on
//! large (possibly data-dependent) qualities, which would turn an
//! overflow into a side channel, the product is computed in 256 bits and
//! split into an integer part and a fraction with a 128-bit denominator.

/// A 256-bit unsigned integer `hi · 2^128 + lo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct U256 {
    // Field order matters: the derived `Ord` compares `hi` first.
    pub(crate) hi: u128,
    pub(crate) lo: u128,
}

const LOW64: u128 = (1u128 << 64) - 1;

impl U256 {
    #[cfg(test)]
    pub(crate) const ZERO: U256 = U256 { hi: 0, lo: 0 };

    pub(crate) fn from_u128(x: u128) -> Self {
        U256 { hi: 0, lo: x }
    }

    pub(crate) fn is_zero(self) -> bool {
        self.hi == 0 && self.lo == 0
    }

    /// The exact product `a · b` (never overflows 256 bits).
    pub(crate) fn mul(a: u128, b: u128) -> Self {
        let (a1, a0) = (a >> 64, a & LOW64);
        let (b1, b0) = (b >> 64, b & LOW64);
        // Each partial product is < 2^128.
        let p00 = a0 * b0;
        let p01 = a0 * b1;
        let p10 = a1 * b0;
        let p11 = a1 * b1;
        // Bits 64..128 collect three 64-bit pieces: < 3 · 2^64, no overflow.
        let mid = (p00 >> 64) + (p01 & LOW64) + (p10 & LOW64);
        let lo = (p00 & LOW64) | (mid << 64);
        // The true product is < 2^256, so this sum cannot overflow.
        let hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
        U256 { hi, lo }
    }

    /// `self + x`, or `None` on overflow of 256 bits.
    pub(crate) fn checked_add_u128(self, x: u128) -> Option<Self> {
        let (lo, carry) = self.lo.overflowing_add(x);
        let hi = self.hi.checked_add(u128::from(carry))?;
        Some(U256 { hi, lo })
    }

    /// `self − 1`; `self` must not be zero.
    pub(crate) fn dec(self) -> Self {
        debug_assert!(!self.is_zero());
        let (lo, borrow) = self.lo.overflowing_sub(1);
        U256 { hi: self.hi - u128::from(borrow), lo }
    }

    /// Quotient and remainder of the division by `d > 0`.
    pub(crate) fn div_rem(self, d: u128) -> (Self, u128) {
        assert!(d != 0, "division by zero");
        if self.hi == 0 {
            return (U256::from_u128(self.lo / d), self.lo % d);
        }
        let q_hi = self.hi / d;
        let mut r = self.hi % d;
        let mut q_lo = 0u128;
        // Schoolbook binary long division of (r, lo) by d, with r < d.
        for i in (0..128).rev() {
            // Before the shift r < d; after it the true value is < 2d,
            // possibly ≥ 2^128 (then `carry` is set).
            let carry = r >> 127 == 1;
            r = (r << 1) | ((self.lo >> i) & 1);
            q_lo <<= 1;
            if carry || r >= d {
                // True value − d < d fits in 128 bits: wrapping is exact.
                r = r.wrapping_sub(d);
                q_lo |= 1;
            }
        }
        (U256 { hi: q_hi, lo: q_lo }, r)
    }

    /// The value as a `u128`, saturating at `u128::MAX`.
    pub(crate) fn saturating_u128(self) -> u128 {
        if self.hi == 0 { self.lo } else { u128::MAX }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn mul_extremes() {
        let m = U256::mul(u128::MAX, u128::MAX);
        // (2^128 − 1)^2 = 2^256 − 2^129 + 1
        assert_eq!(m.hi, u128::MAX - 1);
        assert_eq!(m.lo, 1);
        assert_eq!(U256::mul(0, u128::MAX), U256::ZERO);
        assert_eq!(U256::mul(1 << 64, 1 << 64), U256 { hi: 1, lo: 0 });
    }

    #[test]
    fn div_rem_extremes() {
        let x = U256::mul(u128::MAX, u128::MAX);
        assert_eq!(x.div_rem(u128::MAX), (U256::from_u128(u128::MAX), 0));
        let (q, r) = U256 { hi: 1, lo: 0 }.div_rem(3);
        // 2^128 = 3 · 113427455640312821154458202477256070485 + 1
        assert_eq!(q, U256::from_u128(113_427_455_640_312_821_154_458_202_477_256_070_485));
        assert_eq!(r, 1);
        assert_eq!(U256 { hi: 5, lo: 7 }.div_rem(1), (U256 { hi: 5, lo: 7 }, 0));
    }

    proptest! {
        #[test]
        fn mul_matches_u128_when_it_fits(a in any::<u64>(), b in any::<u64>()) {
            let p = U256::mul(u128::from(a), u128::from(b));
            prop_assert_eq!(p, U256::from_u128(u128::from(a) * u128::from(b)));
        }

        #[test]
        fn div_rem_reconstructs(a in any::<u128>(), b in any::<u128>(), d in 1..=u128::MAX) {
            let n = U256::mul(a, b);
            let (q, r) = n.div_rem(d);
            prop_assert!(r < d);
            // n == q·d + r, with q·d = (q.hi·d)·2^128 + q.lo·d.
            let low = U256::mul(q.lo, d).checked_add_u128(r).unwrap();
            let hi_part = q.hi.checked_mul(d).unwrap();
            prop_assert_eq!(U256 { hi: low.hi + hi_part, lo: low.lo }, n);
        }

        #[test]
        fn dec_and_add_are_inverse(hi in any::<u128>(), lo in any::<u128>()) {
            let x = U256 { hi, lo };
            prop_assume!(!x.is_zero());
            prop_assert_eq!(x.dec().checked_add_u128(1), Some(x));
        }
    }
}
