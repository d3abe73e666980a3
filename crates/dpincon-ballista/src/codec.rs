//! The `PhysicalExtensionCodec` of dpincon's operators, wrapping Ballista's
//! own: the client, the scheduler and every executor must use it (a stock
//! Ballista process cannot decode `TableScanExec` or `DetectExec`).
//!
//! An encoded node is one tag byte, then either Ballista's encoding (tag 0:
//! shuffle readers and writers) or our operator as JSON (its spec and the
//! Arrow schemas it needs, as DataFusion's protobuf bytes). Children are
//! encoded by the caller, as for every extension node.
//!
//! Decoding refuses what a dpincon plan never holds (issue 27): every
//! Ballista node is decoded with its subtree, which must consist of our
//! operators, the shuffle, repartition, union and coalescing around them,
//! and in-memory partition tokens (never one of DataFusion's file scans);
//! on an executor ([`DpinconCodec::for_executor`]), a scan of a path or
//! object outside its table roots ([`TableRoots`], `--allow-tables`:
//! directories, or `s3://bucket/prefix/` URLs matched as key prefixes) is
//! refused, unless it runs `--allow-any-table` (test clusters only). An
//! executor's tasks are Ballista shuffle writers at their root, so no task
//! runs unchecked.

use std::path::PathBuf;
use std::sync::Arc;

use ballista_core::serde::BallistaPhysicalExtensionCodec;
use datafusion::arrow::datatypes::Schema;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};
use prost::Message;
use serde::{Deserialize, Serialize};

use crate::detect::{DetectExec, DetectSpec};
use crate::scan::{ScanFormat, ScanSpec, TableScanExec};
use dpincon_source::ObjectUrl;

const BALLISTA: u8 = 0;
const OURS: u8 = 1;

/// The tables an executor's plans may scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableRoots {
    /// Under these roots only (`--allow-tables`): directories, or
    /// `s3://bucket/prefix/` URLs (a prefix of keys).
    Only(Vec<PathBuf>),
    /// Any path the process can read (`--allow-any-table`): test clusters
    /// only, since any holder of a cluster certificate may submit a plan.
    Any,
}

impl TableRoots {
    /// The roots an executor was started with: `--allow-tables` (`allow`)
    /// or `--allow-any-table` (`any`), exactly one of them; an executor
    /// given neither refuses to start rather than read any path.
    pub fn from_flags(allow: Vec<PathBuf>, any: bool) -> std::result::Result<Self, RootsError> {
        match (allow.is_empty(), any) {
            (false, false) => Ok(TableRoots::Only(allow)),
            (true, true) => Ok(TableRoots::Any),
            (false, true) => Err(RootsError::Both),
            (true, false) => Err(RootsError::Neither),
        }
    }
}

/// Executor flags that name no tables, or both kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RootsError {
    /// `--allow-tables` and `--allow-any-table` together.
    #[error("--allow-tables and --allow-any-table: choose one")]
    Both,
    /// Neither flag.
    #[error(
        "an executor needs --allow-tables DIR or --allow-tables s3://bucket/prefix/ (the tables \
         its plans may scan; repeat it, or DPINCON_ALLOW_TABLES with commas), or \
         --allow-any-table on a test cluster only"
    )]
    Neither,
}

/// Our operators on the wire.
#[derive(Serialize, Deserialize)]
enum Node {
    Scan { spec: ScanSpec, schema: Vec<u8> },
    Detect { spec: DetectSpec, table: Vec<u8> },
}

/// dpincon's codec: ours first, Ballista's for the rest.
#[derive(Debug, Default)]
pub struct DpinconCodec {
    ballista: BallistaPhysicalExtensionCodec,
    /// Directories whose tables scans may read (canonical); `None`: any.
    tables: Option<Vec<PathBuf>>,
    /// Object-store roots scans may read (`s3://bucket/prefix/`).
    object_roots: Vec<String>,
}

impl DpinconCodec {
    /// The codec, shared.
    pub fn shared() -> Arc<dyn PhysicalExtensionCodec> {
        Arc::new(DpinconCodec::default())
    }

    /// An executor's codec: scans only of tables under its roots (any with
    /// [`TableRoots::Any`]).
    pub fn for_executor(roots: &TableRoots) -> std::io::Result<Arc<dyn PhysicalExtensionCodec>> {
        match roots {
            TableRoots::Only(roots) => DpinconCodec::for_tables(roots),
            TableRoots::Any => Ok(DpinconCodec::shared()),
        }
    }

    /// A codec refusing scans of tables not under `roots`, each a
    /// directory or an `s3://bucket/prefix/` URL (a prefix of keys).
    pub fn for_tables(roots: &[PathBuf]) -> std::io::Result<Arc<dyn PhysicalExtensionCodec>> {
        let mut tables = Vec::new();
        let mut object_roots = Vec::new();
        for root in roots {
            match ObjectUrl::of_path(root) {
                Some(url) => {
                    let url = url.map_err(|e| std::io::Error::other(e.to_string()))?;
                    object_roots.push(url.to_string());
                }
                None => tables.push(std::fs::canonicalize(root)?),
            }
        }
        let codec = DpinconCodec { tables: Some(tables), object_roots, ..DpinconCodec::default() };
        Ok(Arc::new(codec))
    }

