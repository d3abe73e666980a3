//! The conflict graph and its one error type.

use std::borrow::Cow;
use std::ops::Range;

use crate::frozen::Position;
use crate::spill::SpillStore;
use crate::{Edge, FrozenShard, PieceError, Row};

/// The graph's one error type.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GraphError {
    /// Shards must tile `0..nodes` in order with no gap or overlap.
    #[error(
        "adjacency shards do not tile the node range: expected a shard starting at node {expected}, found {found}"
    )]
    ShardGap {
        /// The node id the next shard should start at.
        expected: u64,
        /// Where it starts instead (or the end of the shards).
        found: u64,
    },
    /// Row records or groups from another process (a cluster's
    /// executors) that are not well formed for this graph.
    #[error("malformed row records: {0}")]
    BadRows(#[from] PieceError),
    /// A stored neighbour is not a node of the graph.
    #[error("node {node} has neighbour {neighbour} outside the graph's {nodes} nodes")]
    NeighbourOutOfRange {
        /// The node.
        node: u32,
        /// The offending neighbour.
        neighbour: u32,
        /// Node count.
        nodes: u32,
    },
}

/// The conflict graph `G = (V, E)` of SPEC §2: all `n` tuple ids are nodes,
/// isolated ones included.
///
/// Rows live in memory as [`FrozenShard`]s, or, for a graph built under a
/// memory budget, in a spill file from which [`ConflictGraph::edges`] and
/// [`ConflictGraph::for_each_row`] read them a shard at a time.
#[derive(Debug)]
pub struct ConflictGraph {
    nodes: u32,
    /// A spilled shard is an empty placeholder here.
    shards: Vec<FrozenShard>,
    spill: Option<SpillStore>,
    edge_count: u64,
}

impl ConflictGraph {
    /// A graph from shards that tile `0..nodes` in order.
    pub fn from_shards(nodes: u32, shards: Vec<FrozenShard>) -> Result<Self, GraphError> {
        let mut expected = 0u64;
        for shard in &shards {
            if u64::from(shard.first()) != expected {
                return Err(GraphError::ShardGap { expected, found: shard.first().into() });
            }
            expected = shard.end();
        }
        if expected != u64::from(nodes) {
            return Err(GraphError::ShardGap { expected, found: u64::from(nodes) });
        }
        for shard in &shards {
            for (k, row) in shard.rows().enumerate() {
                if let Some(max) = row.max()
                    && max >= nodes
                {
                    let node = shard.first() + k as u32;
                    return Err(GraphError::NeighbourOutOfRange { node, neighbour: max, nodes });
                }
            }
        }
        let edge_count = shards.iter().map(FrozenShard::edge_count).sum();
        Ok(ConflictGraph { nodes, shards, spill: None, edge_count })
    }

    /// A graph whose shards are partly in `store` (built by the builder).
    pub(crate) fn spilled(
        nodes: u32,
        shards: Vec<FrozenShard>,
        store: SpillStore,
        edge_count: u64,
    ) -> Self {
        ConflictGraph { nodes, shards, spill: Some(store), edge_count }
    }

    /// A graph from a list of edges (for tests and small inputs).
    pub fn from_edges(nodes: u32, edges: impl IntoIterator<Item = Edge>) -> Self {
        let mut builder = crate::GraphBuilder::new(nodes);
        for e in edges {
            crate::EdgeSink::add(&mut builder, e.u, e.v);
        }
        builder.finish()
    }

    /// Number of nodes `n` (tuples of the table).
    pub fn nodes(&self) -> u32 {
        self.nodes
    }

    /// Number of edges `|E|`.
    pub fn edge_count(&self) -> u64 {
        self.edge_count
    }

    /// Bytes of adjacency written to disk while building (0 if none).
    pub fn spilled_bytes(&self) -> u64 {
        self.spill.as_ref().map_or(0, SpillStore::bytes_written)
    }

