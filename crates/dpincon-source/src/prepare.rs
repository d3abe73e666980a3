//! Constraints made ready to detect on a table: bound to its schema, the
//! table encoded for them, then compiled against the encoding. The one path
//! of the embedded job (the whole table), the coordinator's plan (an empty
//! table of the declared schema: the same slots and constants' codes) and
//! each executor's partition.

use std::path::PathBuf;
use std::sync::Arc;

use arrow::datatypes::Schema;
use dpincon_constraints::{BoundConstraint, ConstraintError, DenialConstraint};
use dpincon_detect::{DetectError, KeyConstraint, Relation, compile};

use crate::{SourceError, TableData, encode};

/// A table's constraints, ready for detection.
#[derive(Debug)]
pub struct Prepared {
    /// The constraints bound to the table's schema (FDs expanded).
    pub bound: Vec<BoundConstraint>,
    /// The table's compared columns, encoded for them.
    pub relation: Relation,
    /// The constraints compiled against the encoding.
    pub compiled: Vec<KeyConstraint>,
}

/// Binds `parsed` to `table`'s schema, keeps the bound constraints `keep`
/// accepts, encodes the table for them (on up to `threads` threads) and
/// compiles them. A binding error
/// goes through `bind_error` (callers name the constraint file or not);
/// the others convert into the caller's error.
pub fn prepare_detection<E>(
    parsed: &[DenialConstraint],
    table: &TableData,
    keep: impl Fn(&BoundConstraint) -> bool,
    threads: usize,
    bind_error: impl FnOnce(ConstraintError) -> E,
) -> Result<Prepared, E>
where
    E: From<SourceError> + From<DetectError>,
{
    let bound = dpincon_constraints::bind(parsed, &table.schema()).map_err(bind_error)?;
    let bound: Vec<BoundConstraint> = bound.into_iter().filter(keep).collect();
    let relation = encode(table, &bound, threads)?;
    let compiled = compile(&bound, &relation)?;
    Ok(Prepared { bound, relation, compiled })
}

impl TableData {
    /// A table of `schema` with no row: what the coordinator plans against
    /// before any executor reads the table at `path`.
    pub fn empty(path: impl Into<PathBuf>, schema: Arc<Schema>) -> Self {
        TableData { path: path.into(), arrow_schema: schema, batches: Vec::new(), rows: 0 }
    }
}

#[cfg(test)]
mod tests {
    use arrow::array::{ArrayRef, Int64Array, StringArray};
    use arrow::datatypes::{DataType, Field};
    use arrow::record_batch::RecordBatch;
    use dpincon_constraints::parse_constraints;

    use super::*;

    type AnyError = Box<dyn std::error::Error>;

    fn table() -> TableData {
        let schema = Arc::new(Schema::new(vec![
            Field::new("Zip", DataType::Int64, true),
            Field::new("City", DataType::Utf8, true),
        ]));
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(vec![1, 1, 2])),
            Arc::new(StringArray::from(vec!["a", "b", "c"])),
        ];
        let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
        TableData { path: "t.csv".into(), arrow_schema: schema, batches: vec![batch], rows: 3 }
    }

    #[test]
    fn the_table_and_an_empty_one_of_its_schema_plan_alike() {
        let parsed =
            parse_constraints("FD: Zip -> City\nnot(t1.Zip<t2.Zip & t1.City=\"x\")\n").unwrap();
        let full =
            prepare_detection::<AnyError>(&parsed, &table(), |_| true, 1, |e| e.into()).unwrap();
        assert_eq!((full.bound.len(), full.relation.rows()), (2, 3));
        let ids = |p: &Prepared| p.compiled.iter().map(|c| c.id).collect::<Vec<_>>();
        assert_eq!(ids(&full), [0, 1]);
        let empty = TableData::empty("t.csv", table().arrow_schema);
        let planned =
            prepare_detection::<AnyError>(&parsed, &empty, |_| true, 1, |e| e.into()).unwrap();
        assert_eq!(planned.relation.rows(), 0);
        let shown = |p: &Prepared| p.compiled.iter().map(|c| c.display.clone()).collect::<Vec<_>>();
        assert_eq!(shown(&planned), shown(&full));
        // An executor keeps its group's members only.
        let second =
            prepare_detection::<AnyError>(&parsed, &table(), |c| c.id == 1, 1, |e| e.into());
        assert_eq!(ids(&second.unwrap()), [1]);
    }

    /// The strings (one dictionary) on one thread and the numeric columns
    /// on others: the same slots, keys and constants' codes whatever
    /// `threads`, NULLs included.
    #[test]
    fn threads_do_not_change_the_encoding() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("Zip", DataType::Int64, true),
            Field::new("City", DataType::Utf8, true),
            Field::new("Rate", DataType::Float64, true),
            Field::new("State", DataType::Utf8, true),
            Field::new("Salary", DataType::Int64, true),
        ]));
        let rows = 300;
        let batches = (0..3)
            .map(|b| {
                let at = |i: i64| b * 100 + i;
                let columns: Vec<ArrayRef> = vec![
                    Arc::new(Int64Array::from_iter(
                        (0..100).map(|i| (at(i) % 7 != 0).then_some(at(i) % 13)),
                    )),
                    Arc::new(StringArray::from_iter(
                        (0..100).map(|i| (at(i) % 5 != 0).then(|| format!("c{}", at(i) % 11))),
                    )),
                    Arc::new(arrow::array::Float64Array::from_iter(
                        (0..100).map(|i| Some(at(i) as f64 / 3.0)),
                    )),
                    Arc::new(StringArray::from_iter(
                        (0..100).map(|i| Some(format!("s{}", at(i) % 4))),
                    )),
                    Arc::new(Int64Array::from_iter((0..100).map(|i| Some(-at(i))))),
                ];
                RecordBatch::try_new(schema.clone(), columns).unwrap()
            })
            .collect();
        let table = TableData { path: "t.csv".into(), arrow_schema: schema, batches, rows };
        let parsed = parse_constraints(
            "FD: Zip -> City\nnot(t1.State=t2.State & t1.Salary>t2.Salary & t1.Rate<t2.Rate)\n\
             not(t1.City=\"c3\" & t1.State=\"zz\" & t1.Zip=t2.Zip)\n",
        )
        .unwrap();
        let encoded = |threads| {
            prepare_detection::<AnyError>(&parsed, &table, |_| true, threads, |e| e.into())
                .unwrap()
                .relation
        };
        let one = encoded(1);
        use dpincon_constraints::Domain;
        let wanted = [(0, Domain::Int), (1, Domain::Str), (2, Domain::Float), (3, Domain::Str)];
        assert!(wanted.iter().all(|&(c, d)| one.slot(c, d).is_some()) && one.rows() == rows);
        for threads in [2, 3, 8] {
            assert!(encoded(threads) == one, "{threads} threads");
        }
    }

    #[test]
    fn a_binding_error_is_the_callers_to_name() {
        let parsed = parse_constraints("FD: Zip -> Town\n").unwrap();
        let named = |e: ConstraintError| -> AnyError { format!("t.dcs: {e}").into() };
        let err = prepare_detection(&parsed, &table(), |_| true, 1, named).unwrap_err().to_string();
        assert!(err.starts_with("t.dcs: ") && err.contains("Town"), "{err}");
    }
}
