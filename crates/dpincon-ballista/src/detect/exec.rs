//! `DetectExec`: the operator that detects one constraint group's violating pairs in a partition.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Schema, SchemaRef};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::expressions::{Column, TryCastExpr};
use datafusion::physical_expr::{Distribution, EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchReceiverStream;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, Partitioning,
    PlanProperties,
};
use futures::TryStreamExt;

use super::spec::{DetectSpec, KeyDomain};
use super::stream::detect_rows;
use super::wire::output_schema;

/// Detects one constraint group per input partition (see the module docs).
#[derive(Debug)]
pub struct DetectExec {
    spec: DetectSpec,
    /// The whole table's schema (the constraints bind against it).
    table: SchemaRef,
    input: Arc<dyn ExecutionPlan>,
    properties: Arc<PlanProperties>,
}

impl DetectExec {
    /// The operator over `input` (a table scan, hash-partitioned on
    /// `spec.keys` when there are any).
    pub fn try_new(
        spec: DetectSpec,
        table: SchemaRef,
        input: Arc<dyn ExecutionPlan>,
    ) -> Result<Self> {
        // A pair task is known by the blocks of its rows, never by its
        // partition's number (an executor numbers a task's partitions
        // its own way).
        let partitions = input.output_partitioning().partition_count();
        match (&spec.blocks, spec.keys.is_empty()) {
            (Some(_), false) => {
                return Err(DataFusionError::Internal("pair tasks are for no keys".into()));
            }
            (None, true) if partitions != 1 => {
                return Err(DataFusionError::Internal(
                    "a group without equality keys is detected in one partition".into(),
                ));
            }
            _ => {}
        }
        let schema = output_schema();
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema),
            Partitioning::UnknownPartitioning(input.output_partitioning().partition_count()),
            EmissionType::Final,
            Boundedness::Bounded,
        ));
        Ok(DetectExec { spec, table, input, properties })
    }

    /// What it runs.
    pub fn spec(&self) -> &DetectSpec {
        &self.spec
    }

    /// The whole table's schema.
    pub fn table(&self) -> &SchemaRef {
        &self.table
    }

    /// The shuffle keys of `keys` over `input`'s schema.
    pub fn hash_exprs(
        keys: &[(String, KeyDomain)],
        input: &Schema,
    ) -> Result<Vec<Arc<dyn PhysicalExpr>>> {
        keys.iter()
            .map(|(name, domain)| {
                let column: Arc<dyn PhysicalExpr> = Arc::new(Column::new_with_schema(name, input)?);
                Ok(match domain {
                    KeyDomain::Float => Arc::new(TryCastExpr::new(column, DataType::Int64)) as _,
                    KeyDomain::Int | KeyDomain::Str => column,
                })
            })
            .collect()
    }
}

impl DisplayAs for DetectExec {
    fn fmt_as(&self, _: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "DetectExec: group={} constraints={:?} keys={:?}",
            self.spec.group, self.spec.members, self.spec.keys
        )
    }
}

impl ExecutionPlan for DetectExec {
    fn name(&self) -> &str {
        "DetectExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn required_input_distribution(&self) -> Vec<Distribution> {
        if self.spec.blocks.is_some() {
            return vec![Distribution::UnspecifiedDistribution];
        }
        if self.spec.keys.is_empty() {
            return vec![Distribution::SinglePartition];
        }
        match Self::hash_exprs(&self.spec.keys, &self.input.schema()) {
            Ok(exprs) => vec![Distribution::KeyPartitioned(exprs)],
            Err(_) => vec![Distribution::UnspecifiedDistribution],
        }
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
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
            (Some(input), true) => {
                Ok(Arc::new(DetectExec::try_new(self.spec.clone(), self.table.clone(), input)?))
            }
            _ => Err(DataFusionError::Internal("DetectExec has one child".into())),
        }
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let input = self.input.execute(partition, context)?;
        let spec = self.spec.clone();
        let table = self.table.clone();
        // A small channel: the partition's edges stream out as they are
        // read off its graph, never all held as batches at once.
        let mut builder = RecordBatchReceiverStream::builder(output_schema(), 2);
        let tx = builder.tx();
        builder.spawn(async move {
            let batches: Vec<_> = input.try_collect().await?;
            // Test clusters: a wait so that tests can act while a job
            // runs (`detect-task=sleep(MS)`); never changes a result.
            if let Some(delay) = dpincon_failpoint::delay("detect-task") {
                tokio::time::sleep(delay).await;
            }
            // Detection is CPU-bound: off the async workers.
            tokio::task::spawn_blocking(move || {
                detect_rows(&spec, &table, batches, |b| tx.blocking_send(Ok(b)).is_ok())
            })
            .await
            .map_err(|e| DataFusionError::External(Box::new(e)))?
        });
        Ok(builder.build())
    }
}
