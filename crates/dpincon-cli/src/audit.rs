//! `dpincon-cli audit`: runs a suite (dpincon-audit) and writes its
//! reports; `audit history` prints each check's trend. Exit codes as
//! Soda's: 0 pass, 1 inconclusive or warn, 2 fail, 3 error.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use dpincon_audit::history::History;
use dpincon_audit::{ExitStatus, Suite, report, run_suite};
use dpincon_engine::run_job;

use crate::progress;

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
    /// Seed the noise: test mode only; every report says so.
    #[arg(long)]
    seed: Option<u64>,
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
    let path = args.suite.ok_or("--suite FILE is required")?;
    let suite = Suite::load(&path).map_err(|e| e.to_string())?;
    let history_path = suite.history.clone().unwrap_or_default();
    if let Some(AuditCommand::History) = args.command {
        let history = History::open(&history_path).map_err(|e| e.to_string())?;
        print_history(&history.trends(&suite.name).map_err(|e| e.to_string())?);
        return Ok(ExitStatus::Pass);
    }
    // Open the store first: a broken history fails before any budget is spent.
    let mut history = History::open(&history_path).map_err(|e| e.to_string())?;
    let run = run_suite(&suite, args.seed, async |config, name: &str| {
        let bar = progress::Bar::for_dataset(name);
        let report = run_job(&config, &bar).await.map_err(|e| e.to_string())?;
        serde_json::to_value(&report).map_err(|e| e.to_string())
    })
    .await;
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
