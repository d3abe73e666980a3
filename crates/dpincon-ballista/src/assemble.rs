//! The coordinator's side of the result: every partition's graph parts
//! (row records and multipartite groups, `detect::wire`) assembled into
//! one graph, its shards frozen on every core; walking it is the stable
//! order Λ (SPEC §2).
//!
//! Each result partition is one executor's detection output: its summary,
//! then its parts in global row ids. A row conflicting under constraints
//! of several groups arrives in several partitions (an edge of two groups
//! twice); the builder keeps each row's union (`dpincon_graph`), and
//! expands the groups when it freezes, as an embedded builder does. Every
//! partition is fetched by its own task a few batches ahead, its summary
//! first ([`PartitionPieces::summary`]): the graph's node count is the
//! partitions' row count. Then a worker per core checks the pieces and
//! files them by shard as they arrive ([`assemble`]): no sort and no merge
//! of edges on the coordinator, and the fetches overlap the filing
//! (issue 29). Memory: the pieces (about 2 bytes an edge) within the
//! builder's budget, spilled past it.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use datafusion::arrow::array::RecordBatch;
use dpincon_graph::{ConflictGraph, GraphBuilder, SpillConfig};
use tokio::sync::mpsc::{Receiver, Sender};

use crate::BallistaError;
use crate::detect::wire::{Part, Summary, parts, read_groups};

/// Batches (about 1 MiB each) fetched ahead per partition.
pub const PREFETCH_BATCHES: usize = 4;

fn malformed(why: impl std::fmt::Display) -> BallistaError {
    BallistaError::Assemble(format!("malformed result: {why}"))
}

fn assemble_error(e: impl std::fmt::Display) -> BallistaError {
    BallistaError::Assemble(e.to_string())
}

type Batch = datafusion::error::Result<RecordBatch>;

/// One result partition, as its fetch task sends its batches.
#[derive(Debug)]
pub struct PartitionPieces {
    batches: Receiver<Batch>,
    /// The batch the summary came in, when rows followed it there (the
    /// shuffle may join a partition's small batches).
    first: Option<RecordBatch>,
}

impl PartitionPieces {
    /// The partition whose batches arrive on `batches`.
    pub fn new(batches: Receiver<Batch>) -> Self {
        PartitionPieces { batches, first: None }
    }

    /// Reads the partition's summary, its first row.
    pub async fn summary(&mut self) -> Result<Summary, BallistaError> {
        let Some(batch) = self.batches.recv().await else {
            return Err(malformed("a partition without its summary"));
        };
        let batch = batch.map_err(assemble_error)?;
        let summary = match parts(&batch).map_err(assemble_error)?.first() {
            Some(Part::Summary(s)) => s.clone(),
            _ => return Err(malformed("a partition that does not open with its summary")),
        };
        self.first = (batch.num_rows() > 1).then(|| batch.slice(1, batch.num_rows() - 1));
        Ok(summary)
    }

    /// Files the partition's row records and groups into `builder`
    /// (blocking), and returns their bytes.
    fn file_into(&mut self, builder: &GraphBuilder) -> Result<u64, BallistaError> {
        let mut received = 0;
        let mut file = |batch: Batch| -> Result<(), BallistaError> {
            let batch = batch.map_err(assemble_error)?;
            for part in parts(&batch).map_err(assemble_error)? {
                match part {
                    Part::Rows(records) => {
                        builder.add_rows(records).map_err(assemble_error)?;
                        received += records.len() as u64;
                    }
                    Part::Groups(bytes) => {
                        for (group, shares) in
                            read_groups(bytes, builder.nodes()).map_err(assemble_error)?
                        {
                            let group = Arc::new(group);
                            builder.add_shares(&group, &shares).map_err(assemble_error)?;
                        }
                        received += bytes.len() as u64;
                    }
                    Part::Summary(_) => {
                        return Err(malformed("a second summary in one partition"));
                    }
                }
            }
            Ok(())
        };
        if let Some(batch) = self.first.take() {
            file(Ok(batch))?;
        }
        while let Some(batch) = self.batches.blocking_recv() {
            file(batch)?;
        }
        Ok(received)
    }
}

