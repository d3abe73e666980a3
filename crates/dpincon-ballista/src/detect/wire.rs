//! What a detection partition sends: `(u, v)` rows of UInt32, 8 bytes an
//! edge, then its summary as two rows `(MARK, group)`, `(rows, max)`.
//!
//! No edge has `u = MARK` (`u32::MAX`): row ids are below n ≤ 2^32 − 1.
//! `max` is `MARK` when the group has no equality set (no frequency): a
//! real maximum frequency is at most n − 1 < `MARK`. A partition's rows
//! reach the coordinator in order (Ballista fetches one partition's
//! stream after another), so a summary's two rows are adjacent; a stream
//! that breaks this shape is an error, never a wrong graph.

use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, RecordBatch, UInt32Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, UInt32Type};
use datafusion::error::{DataFusionError, Result};

/// The marker in `u` opening a summary.
pub const MARK: u32 = u32::MAX;

/// The output schema: `u`, `v`, both UInt32, never NULL.
pub fn output_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("u", DataType::UInt32, false),
        Field::new("v", DataType::UInt32, false),
    ]))
}

/// A batch of edges (or summary rows).
pub fn batch(us: Vec<u32>, vs: Vec<u32>) -> Result<RecordBatch> {
    Ok(RecordBatch::try_new(
        output_schema(),
        vec![Arc::new(UInt32Array::from(us)), Arc::new(UInt32Array::from(vs))],
    )?)
}

/// A partition's summary: its row count and the maximum frequency of its
/// group's equality set among them (`None` for the unbounded group).
pub fn summary(group: u32, rows: u32, max_frequency: Option<u32>) -> Result<RecordBatch> {
    batch(vec![MARK, rows], vec![group, max_frequency.unwrap_or(MARK)])
}

/// One partition's summary, as read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// The constraint group.
    pub group: u32,
    /// Rows the partition held.
    pub rows: u32,
    /// Max frequency of the group's equality set (none: unbounded group).
    pub max_frequency: Option<u32>,
}

/// Reads a stream of output batches: edges to `edge`, summaries to
/// `summary`; state carries a summary split across two batches.
#[derive(Debug, Default)]
pub struct Reader {
    open_group: Option<u32>,
}

impl Reader {
    /// Reads one batch.
    pub fn read(
        &mut self,
        batch: &RecordBatch,
        mut edge: impl FnMut(u32, u32) -> Result<()>,
        mut summary: impl FnMut(Summary) -> Result<()>,
    ) -> Result<()> {
        let bad = |what: &str| DataFusionError::Execution(format!("malformed result: {what}"));
        if batch.num_columns() != 2
            || batch.column(0).null_count() + batch.column(1).null_count() > 0
        {
            return Err(bad("not two non-null columns"));
        }
        let u = batch.column(0).as_primitive::<UInt32Type>().values();
        let v = batch.column(1).as_primitive::<UInt32Type>().values();
        for (&u, &v) in u.iter().zip(v.iter()) {
            if let Some(group) = self.open_group.take() {
                let max_frequency = (v != MARK).then_some(v);
                summary(Summary { group, rows: u, max_frequency })?;
            } else if u == MARK {
                self.open_group = Some(v);
            } else if u < v {
                edge(u, v)?;
            } else {
                return Err(bad(&format!("edge ({u}, {v})")));
            }
        }
        Ok(())
    }

    /// Checks the stream did not end inside a summary.
    pub fn finish(&self) -> Result<()> {
        match self.open_group {
            None => Ok(()),
            Some(_) => Err(DataFusionError::Execution("malformed result: cut summary".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_survive_any_batch_split_and_bad_rows_are_refused() {
        let mut rows = vec![(0, 1), (2, 7)];
        let s = summary(3, 9, Some(4)).unwrap();
        let u = s.column(0).as_primitive::<UInt32Type>().values().to_vec();
        let v = s.column(1).as_primitive::<UInt32Type>().values().to_vec();
        rows.extend(u.into_iter().zip(v));
        rows.push((1, 5));
        rows.extend([(MARK, 4), (12, MARK)]);
        for cut in 0..=rows.len() {
            let (a, b) = rows.split_at(cut);
            let mut reader = Reader::default();
            let (mut edges, mut summaries) = (Vec::new(), Vec::new());
            for part in [a, b] {
                let part =
                    batch(part.iter().map(|r| r.0).collect(), part.iter().map(|r| r.1).collect())
                        .unwrap();
                let edge = |u, v| {
                    edges.push((u, v));
                    Ok(())
                };
                let add = |s| {
                    summaries.push(s);
                    Ok(())
                };
                reader.read(&part, edge, add).unwrap();
            }
            reader.finish().unwrap();
            assert_eq!(edges, [(0, 1), (2, 7), (1, 5)]);
            let want = [
                Summary { group: 3, rows: 9, max_frequency: Some(4) },
                Summary { group: 4, rows: 12, max_frequency: None },
            ];
            assert_eq!(summaries, want);
        }
        let mut reader = Reader::default();
        let reversed = batch(vec![5], vec![2]).unwrap();
        assert!(reader.read(&reversed, |_, _| Ok(()), |_| Ok(())).is_err());
        let cut = batch(vec![MARK], vec![0]).unwrap();
        reader.read(&cut, |_, _| Ok(()), |_| Ok(())).unwrap();
        assert!(reader.finish().is_err());
    }
}
