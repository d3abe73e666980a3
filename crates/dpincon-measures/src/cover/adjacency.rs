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

    /// The adjacency of `graph`: its degrees counted on all cores, then
    /// [`Adjacency::from_degrees`].
    pub fn from_graph(graph: &ConflictGraph) -> Self {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self::from_degrees(graph, crate::count_degrees(graph, threads).degrees())
    }

    /// The adjacency of `graph` whose node degrees are `degrees` (as a
    /// [`crate::PassCounts`] holds them): one walk of its rows.
    pub fn from_degrees(graph: &ConflictGraph, degrees: &[u32]) -> Self {
        let n = graph.nodes() as usize;
        assert_eq!(degrees.len(), n, "degrees of another graph");
        let mut offsets = vec![0u64; n + 1];
        for (i, &d) in degrees.iter().enumerate() {
            offsets[i + 1] = offsets[i] + u64::from(d);
        }
        let mut neighbours = vec![0u32; offsets[n] as usize];
        // Each row is its lower neighbours, then its upper ones: the upper
        // part goes in at the row's end, in one sweep per row.
        let mut lower_next: Vec<u64> = offsets[..n].to_vec();
        let mut scatter = Scatter::new(n, SCATTER_HELD);
        graph.for_each_row(0..graph.shard_count(), |u, upper| {
            let end = offsets[u as usize + 1] as usize;
            let row = &mut neighbours[end - upper.len() as usize..end];
            // A full buffer is flushed once the row is written.
            let mut full = false;
            for (slot, v) in row.iter_mut().zip(upper) {
                *slot = v;
                full |= scatter.push(Edge { u, v });
            }
            if full {
                scatter.flush(&mut neighbours, &mut lower_next);
            }
        });
        scatter.flush(&mut neighbours, &mut lower_next);
        let adjacency = Adjacency { offsets, neighbours };
        debug_assert!((0..graph.nodes()).all(|u| adjacency.neighbours(u).is_sorted()));
        adjacency
    }

    /// The adjacency of the graph on `nodes` nodes with these edges, in any
    /// order, duplicates allowed (for tests and small graphs).
    pub fn from_edges(nodes: u32, edges: &[Edge]) -> Self {
        let mut sorted = edges.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        Self::build(nodes, || sorted.iter().copied(), SCATTER_HELD)
    }

    /// Builds from two passes over the edges in the order Λ, flushing the
    /// lower entries every `held` edges.
    pub(super) fn build<I: Iterator<Item = Edge>>(
        nodes: u32,
        edges: impl Fn() -> I,
        held: usize,
    ) -> Self {
        let n = nodes as usize;
        // Row of u = its lower neighbours (w < u), then its upper ones.
        let mut lower = vec![0u32; n];
        let mut offsets = vec![0u64; n + 1];
        for e in edges() {
            offsets[e.u as usize + 1] += 1;
            offsets[e.v as usize + 1] += 1;
            lower[e.v as usize] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut neighbours = vec![0u32; offsets[n] as usize];
        // Λ is lexicographic in (u, v): u's upper neighbours arrive together
        // and ascending, so they are written in one sequential sweep. The
        // lower entries (v's row gets u) land all over the array: written
        // one by one that is a cache and TLB miss per edge (measured: 54 s
        // of 58 for 330M edges). So they are buffered by v's node range
        // and flushed range by range, each into a few MB of the array; the
        // buffer keeps stream order, so each row's lower part stays sorted.
        let mut lower_next: Vec<u64> = offsets[..n].to_vec();
        let mut scatter = Scatter::new(n, held);
        let mut upper_next = 0usize;
        let mut current = u32::MAX;
        for e in edges() {
            if e.u != current {
                current = e.u;
                upper_next = (offsets[e.u as usize] + u64::from(lower[e.u as usize])) as usize;
            }
            neighbours[upper_next] = e.v;
            upper_next += 1;
            if scatter.push(e) {
                scatter.flush(&mut neighbours, &mut lower_next);
            }
        }
        scatter.flush(&mut neighbours, &mut lower_next);
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

/// The lower-neighbour entries waiting to be written, bucketed by the node
/// range of the row they go to.
struct Scatter {
    shift: u32,
    limit: usize,
    buckets: Vec<Vec<Edge>>,
    held: usize,
}

/// Entries held before a flush: 64 MiB of edges.
pub(super) const SCATTER_HELD: usize = 1 << 23;

impl Scatter {
    fn new(nodes: usize, limit: usize) -> Self {
        // About 1,024 ranges, whatever the node count.
        let shift = (nodes.max(1).div_ceil(1024)).next_power_of_two().trailing_zeros();
        Scatter { shift, limit, buckets: vec![Vec::new(); (nodes >> shift) + 1], held: 0 }
    }

    /// Holds `e` for v's row; true when the buffer is full.
    fn push(&mut self, e: Edge) -> bool {
        self.buckets[(e.v >> self.shift) as usize].push(e);
        self.held += 1;
        self.held >= self.limit
    }

    fn flush(&mut self, neighbours: &mut [u32], lower_next: &mut [u64]) {
        for bucket in &mut self.buckets {
            for e in bucket.drain(..) {
                let slot = &mut lower_next[e.v as usize];
                neighbours[*slot as usize] = e.u;
                *slot += 1;
            }
        }
        self.held = 0;
    }
}
