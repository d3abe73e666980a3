//! Helpers shared by the integration tests (each test crate uses a part,
//! hence the allowance).
#![allow(dead_code)]

use std::collections::HashMap;
use std::hash::Hash;

use dpincon_graph::{ConflictGraph, Edge};
use dpincon_measures::{
    DegreeBound, DegreeCounts, EdgeAddition, ExactCounts, ProjectedCounts, walk,
};
use dpincon_release::{
    ClassFacts, CoverFacts, NoiseRng, Prepared, ProjectedRelease, ProjectedSpec, ProjectionTable,
    ReleaseError, TableFacts, prepare, release_projected,
};

/// Facts whose one equality set has a group of `group` rows (d̃ ≈ group − 1),
/// with the classes of its keys and FDs when given.
pub fn one_set_facts(rows: u64, group: u64, classes: Option<ClassFacts>) -> TableFacts {
    TableFacts {
        rows,
        max_frequencies: vec![group],
        minimal_max_frequencies: vec![group],
        cross_max_frequencies: vec![],
        unbounded: false,
        covers: CoverFacts::default(),
        classes,
    }
}

/// Every graph on k ≤ 5 nodes (edges as a list), each with every graph
/// that adds a (k+1)-th node at any position of the stable order, joined to
/// any subset of the others: all node-neighbouring pairs up to six nodes.
pub fn node_additions() -> impl Iterator<Item = (u32, Vec<Edge>, Vec<Vec<Edge>>)> {
    (0..=5u32).flat_map(|k| {
        let slots: Vec<(u32, u32)> = (0..k).flat_map(|u| (u + 1..k).map(move |v| (u, v))).collect();
        (0u32..(1 << slots.len())).map(move |mask| {
            let edges: Vec<(u32, u32)> = slots
                .iter()
                .enumerate()
                .filter(|(i, _)| mask >> i & 1 == 1)
                .map(|(_, &e)| e)
                .collect();
            let base = edges.iter().map(|&(u, v)| Edge::new(u, v)).collect();
            let mut extended = Vec::new();
            for position in 0..=k {
                let shift = |x: u32| if x >= position { x + 1 } else { x };
                let moved: Vec<Edge> =
                    edges.iter().map(|&(u, v)| Edge::new(shift(u), shift(v))).collect();
                for neighbours in 0u32..(1 << k) {
                    let mut with = moved.clone();
                    with.extend(
                        (0..k)
                            .filter(|i| neighbours >> i & 1 == 1)
                            .map(|i| Edge::new(position, shift(i))),
                    );
                    extended.push(with);
                }
            }
            (k, base, extended)
        })
    })
}

/// Σ_k 2^(k(k-1)/2) graphs × (k+1) positions × 2^k neighbour sets.
pub const NODE_ADDITION_PAIRS: usize =
    1 + 2 * 2 + 2 * 3 * 4 + 8 * 4 * 8 + 64 * 5 * 16 + 1024 * 6 * 32;

/// Largest |ln(P[M(G)=k] / P[M(G')=k])| over outputs k both sample at
/// least 2,000 times.
pub fn empirical_loss<K: Hash + Eq>(a: &HashMap<K, u32>, b: &HashMap<K, u32>) -> f64 {
    a.iter()
        .filter_map(|(k, &ca)| {
            let cb = *b.get(k)?;
            (ca >= 2_000 && cb >= 2_000).then(|| (ca as f64 / cb as f64).ln().abs())
        })
        .fold(0.0, f64::max)
}

/// The table a class count reads, with f(G_θ) = 0 at every θ `prepared`
/// needs (so the release is the count's).
pub fn class_table(classes: &ClassFacts, prepared: &Prepared) -> ProjectionTable {
    let exact = ExactCounts { rows: 0, edges: 0, problematic: 0, max_degree: 0, drastic: 0 };
    let zero = |theta| ProjectedCounts { theta, edges: 0, problematic: 0 };
    let projected = prepared.thetas().into_iter().map(zero);
    ProjectionTable::new(exact, projected).with_classes(Some(classes.clone()))
}

/// How often each value of `draw` occurs over `samples` draws.
pub fn tally(samples: u32, mut draw: impl FnMut() -> i64) -> HashMap<i64, u32> {
    let mut counts = HashMap::new();
    for _ in 0..samples {
        *counts.entry(draw()).or_insert(0u32) += 1;
    }
    counts
}

/// The mutant every privacy test must catch: the privacy loss of DLap(1/`eps`)
/// (half the noise of sensitivity 2/`eps`, or of 1/(`eps`/2)) between two
/// values.
pub fn half_noise_loss(eps: f64, values: [i64; 2], samples: u32, rng: &mut NoiseRng) -> f64 {
    let half = dpincon_mechanisms::DiscreteLaplace::new(1, eps).unwrap();
    let mut sample = |v: i64| {
        let mut counts = HashMap::new();
        for _ in 0..samples {
            *counts.entry(half.release(v, rng)).or_insert(0u32) += 1;
        }
        counts
    };
    empirical_loss(&sample(values[0]), &sample(values[1]))
}

/// Groups of equal "zip" where one row in five has a different "city":
/// FD-like conflicts, max degree below the group size.
pub fn fd_graph(groups: u32, size: u32) -> ConflictGraph {
    let mut edges = Vec::new();
    for g in 0..groups {
        let rows: Vec<u32> = (0..size).map(|i| g * size + i).collect();
        for (i, &a) in rows.iter().enumerate() {
            for &b in &rows[i + 1..] {
                if (a % 5 == 0) != (b % 5 == 0) {
                    edges.push(Edge::new(a, b));
                }
            }
        }
    }
    ConflictGraph::from_edges(groups * size, edges)
}

/// The pass over `graph` at `thetas`: its degrees and f(G_θ) for each.
pub fn projection_table(graph: &ConflictGraph, thetas: &[DegreeBound]) -> ProjectionTable {
    let mut degrees = DegreeCounts::new(graph.nodes());
    let mut projection = EdgeAddition::new(graph.nodes(), thetas);
    walk(graph.edges(), &mut [&mut degrees, &mut projection]);
    ProjectionTable::new(degrees.counts(), projection.counts())
}

/// Prepares `spec`, runs the pass over `graph` at every θ it needs, and
/// releases.
pub fn run(
    graph: &ConflictGraph,
    spec: &ProjectedSpec,
    facts: &TableFacts,
    rng: &mut NoiseRng,
) -> Result<(Prepared, ProjectedRelease), ReleaseError> {
    let prepared = prepare(spec, facts, rng)?;
    let table = projection_table(graph, &prepared.thetas());
    let release = release_projected(&prepared, &table, rng)?;
    Ok((prepared, release))
}

/// Facts of `graph` with one equality set whose largest group is `group`.
pub fn graph_facts(graph: &ConflictGraph, group: u64, unbounded: bool) -> TableFacts {
    TableFacts { unbounded, ..one_set_facts(u64::from(graph.nodes()), group, None) }
}

/// Facts of a table whose constraints have no equality predicate at all.
pub fn no_equality_facts(graph: &ConflictGraph) -> TableFacts {
    TableFacts {
        max_frequencies: vec![],
        minimal_max_frequencies: vec![],
        cross_max_frequencies: vec![],
        ..graph_facts(graph, 0, true)
    }
}
