//! Our Ballista processes: the scheduler and executor configurations with
//! [`DpinconCodec`] registered (a stock Ballista image
//! cannot decode our operators), and an in-process cluster for tests.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use arrow_flight::flight_service_server::FlightServiceServer;
use ballista_core::config::TaskSchedulingPolicy;
use ballista_core::extension::SessionConfigExt;
use ballista_core::serde::BallistaCodec;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use ballista_core::serde::protobuf::scheduler_grpc_server::SchedulerGrpcServer;
use ballista_core::utils::{
    GrpcServerConfig, create_grpc_server, default_config_producer, default_session_builder,
};
use ballista_executor::ArrowFlightServerProvider;
use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
use ballista_executor::flight_service::BallistaFlightService;
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::{create_scheduler, start_grpc_service_with_listener};
use datafusion::prelude::SessionConfig;
use datafusion_proto::protobuf::{LogicalPlanNode, PhysicalPlanNode};
use http::uri::Authority;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::server::TcpIncoming;

use crate::codec::TableRoots;
use crate::tls::{ClusterTls, Role};
use crate::{BallistaError, DpinconCodec};

/// Ballista's log lines (the `log` crate) at `level` and above, on
/// standard error: the processes' only log (lost executors, retried
/// stages, failed tasks).
pub fn log_to_stderr(level: log::LevelFilter) {
    struct Stderr;
    impl log::Log for Stderr {
        fn enabled(&self, metadata: &log::Metadata) -> bool {
            metadata.level() <= log::max_level()
        }
        fn log(&self, record: &log::Record) {
            if self.enabled(record.metadata()) {
                eprintln!("{} {}: {}", record.level(), record.target(), record.args());
            }
        }
        fn flush(&self) {}
    }
    static LOGGER: Stderr = Stderr;
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(level);
    }
}

/// gRPC messages up to this size each way (a shuffle or result batch).
pub const MAX_MESSAGE_BYTES: u32 = 256 << 20;

/// How quickly a lost executor is noticed, and how long a job's data lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Liveness {
    /// Executors send a heartbeat this often.
    pub heartbeat: Duration,
    /// The scheduler drops an executor silent this long and reruns its
    /// work (lost shuffle output included).
    pub executor_timeout: Duration,
    /// A finished job's last stage output (its edges) stays on the
    /// executors at most this long, then is deleted (the executors' next
    /// poll). A dpincon job deletes it as soon as it has read it, and a
    /// failed or cancelled job's files go at once ([`crate::job`]).
    pub result_retention: Duration,
}

impl Default for Liveness {
    fn default() -> Self {
        Liveness {
            heartbeat: Duration::from_secs(5),
            executor_timeout: Duration::from_secs(30),
            result_retention: Duration::from_secs(300),
        }
    }
}

/// The scheduler's configuration: bound to `listen`, advertised as
/// `external_host`, with our codec; its own dials (cancelling tasks,
/// stopping executors) over mutual TLS when `tls` is given.
pub fn scheduler_config(
    listen: SocketAddr,
    external_host: &str,
    liveness: Liveness,
    tls: Option<&ClusterTls>,
) -> SchedulerConfig {
    let mut config = SchedulerConfig::default()
        .with_hostname(external_host)
        .with_port(listen.port())
        .with_scheduler_policy(TaskSchedulingPolicy::PullStaged)
        .with_grpc_server_max_decoding_message_size(MAX_MESSAGE_BYTES)
        .with_grpc_server_max_encoding_message_size(MAX_MESSAGE_BYTES)
        .with_grpc_client_max_message_size(MAX_MESSAGE_BYTES);
    config.bind_host = listen.ip().to_string();
    config.executor_timeout_seconds = liveness.executor_timeout.as_secs().max(1);
    config.expire_dead_executor_interval_seconds = (liveness.executor_timeout.as_secs() / 3).max(1);
    // 0 would mean "never" to Ballista.
    config.finished_job_data_clean_up_interval_seconds = liveness.result_retention.as_secs().max(1);
    config.override_physical_codec = Some(DpinconCodec::shared());
    if let Some(tls) = tls {
        config.use_tls = true;
        // The scheduler dials executors only.
        config.override_create_grpc_client_endpoint = Some(tls.endpoint_override(None));
    }
    config
}

