//! Intervals that hold the measure itself (README, "Intervals"): the
//! released f(G_θ*) + noise says where f(G_θ*) is, and the projection only
//! removes edges, so F ≥ f(G_θ*) gives the lower end. The upper end bounds
//! what θ* removed, from a degree bound D that holds with high probability:
//!
//! - every edge edge addition drops has an endpoint *saturated* in G_θ
//!   (kept degree θ: the rule drops (u, v) only when one end has reached θ,
//!   and degrees never fall), so there are s ≤ 2·f_MI(G_θ)/θ saturated
//!   rows, and s ≤ f_P(G_θ) since each is problematic in G_θ;
//! - a saturated row loses at most deg_G − θ ≤ D − θ edges, and a row that
//!   conflicts in G but not in G_θ has lost all its edges to saturated rows;
//! - so F_MI ≤ f + min(⌊2f/θ⌋, n)·(D − θ) and F_P ≤ f + min(f, n)·(D − θ),
//!   with F_MI ≤ ⌊n·D/2⌋ and F_P ≤ n; for θ ≥ D nothing was removed.
//!
//! Both bounds grow with f, so applying them to the noise's upper end keeps
//! the event: the interval misses F only if the release's noise leaves its
//! 96% range or a bound fails, at most 4% + 1% (union bound). Everything
//! here reads released or public values: post-processing.

use dpincon_mechanisms::DiscreteLaplace;
use serde::{Deserialize, Serialize};

use crate::ProjectedMeasure;
use crate::classes::{ClassBounds, ExcessBound, class_upper_end};
use crate::miss::NOISE_MISS;

/// The public bounds an interval's upper end rests on, each holding with
/// probability at least 1 − 0.5% (or always, when declared).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntervalBounds {
    /// Rows: the declared n_max, or ñ plus its noise's 99.5% quantile, or
    /// (`ub-direct`'s I_P) the smaller of the two.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
    /// Every row's degree: d̃ plus its noise's 99.5% quantile, or rows − 1.
    pub max_degree: u64,
    /// I_P by class count: the largest class and the NULL rows (module
    /// `classes`), replacing the degree bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classes: Option<ClassBounds>,
    /// I_P by leading count over several X (the fifteenth round): M's high
    /// bound, at least what the count at τ₀ = `from` misses. The upper end
    /// is then the count's plus it, replacing both bounds above.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leading: Option<ExcessBound>,
}

/// The interval of `measure` released as `noisy` (before clamping) with
/// `noise` at `theta` (τ of a class count), and the point clamped into it.
pub(crate) fn measure_interval(
    measure: ProjectedMeasure,
    noisy: i64,
    noise: &DiscreteLaplace,
    theta: u32,
    bounds: IntervalBounds,
) -> (i64, [i64; 2]) {
    let (lo, hi) = release_ends(measure, (noisy, noise, theta), NOISE_MISS, bounds);
    // A lower end past the upper end means the noise passed its quantile
    // (or a bound failed): inside the 5%. Report the noise's own width
    // below the upper end, not the point [hi, hi], whose zero width would
    // claim a certainty no release has (README, "Intervals").
    let lo = if lo > hi { hi.saturating_sub(2 * noise.halfwidth(NOISE_MISS)) } else { lo };
    let point = (noisy.max(0) as u64).clamp(lo, hi);
    let int = |v: u64| v.min(i64::MAX as u64) as i64;
    (int(point), [int(lo), int(hi)])
}

