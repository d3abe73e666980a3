//! `TableScanExec`: the operator that reads a table's rows on an executor, row ids first.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, AsArray, UInt32Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, UInt32Type};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::datasource::memory::MemorySourceConfig;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::parquet::arrow::ProjectionMask;
use datafusion::parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchReceiverStream;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, Partitioning,
    PlanProperties,
};
use futures::TryStreamExt;

use super::spec::{ROW_ID, ScanFormat, ScanSpec, read_error, with_row_ids};

/// Reads the table on executors, row ids first (see the module docs).
///
/// Its input is a tiny in-memory table of *partition tokens*: input
/// partition `p` holds the number `p` (or, for pair tasks, the two scan
/// partitions task `p` reads). Ballista's scheduler restricts a
/// stage's known leaves (an in-memory source among them) to each task's
/// share of the partitions, but leaves an unknown leaf whole, which would
/// make every task read every row group. Reading the token tells each task
/// which of the table's partitions it has, whatever its local numbering.
#[derive(Debug)]
pub struct TableScanExec {
    spec: ScanSpec,
    schema: SchemaRef,
    tokens: Arc<dyn ExecutionPlan>,
    properties: Arc<PlanProperties>,
}

/// The token column's name.
const TOKEN: &str = "partition";

/// A partition per task, holding the scan partitions the task reads.
fn partition_tokens(tasks: &[Vec<u32>]) -> Result<Arc<dyn ExecutionPlan>> {
    let schema = Arc::new(Schema::new(vec![Field::new(TOKEN, DataType::UInt32, false)]));
    let batches = tasks
        .iter()
        .map(|parts| {
            let column: ArrayRef = Arc::new(UInt32Array::from(parts.clone()));
            Ok(vec![RecordBatch::try_new(schema.clone(), vec![column])?])
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(MemorySourceConfig::try_new_exec(&batches, schema, None)?)
}

impl TableScanExec {
    /// A scan of `spec.columns`, whose types `table` (the whole table's
    /// Arrow schema: the Parquet footer's, or the declared CSV types)
    /// gives: an output partition per scan partition.
    pub fn try_new(spec: ScanSpec, table: &Schema) -> Result<Self> {
        Self::with_tasks(spec, table, None)
    }

    /// As [`TableScanExec::try_new`], output partition `t` reading the
    /// scan partitions `tasks[t]` (the pair tasks of a group without
    /// equality, `crate::detect::Blocks`).
    pub fn for_tasks(spec: ScanSpec, table: &Schema, tasks: Vec<Vec<u32>>) -> Result<Self> {
        Self::with_tasks(spec, table, Some(tasks))
    }

    fn with_tasks(
        mut spec: ScanSpec,
        table: &Schema,
        tasks: Option<Vec<Vec<u32>>>,
    ) -> Result<Self> {
        if let ScanFormat::Csv { ranges, .. } = &spec.format {
            spec.partitions = spec.partitions.min(ranges.len());
        }
        spec.partitions = spec.partitions.max(1);
        let mut fields = vec![Field::new(ROW_ID, DataType::UInt32, false)];
        for name in &spec.columns {
            let field = table.field_with_name(name)?;
            fields.push(Field::new(name, field.data_type().clone(), true));
        }
        let tasks = tasks.unwrap_or_else(|| (0..spec.partitions as u32).map(|p| vec![p]).collect());
        if tasks.iter().flatten().any(|&p| p as usize >= spec.partitions) {
            return Err(DataFusionError::Internal("a scan task reads no such partition".into()));
        }
        let tokens = partition_tokens(&tasks)?;
        Ok(Self::with_parts(spec, Arc::new(Schema::new(fields)), tokens))
    }

    /// Rebuilds a scan from its spec, output schema and token input (the
    /// codec's and the scheduler's path).
    pub(crate) fn with_parts(
        spec: ScanSpec,
        schema: SchemaRef,
        tokens: Arc<dyn ExecutionPlan>,
    ) -> Self {
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(tokens.output_partitioning().partition_count()),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        TableScanExec { spec, schema, tokens, properties }
    }

    /// What it reads.
    pub fn spec(&self) -> &ScanSpec {
        &self.spec
    }
}

impl DisplayAs for TableScanExec {
    fn fmt_as(&self, _: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "TableScanExec: {:?} columns={:?} partitions={}",
            self.spec.format, self.spec.columns, self.spec.partitions
        )
    }
}

impl ExecutionPlan for TableScanExec {
    fn name(&self) -> &str {
        "TableScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.tokens]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match (children.pop(), children.is_empty()) {
            (Some(tokens), true) => {
                Ok(Arc::new(Self::with_parts(self.spec.clone(), self.schema.clone(), tokens)))
            }
            _ => Err(DataFusionError::Internal("TableScanExec has one input".into())),
        }
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let tokens = self.tokens.execute(partition, context)?;
        let mut builder = RecordBatchReceiverStream::builder(self.schema.clone(), 2);
        let tx = builder.tx();
        let spec = self.spec.clone();
        let schema = self.schema.clone();
        builder.spawn(async move {
            let tokens: Vec<RecordBatch> = tokens.try_collect().await?;
            let mut mine: Vec<u32> = Vec::new();
            for batch in &tokens {
                mine.extend(batch.column(0).as_primitive::<UInt32Type>().values().iter());
            }
            for part in mine {
                let (spec, schema, tx) = (spec.clone(), schema.clone(), tx.clone());
                match spec.format {
                    ScanFormat::Parquet => tokio::task::spawn_blocking(move || {
                        read_parquet(&spec, &schema, part as usize, |b| {
                            tx.blocking_send(Ok(b)).is_ok()
                        })
                    })
                    .await
                    .map_err(|e| DataFusionError::External(Box::new(e)))??,
                    ScanFormat::ParquetObjects { .. } => {
                        super::object::read_objects(&spec, &schema, part as usize, &tx).await?
                    }
                    ScanFormat::Csv { .. } => {
                        super::csv::read_csv(&spec, &schema, part as usize, tx).await?
                    }
                }
            }
            Ok(())
        });
        Ok(builder.build())
    }
}

