//! `dpincon-cli bench scale`: the macro benchmark of SPEC §10's largest run.
//!
//! For each size: generate a Tax-like table, add RNoise(α), then run the
//! whole job in a child process (so peak RSS is that size's own) and read
//! its report. In this process it also measures FD-only detection on one
//! thread (edges/s/core) and, on small sizes, the naive baseline: every
//! pair tested and one pass over the edges per θ instead of one for all.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use dpincon_engine::{JobConfig, NoProgress, Report, load};
use dpincon_generate::{TAX_CONSTRAINTS, TaxOptions, generate_tax, rnoise};
use dpincon_measures::{DegreeBound, EdgeAddition, walk};
use dpincon_release::default_candidates;
use serde::Serialize;

#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    which: Which,
}

#[derive(Debug, clap::Subcommand)]
enum Which {
    /// Rows, edges, seconds per phase, edges/s and peak RSS by table size.
    Scale(ScaleArgs),
}

#[derive(Debug, clap::Args)]
struct ScaleArgs {
    /// Table sizes, e.g. 1e4,1e5,1e6.
    #[arg(long, value_delimiter = ',', default_value = "1e4,1e5")]
    rows: Vec<String>,
    /// RNoise α.
    #[arg(long, default_value_t = 0.005)]
    alpha: f64,
    /// Seed of the generators.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where generated tables go (large at 1e6: ~100 MB each).
    #[arg(long, default_value = "/tmp/dpincon-bench")]
    dir: PathBuf,
    /// Detection threads of the job (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Memory limit of the job's graph, e.g. 1GiB.
    #[arg(long)]
    memory_limit: Option<dpincon_api::ByteSize>,
    /// Run the naive baseline on sizes up to this many rows.
    #[arg(long, default_value_t = 10_000)]
    naive_max_rows: u64,
    /// Also write the table as CSV here.
    #[arg(long)]
    csv: Option<PathBuf>,
}

#[derive(Debug, Serialize)]
struct Row {
    rows: u64,
    edges: u64,
    max_degree: u64,
    generate_s: f64,
    noise_s: f64,
    read_s: f64,
    detect_s: f64,
    measures_s: f64,
    job_s: f64,
    edges_per_s: f64,
    peak_rss_mib: f64,
    spilled_mib: f64,
    fd_edges_per_s_core: f64,
    naive_detect_speedup: Option<f64>,
    naive_projection_speedup: Option<f64>,
}

/// A `--sizes` entry that is not a row count the bench can run.
#[derive(Debug, thiserror::Error)]
enum SizeError {
    #[error("'{text}' is not a row count")]
    NotANumber {
        text: String,
        #[source]
        source: std::num::ParseFloatError,
    },
    #[error("row count {0} out of range")]
    OutOfRange(String),
}

fn parse_rows(text: &str) -> Result<u64, SizeError> {
    let v: f64 = text
        .trim()
        .parse()
        .map_err(|source| SizeError::NotANumber { text: text.into(), source })?;
    if !(v >= 1.0 && v <= f64::from(u32::MAX)) {
        return Err(SizeError::OutOfRange(text.into()));
    }
    Ok(v as u64)
}

pub async fn run_bench(args: BenchArgs) -> anyhow::Result<()> {
    let Which::Scale(args) = args.which;
    std::fs::create_dir_all(&args.dir)
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.dir.display()))?;
    let dcs = args.dir.join("tax.dcs");
    std::fs::write(&dcs, TAX_CONSTRAINTS)?;
    let fd_dcs = args.dir.join("tax-fd.dcs");
    let fds: String = TAX_CONSTRAINTS
        .lines()
        .filter(|l| !l.contains('<') && !l.contains('>'))
        .map(|l| l.to_string() + "\n")
        .collect();
    std::fs::write(&fd_dcs, fds)?;
    let mut rows = Vec::new();
    for size in &args.rows {
        let n = parse_rows(size)?;
        eprintln!("== {n} rows");
        let clean = args.dir.join(format!("tax-{n}.csv"));
        let noisy = args.dir.join(format!("tax-{n}-rnoise-{}.csv", args.alpha));
        let t = Instant::now();
        generate_tax(&TaxOptions { rows: n, seed: args.seed, format: None }, &clean)?;
        let generate_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let constraints = dpincon_constraints::parse_constraints(TAX_CONSTRAINTS)?;
        rnoise(&clean, &constraints, args.alpha, args.seed, &noisy)?;
        let noise_s = t.elapsed().as_secs_f64();
        let report = child_job(&noisy, &dcs, &args)?;
        let (Some(exact), Some(t)) = (report.non_private, report.timings) else {
            return Err(anyhow::anyhow!("the job's report has no exact values or timings"));
        };
        let edges = exact.edges;
        let fd = fd_rate(&noisy, &fd_dcs).await?;
        let (naive_detect_speedup, naive_projection_speedup) = if n <= args.naive_max_rows {
            let (d, p) = naive_speedups(&noisy, &dcs).await?;
            (Some(d), Some(p))
        } else {
            (None, None)
        };
        let row = Row {
            rows: n,
            edges,
            max_degree: u64::from(exact.max_degree),
            generate_s,
            noise_s,
            read_s: t.read_s,
            detect_s: t.detect_s,
            measures_s: t.measures_s,
            job_s: t.total_s,
            edges_per_s: edges as f64 / t.detect_s.max(1e-9),
            peak_rss_mib: t.peak_rss_mib.unwrap_or(0.0),
            spilled_mib: t.spilled_bytes as f64 / (1 << 20) as f64,
            fd_edges_per_s_core: fd,
            naive_detect_speedup,
            naive_projection_speedup,
        };
        eprintln!("{}", serde_json::to_string(&row)?);
        rows.push(row);
    }
    let csv = to_csv(&rows);
    if let Some(path) = &args.csv {
        crate::output::emit(&csv, Some(path))?;
    }
    crate::output::emit(&(to_table(&rows) + "\n" + &csv), None)
}

