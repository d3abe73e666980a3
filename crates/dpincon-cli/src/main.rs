//! `dpincon-cli`: the command line of dpincon. Thin by design: it turns
//! flags into a [`JobConfig`], runs the engine and prints the report.

mod audit;
mod bench;
mod coverage;
mod experiment_io;
mod generate;
mod output;
mod progress;
mod remote;
mod suite;
mod sweep;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use dpincon_api::Strategy;
use dpincon_engine::{
    DataPolicy, JobConfig, NON_PRIVATE_LABEL, PostgresSource, ReleaseOptions, TableSpec,
    TestOptions, run_job,
};

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
    /// Run an audit suite: checks with noise-aware verdicts, history, reports
    /// (exit 0 pass, 1 inconclusive/warn, 2 fail, 3 error).
    Audit(audit::AuditArgs),
    /// Queue a job on a coordinator; prints its id (with --wait: progress, then the report).
    Submit(remote::SubmitArgs),
    /// A coordinator job's state, phase and progress (JSON).
    Status(remote::JobRefArgs),
    /// The report of a coordinator job that succeeded (JSON).
    Result(remote::JobRefArgs),
    /// Cancel a queued or running coordinator job.
    Cancel(remote::JobRefArgs),
    /// Generate synthetic tables (a Tax-like table of any size, hard
    /// conflict-graph shapes, a year of nightly versions of a table).
    Generate(generate::GenerateArgs),
    /// Inject violations into a table (RNoise, CONoise; SPEC §9).
    Noise(generate::NoiseArgs),
    /// Benchmarks (NON-PRIVATE: they report exact values of generated data).
    Bench(bench::BenchArgs),
    /// Experiments on the DP releases (NON-PRIVATE: they read exact values).
    #[command(subcommand)]
    Experiment(ExperimentCommand),
}

#[derive(Debug, Subcommand)]
enum ExperimentCommand {
    /// Mean relative error of each measure and strategy over seeded runs.
    Utility(UtilityArgs),
    /// The exact projection curve f(G_θ) of I_MI and I_P for every θ, as CSV.
    Curve(CurveArgs),
    /// Mean relative error against ε for every strategy and the oracle:
    /// CSV, JSON and an SVG chart per measure.
    Sweep(sweep::SweepArgs),
    /// How often each interval holds the measure, and how often audit
    /// verdicts from it are wrong, over seeded runs (NON-PRIVATE).
    Coverage(coverage::CoverageArgs),
    /// The θ-selection suite (issue 49): every strategy and the oracle on
    /// every table of a `generate suite` manifest; per-family worst ratio
    /// to the oracle, coverage, the pass criteria, and with --lofo the
    /// leave-one-family-out choice (NON-PRIVATE).
    Suite(suite::SuiteArgs),
}

#[derive(Debug, clap::Args)]
struct CurveArgs {
    #[command(flatten)]
    job: JobArgs,
    /// Every θ up to this one; a 5% geometric grid above it.
    #[arg(long, default_value_t = 2000)]
    dense_limit: u32,
    /// Write the CSV here instead of standard output.
    #[arg(long)]
    out: Option<std::path::PathBuf>,
}

#[derive(Debug, clap::Args)]
struct UtilityArgs {
    #[command(flatten)]
    job: JobArgs,
    /// Seeded runs per strategy.
    #[arg(long, default_value_t = 20)]
    runs: usize,
    /// Strategies to compare (default: all five).
    #[arg(long, value_delimiter = ',')]
    strategies: Option<Vec<String>>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    /// One JSON object.
    Json,
    /// Aligned text for people.
    Table,
}

/// Job options, shared by every command that runs a job. A TOML job file
/// (`--job`) gives defaults; flags override it. The flags are the job
/// file's keys (`TableSpec`, `DataPolicy`, `ReleaseOptions`, `TestOptions`),
/// declared once.
#[derive(Debug, clap::Args)]
struct JobArgs {
    /// A TOML job file with any of the options below (kebab-case keys).
    #[arg(long)]
    job: Option<PathBuf>,
    /// The constraint file (FD, NADEEF `not(...)` or HoloClean syntax).
    #[arg(long)]
    constraints: Option<PathBuf>,
    #[command(flatten)]
    table: TableSpec,
    #[command(flatten)]
    postgres: PostgresFlags,
    #[command(flatten)]
    data: DataPolicy,
    #[command(flatten)]
    test: TestOptions,
    #[command(flatten)]
    release: ReleaseOptions,
}

