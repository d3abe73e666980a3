//! A little-endian byte cursor for the spill file's frozen shards.

/// Reads little-endian fields off a byte slice (frozen shards in the spill
/// file).
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, at: 0 }
    }

    /// True when every byte was read.
    pub(crate) fn is_done(&self) -> bool {
        self.at == self.bytes.len()
    }

    /// The next 8 bytes as a `u64`; `None` past the end.
    pub(crate) fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }

    /// The next `n` bytes; `None` past the end (a truncated shard).
    pub(crate) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len())?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Some(out)
    }
}
