//! Roaring's container layout, shared by the row records detection
//! writes (`encoded.rs`) and the frozen rows (`frozen/`): the high 16 bits
//! of a value as a key, the low halves as a sorted array up to
//! [`ARRAY_MAX`] of them, else as a 65,536-bit bitmap.

/// More values than this in one container: a bitmap (roaring's threshold,
/// where the array would outgrow the 8 KiB bitmap).
pub(crate) const ARRAY_MAX: usize = 4096;
/// `u16` words of a bitmap container.
pub(crate) const BITMAP_WORDS: usize = 65_536 / 16;

/// One container of a row: values `key << 16 | low` for the `card` lows
/// stored at `offset` (in `u16` units, from the row's first) as an array,
/// or as a bitmap when `card` exceeds [`ARRAY_MAX`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Container {
    pub(crate) key: u16,
    /// The number of values minus one (a container is never empty).
    pub(crate) card_minus_1: u16,
    pub(crate) offset: u32,
}

impl Container {
    pub(crate) fn card(self) -> usize {
        usize::from(self.card_minus_1) + 1
    }

    pub(crate) fn is_bitmap(self) -> bool {
        self.card() > ARRAY_MAX
    }

    pub(crate) fn units(self) -> usize {
        if self.is_bitmap() { BITMAP_WORDS } else { self.card() }
    }
}
