//! Finishing the graph: each row built once, frozen.
//!
//! A row of a 10^6-row Tax table conflicts under several FDs: merging one
//! bitmap per constraint into it reallocated its containers at every
//! merge, most of detection's time. So multipartite groups are held back
//! until the graph is finished; then a row's neighbours from all its
//! groups and its pairwise edges are marked in a dense bit array, read back
//! ascending and written once into the shard's [`FrozenShard`]. Rows
//! without groups are copied from their bitmaps.

use std::ops::{ControlFlow, Range};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::builder::bucket_by_row;
use crate::{AdjacencyShard, FrozenShard, Multipartite, row_chunks};

/// The rows `share` (positions in the group's (class, id) order) of a
/// group, whose upper rows are still to be added.
pub(crate) type Share = (Arc<Multipartite>, Range<usize>);

/// One row's part in one group: the row, the index of its share, its class.
type Entry = (u32, u32, u32);

/// Freezes `shards` (node ranges of `shard_nodes` ids each) with the upper
/// rows of every share added, spread over `threads` threads by shard.
pub(crate) fn freeze_shards(
    shards: Vec<AdjacencyShard>,
    shard_nodes: u32,
    nodes: u32,
    shares: &[Share],
    threads: usize,
) -> Vec<FrozenShard> {
    let mut entries: Vec<Vec<Entry>> = vec![Vec::new(); shards.len()];
    for (g, (group, share)) in shares.iter().enumerate() {
        for i in share.clone() {
            let (row, class) = group.row(i);
            entries[(row / shard_nodes) as usize].push((row, g as u32, class));
        }
    }
    let work: Vec<_> =
        shards.into_iter().zip(entries).map(|w| std::sync::Mutex::new(Some(w))).collect();
    let next = AtomicUsize::new(0);
    let mut frozen: Vec<(usize, FrozenShard)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads.min(work.len()).max(1))
            .map(|_| {
                scope.spawn(|| {
                    let mut freezer = Freezer::new(nodes);
                    let mut done = Vec::new();
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some(slot) = work.get(k) else { break done };
                        let taken = slot.lock().expect("shard lock").take();
                        let (shard, entries) = taken.expect("each shard is taken once");
                        done.push((k, freezer.freeze(shard, &entries, shares)));
                    }
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("freezing thread panicked")).collect()
    });
    frozen.sort_unstable_by_key(|&(k, _)| k);
    frozen.into_iter().map(|(_, shard)| shard).collect()
}

/// What freezing a shard needs besides the shard, reused across shards.
pub(crate) struct Freezer {
    scratch: DenseScratch,
    values: Vec<u32>,
    /// Containers and values of the last shard frozen: shards of one
    /// table are alike, so the next one reserves about as much and its
    /// vectors rarely grow (each doubling copies and faults in fresh pages).
    last: (usize, usize),
}

impl Freezer {
    pub(crate) fn new(nodes: u32) -> Self {
        Freezer { scratch: DenseScratch::new(nodes), values: Vec::new(), last: (0, 0) }
    }

    /// `shard`'s rows, with the upper rows of the `shares` its `entries`
    /// name added, frozen.
    pub(crate) fn freeze(
        &mut self,
        shard: AdjacencyShard,
        entries: &[Entry],
        shares: &[Share],
    ) -> FrozenShard {
        let Freezer { scratch, values, last } = self;
        let first = shard.first();
        // By row; a row's groups in any order (the union does not care).
        let (sorted, starts) = bucket_by_row(entries, first, shard.len(), |e| e.0);
        let room = |n: usize| n + n / 8;
        let mut out = FrozenShard::with_capacity(first, shard.len(), room(last.0), room(last.1));
        for (k, pairs) in shard.into_bitmaps().into_iter().enumerate() {
            let u = first + k as u32;
            match (&sorted[starts[k] as usize..starts[k + 1] as usize], pairs.is_empty()) {
                ([], true) => out.push_empty(1),
                ([], false) => out.push_bitmap(&pairs, values),
                ([(_, g, class)], true) => {
                    // One group and no pair: its upper row comes out ascending.
                    values.clear();
                    shares[*g as usize].0.for_each_upper(u, *class, |v| values.push(v));
                    out.push_sorted(values);
                }
                (mine, _) => {
                    let _ = row_chunks(&pairs, |pairs| {
                        pairs.iter().for_each(|&v| scratch.set(v));
                        ControlFlow::<()>::Continue(())
                    });
                    for &(_, g, class) in mine {
                        shares[g as usize].0.for_each_upper(u, class, |v| scratch.set(v));
                    }
                    values.clear();
                    scratch.drain_sorted(values);
                    out.push_sorted(values);
                }
            }
        }
        *last = out.sizes();
        // What was reserved or doubled and not used goes back.
        out.shrink_to_fit();
        out
    }
}

/// A bit per node, and a summary bit per word saying it is non-zero.
struct DenseScratch {
    words: Vec<u64>,
    summary: Vec<u64>,
    /// The summary words that may hold set bits: `lo..hi`.
    lo: usize,
    hi: usize,
}

