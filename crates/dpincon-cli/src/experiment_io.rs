//! What the `experiment sweep` and `experiment coverage` commands share: checks, loading, files, charts.

use std::error::Error;
use std::path::Path;

use dpincon_engine::{JobConfig, LoadedJob};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use plotters::coord::CoordTranslate;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::progress;

/// Checks an experiment's options, creates `out` and loads the table with
/// the job's seed (1 unless given); `what` names the experiment in errors.
pub async fn load(
    mut job: JobConfig,
    what: &str,
    epsilons: &[f64],
    runs: usize,
    out: &Path,
) -> anyhow::Result<(JobConfig, LoadedJob, u64)> {
    if !job.test.non_private {
        return Err(anyhow::anyhow!(
            "{what} scores releases against exact values: it is NON-PRIVATE and needs \
             --non-private"
        ));
    }
    if runs == 0 {
        return Err(anyhow::anyhow!("--runs must be at least 1"));
    }
    for &epsilon in epsilons {
        dpincon_engine::validate::check_epsilon("--epsilons: every ε", epsilon)?;
    }
    std::fs::create_dir_all(out)
        .map_err(|e| anyhow::anyhow!("cannot create '{}': {e}", out.display()))?;
    let seed = job.test.seed.unwrap_or(1);
    job.test.seed = Some(seed);
    let loaded = dpincon_engine::load(&job, &progress::Bar::new()).await?;
    Ok((job, loaded, seed))
}

/// A bar on standard error over the ε values, named `name`.
pub fn epsilon_bar(name: &str, epsilons: usize) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(epsilons as u64), ProgressDrawTarget::stderr());
    let template = format!("{name} {{bar:30}} {{pos}}/{{len}} [{{elapsed_precise}}]");
    bar.set_style(ProgressStyle::with_template(&template).expect("valid template"));
    bar
}

/// The result of drawing on a chart.
pub type Drawn = Result<(), Box<dyn Error>>;

/// Draws an 800×520 SVG chart at `path` on a white ground.
pub fn svg(
    path: &Path,
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Drawn,
) -> anyhow::Result<()> {
    let drawn = || -> Drawn {
        let root = SVGBackend::new(path, (800, 520)).into_drawing_area();
        root.fill(&WHITE)?;
        draw(&root)?;
        root.present()?;
        Ok(())
    };
    drawn().map_err(|e| anyhow::anyhow!("cannot draw '{}': {e}", path.display()))
}

/// The charts' frame: a caption, margins and room for the axis labels.
pub fn frame<'a, 'b, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    caption: &str,
) -> ChartBuilder<'a, 'b, DB> {
    let mut builder = ChartBuilder::on(root);
    builder
        .caption(caption, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60);
    builder
}

/// One labelled series: a line through `data` with a dot of `radius` at each point.
pub fn line<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    label: String,
    data: Vec<(f64, f64)>,
    style: ShapeStyle,
    radius: i32,
) -> Drawn
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    CT: CoordTranslate<From = (f64, f64)>,
{
    chart
        .draw_series(LineSeries::new(data.clone(), style))?
        .label(label)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
    chart.draw_series(data.into_iter().map(|p| Circle::new(p, radius, style.filled())))?;
    Ok(())
}

/// The legend box at `position`.
pub fn legend<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> Drawn
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    CT: CoordTranslate,
{
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(position)
        .draw()?;
    Ok(())
}
