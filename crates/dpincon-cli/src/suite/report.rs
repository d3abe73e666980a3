//! What `experiment suite` writes and prints: `summary.json` (typed), the
//! text table, and `suite.svg` (worst ratio to the oracle per family and
//! strategy at ε = 1). The figures come from the engine's `judge`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use dpincon_api::Measure;
use dpincon_engine::experiment::judge::{
    self, FamilySummary, LofoChoice, cases, least_worst, lofo,
};
use dpincon_engine::experiment::{SuiteCell, SuiteConfig};
use plotters::prelude::*;
use serde::Serialize;

use super::SuiteArgs;
use crate::experiment_io;

/// One table's run.
#[derive(Debug, Clone, Serialize)]
pub struct TableRun {
    /// The table.
    pub name: String,
    /// Its family.
    pub family: String,
    /// Rows.
    pub rows: u64,
    /// I_MI, exact.
    pub edges: u64,
    /// I_P, exact.
    pub problematic: u64,
    /// The largest degree.
    pub max_degree: u32,
    /// Passes over the edges beyond the oracle's curve.
    pub passes: usize,
    /// Configurations that failed on it.
    pub failures: Vec<String>,
    /// Seconds: reading, detection and every run.
    pub seconds: f64,
}

/// Cases passing a criterion, of those it applies to.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Count {
    /// Passing.
    pub pass: usize,
    /// Judged.
    pub cases: usize,
}

/// The pass criteria over every case of the default.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Criteria {
    /// I_MI ≤ max(0.10, 3 × oracle).
    pub mi_within_oracle_limit: Count,
    /// I_P ≤ max(0.15, 3 × oracle).
    pub p_within_oracle_limit: Count,
    /// I_MI: default ≤ max(1.25 × best other, best other + 0.02).
    pub mi_within_others_limit: Count,
    /// I_P: the same.
    pub p_within_others_limit: Count,
}

/// The configuration with the least worst ratio over every family.
#[derive(Debug, Clone, Serialize)]
pub struct OverallChoice {
    /// `mi` or `p`.
    pub measure: Measure,
    /// The configuration.
    pub chosen: String,
    /// Its worst ratio over every case.
    pub worst_ratio: f64,
    /// The default's.
    pub default_worst_ratio: f64,
}

