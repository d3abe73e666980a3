//! Our side of Ballista's job API: submit a plan, learn the job's id,
//! stream its result, then delete the job's files or cancel it.
//!
//! Ballista's `execute_physical_plan` does the same in one call but keeps
//! the job's id to itself. The coordinator needs that id: it kills a job's
//! process at the slot's end or on a client's cancel (SIGKILL, no cleanup
//! in the process), and must then cancel the Ballista job, which stops its
//! tasks and deletes its shuffle files on every executor (issue 27). The
//! loop is Ballista's pull client (`execute_query_pull`) without flight
//! proxies, which a dpincon cluster does not use.

use std::sync::Arc;
use std::time::Duration;

use ballista_core::client::BallistaClient;
use ballista_core::config::{BALLISTA_SHUFFLE_COMPRESSION_CODEC, BallistaConfig};
use ballista_core::extension::{BallistaConfigGrpcEndpoint, SessionConfigExt};
use ballista_core::serde::protobuf::execute_query_params::Query;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use ballista_core::serde::protobuf::{
    CancelJobParams, CleanJobDataParams, ExecuteQueryParams, GetJobStatusParams, KeyValuePair,
    PartitionLocation, SuccessfulJob, execute_query_result, job_status,
};
use ballista_core::serde::protobuf::{FailedJob, GetJobStatusResult};
use ballista_core::utils::{GrpcClientConfig, create_grpc_client_endpoint};
use datafusion::arrow::array::RecordBatch;
use datafusion::error::DataFusionError;
use datafusion::execution::SendableRecordBatchStream;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionConfig;
use datafusion_proto::physical_plan::AsExecutionPlan;
use datafusion_proto::protobuf::PhysicalPlanNode;
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use prost::Message;
use serde::{Deserialize, Serialize};
use tonic::transport::Channel;

use crate::tls::ClusterTls;
use crate::{BallistaError, DpinconCodec};

/// How often the job's state is asked for (Ballista's own client: 50 ms).
const POLL: Duration = Duration::from_millis(50);

/// Ballista's id of a submitted job.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BallistaJobId(pub String);

impl std::fmt::Display for BallistaJobId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where a Ballista job is.
#[derive(Debug, Clone, PartialEq)]
pub enum JobProgress {
    /// Queued or running (or not yet known to the scheduler).
    Pending,
    /// Failed, or cancelled (Ballista's message).
    Failed(String),
    /// Ended; where its result's partitions are.
    Succeeded(Vec<PartitionLocation>),
}

/// A connection to the scheduler's job API, over mutual TLS when the
/// cluster has it.
pub struct Scheduler {
    url: String,
    client: SchedulerGrpcClient<Channel>,
    session: SessionConfig,
    config: BallistaConfig,
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler").field("url", &self.url).finish_non_exhaustive()
    }
}

fn engine(e: impl std::fmt::Display) -> BallistaError {
    BallistaError::Engine(DataFusionError::Execution(e.to_string()))
}

impl Scheduler {
    /// Connects to the scheduler at `url` (`http://host:port`; dialled as
    /// `https` with `tls`, expecting the scheduler's certificate there and
    /// executors' everywhere else: the result's partitions).
    pub async fn connect(url: &str, tls: Option<&ClusterTls>) -> Result<Self, BallistaError> {
        let mut session = SessionConfig::new_with_ballista()
            .with_ballista_physical_extension_codec(DpinconCodec::shared())
            .with_ballista_job_name("dpincon detection")
            // Row records are packed already: LZ4 on the shuffle and the
            // result saved a quarter of their bytes for about 2 CPU-s on
            // the 10^6-row job (issue 29), which the executors and the
            // coordinator spend better detecting and assembling.
            .set_str(BALLISTA_SHUFFLE_COMPRESSION_CODEC, "none");
        if let Some(tls) = tls {
            let uri: http::Uri =
                url.parse().map_err(|e| engine(format!("scheduler address {url}: {e}")))?;
            let authority = uri.authority().cloned();
            let authority =
                authority.ok_or_else(|| engine(format!("scheduler address {url}: no host")))?;
            session = session
                .with_ballista_override_create_grpc_client_endpoint(
                    tls.endpoint_override(Some(authority)),
                )
                .with_ballista_use_tls(true);
        }
        let config = session.ballista_config();
        let grpc = GrpcClientConfig::from(&config);
        let mut endpoint = create_grpc_client_endpoint(url.to_string(), Some(&grpc))
            .map_err(|e| engine(format!("scheduler address {url}: {e}")))?;
        if let Some(customize) = session.ballista_override_create_grpc_client_endpoint() {
            endpoint = customize.configure_endpoint(endpoint).map_err(engine)?;
        }
        let channel = endpoint
            .connect()
            .await
            .map_err(|e| engine(format!("cannot reach the scheduler at {url}: {e:?}")))?;
        let size = config.grpc_client_max_message_size();
        let client = SchedulerGrpcClient::new(channel)
            .max_encoding_message_size(size)
            .max_decoding_message_size(size);
        Ok(Scheduler { url: url.to_string(), client, session, config })
    }

