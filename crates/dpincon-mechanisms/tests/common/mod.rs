//! Shared statistics for the statistical tests.
//!
//! Every random test uses a seeded [`NoiseRng`], so a run is reproducible;
//! thresholds are set so that a correct sampler fails with probability
//! about 1e-6 per check while the "wrong sampler" tests show that the same
//! checks reject realistic bugs.

#![allow(dead_code)] // each test binary uses a different subset

/// Upper 1e-6 quantile of the standard normal distribution.
pub const Z_1E6: f64 = 4.753_424_308_822_899;

/// Pearson's chi-square statistic.
pub fn chi_square(observed: &[u64], expected: &[f64]) -> f64 {
    assert_eq!(observed.len(), expected.len());
    observed
        .iter()
        .zip(expected)
        .map(|(&o, &e)| {
            assert!(e > 0.0, "empty expected bin");
            let d = o as f64 - e;
            d * d / e
        })
        .sum()
}

/// Critical value of the chi-square distribution with `df` degrees of
/// freedom at p = 1e-6 (Wilson–Hilferty approximation; it overestimates
/// for small df, which only makes the test more conservative).
pub fn chi_square_critical_1e6(df: usize) -> f64 {
    let k = df as f64;
    let h = 2.0 / (9.0 * k);
    k * (1.0 - h + Z_1E6 * h.sqrt()).powi(3)
}

/// Binomial z-score of `successes` out of `n` against probability `p`.
pub fn binomial_z(successes: u64, n: u64, p: f64) -> f64 {
    let n = n as f64;
    (successes as f64 - n * p) / (n * p * (1.0 - p)).sqrt()
}

/// Chi-square goodness of fit: statistic and critical value (p = 1e-6).
pub fn goodness_of_fit(observed: &[u64], probabilities: &[f64]) -> (f64, f64) {
    let n: u64 = observed.iter().sum();
    let expected: Vec<f64> = probabilities.iter().map(|p| p * n as f64).collect();
    (chi_square(observed, &expected), chi_square_critical_1e6(observed.len() - 1))
}
