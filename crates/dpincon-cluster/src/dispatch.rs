//! Detection on gRPC workers: the engine's `ConflictDetector` seam
//! implemented by partition tasks sent to stateless workers.
//!
//! This is the part issue 12 replaces with Ballista; the job layer
//! (`coordinator`: datasets, ledgers, the job store, public reasons) does
//! not depend on how detection is spread.
//!
//! Detection of one job: resolve the workers (a list, or a DNS name whose
//! addresses are the pods of a Kubernetes headless service) and keep those
//! answering a heartbeat; split every constraint into partition tasks
//! (`dpincon_detect::plan_partitions`: hash of the equality keys, or t1
//! ranges); send each task to the least loaded live worker that has not
//! failed it yet, at most `capacity` per worker; merge returned shards into
//! one `GraphBuilder`. A failed attempt (worker gone, timeout, bad reply)
//! puts the task back at the head of the queue for another worker; the job
//! fails, with the reason, only when a task has no live worker left that
//! has not failed it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dpincon_detect::{
    DetectOptions, Detection, DetectionPlan, KeyConstraint, PartitionTask, Relation,
    brute_force_plans, describe_plans, plan_partitions, task_relation,
};
use dpincon_engine::{ConflictDetector, EngineError};
use dpincon_graph::{
    AdjacencyShard, GraphBuilder, SpillConfig, decode_shard, edge_stream_fingerprint,
};
use dpincon_proto::v1::worker_client::WorkerClient;
use dpincon_proto::v1::{
    HeartbeatRequest, IdRange, JobStatus, PhaseTime, TaskRequest, task_output,
};
use dpincon_proto::{MAX_MESSAGE_BYTES, constraint_to_proto, rows_to_ipc};
use prost::Message;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;
use tonic::{Code, Status};

use crate::auth::{AddToken, Token};
use crate::tls::ClientTls;
use crate::{ClusterError, endpoint};

/// A worker client with the token on every call.
type WorkerRpc = WorkerClient<InterceptedService<Channel, AddToken>>;

/// Where the workers are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkerSource {
    /// Fixed URLs (`--workers http://host:port,...`).
    Urls(Vec<String>),
    /// A DNS name and port resolved when each job starts
    /// (`--workers-dns name:port`): every address is one worker, as a
    /// Kubernetes headless service lists its pods.
    Dns {
        /// The name.
        host: String,
        /// The workers' port.
        port: u16,
    },
}

impl WorkerSource {
    /// Parses `--workers-dns` (`name:port`).
    pub fn dns(spec: &str) -> Result<Self, ClusterError> {
        let (host, port) = spec.rsplit_once(':').ok_or_else(|| {
            ClusterError::Config(format!("--workers-dns '{spec}': use NAME:PORT"))
        })?;
        let port = port
            .parse()
            .map_err(|_| ClusterError::Config(format!("--workers-dns '{spec}': bad port")))?;
        if host.is_empty() {
            return Err(ClusterError::Config(format!("--workers-dns '{spec}': no name")));
        }
        Ok(WorkerSource::Dns { host: host.to_string(), port })
    }

    /// The workers' URLs now, with the TLS name to check for each.
    async fn resolve(&self, tls: bool) -> Result<Vec<(String, Option<String>)>, String> {
        match self {
            WorkerSource::Urls(urls) => Ok(urls.iter().map(|u| (u.clone(), None)).collect()),
            WorkerSource::Dns { host, port } => {
                let mut addrs: Vec<_> = tokio::net::lookup_host((host.as_str(), *port))
                    .await
                    .map_err(|e| format!("cannot resolve workers '{host}:{port}': {e}"))?
                    .collect();
                // Sorted so worker numbering (and logs) are reproducible.
                addrs.sort();
                addrs.dedup();
                let scheme = if tls { "https" } else { "http" };
                Ok(addrs
                    .into_iter()
                    .map(|a| (format!("{scheme}://{a}"), Some(host.clone())))
                    .collect())
            }
        }
    }
}

