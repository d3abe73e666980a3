//! `dpincon-cli experiment coverage`: how often each measure's interval
//! holds the exact value, and how often audit verdicts drawn from it are
//! wrong, over seeded runs; written as CSV, JSON and one SVG chart.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use dpincon_api::Measure;
use dpincon_engine::experiment::{CoverageOptions, CoverageReport, coverage};
use plotters::prelude::*;

use crate::JobArgs;
use crate::experiment_io::{self, epsilon_bar};
use crate::output::emit;

#[derive(Debug, clap::Args)]
pub struct CoverageArgs {
    #[command(flatten)]
    job: JobArgs,
    /// ε values per measure.
    #[arg(long, value_delimiter = ',', default_value = "0.5,1,2")]
    epsilons: Vec<f64>,
    /// Seeded runs per ε (Monte Carlo error of a 95% coverage: about
    /// 0.22/√runs).
    #[arg(long, default_value_t = 200)]
    runs: usize,
    /// Directory for coverage.csv, coverage.json and coverage.svg.
    #[arg(long)]
    out: PathBuf,
}

pub async fn run_coverage(args: CoverageArgs) -> anyhow::Result<()> {
    let job = args.job.job()?;
    let (job, loaded, seed) =
        experiment_io::load(job, "the coverage experiment", &args.epsilons, args.runs, &args.out)
            .await?;
    let bar = epsilon_bar("coverage", args.epsilons.len());
    let options = CoverageOptions { epsilons: args.epsilons, runs: args.runs, seed };
    let report = coverage(&job, &loaded, &options, &|| bar.inc(1))?;
    bar.finish_and_clear();
    let (csv_path, json_path, svg_path) = (
        args.out.join("coverage.csv"),
        args.out.join("coverage.json"),
        args.out.join("coverage.svg"),
    );
    emit(&csv(&report), Some(&csv_path))?;
    let json = serde_json::to_string_pretty(&report)? + "\n";
    emit(&json, Some(&json_path))?;
    chart(&report, &svg_path)?;
    println!(
        "{}\nwrote {}, {} and {}",
        report.label,
        csv_path.display(),
        json_path.display(),
        svg_path.display()
    );
    print!("{}", summary(&report));
    Ok(())
}

fn csv(report: &CoverageReport) -> String {
    let mut out = String::from(
        "epsilon,measure,exact,runs,covered,coverage,point_outside,median_relative_width,\
         mean_relative_error,noise_only_coverage,noise_only_median_width,verdicts,wrong_verdicts,\
         between_runs,between_passes\n",
    );
    for r in &report.rows {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{:.4},{},{:.6},{:.6},{},{},{},{},{},{}",
            r.epsilon,
            r.measure,
            r.exact,
            r.runs,
            r.covered,
            r.coverage,
            r.point_outside,
            r.median_relative_width,
            r.mean_relative_error,
            r.noise_only_coverage.map_or(String::new(), |c| format!("{c:.4}")),
            r.noise_only_median_width.map_or(String::new(), |w| format!("{w:.6}")),
            r.verdicts,
            r.wrong_verdicts,
            r.between_runs,
            r.between_passes
        );
    }
    out
}

fn summary(report: &CoverageReport) -> String {
    let mut out = format!(
        "\n{:<6} {:<4} {:>10} {:>9} {:>8} {:>10} {:>9} {:>17} {:>15} {:>16}\n",
        "ε",
        "",
        "exact",
        "coverage",
        "outside",
        "med.width",
        "mean.err",
        "wrong verdict",
        "pass between",
        "noise-only cov/w"
    );
    for r in &report.rows {
        let rate = |a: usize, b: usize| {
            if b == 0 { "-".to_string() } else { format!("{:.3} ({a}/{b})", a as f64 / b as f64) }
        };
        let _ = writeln!(
            out,
            "{:<6} {:<4} {:>10} {:>9.3} {:>8} {:>10.3} {:>9.3} {:>17} {:>15} {:>16}",
            r.epsilon,
            r.measure,
            r.exact,
            r.coverage,
            r.point_outside,
            r.median_relative_width,
            r.mean_relative_error,
            rate(r.wrong_verdicts, r.verdicts),
            rate(r.between_passes, r.between_runs),
            match (r.noise_only_coverage, r.noise_only_median_width) {
                (Some(c), Some(w)) => format!("{c:.3} / {w:.3}"),
                _ => "-".into(),
            }
        );
    }
    out
}

/// Coverage per ε, a line per measure, the stated level dashed.
fn chart(report: &CoverageReport, path: &Path) -> anyhow::Result<()> {
    let epsilons: Vec<f64> = {
        let mut e: Vec<f64> = report.rows.iter().map(|r| r.epsilon).collect();
        e.dedup();
        e
    };
    let (x0, x1) =
        (epsilons.first().copied().unwrap_or(1.0), epsilons.last().copied().unwrap_or(1.0));
    let y0 = report.rows.iter().map(|r| r.coverage).fold(report.stated - 0.05, f64::min).max(0.0);
    experiment_io::svg(path, |root| {
        let mut chart = experiment_io::frame(root, "How often the 95% interval holds the measure")
            .build_cartesian_2d((x0 * 0.8..x1 * 1.25).log_scale(), y0..1.005)?;
        chart
            .configure_mesh()
            .light_line_style(TRANSPARENT)
            .x_desc("ε per measure")
            .y_desc("coverage")
            .draw()?;
        let stated = report.stated;
        let dashed = ShapeStyle::from(&BLACK).stroke_width(1);
        chart
            .draw_series(DashedLineSeries::new(
                [(x0 * 0.8, stated), (x1 * 1.25, stated)],
                6,
                4,
                dashed,
            ))?
            .label(format!("stated {stated}"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], dashed));
        for (i, (measure, title)) in
            [(Measure::Mi, "I_MI"), (Measure::P, "I_P"), (Measure::R, "I_R")]
                .into_iter()
                .enumerate()
        {
            let data: Vec<(f64, f64)> = report
                .rows
                .iter()
                .filter(|r| r.measure == measure)
                .map(|r| (r.epsilon, r.coverage))
                .collect();
            if data.is_empty() {
                continue;
            }
            let style = ShapeStyle::from(&Palette99::pick(i).to_rgba()).stroke_width(2);
            experiment_io::line(&mut chart, title.to_string(), data, style, 4)?;
        }
        experiment_io::legend(&mut chart, SeriesLabelPosition::LowerRight)
    })
}
