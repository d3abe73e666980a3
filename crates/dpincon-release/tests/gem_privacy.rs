//! `gem` on two neighbouring graphs (SPEC §4.1): the selector draws θ with
//! exactly P(i) ∝ exp(−ε1·s_i/2) at sensitivity 1, so the privacy loss of
//! the choice stays within ε1; a half-sensitivity mutant is told apart.

use std::collections::HashMap;

use dpincon_graph::{ConflictGraph, Edge};
use dpincon_measures::{DegreeBound, EdgeAddition, walk};
use dpincon_mechanisms::Score;
use dpincon_release::{NoiseRng, ProjectedMeasure, Selector, SelectorExt, gem};

const THETAS: [u32; 4] = [1, 2, 3, 6];
const EPSILON: f64 = 2.0;
const SAMPLES: u32 = 60_000;

/// gem's fixed-point scores of I_MI over `THETAS` on `graph`.
fn scores(graph: &ConflictGraph) -> Vec<i64> {
    let bounds: Vec<DegreeBound> = THETAS.iter().map(|&t| DegreeBound::new(t).unwrap()).collect();
    let mut projection = EdgeAddition::new(graph.nodes(), &bounds);
    walk(graph.edges(), &mut [&mut projection]);
    let values: Vec<u64> = projection.counts().iter().map(|c| c.edges).collect();
    let deltas: Vec<u64> = THETAS.iter().map(|&t| ProjectedMeasure::Mi.sensitivity(t)).collect();
    gem::normalised_scores(&values, &deltas, 0.5)
}

/// The exponential mechanism's probabilities for qualities −s at `sensitivity`.
fn probabilities(scores: &[i64], sensitivity: f64) -> Vec<f64> {
    let weights: Vec<f64> =
        scores.iter().map(|&s| (-EPSILON * s as f64 / (2.0 * sensitivity)).exp()).collect();
    let total: f64 = weights.iter().sum();
    weights.iter().map(|w| w / total).collect()
}

fn frequencies(scores: &[i64], rng: &mut NoiseRng) -> Vec<f64> {
    let qualities: Vec<Score> = scores.iter().map(|&s| Score::new(-s, 0.0)).collect();
    let mut counts: HashMap<usize, u32> = HashMap::new();
    for _ in 0..SAMPLES {
        let i = Selector::Exponential.select(EPSILON, gem::SENSITIVITY, &qualities, rng).unwrap();
        *counts.entry(i).or_default() += 1;
    }
    (0..scores.len())
        .map(|i| f64::from(counts.get(&i).copied().unwrap_or(0)) / f64::from(SAMPLES))
        .collect()
}

/// Largest |observed − expected| in binomial standard deviations.
fn worst_deviation(observed: &[f64], expected: &[f64]) -> f64 {
    observed
        .iter()
        .zip(expected)
        .map(|(o, p)| (o - p).abs() / (p * (1.0 - p) / f64::from(SAMPLES)).sqrt().max(1e-9))
        .fold(0.0, f64::max)
}

#[test]
fn gem_choice_on_neighbours_matches_its_distribution_and_bounds_the_loss() {
    // G: a star on node 0 with leaves 1..=5; G' adds node 6 joined to every leaf.
    let star: Vec<Edge> = (1..=5).map(|v| Edge::new(0, v)).collect();
    let g = ConflictGraph::from_edges(7, star.clone());
    let mut more = star;
    more.extend((1..=5).map(|v| Edge::new(v, 6)));
    let h = ConflictGraph::from_edges(7, more);
    let (sg, sh) = (scores(&g), scores(&h));
    assert_ne!(sg, sh, "the neighbours must move the scores");
    let unit = f64::from(1u32 << gem::SCALE_BITS);
    for (a, b) in sg.iter().zip(&sh) {
        assert!(
            a.abs_diff(*b) <= gem::SENSITIVITY,
            "score moved by {}",
            a.abs_diff(*b) as f64 / unit
        );
    }

    let mut rng = NoiseRng::seeded(4242);
    let sensitivity = gem::SENSITIVITY as f64;
    let (fg, fh) = (frequencies(&sg, &mut rng), frequencies(&sh, &mut rng));
    let mut mutant_caught = 0.0f64;
    for (observed, scores) in [(&fg, &sg), (&fh, &sh)] {
        let exact = probabilities(scores, sensitivity);
        let deviation = worst_deviation(observed, &exact);
        assert!(deviation < 4.5, "selector off its distribution by {deviation:.1} sd");
        // The mutant (half the sensitivity, i.e. twice the ε).
        let mutant = probabilities(scores, sensitivity / 2.0);
        mutant_caught = mutant_caught.max(worst_deviation(observed, &mutant));
    }
    assert!(mutant_caught > 10.0, "the draws cannot tell the half-noise mutant apart");
    let loss = fg
        .iter()
        .zip(&fh)
        .filter(|(a, b)| **a > 0.02 && **b > 0.02)
        .map(|(a, b)| (a / b).ln().abs())
        .fold(0.0, f64::max);
    assert!(loss <= EPSILON * 1.05, "privacy loss {loss} above ε1 = {EPSILON}");
    assert!(loss > 0.1, "the pair must show some loss, got {loss}");
}
