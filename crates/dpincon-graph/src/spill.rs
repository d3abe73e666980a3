//! Spilling adjacency shards to disk when the graph outgrows its memory
//! budget (`--memory-limit`).
//!
//! While the graph is built, a spilled shard is written as segments of
//! roaring rows to one anonymous temporary file (deleted by the OS when the
//! graph is dropped). The same edge may be spilled twice (added before and
//! after a spill), so [`SpillStore::compact`] merges each shard's segments,
//! a shard at a time, and writes it back frozen ([`FrozenShard`]); walks
//! then read spilled shards back one at a time. Memory stays bounded by
//! the budget plus one shard.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::Mutex;

use roaring::RoaringBitmap;

use crate::{AdjacencyShard, FrozenShard};

/// Where and when to spill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpillConfig {
    /// Directory of the temporary spill file.
    pub dir: PathBuf,
    /// Bytes of adjacency a builder keeps in memory before spilling.
    pub memory_limit: u64,
}

/// A byte range of the spill file holding part of one shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Segment {
    offset: u64,
    len: u64,
}

/// The spill file and which segments belong to which shard.
#[derive(Debug)]
pub(crate) struct SpillStore {
    file: Mutex<File>,
    end: u64,
    /// Roaring segments of each shard while the graph is built.
    segments: Vec<Vec<Segment>>,
    /// Each compacted shard, frozen.
    frozen: Vec<Option<Segment>>,
    /// Bytes written, for reports.
    written: u64,
}

fn io_panic(e: std::io::Error) -> ! {
    // A spill that cannot be written or read back would silently lose
    // edges; failing loudly is the only safe option.
    panic!("graph spill file I/O failed: {e}")
}

impl SpillStore {
    pub(crate) fn new(config: &SpillConfig, shards: usize) -> std::io::Result<Self> {
        let file = tempfile::tempfile_in(&config.dir)?;
        Ok(SpillStore {
            file: Mutex::new(file),
            end: 0,
            segments: vec![Vec::new(); shards],
            frozen: vec![None; shards],
            written: 0,
        })
    }

    /// Total bytes ever written to the spill file.
    pub(crate) fn bytes_written(&self) -> u64 {
        self.written
    }

    /// Bytes of compacted shard `k` on disk.
    pub(crate) fn bytes_of(&self, k: usize) -> u64 {
        self.frozen[k].map_or(0, |s| s.len)
    }

    /// Whether compacted shard `k` is on disk.
    pub(crate) fn has(&self, k: usize) -> bool {
        self.frozen[k].is_some()
    }

    /// Appends `bytes` to the file.
    fn append(&mut self, bytes: &[u8]) -> Segment {
        let file = self.file.get_mut().expect("spill file lock");
        file.seek(SeekFrom::Start(self.end))
            .and_then(|_| file.write_all(bytes))
            .unwrap_or_else(|e| io_panic(e));
        let segment = Segment { offset: self.end, len: bytes.len() as u64 };
        self.end += segment.len;
        self.written += segment.len;
        segment
    }

    fn read(&self, segment: Segment) -> Vec<u8> {
        let mut bytes = vec![0u8; segment.len as usize];
        let mut file = self.file.lock().expect("spill file lock");
        file.seek(SeekFrom::Start(segment.offset))
            .and_then(|_| file.read_exact(&mut bytes))
            .unwrap_or_else(|e| io_panic(e));
        bytes
    }

    /// Appends the non-empty bitmaps of `shard` as a segment of shard `k`
    /// and empties them in memory.
    pub(crate) fn spill(&mut self, k: usize, shard: &mut AdjacencyShard) {
        let mut bytes = Vec::new();
        for (i, bits) in shard.bitmaps_mut().iter_mut().enumerate() {
            if bits.is_empty() {
                continue;
            }
            bits.optimize();
            bytes.extend_from_slice(&(i as u32).to_le_bytes());
            bytes.extend_from_slice(&(bits.serialized_size() as u32).to_le_bytes());
            bits.serialize_into(&mut bytes).unwrap_or_else(|e| io_panic(e));
            *bits = RoaringBitmap::new();
        }
        if !bytes.is_empty() {
            let segment = self.append(&bytes);
            self.segments[k].push(segment);
        }
    }

    /// Unions shard `k`'s segments into `shard` (in place).
    fn load_into(&self, k: usize, shard: &mut AdjacencyShard) {
        for &segment in &self.segments[k] {
            let bytes = self.read(segment);
            let mut rest = &bytes[..];
            while rest.len() >= 8 {
                let node = u32::from_le_bytes(rest[..4].try_into().expect("4 bytes")) as usize;
                let len = u32::from_le_bytes(rest[4..8].try_into().expect("4 bytes")) as usize;
                let bits = RoaringBitmap::deserialize_from(&rest[8..8 + len])
                    .unwrap_or_else(|e| io_panic(e));
                shard.bitmaps_mut()[node] |= bits;
                rest = &rest[8 + len..];
            }
        }
    }

    /// Compacted shard `k`, read back.
    pub(crate) fn load(&self, k: usize) -> FrozenShard {
        let segment = self.frozen[k].expect("shard k was compacted to disk");
        FrozenShard::from_bytes(&self.read(segment))
            .unwrap_or_else(|| panic!("graph spill file: shard {k} does not read back"))
    }

    /// Freezes every shard with `freeze`, a shard in memory at a time:
    /// a spilled one is merged with its segments and written back frozen
    /// (an empty placeholder is returned for it), the others are returned.
    /// Also returns the edge count.
    pub(crate) fn compact(
        &mut self,
        shards: Vec<AdjacencyShard>,
        mut freeze: impl FnMut(AdjacencyShard) -> FrozenShard,
    ) -> (Vec<FrozenShard>, u64) {
        let mut edges = 0;
        let mut out = Vec::with_capacity(shards.len());
        for (k, mut shard) in shards.into_iter().enumerate() {
            let spilled = !self.segments[k].is_empty();
            self.load_into(k, &mut shard);
            let (first, len) = (shard.first(), shard.len());
            let frozen = freeze(shard);
            edges += frozen.edge_count();
            if spilled {
                self.segments[k].clear();
                self.frozen[k] = Some(self.append(&frozen.to_bytes()));
                out.push(FrozenShard::empty(first, len));
            } else {
                out.push(frozen);
            }
        }
        (out, edges)
    }
}