/// How detection reaches the workers.
#[derive(Debug, Clone)]
pub struct DispatchOptions {
    /// Where the workers are.
    pub workers: WorkerSource,
    /// The coordinator↔worker token (never a client's): sent to workers.
    pub token: Token,
    /// TLS towards the workers (`--tls-ca`), with the coordinator's client
    /// certificate when the workers require one (mTLS).
    pub worker_tls: Option<ClientTls>,
    /// A task attempt taking longer fails and is retried elsewhere.
    pub task_timeout: Duration,
    /// How often live workers are checked during a job; three missed
    /// heartbeats in a row mark a worker lost and retry its tasks.
    pub heartbeat_interval: Duration,
    /// Partition tasks per constraint and worker: more tasks balance load
    /// and make retries cheaper; fewer send less (range-split constraints
    /// send their t2 rows with every task).
    pub partitions_per_worker: usize,
}

impl DispatchOptions {
    /// Options with the defaults of the `dpincon-coordinator` command.
    pub fn new(workers: WorkerSource, token: Token) -> Self {
        DispatchOptions {
            workers,
            token,
            worker_tls: None,
            task_timeout: Duration::from_secs(600),
            heartbeat_interval: Duration::from_secs(2),
            partitions_per_worker: 4,
        }
    }
}

/// Detection on gRPC workers: implements the engine's [`ConflictDetector`]
/// seam, so everything around detection is the embedded code.
#[derive(Debug)]
pub struct GrpcDetector {
    options: Arc<DispatchOptions>,
    status: Arc<watch::Sender<JobStatus>>,
    sent: Arc<AtomicU64>,
    received: Arc<AtomicU64>,
    failure: Mutex<Option<String>>,
}

/// What one job's detection works on.
#[derive(Clone, Copy)]
struct Work<'a> {
    relation: &'a Relation,
    constraints: &'a [KeyConstraint],
    tasks: &'a [PartitionTask],
    brute_force: bool,
}

/// A live worker during one job's detection.
struct Conn {
    url: String,
    client: WorkerRpc,
    capacity: usize,
    in_flight: usize,
    alive: bool,
    lost: watch::Sender<bool>,
}

/// Why one task attempt failed.
#[derive(Debug)]
struct AttemptError {
    /// The worker itself is gone or refuses us: give it no more tasks.
    worker_down: bool,
    message: String,
}

impl AttemptError {
    fn from_status(status: Status) -> Self {
        // Connection-level failures (killed worker, refused token) end the
        // worker's part in the job; a task-level error only this task's.
        let worker_down = matches!(
            status.code(),
            Code::Unavailable | Code::Unknown | Code::Cancelled | Code::Unauthenticated
        );
        AttemptError { worker_down, message: crate::describe_status(&status) }
    }
}

/// Missed heartbeats (each answered within one interval, or not) after
/// which a worker is lost: one slow answer on a loaded machine is not death.
const HEARTBEAT_MISSES: u32 = 3;

