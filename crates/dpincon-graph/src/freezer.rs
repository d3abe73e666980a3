//! Finishing the graph: each row built once, frozen, a shard per thread.
//!
//! A row of a 10^6-row Tax table conflicts under several FDs: merging one
//! bitmap per constraint into it reallocated its containers at every
//! merge, most of detection's time. So multipartite groups are held back
//! until the graph is finished, and pairs and a cluster's rows arrive as
//! row records (`encoded.rs`); then a row's neighbours from all its groups
//! and records are marked in a dense bit array, read back ascending and
//! written once into the shard's [`FrozenShard`]. A row with one source is
//! copied from it; a few records alone are merged container by container.
//! A shard spilled while it was built is merged with its segments and
//! written back frozen.

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::buckets::bucket_by_row;
use crate::container::BITMAP_WORDS;
use crate::encoded::{EncodedRow, records};
use crate::frozen::UnionScratch;
use crate::graph::balanced_ranges;
use crate::spill::{Segment, SpillStore};
use crate::{FrozenShard, Multipartite, UpperStart};

/// The rows `share` (positions in the group's (class, id) order) of a
/// group, whose upper rows are still to be added.
pub(crate) type Share = (Arc<Multipartite>, Range<usize>);

/// One row's part in one group: the index of its share, and the row with
/// where its upper rows start.
type Entry = (u32, UpperStart);

/// At most this many records of a row are merged container by container
/// (a cluster's groups); more (a row spilled many times) go through the
/// dense scratch, whose cost does not grow with their number.
const MERGE_RECORDS: usize = 8;

/// What a shard holds when the graph is finished: its row records, in
/// chunks.
pub(crate) type ShardParts = Vec<Vec<u8>>;

/// A shard frozen: in memory, or (spilled while built) a placeholder with
/// where it was written back and its edge count.
pub(crate) type Frozen = (FrozenShard, Option<(Segment, u64)>);

/// Freezes every shard (node ranges of `shard_nodes` ids each) with the
/// upper rows of every share added, spread over `threads` threads by
/// shard. With a spill store and a budget `(store, keep)`, a shard the
/// store holds segments of is merged with them, and a frozen shard that
/// was spilled, or that would take the shards kept in memory past `keep`
/// bytes, is written to the store (an empty placeholder is returned with
/// its segment and edge count).
pub(crate) fn freeze_shards(
    shards: Vec<ShardParts>,
    shard_nodes: u32,
    nodes: u32,
    shares: &[Share],
    spill: Option<(&SpillStore, u64)>,
    threads: usize,
) -> Vec<Frozen> {
    let store = spill.map(|(store, _)| store);
    let kept = AtomicU64::new(0);
    let pieces = entries_by_shard(shares, shards.len(), shard_nodes, threads);
    // Shard k with its spilled segments, frozen; written back if spilled.
    let freeze_one = |freezer: &mut Freezer, k: usize, received: ShardParts| {
        let spilled = store.filter(|s| s.spilled(k)).map(|s| s.load_records(k));
        let mut sources: Vec<&[u8]> = received.iter().map(Vec::as_slice).collect();
        sources.extend(spilled.iter().flatten().map(Vec::as_slice));
        let first = k as u32 * shard_nodes;
        let len = shard_nodes.min(nodes - first);
        let entries = pieces.iter().flat_map(|p| &p[k]);
        let shard = freezer.freeze(first, len, &sources, entries, shares);
        // Kept in memory if it fits what is left of `keep` (and counted).
        let over = |keep: u64| {
            let bytes = shard.heap_bytes();
            let fits = |k: u64| (k + bytes <= keep).then_some(k + bytes);
            kept.fetch_update(Ordering::Relaxed, Ordering::Relaxed, fits).is_err()
        };
        match spill {
            Some((store, keep)) if spilled.is_some() || over(keep) => {
                let segment = store.append(&shard.to_bytes());
                let placeholder = FrozenShard::empty(shard.first(), shard.len());
                (placeholder, Some((segment, shard.edge_count())))
            }
            _ => (shard, None),
        }
    };
    let work: Vec<_> = shards.into_iter().map(|w| std::sync::Mutex::new(Some(w))).collect();
    let next = AtomicUsize::new(0);
    let mut frozen: Vec<(usize, Frozen)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads.min(work.len()).max(1))
            .map(|_| {
                scope.spawn(|| {
                    let mut freezer = Freezer::new(nodes);
                    let mut done = Vec::new();
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some(slot) = work.get(k) else { break done };
                        let taken = slot.lock().expect("shard lock").take();
                        let parts = taken.expect("each shard is taken once");
                        done.push((k, freeze_one(&mut freezer, k, parts)));
                    }
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("freezing thread panicked")).collect()
    });
    frozen.sort_unstable_by_key(|&(k, _)| k);
    frozen.into_iter().map(|(_, shard)| shard).collect()
}