/// The interval of `measure` from two releases of the same pass: `point`
/// (noisy, its noise, its θ), whose value is reported, and `upper` at a
/// larger θ, released only for the interval (README, "the seventeenth
/// round"). Each release's noise gets half of the noise's miss (a union
/// bound keeps the total); each gives a lower end (F ≥ f(G_θ)) and an upper
/// end. The interval is their intersection, except that the second's ends
/// never cross the point: widening an end past what either release says
/// never loses F, so the misses are as before, and the point (a release of
/// its own, at 0 or above) is never moved by the other's noise.
pub(crate) fn paired_interval(
    measure: ProjectedMeasure,
    point: (i64, &DiscreteLaplace, u32),
    upper: (i64, &DiscreteLaplace, u32),
    bounds: IntervalBounds,
) -> (i64, [i64; 2]) {
    let ends = |release| release_ends(measure, release, NOISE_MISS / 2.0, bounds);
    let ((lo_p, hi_p), (lo_u, hi_u)) = (ends(point), ends(upper));
    let value = point.0.max(0) as u64;
    // lo_p ≤ value ≤ hi_p: the point's own noise range holds it.
    let (lo, hi) = (lo_p.max(lo_u.min(value)), hi_p.min(hi_u.max(value)));
    let int = |v: u64| v.min(i64::MAX as u64) as i64;
    (int(value), [int(lo), int(hi)])
}

/// One release's ends: `noisy` less its noise's half-width at `miss`
/// (two-sided), at least 0, and the largest F consistent with the
/// statistic at θ at most `noisy` plus that half-width.
fn release_ends(
    measure: ProjectedMeasure,
    (noisy, noise, theta): (i64, &DiscreteLaplace, u32),
    miss: f64,
    bounds: IntervalBounds,
) -> (u64, u64) {
    let h = noise.halfwidth(miss).min(i64::MAX as u64) as i64;
    let lo = noisy.saturating_sub(h).max(0) as u64;
    let f = noisy.saturating_add(h).max(0) as u64;
    (lo, statistic_upper_end(measure, f, theta, bounds))
}

/// The largest F consistent with the released statistic (f(G_θ), or a
/// class count at τ = `theta`) at most `f` under `bounds`: a class count is
/// max(f(G_τ), capped(τ)), so either bound holds and the smaller is kept.
/// A leading count is at least I_P − M: its end is f + M's high bound alone
/// (the noise, M and the rows share the 5%: no degree bound is read).
pub(crate) fn statistic_upper_end(
    measure: ProjectedMeasure,
    f: u64,
    theta: u32,
    bounds: IntervalBounds,
) -> u64 {
    if let Some(leading) = bounds.leading {
        return f.saturating_add(leading.high).min(bounds.rows.unwrap_or(u64::MAX));
    }
    match bounds.classes {
        Some(classes) => class_upper_end(f, theta, classes, bounds.rows)
            .min(upper_end(measure, f, theta, bounds)),
        None => upper_end(measure, f, theta, bounds),
    }
}

