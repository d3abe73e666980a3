//! Rendering reports and writing them: all or nothing.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use dpincon_engine::Report;
use serde_json::Value;

pub fn json(report: &Report) -> Result<String, String> {
    serde_json::to_string_pretty(report).map(|s| s + "\n").map_err(|e| e.to_string())
}

/// The report for people. Works on the report's JSON so that a report
/// received from a coordinator renders the same as a local one.
pub fn table(report: &Report) -> String {
    match serde_json::to_value(report) {
        Ok(value) => table_of(&value),
        Err(e) => format!("cannot render the report: {e}\n"),
    }
}

/// A JSON value as text: strings without their quotes.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    }
}

/// [`table`] of a report's JSON.
pub fn table_of(report: &Value) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "data         {}", text(&report["data"]));
    let _ = writeln!(
        out,
        "constraints  {} ({} denial constraints)",
        text(&report["constraints"]),
        text(&report["constraint_count"])
    );
    for plan in report["detection"]["plans"].as_array().into_iter().flatten() {
        let _ = writeln!(
            out,
            "  line {:<4} {:<12} partition on {} attr.  {}",
            text(&plan["line"]),
            text(&plan["driver"]),
            text(&plan["partition_attributes"]),
            text(&plan["constraint"])
        );
    }
    let (m, b) = (&report["measures"], &report["budget"]);
    if m.is_object() && b.is_object() {
        let _ = writeln!(
            out,
            "\nDIFFERENTIALLY PRIVATE (ε = {} per measure, {} in total){}",
            text(&b["per_measure"]),
            text(&b["total"]),
            if report["seeded"] == true { "  [SEEDED TEST MODE: do not publish]" } else { "" }
        );
        let _ = writeln!(out, "  {:<18} {:>12} {:>23}  how", "measure", "value", "95% interval");
        let interval = |r: &Value| format!("[{}, {}]", text(&r["ci95"][0]), text(&r["ci95"][1]));
        for (name, key) in [("I_MI (pairs)", "mi"), ("I_P (rows)", "p")] {
            let r = &m[key];
            if r.is_object() {
                let _ = writeln!(
                    out,
                    "  {name:<18} {:>12} {:>23}  θ* = {} by {}{}; the interval holds {} itself \
                     (projection included) w.p. ≥ {}",
                    text(&r["value"]),
                    interval(r),
                    text(&r["theta"]),
                    text(&r["strategy"]),
                    if r["private"] == false { " (NON-PRIVATE strategy)" } else { "" },
                    &name[..name.find(' ').unwrap_or(name.len())],
                    text(&r["coverage"])
                );
            }
        }
        let r = &m["r"];
        if r.is_object() {
            let parts: Vec<String> = r["parts"]
                .as_array()
                .map(|parts| {
                    parts
                        .iter()
                        .map(|p| {
                            format!("{} at ε = {}", text(&p["statistic"]), text(&p["epsilon"]))
                        })
                        .collect()
                })
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  {:<18} {:>12} {:>23}  {} ({}); the interval holds I_R itself w.p. ≥ {}",
                "I_R (rows)",
                text(&r["value"]),
                interval(r),
                text(&r["method"]),
                parts.join(", "),
                text(&r["coverage"])
            );
        }
        let l = &b["ledger"];
        if l.is_object() {
            let cap =
                if l["cap"].is_null() { "no cap".into() } else { format!("cap {}", l["cap"]) };
            let _ = writeln!(
                out,
                "  ledger {}: spent {} of {cap}",
                text(&l["path"]),
                text(&l["spent_after"])
            );
        }
    }
    let np = &report["non_private"];
    if np.is_object() {
        let _ = writeln!(out, "\n{}", text(&np["label"]));
        let rows = [
            ("rows", text(&np["rows"])),
            ("edges (I_MI)", text(&np["edges"])),
            ("problematic (I_P)", text(&np["problematic"])),
            ("max degree", text(&np["max_degree"])),
            ("greedy cover (I_R <=)", text(&np["greedy_cover"])),
            ("I_R >=", text(&np["min_cover_lower_bound"])),
            ("LP relaxation of I_R", {
                let repair = &np["repair"];
                if repair.is_object() {
                    text(&repair["lp_relaxation"])
                } else {
                    "not computed (--memory-limit)".into()
                }
            }),
            ("min cover (I_R)", {
                let repair = &np["repair"];
                let bounds = &repair["min_cover_bounds"];
                if !repair.is_object() {
                    "not computed".into()
                } else if !repair["min_cover"].is_null() {
                    text(&repair["min_cover"])
                } else if bounds.is_array() {
                    format!("too slow: in [{}, {}]", text(&bounds[0]), text(&bounds[1]))
                } else {
                    "not computed".into()
                }
            }),
            ("drastic (I_D)", text(&np["drastic"])),
        ];
        for (name, value) in rows {
            let _ = writeln!(out, "  {name:<22} {:>14}", value);
        }
    }
    let t = &report["timings"];
    if t.is_object() {
        let secs = |k: &str| t[k].as_f64().unwrap_or(0.0);
        let _ = writeln!(
            out,
            "\ntime  read {:.2} s, detect {:.2} s, measures {:.2} s, total {:.2} s (non-private)",
            secs("read_s"),
            secs("detect_s"),
            secs("measures_s"),
            secs("total_s")
        );
    }
    out
}

/// Prints to standard output, or writes `path` through a temporary file and
/// a rename so a failed run never leaves half a report.
pub fn emit(text: &str, path: Option<&Path>) -> Result<(), String> {
    match path {
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(text.as_bytes())
                .and_then(|_| stdout.flush())
                .map_err(|e| e.to_string())
        }
        Some(path) => {
            let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            let mut tmp = tempfile::NamedTempFile::new_in(dir)
                .map_err(|e| format!("cannot write '{}': {e}", path.display()))?;
            tmp.write_all(text.as_bytes())
                .and_then(|_| tmp.as_file().sync_all())
                .map_err(|e| format!("cannot write '{}': {e}", path.display()))?;
            tmp.persist(path)
                .map_err(|e| format!("cannot write '{}': {}", path.display(), e.error))?;
            Ok(())
        }
    }
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
