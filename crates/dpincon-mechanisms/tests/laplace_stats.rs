//! Statistical tests of the exact discrete Laplace sampler (SPEC §7) and
//! of the privacy guarantee of the Laplace mechanism on neighbouring
//! inputs.

mod common;

use std::collections::BTreeMap;

use common::{binomial_z, chi_square, chi_square_critical_1e6};
use dpincon_mechanisms::{DiscreteLaplace, NoiseRng, Rational};

const N: usize = 200_000;

/// The scales under test, built the way callers build them:
/// sensitivity/ε (10 = 1/0.1 exercises a non-dyadic ε, hence t = 2^48).
fn mechanisms() -> Vec<(f64, DiscreteLaplace)> {
    vec![
        (0.5, DiscreteLaplace::new(1, 2.0).unwrap()),
        (1.0, DiscreteLaplace::new(1, 1.0).unwrap()),
        (3.0, DiscreteLaplace::new(3, 1.0).unwrap()),
        (10.0, DiscreteLaplace::new(1, 0.1).unwrap()),
    ]
}

/// Chi-square of `samples` against `law`'s pmf. Bins are the integers in
/// [−K, K] with K the largest k whose expected count is ≥ 20; the two
/// tails are folded into the edge bins (−∞, −K] and [K, ∞).
fn chi_square_against(law: &DiscreteLaplace, samples: &[i64]) -> (f64, f64) {
    let n = samples.len() as f64;
    let mut k_max: i64 = 0;
    while n * law.pmf(k_max + 1) >= 20.0 {
        k_max += 1;
    }
    let bins = (2 * k_max + 1) as usize;
    let mut observed = vec![0u64; bins];
    for &x in samples {
        observed[(x.clamp(-k_max, k_max) + k_max) as usize] += 1;
    }
    let mut expected: Vec<f64> = (-k_max..=k_max).map(|k| n * law.pmf(k)).collect();
    // Edge bins: P(X ≥ K) = pmf(K) + P(X > K) = pmf(K) + tail(K)/2.
    let edge = n * (law.pmf(k_max) + law.tail(k_max.unsigned_abs()) / 2.0);
    expected[0] = edge;
    expected[bins - 1] = edge;
    if bins == 1 {
        expected[0] = n;
    }
    (chi_square(&observed, &expected), chi_square_critical_1e6(bins.saturating_sub(1).max(1)))
}

fn draw(law: &DiscreteLaplace, n: usize, seed: u64) -> Vec<i64> {
    let mut rng = NoiseRng::seeded(seed);
    (0..n).map(|_| law.sample(&mut rng)).collect()
}

#[test]
fn samples_fit_the_pmf() {
    for (i, (scale, law)) in mechanisms().into_iter().enumerate() {
        assert!((law.scale_f64() - scale).abs() < 1e-9);
        let samples = draw(&law, N, 100 + i as u64);
        let (stat, critical) = chi_square_against(&law, &samples);
        assert!(stat < critical, "scale {scale}: chi-square {stat} ≥ critical {critical}");
    }
}

#[test]
fn the_fit_test_rejects_half_the_scale() {
    // Power check: a sampler with half the scale (as if Δ/2 or 2ε had been
    // used) must fail the same test.
    for (i, (scale, law)) in mechanisms().into_iter().enumerate() {
        let half = DiscreteLaplace::with_scale(
            law.scale().checked_div(&Rational::from_integer(2)).unwrap(),
        )
        .unwrap();
        let samples = draw(&half, N, 200 + i as u64);
        let (stat, critical) = chi_square_against(&law, &samples);
        assert!(
            stat > critical,
            "scale {scale}: half-scale sampler not detected ({stat} ≤ {critical})"
        );
    }
}

