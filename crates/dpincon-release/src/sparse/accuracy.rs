//! What a gated verdict guarantees (README, "Gated verdicts", α).
//!
//! A night passes iff q + ν ≤ ρ, q the statistic's distance outside the
//! band, ρ ~ DLap(2Δ/ε) drawn once, ν ~ DLap(4Δ/ε) fresh. Two figures:
//!
//! - **α (pass)**: with probability ≥ 1 − β, every pass of the epoch had
//!   q ≤ α. Only the *first* night with q > α can break it (it passes, or
//!   it ends the epoch), so P(fail) ≤ P(ρ − ν > α), one night's tail,
//!   whatever the number of nights. α is the least integer with that exact
//!   tail (of a sum of two discrete Laplace variables) at most β.
//! - **α (two-sided)**, Dwork–Roth's accuracy: with probability ≥ 1 − β
//!   over k nights, every pass had q ≤ α₂ *and* no night with q ≤ −α₂
//!   ended the epoch (no false alarm while the statistic is α₂ inside its
//!   band). Union bound: |ρ| ≤ h(ρ, β/2) and |ν_t| ≤ h(ν, β/(2k)) for all
//!   t, h the noise's two-sided half-width. It grows with ln k; Dwork and
//!   Roth's closed form 8Δ(ln k + ln(2/β))/ε is above it.
//!
//! Everything here reads public parameters only (floating point is fine).

use dpincon_mechanisms::DiscreteLaplace;

use crate::ReleaseError;

/// The epoch's stated accuracy, in units of the statistic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Accuracy {
    /// α: with probability ≥ 1 − β every pass had the statistic within α
    /// of its band (at most hi + α, at least lo − α). Independent of k.
    pub pass: u64,
    /// α₂ ≥ α: additionally, with probability ≥ 1 − β over the k nights
    /// no night whose statistic lay α₂ inside the band ended the epoch.
    pub two_sided: u64,
    /// α_q ≤ α₂, the quiet width: with probability ≥ 1 − β over the k
    /// nights, no night whose statistic lay α_q inside the band ended the
    /// epoch (α₂'s false-alarm half alone, one union bound instead of two).
    pub quiet: u64,
}

/// The threshold noise DLap(2Δ/ε) and the nightly noise DLap(4Δ/ε)
/// (Dwork–Roth's AboveThreshold scales; README on why not 2Δ/ε for both).
pub(crate) fn epoch_noises(
    epsilon: f64,
    sensitivity: u64,
) -> Result<(DiscreteLaplace, DiscreteLaplace), ReleaseError> {
    let too_large =
        || ReleaseError::Invalid(format!("a gate's sensitivity {sensitivity} is too large"));
    let twice = sensitivity.checked_mul(2).ok_or_else(too_large)?;
    let four = sensitivity.checked_mul(4).ok_or_else(too_large)?;
    Ok((DiscreteLaplace::new(twice, epsilon)?, DiscreteLaplace::new(four, epsilon)?))
}

fn check_beta(beta: f64) -> Result<(), ReleaseError> {
    if beta.is_finite() && beta > 0.0 && beta < 1.0 {
        Ok(())
    } else {
        Err(ReleaseError::Invalid(format!("a gate's β must lie in (0, 1), got {beta}")))
    }
}

