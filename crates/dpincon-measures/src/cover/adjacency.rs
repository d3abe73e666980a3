use dpincon_graph::{ConflictGraph, Edge};

/// The full adjacency of a graph in compressed sparse rows: every edge
/// `{u, v}` appears in both `u`'s and `v`'s row, each row sorted.
///
/// The conflict graph stores each edge once, at its smaller endpoint, which
/// is all a one-pass visitor needs; matching and branching need both
/// directions. Memory: [`Adjacency::bytes_for`] = 8 bytes per edge plus 8 per
/// node, on top of the graph itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Adjacency {
    offsets: Vec<u64>,
    neighbours: Vec<u32>,
}

impl Adjacency {
    /// Bytes the adjacency of a graph with `nodes` nodes and `edges` edges
    /// takes: two `u32` per edge, one `u64` offset per node.
    pub fn bytes_for(nodes: u64, edges: u64) -> u64 {
        8 * edges + 8 * (nodes + 1)
    }

    /// The adjacency of `graph`, read from its edge stream (two passes; a
    /// spilled graph is read back from disk twice).
    pub fn from_graph(graph: &ConflictGraph) -> Self {
        Self::build(graph.nodes(), || graph.edges())
    }

    /// The adjacency of the graph on `nodes` nodes with these edges, in any
    /// order, duplicates allowed (for tests and small graphs).
    pub fn from_edges(nodes: u32, edges: &[Edge]) -> Self {
        let mut sorted = edges.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        Self::build(nodes, || sorted.iter().copied())
    }

    fn build<I: Iterator<Item = Edge>>(nodes: u32, edges: impl Fn() -> I) -> Self {
        let n = nodes as usize;
        let mut offsets = vec![0u64; n + 1];
        for e in edges() {
            offsets[e.u as usize + 1] += 1;
            offsets[e.v as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut next: Vec<u64> = offsets[..n].to_vec();
        let mut neighbours = vec![0u32; offsets[n] as usize];
        // Λ is lexicographic, so each row fills in increasing order: a node's
        // lower neighbours arrive (as `u` of earlier edges) before its upper
        // ones, both ascending.
        for e in edges() {
            neighbours[next[e.u as usize] as usize] = e.v;
            next[e.u as usize] += 1;
            neighbours[next[e.v as usize] as usize] = e.u;
            next[e.v as usize] += 1;
        }
        let adjacency = Adjacency { offsets, neighbours };
        debug_assert!((0..nodes).all(|u| adjacency.neighbours(u).is_sorted()));
        adjacency
    }

    /// Number of nodes.
    pub fn nodes(&self) -> u32 {
        (self.offsets.len() - 1) as u32
    }

    /// Number of edges.
    pub fn edges(&self) -> u64 {
        self.neighbours.len() as u64 / 2
    }

    /// The neighbours of `u`, ascending.
    pub fn neighbours(&self, u: u32) -> &[u32] {
        let (a, b) = (self.offsets[u as usize], self.offsets[u as usize + 1]);
        &self.neighbours[a as usize..b as usize]
    }

    /// The degree of `u`.
    pub fn degree(&self, u: u32) -> usize {
        (self.offsets[u as usize + 1] - self.offsets[u as usize]) as usize
    }
}
