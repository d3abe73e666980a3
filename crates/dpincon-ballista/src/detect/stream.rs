//! One partition's detection: rows in, the partition's summary and its
//! adjacency as row records out (the format of [`super::wire`]).

use std::path::PathBuf;

use datafusion::arrow::array::{ArrayRef, AsArray, new_null_array};
use datafusion::arrow::compute::{concat_batches, sort_to_indices, take_record_batch};
use datafusion::arrow::datatypes::{SchemaRef, UInt32Type};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::error::{DataFusionError, Result};
use dpincon_detect::{
    DetectError, DetectOptions, EqualityFrequencies, cross_equalities, detect_parts,
    detect_parts_across, equality_frequencies, side_max_frequency,
};
use dpincon_graph::{BuilderParts, encode_row, for_each_record, record_pairs};
use dpincon_source::{Prepared, TableData, prepare_detection};

use crate::BallistaError;

use super::spec::{CrossSide, DetectSpec};
use super::wire::{
    ROWS_BYTES, Summary, encode_group, groups as groups_batch, rows as rows_batch, summary,
};

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
/// `emit`: the summary, then the partition's graph, unfrozen, in global
/// row ids; stops early when `emit` returns false (the consumer is gone).
/// A pair task of `spec.blocks` (its rows from two blocks) detects only
/// the pairs across them and counts no row; one whose rows are of one
/// block is that block's own task ([`super::blocks`]).
pub fn detect_rows(
    spec: &DetectSpec,
    table: &SchemaRef,
    batches: Vec<RecordBatch>,
    mut emit: impl FnMut(RecordBatch) -> bool,
) -> Result<()> {
    let Some(first) = batches.first() else {
        let max_frequency = (!spec.keys.is_empty()).then_some(0);
        // No rows, no classes: the coordinator reads missing ones as empty.
        let s = Summary {
            group: spec.group,
            rows: 0,
            max_frequency,
            pairs: Some(0),
            group_pairs: 0,
            classes: None,
            chains: vec![],
        };
        emit(summary(&s)?);
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
        prepare_detection(&parsed, &data, member, 1, BallistaError::Constraint).map_err(failed)?;
    drop(data);
    if members.len() != spec.members.len() {
        return Err(failed("the constraints do not match the plan"));
    }
    // A pair task's rows by block: only the pairs across its two blocks
    // are detected, and no row is counted (each block's own task counts
    // it: every row once).
    let block: Option<Vec<u32>> =
        spec.blocks.as_ref().map(|b| ids.iter().map(|&id| b.block_of(id)).collect());
    let across = match &block {
        Some(block) => match pair_of(block)? {
            (i, j) if i != j => Some((block, i)),
            _ => None,
        },
        None => None,
    };
    let options = DetectOptions {
        threads: 1,
        brute_force: spec.brute_force,
        memory_limit: None,
        max_pairs: spec.max_pairs,
    };
    let detected = match across {
        _ if spec.covers_only || spec.cross_side.is_some() => Ok(None),
        Some((block, i)) => {
            let side = |row: u32| block[row as usize] == i;
            detect_parts_across(&relation, &compiled, options, &side).map(|d| Some(d.0))
        }
        None => detect_parts(&relation, &compiled, options).map(|d| Some(d.0)),
    };
    // A stop at the pair cap is an answer, not a failure: the summary says
    // so and the partition sends no graph (the job is over its edge cap).
    let (parts, pairs, group_pairs) = match detected {
        Err(DetectError::PairCap { .. }) => (None, None, 0),
        Err(e) => return Err(failed(e)),
        Ok(None) => (None, Some(0), 0),
        Ok(Some(parts)) => {
            let pairs = record_pairs(&parts.records).map_err(failed)?;
            let group_pairs = parts.groups.iter().map(|(g, _)| g.pairs()).sum();
            (Some(parts), Some(pairs), group_pairs)
        }
    };
    let rows = if across.is_some() { 0 } else { n };
    // Pair tasks see part of the table, and their group has no X: they
    // count no facts (its order pairs' chains come from the covers-only
    // task), so none of the chains' sorts is done for nothing. A cross
    // side's group counts its one maxfreq only.
    let f = if spec.blocks.is_some() || spec.cross_side.is_some() {
        EqualityFrequencies::from_maxima(&[], vec![], true)
    } else {
        equality_frequencies(&relation, &compiled, spec.listed)
    };
    let max_frequency = if let Some(side) = spec.cross_side {
        let [(form, _)] = cross_equalities(&compiled)
            .try_into()
            .map_err(|_| failed("a cross side's group has exactly one cross equality"))?;
        let slots = match side {
            CrossSide::Left => form.left(),
            CrossSide::Right => form.right(),
        };
        Some(u32::try_from(side_max_frequency(&relation, &slots)).map_err(failed)?)
    } else if spec.keys.is_empty() {
        None
    } else {
        match f.max_frequencies.as_slice() {
            [one] => Some(u32::try_from(*one).map_err(failed)?),
            _ => return Err(failed("a group has exactly one equality attribute set")),
        }
    };
    let classes = match f.fd_classes.as_slice() {
        [] => None,
        [one] => {
            // Local ids ascend with global ids: the list stays ascending.
            let mut one = one.clone();
            one.leading.iter_mut().for_each(|r| *r = ids[*r as usize]);
            one.deleted.iter_mut().for_each(|r| *r = ids[*r as usize]);
            Some((one, f.all_fd_shaped))
        }
        _ => return Err(failed("a group has exactly one equality attribute set")),
    };
    let chains = f.chain_covers;
    drop(relation);

    // The summary first: the coordinator needs every partition's row count
    // before it can build the graph, and merges the edges as they arrive.
    let s = Summary { group: spec.group, rows, max_frequency, pairs, group_pairs, classes, chains };
    if !emit(summary(&s)?) {
        return Ok(());
    }
    match parts {
        Some(parts) => send_parts(parts, &ids, &mut emit),
        None => Ok(()),
    }
}

/// Batches of one kind, sent when full; `open` turns false once the
/// consumer is gone.
struct Outbox<'e, E> {
    emit: &'e mut E,
    bytes: Vec<u8>,
    open: bool,
}