    /// The edges in the stable order Λ: lexicographic in `(u, v)`, `u < v`.
    pub fn edges(&self) -> EdgeStream<'_> {
        EdgeStream { graph: self, next_shard: 0, current: None }
    }

    /// Number of shards.
    pub fn shard_count(&self) -> usize {
        self.shards.len()
    }

    /// The shards holding rows below `node`: `0..k` for the smallest such `k`.
    pub fn shards_below(&self, node: u32) -> std::ops::Range<usize> {
        0..self.shards.partition_point(|s| s.first() < node)
    }

    /// Calls `visit(u, upper(u))` for every node `u` of the shards in
    /// `shards`, in node order: Λ row by row (each row ascending). Walking
    /// rows lets an algorithm skip or count a whole row at once where the
    /// edge stream would hand it every edge.
    pub fn for_each_row(&self, shards: Range<usize>, mut visit: impl FnMut(u32, Row<'_>)) {
        for k in shards {
            let shard = self.shard(k);
            for (i, row) in shard.rows().enumerate() {
                visit(shard.first() + i as u32, row);
            }
        }
    }

    /// Shard `k`: in memory, or read back from the spill file.
    fn shard(&self, k: usize) -> Cow<'_, FrozenShard> {
        match &self.spill {
            Some(store) if store.has(k) => Cow::Owned(store.load(k)),
            _ => Cow::Borrowed(&self.shards[k]),
        }
    }

    /// Splits the shards into at most `parts` contiguous ranges holding
    /// about the same number of edges (spilled shards weighed by their
    /// bytes on disk), for walks that share rows among threads.
    pub fn balanced_shard_ranges(&self, parts: usize) -> Vec<Range<usize>> {
        let weight = |k: usize| {
            let spilled = self.spill.as_ref().map_or(0, |s| s.bytes_of(k) / 2);
            self.shards[k].edge_count() + spilled + 1
        };
        let weights: Vec<u64> = (0..self.shards.len()).map(weight).collect();
        balanced_ranges(&weights, parts)
    }
}

/// Splits `0..weights.len()` into at most `parts` contiguous ranges of
/// about equal total weight (a range ends at the item that reaches its
/// share); one range, perhaps empty, when there is nothing to split.
pub(crate) fn balanced_ranges(weights: &[u64], parts: usize) -> Vec<Range<usize>> {
    let total: u64 = weights.iter().sum();
    let parts = parts.max(1) as u64;
    let mut ranges = Vec::new();
    let (mut start, mut acc) = (0, 0u64);
    for (k, w) in weights.iter().enumerate() {
        acc += w;
        let cut = total * (ranges.len() as u64 + 1) / parts;
        if acc >= cut && (ranges.len() as u64) < parts - 1 {
            ranges.push(start..k + 1);
            start = k + 1;
        }
    }
    if start < weights.len() || ranges.is_empty() {
        ranges.push(start..weights.len());
    }
    ranges
}

/// The one edge stream: a graph's edges in the stable order Λ (SPEC §2).
///
/// Every measure and mechanism walks this stream, so they all see the same
/// order, whatever the number of workers that detected the edges and
/// whether the graph was spilled to disk.
pub struct EdgeStream<'a> {
    graph: &'a ConflictGraph,
    next_shard: usize,
    /// The shard being walked (owned when read back from the spill
    /// file), its row and where in the row.
    current: Option<(Cow<'a, FrozenShard>, u32, Position)>,
}

impl std::fmt::Debug for EdgeStream<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EdgeStream").field("next_shard", &self.next_shard).finish()
    }
}

