//! I_R's releases: over every graph with up to 5 nodes and every way to add
//! a sixth node (at any position of the stable order, joined to any subset),
//! the LP relaxation moves by at most 1 and never down (monotone), the
//! greedy cover by at most 2 (SPEC §5), and the minimum cover by at most 1.
//! Then an empirical privacy-loss check of the `combined` release on the
//! neighbours that move both statistics the most; a half-noise mutant fails.

mod common;

use std::collections::HashMap;

use common::{NODE_ADDITION_PAIRS, empirical_loss, node_additions};
use dpincon_graph::{ConflictGraph, Edge};
use dpincon_measures::{
    Adjacency, GreedyCover, MinimumCover, fractional_cover, minimum_cover, walk,
};
use dpincon_release::{
    Budget, COVER_SENSITIVITY, NoiseRng, RepairMethod, RepairValues, UpperCover, release_repair,
    repair::{TWICE_LP_SENSITIVITY, UPPER_SHARE},
};

/// How often each outcome of `draw` comes up in `samples` draws.
fn draws<K: Eq + std::hash::Hash>(samples: u32, mut draw: impl FnMut() -> K) -> HashMap<K, u32> {
    let mut counts = HashMap::new();
    for _ in 0..samples {
        *counts.entry(draw()).or_insert(0) += 1;
    }
    counts
}

/// (c, 2·LP, I_R) of a graph.
fn profile(nodes: u32, edges: &[Edge]) -> (u64, u64, u64) {
    let graph = ConflictGraph::from_edges(nodes, edges.iter().copied());
    let mut greedy = GreedyCover::new(nodes);
    walk(graph.edges(), &mut [&mut greedy]);
    let adjacency = Adjacency::from_graph(&graph, 1);
    let lp = fractional_cover(&adjacency);
    let MinimumCover::Exact(opt) = minimum_cover(&adjacency, &lp, u64::MAX) else {
        unreachable!("no work limit")
    };
    (greedy.size().cover, lp.twice_value(), opt)
}

#[test]
fn lp_greedy_and_minimum_cover_sensitivities_up_to_six_nodes() {
    let (mut worst_greedy, mut worst_lp, mut worst_opt) = (0u64, 0u64, 0u64);
    let mut pairs = 0;
    for (k, base, extended) in node_additions() {
        let (c, lp, opt) = profile(k, &base);
        for with in extended {
            let (c2, lp2, opt2) = profile(k + 1, &with);
            pairs += 1;
            // LP is monotone: adding a node never lowers it.
            assert!(lp2 >= lp, "2·LP fell from {lp} to {lp2}: {with:?}");
            assert!(opt2 >= opt);
            worst_greedy = worst_greedy.max(c.abs_diff(c2));
            worst_lp = worst_lp.max(lp.abs_diff(lp2));
            worst_opt = worst_opt.max(opt.abs_diff(opt2));
        }
    }
    assert_eq!(pairs, NODE_ADDITION_PAIRS);
    // The bounds the releases use hold, and are reached.
    assert_eq!(worst_greedy, COVER_SENSITIVITY);
    assert_eq!(worst_lp, TWICE_LP_SENSITIVITY, "LP moves by at most 1 (2·LP by 2)");
    assert_eq!(worst_opt, 1);
}

/// The combined release outputs (2·LP̃, c̃) and what is computed from them.
/// G = one isolated node, G' adds a node joined to it: 2·LP goes 0 → 2 and
/// c goes 0 → 2, the largest joint move. Each output is bucketed by the
/// sign pattern of (part − 1), which keeps the full loss: on the bucket
/// (≥ 2, ≥ 2) every point's likelihood ratio is e^{ε_LP + ε_c} = e^ε.
#[test]
fn combined_release_privacy_loss_is_epsilon_and_half_noise_is_caught() {
    let g = profile(1, &[]);
    let h = profile(2, &[Edge::new(0, 1)]);
    assert_eq!((g.0, g.1, h.0, h.1), (0, 0, 2, 2));
    let eps = Budget::new(1.0).unwrap();
    let samples = 200_000u32;
    let bucket = |x: i64| x.clamp(0, 2);
    let mut rng = NoiseRng::seeded(77);
    let histogram = |(c, twice_lp, _): (u64, u64, u64), rng: &mut NoiseRng| {
        let values =
            RepairValues { greedy_cover: c, twice_lower: Some(twice_lp), exact: None, upper: None };
        draws(samples, || {
            let r = release_repair(RepairMethod::Combined, eps, values, rng).unwrap();
            let spent: f64 = r.parts.iter().map(|p| p.epsilon).sum();
            assert!(spent <= 1.0);
            (bucket(r.parts[0].value), bucket(r.parts[1].value))
        })
    };
    let (on_g, on_h) = (histogram(g, &mut rng), histogram(h, &mut rng));
    let loss = empirical_loss(&on_g, &on_h);
    assert!(loss < 1.0 + 0.1, "privacy loss {loss} exceeds ε = 1");
    assert!(loss > 0.9, "the test must see the loss it bounds, got {loss}");

    // The mutant: each part with half its noise (sensitivity 1 instead of 2).
    let lp_noise = dpincon_mechanisms::DiscreteLaplace::new(1, 0.75).unwrap();
    let c_noise = dpincon_mechanisms::DiscreteLaplace::new(1, 0.25).unwrap();
    let mut sample = |value| {
        draws(samples, || {
            (bucket(lp_noise.release(value, &mut rng)), bucket(c_noise.release(value, &mut rng)))
        })
    };
    let loss = empirical_loss(&sample(0), &sample(2));
    assert!(loss > 1.6, "half the noise should show a loss near 2ε, got {loss}");
}

