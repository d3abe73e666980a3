//! What a detection partition sends: its summary, then `(u, v)` rows of
//! UInt32, 8 bytes an edge, in (u, v) order. The summary: `(MARK, group)`, `(rows, max)`, `(k, 0)` with
//! k ∈ {0, 1} and, when k = 1, the classes of the group's keys and FDs
//! (`dpincon_detect::fd_classes`; a group is one X): `(cover, max_class)`,
//! `(null_rows, flags)` (bit 0 a key, bit 1 every member is a key or an
//! FD), `(m, excess)` and m rows `(class size, classes of that size)`.
//!
//! No edge has `u = MARK` (`u32::MAX`): row ids are below n ≤ 2^32 − 1.
//! `max` is `MARK` when the group has no equality set (no frequency): a
//! real maximum frequency is at most n − 1 < `MARK`. Each partition is
//! its own stream, so a summary's rows are adjacent; a stream that breaks
//! this shape is an error, never a wrong graph.

use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, RecordBatch, UInt32Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, UInt32Type};
use datafusion::error::{DataFusionError, Result};
use dpincon_detect::ConflictClasses;

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

/// One partition's summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// The constraint group.
    pub group: u32,
    /// Rows the partition held.
    pub rows: u32,
    /// Max frequency of the group's equality set (none: unbounded group).
    pub max_frequency: Option<u32>,
    /// The classes of the group's keys and FDs among its rows (none when
    /// the group has no key or FD), and whether every member is one.
    pub classes: Option<(ConflictClasses, bool)>,
}

const KEY: u32 = 1;
const ALL_FD_SHAPED: u32 = 2;

fn small(v: u64) -> Result<u32> {
    u32::try_from(v).map_err(|_| DataFusionError::Execution("a count beyond u32".into()))
}

/// A partition's summary as rows of the output.
pub fn summary(s: &Summary) -> Result<RecordBatch> {
    let mut us = vec![MARK, s.rows, u32::from(s.classes.is_some())];
    let mut vs = vec![s.group, s.max_frequency.unwrap_or(MARK), 0];
    if let Some((c, all)) = &s.classes {
        let flags = if c.key { KEY } else { 0 } | if *all { ALL_FD_SHAPED } else { 0 };
        us.extend([small(c.cover)?, small(c.null_rows)?, small(c.sizes.len() as u64)?]);
        vs.extend([small(c.max_class)?, flags, small(c.excess)?]);
        for &(size, count) in &c.sizes {
            us.push(small(size)?);
            vs.push(small(count)?);
        }
    }
    batch(us, vs)
}

/// Where the reader is inside a summary.
#[derive(Debug, Default)]
enum State {
    #[default]
    Edges,
    Rows(u32),
    Count(Summary),
    Cover(Summary),
    Flags(Summary),
    Sizes(Summary),
    Size(Summary, usize),
}

/// Reads a stream of output batches: edges to `edge`, summaries to
/// `summary`; state carries a summary split across batches.
#[derive(Debug, Default)]
pub struct Reader {
    state: State,
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
            self.state = match std::mem::take(&mut self.state) {
                State::Edges if u == MARK => State::Rows(v),
                State::Edges if u < v => {
                    edge(u, v)?;
                    State::Edges
                }
                State::Edges => return Err(bad(&format!("edge ({u}, {v})"))),
                State::Rows(group) => {
                    let max_frequency = (v != MARK).then_some(v);
                    State::Count(Summary { group, rows: u, max_frequency, classes: None })
                }
                State::Count(s) if u == 0 => {
                    summary(s)?;
                    State::Edges
                }
                State::Count(s) if u == 1 => State::Cover(s),
                State::Count(_) => return Err(bad("more than one X in a group")),
                State::Cover(mut s) => {
                    let c = ConflictClasses {
                        cover: u.into(),
                        max_class: v.into(),
                        ..ConflictClasses::default()
                    };
                    s.classes = Some((c, false));
                    State::Flags(s)
                }
                State::Flags(mut s) => {
                    let (c, all) = s.classes.as_mut().expect("read before");
                    (c.null_rows, c.key, *all) = (u.into(), v & KEY != 0, v & ALL_FD_SHAPED != 0);
                    State::Sizes(s)
                }
                State::Sizes(mut s) => {
                    s.classes.as_mut().expect("read before").0.excess = v.into();
                    if u == 0 {
                        summary(s)?;
                        State::Edges
                    } else {
                        State::Size(s, u as usize)
                    }
                }
                State::Size(mut s, m) => {
                    let (c, _) = s.classes.as_mut().expect("read before");
                    c.sizes.push((u.into(), v.into()));
                    if c.sizes.len() == m {
                        summary(s)?;
                        State::Edges
                    } else {
                        State::Size(s, m)
                    }
                }
            };
        }
        Ok(())
    }

    /// Checks the stream did not end inside a summary.
    pub fn finish(&self) -> Result<()> {
        match self.state {
            State::Edges => Ok(()),
            _ => Err(DataFusionError::Execution("malformed result: cut summary".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_survive_any_batch_split_and_bad_rows_are_refused() {
        let mut rows = vec![(0, 1), (2, 7)];
        let classes = ConflictClasses {
            key: false,
            cover: 2,
            max_class: 3,
            null_rows: 1,
            sizes: vec![(1, 2), (3, 1)],
            excess: 1,
        };
        let first =
            Summary { group: 3, rows: 9, max_frequency: Some(4), classes: Some((classes, true)) };
        let second = Summary { group: 4, rows: 12, max_frequency: None, classes: None };
        let s = summary(&first).unwrap();
        let u = s.column(0).as_primitive::<UInt32Type>().values().to_vec();
        let v = s.column(1).as_primitive::<UInt32Type>().values().to_vec();
        rows.extend(u.into_iter().zip(v));
        rows.push((1, 5));
        rows.extend([(MARK, 4), (12, MARK), (0, 0)]);
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
            assert_eq!(summaries, [first.clone(), second.clone()]);
        }
        let mut reader = Reader::default();
        let reversed = batch(vec![5], vec![2]).unwrap();
        assert!(reader.read(&reversed, |_, _| Ok(()), |_| Ok(())).is_err());
        let cut = batch(vec![MARK], vec![0]).unwrap();
        reader.read(&cut, |_, _| Ok(()), |_| Ok(())).unwrap();
        assert!(reader.finish().is_err());
    }
}
