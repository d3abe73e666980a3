//! `ub-direct`'s I_P by class count (issue 28): when every constraint is a
//! key or an FD of one X, max(f(G_τ), capped(τ)) + DLap((τ + 1)/ε2) is
//! released with τ = 1 under a key, else the noisy largest class or the
//! small τ₀ when the noisy excess over τ₀ says it costs less, capped by
//! I_P's noise cap. Every new release, the count, the class bound and the
//! excess, is checked on neighbours that move it by its full sensitivity,
//! and half its noise is caught.

mod common;

use std::collections::HashMap;

use common::{empirical_loss, half_noise_loss};
use dpincon_release::{
    Budget, ClassFacts, CoverFacts, NoiseRng, Prepared, ProjectedMeasure, ProjectedRelease,
    ProjectedSpec, ProjectionTable, TableFacts, UpperCover, prepare, release_projected,
};

/// One X of `group` rows at most, with `classes`.
fn facts(rows: u64, group: u64, classes: ClassFacts) -> TableFacts {
    common::one_set_facts(rows, group, Some(classes))
}

fn key(singles: u64) -> ClassFacts {
    let sizes = vec![(1, singles)];
    ClassFacts { key: true, max_class: 1, sizes, ..ClassFacts::default() }
}

/// FDs' classes: `sizes` in impure groups, the largest class and the
/// excess over τ₀ = 2.
fn fd(sizes: Vec<(u64, u64)>, max_class: u64, excess: u64) -> ClassFacts {
    ClassFacts { max_class, sizes, excess, excess_from: 2, ..ClassFacts::default() }
}

/// The table a class count reads (f(G_θ) = 0: the release is the count's).
fn table(classes: &ClassFacts, prepared: &Prepared) -> ProjectionTable {
    common::class_table(classes, prepared)
}

fn spec(epsilon: f64, rows: u64) -> ProjectedSpec {
    ProjectedSpec {
        max_rows: Some(rows),
        ..ProjectedSpec::new(ProjectedMeasure::P, Budget::new(epsilon).unwrap())
    }
}

#[test]
fn a_key_releases_its_duplicated_rows_at_sensitivity_two_with_the_whole_budget() {
    // 300 rows in key groups of up to 40: the projection would need θ ≈ 40.
    let classes = key(300);
    let facts = facts(1000, 40, classes.clone());
    let mut errors = Vec::new();
    for seed in 0..200 {
        let mut rng = NoiseRng::seeded(seed);
        let prepared = prepare(&spec(1.0, 1000), &facts, &mut rng).unwrap();
        assert_eq!(prepared.thetas().len(), 1, "f(G_1) is all the pass computes");
        let r = release_projected(&prepared, &table(&classes, &prepared), &mut rng).unwrap();
        assert_eq!((r.theta, r.sensitivity), (1, 2));
        assert_eq!(r.selection[0].mechanism, "class-count");
        assert!(r.degree_bound.is_none(), "a key draws no d̃");
        let u = r.budget;
        assert!((u.release - 1.0).abs() < 1e-9, "n_max declared: all of ε is the release's {u:?}");
        let [lo, hi] = r.ci95;
        assert!(lo <= r.value && r.value <= hi);
        errors.push((r.value - 300).unsigned_abs());
    }
    // DLap(2): mean |error| ≈ 2.
    let mean = errors.iter().sum::<u64>() as f64 / errors.len() as f64;
    assert!(mean < 3.0, "mean error {mean}");
}

