//! The coordinator's one pass over the edges: sorted runs in, the stable
//! order Λ (SPEC §2) out, deduplicated, into a spilling graph builder.
//!
//! Edges arrive as the executors' sorted partition outputs, in whatever
//! order Ballista delivers them; an edge violating constraints of two
//! groups arrives twice. [`EdgeRuns`] buffers a bounded number of edges,
//! sorts and deduplicates the buffer and writes it to a run file when
//! full; [`EdgeRuns::finish`] merges the runs (a k-way heap merge), drops
//! repeats and feeds Λ once into a `GraphBuilder` that spills past its
//! memory budget. Memory: the buffer, one read buffer per run, and the
//! builder's budget, never the edge set.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

use dpincon_graph::{
    ConflictGraph, Edge, EdgeFingerprint, EdgeSink, GraphBuilder, SpillConfig,
    edge_stream_fingerprint,
};

/// Edges buffered before a run is written (8 bytes each: 64 MiB).
pub const DEFAULT_RUN_EDGES: usize = 8 << 20;

/// Sorted runs of edges, on disk past the first.
#[derive(Debug)]
pub struct EdgeRuns {
    dir: PathBuf,
    run_edges: usize,
    buffer: Vec<(u32, u32)>,
    files: Vec<File>,
    /// Edges received (repeats included).
    pub received: u64,
    /// Bytes the runs may take on disk (a public quota); `None`: no limit.
    disk_limit: Option<u64>,
    /// Bytes written to runs so far.
    written: u64,
}

fn io(e: std::io::Error) -> crate::BallistaError {
    crate::BallistaError::Merge(e.to_string())
}

impl EdgeRuns {
    /// Runs written to anonymous temporary files in `dir`, `run_edges`
    /// edges at most in memory.
    pub fn new(dir: PathBuf, run_edges: usize) -> Self {
        EdgeRuns {
            dir,
            run_edges: run_edges.max(1),
            buffer: Vec::new(),
            files: Vec::new(),
            received: 0,
            disk_limit: None,
            written: 0,
        }
    }

    /// Caps the runs' bytes on disk: writing past `bytes` fails with
    /// [`crate::BallistaError::OverQuota`] before the run is written.
    pub fn with_disk_limit(mut self, bytes: Option<u64>) -> Self {
        self.disk_limit = bytes;
        self
    }

