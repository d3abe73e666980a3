//! A coordinator's client: what `dpincon-cli submit`, `status`, `result`
//! and `cancel` call.

use dpincon_proto::v1::coordinator_client::CoordinatorClient;
use dpincon_proto::v1::{
    ConfigFormat, JobRef, JobState, JobStatus, ListJobsRequest, SubmitJobRequest,
};
use dpincon_proto::{MAX_MESSAGE_BYTES, reason_name, state_name};
use serde::Serialize;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

use crate::auth::{AddToken, Token};
use crate::tls::ClientTls;
use crate::{ClientError, endpoint};

/// A connection to a coordinator (lazy: the first call connects).
#[derive(Debug, Clone)]
pub struct Client {
    rpc: CoordinatorClient<InterceptedService<Channel, AddToken>>,
}

impl Client {
    /// A client of the coordinator at `url` (`http://host:port`, or
    /// `https://` with `tls`), sending `token` on every call.
    pub fn new(url: &str, token: &Token, tls: Option<&ClientTls>) -> Result<Self, ClientError> {
        let channel = endpoint(url, tls)?;
        let rpc = CoordinatorClient::with_interceptor(channel, AddToken::new(token))
            .max_decoding_message_size(MAX_MESSAGE_BYTES)
            .max_encoding_message_size(MAX_MESSAGE_BYTES);
        Ok(Client { rpc })
    }

    /// Queues a client job (a [`crate::ClientJob`], or any JSON object for
    /// the coordinator to judge); returns its id.
    pub async fn submit(&self, job: &impl Serialize) -> Result<String, ClientError> {
        let text = serde_json::to_string(job)
            .map_err(|e| ClientError::Config(format!("the job does not serialise: {e}")))?;
        self.submit_text(&text, ConfigFormat::Json).await
    }

    /// Queues a client job written as JSON or TOML text.
    pub async fn submit_text(
        &self,
        text: &str,
        format: ConfigFormat,
    ) -> Result<String, ClientError> {
        let request = SubmitJobRequest { config: text.to_string(), format: format as i32 };
        Ok(self.rpc.clone().submit_job(request).await?.into_inner().job_id)
    }

    /// The job's status now.
    pub async fn status(&self, job_id: &str) -> Result<JobStatus, ClientError> {
        Ok(self.rpc.clone().get_job(JobRef { job_id: job_id.into() }).await?.into_inner())
    }

    /// Follows the job until it ends, calling `on_change` with each status;
    /// returns the final one.
    pub async fn watch(
        &self,
        job_id: &str,
        mut on_change: impl FnMut(&JobStatus),
    ) -> Result<JobStatus, ClientError> {
        let mut stream =
            self.rpc.clone().watch_job(JobRef { job_id: job_id.into() }).await?.into_inner();
        let mut last = None;
        while let Some(status) = stream.message().await? {
            on_change(&status);
            last = Some(status);
        }
        match last {
            Some(s) if is_final(&s) => Ok(s),
            _ => Err(ClientError::Job(format!("lost track of job {job_id} before it ended"))),
        }
    }

    /// The report of a succeeded job, as JSON.
    pub async fn result(&self, job_id: &str) -> Result<String, ClientError> {
        Ok(self
            .rpc
            .clone()
            .get_result(JobRef { job_id: job_id.into() })
            .await?
            .into_inner()
            .report_json)
    }

    /// This client's jobs (the latest), oldest first.
    pub async fn list(&self) -> Result<Vec<JobStatus>, ClientError> {
        Ok(self.rpc.clone().list_jobs(ListJobsRequest {}).await?.into_inner().jobs)
    }

    /// Cancels the job; returns its status after.
    pub async fn cancel(&self, job_id: &str) -> Result<JobStatus, ClientError> {
        Ok(self.rpc.clone().cancel_job(JobRef { job_id: job_id.into() }).await?.into_inner())
    }

    /// Waits for the job's end: the report JSON if it succeeded, else an
    /// error with the reason.
    pub async fn wait(
        &self,
        job_id: &str,
        on_change: impl FnMut(&JobStatus),
    ) -> Result<String, ClientError> {
        let last = self.watch(job_id, on_change).await?;
        match JobState::try_from(last.state) {
            Ok(JobState::Succeeded) => self.result(job_id).await,
            Ok(JobState::Cancelled) => Err(ClientError::Job(format!("job {job_id} was cancelled"))),
            _ => Err(ClientError::Job(format!("job {job_id} failed: {}", last.error))),
        }
    }
}

fn is_final(s: &JobStatus) -> bool {
    matches!(
        JobState::try_from(s.state),
        Ok(JobState::Succeeded | JobState::Failed | JobState::Cancelled)
    )
}

/// A status as printed by `dpincon-cli status` (JSON).
#[derive(Debug, Clone, Serialize)]
pub struct StatusView {
    /// The job's id.
    pub job_id: String,
    /// `queued`, `running`, `succeeded`, `failed` or `cancelled`.
    pub state: &'static str,
    /// The running phase, if any.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub phase: String,
    /// Why it failed or was cancelled.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub error: String,
    /// The public reason of a failure (`bad-constraints`, `internal`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
    /// Jobs ahead in the queue.
    pub queue_position: u32,
    /// Detection tasks done (set when detection ends).
    pub tasks_done: u32,
    /// Detection tasks in all.
    pub tasks_total: u32,
    /// Seconds per finished phase, in order.
    pub phases: Vec<(String, f64)>,
    /// Edges of the conflict graph (after detection).
    pub edges: u64,
    /// Fingerprint of the stable edge stream.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub edge_fingerprint: String,
    /// A private job on a fixed-time dataset: when its outcome becomes
    /// visible (Unix ms), fixed at acceptance.
    #[serde(skip_serializing_if = "is_zero")]
    pub release_at_unix_ms: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl From<&JobStatus> for StatusView {
    fn from(s: &JobStatus) -> Self {
        StatusView {
            job_id: s.job_id.clone(),
            state: state_name(s.state),
            phase: s.phase.clone(),
            error: s.error.clone(),
            reason: reason_name(s.reason),
            queue_position: s.queue_position,
            tasks_done: s.tasks_done,
            tasks_total: s.tasks_total,
            phases: s.phases.iter().map(|p| (p.phase.clone(), p.seconds)).collect(),
            edges: s.edges,
            edge_fingerprint: s.edge_fingerprint.clone(),
            release_at_unix_ms: s.release_at_unix_ms,
        }
    }
}

/// One line of progress for people, e.g. `running: detect`.
pub fn progress_line(s: &JobStatus) -> String {
    let mut line = state_name(s.state).to_string();
    if s.state == JobState::Queued as i32 && s.queue_position > 0 {
        line += &format!(" ({} ahead)", s.queue_position);
    }
    if !s.phase.is_empty() {
        line += &format!(": {}", s.phase);
    }
    if !s.error.is_empty() {
        line += &format!(" ({})", s.error);
    }
    if s.state == JobState::Queued as i32 && s.release_at_unix_ms > 0 {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let seconds = s.release_at_unix_ms.saturating_sub(now).div_ceil(1000);
        line += &format!(" (result in {seconds} s, at a time fixed when it was accepted)");
    }
    line
}