/// What the assembly made.
#[derive(Debug)]
pub struct Assembled {
    /// The graph on `nodes` nodes.
    pub graph: ConflictGraph,
    /// Bytes of row records and groups received, repeats across
    /// partitions included.
    pub received: u64,
}

/// Assembles `partitions` (their summaries read) into the graph on `nodes`
/// nodes, keeping about `spill.memory_limit` bytes of adjacency in memory,
/// with `threads` workers filing pieces and freezing shards. Blocking: run
/// it off the runtime's workers, which fetch the batches.
pub fn assemble(
    partitions: Vec<PartitionPieces>,
    nodes: u32,
    spill: &SpillConfig,
    threads: usize,
) -> Result<Assembled, BallistaError> {
    let builder = GraphBuilder::with_spill(nodes, spill).map_err(assemble_error)?;
    // Each worker takes the next partition not yet taken and files it
    // whole: the result is complete on the executors, so a partition
    // streams as fast as it is read, and all are fetched ahead meanwhile.
    let queue: Vec<Mutex<PartitionPieces>> = partitions.into_iter().map(Mutex::new).collect();
    let received = AtomicU64::new(0);
    let next = AtomicUsize::new(0);
    let work = |builder: &GraphBuilder| -> Result<(), BallistaError> {
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some(partition) = queue.get(k) else { return Ok(()) };
            let bytes = partition.lock().expect("partition lock").file_into(builder)?;
            received.fetch_add(bytes, Ordering::Relaxed);
        }
    };
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.max(1)).map(|_| scope.spawn(|| work(&builder))).collect();
        workers.into_iter().try_for_each(|w| w.join().expect("assembly worker panicked"))
    })?;
    let graph = builder.finish_on(threads.max(1));
    Ok(Assembled { graph, received: received.into_inner() })
}