#[test]
fn fds_of_one_x_take_the_small_tau_when_the_excess_is_small_and_never_draw_a_degree_bound() {
    // Duplicated keys: classes of 1–2 rows and one outlier of 12 (excess 10).
    let dups = fd(vec![(1, 50), (2, 30), (12, 1)], 12, 10);
    // Stars: one class of 30 beside a wrong row in each of 20 groups.
    let stars = fd(vec![(1, 20), (30, 20)], 30, 20 * 28);
    let (mut small, mut taus) = (0, Vec::new());
    for seed in 0..100 {
        let mut rng = NoiseRng::seeded(seed);
        let prepared = prepare(&spec(1.0, 2000), &facts(2000, 61, dups.clone()), &mut rng).unwrap();
        let u = prepared.budget();
        assert!((u.class_bound - 0.25).abs() < 1e-9, "0.25 ε: {u:?}");
        assert_eq!(u.degree_bound, 0.0, "no d̃: {u:?}");
        let sum = u.max_rows + u.class_bound + u.selection + u.release;
        assert!((sum - 1.0).abs() < 1e-9, "{u:?}");
        let r = release_projected(&prepared, &table(&dups, &prepared), &mut rng).unwrap();
        assert_eq!(r.selection[0].mechanism, "class-count");
        small += usize::from(r.theta == 2);
        let prepared =
            prepare(&spec(1.0, 2000), &facts(2000, 61, stars.clone()), &mut rng).unwrap();
        let r = release_projected(&prepared, &table(&stars, &prepared), &mut rng).unwrap();
        taus.push(r.theta);
        assert!(r.degree_bound.is_none());
    }
    // τ₀ = 2 when the excess, 10 + DLap(1/0.05), is at most the noise that
    // τ = 12 + DLap(1/0.2) adds: (τ − 2)/ε2 ≈ 13 rows at ε2 = 0.75.
    assert!(small >= 45, "τ₀ chosen {small} of 100 (about 57 expected)");
    // An excess of 560 never gives way: τ = 30 + DLap(1/0.2).
    let mean = taus.iter().map(|&t| f64::from(t)).sum::<f64>() / taus.len() as f64;
    assert!(taus.iter().all(|&t| t > 2) && (mean - 30.0).abs() < 2.0, "{taus:?}");
    // A class beyond I_P's noise cap (⌊0.07·ε2·ñ⌋ − 1 ≈ 9 on 100 rows) is cut there.
    let huge = fd(vec![(1, 5), (90, 1)], 90, 88);
    let mut rng = NoiseRng::seeded(7);
    let prepared = prepare(&spec(2.0, 100), &facts(100, 95, huge.clone()), &mut rng).unwrap();
    let r = release_projected(&prepared, &table(&huge, &prepared), &mut rng).unwrap();
    assert!(r.theta < 20 && r.theta == r.selection[0].theta_max, "{:?}", r.selection);
}

/// How often each `outcome` of a fresh prepare and release occurs over
/// `samples` runs on a 5,000-row table of `classes` at `epsilon`.
fn outcomes(
    classes: &ClassFacts,
    epsilon: f64,
    samples: u32,
    rng: &mut NoiseRng,
    outcome: impl Fn(&ProjectedRelease) -> i64,
) -> HashMap<i64, u32> {
    common::tally(samples, || {
        let prepared =
            prepare(&spec(epsilon, 5000), &facts(5000, 400, classes.clone()), rng).unwrap();
        outcome(&release_projected(&prepared, &table(classes, &prepared), rng).unwrap())
    })
}

/// Release distribution of a key's count on a table and its neighbour: one
/// added row joins a singleton key group, so two more rows conflict.
#[test]
fn the_class_count_privacy_loss_is_epsilon_and_half_noise_is_caught() {
    let samples = 60_000u32;
    let mut rng = NoiseRng::seeded(29);
    let mut releases = |classes: ClassFacts| {
        let facts = facts(500, 20, classes.clone());
        let prepared = prepare(&spec(1.0, 500), &facts, &mut rng).unwrap();
        let table = table(&classes, &prepared);
        let mut counts = HashMap::new();
        for _ in 0..samples {
            let r = release_projected(&prepared, &table, &mut rng).unwrap();
            // The clamped point and the raw draw agree away from 0.
            *counts.entry(r.value).or_insert(0u32) += 1;
        }
        counts
    };
    let (on_d, on_neighbour) = (releases(key(100)), releases(key(102)));
    let loss = empirical_loss(&on_d, &on_neighbour);
    assert!(loss < 1.0 + 0.1, "privacy loss {loss} exceeds ε = 1");
    assert!(loss > 0.5, "the test must see the loss it bounds, got {loss}");
    let loss = half_noise_loss(1.0, [100, 102], samples, &mut rng);
    assert!(loss > 1.3, "half the noise should show a loss above ε, got {loss}");
}

/// The class bound: the τ chosen on neighbours whose largest class differs
/// by one (the excess far above any τ's cost) has privacy loss within ε_b;
/// half the noise exceeds it.
#[test]
fn the_class_bound_privacy_loss_is_its_epsilon_and_half_noise_is_caught() {
    // ε = 5: ε_b = 0.2 ε = 1.
    let samples = 60_000u32;
    let mut rng = NoiseRng::seeded(31);
    let mut taus = |max_class: u64| {
        outcomes(&fd(vec![(1, 9)], max_class, 4000), 5.0, samples, &mut rng, |r| {
            assert!((r.budget.class_bound - 1.25).abs() < 1e-9);
            i64::from(r.theta)
        })
    };
    let loss = empirical_loss(&taus(5), &taus(6));
    assert!(loss < 1.0 + 0.1, "privacy loss {loss} exceeds ε_c = 1");
    assert!(loss > 0.5, "the test must see the loss it bounds, got {loss}");
    let loss = half_noise_loss(2.0, [5, 6], samples, &mut rng);
    assert!(loss > 1.3, "half the noise should show a loss above ε_c, got {loss}");
}