    /// Refuses a scan of a path outside the table roots (a path that does
    /// not exist is outside them); of an object table, every object the
    /// spec lists must be under a root too.
    fn check_path(&self, spec: &ScanSpec) -> Result<()> {
        let Some(roots) = &self.tables else { return Ok(()) };
        let path = &spec.path;
        let inside = match ObjectUrl::of_path(path.as_ref()) {
            Some(url) => url.is_ok_and(|url| {
                let under = |key: &str| {
                    let shown = format!("s3://{}/{key}", url.bucket());
                    self.object_roots.iter().any(|r| shown.starts_with(r.as_str()))
                };
                let objects = match &spec.format {
                    ScanFormat::ParquetObjects { objects } => objects.as_slice(),
                    _ => &[],
                };
                self.object_roots.iter().any(|r| path.starts_with(r.as_str()))
                    && objects.iter().all(|o| under(&o.key))
            }),
            None => std::fs::canonicalize(path)
                .is_ok_and(|p| roots.iter().any(|root| p.starts_with(root))),
        };
        if inside {
            Ok(())
        } else {
            Err(codec_error(format!("refused: a scan of '{path}', outside this executor's tables")))
        }
    }
}

/// Refuses a plan holding an operator a dpincon plan never has.
fn check_plan(plan: &Arc<dyn ExecutionPlan>) -> Result<()> {
    use ballista_core::execution_plans::{
        ShuffleReaderExec, ShuffleWriterExec, SortShuffleWriterExec, UnresolvedShuffleExec,
    };
    use datafusion::datasource::memory::MemorySourceConfig;
    use datafusion::datasource::source::DataSourceExec;
    use datafusion::physical_plan::coalesce_partitions::CoalescePartitionsExec;
    use datafusion::physical_plan::repartition::RepartitionExec;
    use datafusion::physical_plan::union::UnionExec;
    let ours = plan.is::<TableScanExec>() || plan.is::<DetectExec>();
    // Ballista's hash shuffle: either writer (it picks by partition count).
    let around = plan.is::<ShuffleWriterExec>()
        || plan.is::<SortShuffleWriterExec>()
        || plan.is::<ShuffleReaderExec>()
        || plan.is::<UnresolvedShuffleExec>()
        || plan.is::<RepartitionExec>()
        || plan.is::<UnionExec>()
        || plan.is::<CoalescePartitionsExec>();
    // Partition tokens are an in-memory table; a file scan is not allowed.
    let tokens = plan
        .downcast_ref::<DataSourceExec>()
        .is_some_and(|d| d.data_source().is::<MemorySourceConfig>());
    if !(ours || around || tokens) {
        return Err(codec_error(format!(
            "refused: operator {} is not part of a dpincon plan",
            plan.name()
        )));
    }
    plan.children().into_iter().try_for_each(check_plan)
}

fn codec_error(what: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::Internal(format!("dpincon codec: {what}"))
}

fn schema_bytes(schema: &Schema) -> Result<Vec<u8>> {
    let proto = datafusion_proto::protobuf::Schema::try_from(schema).map_err(codec_error)?;
    Ok(proto.encode_to_vec())
}

fn schema_from(bytes: &[u8]) -> Result<Arc<Schema>> {
    let proto = datafusion_proto::protobuf::Schema::decode(bytes).map_err(codec_error)?;
    Ok(Arc::new(Schema::try_from(&proto).map_err(codec_error)?))
}

impl PhysicalExtensionCodec for DpinconCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let (&tag, rest) = buf.split_first().ok_or_else(|| codec_error("empty node"))?;
        match tag {
            BALLISTA => {
                let node = self.ballista.try_decode(rest, inputs, ctx, converter)?;
                check_plan(&node)?;
                Ok(node)
            }
            OURS => match serde_json::from_slice::<Node>(rest).map_err(codec_error)? {
                Node::Scan { spec, schema } => {
                    self.check_path(&spec)?;
                    match inputs {
                        [tokens] => Ok(Arc::new(TableScanExec::with_parts(
                            spec,
                            schema_from(&schema)?,
                            tokens.clone(),
                        ))),
                        _ => Err(codec_error("a scan has one input (its partition tokens)")),
                    }
                }
                Node::Detect { spec, table } => match inputs {
                    [input] => Ok(Arc::new(DetectExec::try_new(
                        spec,
                        schema_from(&table)?,
                        input.clone(),
                    )?)),
                    _ => Err(codec_error("a detection has one input")),
                },
            },
            other => Err(codec_error(format!("unknown node tag {other}"))),
        }
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        let ours = if let Some(scan) = node.downcast_ref::<TableScanExec>() {
            Node::Scan { spec: scan.spec().clone(), schema: schema_bytes(&scan.schema())? }
        } else if let Some(detect) = node.downcast_ref::<DetectExec>() {
            Node::Detect { spec: detect.spec().clone(), table: schema_bytes(detect.table())? }
        } else {
            buf.push(BALLISTA);
            return self.ballista.try_encode(node, buf, converter);
        };
        buf.push(OURS);
        serde_json::to_writer(buf, &ours).map_err(codec_error)
    }
}
