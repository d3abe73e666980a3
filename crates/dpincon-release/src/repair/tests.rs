//! Unit tests of the I_R release: the estimate, the exact cover, the
//! upper cover's hedge and the method options.

use super::*;

fn fixed(statistic: &'static str, value: i64, halfwidth: u64) -> RepairPart {
    let statistic = statistic.into();
    RepairPart { statistic, value, epsilon: 1.0, sensitivity: 2, noise_scale: 2.0, halfwidth }
}

#[test]
fn estimate_is_the_scaled_lp_within_both_bounds() {
    // L = 100 (l = 200), c = 190: I_R ∈ [100, 190]; point 110.
    let lp = fixed("twice-lower-bound", 200, 10);
    let greedy = fixed("greedy-cover", 190, 8);
    let (value, ci) = estimate(Some(&lp), Some(&greedy));
    assert_eq!(value, 110);
    assert_eq!(ci, [95, 198], "[(200 − 10)/2, min(210, 198)]");
    // c̃ = 104 narrows the interval to c̃ + h, not the point (c̃ is noisy).
    let (value, ci) = estimate(Some(&lp), Some(&fixed("greedy-cover", 104, 8)));
    assert_eq!((value, ci), (110, [95, 112]));
    // A c̃ so low that the interval ends below κ·L̃ pulls the point in.
    let (value, ci) = estimate(Some(&lp), Some(&fixed("greedy-cover", 96, 8)));
    assert_eq!((value, ci), (104, [95, 104]));
    // LP alone: [⌈(l − h)/2⌉, l + h]; odd values round up on the low end.
    assert_eq!(estimate(Some(&fixed("twice-lower-bound", 21, 4)), None), (12, [9, 25]));
    // Greedy alone: the point is c̃ (the paper's release), I_R ≥ c/2.
    assert_eq!(estimate(None, Some(&greedy)), (190, [91, 198]));
    // Negative noise never gives a negative estimate or interval.
    assert_eq!(estimate(Some(&fixed("twice-lower-bound", -7, 3)), None), (0, [0, 0]));
    // Parts whose noise disagrees (examples/customers.csv, ε = 1, seed
    // 3: 2·LP̃ = 6 ± 10, c̃ = −34 ± 29): the point stays in the interval.
    let (value, ci) =
        estimate(Some(&fixed("twice-lower-bound", 6, 10)), Some(&fixed("greedy-cover", -34, 29)));
    assert!(ci[0] <= value && value <= ci[1], "{value} outside {ci:?}");
}

/// Over many noisy pairs, the point is always inside the interval.
#[test]
fn the_point_is_inside_the_interval_whatever_the_noise() {
    for l in (-60..60).step_by(7) {
        for c in (-60..60).step_by(5) {
            for (hl, hc) in [(0, 0), (10, 29), (3, 1)] {
                let (value, [lo, hi]) = estimate(
                    Some(&fixed("twice-lower-bound", l, hl)),
                    Some(&fixed("greedy-cover", c, hc)),
                );
                assert!(lo <= value && value <= hi, "l {l} c {c}: {value} ∉ [{lo}, {hi}]");
            }
        }
    }
}

#[test]
fn an_exact_key_cover_is_released_alone_with_the_whole_budget() {
    let eps = Budget::new(1.0).unwrap();
    let values = RepairValues { greedy_cover: 80, twice_lower: None, exact: Some(40), upper: None };
    let mut errors = Vec::new();
    for seed in 0..400 {
        let mut rng = NoiseRng::seeded(seed);
        for method in [RepairMethod::Lp, RepairMethod::Combined] {
            let r = release_repair(method, eps, values, &mut rng).unwrap();
            assert_eq!(r.parts.len(), 1);
            let p = &r.parts[0];
            assert_eq!((p.statistic.as_str(), p.sensitivity), ("exact-cover", 1));
            assert_eq!((p.epsilon, r.sensitivity, r.method), (1.0, 1, method));
            assert!(r.ci95[0] <= r.value && r.value <= r.ci95[1]);
            errors.push((r.value - 40).abs());
        }
    }
    // No 1.1 factor: the point is the count plus DLap(1/ε), whose mean
    // absolute value is 2e/(e² − 1) ≈ 0.85 at ε = 1.
    let mean = errors.iter().sum::<i64>() as f64 / errors.len() as f64;
    assert!((0.7..1.0).contains(&mean), "mean |error| {mean}");
    // The paper's greedy method ignores it.
    let g = release_repair(RepairMethod::Greedy, eps, values, &mut NoiseRng::seeded(1)).unwrap();
    assert_eq!(g.parts[0].statistic, "greedy-cover");
}

