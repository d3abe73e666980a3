//! 2·LP(G) without the whole adjacency: Hopcroft–Karp on a small subgraph
//! around the stable-order greedy matching, with the same value.
//!
//! The greedy cover C = V(M) of a maximal matching M of G gives a maximal
//! matching M_B of the double cover B(G) (u_L–v_R and v_L–u_R per uv ∈ M),
//! of size c = |C|. Every node outside C is free on both sides of M_B, and
//! V \ C is independent in G. The kernel H keeps G[C] and, for each u ∈ C,
//! its first `keep` neighbours outside C in the stable order; u is *cut*
//! when it has more. ν(B(H)) ≤ ν(B(G)) = 2·LP(G), as H ⊆ G; the value is
//! exact when either test below holds, else `keep` grows (×8) and the pass
//! runs again. A pass that cuts nothing keeps every edge of G (no edge
//! joins two nodes outside C), so the loop ends.
//!
//! 1. **Every cut node has x_u = 1** in the König optimum of H (both of
//!    its copies are in H's minimum cover of B(H)). The only edges of B(G)
//!    missing from B(H) are f_L–u_R and u_L–f_R for a cut u, so that cover
//!    of size ν(B(H)) also covers B(G): ν(B(G)) ≤ ν(B(H)). Star centres
//!    with many private neighbours, what cutting hits, pass this test.
//! 2. **D_H < keep**, D = ν(B(·)) − c. M_B Δ M* for a maximum M* of B(G)
//!    holds D disjoint M_B-augmenting paths f_L, v_R, …, u_L, x_R whose
//!    interior lies in C's copies; only f_L and x_R are free. Keep any
//!    min(D, keep) of them. A root f not among v's kept neighbours swaps
//!    for a kept one no other kept path starts from (v kept `keep`, the
//!    others use at most `keep` − 1); ends x_R likewise. The paths stay
//!    disjoint (free copies only end paths) and lie in B(H), so
//!    D_H ≥ min(D, keep): D_H < keep forces D = D_H.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicUsize, Ordering};

use dpincon_graph::{ConflictGraph, Edge};

use super::{Adjacency, GreedyCover, fractional_cover};

/// Free neighbours kept per cover node in the first pass (then ×8).
const FIRST_KEEP: u32 = 32;

/// 2·LP(G), the doubled minimum fractional vertex cover, exactly, from the
/// graph and its stable-order greedy cover (`greedy` must have walked all
/// of `graph`): a pass over the rows on `threads` threads, then
/// [`fractional_cover`] on the kernel (module doc). Besides the graph it
/// holds the kernel's edges, 16 bytes each while its adjacency is built.
pub fn twice_fractional_cover(graph: &ConflictGraph, greedy: &GreedyCover, threads: usize) -> u64 {
    kernel_twice_lp(graph, greedy, FIRST_KEEP, threads)
}

/// [`twice_fractional_cover`], keeping `keep` free neighbours in the first
/// pass (tests take small ones to reach every branch).
pub(super) fn kernel_twice_lp(
    graph: &ConflictGraph,
    greedy: &GreedyCover,
    mut keep: u32,
    threads: usize,
) -> u64 {
    let matched = greedy.size().cover;
    loop {
        let mut kernel = GreedyKernel::collect(graph, greedy, keep, threads);
        let (adjacency, id) = kernel.adjacency(graph.nodes(), greedy, threads);
        let lp = fractional_cover(&adjacency);
        let twice = lp.twice_value();
        debug_assert!(twice >= matched, "the greedy matching lies in the kernel");
        let covers_cuts = kernel.cut.iter().all(|&u| lp.twice_weight(id[u as usize]) == 2);
        if covers_cuts || twice.saturating_sub(matched) < u64::from(keep) {
            return twice;
        }
        keep = keep.saturating_mul(8);
    }
}

/// The kernel's edges, in original node ids until
/// [`GreedyKernel::adjacency`] renumbers them; one vector of each kind per
/// range of rows walked, the ranges in row order, so that each kind
/// read range after range is in the stable order of Λ.
struct GreedyKernel {
    /// G[C].
    inner: Vec<Vec<Edge>>,
    /// The kept edges to free nodes.
    free: Vec<Vec<Edge>>,
    /// Cover nodes with more free neighbours than were kept, ascending.
    cut: Vec<u32>,
}

/// One range's walk: its edges of each kind and its free-edge counts.
struct Part {
    inner: Vec<Edge>,
    free: Vec<Edge>,
    kept: Kept,
}

/// How many free neighbours of each cover node were kept so far.
struct Kept {
    keep: u32,
    count: Vec<u32>,
    cut: Vec<u32>,
}

impl Kept {
    fn new(nodes: u32, keep: u32) -> Self {
        Kept { keep, count: vec![0; nodes as usize], cut: Vec::new() }
    }