/// The exact cover's release (one X with a key: I_R = Σ (group − 1), node
/// sensitivity 1, the whole ε on it). G has a key group of one row, G'
/// adds a second row to it: the cover goes 0 → 1. Each output is bucketed
/// at 0 and 1, which keeps the full loss: e^ε on (≥ 1). Half the noise
/// (scale 1/(2ε)) shows about 2ε.
#[test]
fn exact_cover_release_privacy_loss_is_epsilon_and_half_noise_is_caught() {
    let eps = Budget::new(1.0).unwrap();
    let samples = 200_000u32;
    let bucket = |x: i64| x.clamp(0, 1);
    let mut rng = NoiseRng::seeded(78);
    let histogram = |cover: u64, rng: &mut NoiseRng| {
        let values = RepairValues {
            greedy_cover: 2 * cover,
            twice_lower: None,
            exact: Some(cover),
            upper: None,
        };
        draws(samples, || {
            let r = release_repair(RepairMethod::Combined, eps, values, rng).unwrap();
            assert_eq!(r.parts.len(), 1, "one part, no LP and no greedy cover");
            assert_eq!(r.parts[0].epsilon, 1.0, "the whole ε");
            bucket(r.parts[0].value)
        })
    };
    let (on_g, on_h) = (histogram(0, &mut rng), histogram(1, &mut rng));
    let loss = empirical_loss(&on_g, &on_h);
    assert!(loss < 1.0 + 0.1, "privacy loss {loss} exceeds ε = 1");
    assert!(loss > 0.9, "the test must see the loss it bounds, got {loss}");

    let half = dpincon_mechanisms::DiscreteLaplace::new(1, 2.0).unwrap();
    let mut sample = |value| draws(samples, || bucket(half.release(value, &mut rng)));
    let loss = empirical_loss(&sample(0), &sample(1));
    assert!(loss > 1.6, "half the noise should show a loss near 2ε, got {loss}");
}

/// The keys-and-FDs release: 2·L with 1 − [`UPPER_SHARE`] of ε and U =
/// Σ_X (cover_X + N_X) with the rest, at sensitivity k (here 2 X). G has
/// one row; G' adds one that conflicts with it under both X: 2·L goes
/// 0 → 2 and U 0 → 2, both parts' largest move at once. Bucketing each
/// part at its move keeps the full loss, ε; half the noise on 2·L shows
/// about 2·0.8ε + 0.2ε.
#[test]
fn keys_and_fds_release_privacy_loss_is_epsilon_and_half_noise_is_caught() {
    let eps = Budget::new(1.0).unwrap();
    let samples = 200_000u32;
    let mut rng = NoiseRng::seeded(79);
    let mut histogram = |twice_lower: u64, u: u64| {
        let upper = Some(UpperCover { sum: u, sets: 2, union: None, exact: false });
        let values = RepairValues {
            greedy_cover: twice_lower,
            twice_lower: Some(twice_lower),
            exact: None,
            upper,
        };
        draws(samples, || {
            let r = release_repair(RepairMethod::Combined, eps, values, &mut rng).unwrap();
            let stats: Vec<&str> = r.parts.iter().map(|p| p.statistic.as_str()).collect();
            assert_eq!(stats, ["twice-lower-bound", "cover-sum"]);
            let spent: f64 = r.parts.iter().map(|p| p.epsilon).sum();
            assert!(spent <= 1.0 && spent > 1.0 - 1e-12);
            assert!(r.ci95[0] <= r.value && r.value <= r.ci95[1]);
            (r.parts[0].value.clamp(0, 2), r.parts[1].value.clamp(0, 2))
        })
    };
    let (on_g, on_h) = (histogram(0, 0), histogram(2, 2));
    let loss = empirical_loss(&on_g, &on_h);
    assert!(loss < 1.0 + 0.1, "privacy loss {loss} exceeds ε = 1");
    assert!(loss > 0.9, "the test must see the loss it bounds, got {loss}");

    // The mutant: 2·L with half its noise (sensitivity 1 instead of 2).
    let half = dpincon_mechanisms::DiscreteLaplace::new(1, 1.0 - UPPER_SHARE).unwrap();
    let sum = dpincon_mechanisms::DiscreteLaplace::new(2, UPPER_SHARE).unwrap();
    let mut sample = |v: i64| {
        draws(samples, || {
            (half.release(v, &mut rng).clamp(0, 2), sum.release(v, &mut rng).clamp(0, 2))
        })
    };
    let loss = empirical_loss(&sample(0), &sample(2));
    assert!(loss > 1.5, "half the noise should show a loss near 1.8ε, got {loss}");
}
