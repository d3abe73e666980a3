//! dpincon's gRPC services and what travels over them.
//!
//! The services are defined in `proto/dpincon.proto` and compiled at build
//! time with protox (no system `protoc`): [`v1`] holds the generated
//! messages, clients and servers. This crate also converts the detection
//! types to and from the wire:
//!
//! - [`KeyConstraint`] <-> [`v1::KeyConstraint`] ([`constraint_to_proto`],
//!   [`constraint_from_proto`]);
//! - a task's rows <-> one Arrow IPC stream ([`rows_to_ipc`],
//!   [`rows_from_ipc`]): a UInt32 `id` column of global tuple ids and one
//!   nullable UInt64 column per slot, so the keys keep their exact bits and
//!   NULLs stay NULL;
//! - adjacency shards travel as `dpincon_graph::encode_shard` bytes.
//!
//! Everything decoded is validated (slots in range, ids ascending and below
//! the node count) so a malformed request fails with an error instead of a
//! panic in detection.

#![warn(missing_docs)]

use std::io::Cursor;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, RecordBatch, UInt32Array, UInt64Array};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::ipc::reader::StreamReader;
use arrow::ipc::writer::StreamWriter;
use dpincon_constraints::{Operator, TupleVar};
use dpincon_detect::{
    KeyColumn, KeyConstraint, KeyOperand, KeyPredicate, OrderedOperator, Relation,
};

/// The generated gRPC code of `proto/dpincon.proto` (package `dpincon.v1`).
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod v1 {
    tonic::include_proto!("dpincon.v1");
}

/// Largest message either side accepts or sends. tonic's default is 4 MiB,
/// too small for a task's rows or edges on real tables; 512 MiB still
/// bounds what one bad peer can make a process allocate.
pub const MAX_MESSAGE_BYTES: usize = 512 << 20;

/// The crate's one error type: what a peer sent that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ProtoError {
    /// A message is malformed or inconsistent.
    #[error("invalid message: {0}")]
    Invalid(String),
    /// The Arrow IPC payload cannot be written or read.
    #[error("arrow IPC: {0}")]
    Arrow(#[from] arrow::error::ArrowError),
}

fn invalid(message: impl Into<String>) -> ProtoError {
    ProtoError::Invalid(message.into())
}

fn tuple_to_proto(t: TupleVar) -> v1::Tuple {
    match t {
        TupleVar::T1 => v1::Tuple::T1,
        TupleVar::T2 => v1::Tuple::T2,
    }
}

fn tuple_from_proto(raw: i32) -> Result<TupleVar, ProtoError> {
    match v1::Tuple::try_from(raw) {
        Ok(v1::Tuple::T1) => Ok(TupleVar::T1),
        Ok(v1::Tuple::T2) => Ok(TupleVar::T2),
        _ => Err(invalid(format!("unknown tuple variable {raw}"))),
    }
}

fn operator_to_proto(op: Operator) -> v1::Operator {
    match op {
        Operator::Eq => v1::Operator::Eq,
        Operator::Ne => v1::Operator::Ne,
        Operator::Lt => v1::Operator::Lt,
        Operator::Gt => v1::Operator::Gt,
        Operator::Le => v1::Operator::Le,
        Operator::Ge => v1::Operator::Ge,
    }
}

fn operator_from_proto(raw: i32) -> Result<Operator, ProtoError> {
    Ok(match v1::Operator::try_from(raw) {
        Ok(v1::Operator::Eq) => Operator::Eq,
        Ok(v1::Operator::Ne) => Operator::Ne,
        Ok(v1::Operator::Lt) => Operator::Lt,
        Ok(v1::Operator::Gt) => Operator::Gt,
        Ok(v1::Operator::Le) => Operator::Le,
        Ok(v1::Operator::Ge) => Operator::Ge,
        _ => return Err(invalid(format!("unknown operator {raw}"))),
    })
}

