//! `ub-direct`'s I_P over several X's keys and FDs (the fifteenth and
//! sixteenth rounds): where the leading count's sensitivity 1 + k_key +
//! k_fd·τ₀ is at most half of Δ(θ*), a look at M (what the count misses,
//! sensitivity k_fd·(τ₀ + 1)) decides, with a slack of min(4 noise scales,
//! ½·ñ), between max(f_P(G_τ₀), the count) at τ₀ and the class count at
//! θ*; over keys alone no look runs. The choice, the budget, the interval,
//! and the privacy loss of both new draws on neighbours that move them by
//! their full sensitivity (with a half-noise mutant caught) are checked
//! here.

mod common;

use std::collections::HashMap;

use common::{empirical_loss, half_noise_loss};
use dpincon_release::{
    Budget, ClassFacts, LeadingFacts, NoiseRng, ProjectedMeasure, ProjectedRelease, ProjectedSpec,
    prepare, release_projected,
};

/// Two X (k = 2): classes of one or two rows, `count` leading rows and M =
/// `miss`; the count's sensitivity 1 + 2·2 = 5, M's 2·3 = 6.
fn classes(count: u64, miss: u64) -> ClassFacts {
    ClassFacts {
        max_class: 2,
        sizes: vec![(1, 100), (2, 50)],
        others: vec![vec![(1, 60)]],
        excess_from: 2,
        leading: Some(LeadingFacts { count, miss, count_sensitivity: 5, miss_sensitivity: 6 }),
        ..ClassFacts::default()
    }
}

/// `rows` rows whose one equality set has groups of 121 (d̃ ≈ 120, so θ*
/// is far above τ₀ and the look runs).
fn release_on(
    classes: &ClassFacts,
    rows: u64,
    epsilon: f64,
    rng: &mut NoiseRng,
) -> ProjectedRelease {
    let spec = ProjectedSpec {
        max_rows: Some(rows),
        ..ProjectedSpec::new(ProjectedMeasure::P, Budget::new(epsilon).unwrap())
    };
    let facts = common::one_set_facts(rows, 121, Some(classes.clone()));
    let prepared = prepare(&spec, &facts, rng).unwrap();
    release_projected(&prepared, &common::class_table(classes, &prepared), rng).unwrap()
}

/// On 5,000 rows.
fn release(classes: &ClassFacts, epsilon: f64, rng: &mut NoiseRng) -> ProjectedRelease {
    release_on(classes, 5000, epsilon, rng)
}

#[test]
fn the_leading_count_is_released_at_tau_zero_where_m_is_small() {
    let lead = classes(320, 0);
    let (mut chosen, mut covered, mut errors) = (0, 0, Vec::new());
    for seed in 0..200 {
        let mut rng = NoiseRng::seeded(seed);
        let r = release(&lead, 1.0, &mut rng);
        let u = r.budget;
        let parts = u.max_rows + u.degree_bound + u.class_bound + u.selection + u.release;
        assert!((parts - 1.0).abs() < 1e-9, "the parts add up to ε: {u:?}");
        assert!((u.class_bound - 0.03).abs() < 1e-9, "the look at M: {u:?}");
        assert!(r.leading_miss.is_some());
        let step = &r.selection[0];
        assert_eq!((step.mechanism.as_str(), step.sensitivity), ("leading-count", 6));
        covered += usize::from(r.ci95[0] <= 320 && 320 <= r.ci95[1]);
        if r.theta == 2 {
            chosen += 1;
            assert_eq!(r.sensitivity, 5, "1 + k·τ₀");
            errors.push((r.value - 320).unsigned_abs());
            // The upper end is the count's plus M's bound, not the degrees'.
            let bounds = r.bounds.unwrap();
            assert!(bounds.leading.is_some_and(|l| l.from == 2));
        } else {
            assert_eq!(r.sensitivity, u64::from(r.theta) + 1);
            assert!(r.bounds.unwrap().leading.is_none());
        }
    }
    assert!(covered >= 185, "the interval held the count in {covered} of 200 runs");
    // M + DLap(6/0.03) at most (Δ(θ*) − 5)/ε2 ≈ 150 plus the slack
    // min(4·200, 2,500): in 99.6% of runs (without the slack, three in four).
    assert!(chosen >= 195, "τ₀ chosen in {chosen} of 200");
    // DLap(5/ε2), ε2 ≈ 0.8: mean |error| ≈ 6, against ≈ 150 at θ*.
    let mean = errors.iter().sum::<u64>() as f64 / errors.len() as f64;
    assert!(mean < 10.0, "mean error {mean}");
}

#[test]
fn a_large_m_keeps_theta_star_and_no_look_runs_where_it_saves_little() {
    for seed in 0..100 {
        let mut rng = NoiseRng::seeded(seed);
        let r = release(&classes(320, 100_000), 1.0, &mut rng);
        assert!(r.theta > 50, "θ* ≈ d̃: {}", r.theta);
        assert_eq!(r.selection[0].chosen, r.theta);
        assert_eq!(r.sensitivity, u64::from(r.theta) + 1);
    }
    // A count of sensitivity above half of Δ(θ*) draws nothing.
    let costly = ClassFacts {
        leading: Some(LeadingFacts { count_sensitivity: 1000, ..classes(320, 0).leading.unwrap() }),
        ..classes(320, 0)
    };
    let r = release(&costly, 1.0, &mut NoiseRng::seeded(1));
    assert_eq!((r.budget.class_bound, r.leading_miss), (0.0, None));
    assert_eq!(r.selection[0].mechanism, "class-count");
}