impl<E: FnMut(RecordBatch) -> bool> Outbox<'_, E> {
    /// Sends what is held as a batch made by `batch`, if `full` or it is
    /// the last.
    fn flush(&mut self, batch: fn(Vec<u8>) -> Result<RecordBatch>, full: bool) -> Result<()> {
        if self.open && !self.bytes.is_empty() && (!full || self.bytes.len() >= ROWS_BYTES) {
            let bytes = std::mem::replace(&mut self.bytes, Vec::with_capacity(ROWS_BYTES + 4096));
            self.open = (self.emit)(batch(bytes)?);
        }
        Ok(())
    }
}

/// Sends the partition's graph, unfrozen, in global row ids: its row
/// records, then its groups whole (the coordinator's builder expands them
/// when it freezes, as an embedded one does). Local ids ascend with
/// global ids, so rows and classes map to ascending global ids as they
/// are.
fn send_parts(
    parts: BuilderParts,
    ids: &[u32],
    emit: &mut impl FnMut(RecordBatch) -> bool,
) -> Result<()> {
    let mut out = Outbox { emit, bytes: Vec::with_capacity(ROWS_BYTES + 4096), open: true };
    let mut values = Vec::new();
    let mut sent = Ok(());
    let read = for_each_record(&parts.records, |u, upper| {
        if sent.is_ok() && out.open {
            values.clear();
            values.extend(upper.iter().map(|&v| ids[v as usize]));
            encode_row(&mut out.bytes, ids[u as usize], &values);
            sent = out.flush(rows_batch, true);
        }
    });
    read.map_err(failed)?;
    sent?;
    out.flush(rows_batch, false)?;
    for (group, shares) in &parts.groups {
        let classes = group.classes().map(|c| c.iter().map(|&r| ids[r as usize]));
        encode_group(&mut out.bytes, classes, shares);
        out.flush(groups_batch, true)?;
    }
    out.flush(groups_batch, false)
}
