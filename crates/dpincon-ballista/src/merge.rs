//! The coordinator's one pass over the edges: the executors' sorted
//! partition outputs in, the stable order Λ (SPEC §2) out, deduplicated,
//! into a spilling graph builder.
//!
//! Each result partition is one executor's detection output: its summary,
//! then its edges in (u, v) order (`detect::wire`). An edge violating
//! constraints of two groups arrives in two partitions. [`merge`] reads all
//! partitions at once, each fetched by its own task a few batches ahead
//! ([`PartitionEdges`]), and merges them with a heap: no run file, no
//! sort on the coordinator, and the fetches overlap the merge (issue 29).
//! Memory: a few batches per partition and the builder's budget, never
//! the edge set.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use datafusion::arrow::array::RecordBatch;
use dpincon_graph::{
    ConflictGraph, Edge, EdgeFingerprint, EdgeSink, GraphBuilder, SpillConfig,
    edge_stream_fingerprint,
};
use tokio::sync::mpsc::Receiver;

use crate::BallistaError;
use crate::detect::wire::{Reader, Summary};

/// Batches fetched ahead per partition (64 Ki edges each).
pub const PREFETCH_BATCHES: usize = 4;

fn malformed(why: impl std::fmt::Display) -> BallistaError {
    BallistaError::Merge(format!("malformed result: {why}"))
}

fn merge_error(e: impl std::fmt::Display) -> BallistaError {
    BallistaError::Merge(e.to_string())
}

/// One result partition's edges, as its fetch task sends its batches.
#[derive(Debug)]
pub struct PartitionEdges {
    batches: Receiver<datafusion::error::Result<RecordBatch>>,
    reader: Reader,
    edges: Vec<(u32, u32)>,
    at: usize,
    last: Option<(u32, u32)>,
    received: u64,
}

impl PartitionEdges {
    /// The partition whose batches arrive on `batches`.
    pub fn new(batches: Receiver<datafusion::error::Result<RecordBatch>>) -> Self {
        PartitionEdges {
            batches,
            reader: Reader::default(),
            edges: Vec::new(),
            at: 0,
            last: None,
            received: 0,
        }
    }

    /// Reads up to the partition's summary (its first rows), keeping any
    /// edges that came with it.
    pub async fn summary(&mut self) -> Result<Summary, BallistaError> {
        loop {
            let Some(batch) = self.batches.recv().await else {
                return Err(malformed("a partition without its summary"));
            };
            if let Some(summary) = self.read(batch)? {
                return Ok(summary);
            }
        }
    }

    /// Decodes one batch: its edges to the buffer, its summary returned.
    fn read(
        &mut self,
        batch: datafusion::error::Result<RecordBatch>,
    ) -> Result<Option<Summary>, BallistaError> {
        let batch = batch.map_err(merge_error)?;
        let (edges, mut summary) = (&mut self.edges, None);
        let edge = |u, v| {
            edges.push((u, v));
            Ok(())
        };
        let one = |s| {
            summary = Some(s);
            Ok(())
        };
        self.reader.read(&batch, edge, one).map_err(merge_error)?;
        Ok(summary)
    }

    /// The next edge, checked to follow the last in (u, v) order.
    fn next(&mut self) -> Result<Option<(u32, u32)>, BallistaError> {
        while self.at == self.edges.len() {
            self.edges.clear();
            self.at = 0;
            let Some(batch) = self.batches.blocking_recv() else {
                self.reader.finish().map_err(merge_error)?;
                return Ok(None);
            };
            if self.read(batch)?.is_some() {
                return Err(malformed("a second summary in one partition"));
            }
        }
        let e = self.edges[self.at];
        self.at += 1;
        if self.last.is_some_and(|last| last >= e) {
            return Err(malformed(format!("edge {e:?} after {:?}", self.last.unwrap_or(e))));
        }
        self.last = Some(e);
        self.received += 1;
        Ok(Some(e))
    }
}

/// What the merge made.
#[derive(Debug)]
pub struct Merged {
    /// The graph on `nodes` nodes.
    pub graph: ConflictGraph,
    /// The fingerprint of its stream Λ.
    pub fingerprint: EdgeFingerprint,
    /// Edges received, repeats across partitions included.
    pub received: u64,
}

