//! Edge addition π_θ row by row, checking only the edges θ can drop.
//!
//! Under π_θ (SPEC §4) an edge is dropped only when an endpoint already
//! has θ kept edges, and a node whose degree in G is below θ (*light*)
//! never gets there: it never blocks an edge. So only edges at a *heavy*
//! node (degree ≥ θ) need a check, and a light row with no heavy neighbour
//! is kept whole.
//!
//! A heavy row is read in Λ order only until its node is full: the rest
//! of the row is dropped, and which of those dropped edges leave a light
//! neighbour with no kept edge at all (what I_P needs) follows without
//! reading them: a light node keeps an edge iff it has a light neighbour
//! (an edge no one can drop: [`NeighbourDegrees`] knows each node's
//! lightest neighbour), or a heavy row took it before filling, or its own
//! row kept one. One θ costs O(n) plus the heavy rows' edges up to where
//! they fill plus the light rows' edges at heavy nodes, instead of O(m)
//! edge visits; nothing beyond the degrees when θ exceeds the maximum
//! degree, the usual case for the default `ub-direct`, whose θ sits above
//! a noisy degree bound.
//!
//! θs go [`LANES`] at a time through one walk: a node's states for all of
//! them sit side by side (1, 2 or 4 bytes each, as the batch's largest θ
//! needs), so the rows are read once and an edge that matters to several
//! θs costs one cache line. Fetching those states is what bounds the walk
//! (measured on the 10^6-row Tax table, 330 M edges: 109 θs took 140 s one
//! at a time with a count per node, 13 s in batches, on 2 cores).
//!
//! The counts equal [`EdgeAddition`](super::EdgeAddition)'s, the edge-by-edge
//! definition (`tests` checks both on random, skewed and spilled graphs).

use std::ops::ControlFlow;

use dpincon_graph::{ConflictGraph, Row};

use super::{DegreeBound, ProjectedCounts};

/// The degrees around each node that let [`project_rows`] skip rows: one
/// more walk over the rows after the degrees, 8 bytes per node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeighbourDegrees {
    /// The smallest degree among a node's neighbours (`u32::MAX` if none):
    /// a light node with a light neighbour keeps that edge under any θ.
    lightest: Vec<u32>,
    /// The largest degree among a row's neighbours (0 for an empty row):
    /// a light row whose neighbours are all light is kept whole.
    heaviest_above: Vec<u32>,
}

impl NeighbourDegrees {
    /// Nothing seen yet, for a graph on `nodes` nodes.
    pub fn new(nodes: u32) -> Self {
        NeighbourDegrees {
            lightest: vec![u32::MAX; nodes as usize],
            heaviest_above: vec![0; nodes as usize],
        }
    }

    /// Sees the row `u`, `upper` its neighbours above it, given every
    /// node's degree.
    pub fn visit_row(&mut self, u: u32, upper: Row<'_>, degrees: &[u32]) {
        let du = degrees[u as usize];
        let (mut lightest, mut heaviest) = (self.lightest[u as usize], 0);
        let _ = upper.chunks(|chunk| {
            for &v in chunk {
                let dv = degrees[v as usize];
                lightest = lightest.min(dv);
                heaviest = heaviest.max(dv);
                let other = &mut self.lightest[v as usize];
                *other = (*other).min(du);
            }
            ControlFlow::<()>::Continue(())
        });
        self.lightest[u as usize] = lightest;
        self.heaviest_above[u as usize] = heaviest;
    }

    /// Adds what another part of the same graph's rows showed.
    pub fn merge(&mut self, other: &NeighbourDegrees) {
        for (a, &b) in self.lightest.iter_mut().zip(&other.lightest) {
            *a = (*a).min(b);
        }
        for (a, &b) in self.heaviest_above.iter_mut().zip(&other.heaviest_above) {
            *a = (*a).max(b);
        }
    }
}

/// θs projected side by side in one walk over the rows: a node's state
/// for all of them fills one 64-byte cache line, so an edge that matters to
/// several θs costs one memory access, not one per θ.
pub const LANES: usize = 16;

/// A node's state for one θ, as narrow as the batch's largest θ allows:
/// the walk is bound by fetching states, so bytes where θ < 256 keep them
/// in cache.
trait Count: Copy + Default {
    fn get(self) -> u32;
    /// `x` is at most a θ of the batch, so it fits.
    fn set(&mut self, x: u32);
}

