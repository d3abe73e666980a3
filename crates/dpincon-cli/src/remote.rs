//! Jobs on a coordinator: `submit`, `status`, `result`, `cancel`.
//!
//! A coordinator runs jobs on datasets its operator registered: a client
//! job names one (`--dataset`) and sends its constraints inline (the
//! `--constraints` file is read HERE). Ledgers, caps, seeds and paths are
//! the operator's; the coordinator refuses them. A client token comes from
//! `--token-file` or `DPINCON_TOKEN`, never from an argument (arguments
//! show in `ps` and shell history).

use std::path::PathBuf;

use dpincon_api::{ReleaseOptions, TestOptions};
use dpincon_client::{Client, ClientError, ClientJob, ClientTls, StatusView, Token, progress_line};
use dpincon_engine::Report;

use crate::{Format, output};

/// How to reach a coordinator (besides its URL).
#[derive(Debug, clap::Args)]
pub struct ConnectArgs {
    /// File holding this client's bearer token (else $DPINCON_TOKEN).
    #[arg(long)]
    token_file: Option<PathBuf>,
    /// CA certificate (PEM) to check the coordinator's TLS certificate
    /// against; the URL must then be https://.
    #[arg(long)]
    tls_ca: Option<PathBuf>,
    /// Name the coordinator's certificate must carry (default: the URL's host).
    #[arg(long)]
    tls_domain: Option<String>,
}

impl ConnectArgs {
    pub(crate) fn client(&self, url: &str) -> anyhow::Result<Client> {
        let token = Token::load(self.token_file.as_deref())?;
        let tls = ClientTls::load(self.tls_ca.as_deref(), self.tls_domain.clone())?;
        Ok(Client::new(url, &token, tls.as_ref())?)
    }
}

/// An error for people: which coordinator could not be reached.
pub(crate) fn describe(url: &str, e: ClientError) -> String {
    if e.is_unreachable() { format!("coordinator {url}: {e}") } else { e.to_string() }
}

/// How to print a report or status, as `run` does.
#[derive(Debug, clap::Args)]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
    /// Write to this file (atomically) instead of standard output.
    #[arg(long)]
    output: Option<PathBuf>,
}

impl OutputArgs {
    fn report(&self, json: &str) -> anyhow::Result<()> {
        let text = match self.format {
            Format::Json => json.to_string(),
            Format::Table => {
                let report: Report = serde_json::from_str(json).map_err(|e| {
                    anyhow::anyhow!("the coordinator sent a report that is not one: {e}")
                })?;
                output::table(&report)?
            }
        };
        output::emit(&text, self.output.as_deref())
    }
}

/// The client job's options.
#[derive(Debug, clap::Args)]
pub struct ClientJobArgs {
    /// A TOML client job file (`dataset`, inline `constraints`, `epsilon`,
    /// ...); the flags below override it.
    #[arg(long)]
    job: Option<PathBuf>,
    /// The dataset, as registered on the coordinator.
    #[arg(long)]
    dataset: Option<String>,
    /// Constraint file, read on THIS machine and sent inline.
    #[arg(long)]
    constraints: Option<PathBuf>,
    #[command(flatten)]
    release: ReleaseOptions,
    /// TEST DATASETS ONLY (allow-non-private in the coordinator's dataset).
    #[command(flatten)]
    test: TestOptions,
}