    /// Bytes written to runs so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Adds edge `{u, v}` (`u < v`).
    pub fn push(&mut self, u: u32, v: u32) -> Result<(), crate::BallistaError> {
        debug_assert!(u < v);
        self.buffer.push((u, v));
        self.received += 1;
        if self.buffer.len() >= self.run_edges {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> Result<(), crate::BallistaError> {
        // The buffer is a few sorted partition outputs back to back: the
        // stable sort merges those natural runs in linear time, where an
        // unstable sort would sort it from scratch (issue 29).
        self.buffer.sort();
        self.buffer.dedup();
        let bytes = 8 * self.buffer.len() as u64;
        if let Some(limit) = self.disk_limit
            && self.written + bytes > limit
        {
            return Err(crate::BallistaError::OverQuota(format!(
                "the edge runs would take more than {limit} bytes on disk"
            )));
        }
        self.written += bytes;
        let mut file = tempfile::tempfile_in(&self.dir).map_err(io)?;
        {
            let mut w = BufWriter::with_capacity(1 << 20, &mut file);
            for &(u, v) in &self.buffer {
                w.write_all(&u.to_le_bytes()).map_err(io)?;
                w.write_all(&v.to_le_bytes()).map_err(io)?;
            }
            w.flush().map_err(io)?;
        }
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        self.files.push(file);
        self.buffer.clear();
        Ok(())
    }

    /// Merges the runs into the graph on `nodes` nodes, keeping about
    /// `spill.memory_limit` bytes of adjacency in memory; returns it with
    /// the fingerprint of its stream Λ.
    pub fn finish(
        mut self,
        nodes: u32,
        spill: &SpillConfig,
    ) -> Result<(ConflictGraph, EdgeFingerprint), crate::BallistaError> {
        self.buffer.sort();
        self.buffer.dedup();
        let mut sources: Vec<Source> = self.files.into_iter().map(Source::file).collect();
        sources.push(Source::Memory(std::mem::take(&mut self.buffer).into_iter()));
        // Keys are (u << 32 | v): one integer compare per heap step, and
        // the smallest is replaced in place (one sift, not a pop and a push).
        let key = |(u, v): (u32, u32)| u64::from(u) << 32 | u64::from(v);
        let mut heap = BinaryHeap::new();
        for (i, s) in sources.iter_mut().enumerate() {
            if let Some(e) = s.next().map_err(io)? {
                heap.push(Reverse((key(e), i)));
            }
        }
        let mut builder = GraphBuilder::with_spill(nodes, spill).map_err(io)?;
        let mut error = None;
        let mut last = None;
        let merged = std::iter::from_fn(|| {
            loop {
                let mut top = heap.peek_mut()?;
                let Reverse((e, i)) = *top;
                match sources[i].next() {
                    Ok(Some(next)) => *top = Reverse((key(next), i)),
                    Ok(None) => {
                        std::collections::binary_heap::PeekMut::pop(top);
                    }
                    Err(e) => {
                        error = Some(e);
                        return None;
                    }
                }
                if last != Some(e) {
                    last = Some(e);
                    return Some(((e >> 32) as u32, e as u32));
                }
            }
        });
        let mut bad = None;
        let fingerprint = edge_stream_fingerprint(merged.map(|(u, v)| {
            if v >= nodes {
                bad = Some(v);
            } else {
                builder.add(u, v);
            }
            Edge { u, v }
        }));
        if let Some(e) = error {
            return Err(io(e));
        }
        if let Some(v) = bad {
            return Err(crate::BallistaError::Merge(format!(
                "edge to row {v} of a table of {nodes} rows"
            )));
        }
        Ok((builder.finish(), fingerprint))
    }
}

/// One sorted run being read.
enum Source {
    /// A run file, read a block of edges at a time.
    File {
        file: File,
        block: Vec<u8>,
        at: usize,
    },
    Memory(std::vec::IntoIter<(u32, u32)>),
}

/// Bytes read from a run file at once (8 Ki edges).
const BLOCK_BYTES: usize = 64 << 10;

impl Source {
    fn file(file: File) -> Self {
        Source::File { file, block: Vec::new(), at: 0 }
    }

    fn next(&mut self) -> std::io::Result<Option<(u32, u32)>> {
        match self {
            Source::Memory(it) => Ok(it.next()),
            Source::File { file, block, at } => {
                if *at == block.len() {
                    block.resize(BLOCK_BYTES, 0);
                    let mut filled = 0;
                    // Fill the block (runs are whole edges: 8 bytes each).
                    while filled < BLOCK_BYTES {
                        match file.read(&mut block[filled..])? {
                            0 => break,
                            n => filled += n,
                        }
                    }
                    if filled % 8 != 0 {
                        return Err(std::io::Error::other("a run file ends inside an edge"));
                    }
                    block.truncate(filled);
                    *at = 0;
                    if filled == 0 {
                        return Ok(None);
                    }
                }
                let b = &block[*at..*at + 8];
                *at += 8;
                Ok(Some((
                    u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
                    u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
                )))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_merge_into_one_deduplicated_stable_stream() {
        let dir = tempfile::tempdir().unwrap();
        // A pseudo-random edge multiset, pushed in an arbitrary order, with
        // repeats; tiny runs force many files.
        let mut state = 7u64;
        let mut edges = Vec::new();
        for _ in 0..5000 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let a = (state >> 40) as u32 % 300;
            let b = (state >> 20) as u32 % 300;
            if a != b {
                edges.push(Edge::new(a, b));
            }
        }
        let mut runs = EdgeRuns::new(dir.path().to_path_buf(), 97);
        for e in edges.iter().chain(edges.iter().take(1000)) {
            runs.push(e.u, e.v).unwrap();
        }
        assert!(runs.files.len() > 10);
        let spill = SpillConfig { dir: dir.path().to_path_buf(), memory_limit: 1 << 12 };
        let (graph, fingerprint) = runs.finish(300, &spill).unwrap();
        let want = ConflictGraph::from_edges(300, edges.iter().copied());
        assert_eq!(graph.edges().collect::<Vec<_>>(), want.edges().collect::<Vec<_>>());
        assert_eq!(fingerprint, edge_stream_fingerprint(want.edges()));
    }

    #[test]
    fn an_edge_past_the_table_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut runs = EdgeRuns::new(dir.path().to_path_buf(), 4);
        for (u, v) in [(0, 1), (1, 2), (2, 3), (3, 9), (0, 2)] {
            runs.push(u, v).unwrap();
        }
        let spill = SpillConfig { dir: dir.path().to_path_buf(), memory_limit: 1 << 20 };
        assert!(runs.finish(5, &spill).is_err());
    }

    #[test]
    fn runs_past_their_disk_limit_are_over_quota_before_they_are_written() {
        let dir = tempfile::tempdir().unwrap();
        // Runs of 4 edges (32 bytes); 80 bytes allow two runs, not three.
        let mut runs = EdgeRuns::new(dir.path().to_path_buf(), 4).with_disk_limit(Some(80));
        for i in 0..8 {
            runs.push(i, i + 1).unwrap();
        }
        assert_eq!(runs.written(), 64);
        for i in 8..11 {
            runs.push(i, i + 1).unwrap();
        }
        let err = runs.push(11, 12).unwrap_err();
        assert!(matches!(err, crate::BallistaError::OverQuota(_)), "{err}");
        assert_eq!(runs.written(), 64, "the refused run was not written");
        // Without a limit the same runs are written.
        let mut free = EdgeRuns::new(dir.path().to_path_buf(), 4);
        for i in 0..12 {
            free.push(i, i + 1).unwrap();
        }
        assert_eq!(free.written(), 96);
    }
}
