//! The `PhysicalExtensionCodec` of dpincon's operators, wrapping Ballista's
//! own: the client, the scheduler and every executor must use it (a stock
//! Ballista process cannot decode `TableScanExec` or `DetectExec`).
//!
//! An encoded node is one tag byte, then either Ballista's encoding (tag 0:
//! shuffle readers and writers) or our operator as JSON (its spec and the
//! Arrow schemas it needs, as DataFusion's protobuf bytes). Children are
//! encoded by the caller, as for every extension node.

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
use crate::scan::{ScanSpec, TableScanExec};

const BALLISTA: u8 = 0;
const OURS: u8 = 1;

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
}

impl DpinconCodec {
    /// The codec, shared.
    pub fn shared() -> Arc<dyn PhysicalExtensionCodec> {
        Arc::new(DpinconCodec::default())
    }
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
            BALLISTA => self.ballista.try_decode(rest, inputs, ctx, converter),
            OURS => match serde_json::from_slice::<Node>(rest).map_err(codec_error)? {
                Node::Scan { spec, schema } => match inputs {
                    [tokens] => Ok(Arc::new(TableScanExec::with_parts(
                        spec,
                        schema_from(&schema)?,
                        tokens.clone(),
                    ))),
                    _ => Err(codec_error("a scan has one input (its partition tokens)")),
                },
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
