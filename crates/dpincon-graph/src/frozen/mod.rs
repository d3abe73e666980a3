//! The graph's rows once built: immutable, in a few flat vectors.
//!
//! While detection runs, a row is a set of row records (`encoded.rs`).
//! Once built it never changes. A roaring bitmap per row, as an earlier
//! version kept, costs a vector of containers plus an allocation per
//! container, with slack: at 330M edges over 8.8M containers that
//! overhead was as large as the values themselves (1.4 GB for 0.66 GB of
//! values). A [`FrozenShard`] keeps roaring's containers (the high 16 bits
//! of a value as a key; the low halves as a sorted array up to 4,096 of
//! them, else as a 65,536-bit bitmap) in three vectors per shard: 2 bytes a
//! value and 8 bytes a container, read front to back by every walk.

use crate::bytes::Reader;
use crate::container::{ARRAY_MAX, BITMAP_WORDS, Container};
use crate::encoded::EncodedRow;

mod row;
#[cfg(test)]
mod tests;

pub(crate) use row::Position;
pub use row::{Block, Row, RowIter};

/// Buffers [`FrozenShard::push_union`] reuses from row to row.
#[derive(Debug, Default)]
pub(crate) struct UnionScratch {
    /// Every record's containers, (record, container), and where each
    /// record's run is still to be read.
    heads: Vec<(u32, Container)>,
    spans: Vec<(usize, usize)>,
    /// The containers of the key being merged.
    same: Vec<(u32, Container)>,
    lows: Vec<u16>,
    merged: Vec<u16>,
    words: Vec<u16>,
}

/// The finished rows of a contiguous node range `first..first + len`; row
/// `k` holds the neighbours `v > first + k` of node `first + k`, ascending.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FrozenShard {
    first: u32,
    /// Row `k`'s containers are `containers[row_containers[k]..row_containers[k + 1]]`.
    row_containers: Vec<u64>,
    /// Row `k`'s values start at `values[row_values[k]]`.
    row_values: Vec<u64>,
    containers: Vec<Container>,
    values: Vec<u16>,
    edges: u64,
}

impl FrozenShard {
    /// A shard starting at node `first`, with no row yet.
    pub fn new(first: u32) -> Self {
        FrozenShard { first, row_containers: vec![0], row_values: vec![0], ..Self::default() }
    }

    /// [`FrozenShard::new`], with room for `rows`, `containers` and
    /// `values` (`u16` units) before any vector grows.
    pub(crate) fn with_capacity(first: u32, rows: u32, containers: usize, values: usize) -> Self {
        let mut shard = Self::new(first);
        shard.row_containers.reserve_exact(rows as usize);
        shard.row_values.reserve_exact(rows as usize);
        shard.containers.reserve_exact(containers);
        shard.values.reserve_exact(values);
        shard
    }

    /// `len` empty rows from `first` (a placeholder for a spilled shard).
    pub fn empty(first: u32, len: u32) -> Self {
        let mut shard = Self::new(first);
        shard.push_empty(len);
        shard
    }

    /// The first node id of the range.
    pub fn first(&self) -> u32 {
        self.first
    }

    /// How many rows (node ids) the shard covers.
    pub fn len(&self) -> u32 {
        (self.row_containers.len() - 1) as u32
    }

    /// True if the shard covers no node.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// One past the last node id of the range.
    pub fn end(&self) -> u64 {
        u64::from(self.first) + u64::from(self.len())
    }

    /// Number of edges stored.
    pub fn edge_count(&self) -> u64 {
        self.edges
    }

    /// Appends `count` rows with no neighbour above them.
    pub fn push_empty(&mut self, count: u32) {
        let (c, v) = (self.containers.len() as u64, self.values.len() as u64);
        self.row_containers.extend(std::iter::repeat_n(c, count as usize));
        self.row_values.extend(std::iter::repeat_n(v, count as usize));
    }