    /// Whether edge `e` enters the kernel, given whether each end is in C:
    /// always inside C; to a free node while its cover end has kept fewer
    /// than `keep`.
    fn admit(&mut self, e: Edge, u_in_cover: bool, v_in_cover: bool) -> bool {
        match (u_in_cover, v_in_cover) {
            (true, true) => true,
            (true, false) => self.admit_free(e.u),
            (false, true) => self.admit_free(e.v),
            // Both free: impossible, the matching is maximal.
            (false, false) => unreachable!("greedy cover misses {}-{}", e.u, e.v),
        }
    }

    /// Whether cover node `u` has more free neighbours than are kept.
    fn is_cut(&self, u: u32) -> bool {
        self.count[u as usize] > self.keep
    }

    /// Whether the edge from cover node `u` to a free node is kept.
    fn admit_free(&mut self, u: u32) -> bool {
        let count = &mut self.count[u as usize];
        if *count < self.keep {
            *count += 1;
            return true;
        }
        if *count == self.keep {
            *count += 1;
            self.cut.push(u);
        }
        false
    }
}

impl GreedyKernel {
    /// The rows walked in ranges on `threads` threads, each range keeping
    /// its own first `keep` per node; then the first `keep` over the ranges
    /// in row order: the stable-order kernel, whatever `threads`.
    ///
    /// The first range's own counts are the stable order's, so only the
    /// later ranges' free edges are admitted again, after the earlier
    /// ones'; edges inside C are always kept and stay where they are.
    fn collect(graph: &ConflictGraph, greedy: &GreedyCover, keep: u32, threads: usize) -> Self {
        // Four ranges a thread, taken as threads come free: a free row's
        // edge costs less than a cover row's, so equal edges were not equal
        // time (with a range a thread, a fifth of a core-second idle at
        // 10^6 Tax rows).
        let threads = threads.max(1);
        let ranges = graph.balanced_shard_ranges(4 * threads);
        let next = AtomicUsize::new(0);
        let mut parts: Vec<(usize, Part)> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads.min(ranges.len()))
                .map(|_| {
                    scope.spawn(|| {
                        let mut done = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(range) = ranges.get(i) else { break done };
                            done.push((i, GreedyKernel::walk(graph, range.clone(), greedy, keep)));
                        }
                    })
                })
                .collect();
            handles.into_iter().flat_map(|h| h.join().expect("kernel thread panicked")).collect()
        });
        parts.sort_unstable_by_key(|&(i, _)| i);
        let parts = parts.into_iter().map(|(_, part)| part);
        let mut kernel = GreedyKernel { inner: Vec::new(), free: Vec::new(), cut: Vec::new() };
        let mut kept: Option<Kept> = None;
        for mut part in parts {
            match &mut kept {
                None => kept = Some(part.kept),
                Some(kept) => {
                    part.free
                        .retain(|&e| kept.admit(e, greedy.contains(e.u), greedy.contains(e.v)));
                    kernel.cut.extend(part.kept.cut);
                }
            }
            kernel.inner.push(part.inner);
            kernel.free.push(part.free);
        }
        kernel.cut.extend(kept.map(|k| k.cut).unwrap_or_default());
        kernel.cut.sort_unstable();
        kernel.cut.dedup();
        kernel
    }

    /// The kernel's share from the rows of `shards`.
    ///
    /// Most edges join a free row to a cover node that was cut long
    /// before (a dirty row with thousands of clean neighbours): a bitset of
    /// the cover nodes still open (in C, not cut) answers those from cache,
    /// where [`Kept`]'s 4-byte counters would miss it at every edge, and a
    /// chunk with no open node is passed over whole. A cut cover row keeps
    /// its neighbours in C only, compacted without a branch per edge (which
    /// way it goes is a coin toss there).
    fn walk(
        graph: &ConflictGraph,
        shards: std::ops::Range<usize>,
        greedy: &GreedyCover,
        keep: u32,
    ) -> Part {
        let (mut inner, mut free) = (Vec::new(), Vec::new());
        let mut kept = Kept::new(graph.nodes(), keep);
        let cover = greedy.bits();
        let mut open = cover.to_vec();
        let bit = |bits: &[u64], v: u32| bits[(v / 64) as usize] >> (v % 64) & 1 == 1;
        graph.for_each_row(shards, |u, upper| {
            let _ = upper.chunks(|chunk| {
                if !bit(cover, u) {
                    // Every neighbour of a free row is in C (the matching is maximal).
                    debug_assert!(chunk.iter().all(|&v| bit(cover, v)), "greedy cover misses {u}");
                    let any =
                        chunk.iter().fold(0, |any, &v| any | open[(v / 64) as usize] >> (v % 64));
                    if any & 1 == 0 {
                        return ControlFlow::<()>::Continue(());
                    }
                    for &v in chunk {
                        if !bit(&open, v) {
                            continue;
                        }
                        let e = Edge { u, v };
                        if kept.admit(e, false, true) {
                            free.push(e);
                        } else {
                            open[(v / 64) as usize] &= !(1 << (v % 64));
                        }
                    }
                } else if bit(&open, u) {
                    for &v in chunk {
                        let e = Edge { u, v };
                        if bit(cover, v) {
                            inner.push(e);
                        } else if kept.admit(e, true, false) {
                            free.push(e);
                        }
                    }
                    if kept.is_cut(u) {
                        open[(u / 64) as usize] &= !(1 << (u % 64));
                    }
                } else {
                    let start = inner.len();
                    inner.resize(start + chunk.len(), Edge { u, v: 0 });
                    let mut at = start;
                    for &v in chunk {
                        inner[at].v = v;
                        at += (cover[(v / 64) as usize] >> (v % 64) & 1) as usize;
                    }
                    inner.truncate(at);
                }
                ControlFlow::Continue(())
            });
        });
        Part { inner, free, kept }
    }

    /// The kernel as an adjacency on its own nodes, numbered in id order,
    /// and each node's number there; built on `threads` threads. Renumbers
    /// the edges in place. Every cover node is in G[C] (its matched edge),
    /// so the nodes are C and the free ends of the kept edges.
    fn adjacency(
        &mut self,
        nodes: u32,
        greedy: &GreedyCover,
        threads: usize,
    ) -> (Adjacency, Vec<u32>) {
        const ABSENT: u32 = u32::MAX;
        let mut id = vec![ABSENT; nodes as usize];
        for (w, &word) in greedy.bits().iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                id[w * 64 + bits.trailing_zeros() as usize] = 0;
                bits &= bits - 1;
            }
        }
        for e in self.free.iter().flatten() {
            id[e.u as usize] = 0;
            id[e.v as usize] = 0;
        }
        let mut next = 0;
        for slot in id.iter_mut().filter(|slot| **slot != ABSENT) {
            *slot = next;
            next += 1;
        }
        // Renumbered in pieces of about equal size, shared out in order.
        const PIECE: usize = 1 << 20;
        let threads = threads.max(1);
        let mut pieces: Vec<&mut [Edge]> =
            self.inner.iter_mut().chain(&mut self.free).flat_map(|e| e.chunks_mut(PIECE)).collect();
        let share = pieces.len().div_ceil(threads).max(1);
        std::thread::scope(|scope| {
            for group in pieces.chunks_mut(share) {
                let id = &id;
                scope.spawn(move || {
                    for e in group.iter_mut().flat_map(|piece| piece.iter_mut()) {
                        *e = Edge { u: id[e.u as usize], v: id[e.v as usize] };
                    }
                });
            }
        });
        let streams: Vec<&[Edge]> =
            self.inner.iter().chain(&self.free).map(Vec::as_slice).collect();
        (Adjacency::from_streams(next, &streams, threads), id)
    }
}

