//! One partition's detection: rows in, sorted edge batches and the
//! partition's summary out.

use std::path::PathBuf;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, AsArray, UInt32Array, UInt64Array, new_null_array};
use datafusion::arrow::compute::{concat_batches, sort_to_indices, take_record_batch};
use datafusion::arrow::datatypes::{DataType, SchemaRef, UInt32Type};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::error::{DataFusionError, Result};
use dpincon_detect::{DetectOptions, compile, detect, equality_frequencies};
use dpincon_source::{TableData, encode};

use super::exec::{DetectSpec, output_schema};

/// Edges per output batch.
const BATCH_EDGES: usize = 1 << 16;

fn failed(what: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::Execution(format!("detection: {what}"))
}

/// Detects `spec`'s constraints among the rows of `batches` (a row-id
/// column first, then some of `table`'s columns) and returns the edges as
/// sorted `(u, v)` batches of row ids, then the summary row.
pub fn detect_rows(
    spec: &DetectSpec,
    table: &SchemaRef,
    batches: Vec<RecordBatch>,
) -> Result<Vec<RecordBatch>> {
    let schema = output_schema();
    let Some(first) = batches.first() else {
        let max = (!spec.keys.is_empty()).then_some(0);
        return Ok(vec![summary(spec.group, 0, max)?]);
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
    let batch = RecordBatch::try_new(table.clone(), columns)?;
    let data = TableData {
        path: PathBuf::from("partition"),
        arrow_schema: table.clone(),
        batches: vec![batch],
        rows: n,
    };
    let parsed = dpincon_constraints::parse_constraints(&spec.constraints).map_err(failed)?;
    let bound = dpincon_constraints::bind(&parsed, &data.schema()).map_err(failed)?;
    let members: Vec<_> = bound.into_iter().filter(|c| spec.members.contains(&c.id)).collect();
    if members.len() != spec.members.len() {
        return Err(failed("the constraints do not match the plan"));
    }
    let relation = encode(&data, &members).map_err(failed)?;
    drop(data);
    let compiled = compile(&members, &relation).map_err(failed)?;
    let options = DetectOptions { threads: 1, brute_force: spec.brute_force, memory_limit: None };
    let detection = detect(&relation, &compiled, options).map_err(failed)?;
    let max_frequency = if spec.keys.is_empty() {
        None
    } else {
        let f = equality_frequencies(&relation, &compiled);
        match f.max_frequencies.as_slice() {
            [one] => Some(*one),
            _ => return Err(failed("a group has exactly one equality attribute set")),
        }
    };
    drop(relation);

    let mut out = Vec::new();
    let (mut us, mut vs) = (Vec::with_capacity(BATCH_EDGES), Vec::with_capacity(BATCH_EDGES));
    let mut flush = |us: &mut Vec<u32>, vs: &mut Vec<u32>| -> Result<()> {
        let len = us.len();
        let u: ArrayRef = Arc::new(UInt32Array::from(std::mem::take(us)));
        let v: ArrayRef = Arc::new(UInt32Array::from(std::mem::take(vs)));
        let mut columns = vec![u, v];
        for f in schema.fields().iter().skip(2) {
            columns.push(new_null_array(f.data_type(), len));
        }
        out.push(RecordBatch::try_new(schema.clone(), columns)?);
        Ok(())
    };
    for e in detection.graph.edges() {
        us.push(ids[e.u as usize]);
        vs.push(ids[e.v as usize]);
        if us.len() == BATCH_EDGES {
            flush(&mut us, &mut vs)?;
        }
    }
    if !us.is_empty() {
        flush(&mut us, &mut vs)?;
    }
    out.push(summary(spec.group, u64::from(n), max_frequency)?);
    Ok(out)
}

/// The summary row of a partition.
fn summary(group: u32, rows: u64, max_frequency: Option<u64>) -> Result<RecordBatch> {
    Ok(RecordBatch::try_new(
        output_schema(),
        vec![
            new_null_array(&DataType::UInt32, 1),
            new_null_array(&DataType::UInt32, 1),
            Arc::new(UInt32Array::from(vec![group])),
            Arc::new(UInt64Array::from(vec![rows])),
            Arc::new(UInt64Array::from(vec![max_frequency])),
        ],
    )?)
}
