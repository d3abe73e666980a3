//! `dpincon-cli audit`: runs a suite and writes its reports
//! (`dpincon_audit::session`, the run the Python package's `Suite.run`
//! makes too; this file prints it); `audit history` prints each check's
//! trend. Exit codes as Soda's: 0 pass, 1 inconclusive or warn, 2 fail,
//! 3 error. With `--coordinator`, each dataset's job runs on a
//! coordinator, whose ledger governs (the gRPC client is the CLI's, not
//! the audit crate's); verdicts, history and reports are made here the
//! same way.
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

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use dpincon_audit::notify::NotifyError;
use dpincon_audit::report::text;
use dpincon_audit::suite::Dataset;
use dpincon_audit::{
    AuditOutcome, AuditRun, Detail, ExitStatus, Failure, Observer, Reason, RunContext, RunOptions,
    Session, Suite, run_suite_remote, session,
};
use dpincon_client::{ClientError, ClientJob, progress_line};
use dpincon_engine::{Progress, TestOptions};

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
    if let Some(AuditCommand::History) = args.command {
        print!("{}", text::trends(&session::trends(&suite)?, suite.zone()));
        return Ok(ExitStatus::Pass);
    }
    let options = RunOptions { out: args.out.clone(), seed: args.seed, as_of: args.as_of.clone() };
    let session = Session::open(&suite, &options)?;
    let finished = match &args.coordinator {
        Some(url) => {
            let charged = session.charged()?;
            let outcome = remote_run(&suite, url, &charged, session.context(), &args).await?;
            session.finish(outcome, &Console).await?
        }
        None => session.run_here(&path, &Console).await?,
    };
    Ok(finished.run.status)
}

/// The run on the console: progress and the operator's details on standard
/// error, the run's lines on standard output.
struct Console;

impl Observer for Console {
    fn progress(&self, dataset: &str) -> Box<dyn Progress> {
        Box::new(progress::Bar::for_dataset(dataset))
    }

    fn failures(&self, details: &[Detail]) {
        // The operator's eyes only: never in a report or the history.
        for d in details {
            eprintln!("dataset {}: {}: {}", d.dataset, d.reason, d.message);
        }
    }

    fn recorded(&self, suite: &Suite, run: &AuditRun) {
        print!("{}", text::summary(run, suite.zone()));
    }

    fn reports_written(&self, dir: &Path) {
        println!("reports written to {}", dir.display());
    }

    fn notified(&self, result: &Result<usize, NotifyError>) {
        // Best effort: a failure to send is one line on standard error.
        match result {
            Ok(0) => {}
            Ok(n) => println!("notify: {n} event(s) sent to the webhook"),
            Err(e) => eprintln!("notify: webhook not sent: {e}"),
        }
    }
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