/// Aborts the heartbeat loop when detection ends, however it ends.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl GrpcDetector {
    /// A detector using `options`, reporting into `status`.
    pub fn new(options: DispatchOptions, status: Arc<watch::Sender<JobStatus>>) -> Self {
        GrpcDetector {
            options: Arc::new(options),
            status,
            sent: Arc::default(),
            received: Arc::default(),
            failure: Mutex::default(),
        }
    }

    /// Why detection failed, in words for the job's status (the engine's
    /// error type has no variant for remote failures).
    pub fn failure(&self) -> Option<String> {
        self.failure.lock().expect("failure poisoned").clone()
    }

    fn phase_done(&self, phase: &str, since: Instant) {
        let seconds = since.elapsed().as_secs_f64();
        self.status.send_modify(|s| s.phases.push(PhaseTime { phase: phase.into(), seconds }));
    }

    fn publish_bytes(&self) {
        let (sent, received) =
            (self.sent.load(Ordering::Relaxed), self.received.load(Ordering::Relaxed));
        self.status.send_modify(|s| {
            s.bytes_sent = sent;
            s.bytes_received = received;
        });
    }

    /// Resolves the workers and keeps those answering a heartbeat.
    async fn connect(&self) -> Result<Vec<Conn>, String> {
        let tls = self.options.worker_tls.as_ref();
        let addrs = self.options.workers.resolve(tls.is_some()).await?;
        if addrs.is_empty() {
            return Err("no worker available: the worker list is empty".into());
        }
        let mut probes = JoinSet::new();
        for (index, (url, domain)) in addrs.into_iter().enumerate() {
            let tls = tls.map(|t| t.or_domain(domain));
            let token = self.options.token.clone();
            probes.spawn(async move {
                let client = match endpoint(&url, tls.as_ref()) {
                    Ok(channel) => WorkerClient::with_interceptor(channel, AddToken::new(&token))
                        .max_decoding_message_size(MAX_MESSAGE_BYTES)
                        .max_encoding_message_size(MAX_MESSAGE_BYTES),
                    Err(e) => return (index, url, Err(e.to_string())),
                };
                let probe = tokio::time::timeout(
                    Duration::from_secs(5),
                    client.clone().heartbeat(HeartbeatRequest {}),
                )
                .await;
                let outcome = match probe {
                    Ok(Ok(reply)) => Ok((client, reply.into_inner().capacity.max(1) as usize)),
                    Ok(Err(status)) => Err(crate::describe_status(&status)),
                    Err(_) => Err("no heartbeat within 5 s".into()),
                };
                (index, url, outcome)
            });
        }
        let mut found = Vec::new();
        let mut refused = Vec::new();
        while let Some(joined) = probes.join_next().await {
            let (index, url, outcome) = joined.map_err(|e| format!("worker probe failed: {e}"))?;
            match outcome {
                Ok((client, capacity)) => found.push((index, url, client, capacity)),
                Err(reason) => {
                    eprintln!("worker {url} left out: {reason}");
                    refused.push((index, format!("{url}: {reason}")));
                }
            }
        }
        if found.is_empty() {
            refused.sort();
            let reasons: Vec<String> = refused.into_iter().map(|(_, r)| r).collect();
            return Err(format!("no worker available ({})", reasons.join("; ")));
        }
        found.sort_by_key(|f| f.0);
        Ok(found
            .into_iter()
            .map(|(_, url, client, capacity)| Conn {
                url,
                client,
                capacity,
                in_flight: 0,
                alive: true,
                lost: watch::Sender::new(false),
            })
            .collect())
    }

    async fn run(
        &self,
        relation: &Relation,
        constraints: &[KeyConstraint],
        options: DetectOptions,
    ) -> Result<Detection, String> {
        let plans: Vec<DetectionPlan> = if options.brute_force {
            brute_force_plans(constraints)
        } else {
            describe_plans(constraints)
        };
        let started = Instant::now();
        let conns = self.connect().await?;
        self.status.send_modify(|s| s.workers = conns.len() as u32);
        self.phase_done("detect.connect", started);
        let started = Instant::now();
        let parts = conns.len() * self.options.partitions_per_worker.max(1);
        let tasks = plan_partitions(relation, constraints, parts);
        // Largest first: a big task started last would leave the others idle.
        let mut order: Vec<usize> = (0..tasks.len()).collect();
        order.sort_by_key(|&t| std::cmp::Reverse(tasks[t].rows.len()));
        self.status.send_modify(|s| {
            s.tasks_total = tasks.len() as u32;
            s.tasks_done = 0;
        });
        self.phase_done("detect.plan", started);

        let dispatch_start = Instant::now();
        // The coordinator holds the whole graph: honour the job's memory
        // limit as the embedded detector does (spilling never changes it).
        let builder = match options.memory_limit {
            None => GraphBuilder::new(relation.rows()),
            Some(memory_limit) => {
                let spill = SpillConfig { dir: std::env::temp_dir(), memory_limit };
                GraphBuilder::with_spill(relation.rows(), &spill)
                    .map_err(|e| format!("cannot spill to {}: {e}", spill.dir.display()))?
            }
        };
        let work = Work { relation, constraints, tasks: &tasks, brute_force: options.brute_force };
        let builder = self.dispatch(&work, order, conns, builder).await;
        self.publish_bytes();
        let builder = builder?;
        self.phase_done("detect.dispatch", dispatch_start);

        // Shards were absorbed as tasks finished; what is left is sorting
        // the buffered pairs into the bitmaps, and the fingerprint pass.
        let merge_start = Instant::now();
        let graph = builder.finish();
        let fingerprint = edge_stream_fingerprint(graph.edges());
        self.status.send_modify(|s| {
            s.edges = fingerprint.edges;
            s.edge_fingerprint = fingerprint.to_string();
        });
        self.phase_done("detect.merge", merge_start);
        Ok(Detection { graph, plans })
    }

    /// The request of task `index`: its rows and constraint, re-encoded at
    /// each attempt so only tasks in flight hold their bytes.
    fn request(&self, work: &Work<'_>, index: usize) -> Result<TaskRequest, String> {
        let task = &work.tasks[index];
        let (local, constraint) =
            task_relation(work.relation, &work.constraints[task.constraint], &task.rows);
        let rows_ipc = rows_to_ipc(&local, &task.rows).map_err(|e| e.to_string())?;
        Ok(TaskRequest {
            job_id: self.status.borrow().job_id.clone(),
            task: index as u32,
            constraint: Some(constraint_to_proto(&constraint)),
            nodes: work.relation.rows(),
            rows_ipc,
            left: task.left.as_ref().map(|r| IdRange { start: r.start, end: r.end }),
            brute_force: work.brute_force,
        })
    }

    /// Runs every task on the workers and absorbs their shards.
    async fn dispatch(
        &self,
        work: &Work<'_>,
        order: Vec<usize>,
        mut conns: Vec<Conn>,
        mut builder: GraphBuilder,
    ) -> Result<GraphBuilder, String> {
        let Work { relation, constraints, tasks, .. } = *work;
        let nodes = relation.rows();
        let mut pending: VecDeque<usize> = order.into();
        let mut failed_on: Vec<Vec<usize>> = vec![Vec::new(); tasks.len()];
        let mut last_error: Vec<String> = vec![String::new(); tasks.len()];
        let mut running: JoinSet<(usize, usize, Result<Vec<AdjacencyShard>, AttemptError>)> =
            JoinSet::new();
        let (lost_tx, mut lost_rx) = mpsc::unbounded_channel();
        let _heartbeats = AbortOnDrop(tokio::spawn(heartbeats(
            conns.iter().map(|c| c.client.clone()).collect(),
            self.options.heartbeat_interval,
            lost_tx,
        )));
        let mut done = 0u32;
        let mut retries = 0u32;
        loop {
            let mut i = 0;
            while i < pending.len() {
                let t = pending[i];
                let mut eligible = conns
                    .iter()
                    .enumerate()
                    .filter(|(w, c)| c.alive && !failed_on[t].contains(w))
                    .peekable();
                if eligible.peek().is_none() {
                    let why = if last_error[t].is_empty() {
                        "no live worker".to_string()
                    } else {
                        format!("last error: {}", last_error[t])
                    };
                    return Err(format!(
                        "no worker can take partition task {t} of constraint `{}` ({why})",
                        constraints[tasks[t].constraint].display
                    ));
                }
                let free = eligible.filter(|(_, c)| c.in_flight < c.capacity);
                let Some((w, _)) = free.min_by_key(|(w, c)| (c.in_flight, *w)) else {
                    i += 1;
                    continue;
                };
                pending.remove(i);
                let request = self.request(work, t)?;
                self.sent.fetch_add(request.encoded_len() as u64, Ordering::Relaxed);
                let conn = &mut conns[w];
                conn.in_flight += 1;
                let attempt = attempt(
                    conn.client.clone(),
                    request,
                    nodes,
                    self.options.task_timeout,
                    conn.lost.subscribe(),
                    self.received.clone(),
                );
                running.spawn(async move { (t, w, attempt.await) });
            }
            if running.is_empty() {
                if pending.is_empty() {
                    break;
                }
                return Err("internal error: tasks are pending but none can start".into());
            }
            tokio::select! {
                Some(joined) = running.join_next() => {
                    let (t, w, outcome) = joined.map_err(|e| format!("task attempt aborted: {e}"))?;
                    conns[w].in_flight -= 1;
                    match outcome {
                        Ok(shards) => {
                            for shard in &shards {
                                builder.absorb_shard(shard);
                            }
                            done += 1;
                            self.status.send_modify(|s| s.tasks_done = done);
                        }
                        Err(e) => {
                            let url = conns[w].url.clone();
                            eprintln!("task {t} failed on {url}: {}; retrying elsewhere", e.message);
                            retries += 1;
                            failed_on[t].push(w);
                            last_error[t] = format!("{url}: {}", e.message);
                            if e.worker_down {
                                lose(&mut conns[w], &e.message);
                            }
                            pending.push_front(t);
                            self.status.send_modify(|s| s.task_retries = retries);
                        }
                    }
                    self.publish_bytes();
                }
                Some((w, reason)) = lost_rx.recv() => lose(&mut conns[w], &reason),
            }
        }
        Ok(builder)
    }
}

