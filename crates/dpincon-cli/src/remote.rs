//! Jobs on a coordinator: `submit`, `status`, `result`, `cancel`.
//!
//! The job options are the ones of `run` (and a `--job` TOML file works the
//! same); paths in them are read by the COORDINATOR, on its filesystem.
//! The shared token comes from `--token-file` or `DPINCON_TOKEN`, never
//! from an argument (arguments show in `ps` and shell history).

use std::path::PathBuf;

use dpincon_cluster::ClusterError;
use dpincon_cluster::auth::Token;
use dpincon_cluster::client::{Client, StatusView, progress_line};
use dpincon_cluster::tls::ClientTls;

use crate::JobArgs;

/// How to reach a coordinator (besides its URL).
#[derive(Debug, clap::Args)]
pub struct ConnectArgs {
    /// File holding the shared bearer token (else $DPINCON_TOKEN).
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
    fn client(&self, url: &str) -> Result<Client, String> {
        let token = Token::load(self.token_file.as_deref()).map_err(|e| e.to_string())?;
        let tls = ClientTls::load(self.tls_ca.as_deref(), self.tls_domain.clone())
            .map_err(|e| e.to_string())?;
        Client::new(url, &token, tls.as_ref()).map_err(|e| e.to_string())
    }
}

/// An error for people: which coordinator could not be reached.
fn describe(url: &str, e: ClusterError) -> String {
    if e.is_unreachable() { format!("coordinator {url}: {e}") } else { e.to_string() }
}

/// `submit`: queue a job on a coordinator.
#[derive(Debug, clap::Args)]
pub struct SubmitArgs {
    /// The coordinator, e.g. http://coordinator:50050.
    #[arg(long)]
    coordinator: String,
    #[command(flatten)]
    job: JobArgs,
    /// Wait for the job: progress on standard error, the report (JSON) on
    /// standard output; exit status 1 if the job fails.
    #[arg(long)]
    wait: bool,
    #[command(flatten)]
    connect: ConnectArgs,
}

/// `status`, `result`, `cancel`: one job of a coordinator.
#[derive(Debug, clap::Args)]
pub struct JobRefArgs {
    /// The coordinator, e.g. http://coordinator:50050.
    coordinator: String,
    /// The job id `submit` printed.
    job: String,
    #[command(flatten)]
    connect: ConnectArgs,
}

/// Queues the job; prints its id, or with `--wait` its report.
pub async fn submit(args: SubmitArgs) -> Result<(), String> {
    let job = args.job.job()?;
    let client = args.connect.client(&args.coordinator)?;
    let id = client.submit(&job).await.map_err(|e| describe(&args.coordinator, e))?;
    if !args.wait {
        println!("{id}");
        return Ok(());
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
    print!("{report}");
    Ok(())
}

/// Prints the job's status as JSON.
pub async fn status(args: JobRefArgs) -> Result<(), String> {
    let client = args.connect.client(&args.coordinator)?;
    let status = client.status(&args.job).await.map_err(|e| describe(&args.coordinator, e))?;
    let text =
        serde_json::to_string_pretty(&StatusView::from(&status)).map_err(|e| e.to_string())?;
    println!("{text}");
    Ok(())
}

/// Prints the report of a succeeded job (JSON); fails with the reason otherwise.
pub async fn result(args: JobRefArgs) -> Result<(), String> {
    let client = args.connect.client(&args.coordinator)?;
    let report = client.result(&args.job).await.map_err(|e| describe(&args.coordinator, e))?;
    print!("{report}");
    Ok(())
}

/// Cancels the job; prints its state after.
pub async fn cancel(args: JobRefArgs) -> Result<(), String> {
    let client = args.connect.client(&args.coordinator)?;
    let status = client.cancel(&args.job).await.map_err(|e| describe(&args.coordinator, e))?;
    println!("{}", progress_line(&status));
    Ok(())
}
