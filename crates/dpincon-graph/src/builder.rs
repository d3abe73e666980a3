//! Building the graph from the pairs detection finds, shard by shard.

use std::ops::Range;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use crate::buckets::bucket_by_row_into;
use crate::encoded::{EncodedRow, encode_row};
use crate::freezer::{Share, freeze_shards};
use crate::spill::{SpillConfig, SpillStore};
use crate::{ConflictGraph, Edge, GraphError, Multipartite, PieceError};

/// Where detection puts the conflicting pairs it finds.
///
/// Pairs may arrive in any order and more than once (a pair violating
/// several constraints, or both orientations of one); the graph keeps one edge.
pub trait EdgeSink {
    /// Records that tuples `a` and `b` (`a != b`) conflict.
    fn add(&mut self, a: u32, b: u32);

    /// Records that tuple `a` conflicts with every tuple of `upper`,
    /// ascending and all above `a`: a whole row of Λ at once, which a sink
    /// that stores rows keeps as it comes, without buffering and sorting
    /// each pair.
    fn add_upper(&mut self, a: u32, upper: &[u32]) {
        debug_assert!(upper.windows(2).all(|w| w[0] < w[1]), "an upper row ascends");
        debug_assert!(
            upper.first().is_none_or(|&b| b > a),
            "an upper row holds tuples above its own"
        );
        for &b in upper {
            self.add(a, b);
        }
    }

    /// Records the conflicts of the rows at positions `share` of `group`
    /// (in its (class, id) order) with the group's rows of other classes
    /// above them. An FD or key group is complete multipartite (SPEC §2),
    /// so detection hands it over whole; by default its rows go to
    /// [`EdgeSink::add_upper`] one by one.
    fn add_multipartite(&mut self, group: &Arc<Multipartite>, share: Range<usize>) {
        group.emit_rows(share, self);
    }
}

impl EdgeSink for Vec<Edge> {
    fn add(&mut self, a: u32, b: u32) {
        self.push(Edge::new(a, b));
    }
}

/// What a builder holds before it is frozen ([`GraphBuilder::into_parts`]):
/// its row records and its multipartite groups with the shares of their
/// rows still to be added. Another builder given them
/// ([`GraphBuilder::add_rows`], [`GraphBuilder::add_shares`]) builds the
/// same graph: how a cluster's executors hand over their partitions.
#[derive(Debug, Default)]
pub struct BuilderParts {
    /// Row records (`encoded.rs`), shard by shard.
    pub records: Vec<u8>,
    /// Each group once, with its shares (positions in its (class, id)
    /// order).
    pub groups: Vec<(Arc<Multipartite>, Vec<Range<usize>>)>,
}

/// Pairs buffered per shard before they are sorted into row records: large
/// enough to amortise the sort, small enough to bound memory (8 B a pair).
const FLUSH_PAIRS: usize = 1 << 19;

/// Bytes a row of a kept multipartite share is taken to cost until the
/// graph is finished: the group's own arrays (about 16 bytes a row) and
/// the freeze's entry for it (16, if it has rows above it).
const SHARE_ROW_BYTES: i64 = 32;

/// Default number of node ids per shard.
pub const DEFAULT_SHARD_NODES: u32 = 1 << 16;

/// Small runs of row records are kept in chunks of this many bytes, and a
/// run of a quarter of that or more (a writer's flush) in a chunk of its
/// own size; each chunk is allocated once and never moved. One vector
/// doubling as records came copied the shard's records again at each
/// doubling, and freed memory the next allocations faulted in afresh (at
/// 10^6 Tax rows about an eighth of the job's CPU time was the kernel's,
/// faulting pages in).
const RECORD_CHUNK: usize = 1 << 20;

#[derive(Debug, Default)]
struct Slot {
    /// The shard's row records (`encoded.rs`): its pairs, sorted and
    /// encoded by the writers, and rows received whole, checked; in
    /// chunks ([`RECORD_CHUNK`]).
    records: Vec<Vec<u8>>,
    /// Bytes of the records in memory (their chunks' capacity).
    bytes: i64,
}

impl Slot {
    /// Appends row records: into the last chunk while they fit, else a
    /// large run (a writer's flush) as a chunk of its own size and a small
    /// one into a new chunk. Returns the bytes new chunks took (their
    /// capacity: what they hold in memory).
    fn append_records(&mut self, bytes: &[u8]) -> i64 {
        match self.records.last_mut() {
            Some(last) if last.capacity() - last.len() >= bytes.len() => {
                last.extend_from_slice(bytes);
                0
            }
            _ if bytes.len() >= RECORD_CHUNK / 4 => {
                // Before the last chunk, which small runs keep filling.
                let at = self.records.len().saturating_sub(1);
                self.records.insert(at, bytes.to_vec());
                bytes.len() as i64
            }
            _ => {
                let mut chunk = Vec::with_capacity(RECORD_CHUNK);
                chunk.extend_from_slice(bytes);
                self.records.push(chunk);
                RECORD_CHUNK as i64
            }
        }
    }
}

