//! The one source of randomness for noise (SPEC §7).
//!
//! [`NoiseRng`] wraps ChaCha20, a cryptographically secure generator. In
//! production it is seeded from the operating system; a fixed seed is
//! available only for an explicit test mode, and [`NoiseRng::is_seeded`]
//! lets every output say so.
//!
//! The type is deliberately *not* `Clone`: a cloned generator would replay
//! the same noise, and two releases with identical noise leak their
//! difference exactly. It also does not implement `rand::RngCore`, so it
//! cannot be handed to floating-point samplers by accident; the exact
//! samplers of this crate use only [`NoiseRng::uniform_below`] and
//! [`NoiseRng::coin`].

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

use crate::MechanismError;

/// Cryptographically secure randomness for every noise draw.
pub struct NoiseRng {
    inner: ChaCha20Rng,
    seeded: bool,
    /// Buffered random bits for [`NoiseRng::coin`] (consumed low bit first).
    bits: u64,
    /// How many bits of `bits` are still unused.
    bits_left: u32,
}

impl std::fmt::Debug for NoiseRng {
    // Never print the generator state: it would let a reader predict the
    // noise.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NoiseRng").field("seeded", &self.seeded).finish_non_exhaustive()
    }
}

impl NoiseRng {
    /// Production generator: ChaCha20 seeded with 256 bits from the
    /// operating system.
    ///
    /// # Errors
    /// [`MechanismError::OsRng`] if the operating system cannot provide
    /// entropy (the caller must then refuse to release anything).
    pub fn from_os() -> Result<Self, MechanismError> {
        let inner =
            ChaCha20Rng::try_from_os_rng().map_err(|e| MechanismError::OsRng(e.to_string()))?;
        Ok(Self::wrap(inner, false))
    }

    /// Deterministic generator for the explicit test mode only (SPEC §7).
    /// Outputs produced with it must say `"seeded": true`; its noise gives
    /// no privacy, since anyone who knows the seed can subtract it.
    pub fn seeded(seed: u64) -> Self {
        Self::wrap(ChaCha20Rng::seed_from_u64(seed), true)
    }

    fn wrap(inner: ChaCha20Rng, seeded: bool) -> Self {
        Self { inner, seeded, bits: 0, bits_left: 0 }
    }

    /// Whether this generator was built with [`NoiseRng::seeded`] (test
    /// mode). Outputs must report it.
    pub fn is_seeded(&self) -> bool {
        self.seeded
    }

    /// 64 uniformly random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }

    /// A fair coin: `true` with probability exactly 1/2.
    pub fn coin(&mut self) -> bool {
        if self.bits_left == 0 {
            self.bits = self.inner.next_u64();
            self.bits_left = 64;
        }
        let bit = self.bits & 1 == 1;
        self.bits >>= 1;
        self.bits_left -= 1;
        bit
    }

    /// A uniform integer in `[0, bound)`, exactly.
    ///
    /// Rejection sampling on the smallest number of bits that can hold
    /// `bound - 1`: no modulo bias, fewer than two draws on average.
    ///
    /// # Panics
    /// If `bound == 0` (an empty range is a programming error).
    pub fn uniform_below(&mut self, bound: u128) -> u128 {
        assert!(bound > 0, "uniform_below: empty range");
        if bound == 1 {
            return 0;
        }
        let bits = 128 - (bound - 1).leading_zeros();
        if bits <= 64 {
            let shift = 64 - bits;
            loop {
                let x = u128::from(self.inner.next_u64() >> shift);
                if x < bound {
                    return x;
                }
            }
        } else {
            let shift = 128 - bits;
            loop {
                let hi = u128::from(self.inner.next_u64());
                let lo = u128::from(self.inner.next_u64());
                let x = ((hi << 64) | lo) >> shift;
                if x < bound {
                    return x;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_is_reproducible_and_flagged() {
        let mut a = NoiseRng::seeded(7);
        let mut b = NoiseRng::seeded(7);
        assert!(a.is_seeded());
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        let os = NoiseRng::from_os().expect("OS entropy");
        assert!(!os.is_seeded());
        // Debug must not reveal the state.
        assert_eq!(format!("{os:?}"), "NoiseRng { seeded: false, .. }");
    }

    #[test]
    fn uniform_below_stays_in_range_and_hits_every_value() {
        let mut rng = NoiseRng::seeded(1);
        for bound in [1u128, 2, 3, 5, 7, 64, 1000] {
            let mut seen = vec![0u32; bound as usize];
            for _ in 0..(bound as usize * 200) {
                let x = rng.uniform_below(bound);
                assert!(x < bound);
                seen[x as usize] += 1;
            }
            assert!(seen.iter().all(|&c| c > 0), "bound {bound}: {seen:?}");
        }
        for bound in [u128::MAX, (1u128 << 64) + 1, 1u128 << 127, 3u128 << 100] {
            for _ in 0..1000 {
                assert!(rng.uniform_below(bound) < bound);
            }
        }
    }

    #[test]
    fn uniform_below_three_is_unbiased() {
        // A modulo-reduced 2-bit draw would give 0 with probability 1/2;
        // the rejection sampler gives 1/3. z-test, |z| < 5.
        let mut rng = NoiseRng::seeded(2);
        let n = 300_000u32;
        let zeros = (0..n).filter(|_| rng.uniform_below(3) == 0).count() as f64;
        let p = 1.0 / 3.0;
        let z = (zeros - f64::from(n) * p) / (f64::from(n) * p * (1.0 - p)).sqrt();
        assert!(z.abs() < 5.0, "z = {z}");
    }

    #[test]
    fn coin_is_fair() {
        let mut rng = NoiseRng::seeded(3);
        let n = 400_000u32;
        let heads = (0..n).filter(|_| rng.coin()).count() as f64;
        let z = (heads - f64::from(n) / 2.0) / (f64::from(n) / 4.0).sqrt();
        assert!(z.abs() < 5.0, "z = {z}");
    }

    #[test]
    #[should_panic(expected = "empty range")]
    fn uniform_below_zero_panics() {
        NoiseRng::seeded(0).uniform_below(0);
    }
}