/// Each share's rows with rows above them ([`Multipartite::uppers`]), as
/// entries by shard: one list per shard from each of `threads` runs of
/// shares of about equal rows, found side by side (on one thread, about
/// 0.1 s at 10^6 Tax rows with the other core idle).
fn entries_by_shard(
    shares: &[Share],
    shard_count: usize,
    shard_nodes: u32,
    threads: usize,
) -> Vec<Vec<Vec<Entry>>> {
    let rows: Vec<u64> = shares.iter().map(|s| s.1.len() as u64).collect();
    std::thread::scope(|scope| {
        let handles: Vec<_> = balanced_ranges(&rows, threads)
            .into_iter()
            .map(|run| {
                scope.spawn(move || {
                    let mut entries = vec![Vec::new(); shard_count];
                    for (g, (group, share)) in
                        shares.iter().enumerate().take(run.end).skip(run.start)
                    {
                        for start in group.uppers(share.clone()) {
                            entries[(start.row / shard_nodes) as usize].push((g as u32, start));
                        }
                    }
                    entries
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("entries thread panicked")).collect()
    })
}

/// What freezing a shard needs besides the shard, reused across shards.
pub(crate) struct Freezer {
    scratch: DenseScratch,
    union: UnionScratch,
    values: Vec<u32>,
    /// Containers and values of the last shard frozen: shards of one
    /// table are alike, so the next one reserves about as much and its
    /// vectors rarely grow (each doubling copies and faults in fresh pages).
    last: (usize, usize),
}

impl Freezer {
    pub(crate) fn new(nodes: u32) -> Self {
        Freezer {
            scratch: DenseScratch::new(nodes),
            union: UnionScratch::default(),
            values: Vec::new(),
            last: (0, 0),
        }
    }

    /// The shard of nodes `first..first + len`: the union of the row
    /// records of `sources` and the upper rows of the `shares` its
    /// `entries` name, frozen.
    pub(crate) fn freeze<'a>(
        &mut self,
        first: u32,
        len: u32,
        sources: &[&[u8]],
        entries: impl Iterator<Item = &'a Entry> + Clone,
        shares: &[Share],
    ) -> FrozenShard {
        let Freezer { scratch, union, values, last } = self;
        // By row; a row's groups and records in any order (the union does
        // not care). Records were checked when they came in, or written
        // here (the spill file).
        let (sorted, starts) = bucket_by_row(entries, first, len, |e| e.1.row);
        let rows: Vec<EncodedRow<'_>> = sources
            .iter()
            .flat_map(|bytes| records(bytes))
            .map(|r| r.unwrap_or_else(|e| panic!("graph: a kept row record does not parse: {e}")))
            .collect();
        let keyed: Vec<(u32, u32)> =
            rows.iter().enumerate().map(|(i, r)| (r.node, i as u32)).collect();
        let (by_row, row_starts) = bucket_by_row(keyed.iter(), first, len, |r| r.0);
        let mut mine = Vec::new();
        let room = |n: usize| n + n / 8;
        let mut out = FrozenShard::with_capacity(first, len, room(last.0), room(last.1));
        for k in 0..len as usize {
            let groups = &sorted[starts[k] as usize..starts[k + 1] as usize];
            let records = &by_row[row_starts[k] as usize..row_starts[k + 1] as usize];
            match (groups, records) {
                ([], []) => out.push_empty(1),
                ([], [(_, r)]) => out.push_record(&rows[*r as usize]),
                ([], _) if records.len() <= MERGE_RECORDS => {
                    // Only a few records: merged container by container.
                    mine.clear();
                    mine.extend(records.iter().map(|&(_, r)| rows[r as usize]));
                    out.push_union(&mine, union);
                }
                ([(g, start)], []) => {
                    // One group and no pair: its upper row comes out ascending.
                    values.clear();
                    shares[*g as usize].0.for_each_upper(*start, |v| values.push(v));
                    out.push_sorted(values);
                }
                _ => {
                    for &(g, start) in groups {
                        shares[g as usize].0.for_each_upper(start, |v| scratch.set(v));
                    }
                    for &(_, r) in records {
                        scratch.set_record(&rows[r as usize]);
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

    /// Sets every value of a row record: an array's one by one, a
    /// bitmap's a 64-bit word at a time.
    fn set_record(&mut self, row: &EncodedRow<'_>) {
        for c in row.containers() {
            let base = u32::from(c.key) << 16;
            let at = c.offset as usize;
            if !c.is_bitmap() {
                (at..at + c.card()).for_each(|i| self.set(base | u32::from(row.unit(i))));
                continue;
            }
            for j in 0..BITMAP_WORDS / 4 {
                let word =
                    (0..4).fold(0u64, |w, q| w | u64::from(row.unit(at + 4 * j + q)) << (16 * q));
                if word != 0 {
                    let w = (base / 64) as usize + j;
                    self.words[w] |= word;
                    self.summary[w / 64] |= 1 << (w % 64);
                    self.lo = self.lo.min(w / 64);
                    self.hi = self.hi.max(w / 64 + 1);
                }
            }
        }
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
    use crate::{Edge, EdgeSink, GraphBuilder, GraphError, Multipartite, PieceError, SpillConfig};

    /// Groups over `n` nodes: four large ones (members drawn from the
    /// pairs, classes by a member's value mod `classes`, some classes
    /// holding most rows) and many small ones.
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
        // Many small groups (3 to 9 rows, classes by value mod 3), so rows
        // lie in several groups as well as in pairs.
        for (i, pair) in pseudo_random_pairs(n, 300, 7).into_iter().enumerate() {
            let mut rows: Vec<u32> =
                (0..3 + i as u32 % 7).map(|j| (pair.0 + j * pair.1) % n).collect();
            rows.sort_unstable();
            rows.dedup();
            let mut by_class: Vec<Vec<u32>> = vec![Vec::new(); 3];
            rows.iter().for_each(|&r| by_class[(r % 3) as usize].push(r));
            out.push(Multipartite::new(by_class.iter().map(Vec::as_slice)));
        }
        out
    }

    /// Shares of groups merged with pairs on the same rows give the union
    /// of their edges: deferred (no limit, one or two writers, uneven
    /// shares) or added at once (under a memory limit that spills); and a
    /// builder's parts handed to another (a cluster's executor to its
    /// coordinator, groups rebuilt from their classes) give the same.
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
        let new_builder = |spill: bool| {
            if spill {
                GraphBuilder::with_spill(n, &config).unwrap()
            } else {
                GraphBuilder::with_shard_nodes(n, 500)
            }
        };
        let build = |spill: bool, writers: usize| {
            let builder = new_builder(spill);
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
            builder
        };
        for spill in [false, true] {
            for writers in [1usize, 2] {
                let got: Vec<Edge> = build(spill, writers).finish_on(writers).edges().collect();
                assert_eq!(got, want, "spill {spill}, {writers} writers");
                let parts = build(spill, writers).into_parts();
                assert_eq!(parts.groups.len(), groups.len(), "each group once");
                let coordinator = new_builder(!spill);
                coordinator.add_rows(&parts.records).unwrap();
                for (group, shares) in &parts.groups {
                    let classes: Vec<Vec<u32>> = group.classes().map(<[u32]>::to_vec).collect();
                    let rebuilt = Arc::new(Multipartite::try_new(&classes, n).unwrap());
                    coordinator.add_shares(&rebuilt, shares).unwrap();
                }
                let got: Vec<Edge> = coordinator.finish_on(2).edges().collect();
                assert_eq!(got, want, "handed over: spill {spill}, {writers} writers");
            }
        }
        // Groups from elsewhere are checked.
        let bad = |classes: &[Vec<u32>]| Multipartite::try_new(classes, 10).unwrap_err();
        assert_eq!(bad(&[vec![3, 2]]), PieceError::ClassOutOfOrder);
        assert_eq!(bad(&[vec![1, 3], vec![3]]), PieceError::RowInTwoClasses);
        assert_eq!(bad(&[vec![1, 10]]), PieceError::GroupRowOutside { nodes: 10 });
        let group = Arc::new(Multipartite::try_new(&[vec![1], vec![2]], 10).unwrap());
        let past = 0..3;
        let err =
            GraphBuilder::new(10).add_shares(&group, std::slice::from_ref(&past)).unwrap_err();
        assert_eq!(err, GraphError::BadRows(PieceError::BadShare { share: past, rows: 2 }));
    }

    /// Rows sent whole as records (a cluster's executors), split over
    /// several senders with overlaps, and mixed with pairs and groups, give
    /// the graph of the union: in memory or spilled, one thread or two.
    #[test]
    fn row_records_pairs_and_groups_give_the_union_of_their_edges() {
        let n = 140_000;
        let pairs = pseudo_random_pairs(n, 30_000, 4);
        // Rows with a dense block (a bitmap container) and far neighbours.
        let mut rows: Vec<(u32, Vec<u32>)> = (0..400u32)
            .map(|i| {
                let u = i * 331;
                let mut vs: Vec<u32> =
                    (1..60).map(|j| (u + j * j * 37) % n).filter(|&v| v > u).collect();
                if i % 50 == 0 {
                    vs.extend(u + 1..(u + 5_000).min(n));
                }
                vs.sort_unstable();
                vs.dedup();
                (u, vs)
            })
            .collect();
        rows.retain(|(_, vs)| !vs.is_empty());
        let groups: Vec<Arc<Multipartite>> = groups(n).into_iter().map(Arc::new).collect();
        let mut want: Vec<Edge> = pairs.iter().map(|&(a, b)| Edge::new(a, b)).collect();
        want.extend(rows.iter().flat_map(|(u, vs)| vs.iter().map(|&v| Edge::new(*u, v))));
        for group in &groups {
            group.emit_rows(0..group.len(), &mut want);
        }
        want.sort_unstable();
        want.dedup();
        // Three senders: each row's values split in two overlapping halves,
        // every third row sent twice.
        let mut pieces = vec![Vec::new(); 3];
        for (i, (u, vs)) in rows.iter().enumerate() {
            let cut = vs.len() / 2;
            crate::encode_row(&mut pieces[i % 3], *u, &vs[..=cut.min(vs.len() - 1)]);
            crate::encode_row(&mut pieces[(i + 1) % 3], *u, &vs[cut..]);
            if i % 3 == 0 {
                crate::encode_row(&mut pieces[2], *u, vs);
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let config = SpillConfig { dir: dir.path().to_path_buf(), memory_limit: 16 << 10 };
        for spill in [false, true] {
            for threads in [1usize, 2] {
                let builder = if spill {
                    GraphBuilder::with_spill(n, &config).unwrap()
                } else {
                    GraphBuilder::new(n)
                };
                std::thread::scope(|scope| {
                    for piece in &pieces {
                        let builder = &builder;
                        scope.spawn(move || builder.add_rows(piece).unwrap());
                    }
                    let mut writer = builder.writer();
                    pairs.iter().for_each(|&(a, b)| writer.add(a, b));
                    for group in &groups {
                        writer.add_multipartite(group, 0..group.len());
                    }
                });
                if spill {
                    assert!(builder.spilled_bytes() > 0, "the tiny budget must force spills");
                }
                let graph = builder.finish_on(threads);
                assert_eq!(graph.edge_count(), want.len() as u64);
                let got: Vec<Edge> = graph.edges().collect();
                assert_eq!(got, want, "spill {spill}, {threads} threads");
            }
        }
    }

    #[test]
    fn malformed_row_records_are_an_error_and_add_nothing() {
        let builder = GraphBuilder::new(100);
        let mut bytes = Vec::new();
        crate::encode_row(&mut bytes, 3, &[4, 99]);
        crate::encode_row(&mut bytes, 5, &[6, 100]);
        let err = builder.add_rows(&bytes).unwrap_err();
        assert!(err.to_string().contains("neighbour 100 outside"), "{err}");
        let err = builder.add_rows(&bytes[..7]).unwrap_err();
        assert!(err.to_string().contains("cut short"), "{err}");
        assert_eq!(builder.finish().edge_count(), 0);
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