/// The slack lets an M below it lead, and stops at half the rows: M = 700
/// leads in about five runs in six on 5,000 rows (slack 800) and in about
/// one in four on 1,000 (slack 500); M = 3,000 never leads.
#[test]
fn the_slack_is_four_noise_scales_and_at_most_half_the_rows() {
    let chosen = |miss, rows| {
        let mut rng = NoiseRng::seeded(7);
        (0..200).filter(|_| release_on(&classes(320, miss), rows, 1.0, &mut rng).theta == 2).count()
    };
    let (wide, capped, far) = (chosen(700, 5000), chosen(700, 1000), chosen(3000, 5000));
    assert!((145..=190).contains(&wide), "M = 700 on 5,000 rows led in {wide} of 200");
    assert!((25..=75).contains(&capped), "M = 700 on 1,000 rows led in {capped} of 200");
    assert_eq!(far, 0, "M = 3,000 led");
}

/// Over keys alone M is 0 with sensitivity 0: no look, no ε, the count
/// (then I_P exactly) at 1 + k_key, and an interval around it.
#[test]
fn over_keys_alone_the_count_leads_with_no_look() {
    let keys = ClassFacts {
        key: true,
        leading: Some(LeadingFacts {
            count: 320,
            miss: 0,
            count_sensitivity: 3,
            miss_sensitivity: 0,
        }),
        ..classes(320, 0)
    };
    let mut covered = 0;
    for seed in 0..200 {
        let r = release(&keys, 1.0, &mut NoiseRng::seeded(seed));
        let u = r.budget;
        assert_eq!((u.class_bound, r.leading_miss, r.theta, r.sensitivity), (0.0, None, 2, 3));
        let parts = u.max_rows + u.degree_bound + u.selection + u.release;
        assert!((parts - 1.0).abs() < 1e-9, "the parts add up to ε: {u:?}");
        let step = &r.selection[0];
        assert_eq!((step.mechanism.as_str(), step.epsilon, step.chosen), ("leading-count", 0.0, 2));
        covered += usize::from(r.ci95[0] <= 320 && 320 <= r.ci95[1]);
    }
    assert!(covered >= 188, "the interval held I_P in {covered} of 200 runs");
}

/// How often each outcome occurs over `samples` releases.
fn outcomes(
    classes: &ClassFacts,
    epsilon: f64,
    samples: u32,
    rng: &mut NoiseRng,
    outcome: impl Fn(&ProjectedRelease) -> i64,
) -> HashMap<i64, u32> {
    common::tally(samples, || outcome(&release(classes, epsilon, rng)))
}

/// The release on neighbours whose leading counts differ by its
/// sensitivity 5 (M = 0 on both): loss within ε; half the noise exceeds it.
/// (Samples enough that outcomes 5 apart from a centre are seen 2,000 times.)
#[test]
fn the_leading_count_privacy_loss_is_epsilon_and_half_noise_is_caught() {
    let samples = 150_000u32;
    let mut rng = NoiseRng::seeded(41);
    let eps2 = release(&classes(300, 0), 1.0, &mut rng).budget.release;
    let mut values = |count| outcomes(&classes(count, 0), 1.0, samples, &mut rng, |r| r.value);
    let loss = empirical_loss(&values(300), &values(305));
    assert!(loss < 1.0 + 0.1, "privacy loss {loss} exceeds ε = 1");
    assert!(loss > 0.5, "the test must see the loss it bounds, got {loss}");
    // DLap(5/(2·ε2)) between 300 and 305.
    let loss = half_noise_loss(2.0 * eps2 / 5.0, [300, 305], samples, &mut rng);
    assert!(loss > 1.3, "half the noise should show a loss above ε, got {loss}");
}

/// M's draw on neighbours whose M differs by its sensitivity 6: loss
/// within its ε; half the noise exceeds it.
#[test]
fn the_look_at_m_privacy_loss_is_its_epsilon_and_half_noise_is_caught() {
    // ε = 100/3: the look's 0.03 ε is 1.
    let samples = 150_000u32;
    let mut rng = NoiseRng::seeded(43);
    let mut draws = |miss| {
        outcomes(&classes(320, miss), 100.0 / 3.0, samples, &mut rng, |r| {
            assert!((r.budget.class_bound - 1.0).abs() < 1e-9);
            r.leading_miss.expect("the look runs")
        })
    };
    let loss = empirical_loss(&draws(50), &draws(56));
    assert!(loss < 1.0 + 0.1, "privacy loss {loss} exceeds the look's ε = 1");
    assert!(loss > 0.5, "the test must see the loss it bounds, got {loss}");
    let loss = half_noise_loss(2.0 / 6.0, [50, 56], samples, &mut rng);
    assert!(loss > 1.3, "half the noise should show a loss above ε, got {loss}");
}