/// P(X + Y > a) for independent X ~ DLap(b1), Y ~ DLap(b2) and a ≥ 0,
/// in closed form. With r = e^{−1/b1} ≤ s = e^{−1/b2} (swap otherwise; the
/// sum is symmetric) and P(Y > m) = s^{m+1}/(1+s) for m ≥ 0, summing over
/// X gives
///
/// (1+r)(1+s)·P = (1−r)·s^{a+1}/(1−rs) + (1−r)·r·Σ_{x=1..a} r^{x−1}s^{a+1−x}
///                + r^{a+1}·(1−rs²)/(1−rs),
///
/// the middle sum written as s^a·(1 − (r/s)^a)/(1 − r/s) with `exp_m1` so
/// nothing cancels when the scales are large or equal.
pub(crate) fn sum_tail(b1: f64, b2: f64, a: u64) -> f64 {
    let (l1, l2) = {
        let (x, y) = (1.0 / b1, 1.0 / b2);
        if x >= y { (x, y) } else { (y, x) }
    };
    let a = a as f64;
    let (r, s) = ((-l1).exp(), (-l2).exp());
    let one_minus_r = -(-l1).exp_m1();
    let one_minus_rs = -(-(l1 + l2)).exp_m1();
    let one_minus_rss = -(-(l1 + 2.0 * l2)).exp_m1();
    let delta = l1 - l2;
    // Σ_{j<a} (r/s)^j.
    let geometric = if delta == 0.0 { a } else { (-a * delta).exp_m1() / (-delta).exp_m1() };
    let s_a = (-a * l2).exp();
    let head = one_minus_r * s_a * s / one_minus_rs;
    let middle = one_minus_r * r * s_a * geometric;
    let tail = (-(a + 1.0) * l1).exp() * one_minus_rss / one_minus_rs;
    ((head + middle + tail) / ((1.0 + r) * (1.0 + s))).clamp(0.0, 1.0)
}

/// The least a with P(ρ − ν > a) ≤ β for the given noises.
fn least_sum_quantile(rho: &DiscreteLaplace, nu: &DiscreteLaplace, beta: f64) -> u64 {
    let (b1, b2) = (rho.scale_f64(), nu.scale_f64());
    let fits = |a: u64| sum_tail(b1, b2, a) <= beta;
    if fits(0) {
        return 0;
    }
    // P(ρ > h1) + P(−ν > h2) ≤ β/2 + β/2: the union bound is an upper end.
    let mut hi = rho.halfwidth(beta).saturating_add(nu.halfwidth(beta)).max(1);
    for _ in 0..64 {
        if fits(hi) || hi == u64::MAX {
            break;
        }
        hi = hi.saturating_mul(2);
    }
    let mut lo = 0; // !fits(lo), fits(hi)
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) { hi = mid } else { lo = mid }
    }
    hi
}

/// α for passes (module docs): the least integer with P(ρ − ν > α) ≤ β,
/// ρ ~ DLap(2Δ/ε), ν ~ DLap(4Δ/ε), with the scales the epoch really uses
/// (ε rounded down to a multiple of 2^-48).
///
/// # Errors
/// [`ReleaseError::Invalid`] for β outside (0, 1) or an absurd Δ, or the
/// mechanism's error for ε.
pub fn alpha_pass(epsilon: f64, sensitivity: u64, beta: f64) -> Result<u64, ReleaseError> {
    check_beta(beta)?;
    let (rho, nu) = epoch_noises(epsilon, sensitivity)?;
    Ok(least_sum_quantile(&rho, &nu, beta))
}

/// The epoch's noises, for figures over `nights` ≥ 1 nights at `beta`.
fn nightly_noises(
    epsilon: f64,
    sensitivity: u64,
    nights: u32,
    beta: f64,
) -> Result<(DiscreteLaplace, DiscreteLaplace), ReleaseError> {
    check_beta(beta)?;
    if nights == 0 {
        return Err(ReleaseError::Invalid("a gate must plan at least one night".into()));
    }
    epoch_noises(epsilon, sensitivity)
}

/// α₂ for k nights (module docs): h(ρ, β/2) + h(ν, β/(2k)), h the exact
/// two-sided half-width of the discrete Laplace.
///
/// # Errors
/// As [`alpha_pass`], and for k = 0.
pub fn alpha_two_sided(
    epsilon: f64,
    sensitivity: u64,
    nights: u32,
    beta: f64,
) -> Result<u64, ReleaseError> {
    let (rho, nu) = nightly_noises(epsilon, sensitivity, nights, beta)?;
    let per_night = beta / (2.0 * f64::from(nights));
    Ok(rho.halfwidth(beta / 2.0).saturating_add(nu.halfwidth(per_night)))
}

