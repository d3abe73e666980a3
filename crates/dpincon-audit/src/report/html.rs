//! `report.html`: one self-contained page (inline CSS and SVG, no script):
//! a summary table, each check's history with its 95% band (plotters),
//! budget gauges and what each measure means.

use std::fmt::Write;

use plotters::prelude::*;

use super::escape;
use dpincon_api::{Figure, Measure};

use crate::history::Trend;
use crate::outcome::{CheckResult, DatasetStatus};
use crate::{AuditRun, Verdict};

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1100px}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}\
th{background:#f3f3f3}.pass{background:#d9f2d9}.fail{background:#f8d0d0}.inconclusive{background:#fff1c2}\
.error{background:#e6d0f0}.gauge{width:260px;height:14px;background:#eee;border:1px solid #999;display:inline-block;vertical-align:middle}\
.gauge>div{height:100%;background:#4a7bd0}.chart{display:inline-block;margin:0.5em 1em 1em 0}\
.note{color:#555;font-size:90%}.testclock{background:#fff1c2;border:2px solid #c90;padding:6px 10px}\
.hollow{display:inline-block;width:7px;height:7px;border:2px solid #00f;border-radius:50%;background:#fff}";

/// The HTML report of `run`, with the history `trends` (this run included).
pub fn render(run: &AuditRun, trends: &[Trend]) -> String {
    let mut out = String::new();
    let title = format!("dpincon audit: {}", escape(&run.suite));
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>\
         <style>{STYLE}</style></head><body>\n<h1>{title}</h1>\n"
    );
    let _ = writeln!(
        out,
        "<p>Overall: <b class=\"{0}\">{0}</b> (exit code {1}). Every number below is a \
         differentially private release or a public setting; verdicts compare each release's \
         95% interval with the threshold.</p>",
        run.status_name(),
        run.exit_code
    );
    if let Some(as_of) = &run.test_clock {
        let _ = writeln!(
            out,
            "<p class=\"testclock\" id=\"test-clock\"><b>TEST CLOCK:</b> this run is dated \
             {} by <code>--as-of</code> (test mode), not by when it ran: a replay, not a \
             night's audit.</p>",
            escape(as_of)
        );
    }
    if run.datasets.iter().any(|d| d.seeded) {
        out.push_str(
            "<p class=\"note\"><b>Seeded noise:</b> test mode, not a release to publish.</p>\n",
        );
    }
    summary(&mut out, run);
    budgets(&mut out, run);
    out.push_str("<h2>History</h2>\n<p class=\"note\">Points are nightly releases, the band their 95% interval, the red line the threshold; a ringed point changed beyond the combined noise of two nights.");
    if trends.iter().any(|t| t.points.iter().any(|p| p.reserved)) {
        let _ = write!(
            out,
            "</p>\n<p class=\"note\" id=\"legend-reserved\"><span class=\"hollow\"></span> A hollow point is a \
             re-served night: the dataset's declared version was unchanged, so the earlier \
             release was served again (no new release, no ε spent)."
        );
    }
    if trends.iter().any(|t| t.points.iter().any(|p| p.gated)) {
        let _ = write!(
            out,
            "</p>\n<p class=\"note\" id=\"legend-gated\">A small pale point is a gated \
             night: the measure stayed within its epoch's gate, so the epoch's release stands, \
             with the gate's interval (the band: its bands widened by α, holding the measure \
             with probability ≥ 1 − β), and no ε was spent. A full point is a fresh release."
        );
    }
    out.push_str("</p>\n");
    for t in trends {
        let _ = writeln!(
            out,
            "<div class=\"chart\" data-check=\"{}\"><h3>{} <small>({})</small></h3>{}</div>",
            escape(&t.check),
            escape(&t.check),
            escape(&t.dataset),
            chart(t)
        );
    }
    out.push_str("<h2>What the measures mean</h2>\n<ul>\n");
    for m in Measure::ALL {
        let _ = writeln!(out, "<li><b>{m}</b>: {}</li>", escape(m.meaning()));
    }
    out.push_str(
        "</ul>\n<p class=\"note\">A check passes when the whole 95% interval is at or below \
         its threshold, fails when it is wholly above, and is inconclusive otherwise: the noise \
         hides the answer.</p>\n\
         <p class=\"note\" id=\"coverage\">Every interval holds the measure itself (I_MI and \
         I_P with the projection's bias included) with probability at least 95%, so a PASS is \
         wrong at most 5% of the time, and so is a FAIL. Where the release's degree bound θ may \
         have cut many conflicts the interval's upper end is wide, and a check is inconclusive \
         rather than a PASS it could not back.</p>\n</body></html>\n",
    );
    out
}

impl AuditRun {
    fn status_name(&self) -> &'static str {
        match self.exit_code {
            0 => "pass",
            1 => "inconclusive",
            2 => "fail",
            _ => "error",
        }
    }
}

fn summary(out: &mut String, run: &AuditRun) {
    out.push_str(
        "<h2>Checks</h2>\n<table id=\"summary\"><tr><th>Check</th><th>Dataset</th><th>Measure</th>\
         <th>Threshold</th><th>Release</th><th>95% interval</th><th>Verdict</th><th>Why</th></tr>\n",
    );
    for c in run.checks() {
        row(out, c);
    }
    out.push_str("</table>\n");
}

fn row(out: &mut String, c: &CheckResult) {
    let value = c.value.map_or("—".into(), |v| v.to_string());
    let ci = c.ci95.map_or("—".into(), |[lo, hi]| format!("[{lo}, {hi}]"));
    let v = c.verdict.name();
    let _ = writeln!(
        out,
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}{}</td><td>{value}</td><td>{ci}</td>\
         <td class=\"{v}\">{v}{}</td><td>{}</td></tr>",
        escape(&c.name),
        escape(&c.dataset),
        c.measure,
        if c.at_least { "≥ " } else { "" },
        c.threshold,
        if c.warn_only && c.verdict == Verdict::Fail { " (warn)" } else { "" },
        escape(&c.message)
    );
}

fn budgets(out: &mut String, run: &AuditRun) {
    out.push_str(
        "<h2>Privacy budget</h2>\n<table id=\"budget\"><tr><th>Dataset</th><th>Status</th>\
         <th>ε spent / cap</th><th>Gauge</th><th>ε per run</th><th>Nights left</th>\
         <th>Plan</th></tr>\n",
    );
    for d in &run.datasets {
        let b = &d.budget;
        let spent = if d.status == DatasetStatus::Ran { b.spent + b.per_run } else { b.spent };
        let pct = if b.cap > 0.0 { (100.0 * spent / b.cap).clamp(0.0, 100.0) } else { 100.0 };
        // A fixed public reason (never the engine's words), so no escaping.
        let why = d.error.map_or("", |r| r.text());
        let status = match d.status {
            DatasetStatus::Ran => "ran".to_string(),
            DatasetStatus::Refused => format!("refused: {why}"),
            DatasetStatus::Error => format!("error: {why}"),
            DatasetStatus::Reserved => format!(
                "re-served: version {} unchanged (job {})",
                escape(d.version.as_deref().unwrap_or("")),
                escape(d.reserved_from.as_ref().map_or("", |f| f.job_id.as_str()))
            ),
        };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{status}</td><td>{} / {}</td>\
             <td><span class=\"gauge\" title=\"{pct:.0}% spent\"><div style=\"width:{pct:.1}%\"></div></span> {pct:.0}%</td>\
             <td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&d.name),
            Figure(spent),
            Figure(b.cap),
            Figure(b.per_run),
            b.nights_left,
            b.plan.as_ref().map_or(String::new(), |p| format!(
                "gated: {} fresh releases left of {} planned over {} nights (ε {} each, \
                 {} planned)",
                p.refreshes_left,
                p.refreshes_planned,
                p.horizon_nights,
                Figure(p.epoch_epsilon),
                Figure(p.planned)
            ))
        );
    }
    out.push_str("</table>\n");
}

/// A chart's width in pixels: 440 for a few weeks of nights, growing by
/// two pixels a night past 150 (a year of nights gets 870) up to 1,200,
/// so each night keeps room for its point.
fn chart_width(nights: usize) -> u32 {
    (440 + 2 * nights.saturating_sub(150)).min(1200) as u32
}

/// The history chart of one check as inline SVG.
fn chart(t: &Trend) -> String {
    let mut svg = String::new();
    let n = t.points.len();
    let lo = t.points.iter().map(|p| p.ci95[0] as f64).fold(f64::INFINITY, f64::min);
    let hi = t.points.iter().map(|p| p.ci95[1] as f64).fold(f64::NEG_INFINITY, f64::max);
    let threshold = t.points.last().map_or(0.0, |p| p.threshold);
    let (y0, y1) = (lo.min(threshold).min(0.0), hi.max(threshold));
    let pad = ((y1 - y0) * 0.08).max(1.0);
    let drawn = (|| -> Result<(), Box<dyn std::error::Error + '_>> {
        let root = SVGBackend::with_string(&mut svg, (chart_width(n), 260)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut c = ChartBuilder::on(&root)
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(60)
            .build_cartesian_2d(-0.5f64..(n as f64 - 0.5).max(0.5), (y0 - pad)..(y1 + pad))?;
        // Nights are whole numbers (1 = oldest); releases are integers.
        let night = |x: &f64| {
            if x.fract() == 0.0 && *x >= 0.0 { format!("{}", *x as i64 + 1) } else { String::new() }
        };
        c.configure_mesh()
            .light_line_style(TRANSPARENT)
            .x_labels(n.clamp(2, 12) * 2 + 1)
            .x_label_formatter(&night)
            .y_label_formatter(&|y: &f64| format!("{y:.0}"))
            .x_desc("night")
            .y_desc(t.measure.name())
            .draw()?;
        let band: Vec<(f64, f64)> = (t.points.iter().enumerate())
            .map(|(i, p)| (i as f64, p.ci95[1] as f64))
            .chain(t.points.iter().enumerate().rev().map(|(i, p)| (i as f64, p.ci95[0] as f64)))
            .collect();
        if n == 1 {
            let p = &t.points[0];
            c.draw_series(std::iter::once(Rectangle::new(
                [(-0.2, p.ci95[0] as f64), (0.2, p.ci95[1] as f64)],
                BLUE.mix(0.2).filled(),
            )))?;
        } else {
            c.draw_series(std::iter::once(Polygon::new(band, BLUE.mix(0.2).filled())))?;
        }
        let values: Vec<(f64, f64)> =
            t.points.iter().enumerate().map(|(i, p)| (i as f64, p.value as f64)).collect();
        c.draw_series(LineSeries::new(values.clone(), BLUE.stroke_width(2)))?;
        // A re-served night is the same release again: hollow, not a new point.
        let reserved = |reserved: bool| {
            t.points.iter().zip(&values).filter(move |(p, _)| p.reserved == reserved)
        };
        // A gated night re-serves its epoch's release: small and pale.
        let fresh = reserved(false).filter(|(p, _)| !p.gated);
        c.draw_series(fresh.map(|(_, &v)| Circle::new(v, 3, BLUE.filled())))?;
        let gated = reserved(false).filter(|(p, _)| p.gated);
        c.draw_series(gated.map(|(_, &v)| Circle::new(v, 2, BLUE.mix(0.45).filled())))?;
        c.draw_series(reserved(true).map(|(_, &v)| Circle::new(v, 4, WHITE.filled())))?;
        c.draw_series(reserved(true).map(|(_, &v)| Circle::new(v, 4, BLUE.stroke_width(2))))?;
        c.draw_series(
            t.points
                .iter()
                .zip(&values)
                .filter(|(p, _)| p.changed)
                .map(|(_, &v)| Circle::new(v, 7, RED.stroke_width(2))),
        )?;
        c.draw_series(LineSeries::new(
            [(-0.5, threshold), ((n as f64 - 0.5).max(0.5), threshold)],
            RED.stroke_width(2),
        ))?;
        root.present()?;
        Ok(())
    })();
    match drawn {
        Ok(()) => svg,
        Err(e) => format!("<p>chart unavailable: {}</p>", escape(&e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_year_of_nights_gets_a_wider_chart() {
        assert_eq!((chart_width(1), chart_width(150)), (440, 440));
        assert_eq!(chart_width(365), 870);
        assert_eq!(chart_width(10_000), 1200);
        let t = Trend {
            dataset: "d".into(),
            check: "c".into(),
            measure: Measure::R,
            points: (0..365)
                .map(|i| crate::history::Point {
                    started_unix: i,
                    value: 50,
                    ci95: [40, 60],
                    threshold: 100.0,
                    verdict: "pass".into(),
                    changed: false,
                    test_clock: true,
                    reserved: false,
                    gated: i % 2 == 0,
                })
                .collect(),
        };
        assert!(chart(&t).contains("width=\"870\""), "the SVG is 870 wide");
    }
}