#[cfg(test)]
mod tests {
    use dpincon_graph::{EdgeSink, GraphBuilder};

    use super::*;
    use crate::walk;

    /// The kernel walked row by row, on threads, is its definition: Λ
    /// edge by edge through one [`Kept`].
    #[test]
    fn the_kernel_is_the_first_free_neighbours_in_stable_order() {
        let n = 2_000u32;
        for seed in 1..=4u64 {
            let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let mut next = |m: u32| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (state >> 33) as u32 % m
            };
            let mut builder = GraphBuilder::with_shard_nodes(n, 97);
            // Hubs (cut for small `keep`) and a random sprinkle.
            for _ in 0..6 {
                let hub = next(n);
                for _ in 0..150 {
                    let v = next(n);
                    if v != hub {
                        builder.add(hub, v);
                    }
                }
            }
            for _ in 0..3_000 {
                let (a, b) = (next(n), next(n));
                if a != b {
                    builder.add(a, b);
                }
            }
            let graph = builder.finish();
            let mut greedy = GreedyCover::new(n);
            walk(graph.edges(), &mut [&mut greedy]);
            for keep in [1, 3, 32] {
                let mut kept = Kept::new(n, keep);
                let want: Vec<Edge> = graph
                    .edges()
                    .filter(|&e| kept.admit(e, greedy.contains(e.u), greedy.contains(e.v)))
                    .collect();
                let mut want_cut = kept.cut;
                want_cut.sort_unstable();
                assert!(keep > 3 || !want_cut.is_empty(), "hubs are cut");
                for threads in [1, 2, 3] {
                    let got = GreedyKernel::collect(&graph, &greedy, keep, threads);
                    let inside = |e: &Edge| greedy.contains(e.u) && greedy.contains(e.v);
                    let (want_inner, want_free): (Vec<Edge>, Vec<Edge>) =
                        want.iter().partition(|e| inside(e));
                    let context = format!("seed {seed}, keep {keep}, {threads} threads");
                    assert_eq!(got.inner.concat(), want_inner, "{context}");
                    assert_eq!(got.free.concat(), want_free, "{context}");
                    let ranges = graph.balanced_shard_ranges(4 * threads).len();
                    assert_eq!(got.inner.len(), ranges, "{context}");
                    assert_eq!(got.cut, want_cut, "seed {seed}, keep {keep}, {threads} threads");
                }
            }
        }
    }
}
