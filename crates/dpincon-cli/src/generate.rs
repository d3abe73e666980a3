//! `generate` and `noise`: the data generators of crate `dpincon-generate`
//! (a Tax-like table, tables of hard conflict-graph shapes, a year of
//! nightly versions of a table, and RNoise / CONoise of SPEC §9), for
//! experiments and benchmarks. Each command prints
//! its statistics as one JSON line.

use std::path::PathBuf;

use dpincon_generate::{NightlyOptions, Shape, ShapeOptions, TableFormat, TaxOptions};

/// Generate a synthetic table.
#[derive(Debug, clap::Args)]
pub struct GenerateArgs {
    /// The kind of table.
    #[command(subcommand)]
    pub table: GenerateTable,
}

/// The tables `generate` can make.
#[derive(Debug, clap::Subcommand)]
pub enum GenerateTable {
    /// A Tax-like table: the schema of the paper's Tax table, realistic group
    /// sizes, 0 conflicts under its 9 constraints; streamed, any size.
    Tax(TaxArgs),
    /// A table whose conflict graph has a hard shape real data has (hub
    /// stars, duplicated-key cliques, sparse small groups, both, or an order
    /// DC with no equality), and its constraint file.
    Shapes(ShapesArgs),
    /// Nightly versions of an orders table under three FDs (`night-001.csv`
    /// …, `orders.dcs`, `nights.json` with each night's ground truth): slow
    /// drift, a slowly growing error rate, one-night bursts of violations.
    Nightly(NightlyArgs),
    /// The θ-selection training suite (issue 49): ≥ 40 tables over eleven
    /// shape families, their constraint files and `manifest.json`, the
    /// input of `experiment suite`.
    Suite(crate::suite::GenerateSuiteArgs),
}

/// Where a generated table goes, and its seed (every generator's).
#[derive(Debug, clap::Args)]
pub struct TableOut {
    /// Seed: the same seed gives the same bytes.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Output file; `.parquet` means Parquet unless --format says otherwise.
    #[arg(long)]
    pub out: PathBuf,
    /// Output format (default: by the extension of --out).
    #[arg(long, value_parser = ["csv", "parquet"])]
    pub format: Option<String>,
}

impl TableOut {
    fn format(&self) -> anyhow::Result<Option<TableFormat>> {
        Ok(self.format.as_deref().map(TableFormat::parse).transpose()?)
    }
}

/// Options of `generate tax`.
#[derive(Debug, clap::Args)]
pub struct TaxArgs {
    /// Rows to generate: `1000000`, `1_000_000` or `1e6`.
    #[arg(long, value_parser = parse_rows)]
    pub rows: u64,
    #[command(flatten)]
    pub table: TableOut,
    /// Also write the Tax constraints (9 DCs, the paper's `dcs.txt`) here.
    #[arg(long)]
    pub constraints_out: Option<PathBuf>,
}

/// The shapes of `generate shapes` (see `dpincon_generate::Shape`).
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ShapeName {
    /// NYPD-like near-FDs `code -> description`, `precinct -> borough` on
    /// Zipf-sized groups; each violation is a star of degree ≈ its group's
    /// size (default 20000 rows, 9 violations).
    Hubs,
    /// Duplicated bibliographic keys, 2–12 copies (rarely up to 30) that
    /// disagree on title, year or venue: cliques (default 1000 rows,
    /// violations = duplicated keys, rows / 80).
    Cliques,
    /// `zip -> city`, `zip -> state` on zip groups of 5–40 rows, wrong
    /// cities in 2% of the rows (default 2400 rows).
    Sparse,
    /// Hubs and sparse in one table: the first 9 violations are hub stars,
    /// the rest wrong cities (default 20000 rows, 9 + 2% violations).
    Mixed,
    /// `not(t1.gain>t2.gain&t1.loss<t2.loss)`, no equality, so no public
    /// degree bound; plus `desk -> region` (default 2000 rows, 1% out of
    /// order).
    Order,
}

impl From<ShapeName> for Shape {
    fn from(name: ShapeName) -> Shape {
        match name {
            ShapeName::Hubs => Shape::Hubs,
            ShapeName::Cliques => Shape::Cliques,
            ShapeName::Sparse => Shape::Sparse,
            ShapeName::Mixed => Shape::Mixed,
            ShapeName::Order => Shape::Order,
        }
    }
}