/// A compiled constraint for the wire.
pub fn constraint_to_proto(c: &KeyConstraint) -> v1::KeyConstraint {
    v1::KeyConstraint {
        id: c.id as u64,
        display: c.display.clone(),
        predicates: c
            .predicates
            .iter()
            .map(|p| v1::KeyPredicate {
                tuple: tuple_to_proto(p.tuple) as i32,
                slot: p.slot as u32,
                op: operator_to_proto(p.op.get()) as i32,
                right: Some(match p.right {
                    KeyOperand::Column { tuple, slot } => {
                        v1::key_predicate::Right::Column(v1::ColumnRef {
                            tuple: tuple_to_proto(tuple) as i32,
                            slot: slot as u32,
                        })
                    }
                    KeyOperand::Const(k) => v1::key_predicate::Right::Constant(k),
                }),
            })
            .collect(),
    }
}

/// A constraint from the wire, checked against a relation of `slots` slots.
pub fn constraint_from_proto(
    c: &v1::KeyConstraint,
    slots: usize,
) -> Result<KeyConstraint, ProtoError> {
    let slot = |s: u32| -> Result<usize, ProtoError> {
        let s = s as usize;
        if s < slots {
            Ok(s)
        } else {
            Err(invalid(format!("constraint refers to slot {s} of a task with {slots} slots")))
        }
    };
    let predicates = c
        .predicates
        .iter()
        .map(|p| {
            let right = match &p.right {
                Some(v1::key_predicate::Right::Column(col)) => KeyOperand::Column {
                    tuple: tuple_from_proto(col.tuple)?,
                    slot: slot(col.slot)?,
                },
                Some(v1::key_predicate::Right::Constant(k)) => KeyOperand::Const(*k),
                None => return Err(invalid("a predicate has no right operand")),
            };
            Ok(KeyPredicate {
                tuple: tuple_from_proto(p.tuple)?,
                slot: slot(p.slot)?,
                op: OrderedOperator::new(operator_from_proto(p.op)?),
                right,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if predicates.is_empty() {
        return Err(invalid("a constraint has no predicate"));
    }
    let id = usize::try_from(c.id).map_err(|_| invalid("constraint id out of range"))?;
    Ok(KeyConstraint { id, display: c.display.clone(), predicates })
}

fn task_schema(slots: usize) -> Arc<Schema> {
    let mut fields = vec![Field::new("id", DataType::UInt32, false)];
    fields.extend((0..slots).map(|s| Field::new(format!("s{s}"), DataType::UInt64, true)));
    Arc::new(Schema::new(fields))
}

/// A task's rows as one Arrow IPC stream: local row `i` of `relation` is
/// tuple `ids[i]`.
pub fn rows_to_ipc(relation: &Relation, ids: &[u32]) -> Result<Vec<u8>, ProtoError> {
    if ids.len() != relation.rows() as usize {
        return Err(invalid("one tuple id per row"));
    }
    let schema = task_schema(relation.slot_count());
    let mut columns: Vec<ArrayRef> = vec![Arc::new(UInt32Array::from(ids.to_vec()))];
    for s in 0..relation.slot_count() {
        let column = relation.column(s);
        columns
            .push(Arc::new((0..relation.rows()).map(|r| column.get(r)).collect::<UInt64Array>()));
    }
    let batch = RecordBatch::try_new(schema.clone(), columns)?;
    let mut writer = StreamWriter::try_new(Vec::new(), &schema)?;
    writer.write(&batch)?;
    writer.finish()?;
    Ok(writer.into_inner()?)
}

/// Reads [`rows_to_ipc`] bytes back: the relation (slots in column order)
/// and the tuple ids, which must ascend strictly and lie below `nodes`.
pub fn rows_from_ipc(bytes: &[u8], nodes: u32) -> Result<(Relation, Vec<u32>), ProtoError> {
    let reader = StreamReader::try_new(Cursor::new(bytes), None)?;
    let schema = reader.schema();
    let slots = schema.fields().len().checked_sub(1).ok_or_else(|| invalid("no id column"))?;
    let expected = task_schema(slots);
    if schema.fields() != expected.fields() {
        return Err(invalid(format!("unexpected task schema {schema}")));
    }
    let mut ids: Vec<u32> = Vec::new();
    let mut keys: Vec<Vec<Option<u64>>> = vec![Vec::new(); slots];
    for batch in reader {
        let batch = batch?;
        let id = batch
            .column(0)
            .as_any()
            .downcast_ref::<UInt32Array>()
            .ok_or_else(|| invalid("id column is not UInt32"))?;
        if id.null_count() > 0 {
            return Err(invalid("NULL tuple id"));
        }
        ids.extend(id.values().iter().copied());
        for (s, out) in keys.iter_mut().enumerate() {
            let column = batch
                .column(s + 1)
                .as_any()
                .downcast_ref::<UInt64Array>()
                .ok_or_else(|| invalid("key column is not UInt64"))?;
            out.extend(column.iter());
        }
    }
    if ids.windows(2).any(|w| w[0] >= w[1]) {
        return Err(invalid("tuple ids do not ascend"));
    }
    if ids.last().is_some_and(|&last| last >= nodes) {
        return Err(invalid(format!("tuple id beyond the graph's {nodes} nodes")));
    }
    let rows = u32::try_from(ids.len()).map_err(|_| invalid("too many rows"))?;
    let columns = keys.into_iter().map(KeyColumn::from_keys).collect();
    Ok((Relation::from_slots(rows, columns), ids))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> (Relation, Vec<u32>, KeyConstraint) {
        let a = KeyColumn::from_keys([Some(1), None, Some(u64::MAX), Some(0)]);
        let b = KeyColumn::from_keys([Some(7), Some(7), None, None]);
        let relation = Relation::from_slots(4, vec![a, b]);
        let c = KeyConstraint {
            id: 3,
            display: "not(t1.A=t2.A & t1.B>5)".into(),
            predicates: vec![
                KeyPredicate {
                    tuple: TupleVar::T1,
                    slot: 0,
                    op: OrderedOperator::new(Operator::Eq),
                    right: KeyOperand::Column { tuple: TupleVar::T2, slot: 0 },
                },
                KeyPredicate {
                    tuple: TupleVar::T2,
                    slot: 1,
                    op: OrderedOperator::new(Operator::Ge),
                    right: KeyOperand::Const(5),
                },
            ],
        };
        (relation, vec![2, 5, 9, 11], c)
    }

    #[test]
    fn constraints_round_trip() {
        let (_, _, c) = sample();
        let wire = constraint_to_proto(&c);
        assert_eq!(constraint_from_proto(&wire, 2).unwrap(), c);
        assert!(constraint_from_proto(&wire, 1).is_err(), "slot 1 of a one-slot task");
        let mut bad = wire.clone();
        bad.predicates[0].op = 0;
        assert!(constraint_from_proto(&bad, 2).is_err());
        let mut bad = wire;
        bad.predicates[1].right = None;
        assert!(constraint_from_proto(&bad, 2).is_err());
    }

    #[test]
    fn rows_round_trip_with_nulls() {
        let (relation, ids, _) = sample();
        let bytes = rows_to_ipc(&relation, &ids).unwrap();
        let (back, back_ids) = rows_from_ipc(&bytes, 12).unwrap();
        assert_eq!(back_ids, ids);
        assert_eq!(back.rows(), 4);
        assert_eq!(back.slot_count(), 2);
        for s in 0..2 {
            for r in 0..4 {
                assert_eq!(back.column(s).get(r), relation.column(s).get(r));
            }
        }
        assert!(rows_from_ipc(&bytes, 11).is_err(), "id 11 is not a node of 11");
        assert!(rows_from_ipc(&bytes[..bytes.len() / 2], 12).is_err());
        assert!(rows_to_ipc(&relation, &ids[..3]).is_err());
    }
}
