//! `dpincon-cli audit`: runs a suite (dpincon-audit) and writes its
//! reports; `audit history` prints each check's trend. Exit codes as
//! Soda's: 0 pass, 1 inconclusive or warn, 2 fail, 3 error. With
//! `--coordinator`, each dataset's job runs on a coordinator, whose ledger
//! governs; verdicts, history and reports are made here the same way.
//!
//! A dataset without a release shows a fixed public reason in the reports,
//! the history and on standard output; the full message (the engine's or
//! the coordinator's, which may quote the data) goes to standard error
//! only, after the dataset's name.
//!
//! A suite's `[notify]` webhook is told of failed checks and low budgets
//! after the run is recorded (local and `--coordinator` runs alike).
//!
//! `--as-of DATE` dates a run by a test clock (replays of a year of nights
//! in minutes); every report, the history and `audit history` mark it as
//! test mode. A dataset whose declared version is unchanged re-serves its
//! last release at no ε, here and with `--coordinator` alike.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use dpincon_api::Figure;
use dpincon_audit::history::History;
use dpincon_audit::suite::Dataset;
use dpincon_audit::{
    AuditOutcome, ExitStatus, Failure, Job, Reason, RunContext, Suite, notify, report, reserve,
    run_suite, run_suite_remote,
};
use dpincon_client::{ClientError, ClientJob, progress_line};
use dpincon_engine::gate::run_gated_night;
use dpincon_engine::{TestOptions, run_job};

use crate::progress;
use crate::remote::{ConnectArgs, describe};

/// Arguments of `audit`.
#[derive(Debug, Args)]
pub struct AuditArgs {
    #[command(subcommand)]
    command: Option<AuditCommand>,
    /// The suite file (TOML; see examples/audit/nightly.toml).
    #[arg(long, global = true)]
    suite: Option<PathBuf>,
    /// Write report.json, junit.xml and report.html here.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Seed the noise: test mode only; every report says so (a coordinator
    /// accepts it only on datasets marked allow-non-private).
    #[arg(long)]
    seed: Option<u64>,
    /// Run each dataset's job on this coordinator (e.g. http://coordinator:50050)
    /// instead of in this process; its registered dataset (`coordinator-dataset`,
    /// default the dataset's name) and ledger are used.
    #[arg(long)]
    coordinator: Option<String>,
    /// TEST MODE: date the run DATE (YYYY-MM-DD, 00:00 in the suite's
    /// time-zone; or an RFC 3339 instant) instead of now, to replay nights;
    /// every report and the history say so. Not with --coordinator.
    #[arg(long, value_name = "DATE")]
    as_of: Option<String>,
    #[command(flatten)]
    connect: ConnectArgs,
}

#[derive(Debug, Subcommand)]
enum AuditCommand {
    /// Each check's trend from the history store; changes beyond the
    /// combined noise of two nights are flagged.
    History,
}

/// Runs `audit`; returns the process exit code.
pub async fn audit(args: AuditArgs) -> ExitCode {
    match run(args).await {
        Ok(status) => ExitCode::from(status.code()),
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(ExitStatus::Error.code())
        }
    }
}

async fn run(args: AuditArgs) -> anyhow::Result<ExitStatus> {
    if args.as_of.is_some() && args.coordinator.is_some() {
        // Before anything is read or sent: nothing may be charged.
        anyhow::bail!(
            "--as-of is a test clock and cannot date a run on a coordinator, whose clock and \
             ledger are the operator's; run the suite locally to replay nights"
        );
    }
    let path = args.suite.clone().context("--suite FILE is required")?;
    let suite = Suite::load(&path)?;
    let history_path = suite.history.clone().unwrap_or_default();
    if let Some(AuditCommand::History) = args.command {
        let history = History::open(&history_path)?;
        print_history(&history.trends(&suite.name)?, suite.zone());
        return Ok(ExitStatus::Pass);
    }
    // Open the store first: a broken history fails before any budget is spent.
    let mut history = History::open(&history_path)?;
    let ctx = RunContext::load(&suite, &history, args.as_of.as_deref(), args.seed)?;
    let AuditOutcome { run, details } = match &args.coordinator {
        Some(url) => {
            let charged = history.charged(&suite.name)?;
            remote_run(&suite, url, &charged, &ctx, &args).await?
        }
        None => {
            suite.require_tables(&path)?;
            run_suite(&suite, &ctx, async |job, name: &str| {
                let bar = progress::Bar::for_dataset(name);
                match job {
                    Job::Release(config) => run_job(&config, &bar).await,
                    Job::Gated(config, gate) => run_gated_night(&config, &gate, &bar).await,
                }
                .map_err(Failure::from)
            })
            .await
        }
    };
    // The operator's eyes only: never in a report or the history.
    for d in &details {
        eprintln!("dataset {}: {}: {}", d.dataset, d.reason, d.message);
    }
    history.append(&run)?;
    for c in run.checks() {
        println!("{:<13} {:<28} {}", c.verdict.name().to_uppercase(), c.name, c.message);
    }
    if let Some(as_of) = &run.test_clock {
        println!("TEST CLOCK: this run is dated {as_of} (--as-of), not by when it ran");
    }
    for d in &run.datasets {
        let b = &d.budget;
        match (&d.error, &d.reserved_from, &d.version) {
            (Some(e), _, _) => println!("dataset {}: {:?}: {e}", d.name, d.status),
            (None, Some(from), Some(version)) => println!(
                "dataset {}: {} (job {}): nothing charged, ε spent {} of {}, {} nights \
                 left at this rate",
                d.name,
                reserve::note(version, from.started_unix, suite.zone()),
                from.job_id,
                Figure(b.spent),
                Figure(b.cap),
                b.nights_left
            ),
            (None, _, _) if b.plan.is_some() => {
                let p = b.plan.as_ref().expect("matched");
                println!(
                    "dataset {}: gated, ε {} charged tonight; lifetime ε spent {} of {} \
                     ({} planned over {} nights), {} fresh releases left of {} planned",
                    d.name,
                    Figure(b.per_run),
                    Figure(p.spent),
                    Figure(b.cap),
                    Figure(p.planned),
                    p.horizon_nights,
                    p.refreshes_left,
                    p.refreshes_planned
                )
            }
            _ => println!(
                "dataset {}: ε spent {} of {}, {} left, {} nights left at this rate",
                d.name,
                Figure(b.spent + b.per_run),
                Figure(b.cap),
                Figure(b.remaining),
                b.nights_left
            ),
        }
    }
    let written = match &args.out {
        Some(out) => history
            .trends(&suite.name)
            .and_then(|trends| report::write_all(out, &run, &trends))
            .map(|()| println!("reports written to {}", out.display())),
        None => Ok(()),
    };
    // Last, once the run is in the history and the reports are written:
    // an alert is best effort, so it can neither lose a result nor change
    // the exit code (a failure to send is one line on standard error).
    if let Some(settings) = &suite.notify {
        match notify::notify(&run, settings).await {
            Ok(0) => {}
            Ok(n) => println!("notify: {n} event(s) sent to the webhook"),
            Err(e) => eprintln!("notify: webhook not sent: {e}"),
        }
    }
    written?;
    Ok(run.status)
}