/// Reads this partition's row groups (`partition`, `partition + P`, ...),
/// numbering rows from the footer's row counts.
fn read_parquet(
    spec: &ScanSpec,
    schema: &SchemaRef,
    partition: usize,
    mut emit: impl FnMut(RecordBatch) -> bool,
) -> Result<()> {
    let path = &spec.path;
    let file = std::fs::File::open(path).map_err(|e| read_error(path, e))?;
    let footer = ArrowReaderMetadata::load(&file, ArrowReaderOptions::default())
        .map_err(|e| read_error(path, e))?;
    let metadata = footer.metadata().clone();
    let file_schema = footer.schema().clone();
    let indices: Vec<usize> = spec
        .columns
        .iter()
        .map(|name| file_schema.index_of(name).map_err(|e| read_error(path, e)))
        .collect::<Result<_>>()?;
    let mut offset: u64 = 0;
    let mut mine = Vec::new();
    for (i, group) in metadata.row_groups().iter().enumerate() {
        if i % spec.partitions == partition {
            mine.push((i, offset));
        }
        offset += group.num_rows() as u64;
    }
    if offset > u64::from(u32::MAX) {
        return Err(read_error(path, format!("{offset} rows: ids are u32 (SPEC §1)")));
    }
    for (group, first) in mine {
        // One reader per row group: a reader's batches may span row groups,
        // and the row ids restart from each group's own offset.
        let file = file.try_clone().map_err(|e| read_error(path, e))?;
        let builder = ParquetRecordBatchReaderBuilder::new_with_metadata(file, footer.clone());
        let mask = ProjectionMask::roots(builder.parquet_schema(), indices.iter().copied());
        let reader = builder
            .with_row_groups(vec![group])
            .with_projection(mask)
            .build()
            .map_err(|e| read_error(path, e))?;
        let mut next = first as u32;
        for batch in reader {
            let batch = batch.map_err(|e| read_error(path, e))?;
            // The projection keeps file order; the scan's is by name.
            if !emit(with_row_ids(schema, path, next, &batch)?) {
                return Ok(());
            }
            next += batch.num_rows() as u32;
        }
    }
    Ok(())
}
