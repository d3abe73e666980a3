//! The graph's rows once built: immutable, in a few flat vectors.
//!
//! While detection runs, a row is a roaring bitmap that grows
//! ([`AdjacencyShard`](crate::AdjacencyShard)). Once built it never
//! changes, and a bitmap costs a vector of containers plus an allocation
//! per container, with slack: at 330M edges over 8.8M containers that
//! overhead was as large as the values themselves (1.4 GB for 0.66 GB of
//! values). A [`FrozenShard`] keeps roaring's containers (the high 16 bits
//! of a value as a key; the low halves as a sorted array up to 4,096 of
//! them, else as a 65,536-bit bitmap) in three vectors per shard: 2 bytes a
//! value and 8 bytes a container, read front to back by every walk.

use std::ops::{ControlFlow, Range};

use roaring::RoaringBitmap;

use crate::bytes::Reader;
use crate::row_chunks;

/// More values than this in one container: a bitmap (roaring's threshold,
/// where the array would outgrow the 8 KiB bitmap).
const ARRAY_MAX: usize = 4096;
/// `u16` words of a bitmap container.
const BITMAP_WORDS: usize = 65_536 / 16;

/// One container of a row: values `key << 16 | low` for the `card` lows
/// stored at `offset` (in `u16` units, from the row's first) as an array,
/// or as a bitmap when `card` exceeds [`ARRAY_MAX`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Container {
    key: u16,
    /// The number of values minus one (a container is never empty).
    card_minus_1: u16,
    offset: u32,
}

impl Container {
    fn card(self) -> usize {
        usize::from(self.card_minus_1) + 1
    }

    fn is_bitmap(self) -> bool {
        self.card() > ARRAY_MAX
    }

    fn units(self) -> usize {
        if self.is_bitmap() { BITMAP_WORDS } else { self.card() }
    }
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

    /// Appends the next row from a bitmap (`scratch` holds its values on
    /// the way).
    pub(crate) fn push_bitmap(&mut self, row: &RoaringBitmap, scratch: &mut Vec<u32>) {
        scratch.clear();
        let _ = row_chunks(row, |chunk| {
            scratch.extend_from_slice(chunk);
            ControlFlow::<()>::Continue(())
        });
        self.push_sorted(scratch);
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
        let first = u32::try_from(r.u64().ok()?).ok()?;
        let rows = usize::try_from(r.u64().ok()?).ok()?;
        let containers = usize::try_from(r.u64().ok()?).ok()?;
        let values = usize::try_from(r.u64().ok()?).ok()?;
        let mut u64s = |count: usize| -> Option<Vec<u64>> {
            let raw = r.take(count.checked_mul(8)?).ok()?;
            Some(raw.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().unwrap())).collect())
        };
        let row_containers = u64s(rows.checked_add(1)?)?;
        let row_values = u64s(rows + 1)?;
        let raw = r.take(containers.checked_mul(8)?).ok()?;
        let containers: Vec<Container> = raw
            .chunks_exact(8)
            .map(|b| Container {
                key: u16::from_le_bytes([b[0], b[1]]),
                card_minus_1: u16::from_le_bytes([b[2], b[3]]),
                offset: u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
            })
            .collect();
        let raw = r.take(values.checked_mul(2)?).ok()?;
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

/// One row of a [`FrozenShard`]: a node's neighbours above it, ascending.
#[derive(Debug, Clone, Copy)]
pub struct Row<'a> {
    containers: &'a [Container],
    values: &'a [u16],
}

impl<'a> Row<'a> {
    /// The `u16` units container `c` of this row stores its values in.
    fn units(&self, c: Container) -> &'a [u16] {
        &self.values[c.offset as usize..c.offset as usize + c.units()]
    }

    /// Number of neighbours.
    pub fn len(&self) -> u64 {
        self.containers.iter().map(|c| c.card() as u64).sum()
    }

    /// True if the row has no neighbour.
    pub fn is_empty(&self) -> bool {
        self.containers.is_empty()
    }

    /// The largest neighbour, if any.
    pub fn max(&self) -> Option<u32> {
        let c = *self.containers.last()?;
        let units = self.units(c);
        let low = if c.is_bitmap() {
            let (w, &word) = units.iter().enumerate().rev().find(|(_, w)| **w != 0)?;
            w as u32 * 16 + 15 - word.leading_zeros()
        } else {
            u32::from(*units.last()?)
        };
        Some(u32::from(c.key) << 16 | low)
    }

    /// The row's values by 65,536-id block, ascending.
    pub fn blocks(&self) -> impl Iterator<Item = Block<'a>> + 'a {
        let row = *self;
        self.containers.iter().map(move |&c| Block { container: c, units: row.units(c) })
    }

    /// Hands the values to `visit` in ascending chunks until it breaks:
    /// the fast way to read a row (a chunk costs one call).
    pub fn chunks<B>(&self, mut visit: impl FnMut(&[u32]) -> ControlFlow<B>) -> ControlFlow<B> {
        if self.is_empty() {
            return ControlFlow::Continue(());
        }
        let mut buffer = [0u32; 256];
        for block in self.blocks() {
            block.chunks(&mut buffer, &mut visit)?;
        }
        ControlFlow::Continue(())
    }

    /// The values one by one.
    pub fn iter(&self) -> RowIter<'a> {
        RowIter { row: *self, at: Position::default() }
    }

    /// Calls `f` with every value in `range`, ascending.
    pub fn for_each_in(&self, range: Range<u32>, mut f: impl FnMut(u32)) {
        if range.is_empty() {
            return;
        }
        let (lo_key, hi_key) = ((range.start >> 16) as u16, ((range.end - 1) >> 16) as u16);
        let mut buffer = [0u32; 256];
        for block in self.blocks().filter(|b| (lo_key..=hi_key).contains(&b.container.key)) {
            let _ = block.chunks(&mut buffer, &mut |chunk: &[u32]| {
                chunk.iter().filter(|v| range.contains(v)).for_each(|&v| f(v));
                ControlFlow::<()>::Continue(())
            });
        }
    }
}