#[derive(Debug)]
struct Budget {
    limit: i64,
    store: Mutex<SpillStore>,
    total: AtomicI64,
}

/// Builds a [`ConflictGraph`] from pairs arriving in any order, from any
/// number of threads.
///
/// Each thread writes through its own [`ShardWriter`] (or the builder's own
/// [`EdgeSink`] implementation): pairs are buffered per shard, sorted by the
/// writer, and kept as row records under that shard's lock only. There is one copy of the
/// adjacency however many threads write. Multipartite groups are kept and
/// their rows added at [`GraphBuilder::finish`], each row built once with
/// its pairs (`freezer.rs`).
#[derive(Debug)]
pub struct GraphBuilder {
    nodes: u32,
    shard_nodes: u32,
    /// log2 of `shard_nodes` when it is a power of two (the default): a
    /// pair's shard is then a shift, not a division (at 10^8 pairs the
    /// division was a visible part of detection).
    shard_shift: Option<u32>,
    slots: Vec<Mutex<Slot>>,
    flush_pairs: usize,
    budget: Option<Budget>,
    pending: Vec<Vec<(u32, u32)>>,
    /// The builder's own sink's row values while it absorbs ([`RowValues`]).
    scratch: RowValues,
    /// Multipartite shares whose rows are added when the graph is
    /// finished (`freezer.rs`); under a budget their rows' bytes
    /// ([`SHARE_ROW_BYTES`]) count against it.
    shares: Mutex<Vec<Share>>,
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
        let slots = (0..count).map(|_| Mutex::default()).collect();
        GraphBuilder {
            nodes,
            shard_nodes,
            shard_shift: shard_nodes.is_power_of_two().then(|| shard_nodes.trailing_zeros()),
            slots,
            flush_pairs: FLUSH_PAIRS,
            budget: None,
            pending: vec![Vec::new(); count],
            scratch: RowValues::default(),
            shares: Mutex::new(Vec::new()),
        }
    }

    /// A builder that keeps about `config.memory_limit` bytes of adjacency
    /// in memory, spilling shards to a temporary file in `config.dir`
    /// beyond that. The result does not depend on the limit.
    pub fn with_spill(nodes: u32, config: &SpillConfig) -> std::io::Result<Self> {
        let mut builder = Self::new(nodes);
        let shards = builder.slots.len().max(1);
        // Writers' buffers take limit/32 each and come out of the limit:
        // the records get 7/8 of it, room for four writers.
        let per_shard = config.memory_limit as usize / (32 * 8 * shards);
        builder.flush_pairs = per_shard.clamp(1 << 12, FLUSH_PAIRS);
        let records = config.memory_limit - config.memory_limit / 8;
        builder.budget = Some(Budget {
            limit: i64::try_from(records).unwrap_or(i64::MAX),
            store: Mutex::new(SpillStore::new(config, builder.slots.len())?),
            total: AtomicI64::new(0),
        });
        Ok(builder)
    }

    /// Number of nodes of the graph being built.
    pub fn nodes(&self) -> u32 {
        self.nodes
    }

    /// Bytes written to the spill file so far (0 without a budget).
    pub fn spilled_bytes(&self) -> u64 {
        self.budget.as_ref().map_or(0, |b| b.store.lock().expect("spill lock").bytes_written())
    }

    /// A sink for one thread; it flushes what it buffered when dropped.
    pub fn writer(&self) -> ShardWriter<'_> {
        ShardWriter {
            builder: self,
            pending: vec![Vec::new(); self.slots.len()],
            scratch: RowValues::default(),
            shares: Vec::new(),
        }
    }

    fn shard_of(&self, u: u32) -> usize {
        match self.shard_shift {
            Some(shift) => (u >> shift) as usize,
            None => (u / self.shard_nodes) as usize,
        }
    }

    /// Absorbs `pairs` (all of shard `k`) under the shard's lock, as one
    /// row record per row (its values sorted, each once), `scratch` holding
    /// the rows' values meanwhile.
    fn absorb(&self, k: usize, pairs: &mut Vec<(u32, u32)>, scratch: &mut RowValues) {
        if pairs.is_empty() {
            return;
        }
        let first = k as u32 * self.shard_nodes;
        // Pairs are kept as row records (8 bytes a row, 4 a container, 2 a
        // value) and unioned at the freeze, as a cluster's pieces are. In a
        // roaring bitmap per row a pair alone in its row and key (the
        // scattered pairs of constraints without equality) took a container
        // of ~66 bytes: a 10^7-row Tax build under 6 GiB did not finish, and
        // the 10^6 default job is 8% faster so.
        scratch.fill(pairs, first, self.shard_nodes);
        let mut records = std::mem::take(&mut scratch.records);
        records.clear();
        scratch.for_each_row(|u, values| encode_row(&mut records, u, values));
        self.update(k, |slot| slot.append_records(&records));
        scratch.records = records;
        pairs.clear();
    }

    /// Adds the row `upper` of node `u` (ascending, all above `u`), as one
    /// row record, under its shard's lock.
    fn absorb_upper(&self, u: u32, upper: &[u32]) {
        debug_assert!(upper.last().is_none_or(|&v| v < self.nodes));
        if upper.is_empty() {
            return;
        }
        let mut record = Vec::new();
        encode_row(&mut record, u, upper);
        self.update(self.shard_of(u), |slot| slot.append_records(&record));
    }

    /// Adds row records encoded by [`encode_row`](crate::encode_row) (a
    /// cluster executor's adjacency pieces), each checked against the
    /// graph's nodes first. A node's records may come any number of times,
    /// in any order, from any thread; the graph keeps their union.
    pub fn add_rows(&self, mut bytes: &[u8]) -> Result<(), GraphError> {
        while !bytes.is_empty() {
            // A run of records of one shard goes in under one lock.
            let (mut run, mut rest) = (None, bytes);
            while !rest.is_empty() {
                let (row, tail) = EncodedRow::split(rest)?;
                row.check(self.nodes)?;
                match &mut run {
                    None => run = Some((self.shard_of(row.node), row.byte_len())),
                    Some((k, len)) if *k == self.shard_of(row.node) => *len += row.byte_len(),
                    Some(_) => break,
                }
                rest = tail;
            }
            let (k, len) = run.expect("bytes are left");
            let (records, tail) = bytes.split_at(len);
            self.update(k, |slot| slot.append_records(records));
            bytes = tail;
        }
        Ok(())
    }

    /// Adds the upper rows of `group`'s rows at positions `shares` (a
    /// cluster executor's group, its rows checked by
    /// [`Multipartite::try_new`] against this graph's nodes), kept until
    /// the graph is finished as a detector's are.
    pub fn add_shares(
        &self,
        group: &Arc<Multipartite>,
        shares: &[Range<usize>],
    ) -> Result<(), GraphError> {
        if let Some(bad) = shares.iter().find(|s| s.start > s.end || s.end > group.len()) {
            let share = bad.clone();
            return Err(PieceError::BadShare { share, rows: group.len() }.into());
        }
        let mut kept = self.shares.lock().expect("shares lock");
        for share in shares.iter().filter(|s| !s.is_empty()) {
            self.count_share(share);
            kept.push((Arc::clone(group), share.clone()));
        }
        Ok(())
    }

    /// Absorbs the pairs the builder's own [`EdgeSink`] still buffers.
    fn absorb_pending(&mut self) {
        let mut pending = std::mem::take(&mut self.pending);
        let mut scratch = std::mem::take(&mut self.scratch);
        for (k, pairs) in pending.iter_mut().enumerate() {
            self.absorb(k, pairs, &mut scratch);
        }
    }

    /// The row records and groups, unfrozen (see [`BuilderParts`]).
    pub fn into_parts(mut self) -> BuilderParts {
        self.absorb_pending();
        let store = self.budget.map(|b| b.store.into_inner().expect("spill lock"));
        let mut records = Vec::new();
        for (k, slot) in self.slots.into_iter().enumerate() {
            let chunks = slot.into_inner().expect("shard lock").records;
            chunks.iter().for_each(|chunk| records.extend_from_slice(chunk));
            if let Some(store) = store.as_ref().filter(|s| s.spilled(k)) {
                store.load_records(k).iter().for_each(|r| records.extend_from_slice(r));
            }
        }
        // Shares of one group (cut over several writers) go together.
        let mut groups: Vec<(Arc<Multipartite>, Vec<Range<usize>>)> = Vec::new();
        let mut index = std::collections::HashMap::new();
        for (group, share) in self.shares.into_inner().expect("shares lock") {
            let at = *index.entry(Arc::as_ptr(&group)).or_insert_with(|| {
                groups.push((Arc::clone(&group), Vec::new()));
                groups.len() - 1
            });
            groups[at].1.push(share);
        }
        BuilderParts { records, groups }
    }

    /// Counts a kept share's rows against the budget, if any: the records
    /// then spill earlier, and the groups are expanded shard by shard when
    /// the graph is finished (at 10^6 Tax rows under 256 MiB a third less
    /// spilled than with the groups expanded as they came).
    fn count_share(&self, share: &Range<usize>) {
        if let Some(budget) = &self.budget {
            budget.total.fetch_add(share.len() as i64 * SHARE_ROW_BYTES, Ordering::Relaxed);
        }
    }

    /// Applies `change` to shard `k` under its lock; `change` returns how
    /// many bytes the shard grew by, and the shard is spilled when the
    /// budget runs out.
    fn update(&self, k: usize, change: impl FnOnce(&mut Slot) -> i64) {
        let mut slot = self.slots[k].lock().expect("shard lock");
        let grown = change(&mut slot);
        slot.bytes += grown;
        let Some(budget) = &self.budget else { return };
        let total = budget.total.fetch_add(grown, Ordering::Relaxed) + grown;
        if total > budget.limit * 3 / 4 && slot.bytes > 0 {
            // Spill the shard in hand: every shard is flushed often, so the
            // big ones are spilled soon enough, and no second lock is taken.
            // Taken whole: an emptied vector would keep its capacity.
            let records = std::mem::take(&mut slot.records);
            let mut store = budget.store.lock().expect("spill lock");
            records.iter().for_each(|chunk| store.spill(k, chunk));
            budget.total.fetch_sub(slot.bytes, Ordering::Relaxed);
            slot.bytes = 0;
        }
    }

    /// Absorbs what is buffered, adds the kept multipartite
    /// groups' rows and returns the graph, frozen, using every core.
    pub fn finish(self) -> ConflictGraph {
        self.finish_on(std::thread::available_parallelism().map_or(1, |n| n.get()))
    }

    /// [`GraphBuilder::finish`] on `threads` threads (a job's `--threads`):
    /// at 10^6 rows building the rows with their groups takes seconds.
    pub fn finish_on(mut self, threads: usize) -> ConflictGraph {
        self.absorb_pending();
        let shards: Vec<_> =
            self.slots.into_iter().map(|s| s.into_inner().expect("shard lock").records).collect();
        let shares = self.shares.into_inner().expect("shares lock");
        // Under a budget, frozen shards stay in memory while they fit half
        // of it (the groups and the freeze's work take the rest); the
        // others are written to the spill file.
        let keep = self.budget.as_ref().map(|b| u64::try_from(b.limit / 2).unwrap_or(0));
        let store = self.budget.map(|b| b.store.into_inner().expect("spill lock"));
        let (nodes, shard_nodes) = (self.nodes, self.shard_nodes);
        let spill = store.as_ref().zip(keep);
        let frozen = freeze_shards(shards, shard_nodes, nodes, &shares, spill, threads);
        match store {
            None => {
                let shards = frozen.into_iter().map(|(shard, _)| shard).collect();
                ConflictGraph::from_shards(nodes, shards)
                    .expect("the builder's shards tile the node range")
            }
            Some(mut store) => {
                let mut edges = 0;
                let mut shards = Vec::with_capacity(frozen.len());
                for (k, (shard, spilled)) in frozen.into_iter().enumerate() {
                    edges += shard.edge_count();
                    if let Some((segment, spilled_edges)) = spilled {
                        edges += spilled_edges;
                        store.set_frozen(k, segment);
                    }
                    shards.push(shard);
                }
                ConflictGraph::spilled(nodes, shards, store, edges)
            }
        }
    }
}

