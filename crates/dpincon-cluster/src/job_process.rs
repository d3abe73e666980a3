//! One accepted job in a process of its own (`dpincon-coordinator
//! run-job`), and the typed messages it exchanges with the coordinator.
//!
//! The coordinator charges a job when it accepts it and runs it in a child
//! process so that its slot's end is a hard stop: at the deadline the child
//! is killed wherever it is (a synchronous measure phase cannot be dropped
//! at an await), its memory is returned at once, and its address space can
//! be capped (`max-job-memory`, `RLIMIT_DATA`), so one job's data cannot
//! slow the next job or take the coordinator down (issue 26).
//!
//! Protocol: the coordinator writes one [`JobSpec`] (JSON) to the child's
//! standard input; the child writes [`ChildMessage`]s, one JSON line each,
//! to its standard output, the last being the outcome. Its standard error
//! may quote data: the coordinator forwards it to the operator's log only
//! for non-private jobs or with `--log-private-values`.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use dpincon_ballista::BallistaJobId;
use dpincon_engine::gate::{GateOptions, run_prepaid_gated_night};
use dpincon_engine::{
    EngineError, JobConfig, JobOutcome, Phase, Prepaid, Progress, Report, run_prepaid_job,
};
use dpincon_proto::v1::FailureReason;
use serde::{Deserialize, Serialize};

use crate::detection::{BallistaLoader, DetectStats, OnSubmitted};

/// How jobs reach the Ballista cluster.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct BallistaOptions {
    /// The scheduler, `http://host:port`.
    pub scheduler: String,
    /// Hash partitions per constraint group (and Parquet scan partitions):
    /// more than the executors' slots balances load and makes a lost
    /// task cheaper to rerun.
    pub partitions: usize,
    /// The least bytes of a CSV table a scan task reads.
    pub csv_range_bytes: u64,
    /// Graph memory before it spills, when the dataset sets no
    /// `memory-limit` (bytes).
    pub graph_memory: u64,
    /// Mutual TLS to the scheduler and executors (`None`: plaintext, tests).
    pub tls: Option<dpincon_ballista::tls::ClusterTlsFiles>,
}

impl BallistaOptions {
    /// Options with the defaults of the `dpincon-coordinator` command.
    pub fn new(scheduler: impl Into<String>) -> Self {
        BallistaOptions {
            scheduler: scheduler.into(),
            partitions: crate::detection::DEFAULT_PARTITIONS,
            csv_range_bytes: dpincon_source::MIN_RANGE_BYTES,
            graph_memory: crate::detection::DEFAULT_GRAPH_MEMORY,
            tls: None,
        }
    }
}

/// What the child runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct JobSpec {
    /// The engine's job (operator settings and the client's options).
    pub config: JobConfig,
    /// The charge made at acceptance.
    pub prepaid: Prepaid,
    /// How to reach the Ballista cluster.
    pub ballista: BallistaOptions,
    /// Where graph spill files go.
    pub work_dir: PathBuf,
    /// The dataset's name, which the client's report shows instead of paths.
    pub dataset: String,
    /// The process's data-segment limit in bytes (`max-job-memory`).
    pub max_memory: Option<u64>,
    /// Bytes its graph spill may take (`max-spill-bytes`).
    pub max_spill_bytes: Option<u64>,
    /// The job runs in a fixed-time slot beside other jobs: its report
    /// carries no timings (how long it took depends on them), even on a
    /// test dataset.
    pub fixed_time: bool,
    /// A gated night's options ([`crate::gated`]): the job then runs
    /// `dpincon_engine::gate::run_prepaid_gated_night` under its hold.
    #[serde(default)]
    pub gate: Option<GateOptions>,
}

/// One line from the child.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChildMessage {
    /// Detection was submitted to Ballista as this job: the coordinator
    /// cancels it if it kills the process (its files go with it).
    Submitted(BallistaJobId),
    /// A phase started.
    Start(Phase),
    /// A phase ended after so many seconds.
    Finish(Phase, f64),
    /// The job succeeded.
    Succeeded {
        /// The report as its client sees it.
        report: Box<Report>,
        /// Detection figures.
        stats: Option<DetectStats>,
        /// A gated night's ε of its hold used (epochs opened, the quota
        /// verdict): the rest is given back at its release time.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        spent: Option<f64>,
    },
    /// The job failed.
    Failed {
        /// The public reason.
        #[serde(with = "reason_name")]
        reason: FailureReason,
        /// The engine's message (may quote data: operator only).
        detail: String,
        /// Detection figures, if detection ended.
        stats: Option<DetectStats>,
    },
}

