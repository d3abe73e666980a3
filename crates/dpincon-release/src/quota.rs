//! The `over quota` verdict of a coordinator job as an (ε, δ)-DP release
//! (README, "The quota verdict").
//!
//! A resource cap H on the conflict graph's edge count must hold whatever
//! the rows, so the verdict cannot be pure ε-DP: a table just over H fails
//! for sure, and a chain of neighbours leads from it to any table. What
//! can be had is the noisy threshold T = H − m below the cap, with the
//! margin m wide enough that a table within one row of the cap passes T
//! with probability at most δ:
//!
//! - over = |E| > H, or |E| + DLap(Δ/ε) > T, with Δ = n_max − 1 (one row
//!   conflicts with at most every other row; n ≤ n_max is the operator's
//!   public promise, checked by the job);
//! - m = Δ + h_δ, h_δ the smallest h with P(DLap < −h) ≤ δ.

use dpincon_mechanisms::{DiscreteLaplace, NoiseRng};

use crate::ReleaseError;

/// The δ every quota verdict is released with: the chance that the hard
/// cap, not the noise, decides a table's verdict.
pub const QUOTA_DELTA: f64 = 1e-9;

/// A dataset's quota verdict: its cap, threshold and noise.
#[derive(Debug, Clone)]
pub struct QuotaTest {
    cap: u64,
    threshold: u64,
    epsilon: f64,
    noise: DiscreteLaplace,
}

impl QuotaTest {
    /// The verdict for a cap of `cap` edges on tables of at most `n_max`
    /// rows, released with `epsilon` (and [`QUOTA_DELTA`]).
    ///
    /// # Errors
    /// [`ReleaseError::Invalid`] when the cap leaves no room for the margin
    /// (the message gives the least cap that would), or ε is not > 0.
    pub fn new(cap: u64, n_max: u64, epsilon: f64) -> Result<Self, ReleaseError> {
        let sensitivity = n_max.saturating_sub(1).max(1);
        let noise = DiscreteLaplace::new(sensitivity, epsilon)?;
        let margin = sensitivity.saturating_add(noise.halfwidth(2.0 * QUOTA_DELTA));
        if cap <= margin {
            return Err(ReleaseError::Invalid(format!(
                "max-edges {cap} leaves no room for the quota's noise: with max-rows {n_max} and \
                 quota-epsilon {epsilon}, give max-edges of at least {} (a cap of many times \
                 that keeps ordinary jobs far from it)",
                margin.saturating_add(1)
            )));
        }
        Ok(QuotaTest { cap, threshold: cap - margin, epsilon, noise })
    }

    /// The hard cap H.
    pub fn cap(&self) -> u64 {
        self.cap
    }

    /// The noisy threshold T = H − m: a graph of T − 3·scale edges passes
    /// with probability above 0.97, one of T + 3·scale fails likewise.
    pub fn threshold(&self) -> u64 {
        self.threshold
    }

    /// ε of the verdict.
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }

    /// The noise's scale Δ/ε.
    pub fn scale(&self) -> f64 {
        self.noise.scale_f64()
    }

    /// Whether a graph of `edges` edges is over the quota: one fresh draw.
    pub fn over(&self, edges: u64, rng: &mut NoiseRng) -> bool {
        if edges > self.cap {
            return true;
        }
        let noisy = i128::from(edges) + i128::from(self.noise.sample(rng));
        noisy > i128::from(self.threshold)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cap_below_the_margin_is_refused_with_the_least_cap_that_works() {
        let err = QuotaTest::new(50_000, 100_000, 0.1).unwrap_err().to_string();
        assert!(err.contains("max-edges 50000") && err.contains("at least"), "{err}");
        let least: u64 =
            err.split("at least ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
        assert!(QuotaTest::new(least, 100_000, 0.1).is_ok());
        assert!(QuotaTest::new(least - 1, 100_000, 0.1).is_err());
        assert!(QuotaTest::new(least, 100_000, 0.0).is_err());
    }

    #[test]
    fn the_margin_covers_one_row_and_the_noise_tail() {
        let q = QuotaTest::new(10_000_000, 1000, 1.0).unwrap();
        let noise = DiscreteLaplace::new(999, 1.0).unwrap();
        let h = noise.halfwidth(2.0 * QUOTA_DELTA);
        assert_eq!(q.cap() - q.threshold(), 999 + h);
        // One-sided: P(X < −h) = tail(h)/2 ≤ δ.
        assert!(noise.tail(h) / 2.0 <= QUOTA_DELTA && noise.tail(h - 1) / 2.0 > QUOTA_DELTA);
        // Over the cap: always over, whatever the noise.
        let mut rng = NoiseRng::seeded(1);
        assert!((0..1000).all(|_| q.over(10_000_001, &mut rng)));
    }

    /// The largest empirical privacy loss of `q`'s verdict between graphs
    /// one row apart (|E| moved by the full sensitivity), around the
    /// threshold, less 3 standard errors of each log-ratio.
    fn empirical_loss(q: &QuotaTest, n_max: u64, seed: u64) -> f64 {
        let mut rng = NoiseRng::seeded(seed);
        let trials = 40_000;
        let t = q.threshold() as i64;
        let mut worst = 0f64;
        for offset in [-300i64, -100, 0, 100] {
            let low = (t + offset) as u64;
            let high = low + (n_max - 1);
            let mut rate =
                |e: u64| (0..trials).filter(|_| q.over(e, &mut rng)).count() as f64 / trials as f64;
            let (p_low, p_high) = (rate(low), rate(high));
            for (a, b) in [(p_low, p_high), (1.0 - p_low, 1.0 - p_high)] {
                let (a, b) = (a.max(1.0 / trials as f64), b.max(1.0 / trials as f64));
                let se = ((1.0 - a) / (a * trials as f64) + (1.0 - b) / (b * trials as f64)).sqrt();
                worst = worst.max((a / b).ln().abs() - 3.0 * se);
            }
        }
        worst
    }

    /// The verdict's empirical loss on neighbours stays within its ε; a
    /// mutant whose noise is 8 times too small (ε = 8 where 1 was
    /// charged) is caught.
    #[test]
    fn the_verdict_on_neighbours_has_privacy_loss_within_epsilon() {
        let n_max = 200;
        let q = QuotaTest::new(1_000_000, n_max, 1.0).unwrap();
        let loss = empirical_loss(&q, n_max, 7);
        assert!(loss <= 1.0, "loss {loss} > ε = 1");
        let mutant = QuotaTest::new(1_000_000, n_max, 8.0).unwrap();
        let loss = empirical_loss(&mutant, n_max, 8);
        assert!(loss > 1.0, "the mutant's loss {loss} passed as ε = 1");
    }
}