/// Keys and FDs: with U = I_R = L the point is L̃ plus half of what of
/// Ũ's noise above L̃ exceeds half its scale (about a row here, not the
/// 1.1 factor's 4; without [`ROOM_SHRINK`] the mean shift read 2.5);
/// with U far above L it is hedged by the full 0.1·L̃. The interval
/// holds [L, min(2·L, U)], where I_R lies.
#[test]
fn keys_and_fds_hedge_only_what_the_cover_sum_leaves_room_for() {
    let eps = Budget::new(1.0).unwrap();
    // (U, k, the mean of 2·point − 2·L: its range)
    for (u, sets, range) in [(40u64, 1u64, 0.0..2.2), (100, 2, 6.0..10.0)] {
        let upper = Some(UpperCover { sum: u, sets, union: None, exact: false });
        let values = RepairValues { greedy_cover: 90, twice_lower: Some(80), exact: None, upper };
        let top = 80.min(u as i64);
        let (mut shifts, mut held) = (Vec::new(), 0);
        for seed in 0..400 {
            let mut rng = NoiseRng::seeded(seed);
            let r = release_repair(RepairMethod::Combined, eps, values, &mut rng).unwrap();
            let stats: Vec<&str> = r.parts.iter().map(|p| p.statistic.as_str()).collect();
            assert_eq!(stats, ["twice-lower-bound", "cover-sum"]);
            assert_eq!(r.parts[1].sensitivity, sets);
            assert!((r.parts[1].epsilon - UPPER_SHARE).abs() < 1e-12);
            assert!(r.ci95[0] <= r.value && r.value <= r.ci95[1]);
            held += usize::from(r.ci95[0] <= 40 && top <= r.ci95[1]);
            shifts.push(2 * r.value - 80);
        }
        // l̃'s noise, DLap(2/0.8ε), averages out; what is left is the
        // hedge, capped by the room Ũ − L̃ shows.
        let mean = shifts.iter().sum::<i64>() as f64 / shifts.len() as f64;
        assert!(range.contains(&mean), "U = {u}: mean 2·(point − L) {mean}");
        assert!(held >= 380, "U = {u}: [40, {top}] held {held} of 400 times");
    }
}

#[test]
fn methods_parse_by_name_and_default_to_combined() {
    for m in RepairMethod::ALL {
        assert_eq!(m.name().parse::<RepairMethod>().unwrap(), m);
    }
    assert_eq!(RepairMethod::default(), RepairMethod::Combined);
    assert!("exact".parse::<RepairMethod>().unwrap_err().to_string().contains("combined"));
    assert!(!RepairMethod::Greedy.needs_lp() && RepairMethod::Combined.needs_lp());
}

#[test]
fn combined_splits_epsilon_and_needs_the_lp() {
    let eps = Budget::new(2.0).unwrap();
    let values = RepairValues { greedy_cover: 50, twice_lower: Some(60), exact: None, upper: None };
    let r = release_repair(RepairMethod::Combined, eps, values, &mut NoiseRng::seeded(1)).unwrap();
    let spent: f64 = r.parts.iter().map(|p| p.epsilon).sum();
    assert!(spent <= 2.0 && spent > 2.0 - 1e-12);
    assert_eq!(r.parts.len(), 2);
    assert!((r.parts[0].epsilon - 1.5).abs() < 1e-12, "LP gets {LP_SHARE} of ε");
    assert!(r.ci95[0] <= r.ci95[1]);
    let missing = RepairValues { twice_lower: None, ..values };
    assert!(matches!(
        release_repair(RepairMethod::Lp, eps, missing, &mut NoiseRng::seeded(1)),
        Err(ReleaseError::Invalid(_))
    ));
    let g = release_repair(RepairMethod::Greedy, eps, missing, &mut NoiseRng::seeded(1)).unwrap();
    assert_eq!((g.parts.len(), g.parts[0].statistic.as_str()), (1, "greedy-cover"));
}