macro_rules! count {
    ($($t:ty),*) => {$(
        impl Count for $t {
            fn get(self) -> u32 {
                u32::from(self)
            }
            fn set(&mut self, x: u32) {
                *self = x as $t;
            }
        }
    )*};
}
count!(u8, u16, u32);

/// Per-node working memory of [`project_rows`], reused across batches:
/// 1, 2 or 4 bytes per node and lane, and 1 byte per node.
#[derive(Debug, Default)]
pub struct ProjectionScratch {
    /// `state[v][j]` for θ_j: v heavy, its kept degree; v light, 1 once it
    /// keeps an edge at a heavy node. One width at a time is in use.
    bytes: Vec<[u8; LANES]>,
    shorts: Vec<[u16; LANES]>,
    words: Vec<[u32; LANES]>,
    /// How many of the batch's θs a node's degree reaches: the node is
    /// heavy for the first `class[v]` lanes (θs ascend). Checked for every
    /// edge, it is small enough to stay in cache where `state` is not.
    class: Vec<u8>,
}

impl ProjectionScratch {
    /// Scratch for graphs of up to `nodes` nodes.
    pub fn new(nodes: u32) -> Self {
        ProjectionScratch { class: Vec::with_capacity(nodes as usize), ..Self::default() }
    }
}

/// f(G_θ) of the edge-addition projection for each θ of `thetas` (any
/// order; [`LANES`] at a time), from the graph's rows, its node degrees
/// (`degrees[v]` = deg_G(v), as [`crate::DegreeCounts`] counts them) and
/// the [`NeighbourDegrees`] read off both.
pub fn project_rows(
    graph: &ConflictGraph,
    degrees: &[u32],
    neighbours: &NeighbourDegrees,
    thetas: &[DegreeBound],
    scratch: &mut ProjectionScratch,
) -> Vec<ProjectedCounts> {
    debug_assert_eq!(degrees.len(), graph.nodes() as usize);
    debug_assert_eq!(neighbours.lightest.len(), degrees.len());
    let mut order: Vec<usize> = (0..thetas.len()).collect();
    order.sort_by_key(|&i| thetas[i]);
    let mut out = vec![None; thetas.len()];
    for batch in order.chunks(LANES) {
        let bounds: Vec<DegreeBound> = batch.iter().map(|&i| thetas[i]).collect();
        for (&i, counts) in
            batch.iter().zip(project_batch(graph, degrees, neighbours, &bounds, scratch))
        {
            out[i] = Some(counts);
        }
    }
    out.into_iter().map(|c| c.expect("every θ is in a batch")).collect()
}

/// [`project_rows`] for up to [`LANES`] θs, ascending.
fn project_batch(
    graph: &ConflictGraph,
    degrees: &[u32],
    neighbours: &NeighbourDegrees,
    bounds: &[DegreeBound],
    scratch: &mut ProjectionScratch,
) -> Vec<ProjectedCounts> {
    let top = bounds.last().map_or(0, |b| b.get());
    let ProjectionScratch { bytes, shorts, words, class } = scratch;
    // Only the width in use keeps its memory.
    if top <= u32::from(u8::MAX) {
        (*shorts, *words) = (Vec::new(), Vec::new());
        project_lanes(graph, degrees, neighbours, bounds, bytes, class)
    } else if top <= u32::from(u16::MAX) {
        (*bytes, *words) = (Vec::new(), Vec::new());
        project_lanes(graph, degrees, neighbours, bounds, shorts, class)
    } else {
        (*bytes, *shorts) = (Vec::new(), Vec::new());
        project_lanes(graph, degrees, neighbours, bounds, words, class)
    }
}