/// The largest F consistent with f(G_θ) ≤ `f` under `bounds` (module docs).
pub(crate) fn upper_end(
    measure: ProjectedMeasure,
    f: u64,
    theta: u32,
    bounds: IntervalBounds,
) -> u64 {
    let (f, theta, d) = (u128::from(f), u128::from(theta.max(1)), u128::from(bounds.max_degree));
    let n = bounds.rows.map(u128::from);
    let lost = d.saturating_sub(theta);
    let (saturated, cap) = match measure {
        ProjectedMeasure::Mi => (2 * f / theta, n.map(|n| n * d / 2)),
        ProjectedMeasure::P => (f, n),
    };
    let saturated = n.map_or(saturated, |n| saturated.min(n));
    let hi = (f + saturated * lost).min(cap.unwrap_or(u128::MAX));
    hi.min(u128::from(u64::MAX)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use dpincon_graph::{ConflictGraph, Edge};
    use dpincon_measures::{DegreeBound, measure_pass};

    /// Every graph on up to 6 nodes from a seeded stream, every θ: the
    /// upper end holds F given the exact f(G_θ), the true maximum degree and
    /// n, and equals f when θ reaches the maximum degree.
    #[test]
    fn the_upper_end_holds_the_measure_on_small_graphs() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..3000 {
            let n = 2 + (next() % 5) as u32;
            let mut edges = Vec::new();
            for u in 0..n {
                for v in u + 1..n {
                    if next() % 2 == 0 {
                        edges.push((u, v));
                    }
                }
            }
            // The stream order is the graph's (Λ); the shuffle varies the sets.
            for i in (1..edges.len()).rev() {
                edges.swap(i, (next() % (i as u64 + 1)) as usize);
            }
            let graph = ConflictGraph::from_edges(n, edges.iter().map(|&(u, v)| Edge::new(u, v)));
            let thetas: Vec<DegreeBound> = (1..n).filter_map(DegreeBound::new).collect();
            let pass = measure_pass(&graph, &thetas, 1);
            let exact = pass.exact();
            let bounds = IntervalBounds {
                rows: Some(u64::from(n)),
                max_degree: u64::from(exact.max_degree),
                classes: None,
                leading: None,
            };
            for theta in 1..n {
                let counts = pass.projected.iter().find(|c| c.theta.get() == theta).unwrap();
                for (measure, f, truth) in [
                    (ProjectedMeasure::Mi, counts.edges, exact.edges),
                    (ProjectedMeasure::P, counts.problematic, exact.problematic),
                ] {
                    let hi = upper_end(measure, f, theta, bounds);
                    assert!(hi >= truth, "{measure:?} θ={theta} {edges:?}: {hi} < {truth}");
                    if u64::from(theta) >= bounds.max_degree {
                        assert_eq!(hi, f);
                    }
                }
            }
        }
    }

    /// Two releases: the point is the first's own (never moved by the
    /// second's noise), inside the interval, and the second narrows the
    /// upper end only where its own end is lower.
    #[test]
    fn a_paired_interval_keeps_the_point_and_takes_the_lower_upper_end() {
        let bounds =
            IntervalBounds { rows: Some(100_000), max_degree: 1_000, classes: None, leading: None };
        let (point, upper) =
            (DiscreteLaplace::new(10, 1.0).unwrap(), DiscreteLaplace::new(400, 0.5).unwrap());
        for (p, u) in
            [(5_000, 5_000), (5_000, 9_000), (5_000, -20_000), (-50, 5_000), (5_000, 60_000)]
        {
            let (value, [lo, hi]) =
                paired_interval(ProjectedMeasure::Mi, (p, &point, 10), (u, &upper, 400), bounds);
            assert_eq!(value, p.max(0));
            assert!(0 <= lo && lo <= value && value <= hi, "{p} {u}: {lo} {value} {hi}");
            let (_, [_, alone]) = measure_interval(ProjectedMeasure::Mi, p, &point, 10, bounds);
            assert!(hi <= alone.max(value), "{p} {u}: {hi} > {alone}");
        }
        // At θ = 10 against D = 1,000 the point's own end is about f·200;
        // the second release at θ = 400 brings it within a few f.
        let (_, [_, hi]) = paired_interval(
            ProjectedMeasure::Mi,
            (5_000, &point, 10),
            (5_000, &upper, 400),
            bounds,
        );
        let (_, [_, alone]) = measure_interval(ProjectedMeasure::Mi, 5_000, &point, 10, bounds);
        assert!(hi * 20 < alone, "{hi} against {alone}");
    }

    #[test]
    fn the_point_stays_inside_and_the_ends_are_ordered() {
        let noise = DiscreteLaplace::new(10, 1.0).unwrap();
        let bounds =
            IntervalBounds { rows: Some(100), max_degree: 40, classes: None, leading: None };
        for noisy in [-500, -3, 0, 7, 95, 120, 5000] {
            for measure in [ProjectedMeasure::Mi, ProjectedMeasure::P] {
                let (point, [lo, hi]) = measure_interval(measure, noisy, &noise, 10, bounds);
                assert!(0 <= lo && lo <= point && point <= hi, "{noisy}: {lo} {point} {hi}");
            }
        }
        // I_P never above the rows, I_MI never above n·D/2; a release far
        // above them gets the noise's width below that end, not a point.
        let (point, [lo, hi]) = measure_interval(ProjectedMeasure::P, 5000, &noise, 10, bounds);
        assert_eq!((point, hi), (100, 100));
        assert_eq!(lo, 100 - 2 * noise.halfwidth(NOISE_MISS) as i64);
        assert!(lo > 0, "{lo}");
        let (_, [_, hi]) = measure_interval(ProjectedMeasure::Mi, 5000, &noise, 10, bounds);
        assert_eq!(hi, 2000);
    }
}