fn lose(conn: &mut Conn, reason: &str) {
    if conn.alive {
        eprintln!("worker {} lost: {reason}", conn.url);
        conn.alive = false;
        // Wakes the worker's in-flight attempts, which fail and are retried.
        conn.lost.send_replace(true);
    }
}

/// One attempt of one task on one worker: the shards, or why not.
async fn attempt(
    mut client: WorkerRpc,
    request: TaskRequest,
    nodes: u32,
    timeout: Duration,
    mut lost: watch::Receiver<bool>,
    received: Arc<AtomicU64>,
) -> Result<Vec<AdjacencyShard>, AttemptError> {
    let call = async {
        let mut stream =
            client.run_task(request).await.map_err(AttemptError::from_status)?.into_inner();
        let mut shards = Vec::new();
        while let Some(message) = stream.message().await.map_err(AttemptError::from_status)? {
            received.fetch_add(message.encoded_len() as u64, Ordering::Relaxed);
            match message.item {
                Some(task_output::Item::Shard(bytes)) => {
                    shards.push(decode_shard(&bytes, nodes).map_err(|e| AttemptError {
                        worker_down: false,
                        message: e.to_string(),
                    })?);
                }
                Some(task_output::Item::Done(_)) => return Ok(shards),
                None => break,
            }
        }
        Err(AttemptError {
            worker_down: true,
            message: "the task's stream ended before its summary".into(),
        })
    };
    tokio::select! {
        outcome = tokio::time::timeout(timeout, call) => outcome.unwrap_or_else(|_| {
            Err(AttemptError { worker_down: false, message: format!("timed out after {timeout:?}") })
        }),
        _ = lost.wait_for(|l| *l) => Err(AttemptError {
            worker_down: true,
            message: "worker lost (missed heartbeats)".into(),
        }),
    }
}

