//! The executors' read of Parquet objects in an S3-compatible store: the
//! row groups of the listed objects, numbered in object order then row
//! group order, partition `p` reading global row groups `p, p + P, ...`
//! (as a file's are split). Credentials are the executor's environment's
//! (`dpincon_source::object`), never the plan's.

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::error::{DataFusionError, Result};
use datafusion::parquet::arrow::{ParquetRecordBatchStreamBuilder, ProjectionMask};
use dpincon_source::object::ObjectTable;
use dpincon_source::{ObjectUrl, S3Settings};
use futures::TryStreamExt;
use tokio::sync::mpsc::Sender;

use super::spec::{ScanFormat, ScanSpec, read_error, with_row_ids};

/// A store error, named by the URL (its message says which object).
fn source_error(e: dpincon_source::SourceError) -> DataFusionError {
    DataFusionError::Execution(e.to_string())
}

/// Reads this partition's row groups, sending each batch behind its row
/// ids; stops early when the receiver is gone.
pub(super) async fn read_objects(
    spec: &ScanSpec,
    schema: &SchemaRef,
    partition: usize,
    tx: &Sender<Result<RecordBatch>>,
) -> Result<()> {
    let ScanFormat::ParquetObjects { objects } = &spec.format else {
        unreachable!("read_objects on another format")
    };
    let url = ObjectUrl::parse(&spec.path).map_err(source_error)?;
    let table = ObjectTable::with_objects(&url, objects.clone(), &S3Settings::from_env())
        .map_err(source_error)?;
    // Every footer, for the global row-group numbering (they are small).
    let footers = table.footers().await.map_err(source_error)?;
    let mut offset: u64 = 0;
    let mut index = 0;
    let mut mine = Vec::new();
    for (i, footer) in footers.iter().enumerate() {
        for (group, meta) in footer.metadata().row_groups().iter().enumerate() {
            if index % spec.partitions == partition {
                mine.push((i, group, offset));
            }
            index += 1;
            offset += meta.num_rows() as u64;
        }
    }
    if offset > u64::from(u32::MAX) {
        return Err(read_error(&spec.path, format!("{offset} rows: ids are u32 (SPEC §1)")));
    }
    for (i, group, first) in mine {
        let footer = footers[i].clone();
        let object = table.object_url(i).to_string();
        let indices: Vec<usize> = spec
            .columns
            .iter()
            .map(|name| footer.schema().index_of(name).map_err(|e| read_error(&object, e)))
            .collect::<Result<_>>()?;
        let builder =
            ParquetRecordBatchStreamBuilder::new_with_metadata(table.parquet_reader(i), footer);
        let mask = ProjectionMask::roots(builder.parquet_schema(), indices);
        let mut stream = builder
            .with_row_groups(vec![group])
            .with_projection(mask)
            .build()
            .map_err(|e| source_error(table.parquet_error(i, &e)))?;
        let mut next = first as u32;
        while let Some(batch) =
            stream.try_next().await.map_err(|e| source_error(table.parquet_error(i, &e)))?
        {
            if tx.send(Ok(with_row_ids(schema, &object, next, &batch)?)).await.is_err() {
                return Ok(());
            }
            next += batch.num_rows() as u32;
        }
    }
    Ok(())
}