#[test]
fn samples_are_symmetric_with_mean_zero() {
    for (i, (scale, law)) in mechanisms().into_iter().enumerate() {
        let samples = draw(&law, N, 300 + i as u64);
        let positive = samples.iter().filter(|&&x| x > 0).count() as u64;
        let nonzero = samples.iter().filter(|&&x| x != 0).count() as u64;
        let z = binomial_z(positive, nonzero, 0.5);
        assert!(z.abs() < 5.0, "scale {scale}: sign imbalance z = {z}");

        // Var(DLap(b)) = 2r/(1 − r)^2 with r = e^{-1/b}.
        let r = (-1.0 / law.scale_f64()).exp();
        let variance = 2.0 * r / ((1.0 - r) * (1.0 - r));
        let mean = samples.iter().map(|&x| x as f64).sum::<f64>() / N as f64;
        let se = (variance / N as f64).sqrt();
        assert!(mean.abs() < 5.0 * se, "scale {scale}: mean {mean}, se {se}");
        let emp_var = samples.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / N as f64;
        assert!(
            (emp_var / variance - 1.0).abs() < 0.05,
            "scale {scale}: variance {emp_var} vs {variance}"
        );
    }
}

/// Largest |ln(P[M(x) = k] / P[M(x') = k])| over outputs k that both
/// neighbours produce at least `min_count` times.
fn max_log_ratio(law: &DiscreteLaplace, x: i64, x_prime: i64, n: usize, seed: u64) -> f64 {
    let mut rng = NoiseRng::seeded(seed);
    let mut counts: BTreeMap<i64, (u64, u64)> = BTreeMap::new();
    for _ in 0..n {
        counts.entry(law.release(x, &mut rng)).or_default().0 += 1;
        counts.entry(law.release(x_prime, &mut rng)).or_default().1 += 1;
    }
    let min_count = 1000;
    counts
        .values()
        .filter(|(a, b)| *a >= min_count && *b >= min_count)
        .map(|&(a, b)| (a as f64 / b as f64).ln().abs())
        .fold(0.0, f64::max)
}

#[test]
fn neighbouring_counts_respect_epsilon() {
    // A counting query (sensitivity 1) on neighbours with values 100 and
    // 101, released at ε = 1. With ≥ 1000 hits per compared output the
    // standard error of a log-ratio is ≤ 0.045, so 0.25 is > 5 σ.
    let epsilon = 1.0;
    let tolerance = 0.25;
    let law = DiscreteLaplace::new(1, epsilon).unwrap();
    let ratio = max_log_ratio(&law, 100, 101, N, 400);
    assert!(ratio <= epsilon + tolerance, "privacy loss {ratio} > ε = {epsilon}");
    // The bound is tight for the discrete Laplace: the test measures it.
    assert!(ratio >= epsilon - tolerance, "loss {ratio} suspiciously small");

    // The same test catches a mechanism built with half the required
    // scale: its privacy loss is 2ε.
    let broken = DiscreteLaplace::with_scale(Rational::new(1, 2).unwrap()).unwrap();
    let ratio = max_log_ratio(&broken, 100, 101, N, 401);
    assert!(ratio > epsilon + tolerance, "half-scale mechanism not detected: loss {ratio}");
}

#[test]
fn ci95_halfwidth_matches_the_cumulative_pmf() {
    let scales = [0.01, 0.3, 0.5, 1.0, 2.5, 3.0, 10.0, 37.5, 1000.0];
    for b in scales {
        let law = DiscreteLaplace::with_scale(Rational::at_least(b, 20).unwrap()).unwrap();
        let h = law.ci95_halfwidth();
        // Cumulative P(|X| ≤ h) by summing the pmf directly.
        let cdf = |h: u64| -> f64 { (-(h as i64)..=(h as i64)).map(|k| law.pmf(k)).sum() };
        assert!(cdf(h) >= 0.95, "scale {b}: P(|X| ≤ {h}) = {} < 0.95", cdf(h));
        if h > 0 {
            assert!(
                cdf(h - 1) < 0.95,
                "scale {b}: {h} is not the smallest (P(|X| ≤ {}) = {})",
                h - 1,
                cdf(h - 1)
            );
        }
    }
    // Empirically too: about 95% of draws fall within ±h.
    let law = DiscreteLaplace::new(1, 0.1).unwrap();
    let h = law.ci95_halfwidth() as i64;
    let samples = draw(&law, N, 500);
    let inside = samples.iter().filter(|x| x.abs() <= h).count() as u64;
    let p = 1.0 - law.tail(h as u64);
    let z = binomial_z(inside, N as u64, p);
    assert!(z.abs() < 5.0, "coverage z = {z}");
    assert!(p >= 0.95);
}