/// A flush's pairs as rows: each row's values (the pairs' v), sorted, each
/// once. A row's pairs share u, so a counting sort on u moves only v (4
/// bytes, not 8) and each row then sorts plain integers; a small flush
/// sorts its pairs instead of counting over every row of the shard.
#[derive(Debug, Default)]
pub(crate) struct RowValues {
    /// (row, start) of each row with values, ascending, then (·, end).
    rows: Vec<(u32, u32)>,
    values: Vec<u32>,
    starts: Vec<u32>,
    /// The rows encoded, until the shard copies them.
    records: Vec<u8>,
}

impl RowValues {
    /// The rows of `pairs`, whose u lie in `first..first + len`.
    fn fill(&mut self, pairs: &mut [(u32, u32)], first: u32, len: u32) {
        let RowValues { rows, values, starts, .. } = self;
        rows.clear();
        values.clear();
        if pairs.len() < 4096 {
            pairs.sort_unstable();
            for run in pairs.chunk_by(|a, b| a.0 == b.0) {
                rows.push((run[0].0, values.len() as u32));
                values.extend(run.iter().map(|&(_, v)| v));
            }
        } else {
            bucket_by_row_into(pairs.iter(), first, len, |p| p.0, |p| p.1, values, starts);
            for (i, w) in starts.windows(2).enumerate() {
                if w[1] > w[0] {
                    rows.push((first + i as u32, w[0]));
                }
            }
        }
        rows.push((u32::MAX, values.len() as u32));
    }