/// Serves the scheduler on an already bound `listener` until it fails.
/// With `tls`, its gRPC is served by us over mutual TLS (Ballista's own
/// server is plain HTTP/2 and takes no TLS); without, by Ballista, with
/// `GET /healthz` and `/readyz` on the same port.
pub async fn serve_scheduler(
    config: SchedulerConfig,
    listener: tokio::net::TcpListener,
    tls: Option<&ClusterTls>,
) -> Result<(), BallistaError> {
    config.validate()?;
    let (max_encoding, max_decoding) = (
        config.grpc_server_max_encoding_message_size as usize,
        config.grpc_server_max_decoding_message_size as usize,
    );
    let cluster = BallistaCluster::new_from_config(&config).await?;
    let scheduler =
        create_scheduler::<LogicalPlanNode, PhysicalPlanNode>(cluster, Arc::new(config)).await?;
    let Some(tls) = tls else {
        return Ok(start_grpc_service_with_listener(listener, scheduler).await?);
    };
    // Executors always send their host (`external_host`), so Ballista's
    // handlers never need axum's ConnectInfo, which tonic does not set.
    let grpc = SchedulerGrpcServer::new(scheduler)
        .max_encoding_message_size(max_encoding)
        .max_decoding_message_size(max_decoding);
    // Executors (polls, heartbeats) and the coordinator (jobs) call it.
    let grpc = InterceptedService::new(grpc, tls.admit(&[Role::Executor, Role::Coordinator])?);
    let transport = |e: tonic::transport::Error| BallistaError::Process(e.to_string());
    create_grpc_server(&GrpcServerConfig::default())
        .tls_config(tls.server())
        .map_err(transport)?
        .add_service(grpc)
        .serve_with_incoming(TcpIncoming::from(listener).with_nodelay(Some(true)))
        .await
        .map_err(transport)
}

/// The executor's Arrow Flight server (shuffle and result fetches) over
/// mutual TLS: Ballista's own, with our listener configuration, admitting
/// executors (shuffle) and the coordinator (results).
fn tls_flight_server(tls: ClusterTls) -> Result<Arc<ArrowFlightServerProvider>, BallistaError> {
    let admit = tls.admit(&[Role::Executor, Role::Coordinator])?;
    Ok(Arc::new(move |work_dir, addr, mut shutdown, grpc| {
        let (tls, admit) = (tls.clone(), admit.clone());
        tokio::spawn(async move {
            let flight = FlightServiceServer::new(BallistaFlightService::new(work_dir))
                .max_decoding_message_size(MAX_MESSAGE_BYTES as usize)
                .max_encoding_message_size(MAX_MESSAGE_BYTES as usize);
            let flight = InterceptedService::new(flight, admit);
            create_grpc_server(&grpc)
                .tls_config(tls.server())?
                .add_service(flight)
                .serve_with_shutdown(addr, shutdown.recv())
                .await
                .map_err(ballista_core::error::BallistaError::TonicError)
        })
    }))
}

/// Where an executor serves and whom it polls.
#[derive(Debug, Clone)]
pub struct ExecutorOptions {
    /// The Arrow Flight address (shuffle and result fetches); the port must
    /// be a real one (it is advertised).
    pub listen: SocketAddr,
    /// The host other processes reach it by.
    pub external_host: Option<String>,
    /// Its gRPC port (push scheduling only; unused by pull scheduling).
    pub grpc_port: u16,
    /// The scheduler's address (host and port), as configured: dials to
    /// it expect the scheduler's certificate, any other an executor's.
    pub scheduler: Authority,
    /// Tasks run at once (0: one per core).
    pub slots: usize,
    /// Shuffle files (a temporary directory by default).
    pub work_dir: Option<String>,
    /// Heartbeat period.
    pub liveness: Liveness,
    /// How long to keep trying the scheduler at start.
    pub scheduler_connect_timeout: Duration,
    /// The tables scans may read.
    pub tables: TableRoots,
}