/// Options of `generate shapes`.
#[derive(Debug, clap::Args)]
pub struct ShapesArgs {
    /// The shape.
    #[arg(long, value_enum)]
    pub shape: ShapeName,
    /// Rows to generate (default: per shape, see --shape).
    #[arg(long, value_parser = parse_rows)]
    pub rows: Option<u64>,
    /// Violations to inject: rows with a wrong value, duplicated keys
    /// (cliques) or rows out of order (order); default per shape.
    #[arg(long)]
    pub violations: Option<u64>,
    #[command(flatten)]
    pub table: TableOut,
    /// Where to write the shape's constraints (required: the table means
    /// nothing without them).
    #[arg(long)]
    pub constraints_out: PathBuf,
}

/// Options of `generate nightly` (defaults: `NightlyOptions::default()`).
#[derive(Debug, clap::Args)]
pub struct NightlyArgs {
    /// Rows of every night's table.
    #[arg(long, value_parser = parse_rows, default_value = "10000")]
    pub rows: u64,
    /// Nights to write.
    #[arg(long, default_value_t = 365)]
    pub nights: u32,
    /// Share of the rows replaced by fresh orders each night.
    #[arg(long, default_value_t = 0.005)]
    pub drift: f64,
    /// Share of the rows holding a wrong cell on the first night.
    #[arg(long, default_value_t = 0.005)]
    pub error_start: f64,
    /// ... and on the last night (linear in between).
    #[arg(long, default_value_t = 0.01)]
    pub error_end: f64,
    /// Burst nights (1-based), comma-separated: `60,130,200,290`.
    #[arg(long, value_delimiter = ',')]
    pub bursts: Vec<u32>,
    /// Rows given a wrong cell on a burst night, on top of the trend
    /// (default: 2% of --rows).
    #[arg(long)]
    pub burst_rows: Option<u64>,
    /// Seed: the same seed gives the same bytes.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The output directory (created if missing).
    #[arg(long)]
    pub out: PathBuf,
}

/// Inject violations into a table (SPEC §9); never modifies the input.
#[derive(Debug, clap::Args)]
pub struct NoiseArgs {
    /// The generator.
    #[command(subcommand)]
    pub generator: NoiseGenerator,
}

/// The violation generators.
#[derive(Debug, clap::Subcommand)]
pub enum NoiseGenerator {
    /// RNoise(α): α × (cells of constrained attributes) random cells get
    /// another active-domain value (probability 0.5) or a typo.
    Rnoise(RnoiseArgs),
    /// CONoise(k): k times, make a random pair of rows violate a random
    /// constraint.
    Conoise(ConoiseArgs),
}

/// Options shared by both generators.
#[derive(Debug, clap::Args)]
pub struct NoiseCommon {
    /// The input table (CSV with a header row, or Parquet); not modified.
    #[arg(long)]
    pub data: PathBuf,
    /// The constraint file (FD, NADEEF `not(...)` or HoloClean syntax).
    #[arg(long)]
    pub constraints: PathBuf,
    /// Seed: the same seed gives the same output.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The noisy table to write (CSV, or Parquet by extension); must not be
    /// the input.
    #[arg(long)]
    pub out: PathBuf,
}

/// Options of `noise rnoise`.
#[derive(Debug, clap::Args)]
pub struct RnoiseArgs {
    #[command(flatten)]
    pub common: NoiseCommon,
    /// α: the share of constrained cells to pick (with replacement), e.g. 0.01.
    #[arg(long)]
    pub alpha: f64,
}

/// Options of `noise conoise`.
#[derive(Debug, clap::Args)]
pub struct ConoiseArgs {
    #[command(flatten)]
    pub common: NoiseCommon,
    /// k: the number of iterations.
    #[arg(long, default_value_t = 200)]
    pub iterations: u64,
    /// The paper code's behaviour: copy the first tuple into the second
    /// before forcing the remaining predicates.
    #[arg(long)]
    pub legacy: bool,
}

/// A row count that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a whole number of rows (e.g. 1000000 or 1e6)")]
struct NotRows(String);

/// A row count: digits (underscores allowed) or a whole number in
/// scientific notation such as `1e6` or `2.5e5`.
fn parse_rows(text: &str) -> Result<u64, NotRows> {
    let plain = text.replace('_', "");
    if let Ok(n) = plain.parse::<u64>() {
        return Ok(n);
    }
    match plain.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x <= 9.007_199_254_740_992e15 => {
            Ok(x as u64)
        }
        _ => Err(NotRows(text.into())),
    }
}

