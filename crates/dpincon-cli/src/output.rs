//! Rendering reports and writing them: all or nothing.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use dpincon_api::Figure;
use dpincon_engine::OutputFile;
use dpincon_engine::Report;

/// Whether I_R's release narrows things down where a projected release
/// is swamped: its 95% interval is at most 1% of `rows` wide, `rows`
/// being the swamped release's public row bound (so [0, 6] rows on a
/// consistent table of 15,000, not [0, 200] on one of 300).
fn repair_decides(r: &dpincon_release::RepairRelease, rows: u64) -> bool {
    r.ci95[1].saturating_sub(r.ci95[0]).unsigned_abs().saturating_mul(100) <= rows
}

pub fn json(report: &Report) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(report)? + "\n")
}

/// The report for people (a local one, or one a coordinator sent).
///
/// # Errors
/// Where a release's fields could not have come from a release (a
/// coordinator's report that is not one): its noise cannot be rebuilt.
pub fn table(report: &Report) -> anyhow::Result<String> {
    let mut out = String::new();
    let _ = writeln!(out, "data         {}", report.data);
    let _ = writeln!(
        out,
        "constraints  {} ({} denial constraints)",
        report.constraints, report.constraint_count
    );
    for plan in &report.detection.plans {
        let _ = writeln!(
            out,
            "  line {:<4} {:<12} partition on {} attr.  {}",
            plan.line, plan.driver, plan.partition_attributes, plan.constraint
        );
    }
    if let (Some(m), Some(b)) = (&report.measures, &report.budget) {
        let _ = writeln!(
            out,
            "\nDIFFERENTIALLY PRIVATE (ε = {} per measure, {} in total){}",
            Figure(b.per_measure),
            Figure(b.total),
            if report.seeded { "  [SEEDED TEST MODE: do not publish]" } else { "" }
        );
        let _ = writeln!(out, "  {:<18} {:>12} {:>23}  how", "measure", "value", "95% interval");
        let interval = |ci: [i64; 2]| format!("[{}, {}]", ci[0], ci[1]);
        let mut notes = Vec::new();
        // The smallest public row bound among the swamped releases.
        let mut swamped_rows: Option<u64> = None;
        for (name, release) in [("I_MI (pairs)", &m.mi), ("I_P (rows)", &m.p)] {
            if let Some(r) = release {
                let short = &name[..name.find(' ').unwrap_or(name.len())];
                // Public values only: a reader should not act on a point
                // the noise alone could have made. The test reads the
                // noise's 95% half-width (about three scales): with the
                // scale itself, a release of pure noise (a consistent table
                // under a loose bound) escaped the note whenever its draw
                // passed one scale, one run in five.
                let halfwidth = r.noise()?.ci95_halfwidth();
                if halfwidth >= r.value.max(1).unsigned_abs() {
                    notes.push(format!(
                        "  note: {short} is mostly noise here (its noise is within ±{halfwidth} \
                         in 95% of runs, against a value of {}): read its interval, not the point",
                        r.value
                    ));
                    let rows = r.bounds.and_then(|b| b.rows).unwrap_or(0);
                    swamped_rows = Some(swamped_rows.map_or(rows, |s| s.min(rows)));
                }
                let _ = writeln!(
                    out,
                    "  {name:<18} {:>12} {:>23}  θ* = {} by {}{}; the interval holds {} itself \
                     (projection included) w.p. ≥ {}",
                    r.value,
                    interval(r.ci95),
                    r.theta,
                    r.strategy,
                    if r.private { "" } else { " (NON-PRIVATE strategy)" },
                    short,
                    Figure(r.coverage)
                );
            }
        }
        if let Some(r) = &m.r {
            let parts: Vec<String> = r
                .parts
                .iter()
                .map(|p| format!("{} at ε = {}", p.statistic, Figure(p.epsilon)))
                .collect();
            let _ = writeln!(
                out,
                "  {:<18} {:>12} {:>23}  {} ({}); the interval holds I_R itself w.p. ≥ {}",
                "I_R (rows)",
                r.value,
                interval(r.ci95),
                r.method,
                parts.join(", "),
                Figure(r.coverage)
            );
        }
        // Where a loose degree bound swamps a projected release, I_R is
        // often still decisive (node sensitivity 1 whatever the degrees:
        // release README, "I_R"); say so where its interval is narrow.
        // Public figures only, as above.
        let decides = |r: &&dpincon_release::RepairRelease| {
            swamped_rows.is_some_and(|rows| repair_decides(r, rows))
        };
        if let Some(r) = m.r.as_ref().filter(decides) {
            notes.push(format!(
                "  note: I_R, whose node sensitivity is 1 whatever the degrees, is not swamped: \
                 {} rows, within {}",
                r.value,
                interval(r.ci95)
            ));
        }
        for note in notes {
            let _ = writeln!(out, "{note}");
        }
        if let Some(l) = &b.ledger {
            let cap = l.cap.map_or_else(|| "no cap".into(), |c| format!("cap {}", Figure(c)));
            let _ = writeln!(out, "  ledger {}: spent {} of {cap}", l.path, Figure(l.spent_after));
        }
    }
    if let Some(np) = &report.non_private {
        let _ = writeln!(out, "\n{}", np.label);
        let repair = np.repair.as_ref();
        let rows = [
            ("rows", np.rows.to_string()),
            ("edges (I_MI)", np.edges.to_string()),
            ("problematic (I_P)", np.problematic.to_string()),
            ("max degree", np.max_degree.to_string()),
            ("greedy cover (I_R <=)", np.greedy_cover.to_string()),
            ("I_R >=", np.min_cover_lower_bound.to_string()),
            (
                "LP relaxation of I_R",
                repair.map_or_else(
                    || "not computed (--memory-limit)".into(),
                    |r| Figure(r.lp_relaxation).to_string(),
                ),
            ),
            (
                "min cover (I_R)",
                match repair.map(|r| (r.min_cover, r.min_cover_bounds)) {
                    Some((Some(v), _)) => v.to_string(),
                    Some((None, Some([lo, hi]))) => format!("too slow: in [{lo}, {hi}]"),
                    _ => "not computed".into(),
                },
            ),
            ("drastic (I_D)", np.drastic.to_string()),
        ];
        for (name, value) in rows {
            let _ = writeln!(out, "  {name:<22} {:>14}", value);
        }
    }
    if let Some(t) = &report.timings {
        let _ = writeln!(
            out,
            "\ntime  read {:.2} s, detect {:.2} s, measures {:.2} s, total {:.2} s (non-private)",
            t.read_s, t.detect_s, t.measures_s, t.total_s
        );
    }
    Ok(out)
}