/// A failure reason by its proto name (`FAILURE_REASON_OVER_QUOTA`); an
/// unknown name is refused, never read as another reason.
mod reason_name {
    use dpincon_proto::v1::FailureReason;
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(reason: &FailureReason, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(reason.as_str_name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<FailureReason, D::Error> {
        let name = String::deserialize(d)?;
        FailureReason::from_str_name(&name)
            .ok_or_else(|| D::Error::custom(format!("unknown failure reason '{name}'")))
    }
}

/// Writes a message as one line on standard output.
fn send(message: &ChildMessage) {
    let mut line = serde_json::to_string(message).expect("messages serialise");
    line.push('\n');
    let mut out = std::io::stdout().lock();
    // A coordinator that stopped reading has killed or abandoned the job.
    let _ = out.write_all(line.as_bytes()).and_then(|()| out.flush());
}

/// Forwards phases to the coordinator, and notes when reading starts
/// (option errors before it depend on no row).
struct ChildProgress {
    read_started: AtomicBool,
}

impl Progress for ChildProgress {
    fn start(&self, phase: Phase) {
        if phase == Phase::Read {
            self.read_started.store(true, Ordering::SeqCst);
        }
        send(&ChildMessage::Start(phase));
    }

    fn finish(&self, phase: Phase, seconds: f64) {
        send(&ChildMessage::Finish(phase, seconds));
    }
}

/// The public reason of an engine failure in a charged job.
pub(crate) fn classify(error: &EngineError, read_started: bool) -> FailureReason {
    match error {
        // Option checks run before the first row is read: nothing in them
        // depends on the data.
        EngineError::Config(_) if !read_started => FailureReason::InvalidJob,
        EngineError::OverQuota(_) => FailureReason::OverQuota,
        _ => FailureReason::Internal,
    }
}

/// The report as a client sees it ([`dpincon_engine::Report::for_client`]);
/// without timings in a fixed-time slot.
fn client_report(report: Report, dataset: &str, fixed_time: bool) -> Report {
    let mut report = report.for_client(dataset);
    if fixed_time {
        report.timings = None;
    }
    report
}

/// Caps the process's data segment (heap and private mappings): past it an
/// allocation fails and the process aborts, which the coordinator reports
/// as `over quota`.
#[allow(unsafe_code)] // setrlimit: see SAFETY below
fn limit_memory(bytes: u64) -> std::io::Result<()> {
    let limit = libc::rlimit { rlim_cur: bytes as libc::rlim_t, rlim_max: bytes as libc::rlim_t };
    // SAFETY: setrlimit reads the struct we pass and touches no memory of ours.
    if unsafe { libc::setrlimit(libc::RLIMIT_DATA, &limit) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Why the job spec on standard input cannot be read.
#[derive(Debug, thiserror::Error)]
enum SpecError {
    #[error(transparent)]
    Read(#[from] std::io::Error),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// The [`JobSpec`] on standard input.
fn read_spec() -> Result<JobSpec, SpecError> {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input)?;
    Ok(serde_json::from_str(&input)?)
}

/// `dpincon-coordinator run-job`: reads a [`JobSpec`] from standard input,
/// runs it and reports on standard output. Returns the exit code.
#[allow(unsafe_code)] // prctl: see SAFETY below
pub fn run_job_process() -> u8 {
    // A coordinator that dies (even SIGKILL) takes its job with it: an
    // orphan would go on using the machine the next job's slot counts on.
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(PR_SET_PDEATHSIG) only sets this process's own flag.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
    }
    let spec = match read_spec() {
        Ok(spec) => spec,
        Err(e) => {
            eprintln!("run-job: bad job spec: {e}");
            return 2;
        }
    };
    if let Some(bytes) = spec.max_memory
        && let Err(e) = limit_memory(bytes)
    {
        eprintln!("run-job: cannot limit memory: {e}");
        return 2;
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("run-job: cannot start a runtime: {e}");
            return 2;
        }
    };
    let message = runtime.block_on(run(&spec));
    send(&message);
    0
}

async fn run(spec: &JobSpec) -> ChildMessage {
    let progress = ChildProgress { read_started: AtomicBool::new(false) };
    let b = &spec.ballista;
    let mut loader = BallistaLoader::new(&b.scheduler, &spec.work_dir);
    loader.partitions = b.partitions.max(1);
    loader.csv_range_bytes = b.csv_range_bytes.max(1);
    // A quarter of the data-segment cap at most: the graph spills before
    // the process would reach `max-job-memory` (public settings only).
    loader.graph_memory = spec.max_memory.map_or(b.graph_memory, |cap| b.graph_memory.min(cap / 4));
    loader.max_spill_bytes = spec.max_spill_bytes;
    loader.on_submitted =
        Some(OnSubmitted(Arc::new(|job| send(&ChildMessage::Submitted(job.clone())))));
    match b.tls.as_ref().map(dpincon_ballista::tls::ClusterTls::load).transpose() {
        Ok(tls) => loader.tls = tls,
        Err(e) => {
            let detail = format!("cluster TLS: {e}");
            return ChildMessage::Failed { reason: FailureReason::Internal, detail, stats: None };
        }
    }
    let prepaid = spec.prepaid.clone();
    let JobOutcome { report, stats } = match &spec.gate {
        Some(gate) => {
            run_prepaid_gated_night(&spec.config, gate, prepaid, &progress, &loader).await
        }
        None => run_prepaid_job(&spec.config, prepaid, &progress, &loader).await,
    };
    match report {
        Ok(report) => {
            let spent = spec.gate.as_ref().map(|_| report.budget.as_ref().map_or(0.0, |b| b.total));
            let report = Box::new(client_report(report, &spec.dataset, spec.fixed_time));
            ChildMessage::Succeeded { report, stats, spent }
        }
        Err(e) => {
            let reason = classify(&e, progress.read_started.load(Ordering::SeqCst));
            ChildMessage::Failed { reason, detail: e.to_string(), stats }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_option_errors_before_reading_are_shown_and_quotas_are_public() {
        let config = EngineError::Config("unknown strategy 'x'".into());
        assert_eq!(classify(&config, false), FailureReason::InvalidJob);
        assert_eq!(classify(&config, true), FailureReason::Internal);
        let quota = EngineError::OverQuota("more than 10 edges".into());
        assert_eq!(classify(&quota, true), FailureReason::OverQuota);
        let read = EngineError::Source(dpincon_source::SourceError::Schema("x".into()));
        assert_eq!(classify(&read, false), FailureReason::Internal);
    }

    #[test]
    fn messages_round_trip_as_one_json_line_each() {
        for m in [
            ChildMessage::Start(Phase::Read),
            ChildMessage::Submitted(BallistaJobId("aBc12".into())),
            ChildMessage::Finish(Phase::Detect, 1.5),
            ChildMessage::Succeeded {
                report: Box::new(report()),
                stats: Some(DetectStats::default()),
                spent: Some(0.5),
            },
            ChildMessage::Failed {
                reason: FailureReason::OverQuota,
                detail: "x\ny".into(),
                stats: None,
            },
        ] {
            let line = serde_json::to_string(&m).unwrap();
            assert!(!line.contains('\n'), "{line}");
            assert_eq!(serde_json::from_str::<ChildMessage>(&line).unwrap(), m);
        }
        let unknown = r#"{"failed":{"reason":"FAILURE_REASON_NEW","detail":"","stats":null}}"#;
        let refused = serde_json::from_str::<ChildMessage>(unknown).unwrap_err().to_string();
        assert!(refused.contains("unknown failure reason 'FAILURE_REASON_NEW'"), "{refused}");
    }

    /// A report with every part (the engine's seeded job on a tiny table).
    fn report() -> Report {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("t.csv");
        std::fs::write(&data, "A,B\n1,x\n1,y\n2,z\n").unwrap();
        let inline = dpincon_engine::Constraints::Inline { inline: "FD: A -> B".into() };
        let mut job = JobConfig::new(&data, inline);
        job.release.epsilon = Some(1.0);
        job.test.seed = Some(1);
        job.test.non_private = true;
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        runtime.block_on(dpincon_engine::run_job(&job, &dpincon_engine::NoProgress)).unwrap()
    }
}
