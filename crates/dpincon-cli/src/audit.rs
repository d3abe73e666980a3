//! `dpincon-cli audit`: runs a suite (dpincon-audit) and writes its
//! reports; `audit history` prints each check's trend. Exit codes as
//! Soda's: 0 pass, 1 inconclusive or warn, 2 fail, 3 error. With
//! `--coordinator`, each dataset's job runs on a coordinator, whose ledger
//! governs; verdicts, history and reports are made here the same way.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use dpincon_audit::history::History;
use dpincon_audit::suite::Dataset;
use dpincon_audit::{
    AuditRun, ExitStatus, RemoteFailure, Suite, report, run_suite, run_suite_remote,
};
use dpincon_cluster::client::progress_line;
use dpincon_engine::run_job;
use serde_json::json;

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
    /// accepts it only with --allow-non-private).
    #[arg(long)]
    seed: Option<u64>,
    /// Run each dataset's job on this coordinator (e.g. http://coordinator:50050)
    /// instead of in this process; its registered dataset (`coordinator-dataset`,
    /// default the dataset's name) and ledger are used.
    #[arg(long)]
    coordinator: Option<String>,
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

async fn run(args: AuditArgs) -> Result<ExitStatus, String> {
    let path = args.suite.clone().ok_or("--suite FILE is required")?;
    let suite = Suite::load(&path).map_err(|e| e.to_string())?;
    let history_path = suite.history.clone().unwrap_or_default();
    if let Some(AuditCommand::History) = args.command {
        let history = History::open(&history_path).map_err(|e| e.to_string())?;
        print_history(&history.trends(&suite.name).map_err(|e| e.to_string())?);
        return Ok(ExitStatus::Pass);
    }
    // Open the store first: a broken history fails before any budget is spent.
    let mut history = History::open(&history_path).map_err(|e| e.to_string())?;
    let run = match &args.coordinator {
        Some(url) => remote_run(&suite, url, &args).await?,
        None => {
            suite.require_tables(&path).map_err(|e| e.to_string())?;
            run_suite(&suite, args.seed, async |config, name: &str| {
                let bar = progress::Bar::for_dataset(name);
                let report = run_job(&config, &bar).await.map_err(|e| e.to_string())?;
                serde_json::to_value(&report).map_err(|e| e.to_string())
            })
            .await
        }
    };
    history.append(&run).map_err(|e| e.to_string())?;
    for c in run.checks() {
        println!("{:<13} {:<28} {}", c.verdict.name().to_uppercase(), c.name, c.message);
    }
    for d in &run.datasets {
        let b = &d.budget;
        match &d.error {
            Some(e) => println!("dataset {}: {:?}: {e}", d.name, d.status),
            None => println!(
                "dataset {}: ε spent {:.3} of {:.3}, {:.3} left, {} nights left at this rate",
                d.name,
                b.spent + b.per_run,
                b.cap,
                b.remaining,
                b.nights_left
            ),
        }
    }
    if let Some(out) = &args.out {
        let trends = history.trends(&suite.name).map_err(|e| e.to_string())?;
        report::write_all(out, &run, &trends).map_err(|e| e.to_string())?;
        println!("reports written to {}", out.display());
    }
    Ok(run.status)
}

/// Submits each dataset's job to the coordinator and waits for its report.
/// The client job carries only what a client may set (dataset name, inline
/// constraints, ε, measures; a seed only when asked, which test clusters
/// alone accept): the coordinator's operator owns the table, ledger and cap.
async fn remote_run(suite: &Suite, url: &str, args: &AuditArgs) -> Result<AuditRun, String> {
    let client = args.connect.client(url)?;
    let seed = args.seed;
    Ok(run_suite_remote(suite, url, async |d: &Dataset| {
        let error = |message: String| RemoteFailure { refused: false, message };
        let constraints = std::fs::read_to_string(&d.constraints).map_err(|e| {
            error(format!("cannot read constraint file '{}': {e}", d.constraints.display()))
        })?;
        let mut job = json!({
            "dataset": d.remote_name(),
            "constraints": constraints,
            "epsilon": d.epsilon,
            "measures": d.measures,
        });
        if let Some(seed) = seed {
            job["seed"] = json!(seed);
        }
        let bar = progress::Bar::for_dataset(&d.name);
        let id = client.submit(&job).await.map_err(|e| RemoteFailure {
            refused: e.is_budget_refusal(),
            message: describe(url, e),
        })?;
        let report = client.wait(&id, |status| bar.status(&progress_line(status))).await;
        bar.done();
        let report = report.map_err(|e| error(describe(url, e)))?;
        serde_json::from_str(&report)
            .map_err(|e| error(format!("the coordinator sent a report that is not JSON: {e}")))
    })
    .await)
}

fn print_history(trends: &[dpincon_audit::history::Trend]) {
    for t in trends {
        println!("{} ({}, {}):", t.check, t.dataset, t.measure);
        for p in &t.points {
            println!(
                "  {}  {:>10}  [{}, {}]  {:<12}{}",
                p.started_unix,
                p.value,
                p.ci95[0],
                p.ci95[1],
                p.verdict,
                if p.changed { "  CHANGED beyond the noise" } else { "" }
            );
        }
    }
}