/// α_q for k nights (`Accuracy::quiet`): the least d with
/// k·P(ν − ρ > d) ≤ β. A night whose statistic lies d inside its band
/// ends the epoch only if ν_t − ρ > d; the union bound over the k nights
/// of that one tail (exact, the sum of two discrete Laplace variables) is
/// at most β.
///
/// # Errors
/// As [`alpha_two_sided`].
pub fn alpha_quiet(
    epsilon: f64,
    sensitivity: u64,
    nights: u32,
    beta: f64,
) -> Result<u64, ReleaseError> {
    let (rho, nu) = nightly_noises(epsilon, sensitivity, nights, beta)?;
    Ok(least_sum_quantile(&rho, &nu, beta / f64::from(nights)))
}

/// The figures of an epoch.
///
/// # Errors
/// As [`alpha_two_sided`].
pub fn accuracy(
    epsilon: f64,
    sensitivity: u64,
    nights: u32,
    beta: f64,
) -> Result<Accuracy, ReleaseError> {
    Ok(Accuracy {
        pass: alpha_pass(epsilon, sensitivity, beta)?,
        two_sided: alpha_two_sided(epsilon, sensitivity, nights, beta)?,
        quiet: alpha_quiet(epsilon, sensitivity, nights, beta)?,
    })
}

/// The smallest ε (an `f64`, to the ulp) whose pass α is at most `width`:
/// what a suite loader names when it refuses a check whose α is too wide.
/// Any smaller ε gives a wider α (α never widens as ε grows: both scales
/// shrink, and every tail shrinks with its scale).
///
/// # Errors
/// [`ReleaseError::Invalid`] for β outside (0, 1), or when no ε up to 2^40
/// reaches the width.
pub fn min_epsilon(sensitivity: u64, beta: f64, width: u64) -> Result<f64, ReleaseError> {
    check_beta(beta)?;
    let fits = |eps: f64| alpha_pass(eps, sensitivity, beta).map(|a| a <= width);
    let floor = dpincon_mechanisms::laplace::MIN_EPSILON;
    if fits(floor)? {
        return Ok(floor);
    }
    let mut hi = 1.0f64;
    while !fits(hi)? {
        hi *= 2.0;
        if hi > (1u64 << 40) as f64 {
            return Err(ReleaseError::Invalid(format!(
                "no ε up to 2^40 gives a gate of sensitivity {sensitivity} an α of at most \
                 {width} at β = {beta}"
            )));
        }
    }
    // Positive floats are ordered as their bit patterns: bisect on the bits.
    let (mut lo, mut hi) = (floor.to_bits(), hi.to_bits()); // !fits(lo), fits(hi)
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(f64::from_bits(mid))? { hi = mid } else { lo = mid }
    }
    Ok(f64::from_bits(hi))
}