/// `summary.json`.
#[derive(Debug, Clone, Serialize)]
pub struct SuiteSummary {
    /// Always the NON-PRIVATE label.
    pub label: &'static str,
    /// The manifest scored.
    pub manifest: Option<PathBuf>,
    /// The public tables, if scored.
    pub public_data: Option<PathBuf>,
    /// The list of further tables, if scored.
    pub tables_list: Option<PathBuf>,
    /// Judged from this cells.csv instead of run.
    pub cells: Option<PathBuf>,
    /// ε per measure.
    pub epsilons: Vec<f64>,
    /// Seeded runs per cell.
    pub runs: usize,
    /// Runs re-measuring a default or I_R cell's coverage read below 95%
    /// (none when judged from a written cells.csv: its run's setting).
    pub confirm_runs: Option<usize>,
    /// The first seed.
    pub seed: u64,
    /// The configurations, the default first.
    pub configs: Vec<String>,
    /// The default.
    pub default: String,
    /// The configurations the default must not lose to: the other plain
    /// strategies.
    pub others: Vec<String>,
    /// Each table's run.
    pub tables: Vec<TableRun>,
    /// Per family × ε × measure.
    pub families: Vec<FamilySummary>,
    /// The pass criteria.
    pub criteria: Criteria,
    /// Leave-one-family-out (with `--lofo`).
    pub lofo: Vec<LofoChoice>,
    /// The least worst configuration over everything, per measure.
    pub overall: Vec<OverallChoice>,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// The summary of `cells` under `configs` (the default first).
pub fn summarize(
    args: &SuiteArgs,
    configs: &[String],
    cells: &[SuiteCell],
    tables: Vec<TableRun>,
    seconds: f64,
) -> SuiteSummary {
    let default = configs[0].clone();
    let others: Vec<String> = configs[1..]
        .iter()
        .filter(|c| c.parse::<SuiteConfig>().is_ok_and(|c| c.is_plain()))
        .cloned()
        .collect();
    let families = judge::family_summaries(cells, &default, &others);
    let mut criteria = Criteria::default();
    for f in &families {
        let (oracle, rest) = match f.measure {
            Measure::Mi => {
                (&mut criteria.mi_within_oracle_limit, &mut criteria.mi_within_others_limit)
            }
            Measure::P => {
                (&mut criteria.p_within_oracle_limit, &mut criteria.p_within_others_limit)
            }
            Measure::R => continue,
        };
        oracle.pass += f.within_oracle_limit;
        oracle.cases += f.cases;
        rest.pass += f.within_others_limit;
        rest.cases += f.cases;
    }
    let all = cases(cells);
    let mut overall = Vec::new();
    let mut choices = Vec::new();
    for measure in [Measure::Mi, Measure::P] {
        let of: Vec<_> = all.iter().filter(|c| c.measure == measure).collect();
        if let Some((chosen, worst)) = least_worst(&of, configs) {
            overall.push(OverallChoice {
                measure,
                chosen,
                worst_ratio: worst,
                default_worst_ratio: judge::worst_ratio(&of, &default),
            });
        }
        if args.lofo {
            choices.extend(lofo(cells, configs, measure));
        }
    }
    SuiteSummary {
        label: dpincon_engine::NON_PRIVATE_LABEL,
        manifest: args.manifest.clone(),
        public_data: args.public_data.clone(),
        tables_list: args.tables.clone(),
        cells: args.cells.clone(),
        epsilons: args.epsilons.clone(),
        runs: args.runs,
        confirm_runs: args.cells.is_none().then_some(args.confirm_runs),
        seed: args.seed,
        configs: configs.to_vec(),
        default,
        others,
        tables,
        families,
        criteria,
        lofo: choices,
        overall,
        seconds,
    }
}

fn num(v: Option<f64>, width: usize) -> String {
    match v {
        Some(v) if v.is_infinite() => format!("{:>width$}", "∞"),
        Some(v) => format!("{v:>width$.3}"),
        None => format!("{:>width$}", "-"),
    }
}

/// `pass/cases`, or `-` where the criterion does not apply.
fn judged(applies: bool, pass: usize, cases: usize) -> String {
    if applies { format!("{pass}/{cases}") } else { "-".into() }
}

/// The printed report.
pub fn text(s: &SuiteSummary) -> String {
    let mut out = format!(
        "\n{} runs per cell; default {}; ratio = max(err, 0.01) / max(oracle, 0.01), worst over \
         the family's tables; best other among {}\ncov.min as read; conf.: {}\n\n",
        s.runs,
        s.default,
        s.others.join(", "),
        match s.confirm_runs {
            Some(0) => "nothing re-measured (--confirm-runs 0)".to_string(),
            Some(n) => format!("each cell read below 95% re-measured over {n} runs on fresh seeds"),
            None =>
                "each cell read below 95% as re-measured by the run that wrote the cells".into(),
        }
    );
    let _ = writeln!(
        out,
        "{:<14} {:>4} {:<3} {:>3} {:>8} {:>8}  {:<22} {:>7}  {:<28} {:>7} {:>7} {:>9} {:>6} {:>6}",
        "family",
        "ε",
        "",
        "n",
        "default",
        "oracle",
        "best other (err)",
        "worst",
        "at table",
        "cov.min",
        "conf.",
        "med.width",
        "≤lim",
        "≤oth"
    );
    for f in &s.families {
        let other = match (&f.best_other, f.best_other_error) {
            (Some(o), Some(e)) => format!("{o} {e:.3}"),
            _ => "-".into(),
        };
        let _ = writeln!(
            out,
            "{:<14} {:>4} {:<3} {:>3} {:>8.3} {}  {:<22} {}  {:<28} {} {} {} {:>6} {:>6}",
            f.family,
            f.epsilon,
            f.measure,
            f.cases,
            f.default_error,
            num(f.oracle_error, 8),
            other,
            num(f.worst_ratio, 7),
            f.worst_table.as_deref().unwrap_or("-"),
            num(f.min_coverage, 7),
            num(f.min_confirmed_coverage, 7),
            num(f.median_width, 9),
            judged(f.measure != Measure::R, f.within_oracle_limit, f.cases),
            judged(f.measure != Measure::R, f.within_others_limit, f.cases),
        );
    }
    let c = &s.criteria;
    let count = |c: Count| format!("{}/{}", c.pass, c.cases);
    let _ = writeln!(
        out,
        "\nPass criteria (issue 49), cases (table × ε) of {}:\n  I_MI ≤ max(0.10, 3 × oracle): \
         {}\n  I_P  ≤ max(0.15, 3 × oracle): {}\n  default ≤ max(1.25 × best other, best other \
         + 0.02): I_MI {}, I_P {}",
        s.default,
        count(c.mi_within_oracle_limit),
        count(c.p_within_oracle_limit),
        count(c.mi_within_others_limit),
        count(c.p_within_others_limit)
    );
    for o in &s.overall {
        let _ = writeln!(
            out,
            "Least worst ratio over every case, {}: {} ({:.2}; the default {:.2})",
            o.measure, o.chosen, o.worst_ratio, o.default_worst_ratio
        );
    }
    if !s.lofo.is_empty() {
        let _ = writeln!(
            out,
            "\nLeave one family out: chosen on the other families by least worst ratio, scored on \
             the one left out\n{:<3} {:<14} {:<18} {:>8}  {:>8} {:>8} {:>6}  {:>8}  {:<18} {:>8}",
            "",
            "held out",
            "chosen",
            "train",
            "worst",
            "mean err",
            "≤lim",
            "default",
            "hindsight",
            "worst"
        );
        for l in &s.lofo {
            let _ = writeln!(
                out,
                "{:<3} {:<14} {:<18} {}  {} {:>8.3} {:>6}  {}  {:<18} {}",
                l.measure,
                l.held_out,
                l.chosen,
                num(Some(l.training_worst), 8),
                num(Some(l.held_out_worst), 8),
                l.held_out_error,
                format!("{}/{}", l.held_out_within_limit, l.held_out_cases),
                num(Some(l.default_worst), 8),
                l.hindsight,
                num(Some(l.hindsight_worst), 8)
            );
        }
    }
    out
}

/// Per family, each configuration's worst ratio.
type FamilyWorst<'c> = Vec<(&'c str, Vec<f64>)>;