fn json_line(line: serde_json::Result<String>) -> anyhow::Result<()> {
    let line = line?;
    println!("{line}");
    Ok(())
}

/// Run `generate`: write the table and print its statistics as one JSON line.
pub fn run_generate(args: GenerateArgs) -> anyhow::Result<()> {
    match args.table {
        GenerateTable::Tax(tax) => {
            let options =
                TaxOptions { rows: tax.rows, seed: tax.table.seed, format: tax.table.format()? };
            if let Some(path) = &tax.constraints_out {
                dpincon_generate::write_constraint_file(path, dpincon_generate::TAX_CONSTRAINTS)?;
            }
            let stats = dpincon_generate::generate_tax(&options, &tax.table.out)?;
            json_line(serde_json::to_string(&stats))
        }
        GenerateTable::Shapes(shapes) => {
            let options = ShapeOptions {
                shape: shapes.shape.into(),
                rows: shapes.rows,
                violations: shapes.violations,
                seed: shapes.table.seed,
                format: shapes.table.format()?,
                out: shapes.table.out,
                constraints_out: Some(shapes.constraints_out),
            };
            let stats = dpincon_generate::generate_shape(&options)?;
            json_line(serde_json::to_string(&stats))
        }
        GenerateTable::Suite(suite) => crate::suite::generate(suite),
        GenerateTable::Nightly(nightly) => {
            let options = NightlyOptions {
                rows: nightly.rows,
                nights: nightly.nights,
                drift: nightly.drift,
                error_start: nightly.error_start,
                error_end: nightly.error_end,
                bursts: nightly.bursts,
                burst_rows: nightly.burst_rows,
                seed: nightly.seed,
            };
            let stats = dpincon_generate::generate_nightly(&options, &nightly.out)?;
            json_line(serde_json::to_string(&stats))
        }
    }
}

