//! `dpincon-cli experiment suite`: every θ-selection configuration and the
//! oracle on every table of a `generate suite` manifest (and, with
//! `--public-data`, RNoise and CONoise copies of the public tables; with
//! `--tables`, a list of one's own), scored
//! against the exact values (NON-PRIVATE). Writes `cells.csv` (one row per
//! table × ε × measure × configuration), `summary.json` and `suite.svg`,
//! and prints the per-family table, the pass criteria and, with
//! `--lofo`, the leave-one-family-out choice (issue 49).
//!
//! Each table is read and detected once; the engine's `score_table` runs
//! every configuration on the loaded graph through the coverage runner.
//! `cells.csv` is rewritten after each table, so a long run stopped early
//! keeps what it measured, and `--cells` judges a written file again
//! without running anything.

mod listed;
mod public;
mod report;

use std::path::{Path, PathBuf};
use std::time::Instant;

use dpincon_engine::experiment::{SuiteCell, SuiteConfig, SuiteOptions, TableLabel, score_table};
use dpincon_engine::{JobConfig, NoProgress};
use dpincon_generate::suite::SuiteManifest;

use crate::output::emit;

/// Options of `experiment suite`.
#[derive(Debug, clap::Args)]
pub struct SuiteArgs {
    /// The suite's `manifest.json` (from `generate suite`).
    #[arg(long, required_unless_present_any = ["cells", "tables", "public_data"])]
    manifest: Option<PathBuf>,
    /// A TOML list of further tables (`[[table]]` with name, family, data
    /// and constraints, paths relative to the list): tables nobody tuned
    /// on, judged by the same criteria.
    #[arg(long)]
    tables: Option<PathBuf>,
    /// The public tables (`../shared/data`): adds their RNoise (α = 0.01)
    /// and CONoise (200 iterations) copies, seed 1, as family
    /// `public-noise`, and the shipped dirty tables as `public-dirty`.
    #[arg(long)]
    public_data: Option<PathBuf>,
    /// ε values per measure.
    #[arg(long, value_delimiter = ',', default_value = "0.5,1,2")]
    epsilons: Vec<f64>,
    /// Seeded runs per table, ε and configuration (common to every
    /// configuration).
    #[arg(long, default_value_t = 20)]
    runs: usize,
    /// Runs that re-measure, on fresh seeds, the coverage of every default
    /// and I_R cell reading below 95% (0: none). At 100 runs a true 95%
    /// reads 0.92 or less in about one cell of eight.
    #[arg(long, default_value_t = 2000)]
    confirm_runs: usize,
    /// The first seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Configurations, `STRATEGY[/em|/pf][@SHARE][~pow2]`, the default
    /// first (default: the default strategy and every other non-baseline
    /// strategy; with --lofo also their selector, share and grid variants).
    #[arg(long, value_delimiter = ',')]
    strategies: Option<Vec<String>>,
    /// Only these families.
    #[arg(long, value_delimiter = ',')]
    families: Option<Vec<String>>,
    /// Detection threads, and configurations run side by side.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Directory for cells.csv, summary.json, suite.svg (and the public
    /// tables' noisy copies).
    #[arg(long)]
    out: PathBuf,
    /// Leave one family out: for each family, the configuration with the
    /// least worst ratio to the oracle over the other families, and its
    /// figures on the family left out.
    #[arg(long)]
    lofo: bool,
    /// Judge this cells.csv (of an earlier run) instead of running.
    #[arg(long)]
    cells: Option<PathBuf>,
    /// Confirms the run reads exact values: NOT differentially private.
    #[arg(long)]
    non_private: bool,
}

/// Options of `generate suite`.
#[derive(Debug, clap::Args)]
pub struct GenerateSuiteArgs {
    /// The directory to write (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// Seed: the same seed gives the same suite.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// `small` caps every table at 10^4 rows; `full` is 10^3 to 10^5.
    #[arg(long, value_parser = ["small", "full"], default_value = "full")]
    scale: String,
}