/// [`project_batch`] with states of type `C`.
fn project_lanes<C: Count>(
    graph: &ConflictGraph,
    degrees: &[u32],
    neighbours: &NeighbourDegrees,
    bounds: &[DegreeBound],
    state: &mut Vec<[C; LANES]>,
    class: &mut Vec<u8>,
) -> Vec<ProjectedCounts> {
    let k = bounds.len();
    debug_assert!(k <= LANES && bounds.windows(2).all(|w| w[0] <= w[1]));
    // Unused lanes: a bound no degree reaches (every node light, no work).
    let mut t = [u32::MAX; LANES];
    for (slot, b) in t.iter_mut().zip(bounds) {
        *slot = b.get();
    }
    let class_of = |d: u32| t[..k].iter().filter(|&&tj| tj <= d).count();
    let max_degree = degrees.iter().copied().max().unwrap_or(0);
    let mut kept = [0u64; LANES];
    let walked = class_of(max_degree) > 0;
    if walked {
        state.clear();
        state.resize(degrees.len(), [C::default(); LANES]);
        class.clear();
        class.extend(degrees.iter().map(|&d| class_of(d) as u8));
        graph.for_each_row(0..graph.shard_count(), |u, upper| {
            if upper.is_empty() {
                return;
            }
            // Lanes 0..heavy: u heavy (it fills in Λ order). Lanes
            // heavy..checked: u light with a heavy neighbour in its row
            // (u never fills, so each heavy neighbour decides alone).
            // Lanes checked..: the row is kept whole.
            let heavy = usize::from(class[u as usize]);
            let checked = class_of(neighbours.heaviest_above[u as usize]).max(heavy);
            let len = upper.len();
            for kj in &mut kept[checked..k] {
                *kj += len;
            }
            let before = state[u as usize];
            let mut filling =
                (0..heavy).filter(|&j| before[j].get() < t[j]).fold(0u32, |m, j| m | 1 << j);
            if filling == 0 && checked == heavy {
                return;
            }
            let mut filled = before.map(C::get);
            let mut dropped = [0u32; LANES];
            let _ = upper.chunks(|chunk| {
                for &v in chunk {
                    // v is heavy for lanes 0..reach.
                    let reach = usize::from(class[v as usize]);
                    let light_lanes = heavy..checked.min(reach);
                    if filling == 0 && light_lanes.is_empty() {
                        continue;
                    }
                    let sv = &mut state[v as usize];
                    for j in light_lanes {
                        let c = sv[j].get();
                        if c < t[j] {
                            sv[j].set(c + 1);
                        } else {
                            dropped[j] += 1;
                        }
                    }
                    let mut lanes = filling;
                    while lanes != 0 {
                        let j = lanes.trailing_zeros() as usize;
                        lanes &= lanes - 1;
                        let c = sv[j].get();
                        if j >= reach {
                            sv[j].set(1);
                        } else if c < t[j] {
                            sv[j].set(c + 1);
                        } else {
                            continue;
                        }
                        filled[j] += 1;
                        if filled[j] == t[j] {
                            filling &= !(1 << j);
                        }
                    }
                    if filling == 0 && checked == heavy {
                        return ControlFlow::Break(());
                    }
                }
                ControlFlow::Continue(())
            });
            let su = &mut state[u as usize];
            for j in 0..heavy {
                kept[j] += u64::from(filled[j] - before[j].get());
                su[j].set(filled[j]);
            }
            for j in heavy..checked {
                if len > u64::from(dropped[j]) {
                    kept[j] += len - u64::from(dropped[j]);
                    su[j].set(1);
                }
            }
        });
    } else {
        // Every θ above every degree: π_θ(G) = G.
        let edges = degrees.iter().map(|&d| u64::from(d)).sum::<u64>() / 2;
        kept[..k].fill(edges);
    }
    let mut problematic = [0u64; LANES];
    if !walked {
        // π_θ(G) = G: every node with an edge keeps one. (`neighbours` may
        // not even be computed then: the pass skips it when no θ is
        // reached, so it must not be read here.)
        let nodes = degrees.iter().filter(|&&d| d > 0).count() as u64;
        return (0..k)
            .map(|j| ProjectedCounts { theta: bounds[j], edges: kept[j], problematic: nodes })
            .collect();
    }
    for (v, &d) in degrees.iter().enumerate() {
        if d == 0 {
            continue;
        }
        let reach = class_of(d);
        let sv = state[v];
        for j in 0..k {
            let has_edge = if j < reach {
                sv[j].get() > 0
            } else {
                neighbours.lightest[v] < t[j] || sv[j].get() > 0
            };
            problematic[j] += u64::from(has_edge);
        }
    }
    (0..k)
        .map(|j| ProjectedCounts { theta: bounds[j], edges: kept[j], problematic: problematic[j] })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DegreeCounts, EdgeAddition, walk};
    use dpincon_graph::{Edge, EdgeSink, GraphBuilder, SpillConfig};

    /// A graph with hubs, cliques and a random sprinkle: every kind of
    /// heavy/light row meets every other.
    fn skewed(nodes: u32, seed: u64) -> Vec<Edge> {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = move |m: u32| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % u64::from(m)) as u32
        };
        let mut edges = Vec::new();
        for _ in 0..3 {
            let hub = next(nodes);
            for _ in 0..nodes / 3 {
                let v = next(nodes);
                if v != hub {
                    edges.push(Edge::new(hub, v));
                }
            }
        }
        for _ in 0..4 {
            let members: Vec<u32> = (0..12).map(|_| next(nodes)).collect();
            for (i, &a) in members.iter().enumerate() {
                for &b in &members[i + 1..] {
                    if a != b {
                        edges.push(Edge::new(a, b));
                    }
                }
            }
        }
        for _ in 0..nodes * 2 {
            let (a, b) = (next(nodes), next(nodes));
            if a != b {
                edges.push(Edge::new(a, b));
            }
        }
        edges
    }

    /// Every θ from 1 to just above the maximum degree.
    fn check(graph: &ConflictGraph) {
        let mut degrees = DegreeCounts::new(graph.nodes());
        walk(graph.edges(), &mut [&mut degrees]);
        let max = degrees.counts().max_degree;
        let bounds: Vec<DegreeBound> = (1..=max + 2).filter_map(DegreeBound::new).collect();
        check_bounds(graph, &bounds);
    }

    fn check_bounds(graph: &ConflictGraph, bounds: &[DegreeBound]) {
        let mut degrees = DegreeCounts::new(graph.nodes());
        walk(graph.edges(), &mut [&mut degrees]);
        let mut reference = EdgeAddition::new(graph.nodes(), bounds);
        walk(graph.edges(), &mut [&mut reference]);
        let mut neighbours = NeighbourDegrees::new(graph.nodes());
        graph.for_each_row(0..graph.shard_count(), |u, upper| {
            neighbours.visit_row(u, upper, degrees.degrees())
        });
        let mut scratch = ProjectionScratch::new(graph.nodes());
        let want = reference.counts();
        let mut project = |bounds: &[DegreeBound]| {
            project_rows(graph, degrees.degrees(), &neighbours, bounds, &mut scratch)
        };
        // All at once (LANES side by side), in reverse, and each alone: a
        // θ's counts do not depend on its batch.
        assert_eq!(project(bounds), want);
        let reversed: Vec<DegreeBound> = bounds.iter().rev().copied().collect();
        assert_eq!(project(&reversed), want.iter().rev().copied().collect::<Vec<_>>());
        for want in want {
            assert_eq!(project(&[want.theta]), [want], "θ = {}", want.theta.get());
        }
    }

    #[test]
    fn rows_equal_the_edge_by_edge_definition() {
        for seed in 1..=12 {
            let nodes = 40 + 23 * seed as u32;
            check(&ConflictGraph::from_edges(nodes, skewed(nodes, seed)));
        }
        check(&ConflictGraph::from_edges(5, []));
    }

    #[test]
    fn kept_degrees_past_a_byte_and_a_short_are_exact() {
        // Two hubs of degree 69,000 and 75,000 sharing leaves, and a
        // sprinkle: θs on both sides of 255 and 65,535 (the states' widths)
        // and of each hub's degree.
        let nodes = 140_000;
        let mut edges: Vec<Edge> = (1..=69_000).map(|v| Edge::new(0, v)).collect();
        edges.extend((30_000..100_000).chain(100_001..105_001).map(|v| Edge::new(v, 100_000)));
        edges.extend(skewed(nodes, 5).into_iter().take(20_000));
        edges.sort_unstable_by_key(|e| (e.u, e.v));
        edges.dedup();
        let graph = ConflictGraph::from_edges(nodes, edges);
        let bounds: Vec<DegreeBound> = [
            1, 2, 3, 255, 256, 257, 4_000, 65_535, 65_536, 65_537, 68_999, 69_000, 69_001, 74_999,
            75_000, 75_001, 80_000,
        ]
        .into_iter()
        .filter_map(DegreeBound::new)
        .collect();
        check_bounds(&graph, &bounds);
    }

    #[test]
    fn spilled_graphs_project_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let config = SpillConfig { dir: dir.path().to_path_buf(), memory_limit: 4 << 10 };
        let mut builder = GraphBuilder::with_spill(3_000, &config).unwrap();
        for e in skewed(3_000, 99) {
            builder.add(e.v, e.u);
        }
        let graph = builder.finish();
        assert!(graph.spilled_bytes() > 0);
        check(&graph);
    }
}