/// Worst ratio to the oracle per family (x) of each plain strategy (a line),
/// I_MI above and I_P below, at ε = 1 (or the ε nearest it).
pub fn chart(
    cells: &[SuiteCell],
    configs: &[SuiteConfig],
    epsilons: &[f64],
    path: &Path,
) -> anyhow::Result<()> {
    let epsilon = epsilons
        .iter()
        .copied()
        .min_by(|a, b| (a.ln().abs()).total_cmp(&b.ln().abs()))
        .unwrap_or(1.0);
    let plain: Vec<String> =
        configs.iter().filter(|c| c.is_plain()).map(ToString::to_string).collect();
    let panels: Vec<(Measure, FamilyWorst<'_>)> = [Measure::Mi, Measure::P]
        .into_iter()
        .map(|m| (m, judge::worst_by_family(cells, &plain, epsilon, m)))
        .collect();
    let finite = panels.iter().flat_map(|(_, f)| f.iter().flat_map(|(_, w)| w.iter()));
    let top = finite.filter(|w| w.is_finite()).fold(2.0f64, |a, &w| a.max(w)) * 1.3;
    experiment_io::svg(path, |root| {
        let halves = root.split_evenly((2, 1));
        for (area, (measure, families)) in halves.iter().zip(&panels) {
            let title = match *measure {
                Measure::Mi => format!("I_MI: worst ratio to the oracle per family, ε = {epsilon}"),
                _ => format!("I_P: worst ratio to the oracle per family, ε = {epsilon}"),
            };
            let n = families.len().max(1);
            let names: Vec<&str> = families.iter().map(|(f, _)| *f).collect();
            let mut chart = experiment_io::frame(area, &title)
                .build_cartesian_2d(-0.5..(n as f64 - 0.5), (0.8..top).log_scale())?;
            let label = |x: &f64| {
                let i = x.round();
                if (x - i).abs() < 1e-6 && i >= 0.0 {
                    names.get(i as usize).map_or(String::new(), |s| s.to_string())
                } else {
                    String::new()
                }
            };
            chart
                .configure_mesh()
                .light_line_style(TRANSPARENT)
                .x_labels(n)
                .x_label_formatter(&label)
                .x_label_style(("sans-serif", 10))
                .y_desc("worst max(err,.01)/max(oracle,.01)")
                .draw()?;
            for (i, config) in plain.iter().enumerate() {
                let data: Vec<(f64, f64)> = families
                    .iter()
                    .enumerate()
                    .filter(|(_, (_, w))| w[i].is_finite())
                    .map(|(x, (_, w))| (x as f64, w[i].max(0.8)))
                    .collect();
                let width = if i == 0 { 3 } else { 1 };
                let style = ShapeStyle::from(&Palette99::pick(i).to_rgba()).stroke_width(width);
                experiment_io::line(&mut chart, config.clone(), data, style, 3)?;
            }
            experiment_io::legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        }
        Ok(())
    })
}
