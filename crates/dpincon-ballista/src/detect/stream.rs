//! One partition's detection: rows in, the partition's summary and its
//! adjacency as row records out (the format of [`super::wire`]).

use std::path::PathBuf;

use datafusion::arrow::array::{ArrayRef, AsArray, new_null_array};
use datafusion::arrow::compute::{concat_batches, sort_to_indices, take_record_batch};
use datafusion::arrow::datatypes::{SchemaRef, UInt32Type};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::error::{DataFusionError, Result};
use dpincon_detect::{DetectOptions, detect, equality_frequencies};
use dpincon_graph::encode_row;
use dpincon_source::{Prepared, TableData, prepare_detection};

use crate::BallistaError;

use super::exec::DetectSpec;
use super::wire::{ROWS_BYTES, Summary, rows as rows_batch, summary};

fn failed(what: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::Execution(format!("detection: {what}"))
}

/// The (at most two) blocks of a pair task's rows, given each row's block.
fn pair_of(block: &[u32]) -> Result<(u32, u32)> {
    let first = block.first().copied().unwrap_or(0);
    let other = block.iter().copied().find(|&b| b != first).unwrap_or(first);
    if block.iter().any(|&b| b != first && b != other) {
        return Err(failed("a pair task read more than two blocks"));
    }
    Ok((first.min(other), first.max(other)))
}

/// Detects `spec`'s constraints among the rows of `batches` (a row-id
/// column first, then some of `table`'s columns) and hands the result to
/// `emit`: the summary, then the rows of the partition's graph in global
/// row ids, ascending; stops early when `emit` returns false (the
/// consumer is gone). A pair task of `spec.blocks` (its rows from two
/// blocks) keeps only the pairs across them and counts no row; one whose
/// rows are of one block is that block's own task ([`super::blocks`]).
pub fn detect_rows(
    spec: &DetectSpec,
    table: &SchemaRef,
    batches: Vec<RecordBatch>,
    mut emit: impl FnMut(RecordBatch) -> bool,
) -> Result<()> {
    let Some(first) = batches.first() else {
        let max_frequency = (!spec.keys.is_empty()).then_some(0);
        // No rows, no classes: the coordinator reads missing ones as empty.
        emit(summary(&Summary { group: spec.group, rows: 0, max_frequency, classes: None })?);
        return Ok(());
    };
    let rows = concat_batches(&first.schema(), &batches)?;
    drop(batches);
    // Rows in id order: local position order is then global id order, so
    // the local stream Λ maps to sorted global edges with no sort.
    let order = sort_to_indices(rows.column(0), None, None)?;
    let rows = take_record_batch(&rows, &order)?;
    let ids: Vec<u32> = rows.column(0).as_primitive::<UInt32Type>().values().to_vec();
    let n = u32::try_from(ids.len()).map_err(|_| failed("more than 2^32 rows"))?;

    // The whole table's width, the columns this group does not compare
    // left NULL: the constraints bind by name to the same indexes as on
    // the coordinator.
    let columns: Vec<ArrayRef> = table
        .fields()
        .iter()
        .map(|f| match rows.column_by_name(f.name()) {
            Some(c) => c.clone(),
            None => new_null_array(f.data_type(), ids.len()),
        })
        .collect();
    let data = TableData {
        path: PathBuf::from("partition"),
        arrow_schema: table.clone(),
        batches: vec![RecordBatch::try_new(table.clone(), columns)?],
        rows: n,
    };
    let parsed = dpincon_constraints::parse_constraints(&spec.constraints).map_err(failed)?;
    let member = |c: &dpincon_constraints::BoundConstraint| spec.members.contains(&c.id);
    let Prepared { bound: members, relation, compiled } =
        prepare_detection(&parsed, &data, member, BallistaError::Constraint).map_err(failed)?;
    drop(data);
    if members.len() != spec.members.len() {
        return Err(failed("the constraints do not match the plan"));
    }
    let options = DetectOptions { threads: 1, brute_force: spec.brute_force, memory_limit: None };
    let detection = detect(&relation, &compiled, options).map_err(failed)?;
    let f = equality_frequencies(&relation, &compiled);
    let max_frequency = if spec.keys.is_empty() {
        None
    } else {
        match f.max_frequencies.as_slice() {
            [one] => Some(u32::try_from(*one).map_err(failed)?),
            _ => return Err(failed("a group has exactly one equality attribute set")),
        }
    };
    let classes = match f.fd_classes.as_slice() {
        [] => None,
        [one] => Some((one.clone(), f.all_fd_shaped)),
        _ => return Err(failed("a group has exactly one equality attribute set")),
    };
    drop(relation);

    // A pair task's rows by block: the pairs across its two blocks only,
    // and no row counted (each block's own task counts it: every row once).
    let block: Option<Vec<u32>> =
        spec.blocks.as_ref().map(|b| ids.iter().map(|&id| b.block_of(id)).collect());
    let block: Option<Vec<u32>> = match block {
        Some(block) => match pair_of(&block)? {
            (i, j) if i != j => Some(block),
            _ => None,
        },
        None => None,
    };
    let rows = if block.is_some() { 0 } else { n };
    // The summary first: the coordinator needs every partition's row count
    // before it can build the graph, and merges the edges as they arrive.
    if !emit(summary(&Summary { group: spec.group, rows, max_frequency, classes })?) {
        return Ok(());
    }
    // Local ids ascend with global ids, so each row maps to an ascending
    // row of global ids, and the rows come out in global order: the
    // coordinator takes them a shard's run at a time.
    let graph = detection.graph;
    let (mut records, mut values, mut open) = (Vec::new(), Vec::new(), true);
    let mut failed = None;
    graph.for_each_row(0..graph.shard_count(), |u, row| {
        if !open || row.is_empty() {
            return;
        }
        values.clear();
        let _ = row.chunks(|chunk| {
            match &block {
                None => values.extend(chunk.iter().map(|&v| ids[v as usize])),
                Some(block) => values.extend(
                    chunk
                        .iter()
                        .filter(|&&v| block[v as usize] != block[u as usize])
                        .map(|&v| ids[v as usize]),
                ),
            }
            std::ops::ControlFlow::<()>::Continue(())
        });
        if values.is_empty() {
            return;
        }
        encode_row(&mut records, ids[u as usize], &values);
        if records.len() >= ROWS_BYTES {
            let full = std::mem::replace(&mut records, Vec::with_capacity(ROWS_BYTES + (1 << 16)));
            match rows_batch(full) {
                Ok(batch) => open = emit(batch),
                Err(e) => (open, failed) = (false, Some(e)),
            }
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    if open && !records.is_empty() {
        emit(rows_batch(records)?);
    }
    Ok(())
}