/// `generate suite`: every table (its name on standard error as it is
/// written), then one JSON line: where, how many, how long.
pub fn generate(args: GenerateSuiteArgs) -> anyhow::Result<()> {
    use dpincon_generate::suite::{MANIFEST, Scale, SuiteOptions, generate_suite};
    let start = Instant::now();
    let scale = if args.scale == "small" { Scale::Small } else { Scale::Full };
    let options = SuiteOptions { out: args.out.clone(), seed: args.seed, scale };
    let manifest = generate_suite(&options, &mut |t| eprintln!("{} ({} rows)", t.name, t.rows))?;
    let mut families: Vec<&str> = manifest.tables.iter().map(|t| t.family.name()).collect();
    families.dedup();
    let line = serde_json::json!({
        "generator": "suite",
        "manifest": args.out.join(MANIFEST),
        "seed": args.seed,
        "scale": scale.name(),
        "tables": manifest.tables.len(),
        "families": families,
        "rows": manifest.tables.iter().map(|t| t.rows).sum::<u64>(),
        "seconds": start.elapsed().as_secs_f64(),
    });
    println!("{}", serde_json::to_string(&line)?);
    Ok(())
}

/// A table to score.
#[derive(Debug, Clone)]
struct Entry {
    name: String,
    family: String,
    data: PathBuf,
    constraints: PathBuf,
}

/// The manifest's tables, their paths resolved against its directory.
fn manifest_entries(path: &Path) -> anyhow::Result<Vec<Entry>> {
    let manifest = SuiteManifest::read(path)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    Ok(manifest
        .tables
        .into_iter()
        .map(|t| Entry {
            family: t.family.name().into(),
            data: dir.join(&t.data),
            constraints: dir.join(&t.constraints),
            name: t.name,
        })
        .collect())
}

fn configs(args: &SuiteArgs) -> anyhow::Result<Vec<SuiteConfig>> {
    match &args.strategies {
        Some(names) => {
            names.iter().map(|n| n.parse::<SuiteConfig>().map_err(anyhow::Error::from)).collect()
        }
        None if args.lofo => Ok(SuiteConfig::variants()),
        None => Ok(SuiteConfig::strategies()),
    }
}

fn read_cells(path: &Path) -> anyhow::Result<Vec<SuiteCell>> {
    let mut reader = csv::Reader::from_path(path)
        .map_err(|e| anyhow::anyhow!("cannot read '{}': {e}", path.display()))?;
    reader
        .deserialize()
        .collect::<Result<_, _>>()
        .map_err(|e| anyhow::anyhow!("'{}': not a cells.csv: {e}", path.display()))
}

fn write_cells(cells: &[SuiteCell], path: &Path) -> anyhow::Result<()> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    for c in cells {
        writer.serialize(c)?;
    }
    let bytes = writer.into_inner()?;
    emit(&String::from_utf8(bytes)?, Some(path))
}

pub async fn run_suite(args: SuiteArgs) -> anyhow::Result<()> {
    if !args.non_private {
        anyhow::bail!(
            "the suite scores releases against exact values: it is NON-PRIVATE and needs \
             --non-private"
        );
    }
    if args.runs == 0 {
        return Err(anyhow::anyhow!("--runs must be at least 1"));
    }
    for &epsilon in &args.epsilons {
        dpincon_engine::validate::check_epsilon("--epsilons: every ε", epsilon)?;
    }
    let configs = configs(&args)?;
    if configs.is_empty() {
        return Err(anyhow::anyhow!("--strategies: give at least one configuration"));
    }
    std::fs::create_dir_all(&args.out)
        .map_err(|e| anyhow::anyhow!("cannot create '{}': {e}", args.out.display()))?;
    let start = Instant::now();
    let (cells, tables) = match &args.cells {
        Some(path) => (read_cells(path)?, Vec::new()),
        None => run_tables(&args, &configs).await?,
    };
    let cells: Vec<SuiteCell> = match &args.families {
        Some(keep) => cells.into_iter().filter(|c| keep.contains(&c.family)).collect(),
        None => cells,
    };
    let names: Vec<String> = configs.iter().map(ToString::to_string).collect();
    let summary = report::summarize(&args, &names, &cells, tables, start.elapsed().as_secs_f64());
    let json = serde_json::to_string_pretty(&summary)? + "\n";
    emit(&json, Some(&args.out.join("summary.json")))?;
    let svg = args.out.join("suite.svg");
    report::chart(&cells, &configs, &args.epsilons, &svg)?;
    println!(
        "{}\nwrote {}, {} and {}",
        dpincon_engine::NON_PRIVATE_LABEL,
        args.out.join("cells.csv").display(),
        args.out.join("summary.json").display(),
        svg.display()
    );
    print!("{}", report::text(&summary));
    Ok(())
}