    /// Appends the next row, its neighbours `values` strictly ascending
    /// and above the row's own node.
    pub fn push_sorted(&mut self, values: &[u32]) {
        debug_assert!(values.windows(2).all(|w| w[0] < w[1]), "a row ascends");
        debug_assert!(values.first().is_none_or(|&v| u64::from(v) > self.end()));
        let base = self.values.len();
        let mut rest = values;
        while let Some(&head) = rest.first() {
            let key = head >> 16;
            let card = rest.partition_point(|&v| v >> 16 == key);
            let (run, tail) = rest.split_at(card);
            let offset = u32::try_from(self.values.len() - base).expect("a row fits u32 units");
            if card > ARRAY_MAX {
                let start = self.values.len();
                self.values.resize(start + BITMAP_WORDS, 0);
                let words = &mut self.values[start..];
                for &v in run {
                    let low = v as u16;
                    words[usize::from(low / 16)] |= 1 << (low % 16);
                }
            } else {
                self.values.extend(run.iter().map(|&v| v as u16));
            }
            let (key, card_minus_1) = (key as u16, (card - 1) as u16);
            self.containers.push(Container { key, card_minus_1, offset });
            rest = tail;
        }
        self.row_containers.push(self.containers.len() as u64);
        self.row_values.push(self.values.len() as u64);
        self.edges += values.len() as u64;
    }

    /// Appends the next row from its one record (`encoded.rs`), copying
    /// its containers.
    pub(crate) fn push_record(&mut self, row: &EncodedRow<'_>) {
        // Offsets count from the row's first unit, in a record as here.
        self.containers.extend(row.containers());
        self.values.extend(row.units());
        self.row_containers.push(self.containers.len() as u64);
        self.row_values.push(self.values.len() as u64);
        self.edges += row.len();
    }

    /// Appends the next row as the union of several `records` of its node,
    /// container by container: a key in one record is copied, arrays of
    /// one key are merged, and a key whose values may pass 4,096 is OR-ed
    /// into a bitmap (kept as one if the union does pass it).
    pub(crate) fn push_union(&mut self, records: &[EncodedRow<'_>], scratch: &mut UnionScratch) {
        let UnionScratch { heads, spans, same, lows, merged, words } = scratch;
        // Each record's containers ascend by key: a merge of the records'
        // lists, taking every container of the smallest key at each step.
        heads.clear();
        spans.clear();
        for (r, record) in records.iter().enumerate() {
            let start = heads.len();
            heads.extend(record.containers().map(|c| (r as u32, c)));
            spans.push((start, heads.len()));
        }
        let base = self.values.len();
        let mut edges = 0;
        loop {
            let live = spans.iter().filter(|s| s.0 < s.1);
            let Some(key) = live.map(|s| heads[s.0].1.key).min() else { break };
            same.clear();
            for span in spans.iter_mut().filter(|s| s.0 < s.1 && heads[s.0].1.key == key) {
                same.push(heads[span.0]);
                span.0 += 1;
            }
            let offset = u32::try_from(self.values.len() - base).expect("a row fits u32 units");
            let cards: usize = same.iter().map(|h| h.1.card()).sum();
            let card = if let [(r, c)] = same.as_slice() {
                self.values.extend(records[*r as usize].units_of(*c));
                c.card()
            } else if cards <= ARRAY_MAX && same.iter().all(|h| !h.1.is_bitmap()) {
                // Sorted arrays: merged two at a time, duplicates dropped.
                lows.clear();
                for (i, &(r, c)) in same.iter().enumerate() {
                    let units = records[r as usize].units_of(c);
                    if i == 0 {
                        lows.extend(units);
                        continue;
                    }
                    merged.clear();
                    let mut units = units.peekable();
                    for &low in lows.iter() {
                        while let Some(u) = units.next_if(|&u| u < low) {
                            merged.push(u);
                        }
                        units.next_if_eq(&low);
                        merged.push(low);
                    }
                    merged.extend(units);
                    std::mem::swap(lows, merged);
                }
                self.values.extend_from_slice(lows);
                lows.len()
            } else {
                words.clear();
                words.resize(BITMAP_WORDS, 0);
                for &(r, c) in same.iter() {
                    let units = records[r as usize].units_of(c);
                    if c.is_bitmap() {
                        words.iter_mut().zip(units).for_each(|(w, u)| *w |= u);
                    } else {
                        units.for_each(|low| words[usize::from(low / 16)] |= 1 << (low % 16));
                    }
                }
                let card = words.iter().map(|w| w.count_ones() as usize).sum();
                if card > ARRAY_MAX {
                    self.values.extend_from_slice(words);
                } else {
                    for (i, &w) in words.iter().enumerate() {
                        let mut bits = w;
                        while bits != 0 {
                            self.values.push(i as u16 * 16 + bits.trailing_zeros() as u16);
                            bits &= bits - 1;
                        }
                    }
                }
                card
            };
            let card_minus_1 = (card - 1) as u16;
            self.containers.push(Container { key, card_minus_1, offset });
            edges += card as u64;
        }
        self.row_containers.push(self.containers.len() as u64);
        self.row_values.push(self.values.len() as u64);
        self.edges += edges;
    }

    /// Row `k` of the shard (node `first + k`).
    pub fn row(&self, k: u32) -> Row<'_> {
        let k = k as usize;
        let containers = self.row_containers[k] as usize..self.row_containers[k + 1] as usize;
        let values = self.row_values[k] as usize..self.row_values[k + 1] as usize;
        Row { containers: &self.containers[containers], values: &self.values[values] }
    }