/// The excess: its draw on neighbours whose excess differs by one has
/// privacy loss within ε_x; half the noise exceeds it.
#[test]
fn the_excess_privacy_loss_is_its_epsilon_and_half_noise_is_caught() {
    // ε = 20: ε_x = 0.05 ε = 1.
    let samples = 60_000u32;
    let mut rng = NoiseRng::seeded(37);
    let mut draws = |excess: u64| {
        outcomes(&fd(vec![(1, 9), (3, 3)], 12, excess), 20.0, samples, &mut rng, |r| {
            r.class_bound.and_then(|b| b.excess).expect("FDs draw the excess")
        })
    };
    let loss = empirical_loss(&draws(10), &draws(11));
    assert!(loss < 1.0 + 0.1, "privacy loss {loss} exceeds ε_x = 1");
    assert!(loss > 0.5, "the test must see the loss it bounds, got {loss}");
    let loss = half_noise_loss(2.0, [10, 11], samples, &mut rng);
    assert!(loss > 1.3, "half the noise should show a loss above ε_x, got {loss}");
}

#[test]
fn several_x_release_their_largest_class_count_at_theta_for_free() {
    // Two X: one with classes of 1–3 rows (60 rows), one with stars of 20
    // (105 rows): at θ* ≈ 60 the count is the larger sum, exact here, where
    // the projection (0 in this table) would see nothing.
    let classes = ClassFacts {
        max_class: 20,
        sizes: vec![(1, 30), (3, 10)],
        others: vec![vec![(1, 5), (20, 5)]],
        ..ClassFacts::default()
    };
    assert_eq!((classes.capped(3), classes.capped(20)), (60, 105));
    let mut errors = Vec::new();
    for seed in 0..100 {
        let mut rng = NoiseRng::seeded(seed);
        let prepared =
            prepare(&spec(2.0, 2000), &facts(2000, 61, classes.clone()), &mut rng).unwrap();
        let u = prepared.budget();
        assert_eq!(u.class_bound, 0.0, "nothing drawn for the classes: {u:?}");
        assert!(u.degree_bound > 0.0, "several X keep d̃ for θ* and the interval: {u:?}");
        let r = release_projected(&prepared, &table(&classes, &prepared), &mut rng).unwrap();
        assert!(r.class_bound.is_none());
        assert_eq!(r.selection[0].mechanism, "class-count");
        assert_eq!(r.theta, r.selection[0].theta_max, "the count is taken at θ*");
        assert!(r.ci95[0] <= r.value && r.value <= r.ci95[1]);
        if r.theta >= 20 {
            errors.push((r.value - 105).unsigned_abs());
        }
    }
    // At θ ≥ 20 the count is exact: the error is DLap((θ + 1)/ε2) alone.
    let mean = errors.iter().sum::<u64>() as f64 / errors.len() as f64;
    assert!(errors.len() >= 95 && mean < 60.0, "mean error {mean} over {} runs", errors.len());
}

/// An exact sum is I_R itself; any other is an upper bound (which sums
/// are exact: `dpincon_engine::to_cover_facts`); without one, neither.
#[test]
fn an_exact_cover_sum_is_i_r_and_another_an_upper_bound() {
    let with = |sum: Option<UpperCover>| TableFacts {
        covers: CoverFacts { largest: 12, sum, keys: vec![] },
        ..common::one_set_facts(100, 10, None)
    };
    let exact = UpperCover { sum: 12, sets: 1, union: None, exact: true };
    assert_eq!(
        (with(Some(exact)).exact_repair(), with(Some(exact)).upper_cover()),
        (Some(12), None)
    );
    let upper = UpperCover { sum: 30, sets: 2, union: None, exact: false };
    assert_eq!(
        (with(Some(upper)).exact_repair(), with(Some(upper)).upper_cover()),
        (None, Some(upper))
    );
    assert_eq!((with(None).exact_repair(), with(None).upper_cover()), (None, None));
}