/// Merges `partitions` (their summaries read) into the graph on `nodes`
/// nodes, keeping about `spill.memory_limit` bytes of adjacency in memory.
/// Blocking: run it off the runtime's workers, which fetch the batches.
pub fn merge(
    mut partitions: Vec<PartitionEdges>,
    nodes: u32,
    spill: &SpillConfig,
) -> Result<Merged, BallistaError> {
    // Keys are (u << 32 | v): one integer compare per heap step, and the
    // smallest is replaced in place (one sift, not a pop and a push).
    let key = |(u, v): (u32, u32)| u64::from(u) << 32 | u64::from(v);
    let mut heap = BinaryHeap::new();
    for (i, p) in partitions.iter_mut().enumerate() {
        if let Some(e) = p.next()? {
            heap.push(Reverse((key(e), i)));
        }
    }
    let mut builder = GraphBuilder::with_spill(nodes, spill).map_err(merge_error)?;
    let mut error = None;
    let mut last = None;
    let merged = std::iter::from_fn(|| {
        loop {
            let mut top = heap.peek_mut()?;
            let Reverse((e, i)) = *top;
            match partitions[i].next() {
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
        return Err(e);
    }
    if let Some(v) = bad {
        return Err(BallistaError::Merge(format!("edge to row {v} of a table of {nodes} rows")));
    }
    let received = partitions.iter().map(|p| p.received).sum();
    Ok(Merged { graph: builder.finish(), fingerprint, received })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::wire::{batch, summary};

    /// A partition sending its summary, then `edges` in batches of 2.
    fn partition(group: u32, edges: &[(u32, u32)]) -> PartitionEdges {
        let (tx, rx) = tokio::sync::mpsc::channel(64);
        let s = Summary { group, rows: 0, max_frequency: None, classes: None };
        tx.try_send(Ok(summary(&s).unwrap())).unwrap();
        for chunk in edges.chunks(2) {
            let us = chunk.iter().map(|e| e.0).collect();
            let vs = chunk.iter().map(|e| e.1).collect();
            tx.try_send(Ok(batch(us, vs).unwrap())).unwrap();
        }
        PartitionEdges::new(rx)
    }

    fn spill() -> (tempfile::TempDir, SpillConfig) {
        let dir = tempfile::tempdir().unwrap();
        let config = SpillConfig { dir: dir.path().to_path_buf(), memory_limit: 1 << 14 };
        (dir, config)
    }

    async fn summaries(mut parts: Vec<PartitionEdges>) -> Vec<PartitionEdges> {
        for p in &mut parts {
            p.summary().await.unwrap();
        }
        parts
    }

    #[tokio::test]
    async fn partitions_merge_into_one_deduplicated_stable_stream() {
        let parts = summaries(vec![
            partition(0, &[(0, 3), (1, 2), (2, 5)]),
            partition(1, &[(0, 3), (0, 4), (2, 5), (3, 4)]),
            partition(1, &[]),
        ])
        .await;
        let (_dir, config) = spill();
        let merged =
            tokio::task::spawn_blocking(move || merge(parts, 6, &config)).await.unwrap().unwrap();
        let want = [(0, 3), (0, 4), (1, 2), (2, 5), (3, 4)];
        let edges: Vec<(u32, u32)> = merged.graph.edges().map(|e| (e.u, e.v)).collect();
        assert_eq!(edges, want);
        let expected = edge_stream_fingerprint(want.iter().map(|&(u, v)| Edge { u, v }));
        assert_eq!(merged.fingerprint, expected);
        assert_eq!(merged.received, 7);
    }

    #[tokio::test]
    async fn an_unsorted_partition_or_an_edge_past_the_table_is_an_error() {
        let (_dir, config) = spill();
        let parts = summaries(vec![partition(0, &[(1, 2), (0, 5)])]).await;
        let c = config.clone();
        let err = tokio::task::spawn_blocking(move || merge(parts, 6, &c)).await.unwrap();
        assert!(err.unwrap_err().to_string().contains("after"));
        let parts = summaries(vec![partition(0, &[(1, 9)])]).await;
        let err = tokio::task::spawn_blocking(move || merge(parts, 6, &config)).await.unwrap();
        assert!(err.unwrap_err().to_string().contains("row 9"));
    }

    #[tokio::test]
    async fn a_partition_without_a_summary_is_an_error() {
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        tx.try_send(Ok(batch(vec![0], vec![1]).unwrap())).unwrap();
        drop(tx);
        let mut p = PartitionEdges::new(rx);
        assert!(p.summary().await.is_err());
    }
}
