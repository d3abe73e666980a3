//! Reading a frozen row: its values one by one, by block, or by chunk.

use std::ops::{ControlFlow, Range};

use super::Container;

/// One row of a [`FrozenShard`](super::FrozenShard): a node's neighbours above it, ascending.
#[derive(Debug, Clone, Copy)]
pub struct Row<'a> {
    pub(super) containers: &'a [Container],
    pub(super) values: &'a [u16],
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