/// Prints to standard output, or writes `path` whole or not at all
/// ([`OutputFile`]: a failed run never leaves half a report, and
/// `/dev/null` or a FIFO is written in place). A new file is its owner's
/// only (0600): a report may hold exact values.
pub fn emit(text: &str, path: Option<&Path>) -> anyhow::Result<()> {
    let Some(path) = path else {
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(text.as_bytes()).and_then(|_| stdout.flush())?;
        return Ok(());
    };
    let fail = |e: std::io::Error| anyhow::anyhow!("cannot write '{}': {e}", path.display());
    let mut out = OutputFile::create_private(path).map_err(fail)?;
    out.write_all(text.as_bytes()).map_err(fail)?;
    out.commit().map_err(fail)
}

pub fn utility_table(report: &dpincon_engine::experiment::UtilityReport) -> String {
    let mut out = format!(
        "{}\nε = {} per measure, {} seeded runs per row\n\n{:<4} {:<22} {:>10} {:>10} {:>10} {:>10}\n",
        report.label,
        report.epsilon,
        report.runs,
        "",
        "strategy",
        "exact",
        "mean RE",
        "median RE",
        "mean θ*"
    );
    for row in &report.rows {
        let theta = row.mean_theta.map_or("-".to_string(), |t| format!("{t:.1}"));

        let _ = writeln!(
            out,
            "{:<4} {:<22} {:>10} {:>10.3} {:>10.3} {:>10}",
            row.measure,
            row.strategy,
            row.exact,
            row.mean_relative_error,
            row.median_relative_error,
            theta
        );
    }
    if let Some(r) = &report.repair {
        let min = match (r.min_cover, r.min_cover_bounds) {
            (Some(v), _) => v.to_string(),
            (_, Some([lo, hi])) => format!("not computed (too slow), in [{lo}, {hi}]"),
            _ => "not computed".into(),
        };
        let _ = writeln!(
            out,
            "\nI_R: minimum cover {min}; LP relaxation {}; greedy cover {}",
            r.lp_relaxation, r.greedy_cover
        );
    }
    out
}