/// Scores every table, writing cells.csv after each; returns the cells and
/// what each table took.
async fn run_tables(
    args: &SuiteArgs,
    configs: &[SuiteConfig],
) -> anyhow::Result<(Vec<SuiteCell>, Vec<report::TableRun>)> {
    let mut entries = match &args.manifest {
        Some(path) => manifest_entries(path)?,
        None => Vec::new(),
    };
    if let Some(dir) = &args.public_data {
        entries.extend(public::entries(dir, &args.out.join("public"), args.families.as_deref())?);
    }
    if let Some(list) = &args.tables {
        entries.extend(listed::entries(list)?);
    }
    if let Some(keep) = &args.families {
        entries.retain(|e| keep.contains(&e.family));
    }
    if entries.is_empty() {
        return Err(anyhow::anyhow!("no table to score (check --families)"));
    }
    let options = SuiteOptions {
        epsilons: args.epsilons.clone(),
        configs: configs.to_vec(),
        runs: args.runs,
        seed: args.seed,
        workers: args.threads,
        dense_limit: 200,
        repair: true,
        confirm_runs: args.confirm_runs,
    };
    let cells_path = args.out.join("cells.csv");
    let mut cells = Vec::new();
    let mut runs = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let started = Instant::now();
        let mut job = JobConfig::new(&entry.data, &entry.constraints);
        job.data.threads = Some(args.threads);
        job.test.non_private = true;
        job.test.seed = Some(args.seed);
        let loaded = dpincon_engine::load(&job, &NoProgress)
            .await
            .map_err(|e| anyhow::anyhow!("{}: {e}", entry.name))?;
        let exact = dpincon_measures::count_degrees(&loaded.graph, loaded.threads).counts();
        let label = TableLabel { table: &entry.name, family: &entry.family };
        let score = score_table(&job, &loaded, label, &options, &|| {})?;
        for (config, error) in &score.failures {
            eprintln!("  {}: {config} failed: {error}", entry.name);
        }
        let run = report::TableRun {
            name: entry.name.clone(),
            family: entry.family.clone(),
            rows: loaded.facts.rows,
            edges: exact.edges,
            problematic: exact.problematic,
            max_degree: exact.max_degree,
            passes: score.passes,
            failures: score.failures.iter().map(|(c, _)| c.clone()).collect(),
            seconds: started.elapsed().as_secs_f64(),
        };
        eprintln!(
            "[{}/{}] {:<28} {:>7} rows {:>9} edges  max degree {:>6}  {:>6.1} s",
            i + 1,
            entries.len(),
            run.name,
            run.rows,
            run.edges,
            run.max_degree,
            run.seconds
        );
        cells.extend(score.cells);
        runs.push(run);
        write_cells(&cells, &cells_path)?;
    }
    Ok((cells, runs))
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use dpincon_generate::suite::{
        Family, MANIFEST, SUITE_VERSION, Scale, SuiteManifest, generate_table, plan,
    };

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: SuiteArgs,
    }

    fn args(list: &[&str]) -> SuiteArgs {
        Cli::try_parse_from(std::iter::once("suite").chain(list.iter().copied())).unwrap().args
    }

    /// The first small table of two families, and their manifest.
    fn two_tables(dir: &Path) -> PathBuf {
        let tables = [Family::DupKeys, Family::Order]
            .map(|f| {
                let planned = plan(Scale::Small).into_iter().find(|p| p.params.family() == f);
                generate_table(&planned.unwrap(), 3, dir).unwrap()
            })
            .to_vec();
        let manifest =
            SuiteManifest { version: SUITE_VERSION, seed: 3, scale: Scale::Small, tables };
        let path = dir.join(MANIFEST);
        manifest.write(&path).unwrap();
        path
    }

    #[derive(Parser)]
    struct GenerateCli {
        #[command(flatten)]
        args: GenerateSuiteArgs,
    }

    #[test]
    fn generate_suite_writes_every_table_and_the_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("suite");
        let list = ["suite", "--out", out.to_str().unwrap(), "--seed", "2", "--scale", "small"];
        generate(GenerateCli::try_parse_from(list).unwrap().args).unwrap();
        let manifest = SuiteManifest::read(&out.join(MANIFEST)).unwrap();
        assert_eq!((manifest.seed, manifest.scale), (2, Scale::Small));
        assert!(manifest.tables.len() >= 40);
        assert!(manifest.tables.iter().all(|t| out.join(&t.data).is_file()));
        let bad = ["suite", "--out", "x", "--scale", "huge"];
        assert!(GenerateCli::try_parse_from(bad).is_err());
    }

    #[tokio::test]
    async fn a_run_writes_cells_a_summary_and_a_chart_and_judges_them_again() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = two_tables(dir.path());
        let out = dir.path().join("out");
        let (m, o) = (manifest.to_str().unwrap(), out.to_str().unwrap());
        let common = [
            ["--runs", "2", "--epsilons", "1", "--strategies", "ub-direct,gem,gem/em"].as_slice(),
            &["--lofo", "--confirm-runs", "40"],
        ]
        .concat();
        let run = |extra: &[&str]| args(&[common.as_slice(), extra].concat());

        let refused = run_suite(run(&["--manifest", m, "--out", o])).await.unwrap_err();
        assert!(refused.to_string().contains("NON-PRIVATE"), "{refused}");
        run_suite(run(&["--manifest", m, "--out", o, "--non-private"])).await.unwrap();

        let cells = read_cells(&out.join("cells.csv")).unwrap();
        // Per table: 3 configurations and the oracle on I_MI and I_P, and I_R.
        assert_eq!(cells.len(), 2 * (3 * 2 + 2 + 1));
        let configs: Vec<&str> = cells.iter().map(|c| c.config.as_str()).collect();
        for name in ["ub-direct", "gem", "gem/em", "oracle", "ir-combined"] {
            assert!(configs.contains(&name), "{name}");
        }
        assert!(cells.iter().all(|c| c.mean_relative_error.is_finite()));
        // Two runs read coverage 0, ½ or 1: any default or I_R cell below
        // 95% is re-measured over 40 runs, and no other cell is.
        for c in &cells {
            let low = c.coverage.is_some_and(|v| v < 0.95);
            let checked = low && (c.config == "ub-direct" || c.config == "ir-combined");
            assert_eq!(c.confirmed_coverage.is_some(), checked, "{c:?}");
            if let Some(v) = c.confirmed_coverage {
                assert!((v * 40.0 - (v * 40.0).round()).abs() < 1e-9, "a share of 40 runs: {v}");
            }
        }
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(summary["default"], "ub-direct");
        assert_eq!(summary["others"], serde_json::json!(["gem"]), "plain strategies only");
        // Two families × three measures; two held-out families × two measures.
        assert_eq!(summary["families"].as_array().unwrap().len(), 6);
        assert_eq!(summary["lofo"].as_array().unwrap().len(), 4);
        assert_eq!(summary["tables"].as_array().unwrap().len(), 2);
        assert!(std::fs::read_to_string(out.join("suite.svg")).unwrap().contains("<svg"));

        // The written cells, judged again without running: the same figures.
        let again = dir.path().join("again");
        let cells_path = out.join("cells.csv");
        let (c, a) = (cells_path.to_str().unwrap(), again.to_str().unwrap());
        run_suite(run(&["--cells", c, "--out", a, "--non-private"])).await.unwrap();
        let judged: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(again.join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(judged["families"], summary["families"]);
        assert_eq!(judged["lofo"], summary["lofo"]);
        assert_eq!(summary["confirm_runs"], 40);
        assert!(judged["confirm_runs"].is_null(), "a written file's setting is not known");
        // A cells.csv written before the re-measure existed still reads.
        let text = std::fs::read_to_string(&cells_path).unwrap();
        let old: String =
            text.lines().map(|l| l.rsplit_once(',').unwrap().0.to_string() + "\n").collect();
        assert!(old.lines().next().unwrap().ends_with(",mean_theta"), "{old}");
        let old_path = dir.path().join("old.csv");
        std::fs::write(&old_path, old).unwrap();
        let read = read_cells(&old_path).unwrap();
        assert_eq!(read.len(), cells.len());
        assert!(read.iter().all(|c| c.confirmed_coverage.is_none()));

        // A family filter keeps its cells only; a bad configuration is refused.
        let filtered = dir.path().join("filtered");
        let f = filtered.to_str().unwrap();
        run_suite(run(&["--cells", c, "--out", f, "--non-private", "--families", "order"]))
            .await
            .unwrap();
        let judged: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(filtered.join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(judged["families"].as_array().unwrap().len(), 3);
        let bad = args(&["--cells", c, "--out", f, "--non-private", "--strategies", "best"]);
        assert!(run_suite(bad).await.unwrap_err().to_string().contains("unknown strategy 'best'"));
    }
}
