//! Edge addition π_θ row by row, checking only the edges θ can drop.
//!
//! Under π_θ (SPEC §4) an edge is dropped only when an endpoint already
//! has θ kept edges, and a node whose degree in G is below θ (*light*)
//! never gets there: it never blocks an edge. So only edges at a *heavy*
//! node (degree ≥ θ) need a check, a heavy node's row is dropped whole
//! once it is full, and a light row with no heavy neighbour is kept whole.
//! One θ costs O(n + edges at heavy nodes) row operations instead of O(m)
//! edge visits, and nothing beyond the degrees when θ exceeds the maximum
//! degree, the usual case for the default `ub-direct`, whose θ sits above
//! a noisy degree bound.
//!
//! The counts equal [`EdgeAddition`](super::EdgeAddition)'s, the edge-by-edge
//! definition (`tests` checks both on random, skewed and spilled graphs).

use dpincon_graph::ConflictGraph;

use super::{DegreeBound, ProjectedCounts};

/// Per-node working memory of [`project_rows`], reused across θs:
/// 4 bytes and 1 bit per node, and 4 bytes per heavy node.
#[derive(Debug, Default)]
pub struct ProjectionScratch {
    /// Heavy node: its kept degree. Light node: its dropped edges.
    count: Vec<u32>,
    heavy: Vec<u64>,
    /// The heavy nodes ascending, and where those of each 65,536-id block
    /// (a row's [`Block`](dpincon_graph::Block)) start.
    heavy_nodes: Vec<u32>,
    block_start: Vec<usize>,
}

impl ProjectionScratch {
    /// Scratch for graphs of up to `nodes` nodes.
    pub fn new(nodes: u32) -> Self {
        ProjectionScratch {
            count: Vec::with_capacity(nodes as usize),
            heavy: Vec::with_capacity((nodes as usize).div_ceil(64)),
            heavy_nodes: Vec::new(),
            block_start: Vec::new(),
        }
    }
}

/// f(G_θ) of the edge-addition projection, from the graph's rows and its
/// node degrees (`degrees[v]` = deg_G(v), as [`crate::DegreeCounts`] counts
/// them).
pub fn project_rows(
    graph: &ConflictGraph,
    degrees: &[u32],
    theta: DegreeBound,
    scratch: &mut ProjectionScratch,
) -> ProjectedCounts {
    debug_assert_eq!(degrees.len(), graph.nodes() as usize);
    let t = theta.get();
    let ProjectionScratch { count, heavy, heavy_nodes, block_start } = scratch;
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
    heavy.clear();
    heavy.resize(degrees.len().div_ceil(64), 0);
    for &v in heavy_nodes.iter() {
        heavy[(v / 64) as usize] |= 1 << (v % 64);
    }
    block_start.clear();
    block_start
        .extend((0..=graph.nodes() >> 16).map(|b| heavy_nodes.partition_point(|&v| v >> 16 < b)));
    block_start.push(heavy_nodes.len());
    let is_heavy = |v: u32| heavy[(v / 64) as usize] >> (v % 64) & 1 == 1;
    let mut kept = 0u64;
    graph.for_each_row(0..graph.shard_count(), |u, upper| {
        if upper.is_empty() {
            return;
        }
        if is_heavy(u) {
            // Order matters here: u takes its neighbours in Λ until full.
            let mut filled = count[u as usize];
            let mut rest = upper.iter();
            if filled < t {
                for v in rest.by_ref() {
                    let v_heavy = is_heavy(v);
                    if v_heavy && count[v as usize] >= t {
                        continue;
                    }
                    if v_heavy {
                        count[v as usize] += 1;
                    }
                    filled += 1;
                    kept += 1;
                    if filled == t {
                        break;
                    }
                }
                count[u as usize] = filled;
            }
            // u is full: the rest of its row is dropped.
            for v in rest {
                if !is_heavy(v) {
                    count[v as usize] += 1;
                }
            }
        } else {
            // u never fills, so each heavy neighbour decides alone and the
            // order within the row does not matter. A block is searched for
            // the few heavy nodes in its range, or they are picked out of it.
            let mut dropped = 0u32;
            let mut decide = |v: u32| {
                if count[v as usize] < t {
                    count[v as usize] += 1;
                } else {
                    dropped += 1;
                }
            };
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
                        if is_heavy(v) {
                            decide(v);
                        }
                    });
                }
            }
            kept += upper.len() - u64::from(dropped);
            count[u as usize] += dropped;
        }
    });
    let problematic = (0..degrees.len())
        .filter(|&v| if is_heavy(v as u32) { count[v] > 0 } else { degrees[v] > count[v] })
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
        let mut scratch = ProjectionScratch::new(graph.nodes());
        for want in reference.counts() {
            let got = project_rows(graph, degrees.degrees(), want.theta, &mut scratch);
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
