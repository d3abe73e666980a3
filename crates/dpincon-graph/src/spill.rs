//! Spilling adjacency shards to disk when the graph outgrows its memory
//! budget (`--memory-limit`).
//!
//! While the graph is built, a spilled shard's row records (`encoded.rs`)
//! are appended to one anonymous temporary file (deleted by the OS when
//! the graph is dropped) as a segment. The same edge may be spilled twice
//! (added before and after a spill), so finishing the graph unions each
//! shard's segments, a shard per thread, and writes it back frozen
//! ([`FrozenShard`]); walks then read spilled shards back one at a time.
//! Memory stays bounded by the budget plus a shard per thread.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::FrozenShard;

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
pub(crate) struct Segment {
    offset: u64,
    len: u64,
}

/// The spill file and which segments belong to which shard.
#[derive(Debug)]
pub(crate) struct SpillStore {
    file: File,
    /// The end of the file: appends reserve their range here, so threads
    /// write side by side.
    end: AtomicU64,
    /// Record segments of each shard while the graph is built.
    segments: Vec<Vec<Segment>>,
    /// Each compacted shard, frozen.
    frozen: Vec<Option<Segment>>,
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
            file,
            end: AtomicU64::new(0),
            segments: vec![Vec::new(); shards],
            frozen: vec![None; shards],
        })
    }

    /// Total bytes ever written to the spill file.
    pub(crate) fn bytes_written(&self) -> u64 {
        self.end.load(Ordering::Relaxed)
    }

    /// Bytes of compacted shard `k` on disk.
    pub(crate) fn bytes_of(&self, k: usize) -> u64 {
        self.frozen[k].map_or(0, |s| s.len)
    }

    /// Whether compacted shard `k` is on disk.
    pub(crate) fn has(&self, k: usize) -> bool {
        self.frozen[k].is_some()
    }

    /// Whether shard `k` was spilled while the graph was built.
    pub(crate) fn spilled(&self, k: usize) -> bool {
        !self.segments[k].is_empty()
    }

    /// Appends `bytes` to the file (from any thread).
    pub(crate) fn append(&self, bytes: &[u8]) -> Segment {
        let len = bytes.len() as u64;
        let offset = self.end.fetch_add(len, Ordering::Relaxed);
        self.file.write_all_at(bytes, offset).unwrap_or_else(|e| io_panic(e));
        Segment { offset, len }
    }

    fn read(&self, segment: Segment) -> Vec<u8> {
        let mut bytes = vec![0u8; segment.len as usize];
        self.file.read_exact_at(&mut bytes, segment.offset).unwrap_or_else(|e| io_panic(e));
        bytes
    }

    /// Appends `records` (row records of shard `k`) as a segment of it.
    pub(crate) fn spill(&mut self, k: usize, records: &[u8]) {
        if !records.is_empty() {
            let segment = self.append(records);
            self.segments[k].push(segment);
        }
    }

    /// Shard `k`'s spilled row records, a vector per segment.
    pub(crate) fn load_records(&self, k: usize) -> Vec<Vec<u8>> {
        self.segments[k].iter().map(|&segment| self.read(segment)).collect()
    }

    /// Records where compacted shard `k` lies, its segments done with.
    pub(crate) fn set_frozen(&mut self, k: usize, segment: Segment) {
        self.segments[k].clear();
        self.frozen[k] = Some(segment);
    }

    /// Compacted shard `k`, read back.
    pub(crate) fn load(&self, k: usize) -> FrozenShard {
        let segment = self.frozen[k].expect("shard k was compacted to disk");
        FrozenShard::from_bytes(&self.read(segment))
            .unwrap_or_else(|| panic!("graph spill file: shard {k} does not read back"))
    }
}
