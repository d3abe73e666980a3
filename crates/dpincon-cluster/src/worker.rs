//! The worker: stateless detection of partition tasks.
//!
//! A task arrives with its constraint (rewritten to the task's slots), the
//! graph's node count, its rows as Arrow IPC and, for range-split
//! constraints, the t1 range. The worker runs
//! `dpincon_detect::detect_partition` (or the brute-force oracle) into an
//! [`EdgeCollector`], then streams the edges back as adjacency shards and
//! ends with a summary. Nothing is kept between tasks, so a worker can die
//! or be replaced at any time: the coordinator retries its tasks elsewhere.
//!
//! Memory is bounded by a semaphore: at most `max_tasks` tasks decode and
//! detect at once (others wait for a permit), each holding its rows and its
//! own edges only.

use std::net::SocketAddr;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use dpincon_detect::{KeyConstraint, Relation, brute_force, detect_partition};
use dpincon_graph::{EdgeCollector, EdgeSink, encode_shard};
use dpincon_proto::v1::worker_server::{Worker, WorkerServer};
use dpincon_proto::v1::{
    HeartbeatRequest, HeartbeatResponse, TaskOutput, TaskRequest, TaskSummary, task_output,
};
use dpincon_proto::{MAX_MESSAGE_BYTES, constraint_from_proto, rows_from_ipc};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, mpsc};
use tokio_stream::wrappers::ReceiverStream;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Server;
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status};

use crate::ClusterError;
use crate::auth::{RequireToken, Token};
use crate::tls::ServerTls;

/// Node ids per shard sent back: bounds each streamed message for dense
/// outputs while keeping per-message overhead small for sparse ones.
const SHARD_NODES: u32 = 1 << 14;

/// How a worker runs.
#[derive(Debug, Clone)]
pub struct WorkerOptions {
    /// Tasks detected at once (memory bound); at least 1.
    pub max_tasks: usize,
    /// Test only: wait this long before each task, so tests can kill a
    /// worker while it holds tasks.
    pub task_delay: Duration,
}

impl Default for WorkerOptions {
    fn default() -> Self {
        WorkerOptions {
            max_tasks: std::thread::available_parallelism().map_or(1, |n| n.get()),
            task_delay: Duration::ZERO,
        }
    }
}

/// The Worker gRPC service.
#[derive(Debug)]
pub struct WorkerService {
    permits: Arc<Semaphore>,
    capacity: u32,
    running: Arc<AtomicU32>,
    completed: Arc<AtomicU64>,
    task_delay: Duration,
}

impl WorkerService {
    /// A worker with `options`.
    pub fn new(options: &WorkerOptions) -> Self {
        let max = options.max_tasks.max(1);
        WorkerService {
            permits: Arc::new(Semaphore::new(max)),
            capacity: max as u32,
            running: Arc::default(),
            completed: Arc::default(),
            task_delay: options.task_delay,
        }
    }
}

/// A decoded, validated task.
struct Task {
    relation: Relation,
    ids: Vec<u32>,
    constraint: KeyConstraint,
    nodes: u32,
    left: Option<Range<u32>>,
    brute_force: bool,
}

fn decode(request: TaskRequest) -> Result<Task, Status> {
    let invalid = |e: dpincon_proto::ProtoError| Status::invalid_argument(e.to_string());
    let (relation, ids) = rows_from_ipc(&request.rows_ipc, request.nodes).map_err(invalid)?;
    let wire = request.constraint.ok_or_else(|| Status::invalid_argument("no constraint"))?;
    let constraint = constraint_from_proto(&wire, relation.slot_count()).map_err(invalid)?;
    let left = match request.left {
        Some(r) if r.start > r.end => {
            return Err(Status::invalid_argument("t1 range ends before it starts"));
        }
        Some(r) => Some(r.start..r.end),
        None => None,
    };
    Ok(Task {
        relation,
        ids,
        constraint,
        nodes: request.nodes,
        left,
        brute_force: request.brute_force,
    })
}

/// Passes on the pairs whose t1 may play t1 (in `left`), as global ids:
/// the brute-force oracle works on local rows and knows no range.
struct LeftOnly<'a, S> {
    ids: &'a [u32],
    left: Option<Range<u32>>,
    sink: &'a mut S,
}