    /// Calls `f` with each row and its values, ascending and each once.
    fn for_each_row(&mut self, mut f: impl FnMut(u32, &[u32])) {
        for w in self.rows.windows(2) {
            let row = &mut self.values[w[0].1 as usize..w[1].1 as usize];
            row.sort_unstable();
            let mut kept = 0;
            for i in 0..row.len() {
                if i == 0 || row[i] != row[kept - 1] {
                    row[kept] = row[i];
                    kept += 1;
                }
            }
            f(w[0].0, &row[..kept]);
        }
    }
}

/// One thread's way into a [`GraphBuilder`].
#[derive(Debug)]
pub struct ShardWriter<'a> {
    builder: &'a GraphBuilder,
    pending: Vec<Vec<(u32, u32)>>,
    scratch: RowValues,
    shares: Vec<Share>,
}

impl EdgeSink for ShardWriter<'_> {
    fn add(&mut self, a: u32, b: u32) {
        debug_assert!(a < self.builder.nodes && b < self.builder.nodes && a != b);
        let e = Edge::new(a, b);
        let k = self.builder.shard_of(e.u);
        let pending = &mut self.pending[k];
        pending.push((e.u, e.v));
        if pending.len() >= self.builder.flush_pairs {
            self.builder.absorb(k, pending, &mut self.scratch);
        }
    }

    fn add_upper(&mut self, a: u32, upper: &[u32]) {
        self.builder.absorb_upper(a, upper);
    }

    fn add_multipartite(&mut self, group: &Arc<Multipartite>, share: Range<usize>) {
        self.builder.count_share(&share);
        self.shares.push((Arc::clone(group), share));
    }
}

