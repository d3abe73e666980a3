//! Both-direction adjacency (CSR) for the matching and branching of the exact cover.

use std::ops::ControlFlow;

use dpincon_graph::{ConflictGraph, Edge};

/// The full adjacency of a graph in compressed sparse rows: every edge
/// `{u, v}` appears in both `u`'s and `v`'s row, each row sorted.
///
/// The conflict graph stores each edge once, at its smaller endpoint, which
/// is all a one-pass visitor needs; matching and branching need both
/// directions. Memory: 8 bytes per edge plus 8 per node, on top of the
/// graph itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Adjacency {
    offsets: Vec<u64>,
    neighbours: Vec<u32>,
}

impl Adjacency {
    /// The adjacency of `graph`: its degrees counted on `threads` threads,
    /// then `Adjacency::from_degrees`.
    pub fn from_graph(graph: &ConflictGraph, threads: usize) -> Self {
        let threads = threads.max(1);
        Self::from_degrees(graph, crate::count_degrees(graph, threads).degrees(), threads)
    }

    /// The adjacency of `graph` whose node degrees are `degrees` (as a
    /// [`crate::PassCounts`] holds them), built on `threads` threads.
    ///
    /// The nodes are cut into `threads` ranges holding about as many
    /// entries each, and a thread writes every row of its range: the upper
    /// parts from the range's own rows of the graph, the lower parts from
    /// every earlier row's values inside the range. The rows of a range are
    /// one slice of the array, so the threads share nothing mutable.
    pub(crate) fn from_degrees(graph: &ConflictGraph, degrees: &[u32], threads: usize) -> Self {
        Self::build(graph, degrees, threads, SCATTER_HELD)
    }

    /// [`Adjacency::from_degrees`], flushing each thread's lower entries
    /// every `held / threads` of them.
    pub(super) fn build(
        graph: &ConflictGraph,
        degrees: &[u32],
        threads: usize,
        held: usize,
    ) -> Self {
        let n = graph.nodes() as usize;
        assert_eq!(degrees.len(), n, "degrees of another graph");
        let mut offsets = vec![0u64; n + 1];
        for (i, &d) in degrees.iter().enumerate() {
            offsets[i + 1] = offsets[i] + u64::from(d);
        }
        let mut neighbours = vec![0u32; offsets[n] as usize];
        let mut lower_next: Vec<u64> = offsets[..n].to_vec();
        let threads = threads.clamp(1, n.max(1));
        let cuts = row_cuts(&offsets, threads);
        let mut ranges = Vec::with_capacity(threads);
        let (mut rows, mut next): (&mut [u32], &mut [u64]) = (&mut neighbours, &mut lower_next);
        for w in cuts.windows(2) {
            let (lo, hi) = (w[0], w[1]);
            let (here, rest) = rows.split_at_mut((offsets[hi] - offsets[lo]) as usize);
            let (here_next, rest_next) = next.split_at_mut(hi - lo);
            ranges.push(RowRange { lo, hi, rows: here, lower_next: here_next });
            (rows, next) = (rest, rest_next);
        }
        std::thread::scope(|scope| {
            for range in ranges {
                let offsets = &offsets;
                scope.spawn(move || range.fill(graph, offsets, held / threads));
            }
        });
        let adjacency = Adjacency { offsets, neighbours };
        debug_assert!((0..graph.nodes()).all(|u| adjacency.neighbours(u).is_sorted()));
        adjacency
    }

    /// The adjacency of the graph on `nodes` nodes with these edges, in any
    /// order, duplicates allowed (for tests and small graphs).
    pub fn from_edges(nodes: u32, edges: &[Edge]) -> Self {
        let mut stream = edges.to_vec();
        stream.sort_unstable();
        stream.dedup();
        Self::from_stream(nodes, &stream)
    }

    /// The adjacency of the graph on `nodes` nodes whose edges are `edges`
    /// in the stable order of Λ (ascending, no repeats), on one thread.
    /// Each row then receives its lower neighbours before its upper ones,
    /// both ascending: no row needs sorting.
    pub fn from_stream(nodes: u32, edges: &[Edge]) -> Self {
        debug_assert!(edges.is_sorted_by(|a, b| a < b), "edges not in the stable order");
        let adjacency = Self::from_streams(nodes, &[edges], 1);
        debug_assert!((0..nodes).all(|u| adjacency.neighbours(u).is_sorted()));
        adjacency
    }

