//! Spilling adjacency shards to disk when the graph outgrows its memory
//! budget (`--memory-limit`).
//!
//! A spilled shard is written as segments to one anonymous temporary file
//! (deleted by the OS when the graph is dropped). The same edge may be
//! spilled twice (added before and after a spill), so [`SpillStore::compact`]
//! merges each shard's segments into one, a shard at a time; the edge
//! stream then reads spilled shards back one at a time. Memory stays
//! bounded by the budget plus one shard.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::Mutex;

use roaring::RoaringBitmap;

use crate::AdjacencyShard;

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
    segments: Vec<Vec<Segment>>,
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
            written: 0,
        })
    }

    /// Total bytes ever written to the spill file.
    pub(crate) fn bytes_written(&self) -> u64 {
        self.written
    }

    /// Bytes of shard `k` on disk.
    pub(crate) fn bytes_of(&self, k: usize) -> u64 {
        self.segments[k].iter().map(|s| s.len).sum()
    }

    /// Whether shard `k` has spilled segments.
    pub(crate) fn has(&self, k: usize) -> bool {
        !self.segments[k].is_empty()
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
        if bytes.is_empty() {
            return;
        }
        let file = self.file.get_mut().expect("spill file lock");
        file.seek(SeekFrom::Start(self.end))
            .and_then(|_| file.write_all(&bytes))
            .unwrap_or_else(|e| io_panic(e));
        self.segments[k].push(Segment { offset: self.end, len: bytes.len() as u64 });
        self.end += bytes.len() as u64;
        self.written += bytes.len() as u64;
    }

    /// Unions shard `k`'s segments into `shard` (in place).
    pub(crate) fn load_into(&self, k: usize, shard: &mut AdjacencyShard) {
        let mut file = self.file.lock().expect("spill file lock");
        for segment in &self.segments[k] {
            let mut bytes = vec![0u8; segment.len as usize];
            file.seek(SeekFrom::Start(segment.offset))
                .and_then(|_| file.read_exact(&mut bytes))
                .unwrap_or_else(|e| io_panic(e));
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

    /// Merges every shard's segments into one de-duplicated segment, one
    /// shard in memory at a time; returns the edge count of each shard.
    pub(crate) fn compact(&mut self, shards: &mut [AdjacencyShard]) -> Vec<u64> {
        let mut counts = Vec::with_capacity(shards.len());
        for (k, shard) in shards.iter_mut().enumerate() {
            if self.segments[k].is_empty() {
                counts.push(shard.edge_count());
                continue;
            }
            self.load_into(k, shard);
            counts.push(shard.edge_count());
            self.segments[k].clear();
            self.spill(k, shard);
        }
        counts
    }
}