impl Iterator for EdgeStream<'_> {
    type Item = Edge;

    fn next(&mut self) -> Option<Edge> {
        loop {
            if let Some((shard, k, at)) = &mut self.current {
                while *k < shard.len() {
                    if let Some(v) = at.next(shard.row(*k)) {
                        return Some(Edge { u: shard.first() + *k, v });
                    }
                    (*k, *at) = (*k + 1, Position::default());
                }
            }
            if self.next_shard == self.graph.shards.len() {
                self.current = None;
                return None;
            }
            let shard = self.graph.shard(self.next_shard);
            self.next_shard += 1;
            self.current = Some((shard, 0, Position::default()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EdgeSink, GraphBuilder};

    #[test]
    fn stream_is_sorted_deduplicated_and_complete() {
        let pairs = crate::test_pairs::pseudo_random_pairs(500, 5_000, 7);
        let mut builder = GraphBuilder::with_shard_nodes(500, 37);
        for &(a, b) in &pairs {
            builder.add(a, b);
            builder.add(b, a);
        }
        let graph = builder.finish();
        let mut expected: Vec<Edge> = pairs.iter().map(|&(a, b)| Edge::new(a, b)).collect();
        expected.sort();
        expected.dedup();
        let streamed: Vec<Edge> = graph.edges().collect();
        assert_eq!(streamed, expected);
        assert_eq!(graph.edge_count(), expected.len() as u64);
    }

    #[test]
    fn order_does_not_depend_on_insertion_order_or_sharding_or_writers() {
        let pairs = crate::test_pairs::pseudo_random_pairs(300, 2_000, 11);
        let mut one = GraphBuilder::with_shard_nodes(300, 1 << 16);
        for &(a, b) in &pairs {
            one.add(a, b);
        }
        // Two threads writing reversed halves into one builder, as detection does.
        let shared = GraphBuilder::with_shard_nodes(300, 64);
        std::thread::scope(|scope| {
            for half in 0..2 {
                let (shared, pairs) = (&shared, &pairs);
                scope.spawn(move || {
                    let mut writer = shared.writer();
                    for (i, &(a, b)) in pairs.iter().rev().enumerate() {
                        if i % 2 == half {
                            writer.add(b, a);
                        }
                    }
                });
            }
        });
        let a: Vec<Edge> = one.finish().edges().collect();
        let b: Vec<Edge> = shared.finish().edges().collect();
        assert_eq!(a, b);
    }

    #[test]
    fn isolated_nodes_and_empty_graphs() {
        let g = GraphBuilder::new(0).finish();
        assert_eq!(g.nodes(), 0);
        assert_eq!(g.edges().count(), 0);
        let g = ConflictGraph::from_edges(10, [Edge::new(9, 3)]);
        assert_eq!(g.nodes(), 10);
        assert_eq!(g.edges().collect::<Vec<_>>(), vec![Edge { u: 3, v: 9 }]);
    }

    #[test]
    fn shards_must_tile_the_node_range() {
        let s = FrozenShard::empty(0, 5);
        let t = FrozenShard::empty(6, 4);
        assert_eq!(
            ConflictGraph::from_shards(10, vec![s.clone(), t]).unwrap_err(),
            GraphError::ShardGap { expected: 5, found: 6 }
        );
        assert!(ConflictGraph::from_shards(5, vec![s]).is_ok());
        let mut far = FrozenShard::new(0);
        far.push_sorted(&[3, 70_000]);
        assert_eq!(
            ConflictGraph::from_shards(1, vec![far]).unwrap_err(),
            GraphError::NeighbourOutOfRange { node: 0, neighbour: 70_000, nodes: 1 }
        );
    }

    #[test]
    fn spilling_never_changes_the_stream() {
        let pairs = crate::test_pairs::pseudo_random_pairs(200_000, 400_000, 5);
        let mut plain = GraphBuilder::new(200_000);
        let dir = tempfile::tempdir().unwrap();
        let config = crate::SpillConfig { dir: dir.path().to_path_buf(), memory_limit: 64 << 10 };
        let budgeted = GraphBuilder::with_spill(200_000, &config).unwrap();
        {
            let (mut left, mut right) = (budgeted.writer(), budgeted.writer());
            for (i, &(a, b)) in pairs.iter().enumerate() {
                plain.add(a, b);
                // Every pair twice, from two writers, on both sides of spills.
                left.add(b, a);
                if i % 3 == 0 { right.add(a, b) } else { left.add(a, b) }
            }
        }
        assert!(budgeted.spilled_bytes() > 0, "the tiny budget must force spills");
        let spilled = budgeted.finish();
        let plain = plain.finish();
        assert!(spilled.spilled_bytes() > 0);
        assert_eq!(spilled.edge_count(), plain.edge_count());
        assert!(spilled.edges().eq(plain.edges()));
    }

    /// Rows handed over whole (`add_upper`, as `Multipartite::emit_rows`
    /// does) and the same edges as pairs give one stream, with or without
    /// spills, through the builder and through a writer.
    #[test]
    fn rows_handed_over_whole_equal_their_pairs() {
        let n = 150_000;
        let pairs = crate::test_pairs::pseudo_random_pairs(n, 200_000, 9);
        let mut sets = std::collections::BTreeMap::<u32, std::collections::BTreeSet<u32>>::new();
        for &(a, b) in &pairs {
            let e = Edge::new(a, b);
            sets.entry(e.u).or_default().insert(e.v);
        }
        // A dense row too: its containers are bitmaps in the record.
        sets.entry(7).or_default().extend(10..30_000);
        let rows: Vec<(u32, Vec<u32>)> =
            sets.into_iter().map(|(u, upper)| (u, upper.into_iter().collect())).collect();
        let mut plain = GraphBuilder::new(n);
        rows.iter().for_each(|(u, upper)| upper.iter().for_each(|&v| plain.add(*u, v)));
        let want: Vec<Edge> = plain.finish().edges().collect();
        let dir = tempfile::tempdir().unwrap();
        let config = crate::SpillConfig { dir: dir.path().to_path_buf(), memory_limit: 64 << 10 };
        let mut whole = GraphBuilder::with_shard_nodes(n, 1000);
        let budgeted = GraphBuilder::with_spill(n, &config).unwrap();
        {
            let mut writer = budgeted.writer();
            for (u, upper) in &rows {
                whole.add_upper(*u, upper);
                writer.add_upper(*u, upper);
                // Twice, after the budget forced spills: the union keeps one.
                writer.add_upper(*u, upper);
            }
        }
        assert!(budgeted.spilled_bytes() > 0, "the tiny budget must force spills");
        assert_eq!(whole.finish().edges().collect::<Vec<_>>(), want);
        assert_eq!(budgeted.finish().edges().collect::<Vec<_>>(), want);
    }

    #[test]
    fn rows_and_balanced_ranges_cover_the_stream_in_order() {
        let pairs = crate::test_pairs::pseudo_random_pairs(5_000, 40_000, 3);
        let dir = tempfile::tempdir().unwrap();
        let config = crate::SpillConfig { dir: dir.path().to_path_buf(), memory_limit: 64 << 10 };
        let mut spilled = GraphBuilder::with_spill(5_000, &config).unwrap();
        let mut plain = GraphBuilder::with_shard_nodes(5_000, 97);
        for &(a, b) in &pairs {
            spilled.add(a, b);
            plain.add(a, b);
        }
        for graph in [plain.finish(), spilled.finish()] {
            let want: Vec<Edge> = graph.edges().collect();
            for parts in [1, 2, 3, 7, 1000] {
                let ranges = graph.balanced_shard_ranges(parts);
                assert!(ranges.len() <= parts && !ranges.is_empty());
                assert_eq!(ranges.first().unwrap().start, 0);
                assert_eq!(ranges.last().unwrap().end, graph.shard_count());
                assert!(ranges.windows(2).all(|w| w[0].end == w[1].start));
                let mut got = Vec::new();
                for range in ranges {
                    graph.for_each_row(range, |u, upper| {
                        got.extend(upper.iter().map(|v| Edge { u, v }));
                    });
                }
                assert_eq!(got, want, "{parts} parts");
            }
        }
    }
}
