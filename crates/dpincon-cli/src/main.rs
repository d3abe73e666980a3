//! `dpincon-cli`: the command line of dpincon. Thin by design: it turns
//! flags into a [`JobConfig`], runs the engine and prints the report.

mod output;
mod progress;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use dpincon_engine::{JobConfig, run_job};

/// dpincon: how inconsistent is a private table, under differential privacy.
#[derive(Debug, Parser)]
#[command(name = "dpincon-cli", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a job in this process (no server needed).
    Run(RunArgs),
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    /// One JSON object.
    Json,
    /// Aligned text for people.
    Table,
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// The table: CSV with a header row, or Parquet.
    #[arg(long)]
    data: PathBuf,
    /// The constraint file (FD, NADEEF `not(...)` or HoloClean syntax).
    #[arg(long)]
    constraints: PathBuf,
    /// Force the data format instead of going by the extension.
    #[arg(long, value_parser = ["csv", "parquet"])]
    data_format: Option<String>,
    /// Column types to force, e.g. `Zip:string,Salary:int`.
    #[arg(long)]
    schema: Option<String>,
    /// Infer CSV column types from this many rows (default: all rows).
    #[arg(long)]
    infer_rows: Option<usize>,
    /// Detection threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Test every pair of rows instead of the planned detection (slow).
    #[arg(long)]
    brute_force: bool,
    /// Also print the exact values. NOT differentially private.
    #[arg(long)]
    non_private: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
    /// Write the report to this file (atomically) instead of standard output.
    #[arg(long)]
    output: Option<PathBuf>,
}

impl RunArgs {
    fn job(&self) -> JobConfig {
        JobConfig {
            format: self.data_format.clone(),
            schema: self.schema.clone(),
            infer_rows: self.infer_rows,
            threads: self.threads,
            brute_force: self.brute_force,
            non_private: self.non_private,
            ..JobConfig::new(&self.data, &self.constraints)
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return fail(&format!("cannot start the runtime: {e}")),
    };
    let result = match cli.command {
        Command::Run(args) => runtime.block_on(run(args)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => fail(&message),
    }
}

fn fail(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::FAILURE
}

async fn run(args: RunArgs) -> Result<(), String> {
    let progress = progress::Bar::new();
    let report = run_job(&args.job(), &progress).await.map_err(|e| e.to_string())?;
    let text = match args.format {
        Format::Json => output::json(&report)?,
        Format::Table => output::table(&report),
    };
    output::emit(&text, args.output.as_deref())
}