impl<S: EdgeSink> EdgeSink for LeftOnly<'_, S> {
    fn add(&mut self, a: u32, b: u32) {
        let (a, b) = (self.ids[a as usize], self.ids[b as usize]);
        if self.left.as_ref().is_none_or(|r| r.contains(&a)) {
            self.sink.add(a, b);
        }
    }
}

/// Runs a task to its encoded shards and summary.
fn run(task: Task) -> (Vec<Vec<u8>>, TaskSummary) {
    let start = Instant::now();
    let mut sink = EdgeCollector::new(task.nodes);
    if task.brute_force {
        let mut left_only = LeftOnly { ids: &task.ids, left: task.left.clone(), sink: &mut sink };
        brute_force(&task.relation, &task.constraint, &mut left_only);
    } else {
        detect_partition(&task.relation, &task.constraint, &task.ids, task.left.clone(), &mut sink);
    }
    let edges = sink.edge_count();
    let shards = sink.into_shards(SHARD_NODES).iter().map(encode_shard).collect();
    (shards, TaskSummary { edges, seconds: start.elapsed().as_secs_f64() })
}

/// Counts a task as running while alive.
struct Running(Arc<AtomicU32>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[tonic::async_trait]
impl Worker for WorkerService {
    type RunTaskStream = ReceiverStream<Result<TaskOutput, Status>>;

    async fn run_task(
        &self,
        request: Request<TaskRequest>,
    ) -> Result<Response<Self::RunTaskStream>, Status> {
        let request = request.into_inner();
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| Status::unavailable("worker shutting down"))?;
        self.running.fetch_add(1, Ordering::Relaxed);
        let running = Running(self.running.clone());
        let task = decode(request)?;
        let (tx, rx) = mpsc::channel(4);
        let completed = self.completed.clone();
        let delay = self.task_delay;
        tokio::spawn(async move {
            let _permit = permit;
            let _running = running;
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            // Detection is CPU-bound: off the async threads, so heartbeats
            // are still answered while tasks run.
            let (shards, summary) = match tokio::task::spawn_blocking(move || run(task)).await {
                Ok(out) => out,
                Err(e) => {
                    let _ = tx.send(Err(Status::internal(format!("task failed: {e}")))).await;
                    return;
                }
            };
            for shard in shards {
                let item = TaskOutput { item: Some(task_output::Item::Shard(shard)) };
                if tx.send(Ok(item)).await.is_err() {
                    return; // The coordinator gave up on this task.
                }
            }
            let done = TaskOutput { item: Some(task_output::Item::Done(summary)) };
            if tx.send(Ok(done)).await.is_ok() {
                completed.fetch_add(1, Ordering::Relaxed);
            }
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    async fn heartbeat(
        &self,
        _: Request<HeartbeatRequest>,
    ) -> Result<Response<HeartbeatResponse>, Status> {
        Ok(Response::new(HeartbeatResponse {
            running: self.running.load(Ordering::Relaxed),
            capacity: self.capacity,
            completed: self.completed.load(Ordering::Relaxed),
            version: env!("CARGO_PKG_VERSION").to_string(),
        }))
    }
}

/// Serves the worker on `listener` until `shutdown` resolves.
pub async fn serve(
    listener: TcpListener,
    options: &WorkerOptions,
    token: &Token,
    tls: Option<&ServerTls>,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ClusterError> {
    let service = WorkerServer::new(WorkerService::new(options))
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES);
    let mut server = Server::builder();
    if let Some(tls) = tls {
        server = server.tls_config(tls.config())?;
    }
    server
        .add_service(InterceptedService::new(service, RequireToken::new(token)))
        .serve_with_incoming_shutdown(
            TcpIncoming::from(listener).with_nodelay(Some(true)),
            shutdown,
        )
        .await?;
    Ok(())
}

/// Binds `addr` (port 0 picks a free port) and returns the listener with
/// the address actually bound.
pub async fn bind(addr: &str) -> Result<(TcpListener, SocketAddr), ClusterError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| ClusterError::Config(format!("cannot listen on {addr}: {e}")))?;
    let local = listener.local_addr().map_err(|e| ClusterError::Config(e.to_string()))?;
    Ok((listener, local))
}