impl<'a> IntoIterator for Row<'a> {
    type Item = u32;
    type IntoIter = RowIter<'a>;

    fn into_iter(self) -> RowIter<'a> {
        self.iter()
    }
}

/// The values of a row whose high 16 bits are [`Block::key`].
#[derive(Debug, Clone, Copy)]
pub struct Block<'a> {
    container: Container,
    units: &'a [u16],
}

impl Block<'_> {
    /// The high 16 bits shared by the block's values.
    pub fn key(&self) -> u16 {
        self.container.key
    }

    /// Number of values.
    pub fn len(&self) -> u32 {
        self.container.card() as u32
    }

    /// Never true: a row stores no empty block.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Whether `v` is in the block (`v`'s high 16 bits must be the key).
    pub fn contains(&self, v: u32) -> bool {
        debug_assert_eq!(v >> 16, u32::from(self.container.key));
        let low = v as u16;
        if self.container.is_bitmap() {
            self.units[usize::from(low / 16)] >> (low % 16) & 1 == 1
        } else {
            self.units.binary_search(&low).is_ok()
        }
    }

    /// Calls `f` with every value, ascending.
    pub fn for_each(&self, mut f: impl FnMut(u32)) {
        let base = u32::from(self.container.key) << 16;
        if !self.container.is_bitmap() {
            self.units.iter().for_each(|&low| f(base | u32::from(low)));
            return;
        }
        for (w, &word) in self.units.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                f(base | (w as u32 * 16 + bits.trailing_zeros()));
                bits &= bits - 1;
            }
        }
    }

    fn chunks<B>(
        &self,
        buffer: &mut [u32; 256],
        visit: &mut impl FnMut(&[u32]) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        let base = u32::from(self.container.key) << 16;
        if !self.container.is_bitmap() {
            for lows in self.units.chunks(buffer.len()) {
                for (slot, &low) in buffer.iter_mut().zip(lows) {
                    *slot = base | u32::from(low);
                }
                visit(&buffer[..lows.len()])?;
            }
            return ControlFlow::Continue(());
        }
        let mut filled = 0;
        for (w, &word) in self.units.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                buffer[filled] = base | (w as u32 * 16 + bits.trailing_zeros());
                bits &= bits - 1;
                filled += 1;
            }
            // A word adds at most 16: flush before the buffer can overflow.
            if filled > buffer.len() - 16 {
                visit(&buffer[..filled])?;
                filled = 0;
            }
        }
        if filled > 0 {
            visit(&buffer[..filled])?;
        }
        ControlFlow::Continue(())
    }
}

/// The values of a [`Row`], one by one.
#[derive(Debug, Clone)]
pub struct RowIter<'a> {
    row: Row<'a>,
    at: Position,
}

impl Iterator for RowIter<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        self.at.next(self.row)
    }
}

/// Where a walk through a row stands, without borrowing it: the edge
/// stream keeps one across a spilled shard it owns.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Position {
    /// The container being read, the next unit in it, and (bitmaps) the
    /// bits of the word at `unit - 1` not yet returned.
    container: usize,
    unit: usize,
    bits: u16,
}

