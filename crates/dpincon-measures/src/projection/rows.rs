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
    /// Nothing seen yet, for a graph on `degrees.len()` nodes.
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

/// One bit per node.
#[derive(Debug, Default)]
struct Bits(Vec<u64>);

impl Bits {
    fn reset(&mut self, nodes: usize) {
        self.0.clear();
        self.0.resize(nodes.div_ceil(64), 0);
    }

    fn get(&self, v: u32) -> bool {
        self.0[(v / 64) as usize] >> (v % 64) & 1 == 1
    }

    fn set(&mut self, v: u32) {
        self.0[(v / 64) as usize] |= 1 << (v % 64);
    }
}

/// Per-node working memory of [`project_rows`], reused across θs:
/// 4 bytes and 3 bits per node, and 4 bytes per heavy node. The bits are
/// what most edges are checked against: 1/32 of the counts' size, they stay
/// in cache where the counts would not.
#[derive(Debug, Default)]
pub struct ProjectionScratch {
    /// A heavy node's kept degree.
    count: Vec<u32>,
    heavy: Bits,
    /// Heavy nodes with θ kept edges: every later edge at them is dropped.
    full: Bits,
    /// Light nodes that kept an edge at a heavy node.
    kept_heavy: Bits,
    /// The heavy nodes ascending, and where those of each 65,536-id block
    /// (a row's [`Block`](dpincon_graph::Block)) start.
    heavy_nodes: Vec<u32>,
    block_start: Vec<usize>,
}

impl ProjectionScratch {
    /// Scratch for graphs of up to `nodes` nodes.
    pub fn new(nodes: u32) -> Self {
        ProjectionScratch { count: Vec::with_capacity(nodes as usize), ..Self::default() }
    }
}

/// f(G_θ) of the edge-addition projection, from the graph's rows, its
/// node degrees (`degrees[v]` = deg_G(v), as [`crate::DegreeCounts`] counts
/// them) and the [`NeighbourDegrees`] read off both.
pub fn project_rows(
    graph: &ConflictGraph,
    degrees: &[u32],
    neighbours: &NeighbourDegrees,
    theta: DegreeBound,
    scratch: &mut ProjectionScratch,
) -> ProjectedCounts {
    debug_assert_eq!(degrees.len(), graph.nodes() as usize);
    debug_assert_eq!(neighbours.lightest.len(), degrees.len());
    let t = theta.get();
    let ProjectionScratch { count, heavy, full, kept_heavy, heavy_nodes, block_start } = scratch;
    heavy_nodes.clear();
    heavy_nodes.extend((0..graph.nodes()).filter(|&v| degrees[v as usize] >= t));
    if heavy_nodes.is_empty() {
        // θ above every degree: π_θ(G) = G.
        let edges = degrees.iter().map(|&d| u64::from(d)).sum::<u64>() / 2;
        let problematic = degrees.iter().filter(|&&d| d > 0).count() as u64;
        return ProjectedCounts { theta, edges, problematic };
    }
    count.clear();
    count.resize(degrees.len(), 0);
    for bits in [&mut *heavy, &mut *full, &mut *kept_heavy] {
        bits.reset(degrees.len());
    }
    for &v in heavy_nodes.iter() {
        heavy.set(v);
    }
    block_start.clear();
    block_start
        .extend((0..=graph.nodes() >> 16).map(|b| heavy_nodes.partition_point(|&v| v >> 16 < b)));
    block_start.push(heavy_nodes.len());
    // Heavy v takes one more edge, if not full.
    let take = |v: u32, count: &mut [u32], full: &mut Bits| {
        if full.get(v) {
            return false;
        }
        count[v as usize] += 1;
        if count[v as usize] == t {
            full.set(v);
        }
        true
    };
    let mut kept = 0u64;
    graph.for_each_row(0..graph.shard_count(), |u, upper| {
        if upper.is_empty() {
            return;
        }
        if heavy.get(u) {
            // Order matters here: u takes its neighbours in Λ until full;
            // the rest of its row is dropped.
            if full.get(u) {
                return;
            }
            let before = count[u as usize];
            let mut filled = before;
            let _ = upper.chunks(|chunk| {
                for &v in chunk {
                    if !heavy.get(v) {
                        kept_heavy.set(v);
                    } else if !take(v, count, full) {
                        continue;
                    }
                    filled += 1;
                    if filled == t {
                        return ControlFlow::Break(());
                    }
                }
                ControlFlow::Continue(())
            });
            kept += u64::from(filled - before);
            count[u as usize] = filled;
            if filled == t {
                full.set(u);
            }
        } else if neighbours.heaviest_above[u as usize] < t {
            kept += upper.len();
        } else {
            // u never fills, so each heavy neighbour decides alone and the
            // order within the row does not matter. A block is searched for
            // the few heavy nodes in its range, or they are picked out of it.
            let mut dropped = 0u32;
            let mut decide = |v: u32| dropped += u32::from(!take(v, count, full));
            for block in upper.blocks() {
                let key = usize::from(block.key());
                let among = &heavy_nodes[block_start[key]..block_start[key + 1]];
                if among.is_empty() {
                    continue;
                }
                if among.len() * 16 < block.len() as usize {
                    among.iter().filter(|&&v| block.contains(v)).for_each(|&v| decide(v));
                } else {
                    block.for_each(|v| {
                        if heavy.get(v) {
                            decide(v);
                        }
                    });
                }
            }
            if upper.len() > u64::from(dropped) {
                kept += upper.len() - u64::from(dropped);
                kept_heavy.set(u);
            }
        }
    });
    let problematic = (0..graph.nodes())
        .filter(|&v| {
            if heavy.get(v) {
                count[v as usize] > 0
            } else {
                degrees[v as usize] > 0
                    && (neighbours.lightest[v as usize] < t || kept_heavy.get(v))
            }
        })
        .count() as u64;
    ProjectedCounts { theta, edges: kept, problematic }
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

    fn check(graph: &ConflictGraph) {
        let mut degrees = DegreeCounts::new(graph.nodes());
        walk(graph.edges(), &mut [&mut degrees]);
        let max = degrees.counts().max_degree;
        let bounds: Vec<DegreeBound> = (1..=max + 2).filter_map(DegreeBound::new).collect();
        let mut reference = EdgeAddition::new(graph.nodes(), &bounds);
        walk(graph.edges(), &mut [&mut reference]);
        let mut neighbours = NeighbourDegrees::new(graph.nodes());
        graph.for_each_row(0..graph.shard_count(), |u, upper| {
            neighbours.visit_row(u, upper, degrees.degrees())
        });
        let mut scratch = ProjectionScratch::new(graph.nodes());
        for want in reference.counts() {
            let got = project_rows(graph, degrees.degrees(), &neighbours, want.theta, &mut scratch);
            assert_eq!(got, want, "θ = {}", want.theta.get());
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