/// The job in a child process: its peak RSS is its own.
fn child_job(data: &Path, dcs: &Path, args: &ScaleArgs) -> anyhow::Result<Report> {
    let exe = std::env::current_exe()?;
    let mut cmd = Command::new(exe);
    cmd.args(["run", "--non-private", "--epsilon", "1", "--seed", "1", "--format", "json"]);
    cmd.arg("--data").arg(data).arg("--constraints").arg(dcs);
    if let Some(t) = args.threads {
        cmd.args(["--threads", &t.to_string()]);
    }
    if let Some(m) = &args.memory_limit {
        // I_R's LP has no public memory bound: under a budget only the greedy cover.
        cmd.args(["--memory-limit", &m.to_string(), "--ir-method", "greedy"]);
    }
    let out = cmd.output()?;
    if !out.status.success() {
        return Err(anyhow::anyhow!("the job failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    Ok(serde_json::from_slice(&out.stdout)?)
}

/// FD-only detection on one thread: edges per second per core.
async fn fd_rate(data: &Path, fd_dcs: &Path) -> anyhow::Result<f64> {
    let mut config = JobConfig::new(data, fd_dcs);
    config.data.threads = Some(1);
    let loaded = load(&config, &NoProgress).await?;
    Ok(loaded.graph.edge_count() as f64 / loaded.detect_s.max(1e-9))
}

/// Naive detection (every pair) against the planned one, and one pass per θ
/// against one pass for all θ, measured here in the same run.
async fn naive_speedups(data: &Path, dcs: &Path) -> anyhow::Result<(f64, f64)> {
    let planned = load(&JobConfig::new(data, dcs), &NoProgress).await?;
    let mut naive = JobConfig::new(data, dcs);
    naive.test.brute_force = true;
    let brute = load(&naive, &NoProgress).await?;
    if brute.graph.edge_count() != planned.graph.edge_count() {
        return Err(anyhow::anyhow!("the naive baseline found a different graph"));
    }
    let graph = &planned.graph;
    let bounds: Vec<DegreeBound> = default_candidates(u64::from(graph.nodes()))
        .into_iter()
        .filter_map(DegreeBound::new)
        .collect();
    let t = Instant::now();
    let mut shared = EdgeAddition::new(graph.nodes(), &bounds);
    walk(graph.edges(), &mut [&mut shared]);
    let shared_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    for &bound in &bounds {
        let mut single = EdgeAddition::new(graph.nodes(), &[bound]);
        walk(graph.edges(), &mut [&mut single]);
    }
    let separate_s = t.elapsed().as_secs_f64();
    Ok((brute.detect_s / planned.detect_s.max(1e-9), separate_s / shared_s.max(1e-9)))
}

fn to_csv(rows: &[Row]) -> String {
    let mut out = String::from(
        "rows,edges,max_degree,generate_s,noise_s,read_s,detect_s,measures_s,job_s,edges_per_s,peak_rss_mib,spilled_mib,fd_edges_per_s_core,naive_detect_speedup,naive_projection_speedup\n",
    );
    for r in rows {
        let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.2}"));
        let _ = writeln!(
            out,
            "{},{},{},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.0},{:.1},{:.1},{:.0},{},{}",
            r.rows,
            r.edges,
            r.max_degree,
            r.generate_s,
            r.noise_s,
            r.read_s,
            r.detect_s,
            r.measures_s,
            r.job_s,
            r.edges_per_s,
            r.peak_rss_mib,
            r.spilled_mib,
            r.fd_edges_per_s_core,
            opt(r.naive_detect_speedup),
            opt(r.naive_projection_speedup)
        );
    }
    out
}

fn to_table(rows: &[Row]) -> String {
    let mut out = format!(
        "{:>9} {:>12} {:>7} {:>7} {:>8} {:>8} {:>9} {:>8} {:>12} {:>9} {:>12} {:>9}\n",
        "rows",
        "edges",
        "read s",
        "detect s",
        "measure s",
        "job s",
        "edges/s",
        "RSS MiB",
        "FD e/s/core",
        "spill MiB",
        "naive det ×",
        "naive θ ×"
    );
    for r in rows {
        let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
        let _ = writeln!(
            out,
            "{:>9} {:>12} {:>7.2} {:>7.2} {:>8.2} {:>8.2} {:>9.2e} {:>8.0} {:>12.2e} {:>9.1} {:>12} {:>9}",
            r.rows,
            r.edges,
            r.read_s,
            r.detect_s,
            r.measures_s,
            r.job_s,
            r.edges_per_s,
            r.peak_rss_mib,
            r.fd_edges_per_s_core,
            r.spilled_mib,
            opt(r.naive_detect_speedup),
            opt(r.naive_projection_speedup)
        );
    }
    out
}