impl Drop for ShardWriter<'_> {
    fn drop(&mut self) {
        for (k, pairs) in self.pending.iter_mut().enumerate() {
            self.builder.absorb(k, pairs, &mut self.scratch);
        }
        self.builder.shares.lock().expect("shares lock").append(&mut self.shares);
    }
}

impl EdgeSink for GraphBuilder {
    fn add(&mut self, a: u32, b: u32) {
        debug_assert!(a < self.nodes && b < self.nodes && a != b);
        let e = Edge::new(a, b);
        let k = self.shard_of(e.u);
        self.pending[k].push((e.u, e.v));
        if self.pending[k].len() >= self.flush_pairs {
            let mut pairs = std::mem::take(&mut self.pending[k]);
            let mut scratch = std::mem::take(&mut self.scratch);
            self.absorb(k, &mut pairs, &mut scratch);
            (self.pending[k], self.scratch) = (pairs, scratch);
        }
    }

    fn add_upper(&mut self, a: u32, upper: &[u32]) {
        self.absorb_upper(a, upper);
    }

    fn add_multipartite(&mut self, group: &Arc<Multipartite>, share: Range<usize>) {
        self.count_share(&share);
        self.shares.get_mut().expect("shares lock").push((Arc::clone(group), share));
    }
}

#[cfg(test)]
mod tests {
    use super::RowValues;

    /// Rows from a counting sort (large flushes) or a pair sort (small
    /// ones) are the pairs grouped by u, each row's v sorted and distinct.
    #[test]
    fn row_values_are_the_pairs_grouped_sorted_and_distinct() {
        let mut state = 3u64;
        let mut scratch = RowValues::default();
        for count in [0, 1, 50, 4_095, 4_096, 50_000] {
            let mut pairs: Vec<(u32, u32)> = (0..count)
                .map(|_| {
                    state =
                        state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    (1000 + (state >> 50) as u32 % 700, 2_000 + (state >> 20) as u32 % 5_000)
                })
                .collect();
            let mut want: Vec<(u32, u32)> = pairs.clone();
            want.sort_unstable();
            want.dedup();
            assert!(count < 4_096 || want.len() < count, "duplicates are met");
            scratch.fill(&mut pairs, 1000, 700);
            let mut got = Vec::new();
            scratch.for_each_row(|u, values| got.extend(values.iter().map(|&v| (u, v))));
            assert_eq!(got, want, "{count} pairs");
        }
    }
}