/// A PostgreSQL source on the command line: `--data postgres://...` with
/// one of these (a job file says `postgres = { url, table, ... }`).
#[derive(Debug, clap::Args)]
struct PostgresFlags {
    /// With a postgres:// --data: the table to read.
    #[arg(long, conflicts_with = "query")]
    table: Option<String>,
    /// With a postgres:// --data: the query to read (rows ordered by every
    /// column unless --order-by).
    #[arg(long)]
    query: Option<String>,
    /// With a postgres:// --data: the ORDER BY that fixes tuple ids
    /// (default: the table's primary key, else every column).
    #[arg(long)]
    order_by: Option<String>,
}

impl JobArgs {
    fn job(&self) -> anyhow::Result<JobConfig> {
        let mut job = match &self.job {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| {
                    anyhow::anyhow!("cannot read job file '{}': {e}", path.display())
                })?;
                dpincon_api::toml_file::from_str::<JobConfig>(&text)
                    .map_err(|e| anyhow::anyhow!("job file '{}': {e}", path.display()))?
            }
            None => {
                let (Some(data), Some(constraints)) = (&self.table.data, &self.constraints) else {
                    return Err(anyhow::anyhow!("give --data and --constraints (or a --job file)"));
                };
                JobConfig::new(data, constraints)
            }
        };
        if let Some(c) = &self.constraints {
            job.constraints = c.clone().into();
        }
        let mut flags = self.table.clone();
        let url = flags.data.as_deref().and_then(|d| d.to_str());
        if let Some(url) = url.filter(|d| PostgresSource::is_url(d)).map(String::from) {
            let PostgresFlags { table, query, order_by } = &self.postgres;
            let source = PostgresSource {
                url,
                table: table.clone(),
                query: query.clone(),
                order_by: order_by.clone(),
                password_env: None,
            };
            source.validate()?;
            flags.data = None;
            flags.postgres = Some(source);
        } else if self.postgres.table.is_some() || self.postgres.query.is_some() {
            anyhow::bail!("--table and --query read from PostgreSQL: give --data postgres://...");
        }
        job.table = job.table.overridden_by(flags);
        job.data = job.data.overridden_by(self.data.clone());
        job.release = job.release.overridden_by(self.release.clone());
        job.test = job.test.overridden_by(self.test);
        Ok(job)
    }
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    #[command(flatten)]
    job: JobArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
    /// Write the report to this file (atomically) instead of standard output.
    #[arg(long)]
    output: Option<PathBuf>,
}

// mimalloc, tuned (the crate's notes say why).
#[global_allocator]
static ALLOCATOR: dpincon_alloc::Allocator = dpincon_alloc::Allocator;

fn main() -> ExitCode {
    dpincon_alloc::disable_transparent_huge_pages();
    dpincon_alloc::return_freed_memory_sooner();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(refused) => return usage_error(&refused),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return fail(&format!("cannot start the runtime: {e}")),
    };
    let result = match cli.command {
        Command::Audit(args) => return runtime.block_on(audit::audit(args)),
        Command::Run(args) => runtime.block_on(run(args)),
        Command::Bench(args) => runtime.block_on(bench::run_bench(args)),
        Command::Submit(args) => runtime.block_on(remote::submit(args)),
        Command::Status(args) => runtime.block_on(remote::status(args)),
        Command::Result(args) => runtime.block_on(remote::result(args)),
        Command::Cancel(args) => runtime.block_on(remote::cancel(args)),
        Command::Generate(args) => generate::run_generate(args),
        Command::Noise(args) => generate::run_noise(args),
        Command::Experiment(ExperimentCommand::Utility(args)) => runtime.block_on(utility(args)),
        Command::Experiment(ExperimentCommand::Curve(args)) => runtime.block_on(curve(args)),
        Command::Experiment(ExperimentCommand::Coverage(args)) => {
            runtime.block_on(coverage::run_coverage(args))
        }
        Command::Experiment(ExperimentCommand::Sweep(args)) => {
            runtime.block_on(sweep::run_sweep(args))
        }
        Command::Experiment(ExperimentCommand::Suite(args)) => {
            runtime.block_on(suite::run_suite(args))
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The outermost message only, as before: each error's own words,
        // its sources kept in the value, not printed twice.
        Err(error) => fail(&error.to_string()),
    }
}

