//! `dpincon-cli experiment sweep`: error against ε for every strategy and
//! the oracle, written as CSV, a JSON summary and one SVG chart per measure.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use dpincon_api::Measure;
use dpincon_engine::experiment::{ORACLE, SweepOptions, SweepReport, projection_curve, sweep};
use plotters::prelude::*;

use crate::JobArgs;
use crate::experiment_io::{self, epsilon_bar};
use crate::output::emit;

#[derive(Debug, clap::Args)]
pub struct SweepArgs {
    #[command(flatten)]
    job: JobArgs,
    /// ε values per measure to sweep.
    #[arg(long, value_delimiter = ',', default_value = "0.1,0.2,0.5,1,2,5")]
    epsilons: Vec<f64>,
    /// Seeded runs per (ε, strategy).
    #[arg(long, default_value_t = 20)]
    runs: usize,
    /// Strategies to compare (default: all).
    #[arg(long, value_delimiter = ',')]
    strategies: Option<Vec<String>>,
    /// Directory for sweep.csv, sweep.json and one SVG chart per measure.
    #[arg(long)]
    out: PathBuf,
}

pub async fn run_sweep(args: SweepArgs) -> anyhow::Result<()> {
    let job = args.job.job()?;
    let strategies = crate::parse_strategies(args.strategies.as_deref())?;
    let (job, loaded, seed) =
        experiment_io::load(job, "the sweep", &args.epsilons, args.runs, &args.out).await?;
    let curve = projection_curve(&loaded, 2000);
    let bar = epsilon_bar("sweep", args.epsilons.len());
    let options = SweepOptions { epsilons: args.epsilons, strategies, runs: args.runs, seed };
    let report = sweep(&job, &loaded, &curve, &options, &|| bar.inc(1))?;
    bar.finish_and_clear();
    emit(&csv(&report), Some(&args.out.join("sweep.csv")))?;
    let json = serde_json::to_string_pretty(&report)? + "\n";
    emit(&json, Some(&args.out.join("sweep.json")))?;
    let mut charts = Vec::new();
    for measure in Measure::ALL {
        if report.rows.iter().any(|r| r.row.measure == measure) {
            let path = args.out.join(format!("sweep-{measure}.svg"));
            chart(&report, measure, &path)?;
            charts.push(path.display().to_string());
        }
    }
    println!(
        "{}\nwrote {}, {} and {}",
        report.label,
        args.out.join("sweep.csv").display(),
        args.out.join("sweep.json").display(),
        charts.join(", ")
    );
    print!("{}", summary(&report));
    Ok(())
}

fn csv(report: &SweepReport) -> String {
    let mut out = String::from(
        "epsilon,measure,strategy,exact,mean_relative_error,median_relative_error,mean_theta\n",
    );
    for r in &report.rows {
        let theta = r.row.mean_theta.map_or(String::new(), |t| format!("{t:.1}"));
        let _ = writeln!(
            out,
            "{},{},{},{},{:.6},{:.6},{}",
            r.epsilon,
            r.row.measure,
            r.row.strategy,
            r.row.exact,
            r.row.mean_relative_error,
            r.row.median_relative_error,
            theta
        );
    }
    out
}

/// Mean relative error per strategy (rows) and ε (columns), per measure.
fn summary(report: &SweepReport) -> String {
    let mut epsilons: Vec<f64> = report.rows.iter().map(|r| r.epsilon).collect();
    epsilons.dedup();
    let mut out = String::new();
    for measure in Measure::ALL {
        let series = series(report, measure);
        if series.is_empty() {
            continue;
        }
        let _ = write!(out, "\n{measure:<18}");
        for e in &epsilons {
            let _ = write!(out, " {:>8}", format!("ε={e}"));
        }
        out.push('\n');
        for (strategy, points) in &series {
            let _ = write!(out, "{strategy:<18}");
            for e in &epsilons {
                match points.iter().find(|(x, _)| x == e) {
                    Some((_, y)) => {
                        let _ = write!(out, " {y:>8.3}");
                    }
                    None => out.push_str("        -"),
                }
            }
            out.push('\n');
        }
    }
    out
}

fn series(report: &SweepReport, measure: Measure) -> BTreeMap<&str, Vec<(f64, f64)>> {
    let mut series: BTreeMap<&str, Vec<(f64, f64)>> = BTreeMap::new();
    for r in report.rows.iter().filter(|r| r.row.measure == measure) {
        series.entry(&r.row.strategy).or_default().push((r.epsilon, r.row.mean_relative_error));
    }
    series
}

/// Error against ε on log axes, a line per strategy, the oracle dashed.
fn chart(report: &SweepReport, measure: Measure, path: &Path) -> anyhow::Result<()> {
    let series = series(report, measure);
    let points = series.values().flatten();
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in points {
        x0 = x0.min(x);
        x1 = x1.max(x);
        let y = y.max(1e-4);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    let title = match measure {
        Measure::Mi => "I_MI (conflicting pairs)",
        Measure::P => "I_P (rows in a conflict)",
        Measure::R => "I_R (rows to delete)",
    };
    experiment_io::svg(path, |root| {
        let mut chart = experiment_io::frame(root, &format!("{title}: mean relative error vs ε"))
            .build_cartesian_2d(
            (x0 * 0.9..x1 * 1.1).log_scale(),
            (y0 * 0.8..y1 * 1.25).log_scale(),
        )?;
        let swept: Vec<f64> = series.values().flatten().map(|&(x, _)| x).collect();
        let tick = |x: &f64| {
            if swept.iter().any(|e| (e - x).abs() < 1e-9 * e) {
                format!("{x}")
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .light_line_style(TRANSPARENT)
            .x_labels(64)
            .x_label_formatter(&tick)
            .x_desc("ε per measure")
            .y_desc(format!("mean relative error ({} runs)", report.runs))
            .draw()?;
        for (i, (strategy, points)) in series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let data: Vec<(f64, f64)> = points.iter().map(|&(x, y)| (x, y.max(1e-4))).collect();
            let style = if *strategy == ORACLE {
                ShapeStyle::from(&BLACK).stroke_width(3)
            } else {
                ShapeStyle::from(&color).stroke_width(2)
            };
            let label = if *strategy == ORACLE || *strategy == "baseline-truemax" {
                format!("{strategy} (non-private)")
            } else {
                strategy.to_string()
            };
            experiment_io::line(&mut chart, label, data, style, 3)?;
        }
        experiment_io::legend(&mut chart, SeriesLabelPosition::UpperRight)
    })
}
