//! What a detection partition sends: its summary, then its graph's parts
//! unfrozen in global row ids: row records (`dpincon_graph::encode_row`:
//! a row's neighbours above it, the frozen graph's own container layout)
//! and the complete multipartite groups of its keys and FDs, about
//! [`ROWS_BYTES`] a batch.
//!
//! Rows `(kind, data)`: `kind` [`SUMMARY`] once, first, then [`ROWS`] and
//! [`GROUPS`]. A groups row holds whole groups, each little-endian u32s:
//! the class count c and share count s, c class sizes, the classes' rows
//! (each class ascending), then s shares `(start, end)` of the group's
//! (class, id) order.
//! A summary's `data` is the [`Summary`] in JSON (serde, field by field;
//! a stream that breaks this shape is an error, never a wrong graph).

use std::ops::Range;
use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, BinaryArray, RecordBatch, UInt8Array};
use datafusion::arrow::buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, UInt8Type};
use datafusion::error::{DataFusionError, Result};
use dpincon_detect::ConflictClasses;
use dpincon_graph::Multipartite;

/// `kind` of a summary row.
pub const SUMMARY: u8 = 0;
/// `kind` of a row of row records.
pub const ROWS: u8 = 1;
/// `kind` of a row of multipartite groups.
pub const GROUPS: u8 = 2;
/// Bytes of row records (or groups) a partition sends per batch.
pub const ROWS_BYTES: usize = 1 << 20;

/// The output schema: `kind` UInt8 and `data` Binary, never NULL.
pub fn output_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("kind", DataType::UInt8, false),
        Field::new("data", DataType::Binary, false),
    ]))
}

/// A one-row batch of `kind` holding `data`, taking its bytes without a
/// copy.
fn one(kind: u8, data: Vec<u8>) -> Result<RecordBatch> {
    let len = i32::try_from(data.len()).map_err(|_| bad("a batch over 2 GiB"))?;
    let offsets = OffsetBuffer::new(ScalarBuffer::from(vec![0, len]));
    let data = BinaryArray::try_new(offsets, Buffer::from_vec(data), None)?;
    Ok(RecordBatch::try_new(
        output_schema(),
        vec![Arc::new(UInt8Array::from(vec![kind])), Arc::new(data)],
    )?)
}

/// A batch of row records (whole records, as `encode_row` writes them).
pub fn rows(records: Vec<u8>) -> Result<RecordBatch> {
    one(ROWS, records)
}

/// A batch of groups (whole, as [`encode_group`] writes them).
pub fn groups(bytes: Vec<u8>) -> Result<RecordBatch> {
    one(GROUPS, bytes)
}

/// Appends a group with classes `classes` (rows ascending in each) and
/// `shares` to `out`.
pub fn encode_group(
    out: &mut Vec<u8>,
    classes: impl ExactSizeIterator<Item = impl ExactSizeIterator<Item = u32> + Clone> + Clone,
    shares: &[Range<usize>],
) {
    let mut put = |v: u32| out.extend_from_slice(&v.to_le_bytes());
    put(classes.len() as u32);
    put(shares.len() as u32);
    classes.clone().for_each(|class| put(class.len() as u32));
    classes.for_each(|class| class.for_each(&mut put));
    for share in shares {
        put(share.start as u32);
        put(share.end as u32);
    }
}

/// The groups of a [`GROUPS`] row, each checked against a graph of
/// `nodes` nodes (`Multipartite::try_new`), with their shares.
pub fn read_groups(data: &[u8], nodes: u32) -> Result<Vec<(Multipartite, Vec<Range<usize>>)>> {
    if !data.len().is_multiple_of(4) {
        return Err(bad("groups of stray bytes"));
    }
    let mut words = data.chunks_exact(4).map(|b| u32::from_le_bytes(b.try_into().expect("4")));
    let mut out = Vec::new();
    while let Some(c) = words.next() {
        let mut next = || words.next().ok_or_else(|| bad("a group cut short"));
        let s = next()?;
        let sizes = (0..c).map(|_| next()).collect::<Result<Vec<_>>>()?;
        let classes = sizes
            .iter()
            .map(|&size| (0..size).map(|_| next()).collect::<Result<Vec<u32>>>())
            .collect::<Result<Vec<_>>>()?;
        let shares =
            (0..s).map(|_| Ok(next()? as usize..next()? as usize)).collect::<Result<Vec<_>>>()?;
        out.push((Multipartite::try_new(&classes, nodes).map_err(bad)?, shares));
    }
    Ok(out)
}