/// Checks every worker each `interval`; reports one on `lost` after
/// [`HEARTBEAT_MISSES`] missed heartbeats in a row (a hung worker keeps
/// its TCP connection, so only this and the task timeout notice it).
async fn heartbeats(
    clients: Vec<WorkerRpc>,
    interval: Duration,
    lost: mpsc::UnboundedSender<(usize, String)>,
) {
    let mut misses = vec![0u32; clients.len()];
    let mut ticker = tokio::time::interval(interval);
    // After a slow round, wait a full interval again rather than bursting.
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticker.tick().await;
    loop {
        ticker.tick().await;
        let mut probes = JoinSet::new();
        for (w, client) in clients.iter().enumerate() {
            if misses[w] >= HEARTBEAT_MISSES {
                continue;
            }
            let mut client = client.clone();
            probes.spawn(async move {
                let ok = tokio::time::timeout(interval, client.heartbeat(HeartbeatRequest {}))
                    .await
                    .is_ok_and(|r| r.is_ok());
                (w, ok)
            });
        }
        while let Some(Ok((w, ok))) = probes.join_next().await {
            if ok {
                misses[w] = 0;
            } else {
                misses[w] += 1;
                if misses[w] == HEARTBEAT_MISSES {
                    let reason = format!("{HEARTBEAT_MISSES} heartbeats missed in a row");
                    if lost.send((w, reason)).is_err() {
                        return;
                    }
                }
            }
        }
    }
}

impl ConflictDetector for GrpcDetector {
    async fn detect(
        &self,
        relation: &Relation,
        constraints: &[KeyConstraint],
        options: DetectOptions,
    ) -> Result<Detection, EngineError> {
        self.run(relation, constraints, options).await.map_err(|reason| {
            let message = format!("distributed detection failed: {reason}");
            *self.failure.lock().expect("failure poisoned") = Some(message.clone());
            EngineError::Config(message)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_specs_parse() {
        assert_eq!(
            WorkerSource::dns("dpincon-worker.ns.svc.cluster.local:50051").unwrap(),
            WorkerSource::Dns { host: "dpincon-worker.ns.svc.cluster.local".into(), port: 50051 }
        );
        assert!(WorkerSource::dns("no-port").is_err());
        assert!(WorkerSource::dns(":80").is_err());
        assert!(WorkerSource::dns("host:http").is_err());
    }
}
