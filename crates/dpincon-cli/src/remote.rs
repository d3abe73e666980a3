//! Jobs on a coordinator: `submit`, `status`, `result`, `cancel`.
//!
//! A coordinator runs jobs on datasets its operator registered: a client
//! job names one (`--dataset`) and sends its constraints inline (the
//! `--constraints` file is read HERE). Ledgers, caps, seeds and paths are
//! the operator's; the coordinator refuses them. A client token comes from
//! `--token-file` or `DPINCON_TOKEN`, never from an argument (arguments
//! show in `ps` and shell history).

use std::path::PathBuf;

use dpincon_client::ClientError;
use dpincon_client::ClientTls;
use dpincon_client::Token;
use dpincon_client::{Client, StatusView, progress_line};
use serde_json::{Value, json};

use crate::release_args::ReleaseArgs;
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
    pub(crate) fn client(&self, url: &str) -> Result<Client, String> {
        let token = Token::load(self.token_file.as_deref()).map_err(|e| e.to_string())?;
        let tls = ClientTls::load(self.tls_ca.as_deref(), self.tls_domain.clone())
            .map_err(|e| e.to_string())?;
        Client::new(url, &token, tls.as_ref()).map_err(|e| e.to_string())
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
    fn report(&self, json: &str) -> Result<(), String> {
        let text = match self.format {
            Format::Json => json.to_string(),
            Format::Table => {
                let value: Value = serde_json::from_str(json)
                    .map_err(|e| format!("the coordinator sent a report that is not JSON: {e}"))?;
                output::table_of(&value)
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
    release: ReleaseArgs,
    /// TEST DATASETS ONLY (allow-non-private in the coordinator's dataset): seed the noise.
    #[arg(long)]
    seed: Option<u64>,
    /// TEST DATASETS ONLY (allow-non-private): exact, NON-PRIVATE values.
    #[arg(long)]
    non_private: bool,
}

impl ClientJobArgs {
    /// The job as the coordinator reads it (JSON, kebab-case keys).
    fn job(&self) -> Result<Value, String> {
        let mut job = match &self.job {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| format!("cannot read job file '{}': {e}", path.display()))?;
                let table: toml::Table = toml::from_str(&text)
                    .map_err(|e| format!("job file '{}': {e}", path.display()))?;
                serde_json::to_value(table).map_err(|e| e.to_string())?
            }
            None => json!({}),
        };
        if let Some(path) = &self.constraints {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read constraint file '{}': {e}", path.display()))?;
            job["constraints"] = json!(text);
        }
        let mut set = |key: &str, value: Option<Value>| {
            if let Some(v) = value {
                job[key] = v;
            }
        };
        let r = &self.release;
        set("dataset", self.dataset.as_ref().map(|d| json!(d)));
        set("epsilon", r.epsilon.map(|e| json!(e)));
        set("measures", r.measures.as_ref().map(|m| json!(m)));
        set("strategy", r.strategy.as_ref().map(|s| json!(s)));
        set("selector", r.selector.as_ref().map(|s| json!(s)));
        set("candidates", r.candidates.as_ref().map(|c| json!(c)));
        set("ir-method", r.ir_method.as_ref().map(|m| json!(m)));
        set("epsilon-split", r.epsilon_split()?.map(|s| json!(s)));
        set("seed", self.seed.map(|s| json!(s)));
        set("non-private", self.non_private.then_some(json!(true)));
        for key in ["dataset", "constraints"] {
            if job.get(key).is_none() {
                return Err(format!("give --{key} (or `{key}` in a --job file)"));
            }
        }
        Ok(job)
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
pub async fn submit(args: SubmitArgs) -> Result<(), String> {
    let job = args.job.job()?;
    let client = args.connect.client(&args.coordinator)?;
    let id = client.submit(&job).await.map_err(|e| describe(&args.coordinator, e))?;
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
        .map_err(|e| describe(&args.coordinator, e))?;
    args.out.report(&report)
}

/// Prints the job's status (JSON, or one line with `--format table`).
pub async fn status(args: JobRefArgs) -> Result<(), String> {
    let client = args.connect.client(&args.coordinator)?;
    let status = client.status(&args.job).await.map_err(|e| describe(&args.coordinator, e))?;
    let text = match args.out.format {
        Format::Json => {
            serde_json::to_string_pretty(&StatusView::from(&status)).map_err(|e| e.to_string())?
                + "\n"
        }
        Format::Table => format!("{}: {}\n", status.job_id, progress_line(&status)),
    };
    output::emit(&text, args.out.output.as_deref())
}

/// Prints the report of a succeeded job; fails with the reason otherwise.
pub async fn result(args: JobRefArgs) -> Result<(), String> {
    let client = args.connect.client(&args.coordinator)?;
    let report = client.result(&args.job).await.map_err(|e| describe(&args.coordinator, e))?;
    args.out.report(&report)
}

/// Cancels the job; prints its state after.
pub async fn cancel(args: JobRefArgs) -> Result<(), String> {
    let client = args.connect.client(&args.coordinator)?;
    let status = client.cancel(&args.job).await.map_err(|e| describe(&args.coordinator, e))?;
    output::emit(&format!("{}\n", progress_line(&status)), args.out.output.as_deref())
}
