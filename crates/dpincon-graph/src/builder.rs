use crate::{AdjacencyShard, ConflictGraph, Edge};

/// Where detection puts the conflicting pairs it finds.
///
/// Pairs may arrive in any order and more than once (a pair violating
/// several constraints, or both orientations of one); the graph keeps one edge.
pub trait EdgeSink {
    /// Records that tuples `a` and `b` (`a != b`) conflict.
    fn add(&mut self, a: u32, b: u32);
}

impl EdgeSink for Vec<Edge> {
    fn add(&mut self, a: u32, b: u32) {
        self.push(Edge::new(a, b));
    }
}

/// Pairs buffered per shard before they are sorted into the bitmaps: large
/// enough to amortise the sort, small enough to bound memory (8 B a pair).
const FLUSH_PAIRS: usize = 1 << 20;

/// Default number of node ids per shard.
pub const DEFAULT_SHARD_NODES: u32 = 1 << 16;

/// Builds a [`ConflictGraph`] from pairs arriving in any order.
#[derive(Debug)]
pub struct GraphBuilder {
    nodes: u32,
    shard_nodes: u32,
    shards: Vec<AdjacencyShard>,
    pending: Vec<Vec<(u32, u32)>>,
}

impl GraphBuilder {
    /// A builder for a graph on nodes `0..nodes`, sharded by node-id range.
    pub fn new(nodes: u32) -> Self {
        Self::with_shard_nodes(nodes, DEFAULT_SHARD_NODES)
    }

    /// As [`GraphBuilder::new`], with `shard_nodes` node ids per shard (> 0).
    pub fn with_shard_nodes(nodes: u32, shard_nodes: u32) -> Self {
        assert!(shard_nodes > 0, "a shard covers at least one node");
        let count = nodes.div_ceil(shard_nodes) as usize;
        let shards = (0..count as u32)
            .map(|k| {
                let first = k * shard_nodes;
                AdjacencyShard::new(first, shard_nodes.min(nodes - first))
            })
            .collect();
        GraphBuilder { nodes, shard_nodes, shards, pending: vec![Vec::new(); count] }
    }

    /// Number of nodes of the graph being built.
    pub fn nodes(&self) -> u32 {
        self.nodes
    }

    /// Moves every pair `other` holds into `self` (builders of parallel
    /// detection tasks are merged this way; the result does not depend on
    /// the merge order).
    pub fn merge(&mut self, mut other: GraphBuilder) {
        assert_eq!(self.nodes, other.nodes, "merging builders of different graphs");
        for k in 0..other.shards.len() {
            other.flush(k);
        }
        for (k, shard) in other.shards.into_iter().enumerate() {
            for (i, bits) in shard.bitmaps().iter().enumerate() {
                if bits.is_empty() {
                    continue;
                }
                let u = shard.first() + i as u32;
                let pending = &mut self.pending[k];
                pending.extend(bits.iter().map(|v| (u, v)));
                if pending.len() >= FLUSH_PAIRS {
                    self.flush(k);
                }
            }
        }
    }

    fn flush(&mut self, k: usize) {
        let pending = &mut self.pending[k];
        if pending.is_empty() {
            return;
        }
        pending.sort_unstable();
        pending.dedup();
        self.shards[k].absorb_sorted(pending);
        pending.clear();
    }

    /// Sorts what is buffered into the bitmaps and returns the graph.
    pub fn finish(mut self) -> ConflictGraph {
        for k in 0..self.shards.len() {
            self.flush(k);
        }
        for shard in &mut self.shards {
            shard.optimize();
        }
        ConflictGraph::from_shards(self.nodes, self.shards)
            .expect("the builder's shards tile the node range")
    }
}

impl EdgeSink for GraphBuilder {
    fn add(&mut self, a: u32, b: u32) {
        debug_assert!(a < self.nodes && b < self.nodes && a != b);
        let e = Edge::new(a, b);
        let k = (e.u / self.shard_nodes) as usize;
        let pending = &mut self.pending[k];
        pending.push((e.u, e.v));
        if pending.len() >= FLUSH_PAIRS {
            self.flush(k);
        }
    }
}