/// Submits each dataset's job to the coordinator and waits for its report.
/// The client job carries only what a client may set (dataset name, inline
/// constraints, ε, measures; a seed only when asked, which test clusters
/// alone accept): the coordinator's operator owns the table, ledger and cap.
async fn remote_run(
    suite: &Suite,
    url: &str,
    charged: &std::collections::BTreeMap<String, f64>,
    ctx: &RunContext,
    args: &AuditArgs,
) -> anyhow::Result<AuditOutcome> {
    let client = args.connect.client(url)?;
    let seed = ctx.seed;
    Ok(run_suite_remote(suite, url, charged, ctx, async |d: &Dataset| {
        let test = TestOptions { seed, ..TestOptions::default() };
        // A gated dataset asks for a night of the operator's registered
        // audit: the coordinator owns its epochs, constraints and ε.
        let job = match &d.gate {
            Some(_) => ClientJob { test, ..ClientJob::gated(d.remote_name()) },
            None => {
                let constraints = std::fs::read_to_string(&d.constraints).map_err(|e| {
                    let path = d.constraints.display();
                    Failure::new(
                        Reason::BadConstraint,
                        format!("cannot read constraint file '{path}': {e}"),
                    )
                })?;
                ClientJob {
                    release: d.release(),
                    test,
                    ..ClientJob::new(d.remote_name(), constraints)
                }
            }
        };
        let bar = progress::Bar::for_dataset(&d.name);
        let id = client.submit(&job).await.map_err(|e| remote_failure(url, e, true))?;
        let report = client.wait(&id, |status| bar.status(&progress_line(status))).await;
        bar.done();
        let report = report.map_err(|e| remote_failure(url, e, false))?;
        serde_json::from_str(&report).map_err(|e| {
            Failure::new(
                Reason::Internal,
                format!("the coordinator sent a report that is not one: {e}"),
            )
        })
    })
    .await)
}

/// gRPC's NOT_FOUND (a stable wire code): the coordinator's answer to a job
/// naming a dataset it does not have.
const GRPC_NOT_FOUND: i32 = 5;

/// The public reason of a coordinator's error, from its kind and status
/// code; its words are the detail. `at_submission`: the job was not
/// accepted (else it was, and then failed or could not be followed).
fn remote_failure(url: &str, e: ClientError, at_submission: bool) -> Failure {
    let reason = if e.is_budget_refusal() {
        Reason::BudgetExhausted
    } else if e.is_unreachable() {
        Reason::CoordinatorUnreachable
    } else if matches!(&e, ClientError::Rpc(s) if s.code() as i32 == GRPC_NOT_FOUND)
        && at_submission
    {
        Reason::UnknownDataset
    } else if at_submission {
        Reason::RefusedByCoordinator
    } else {
        Reason::FailedOnCoordinator
    };
    Failure::new(reason, describe(url, e))
}

/// Each check's nights, dated in ISO 8601 (the suite's `time-zone`, else
/// UTC); a night dated by a test clock or re-served says so.
fn print_history(trends: &[dpincon_audit::history::Trend], zone: Option<dpincon_audit::time::Tz>) {
    for t in trends {
        println!("{} ({}, {}):", t.check, t.dataset, t.measure);
        for p in &t.points {
            println!(
                "  {}  {:>10}  [{}, {}]  {:<12}{}{}{}",
                dpincon_audit::time::iso8601(p.started_unix, zone),
                p.value,
                p.ci95[0],
                p.ci95[1],
                p.verdict,
                if p.changed { "  CHANGED beyond the noise" } else { "" },
                if p.reserved { "  re-served" } else { "" },
                if p.test_clock { "  (test clock)" } else { "" }
            );
        }
    }
}