/// Forwards a result partition's stream into a channel a few batches
/// ahead, stopping at its first error or when the reader is gone.
pub fn prefetch(
    mut stream: impl futures::Stream<Item = Batch> + Send + Unpin + 'static,
) -> PartitionPieces {
    use futures::StreamExt;
    let (tx, rx): (Sender<Batch>, _) = tokio::sync::mpsc::channel(PREFETCH_BATCHES);
    tokio::spawn(async move {
        while let Some(batch) = stream.next().await {
            let failed = batch.is_err();
            if tx.send(batch).await.is_err() || failed {
                break;
            }
        }
    });
    PartitionPieces::new(rx)
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::compute::concat_batches;
    use dpincon_graph::{Edge, encode_row};

    use super::*;
    use crate::detect::wire::{output_schema, rows, summary};

    fn summary_of(group: u32) -> RecordBatch {
        let s = Summary {
            group,
            rows: 0,
            max_frequency: None,
            pairs: Some(0),
            group_pairs: 0,
            classes: None,
            chains: vec![],
        };
        summary(&s).unwrap()
    }

    /// A partition sending `batches` as they are.
    fn partition(batches: Vec<RecordBatch>) -> PartitionPieces {
        let (tx, rx) = tokio::sync::mpsc::channel(batches.len().max(1));
        batches.into_iter().for_each(|b| tx.try_send(Ok(b)).unwrap());
        PartitionPieces::new(rx)
    }

    fn records(rows: &[(u32, &[u32])]) -> Vec<u8> {
        let mut bytes = Vec::new();
        rows.iter().for_each(|(u, vs)| encode_row(&mut bytes, *u, vs));
        bytes
    }

    fn spill() -> (tempfile::TempDir, SpillConfig) {
        let dir = tempfile::tempdir().unwrap();
        let config = SpillConfig { dir: dir.path().to_path_buf(), memory_limit: 1 << 14 };
        (dir, config)
    }

    async fn run(parts: Vec<PartitionPieces>, nodes: u32) -> Result<Assembled, BallistaError> {
        let mut opened = Vec::new();
        for mut p in parts {
            p.summary().await?;
            opened.push(p);
        }
        let (_dir, config) = spill();
        tokio::task::spawn_blocking(move || assemble(opened, nodes, &config, 2)).await.unwrap()
    }

    /// Rows of one node from several partitions are unioned; a summary
    /// sharing its batch with rows (the shuffle joins small batches) is
    /// read as well as one alone.
    #[tokio::test]
    async fn partitions_assemble_into_the_union_of_their_rows() {
        let a = records(&[(0, &[3]), (1, &[2]), (2, &[5])]);
        let b = records(&[(0, &[3, 4]), (2, &[5]), (3, &[4])]);
        let joined =
            concat_batches(&output_schema(), &[summary_of(1), rows(b.clone()).unwrap()]).unwrap();
        let parts = vec![
            partition(vec![
                summary_of(0),
                rows(a[..14].to_vec()).unwrap(),
                rows(a[14..].to_vec()).unwrap(),
            ]),
            partition(vec![joined]),
            partition(vec![summary_of(1)]),
        ];
        let assembled = run(parts, 6).await.unwrap();
        let want = [(0, 3), (0, 4), (1, 2), (2, 5), (3, 4)];
        let got: Vec<Edge> = assembled.graph.edges().collect();
        assert_eq!(got, want.map(|(u, v)| Edge { u, v }));
        assert_eq!(assembled.received, (a.len() + b.len()) as u64);
    }

    /// Groups arrive whole and are expanded at the freeze, their shares
    /// as sent; with rows of the same nodes, the union.
    #[tokio::test]
    async fn groups_assemble_into_their_edges_with_the_rows() {
        use crate::detect::wire::{encode_group, groups};
        let mut bytes = Vec::new();
        // Classes {0, 2} and {4}: edges 0-4, 2-4; rows 0 and 2 only.
        let classes = [vec![0u32, 2], vec![4]];
        let whole = 0..2;
        let whole = std::slice::from_ref(&whole);
        encode_group(&mut bytes, classes.iter().map(|c| c.iter().copied()), whole);
        // A key over {1, 3, 5}, whole.
        let key = [vec![1u32], vec![3], vec![5]];
        encode_group(&mut bytes, key.iter().map(|c| c.iter().copied()), &[0..1, 1..3]);
        let parts = vec![partition(vec![
            summary_of(0),
            groups(bytes.clone()).unwrap(),
            rows(records(&[(0, &[1])])).unwrap(),
        ])];
        let assembled = run(parts, 6).await.unwrap();
        let want = [(0, 1), (0, 4), (1, 3), (1, 5), (2, 4), (3, 5)];
        let got: Vec<Edge> = assembled.graph.edges().collect();
        assert_eq!(got, want.map(|(u, v)| Edge { u, v }));
        // A group's row past the graph, a share past the group: errors.
        let err = run(vec![partition(vec![summary_of(0), groups(bytes).unwrap()])], 5).await;
        assert!(err.unwrap_err().to_string().contains("outside"));
        let mut long = Vec::new();
        let past = 0..4;
        encode_group(&mut long, key.iter().map(|c| c.iter().copied()), std::slice::from_ref(&past));
        let err = run(vec![partition(vec![summary_of(0), groups(long).unwrap()])], 6).await;
        assert!(err.unwrap_err().to_string().contains("share"));
    }

    #[tokio::test]
    async fn a_missing_or_second_summary_or_a_bad_record_is_an_error() {
        let good = records(&[(0, &[1])]);
        let err = run(vec![partition(vec![rows(good.clone()).unwrap()])], 4).await.unwrap_err();
        assert!(err.to_string().contains("open with its summary"), "{err}");
        let err = run(vec![partition(vec![])], 4).await.unwrap_err();
        assert!(err.to_string().contains("without its summary"), "{err}");
        let twice = vec![summary_of(0), rows(good.clone()).unwrap(), summary_of(0)];
        let err = run(vec![partition(twice)], 4).await.unwrap_err();
        assert!(err.to_string().contains("a second summary"), "{err}");
        let past = records(&[(0, &[9])]);
        let err = run(vec![partition(vec![summary_of(0), rows(past).unwrap()])], 4).await;
        assert!(err.unwrap_err().to_string().contains("outside"));
        let cut = vec![summary_of(0), rows(good[..good.len() - 1].to_vec()).unwrap()];
        let err = run(vec![partition(cut)], 4).await.unwrap_err();
        assert!(err.to_string().contains("cut short"), "{err}");
    }
}