impl Position {
    /// The next value of `row` (always the same row), if any.
    pub(crate) fn next(&mut self, row: Row<'_>) -> Option<u32> {
        loop {
            let c = *row.containers.get(self.container)?;
            let base = u32::from(c.key) << 16;
            let units = row.units(c);
            if !c.is_bitmap() {
                if let Some(&low) = units.get(self.unit) {
                    self.unit += 1;
                    return Some(base | u32::from(low));
                }
            } else {
                while self.bits == 0 && self.unit < units.len() {
                    self.bits = units[self.unit];
                    self.unit += 1;
                }
                if self.bits != 0 {
                    let low = (self.unit as u32 - 1) * 16 + self.bits.trailing_zeros();
                    self.bits &= self.bits - 1;
                    return Some(base | low);
                }
            }
            *self = Position { container: self.container + 1, ..Position::default() };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of every shape: empty, sparse, an array at the 4,096 limit, a
    /// bitmap just over it, a full block, values at the top of u32.
    fn rows() -> Vec<Vec<u32>> {
        let mut out = vec![vec![], vec![7], (10..20).collect()];
        out.push((0..ARRAY_MAX as u32).map(|i| 100_000 + i * 3).collect());
        out.push((0..=ARRAY_MAX as u32).map(|i| (5 << 16) + i * 2).collect());
        out.push(((9 << 16)..(10 << 16)).chain([20 << 16, 21 << 16]).collect());
        out.push(vec![1 << 16, (1 << 16) + 1, u32::MAX - 1, u32::MAX]);
        let mut state = 5u64;
        let mut mixed: Vec<u32> = (0..30_000)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                // Dense in block 3, sparse elsewhere.
                if state >> 63 == 1 {
                    (3 << 16) + (state >> 40) as u32 % 65_536
                } else {
                    (state >> 33) as u32 % (40 << 16)
                }
            })
            .filter(|&v| v > 8)
            .collect();
        mixed.sort_unstable();
        mixed.dedup();
        out.push(mixed);
        out
    }

    #[test]
    fn rows_read_back_as_written_every_way() {
        let want = rows();
        let mut shard = FrozenShard::new(0);
        for row in &want {
            shard.push_sorted(row);
        }
        assert_eq!(shard.len(), want.len() as u32);
        assert_eq!(shard.edge_count(), want.iter().map(|r| r.len() as u64).sum::<u64>());
        for (k, row) in want.iter().enumerate() {
            let got = shard.row(k as u32);
            assert_eq!(got.len(), row.len() as u64);
            assert_eq!(got.is_empty(), row.is_empty());
            assert_eq!(got.max(), row.last().copied());
            assert_eq!(got.iter().collect::<Vec<_>>(), *row, "row {k}");
            let mut chunked = Vec::new();
            let _ = got.chunks(|c| {
                assert!(!c.is_empty());
                chunked.extend_from_slice(c);
                ControlFlow::<()>::Continue(())
            });
            assert_eq!(chunked, *row, "row {k} by chunks");
            for range in
                [0..0, 0..u32::MAX, 15..100_010, (5 << 16) + 3..(9 << 16) + 2, 1..(1 << 16) + 1]
            {
                let mut inside = Vec::new();
                got.for_each_in(range.clone(), |v| inside.push(v));
                let want: Vec<u32> = row.iter().copied().filter(|v| range.contains(v)).collect();
                assert_eq!(inside, want, "row {k} in {range:?}");
            }
            let by_block: u64 = got.blocks().map(|b| u64::from(b.len())).sum();
            assert_eq!(by_block, row.len() as u64);
            let mut each = Vec::new();
            for block in got.blocks() {
                let before = each.len();
                block.for_each(|v| each.push(v));
                assert!(each[before..].iter().all(|&v| v >> 16 == u32::from(block.key())));
                assert!(each[before..].iter().all(|&v| block.contains(v)));
                let base = u32::from(block.key()) << 16;
                let outside = (0..65_536).map(|l| base | l).filter(|v| !row.contains(v));
                assert!(outside.take(500).all(|v| !block.contains(v)));
            }
            assert_eq!(each, *row, "row {k} by blocks");
            assert!(got.blocks().all(|b| !b.is_empty()));
        }
    }

    #[test]
    fn chunks_stop_where_the_visitor_breaks() {
        let mut shard = FrozenShard::new(0);
        shard.push_sorted(&(1..20_000).collect::<Vec<_>>());
        let found = shard.row(0).chunks(|c| match c.iter().find(|&&v| v % 5_000 == 0) {
            Some(&v) => ControlFlow::Break(v),
            None => ControlFlow::Continue(()),
        });
        assert_eq!(found, ControlFlow::Break(5_000));
    }

    #[test]
    fn bitmaps_and_bytes_round_trip() {
        let rows = rows();
        let bitmaps: Vec<RoaringBitmap> =
            rows.iter().map(|r| r.iter().copied().collect()).collect();
        let mut shard = FrozenShard::new(0);
        let mut scratch = Vec::new();
        bitmaps.iter().for_each(|b| shard.push_bitmap(b, &mut scratch));
        let mut direct = FrozenShard::new(0);
        rows.iter().for_each(|r| direct.push_sorted(r));
        assert_eq!(shard, direct);
        let bytes = shard.to_bytes();
        assert_eq!(FrozenShard::from_bytes(&bytes), Some(shard.clone()));
        // Truncated or tampered bytes are refused, never misread.
        assert_eq!(FrozenShard::from_bytes(&bytes[..bytes.len() - 1]), None);
        let mut tampered = bytes.clone();
        tampered[32] ^= 1; // the first row's container start
        assert_eq!(FrozenShard::from_bytes(&tampered), None);
        let empty = FrozenShard::empty(70, 3);
        assert_eq!((empty.first(), empty.len(), empty.end()), (70, 3, 73));
        assert_eq!(FrozenShard::from_bytes(&empty.to_bytes()), Some(empty));
    }
}