    /// Every row, in node order.
    pub fn rows(&self) -> impl ExactSizeIterator<Item = Row<'_>> {
        (0..self.len()).map(|k| self.row(k))
    }

    /// Bytes the shard's vectors take in memory.
    pub(crate) fn heap_bytes(&self) -> u64 {
        let (c, v) = (self.containers.capacity(), self.values.capacity());
        (16 * self.row_containers.capacity() + 8 * c + 2 * v) as u64
    }

    /// Containers and values (`u16` units) stored.
    pub(crate) fn sizes(&self) -> (usize, usize) {
        (self.containers.len(), self.values.len())
    }

    /// Releases the vectors' spare capacity.
    pub(crate) fn shrink_to_fit(&mut self) {
        self.row_containers.shrink_to_fit();
        self.row_values.shrink_to_fit();
        self.containers.shrink_to_fit();
        self.values.shrink_to_fit();
    }

    /// The shard as bytes (for the spill file), little-endian.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let indexes = 2 * self.row_containers.len();
        let size = 8 * (4 + indexes + self.containers.len()) + 2 * self.values.len();
        let mut out = Vec::with_capacity(size);
        for x in [u64::from(self.first), u64::from(self.len()), self.containers.len() as u64] {
            out.extend_from_slice(&x.to_le_bytes());
        }
        out.extend_from_slice(&(self.values.len() as u64).to_le_bytes());
        for x in self.row_containers.iter().chain(&self.row_values) {
            out.extend_from_slice(&x.to_le_bytes());
        }
        for c in &self.containers {
            out.extend_from_slice(&c.key.to_le_bytes());
            out.extend_from_slice(&c.card_minus_1.to_le_bytes());
            out.extend_from_slice(&c.offset.to_le_bytes());
        }
        for v in &self.values {
            out.extend_from_slice(&v.to_le_bytes());
        }
        debug_assert_eq!(out.len(), size);
        out
    }

    /// A shard from [`FrozenShard::to_bytes`]; `None` if they are not one.
    pub(crate) fn from_bytes(bytes: &[u8]) -> Option<Self> {
        let mut r = Reader::new(bytes);
        let first = u32::try_from(r.u64()?).ok()?;
        let rows = usize::try_from(r.u64()?).ok()?;
        let containers = usize::try_from(r.u64()?).ok()?;
        let values = usize::try_from(r.u64()?).ok()?;
        let mut u64s = |count: usize| -> Option<Vec<u64>> {
            let raw = r.take(count.checked_mul(8)?)?;
            Some(raw.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().unwrap())).collect())
        };
        let row_containers = u64s(rows.checked_add(1)?)?;
        let row_values = u64s(rows + 1)?;
        let raw = r.take(containers.checked_mul(8)?)?;
        let containers: Vec<Container> = raw
            .chunks_exact(8)
            .map(|b| Container {
                key: u16::from_le_bytes([b[0], b[1]]),
                card_minus_1: u16::from_le_bytes([b[2], b[3]]),
                offset: u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
            })
            .collect();
        let raw = r.take(values.checked_mul(2)?)?;
        let values: Vec<u16> =
            raw.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect();
        if !r.is_done() {
            return None;
        }
        let mut shard =
            FrozenShard { first, row_containers, row_values, containers, values, edges: 0 };
        if !shard.is_valid() {
            return None;
        }
        shard.edges = shard.rows().map(|r| r.len()).sum();
        Some(shard)
    }

    /// Whether the indexes agree with the vectors (for decoded bytes).
    fn is_valid(&self) -> bool {
        let ascending = |v: &[u64], end: usize| {
            v.first() == Some(&0)
                && v.windows(2).all(|w| w[0] <= w[1])
                && v.last() == Some(&(end as u64))
        };
        ascending(&self.row_containers, self.containers.len())
            && ascending(&self.row_values, self.values.len())
            && (0..self.len()).all(|k| {
                let row = self.row(k);
                let mut at = 0usize;
                row.containers.iter().all(|c| {
                    let ok = c.offset as usize == at;
                    at += c.units();
                    ok
                }) && at == row.values.len()
                    && row.containers.windows(2).all(|w| w[0].key < w[1].key)
            })
    }
}