/// One partition's summary.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    /// The constraint group.
    pub group: u32,
    /// Rows the partition held.
    pub rows: u32,
    /// Max frequency of the group's equality set (none: unbounded group).
    pub max_frequency: Option<u32>,
    /// Pairs of the row records the partition sends; none when its
    /// detection stopped at the pair cap (the job is then over its edge
    /// cap, and the partition sends no graph).
    pub pairs: Option<u64>,
    /// Pairs of the multipartite groups it sends (each group's pairs
    /// counted once, from its class sizes).
    pub group_pairs: u64,
    /// The classes of the group's keys and FDs among its rows (none when
    /// the group has no key or FD), and whether every member is one.
    pub classes: Option<(ConflictClasses, bool)>,
    /// The chain covers of the group's order pairs among its rows, in the
    /// pairs' order (`dpincon_detect::EqualityFrequencies::chain_covers`;
    /// empty from a pair task, which sees part of the table).
    pub chains: Vec<u64>,
}

/// A partition's summary as a batch (JSON, as the codec writes our plan
/// nodes: a few hundred bytes per partition).
pub fn summary(s: &Summary) -> Result<RecordBatch> {
    let data = serde_json::to_vec(s).map_err(|e| bad(format!("a summary: {e}")))?;
    one(SUMMARY, data)
}

fn bad(what: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::Execution(format!("malformed result: {what}"))
}

fn read_summary(data: &[u8]) -> Result<Summary> {
    serde_json::from_slice(data).map_err(|e| bad(format!("a summary: {e}")))
}

/// One row of a partition's output.
#[derive(Debug, PartialEq, Eq)]
pub enum Part<'a> {
    /// The partition's summary.
    Summary(Summary),
    /// Row records, to be checked by the graph builder that keeps them.
    Rows(&'a [u8]),
    /// Multipartite groups ([`read_groups`]).
    Groups(&'a [u8]),
}

/// The rows of one output batch, in order.
pub fn parts(batch: &RecordBatch) -> Result<Vec<Part<'_>>> {
    let columns = batch.columns();
    let (Some(kind), Some(data), 2) = (columns.first(), columns.get(1), columns.len()) else {
        return Err(bad("not two columns"));
    };
    let (Some(kind), Some(data)) =
        (kind.as_primitive_opt::<UInt8Type>(), data.as_binary_opt::<i32>())
    else {
        return Err(bad("not (UInt8, Binary) columns"));
    };
    if kind.null_count() + data.null_count() > 0 {
        return Err(bad("NULLs"));
    }
    kind.values()
        .iter()
        .zip(data.iter().flatten())
        .map(|(&kind, data)| match kind {
            SUMMARY => read_summary(data).map(Part::Summary),
            ROWS => Ok(Part::Rows(data)),
            GROUPS => Ok(Part::Groups(data)),
            other => Err(bad(format!("a row of kind {other}"))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_and_rows_read_back_and_bad_batches_are_refused() {
        let classes = ConflictClasses {
            key: false,
            exact: true,
            cover: 2,
            max_class: 3,
            null_rows: 1,
            sizes: vec![(1, 2), (3, 1)],
            excess: 1,
            leading: vec![4, 9, 12],
            deleted: vec![2, 9],
        };
        let classes = Some((classes, true));
        let with = Summary {
            group: 3,
            rows: 9,
            max_frequency: Some(4),
            pairs: Some(17),
            group_pairs: 40,
            classes,
            chains: vec![5],
        };
        let without = Summary {
            group: 4,
            rows: 12,
            max_frequency: None,
            pairs: None,
            group_pairs: 0,
            classes: None,
            chains: vec![],
        };
        for s in [&with, &without] {
            let batch = summary(s).unwrap();
            assert_eq!(parts(&batch).unwrap(), [Part::Summary(s.clone())]);
        }
        let records = vec![1u8, 2, 3];
        assert_eq!(parts(&rows(records.clone()).unwrap()).unwrap(), [Part::Rows(&records[..])]);

        let raw = |kind: u8, data: &[u8]| {
            let columns: Vec<Arc<dyn Array>> = vec![
                Arc::new(UInt8Array::from(vec![kind])),
                Arc::new(BinaryArray::from(vec![data])),
            ];
            RecordBatch::try_new(output_schema(), columns).unwrap()
        };
        assert!(parts(&raw(7, &[])).unwrap_err().to_string().contains("kind 7"));
        let good = summary(&with).unwrap();
        let data = good.column(1).as_binary::<i32>().value(0);
        for cut in [8, data.len() - 8, data.len() - 1] {
            assert!(parts(&raw(SUMMARY, &data[..cut])).is_err(), "cut at {cut}");
        }
        let mut long = data.to_vec();
        long.extend(b"{}");
        assert!(parts(&raw(SUMMARY, &long)).unwrap_err().to_string().contains("trailing"));
    }
}