/// `x` rounded up to three significant digits, never below `x`: how an
/// error message names a least ε.
pub(crate) fn round_up_3(x: f64) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return x;
    }
    let scale = 10f64.powi(2 - x.log10().floor() as i32);
    let up = (x * scale).ceil() / scale;
    if up >= x { up } else { x }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dpincon_mechanisms::NoiseRng;

    /// The closed form against the pmf summed directly.
    #[test]
    fn the_sum_tail_matches_the_convolution() {
        for (b1, b2) in [(2.0, 4.0), (2.0, 2.0), (0.5, 1.0), (6.0, 3.0), (20.0, 40.0)] {
            let x = DiscreteLaplace::with_scale(
                dpincon_mechanisms::Rational::at_least(b1, 20).unwrap(),
            )
            .unwrap();
            let y = DiscreteLaplace::with_scale(
                dpincon_mechanisms::Rational::at_least(b2, 20).unwrap(),
            )
            .unwrap();
            let reach = (60.0 * b1.max(b2)) as i64;
            for a in [0u64, 1, 3, 10, 40] {
                // P(X + Y > a) = Σ_x P(X = x)·P(Y > a − x).
                // P(Y > m) = tail(m)/2 for m ≥ 0, 1 − tail(−m − 1)/2 below.
                let above = |m: i64| {
                    if m >= 0 {
                        y.tail(m as u64) / 2.0
                    } else {
                        1.0 - y.tail((-m - 1) as u64) / 2.0
                    }
                };
                let brute: f64 = (-reach..=reach).map(|v| x.pmf(v) * above(a as i64 - v)).sum();
                let closed = sum_tail(x.scale_f64(), y.scale_f64(), a);
                assert!((closed - brute).abs() < 1e-9, "{b1} {b2} {a}: {closed} vs {brute}");
            }
        }
        // Far tails of huge scales stay finite and ordered.
        let (p, q) = (sum_tail(1e9, 2e9, 10_000_000_000), sum_tail(1e9, 2e9, 20_000_000_000));
        assert!(p.is_finite() && q < p && q > 0.0);
    }

    /// α is the least: its tail is at most β and one less is above β;
    /// the two-sided α₂ and Dwork–Roth's closed form are wider.
    #[test]
    fn alpha_is_the_least_and_tighter_than_dwork_roth() {
        for delta in [1u64, 10, 37] {
            for eps in [0.1, 0.5, 1.0, 2.0] {
                for beta in [0.01, 0.05] {
                    let a = alpha_pass(eps, delta, beta).unwrap();
                    let (rho, nu) = epoch_noises(eps, delta).unwrap();
                    let tail = |a| sum_tail(rho.scale_f64(), nu.scale_f64(), a);
                    assert!(tail(a) <= beta);
                    assert!(a == 0 || tail(a - 1) > beta);
                    for k in [1u32, 8, 365] {
                        let two = alpha_two_sided(eps, delta, k, beta).unwrap();
                        let dr = 8.0 * delta as f64 * (f64::from(k).ln() + (2.0 / beta).ln()) / eps;
                        assert!(a <= two && (two as f64) < dr, "{delta} {eps} {k}: {a} {two} {dr}");
                        let quiet = alpha_quiet(eps, delta, k, beta).unwrap();
                        assert!(a <= quiet && quiet <= two, "{delta} {eps} {k}: {quiet} {two}");
                        let q = f64::from(k) * tail(quiet);
                        assert!(q <= beta && (quiet == 0 || f64::from(k) * tail(quiet - 1) > beta));
                    }
                }
            }
        }
    }

    #[test]
    fn the_least_epsilon_is_least() {
        for (delta, width) in [(1u64, 10u64), (1, 3), (10, 100), (10, 37), (250, 900)] {
            let eps = min_epsilon(delta, 0.05, width).unwrap();
            assert!(alpha_pass(eps, delta, 0.05).unwrap() <= width);
            // The next float down, and ε 0.1% lower, are wider.
            assert!(alpha_pass(eps.next_down(), delta, 0.05).unwrap() > width, "{delta} {width}");
            assert!(alpha_pass(eps * 0.999, delta, 0.05).unwrap() > width);
            let shown = round_up_3(eps);
            assert!(shown >= eps && shown <= eps * 1.01);
        }
        assert!(min_epsilon(1, 0.0, 5).is_err() && min_epsilon(1, 1.0, 5).is_err());
    }

    /// α holds, statistically and sharply: 2·10^4 epochs of 10 nights whose
    /// first nine lie deep inside the band (pass for sure) and whose last
    /// lies α + 1 above it: the share of epochs that pass it is at most β
    /// (and matches the closed form); at α itself the share is the exact
    /// tail one step in, above β.
    #[test]
    fn alpha_holds_over_seeded_epochs() {
        use super::super::{Band, Epoch, EpochParams};
        let (eps, delta, beta, nights) = (1.0, 3u64, 0.05, 10u32);
        let a = alpha_pass(eps, delta, beta).unwrap();
        let (rho, nu) = epoch_noises(eps, delta).unwrap();
        let exact = |q: u64| sum_tail(rho.scale_f64(), nu.scale_f64(), q - 1);
        let params = EpochParams::new(eps, delta, vec![Band::at_most(0)], nights, beta).unwrap();
        let mut rng = NoiseRng::seeded(11);
        let trials = 20_000;
        for (over, expected) in [(a + 1, exact(a + 1)), (a, exact(a))] {
            let mut passed = 0;
            for _ in 0..trials {
                let mut epoch = Epoch::start(params.clone(), &mut rng).unwrap();
                for _ in 1..nights {
                    epoch.check(-1_000_000, &mut rng).unwrap();
                }
                passed += usize::from(epoch.check(over as i64, &mut rng).unwrap().is_pass());
            }
            let rate = passed as f64 / trials as f64;
            let se = (expected * (1.0 - expected) / trials as f64).sqrt();
            eprintln!(
                "α = {a}: statistic α{:+} above the band passes {rate:.4} ({expected:.4} exact)",
                over as i64 - a as i64
            );
            assert!((rate - expected).abs() <= 4.0 * se, "{rate} vs {expected}");
            if over > a {
                assert!(expected <= beta && rate <= beta + 3.0 * se);
            } else {
                assert!(expected > beta);
            }
        }
    }

    /// α₂: a statistic α₂ + 1 inside the band every night for k = 40 nights
    /// ends at most a β share of the epochs early (in fact far fewer: the
    /// union bound over nights is loose).
    #[test]
    fn the_two_sided_alpha_bounds_false_alarms() {
        use super::super::{Band, Epoch, EpochParams};
        let (eps, delta, beta, nights) = (1.0, 1u64, 0.05, 40u32);
        let a2 = alpha_two_sided(eps, delta, nights, beta).unwrap();
        let params = EpochParams::new(eps, delta, vec![Band::at_most(0)], nights, beta).unwrap();
        let mut rng = NoiseRng::seeded(12);
        let trials = 4_000;
        let alarms = (0..trials)
            .filter(|_| {
                let mut epoch = Epoch::start(params.clone(), &mut rng).unwrap();
                (0..nights).any(|_| !epoch.check(-(a2 as i64) - 1, &mut rng).unwrap().is_pass())
            })
            .count();
        let rate = alarms as f64 / f64::from(trials);
        eprintln!("α₂ = {a2}: false alarms in {rate:.4} of {trials} epochs of {nights} nights");
        assert!(rate <= beta);
        // α_q, narrower, still bounds them: at α_q inside, at most β (three
        // standard errors of slack); a third of the way in, far more.
        let quiet = alpha_quiet(eps, delta, nights, beta).unwrap();
        let alarms_at = |inside: i64, rng: &mut NoiseRng| {
            let ended = (0..trials).filter(|_| {
                let mut epoch = Epoch::start(params.clone(), rng).unwrap();
                (0..nights).any(|_| !epoch.check(-inside, rng).unwrap().is_pass())
            });
            ended.count() as f64 / f64::from(trials)
        };
        let se = (beta * (1.0 - beta) / f64::from(trials)).sqrt();
        let at_quiet = alarms_at(quiet as i64, &mut rng);
        let shallow = alarms_at(quiet as i64 / 3, &mut rng);
        eprintln!("α_q = {quiet}: false alarms {at_quiet:.4}; at α_q/3 inside {shallow:.4}");
        assert!(at_quiet <= beta + 3.0 * se && shallow > beta, "{at_quiet} {shallow}");
    }
}