impl ClientJobArgs {
    /// The job: the file's keys, then the flags.
    fn job(&self) -> anyhow::Result<ClientJob> {
        let mut table = match &self.job {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| {
                    anyhow::anyhow!("cannot read job file '{}': {e}", path.display())
                })?;
                toml::from_str(&text)
                    .map_err(|e| anyhow::anyhow!("job file '{}': {e}", path.display()))?
            }
            None => toml::Table::new(),
        };
        if let Some(dataset) = &self.dataset {
            table.insert("dataset".into(), dataset.clone().into());
        }
        if let Some(path) = &self.constraints {
            let text = std::fs::read_to_string(path).map_err(|e| {
                anyhow::anyhow!("cannot read constraint file '{}': {e}", path.display())
            })?;
            table.insert("constraints".into(), text.into());
        }
        for key in ["dataset", "constraints"] {
            if !table.contains_key(key) {
                return Err(anyhow::anyhow!("give --{key} (or `{key}` in a --job file)"));
            }
        }
        let job: ClientJob = table.try_into().map_err(|e| anyhow::anyhow!("client job: {e}"))?;
        Ok(ClientJob {
            release: job.release.overridden_by(self.release.clone()),
            test: job.test.overridden_by(self.test),
            ..job
        })
    }
}

/// `submit`: queue a job on a coordinator.
#[derive(Debug, clap::Args)]
pub struct SubmitArgs {
    /// The coordinator, e.g. https://coordinator:50050.
    #[arg(long)]
    coordinator: String,
    #[command(flatten)]
    job: ClientJobArgs,
    /// Wait for the job: its state changes on standard error, then the
    /// report as `run` prints it; exit status 1 if the job fails. Without
    /// it, prints the job's id.
    #[arg(long)]
    wait: bool,
    #[command(flatten)]
    out: OutputArgs,
    #[command(flatten)]
    connect: ConnectArgs,
}

/// `status`, `result`, `cancel`: one job of a coordinator.
#[derive(Debug, clap::Args)]
pub struct JobRefArgs {
    /// The coordinator, e.g. https://coordinator:50050.
    coordinator: String,
    /// The job id `submit` printed.
    job: String,
    #[command(flatten)]
    out: OutputArgs,
    #[command(flatten)]
    connect: ConnectArgs,
}

/// Queues the job; prints its id, or with `--wait` its report.
pub async fn submit(args: SubmitArgs) -> anyhow::Result<()> {
    let job = args.job.job()?;
    let client = args.connect.client(&args.coordinator)?;
    let id = client
        .submit(&job)
        .await
        .map_err(|e| anyhow::Error::msg(describe(&args.coordinator, e)))?;
    if !args.wait {
        return output::emit(&format!("{id}\n"), args.out.output.as_deref());
    }
    eprintln!("job {id} submitted");
    let mut last_line = String::new();
    let report = client
        .wait(&id, |status| {
            let line = progress_line(status);
            if line != last_line {
                eprintln!("job {id}: {line}");
                last_line = line;
            }
        })
        .await
        .map_err(|e| anyhow::Error::msg(describe(&args.coordinator, e)))?;
    args.out.report(&report)
}

/// Prints the job's status (JSON, or one line with `--format table`).
pub async fn status(args: JobRefArgs) -> anyhow::Result<()> {
    let client = args.connect.client(&args.coordinator)?;
    let status = client
        .status(&args.job)
        .await
        .map_err(|e| anyhow::Error::msg(describe(&args.coordinator, e)))?;
    let text = match args.out.format {
        Format::Json => serde_json::to_string_pretty(&StatusView::from(&status))? + "\n",
        Format::Table => format!("{}: {}\n", status.job_id, progress_line(&status)),
    };
    output::emit(&text, args.out.output.as_deref())
}

/// Prints the report of a succeeded job; fails with the reason otherwise.
pub async fn result(args: JobRefArgs) -> anyhow::Result<()> {
    let client = args.connect.client(&args.coordinator)?;
    let report = client
        .result(&args.job)
        .await
        .map_err(|e| anyhow::Error::msg(describe(&args.coordinator, e)))?;
    args.out.report(&report)
}

/// Cancels the job; prints its state after.
pub async fn cancel(args: JobRefArgs) -> anyhow::Result<()> {
    let client = args.connect.client(&args.coordinator)?;
    let status = client
        .cancel(&args.job)
        .await
        .map_err(|e| anyhow::Error::msg(describe(&args.coordinator, e)))?;
    output::emit(&format!("{}\n", progress_line(&status)), args.out.output.as_deref())
}