/// clap's refusal of the command line (or its `--help`/`--version`),
/// printed as clap prints it, with clap's exit code (2 for a usage error,
/// 0 for help) except that a usage error of `audit` (an unknown flag, a bad
/// value) exits 3: the audit's codes say 2 for a failing check, and a
/// pipeline must not read a typo as a data failure.
fn usage_error(refused: &clap::Error) -> ExitCode {
    // Printing can fail only on a closed stream; the exit code still says
    // what happened.
    let _ = refused.print();
    // The subcommand is the first argument: `Cli` has no flag of its own
    // but --help and --version, and no subcommand alias or inference.
    let audit = std::env::args_os().nth(1).is_some_and(|a| a == "audit");
    if audit && refused.use_stderr() {
        return ExitCode::from(dpincon_audit::ExitStatus::Error.code());
    }
    ExitCode::from(u8::try_from(refused.exit_code()).unwrap_or(2))
}

fn fail(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::FAILURE
}

async fn run(args: RunArgs) -> anyhow::Result<()> {
    let progress = progress::Bar::new();
    let job = args.job.job()?;
    let report = run_job(&job, &progress).await?;
    let text = match args.format {
        Format::Json => output::json(&report)?,
        Format::Table => output::table(&report)?,
    };
    output::emit(&text, args.output.as_deref())
}

/// The strategies named on the command line, or all of them.
fn parse_strategies(names: Option<&[String]>) -> anyhow::Result<Vec<Strategy>> {
    match names {
        Some(names) => names
            .iter()
            .map(|n| n.parse())
            .collect::<Result<_, dpincon_api::ParseError>>()
            .map_err(anyhow::Error::from),
        None => Ok(Strategy::ALL.to_vec()),
    }
}

async fn curve(args: CurveArgs) -> anyhow::Result<()> {
    let job = args.job.job()?;
    if !job.test.non_private {
        anyhow::bail!(
            "the projection curve is made of exact counts: it is NON-PRIVATE and needs \
             --non-private"
        );
    }
    let loaded = dpincon_engine::load(&job, &progress::Bar::new()).await?;
    let curve = dpincon_engine::experiment::projection_curve(&loaded, args.dense_limit);
    let mut text = format!("# {NON_PRIVATE_LABEL}\ntheta,mi,p\n");
    for (i, theta) in curve.thetas.iter().enumerate() {
        text += &format!("{theta},{},{}\n", curve.edges[i], curve.problematic[i]);
    }
    output::emit(&text, args.out.as_deref())
}

async fn utility(args: UtilityArgs) -> anyhow::Result<()> {
    let mut job = args.job.job()?;
    if !job.test.non_private {
        anyhow::bail!(
            "experiments read the exact values to score the releases: they are NON-PRIVATE \
             and need --non-private"
        );
    }
    if job.release.epsilon.is_none() {
        return Err(anyhow::anyhow!("give --epsilon (per measure) for the releases to score"));
    }
    let strategies = parse_strategies(args.strategies.as_deref())?;
    job.test.seed = Some(job.test.seed.unwrap_or(1));
    let loaded = dpincon_engine::load(&job, &progress::Bar::new()).await?;
    let report = dpincon_engine::experiment::utility(
        &job,
        &loaded,
        &strategies,
        args.runs,
        job.test.seed.unwrap_or(1),
    )?;
    let text = match args.format {
        Format::Json => serde_json::to_string_pretty(&report)? + "\n",
        Format::Table => output::utility_table(&report),
    };
    output::emit(&text, None)
}
