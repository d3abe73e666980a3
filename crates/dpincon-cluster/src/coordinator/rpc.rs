//! The Coordinator gRPC handlers: submit, get, watch, result, cancel, list.

use dpincon_proto::v1::coordinator_server::Coordinator;
use dpincon_proto::v1::{
    ConfigFormat, JobRef, JobResult, JobState, JobStatus, ListJobsRequest, ListJobsResponse,
    SubmitJobRequest, SubmitJobResponse,
};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::runner::sleep_until_ms;
use crate::auth::ClientName;
use crate::store::now_ms;
use crate::submission;

use super::shared::{internal, is_terminal};
use super::{CoordinatorService, LIST_LIMIT};

fn client_of<T>(request: &Request<T>) -> Result<String, Status> {
    request
        .extensions()
        .get::<ClientName>()
        .map(|c| c.0.clone())
        .ok_or_else(|| Status::unauthenticated("no client identity"))
}

#[tonic::async_trait]
impl Coordinator for CoordinatorService {
    async fn submit_job(
        &self,
        request: Request<SubmitJobRequest>,
    ) -> Result<Response<SubmitJobResponse>, Status> {
        let client = client_of(&request)?;
        let request = request.into_inner();
        let format = ConfigFormat::try_from(request.format)
            .map_err(|_| Status::invalid_argument("unknown config format"))?;
        let accepted =
            submission::check(&request.config, format, self.rules()).map_err(|r| r.status())?;
        let id = self.shared.admit(&client, accepted, None).await.map_err(|r| r.status())?;
        Ok(Response::new(SubmitJobResponse { job_id: id }))
    }

    async fn get_job(&self, request: Request<JobRef>) -> Result<Response<JobStatus>, Status> {
        let client = client_of(&request)?;
        let job = self.shared.owned(&request.into_inner().job_id, &client)?;
        Ok(Response::new(self.shared.status_of(&job)))
    }

    type WatchJobStream = ReceiverStream<Result<JobStatus, Status>>;

    /// Streams the client's view of the job each time it changes: for a
    /// fixed-time or private job that is `queued`, then its end at its
    /// release time, so the stream's timing shows nothing of detection's
    /// progress.
    async fn watch_job(
        &self,
        request: Request<JobRef>,
    ) -> Result<Response<Self::WatchJobStream>, Status> {
        let client = client_of(&request)?;
        let stored = self.shared.owned(&request.into_inner().job_id, &client)?;
        let (tx, rx) = mpsc::channel(16);
        let shared = self.shared.clone();
        tokio::spawn(async move {
            let mut changes = shared.active(&stored.id).map(|j| j.status.subscribe());
            let mut last: Option<JobStatus> = None;
            loop {
                if let Some(c) = changes.as_mut() {
                    c.borrow_and_update();
                }
                let Ok(Some(now)) = shared.store.get(&stored.id) else { return };
                let status = shared.status_of(&now);
                if last.as_ref() != Some(&status) {
                    if tx.send(Ok(status.clone())).await.is_err() {
                        return;
                    }
                    last = Some(status.clone());
                }
                if is_terminal(status.state) {
                    return;
                }
                // Wake on a change of the live job, or at the release time.
                let release = now.slot.fixed.then_some(now.slot.end_ms);
                tokio::select! {
                    changed = async {
                        match changes.as_mut() {
                            Some(c) => c.changed().await.is_ok(),
                            None => std::future::pending().await,
                        }
                    } => if !changed { changes = None },
                    _ = async {
                        match release {
                            Some(at) if at > now_ms() => sleep_until_ms(at).await,
                            // Released or unfixed: the job's own end wakes us;
                            // past the release but not yet recorded: look again soon.
                            Some(_) => tokio::time::sleep(std::time::Duration::from_millis(5)).await,
                            None => std::future::pending().await,
                        }
                    } => {}
                }
            }
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    async fn get_result(&self, request: Request<JobRef>) -> Result<Response<JobResult>, Status> {
        let client = client_of(&request)?;
        let job_id = request.into_inner().job_id;
        let job = self.shared.owned(&job_id, &client)?;
        // What the client's view says, not the store: a private job's end is
        // not there before its release time.
        let status = self.shared.status_of(&job);
        match JobState::try_from(status.state) {
            Ok(JobState::Succeeded) => {
                Ok(Response::new(JobResult { job_id, report_json: job.report.unwrap_or_default() }))
            }
            Ok(JobState::Failed) => {
                Err(Status::failed_precondition(format!("job {job_id} failed: {}", status.error)))
            }
            Ok(JobState::Cancelled) => {
                Err(Status::failed_precondition(format!("job {job_id} was cancelled")))
            }
            _ => Err(Status::failed_precondition(format!("job {job_id} has not finished"))),
        }
    }

    /// Cancels a job whose end its client cannot see yet: its process is
    /// stopped, its charge stays (it was made at acceptance).
    async fn cancel_job(&self, request: Request<JobRef>) -> Result<Response<JobStatus>, Status> {
        let client = client_of(&request)?;
        let stored = self.shared.owned(&request.into_inner().job_id, &client)?;
        let cancelled = self.shared.store.cancel(&stored.id, now_ms()).map_err(internal)?;
        if let Some(job) = self.shared.active(&stored.id) {
            job.cancel.send_replace(true);
            if cancelled {
                job.status.send_modify(|s| {
                    s.state = JobState::Cancelled as i32;
                    s.error = "cancelled by a client".into();
                });
            }
        }
        if cancelled {
            eprintln!("job {}: cancelled by {client} (charged)", stored.id);
        }
        let now = self.shared.owned(&stored.id, &client)?;
        Ok(Response::new(self.shared.status_of(&now)))
    }

    async fn list_jobs(
        &self,
        request: Request<ListJobsRequest>,
    ) -> Result<Response<ListJobsResponse>, Status> {
        let client = client_of(&request)?;
        let jobs = self.shared.store.list(&client, LIST_LIMIT).map_err(internal)?;
        let jobs = jobs.iter().map(|j| self.shared.status_of(j)).collect();
        Ok(Response::new(ListJobsResponse { jobs }))
    }
}