/// Run `noise`: write the noisy table and print its statistics as one JSON
/// line.
pub fn run_noise(args: NoiseArgs) -> anyhow::Result<()> {
    let common = match &args.generator {
        NoiseGenerator::Rnoise(a) => &a.common,
        NoiseGenerator::Conoise(a) => &a.common,
    };
    let constraints = dpincon_generate::read_constraints(&common.constraints)?;
    match &args.generator {
        NoiseGenerator::Rnoise(a) => {
            let stats = dpincon_generate::rnoise(
                &common.data,
                &constraints,
                a.alpha,
                common.seed,
                &common.out,
            )?;
            json_line(serde_json::to_string(&stats))
        }
        NoiseGenerator::Conoise(a) => {
            let stats = dpincon_generate::conoise(
                &common.data,
                &constraints,
                a.iterations,
                common.seed,
                a.legacy,
                &common.out,
            )?;
            json_line(serde_json::to_string(&stats))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(subcommand)]
        command: Command,
    }

    #[derive(Debug, clap::Subcommand)]
    enum Command {
        Generate(GenerateArgs),
        Noise(NoiseArgs),
    }

    fn parse(args: &[&str]) -> Result<Command, clap::Error> {
        Cli::try_parse_from(std::iter::once("dpincon-cli").chain(args.iter().copied()))
            .map(|c| c.command)
    }

    #[test]
    fn row_counts() {
        assert_eq!(parse_rows("1e6"), Ok(1_000_000));
        assert_eq!(parse_rows("2.5e5"), Ok(250_000));
        assert_eq!(parse_rows("1_000"), Ok(1000));
        assert_eq!(parse_rows("42"), Ok(42));
        assert!(parse_rows("1.5").is_err());
        assert!(parse_rows("-3").is_err());
        assert!(parse_rows("many").is_err());
    }

    #[test]
    fn generate_then_noise() {
        let dir = tempfile::tempdir().unwrap();
        let clean = dir.path().join("tax.csv");
        let dcs = dir.path().join("tax.dcs");
        let Command::Generate(g) = parse(&[
            "generate",
            "tax",
            "--rows",
            "2e3",
            "--seed",
            "5",
            "--out",
            clean.to_str().unwrap(),
            "--constraints-out",
            dcs.to_str().unwrap(),
        ])
        .unwrap() else {
            panic!("generate expected")
        };
        run_generate(g).unwrap();
        let text = std::fs::read_to_string(&clean).unwrap();
        assert_eq!(text.lines().count(), 2001);

        for (generator, extra) in
            [("rnoise", ["--alpha", "0.01"]), ("conoise", ["--iterations", "20"])]
        {
            let out = dir.path().join(format!("{generator}.parquet"));
            let mut args = vec![
                "noise",
                generator,
                "--data",
                clean.to_str().unwrap(),
                "--constraints",
                dcs.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ];
            args.extend(extra);
            let Command::Noise(n) = parse(&args).unwrap() else { panic!("noise expected") };
            run_noise(n).unwrap();
            assert!(out.exists());
        }
        // Refusals are messages, not panics.
        let Command::Noise(n) = parse(&[
            "noise",
            "rnoise",
            "--alpha",
            "0.1",
            "--data",
            clean.to_str().unwrap(),
            "--constraints",
            dcs.to_str().unwrap(),
            "--out",
            clean.to_str().unwrap(),
        ])
        .unwrap() else {
            panic!("noise expected")
        };
        assert!(run_noise(n).unwrap_err().to_string().contains("is the input file"));
        assert!(parse(&["generate", "tax", "--rows", "ten", "--out", "x.csv"]).is_err());
    }

    #[test]
    fn generate_shapes() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("cliques.parquet");
        let dcs = dir.path().join("cliques.dcs");
        let Command::Generate(g) = parse(&[
            "generate",
            "shapes",
            "--shape",
            "cliques",
            "--rows",
            "2e3",
            "--violations",
            "10",
            "--out",
            out.to_str().unwrap(),
            "--constraints-out",
            dcs.to_str().unwrap(),
        ])
        .unwrap() else {
            panic!("generate expected")
        };
        run_generate(g).unwrap();
        assert!(out.exists());
        assert_eq!(std::fs::read_to_string(&dcs).unwrap(), Shape::Cliques.constraints());
        // The constraint file is required; unknown shapes are refused.
        assert!(parse(&["generate", "shapes", "--shape", "hubs", "--out", "x.csv"]).is_err());
        assert!(
            parse(&[
                "generate",
                "shapes",
                "--shape",
                "stars",
                "--out",
                "x.csv",
                "--constraints-out",
                "x.dcs"
            ])
            .is_err()
        );
        // Too many violations is a message, not a panic.
        let Command::Generate(g) = parse(&[
            "generate",
            "shapes",
            "--shape",
            "order",
            "--rows",
            "5",
            "--violations",
            "5",
            "--out",
            out.to_str().unwrap(),
            "--constraints-out",
            dcs.to_str().unwrap(),
        ])
        .unwrap() else {
            panic!("generate expected")
        };
        assert!(run_generate(g).unwrap_err().to_string().contains("out of order"));
    }

    #[test]
    fn generate_nightly() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("year");
        let Command::Generate(g) = parse(&[
            "generate",
            "nightly",
            "--rows",
            "1e3",
            "--nights",
            "5",
            "--bursts",
            "2,4",
            "--seed",
            "7",
            "--out",
            out.to_str().unwrap(),
        ])
        .unwrap() else {
            panic!("generate expected")
        };
        run_generate(g).unwrap();
        let truth: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("nights.json")).unwrap())
                .unwrap();
        let bursts: Vec<bool> =
            truth["nights"].as_array().unwrap().iter().map(|n| n["burst"] == true).collect();
        assert_eq!(bursts, [false, true, false, true, false]);
        assert_eq!(truth["burst_rows"], 20, "2% of the rows by default");
        let night = std::fs::read_to_string(out.join("night-005.csv")).unwrap();
        assert_eq!(night.lines().count(), 1001);
        assert_eq!(
            std::fs::read_to_string(out.join("orders.dcs")).unwrap(),
            dpincon_generate::NIGHTLY_CONSTRAINTS
        );
        // A burst outside the year is a message, not a panic.
        let Command::Generate(g) = parse(&[
            "generate",
            "nightly",
            "--nights",
            "5",
            "--bursts",
            "9",
            "--out",
            out.to_str().unwrap(),
        ])
        .unwrap() else {
            panic!("generate expected")
        };
        assert!(run_generate(g).unwrap_err().to_string().contains("burst night 9"));
    }
}
