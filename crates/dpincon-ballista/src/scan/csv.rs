//! The executors' read of a CSV table: its ranges of whole records (cut
//! by the job, `dpincon_source::CsvSplitter`), partition `p` reading
//! ranges `p, p + P, ...`, each numbered from its first row; a file, or an
//! object fetched by range.

use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::error::{DataFusionError, Result};
use dpincon_source::object::object_head_bytes;
use dpincon_source::{
    CsvRange, ObjectUrl, S3Settings, declared_arrow_schema, read_csv_range, read_range_from,
};
use tokio::sync::mpsc::Sender;

use super::spec::{ScanFormat, ScanSpec, read_error, with_row_ids};

/// Reads this partition's ranges of the CSV table in order, sending each
/// batch behind its row ids; stops early when the receiver is gone.
pub(super) async fn read_csv(
    spec: &ScanSpec,
    schema: &SchemaRef,
    partition: usize,
    tx: Sender<Result<RecordBatch>>,
) -> Result<()> {
    let ScanFormat::Csv { schema: declared, ranges } = &spec.format else {
        unreachable!("read_csv on a Parquet scan")
    };
    let path = &spec.path;
    let table = Arc::new(declared_arrow_schema(declared.entries()));
    let projection = spec
        .columns
        .iter()
        .map(|name| table.index_of(name).map_err(|e| read_error(path, e)))
        .collect::<Result<Vec<_>>>()?;
    let object =
        ObjectUrl::of_path(Path::new(path)).transpose().map_err(|e| read_error(path, e))?;
    for range in ranges.iter().skip(partition).step_by(spec.partitions.max(1)) {
        if tx.is_closed() {
            break;
        }
        let fetched = match &object {
            Some(url) => {
                let settings = S3Settings::from_env();
                let bytes = object_head_bytes(url, range.start..range.end, &settings).await;
                Some(bytes.map_err(|e| read_error(path, e))?)
            }
            None => None,
        };
        let read = (spec.clone(), schema.clone(), table.clone(), projection.clone(), *range);
        let tx = tx.clone();
        tokio::task::spawn_blocking(move || read_range(read, fetched, &tx))
            .await
            .map_err(|e| DataFusionError::External(Box::new(e)))??;
    }
    Ok(())
}

type RangeRead = (ScanSpec, SchemaRef, Arc<Schema>, Vec<usize>, CsvRange);

/// Decodes one range (its bytes `fetched` from a store, else from the
/// file) and sends its batches.
fn read_range(
    (spec, schema, table, projection, range): RangeRead,
    fetched: Option<impl AsRef<[u8]>>,
    tx: &Sender<Result<RecordBatch>>,
) -> Result<()> {
    let path = &spec.path;
    let mut next = range.first_row as u32;
    let mut failed = None;
    let emit = |batch: RecordBatch| {
        let with_ids = with_row_ids(&schema, path, next, &batch);
        next += batch.num_rows() as u32;
        match with_ids {
            Ok(batch) => tx.blocking_send(Ok(batch)).is_ok(),
            Err(e) => {
                failed = Some(e);
                false
            }
        }
    };
    let name = Path::new(path);
    let read = match fetched {
        Some(bytes) => read_range_from(bytes.as_ref(), name, table, &projection, &range, emit),
        None => read_csv_range(name, table, &projection, &range, emit),
    };
    read.map_err(|e| read_error(path, e))?;
    failed.map_or(Ok(()), Err)
}
