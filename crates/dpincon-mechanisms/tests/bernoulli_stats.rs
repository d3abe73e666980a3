//! Statistical tests of the exact Bernoulli samplers (CKS 2020 Alg. 1).

mod common;

use common::binomial_z;
use dpincon_mechanisms::{NoiseRng, Rational, bernoulli, bernoulli_exp_neg};

/// With n = 400 000 the standard error at p = 0.37 is 0.00076: a 2%
/// relative error (0.0074) gives |z| ≈ 10, far beyond the threshold 5; a
/// 2% absolute error is caught at every p below.
const N: u64 = 400_000;

fn frequency(rng: &mut NoiseRng, n: u64, mut draw: impl FnMut(&mut NoiseRng) -> bool) -> u64 {
    (0..n).filter(|_| draw(rng)).count() as u64
}

#[test]
fn bernoulli_exp_neg_matches_exp_minus_gamma() {
    let mut rng = NoiseRng::seeded(0xB1);
    // γ < 1 (the K-loop alone), γ = 1, and γ > 1 (whole-part trials then
    // the fractional part), including non-dyadic fractions.
    for (num, den) in [(1, 10), (1, 2), (2, 3), (1, 1), (3, 2), (7, 3), (5, 2)] {
        let gamma = Rational::new(num, den).unwrap();
        let p = (-gamma.to_f64()).exp();
        let hits = frequency(&mut rng, N, |r| bernoulli_exp_neg(r, &gamma));
        let z = binomial_z(hits, N, p);
        assert!(
            z.abs() < 5.0,
            "γ = {gamma}: frequency {} vs {p} (z = {z})",
            hits as f64 / N as f64
        );
    }
}

#[test]
fn bernoulli_exp_neg_large_gamma() {
    // exp(−10) ≈ 4.5e-5: a few dozen hits in 400 000, never thousands.
    let mut rng = NoiseRng::seeded(0xB2);
    let gamma = Rational::from_integer(10);
    let hits = frequency(&mut rng, N, |r| bernoulli_exp_neg(r, &gamma));
    let z = binomial_z(hits, N, (-10f64).exp());
    assert!(z.abs() < 5.0, "hits {hits}, z = {z}");
}

#[test]
fn bernoulli_rational_matches_p() {
    let mut rng = NoiseRng::seeded(0xB3);
    for (num, den) in [(1, 3), (7, 10), (1, 1000)] {
        let p = Rational::new(num, den).unwrap();
        let hits = frequency(&mut rng, N, |r| bernoulli(r, &p).unwrap());
        let z = binomial_z(hits, N, p.to_f64());
        assert!(z.abs() < 5.0, "p = {p}: z = {z}");
    }
}

#[test]
fn the_z_test_detects_a_two_percent_error() {
    // Power check: a sampler whose probability is 2% too high (relative)
    // at γ = 1 is rejected by the same test and sample size.
    let mut rng = NoiseRng::seeded(0xB4);
    let p = (-1f64).exp();
    let wrong = Rational::at_most(p * 1.02, 40).unwrap();
    let hits = frequency(&mut rng, N, |r| bernoulli(r, &wrong).unwrap());
    let z = binomial_z(hits, N, p);
    assert!(z > 5.0, "a 2% error went unnoticed: z = {z}");
}