/// The executor's configuration, with our codec (restricted to
/// `options.tables`); with `tls`, its Flight server, its dials to the
/// scheduler and its shuffle fetches from other executors over mutual TLS.
pub fn executor_config(
    options: &ExecutorOptions,
    tls: Option<&ClusterTls>,
) -> Result<ExecutorProcessConfig, BallistaError> {
    let codec = DpinconCodec::for_executor(&options.tables)
        .map_err(|e| BallistaError::Process(format!("--allow-tables: {e}")))?;
    let endpoint = tls.map(|tls| tls.endpoint_override(Some(options.scheduler.clone())));
    let slots = if options.slots == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        options.slots
    };
    Ok(ExecutorProcessConfig {
        bind_host: options.listen.ip().to_string(),
        external_host: options.external_host.clone(),
        port: options.listen.port(),
        grpc_port: options.grpc_port,
        scheduler_host: options.scheduler.host().to_string(),
        scheduler_port: options.scheduler.port_u16().ok_or_else(|| {
            BallistaError::Process(format!(
                "the scheduler's address {} has no port",
                options.scheduler
            ))
        })?,
        // Wait for a scheduler that starts after us (pods start in any order).
        scheduler_connect_timeout_seconds: options
            .scheduler_connect_timeout
            .as_secs()
            .clamp(1, u64::from(u16::MAX)) as u16,
        vcores: slots,
        task_scheduling_policy: TaskSchedulingPolicy::PullStaged,
        work_dir: options.work_dir.clone(),
        special_mod_log_level: "WARN".into(),
        print_thread_info: false,
        grpc_max_decoding_message_size: MAX_MESSAGE_BYTES,
        grpc_max_encoding_message_size: MAX_MESSAGE_BYTES,
        executor_heartbeat_interval_seconds: options.liveness.heartbeat.as_secs().max(1),
        override_physical_codec: Some(codec),
        override_create_grpc_client_endpoint: endpoint.clone(),
        // Shuffle fetches read the task's session, built from this one
        // and the client's options (which carry use_tls too).
        override_config_producer: endpoint.map(|endpoint| {
            Arc::new(move || {
                SessionConfig::new_with_ballista()
                    .with_ballista_override_create_grpc_client_endpoint(endpoint.clone())
                    .with_ballista_use_tls(true)
            }) as ballista_core::ConfigProducer
        }),
        override_arrow_flight_service: tls.cloned().map(tls_flight_server).transpose()?,
        ..ExecutorProcessConfig::default()
    })
}

/// Runs an executor until it fails.
pub async fn run_executor(config: ExecutorProcessConfig) -> Result<(), BallistaError> {
    Ok(start_executor_process(Arc::new(config)).await?)
}

/// A scheduler and `executors` executors in this process, on loopback
/// ports (Ballista's standalone mode with our codec); returns the
/// scheduler's URL. For tests: they live as long as the runtime.
pub async fn standalone(executors: usize, slots: usize) -> Result<String, BallistaError> {
    let codec: BallistaCodec<LogicalPlanNode, PhysicalPlanNode> = BallistaCodec::new(
        Arc::new(ballista_core::serde::BallistaLogicalExtensionCodec::default()),
        DpinconCodec::shared(),
    );
    let addr = ballista_scheduler::standalone::new_standalone_scheduler_with_builder(
        Arc::new(default_session_builder),
        Arc::new(default_config_producer),
        codec.clone(),
    )
    .await?;
    let url = format!("http://127.0.0.1:{}", addr.port());
    for _ in 0..executors.max(1) {
        let scheduler = SchedulerGrpcClient::connect(url.clone())
            .await
            .map_err(|e| BallistaError::Process(format!("scheduler at {url}: {e}")))?;
        ballista_executor::new_standalone_executor_from_builder(
            scheduler,
            slots.max(1),
            Arc::new(default_config_producer),
            Arc::new(|_| Ok(Arc::new(datafusion::execution::runtime_env::RuntimeEnv::default()))),
            codec.clone(),
            Default::default(),
        )
        .await?;
    }
    Ok(url)
}