impl DenseScratch {
    fn new(nodes: u32) -> Self {
        let words = nodes.div_ceil(64) as usize;
        let summary = vec![0; words.div_ceil(64)];
        DenseScratch { words: vec![0; words], summary, lo: usize::MAX, hi: 0 }
    }

    fn set(&mut self, v: u32) {
        let w = (v / 64) as usize;
        self.words[w] |= 1 << (v % 64);
        self.summary[w / 64] |= 1 << (w % 64);
        self.lo = self.lo.min(w / 64);
        self.hi = self.hi.max(w / 64 + 1);
    }

    /// Appends the set bits to `out` ascending and clears them: a sweep
    /// of the summary words between the lowest and highest set bit (at
    /// most 245 for 10^6 nodes), then of the non-zero words only.
    fn drain_sorted(&mut self, out: &mut Vec<u32>) {
        for s in self.lo..self.hi {
            let mut marks = std::mem::take(&mut self.summary[s]);
            while marks != 0 {
                let w = s * 64 + marks.trailing_zeros() as usize;
                marks &= marks - 1;
                let mut bits = std::mem::take(&mut self.words[w]);
                while bits != 0 {
                    out.push(w as u32 * 64 + bits.trailing_zeros());
                    bits &= bits - 1;
                }
            }
        }
        (self.lo, self.hi) = (usize::MAX, 0);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::DenseScratch;
    use crate::test_pairs::pseudo_random_pairs;
    use crate::{Edge, EdgeSink, GraphBuilder, Multipartite, SpillConfig};

    /// Groups over `n` nodes: members drawn from the pairs, classes by a
    /// member's value mod `classes`, some classes holding most rows.
    fn groups(n: u32) -> Vec<Multipartite> {
        let mut out = Vec::new();
        for (i, classes) in [2u32, 3, 7, 40].into_iter().enumerate() {
            let mut rows: Vec<u32> =
                pseudo_random_pairs(n, 300, i as u64).into_iter().map(|p| p.0).collect();
            rows.sort_unstable();
            rows.dedup();
            // Class 0 takes every row whose value is ≡ 0 mod 4 or below n/2.
            let class = |r: u32| if r.is_multiple_of(4) || r < n / 2 { 0 } else { r % classes };
            let mut by_class: Vec<Vec<u32>> = vec![Vec::new(); classes as usize];
            rows.iter().for_each(|&r| by_class[class(r) as usize].push(r));
            out.push(Multipartite::new(by_class.iter().map(Vec::as_slice)));
        }
        out
    }

    /// Shares of groups merged with pairs on the same rows give the union
    /// of their edges: deferred (no limit, one or two writers, uneven
    /// shares) or added at once (under a memory limit that spills).
    #[test]
    fn deferred_groups_and_pairs_give_the_union_of_their_edges() {
        let n = 3_000;
        let pairs = pseudo_random_pairs(n, 20_000, 9);
        let groups: Vec<Arc<Multipartite>> = groups(n).into_iter().map(Arc::new).collect();
        let mut want: Vec<Edge> = pairs.iter().map(|&(a, b)| Edge::new(a, b)).collect();
        for group in &groups {
            group.emit_rows(0..group.len(), &mut want);
        }
        want.sort_unstable();
        want.dedup();
        let dir = tempfile::tempdir().unwrap();
        let config = SpillConfig { dir: dir.path().to_path_buf(), memory_limit: 16 << 10 };
        for spill in [false, true] {
            for writers in [1usize, 2] {
                let builder = if spill {
                    GraphBuilder::with_spill(n, &config).unwrap()
                } else {
                    GraphBuilder::with_shard_nodes(n, 500)
                };
                std::thread::scope(|scope| {
                    for w in 0..writers {
                        let (builder, pairs, groups) = (&builder, &pairs, &groups);
                        scope.spawn(move || {
                            let mut writer = builder.writer();
                            for &(a, b) in pairs.iter().skip(w).step_by(writers) {
                                writer.add(a, b);
                            }
                            for group in groups.iter().skip(w).step_by(writers) {
                                let cut = group.len() / 3;
                                writer.add_multipartite(group, cut..group.len());
                                writer.add_multipartite(group, 0..cut);
                            }
                        });
                    }
                });
                let got: Vec<Edge> = builder.finish_on(writers).edges().collect();
                assert_eq!(got, want, "spill {spill}, {writers} writers");
            }
        }
    }

    #[test]
    fn scratch_returns_each_set_bit_once_ascending_and_clears() {
        let mut scratch = DenseScratch::new(100_000);
        for spread in [1u32, 7, 641, 9_973] {
            let want: Vec<u32> = (0..90).map(|i| (i * spread) % 100_000).collect();
            let mut want_sorted = want.clone();
            want_sorted.sort_unstable();
            want_sorted.dedup();
            for &v in want.iter().rev().chain(&want) {
                scratch.set(v);
            }
            let mut got = Vec::new();
            scratch.drain_sorted(&mut got);
            assert_eq!(got, want_sorted, "spread {spread}");
            assert!(scratch.words.iter().chain(&scratch.summary).all(|&w| w == 0));
        }
    }
}
