//! `ub-direct`'s I_P by class count (issue 28): when every constraint is a
//! key or an FD of one X, capped(τ) + DLap((τ + 1)/ε2) replaces the
//! projection whenever τ (1 under a key, else the noisy largest class plus
//! a margin) is at most the θ the degree bound allows. Both new releases,
//! the count and the class bound, are checked on neighbours that move
//! them by their full sensitivity, and half their noise is caught.

mod common;

use std::collections::HashMap;

use common::empirical_loss;
use dpincon_measures::{ExactCounts, ProjectedCounts};
use dpincon_release::{
    Budget, ClassFacts, NoiseRng, Prepared, ProjectedMeasure, ProjectedSpec, ProjectionTable,
    TableFacts, prepare, release_projected,
};

/// One X of `group` rows at most, with `classes`.
fn facts(rows: u64, group: u64, classes: ClassFacts) -> TableFacts {
    common::one_set_facts(rows, group, Some(classes))
}

fn key(singles: u64) -> ClassFacts {
    ClassFacts { key: true, max_class: 1, null_rows: 0, sizes: vec![(1, singles)] }
}

/// The table a class count reads, with f(G_θ) = 0 for the θ it needs (so
/// the release is the class count's).
fn table(classes: &ClassFacts, prepared: &Prepared) -> ProjectionTable {
    let exact = ExactCounts { rows: 0, edges: 0, problematic: 0, max_degree: 0, drastic: 0 };
    let zero = |theta| ProjectedCounts { theta, edges: 0, problematic: 0 };
    let projected = prepared.thetas().into_iter().map(zero);
    ProjectionTable::new(exact, projected).with_classes(Some(classes.clone()))
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
fn fds_of_one_x_use_the_class_count_only_when_its_tau_is_below_theta() {
    // Classes of at most 2 rows in groups of up to 60: τ ≈ 2 + noise < θ ≈ 60.
    let small =
        ClassFacts { key: false, max_class: 2, null_rows: 0, sizes: vec![(1, 50), (2, 30)] };
    // Classes as large as the groups: τ ≈ θ, and the projection's d̃ wins
    // about as often as it loses; with a class of 200 in groups of 60, never.
    let large = ClassFacts { max_class: 200, ..small.clone() };
    let (mut by_classes, mut by_projection, mut taus) = (0, 0, Vec::new());
    for seed in 0..100 {
        let mut rng = NoiseRng::seeded(seed);
        let prepared =
            prepare(&spec(2.0, 2000), &facts(2000, 61, small.clone()), &mut rng).unwrap();
        let u = prepared.budget();
        assert!((u.class_bound - 0.3).abs() < 1e-9, "0.15 ε: {u:?}");
        let sum = u.max_rows + u.degree_bound + u.class_bound + u.selection + u.release;
        assert!((sum - 2.0).abs() < 1e-9, "{u:?}");
        let r = release_projected(&prepared, &table(&small, &prepared), &mut rng).unwrap();
        if r.selection.first().is_some_and(|s| s.mechanism == "class-count") {
            by_classes += 1;
            taus.push(r.theta);
        }
        let prepared =
            prepare(&spec(2.0, 2000), &facts(2000, 61, large.clone()), &mut rng).unwrap();
        let r = release_projected(&prepared, &table(&large, &prepared), &mut rng).unwrap();
        by_projection += usize::from(r.selection.is_empty() && r.class_bound.is_some());
    }
    assert!(by_classes >= 95, "class count chosen {by_classes} of 100");
    // τ = 2 + DLap(1/0.3) clamped at 1: about 3 on average.
    let mean = taus.iter().map(|&t| f64::from(t)).sum::<f64>() / taus.len() as f64;
    assert!(mean < 8.0, "mean τ {mean}");
    assert_eq!(by_projection, 100, "a class of 200 never beats θ ≈ 60");
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
    let half = dpincon_mechanisms::DiscreteLaplace::new(1, 1.0).unwrap();
    let mut sample = |count: i64| {
        let mut counts = HashMap::new();
        for _ in 0..samples {
            *counts.entry(half.release(count, &mut rng)).or_insert(0u32) += 1;
        }
        counts
    };
    let loss = empirical_loss(&sample(100), &sample(102));
    assert!(loss > 1.3, "half the noise should show a loss above ε, got {loss}");
}

/// The class bound: the τ chosen on neighbours whose largest class differs
/// by one has privacy loss within ε_c; half the noise exceeds it.
#[test]
fn the_class_bound_privacy_loss_is_its_epsilon_and_half_noise_is_caught() {
    // ε = 10/1.5: ε_c = 0.15 ε = 1.
    let samples = 60_000u32;
    let mut rng = NoiseRng::seeded(31);
    let mut taus = |max_class: u64| {
        let classes = ClassFacts { key: false, max_class, null_rows: 0, sizes: vec![(1, 9)] };
        let mut counts = HashMap::new();
        for _ in 0..samples {
            let prepared =
                prepare(&spec(10.0 / 1.5, 5000), &facts(5000, 400, classes.clone()), &mut rng)
                    .unwrap();
            assert!((prepared.budget().class_bound - 1.0).abs() < 1e-9);
            let r = release_projected(&prepared, &table(&classes, &prepared), &mut rng).unwrap();
            *counts.entry(i64::from(r.theta)).or_insert(0u32) += 1;
        }
        counts
    };
    let loss = empirical_loss(&taus(5), &taus(6));
    assert!(loss < 1.0 + 0.1, "privacy loss {loss} exceeds ε_c = 1");
    assert!(loss > 0.5, "the test must see the loss it bounds, got {loss}");
    let half = dpincon_mechanisms::DiscreteLaplace::new(1, 2.0).unwrap();
    let mut sample = |v: i64| {
        let mut counts = HashMap::new();
        for _ in 0..samples {
            *counts.entry(half.release(v, &mut rng)).or_insert(0u32) += 1;
        }
        counts
    };
    let loss = empirical_loss(&sample(5), &sample(6));
    assert!(loss > 1.3, "half the noise should show a loss above ε_c, got {loss}");
}