    /// Submits `plan` as a new job.
    pub async fn submit(
        &mut self,
        plan: Arc<dyn ExecutionPlan>,
    ) -> Result<BallistaJobId, BallistaError> {
        let codec = DpinconCodec::shared();
        let node = PhysicalPlanNode::try_from_physical_plan(plan, codec.as_ref())?;
        let settings = self
            .session
            .options()
            .entries()
            .into_iter()
            .map(|e| KeyValuePair { key: e.key, value: e.value })
            .collect();
        let params = ExecuteQueryParams {
            query: Some(Query::PhysicalPlan(node.encode_to_vec())),
            settings,
            session_id: uuid::Uuid::new_v4().to_string(),
            operation_id: uuid::Uuid::new_v4().to_string(),
        };
        let mut request = tonic::Request::new(params);
        ballista_core::version::insert_version_header(request.metadata_mut());
        let answer = self.client.execute_query(request).await.map_err(engine)?.into_inner();
        match answer.result {
            Some(execute_query_result::Result::Success(s)) => Ok(BallistaJobId(s.job_id)),
            Some(execute_query_result::Result::Failure(f)) => {
                Err(engine(format!("the scheduler refused the job: {f:?}")))
            }
            None => Err(engine("the scheduler answered a submission with nothing")),
        }
    }

    /// Waits for `job` to end; its result's partitions, each a stream
    /// fetched from its executor when first polled (issue 29: the
    /// coordinator reads them all at once).
    pub async fn partitions(
        &mut self,
        job: &BallistaJobId,
    ) -> Result<Vec<BoxStream<'static, datafusion::error::Result<RecordBatch>>>, BallistaError>
    {
        let locations = self.wait(job).await?;
        let size = self.config.grpc_client_max_message_size();
        let grpc = GrpcClientConfig::from(&self.config);
        let fetch = Fetch {
            size,
            use_tls: self.session.ballista_use_tls(),
            customize: self.session.ballista_override_create_grpc_client_endpoint(),
            retries: grpc.io_retries_times,
            retry_wait_ms: grpc.io_retry_wait_time_ms,
        };
        Ok(locations
            .into_iter()
            .map(move |location| {
                let fetch = fetch.clone();
                futures::stream::once(async move { fetch.partition(location).await })
                    .try_flatten()
                    .boxed()
            })
            .collect())
    }

    async fn wait(&mut self, job: &BallistaJobId) -> Result<Vec<PartitionLocation>, BallistaError> {
        loop {
            match self.progress(job).await? {
                JobProgress::Pending => tokio::time::sleep(POLL).await,
                JobProgress::Failed(error) => {
                    return Err(engine(format!("Ballista job {job} failed: {error}")));
                }
                JobProgress::Succeeded(locations) => return Ok(locations),
            }
        }
    }

    /// Where `job` is now.
    pub async fn progress(&mut self, job: &BallistaJobId) -> Result<JobProgress, BallistaError> {
        let params = GetJobStatusParams { job_id: job.0.clone() };
        let GetJobStatusResult { status, .. } =
            self.client.get_job_status(params).await.map_err(engine)?.into_inner();
        Ok(match status.and_then(|s| s.status) {
            None | Some(job_status::Status::Queued(_) | job_status::Status::Running(_)) => {
                JobProgress::Pending
            }
            Some(job_status::Status::Failed(FailedJob { error, .. })) => JobProgress::Failed(error),
            Some(job_status::Status::Successful(SuccessfulJob { partition_location, .. })) => {
                JobProgress::Succeeded(partition_location)
            }
        })
    }

    /// Cancels `job`: its tasks stop and its files (shuffle data and
    /// result) are deleted on every executor. Also right for a job that
    /// has ended.
    pub async fn cancel(&mut self, job: &BallistaJobId) -> Result<(), BallistaError> {
        let params = CancelJobParams { job_id: job.0.clone() };
        self.client.cancel_job(params).await.map_err(engine)?;
        Ok(())
    }

    /// Deletes the files of `job`, which has ended and whose result has
    /// been read, now rather than after the scheduler's retention.
    pub async fn clean(&mut self, job: &BallistaJobId) -> Result<(), BallistaError> {
        let params = CleanJobDataParams { job_id: job.0.clone(), remove_stage_ids: vec![] };
        self.client.clean_job_data(params).await.map_err(engine)?;
        Ok(())
    }
}

/// How one result partition is fetched from its executor's Flight server.
#[derive(Clone)]
struct Fetch {
    size: usize,
    use_tls: bool,
    customize: Option<Arc<BallistaConfigGrpcEndpoint>>,
    retries: u8,
    retry_wait_ms: u64,
}

impl Fetch {
    async fn partition(
        self,
        location: PartitionLocation,
    ) -> datafusion::error::Result<SendableRecordBatchStream> {
        let layout = location.layout();
        let missing = |what: &str| DataFusionError::Internal(format!("a result without {what}"));
        let executor = location.executor_meta.ok_or_else(|| missing("executor"))?;
        let partition = location.partition_id.ok_or_else(|| missing("partition id"))?;
        let port = u16::try_from(executor.port).map_err(|_| missing("a valid port"))?;
        let mut client = BallistaClient::try_new(
            &executor.host,
            port,
            self.size,
            self.use_tls,
            self.customize,
            self.retries,
            self.retry_wait_ms,
            0,
            0,
        )
        .await
        .map_err(|e| DataFusionError::Execution(format!("{e:?}")))?;
        client
            .fetch_partition(&executor.id, &partition.into(), location.file_id, layout, true)
            .await
            .map_err(|e| e.into_datafusion())
    }
}