    /// The adjacency of the graph on `nodes` nodes whose edges are those of
    /// `streams` (no edge twice), on `threads` threads. Each row lists its
    /// neighbours in the order the streams give them, stream after stream,
    /// whatever `threads`: sorted when the streams are one in Λ's order.
    ///
    /// The degrees are counted by stream; then the nodes are cut into
    /// ranges holding about as many entries each, and a thread reads every
    /// stream and writes the entries of its own range's rows, one slice of
    /// the array: the threads share nothing mutable.
    pub fn from_streams(nodes: u32, streams: &[&[Edge]], threads: usize) -> Self {
        let n = nodes as usize;
        let threads = threads.clamp(1, n.max(1));
        let counters = threads.min(streams.len()).max(1);
        let counts: Vec<Vec<u64>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..counters)
                .map(|t| {
                    scope.spawn(move || {
                        let mut count = vec![0u64; n + 1];
                        for edges in streams.iter().skip(t).step_by(counters) {
                            for e in *edges {
                                count[e.u as usize + 1] += 1;
                                count[e.v as usize + 1] += 1;
                            }
                        }
                        count
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().expect("degree thread panicked")).collect()
        });
        let mut counts = counts.into_iter();
        let mut offsets = counts.next().unwrap_or_else(|| vec![0; n + 1]);
        for count in counts {
            offsets.iter_mut().zip(count).for_each(|(o, c)| *o += c);
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let total = offsets[n];
        let mut neighbours = vec![0u32; total as usize];
        let cuts = row_cuts(&offsets, threads);
        std::thread::scope(|scope| {
            let mut rest: &mut [u32] = &mut neighbours;
            for w in cuts.windows(2) {
                let (lo, hi) = (w[0], w[1]);
                let (rows, tail) = rest.split_at_mut((offsets[hi] - offsets[lo]) as usize);
                rest = tail;
                let offsets = &offsets;
                scope.spawn(move || {
                    let base = offsets[lo];
                    let mut next: Vec<u64> = offsets[lo..hi].iter().map(|o| o - base).collect();
                    let (lo, hi) = (lo as u32, hi as u32);
                    for e in streams.iter().flat_map(|edges| edges.iter()) {
                        for (from, to) in [(e.u, e.v), (e.v, e.u)] {
                            if (lo..hi).contains(&from) {
                                let slot = &mut next[(from - lo) as usize];
                                rows[*slot as usize] = to;
                                *slot += 1;
                            }
                        }
                    }
                });
            }
        });
        Adjacency { offsets, neighbours }
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

/// Where `threads` ranges of rows holding about as many entries each
/// begin, then the row count: `offsets` are the rows' first entries, then
/// the total.
fn row_cuts(offsets: &[u64], threads: usize) -> Vec<usize> {
    let (n, total) = (offsets.len() - 1, offsets[offsets.len() - 1]);
    let mut cuts: Vec<usize> = (0..threads)
        .map(|t| offsets[..n].partition_point(|&o| o < total * t as u64 / threads as u64))
        .collect();
    cuts[0] = 0;
    cuts.push(n);
    cuts
}

/// The rows `lo..hi` of an adjacency being built: their slice of the
/// neighbour array (starting at entry `offsets[lo]`) and, for each, where
/// its next lower neighbour goes.
struct RowRange<'a> {
    lo: usize,
    hi: usize,
    rows: &'a mut [u32],
    lower_next: &'a mut [u64],
}

impl RowRange<'_> {
    /// Writes every row of the range. Rows list their lower neighbours, then
    /// their upper ones; walking Λ, each row's lower part arrives ascending.
    fn fill(self, graph: &ConflictGraph, offsets: &[u64], held: usize) {
        let RowRange { lo, hi, rows, lower_next } = self;
        let base = offsets[lo];
        let (first, end) = (lo as u32, hi as u32);
        // Only rows below `hi` have neighbours in the range (v > u).
        let shards = graph.shards_below(end);
        let mut scatter = Scatter::new(lo, hi - lo, held.max(1));
        graph.for_each_row(shards, |u, upper| {
            if u >= end {
                return;
            }
            if u >= first {
                let stop = (offsets[u as usize + 1] - base) as usize;
                let mut at = stop - upper.len() as usize;
                let _ = upper.chunks(|chunk| {
                    rows[at..at + chunk.len()].copy_from_slice(chunk);
                    at += chunk.len();
                    ControlFlow::<()>::Continue(())
                });
            }
            let mut full = false;
            upper.for_each_in(first.max(u + 1)..end, |v| full |= scatter.push(Edge { u, v }));
            if full {
                scatter.flush(rows, base, lower_next);
            }
        });
        scatter.flush(rows, base, lower_next);
    }
}

/// The lower-neighbour entries waiting to be written, bucketed by the node
/// range of the row they go to (rows `first..first + nodes`).
///
/// Walking Λ, a row's upper neighbours arrive together and ascending and
/// are written in one sweep, but the lower entries (v's row gets u) land
/// all over the array: written one by one that is a cache and TLB miss per
/// edge (measured: 54 s of 58 for 330M edges). So they are buffered by v's
/// node range and flushed range by range, each into a few MB of the array;
/// the buffer keeps stream order, so each row's lower part stays sorted.
struct Scatter {
    first: usize,
    shift: u32,
    limit: usize,
    buckets: Vec<Vec<Edge>>,
    held: usize,
}

/// Entries held before a flush: 64 MiB of edges.
pub(super) const SCATTER_HELD: usize = 1 << 23;

impl Scatter {
    fn new(first: usize, nodes: usize, limit: usize) -> Self {
        // About 1,024 ranges, whatever the node count.
        let shift = (nodes.max(1).div_ceil(1024)).next_power_of_two().trailing_zeros();
        Scatter { first, shift, limit, buckets: vec![Vec::new(); (nodes >> shift) + 1], held: 0 }
    }

    /// Holds `e` for v's row; true when the buffer is full.
    fn push(&mut self, e: Edge) -> bool {
        self.buckets[(e.v as usize - self.first) >> self.shift].push(e);
        self.held += 1;
        self.held >= self.limit
    }

    /// Writes the held entries into `rows` (whose first entry is entry
    /// `base` of the whole array); `lower_next` is indexed from `first`.
    fn flush(&mut self, rows: &mut [u32], base: u64, lower_next: &mut [u64]) {
        for bucket in &mut self.buckets {
            for e in bucket.drain(..) {
                let slot = &mut lower_next[e.v as usize - self.first];
                rows[(*slot - base) as usize] = e.u;
                *slot += 1;
            }
        }
        self.held = 0;
    }
}
