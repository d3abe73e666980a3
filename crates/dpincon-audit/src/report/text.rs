//! The run and the history as lines for people: what `dpincon-cli audit`
//! prints on standard output, and what the Python package's
//! `AuditResult.summary()` returns. Like the other reports it is rendered
//! from the [`AuditRun`] alone, so it holds only DP releases, public
//! settings and fixed failure reasons (never a [`crate::Detail`]).

use std::fmt::Write;

use dpincon_api::Figure;

use crate::AuditRun;
use crate::history::Trend;
use crate::reserve;
use crate::time::{Tz, iso8601};

/// One line a check (verdict, name, message), the test clock if any, and
/// one line a dataset (its failure, or its budget); dates in `zone`, UTC
/// without one.
pub fn summary(run: &AuditRun, zone: Option<Tz>) -> String {
    let mut out = String::new();
    // `writeln!` into a String cannot fail.
    let mut line = |text: std::fmt::Arguments| {
        let _ = writeln!(out, "{text}");
    };
    for c in run.checks() {
        line(format_args!("{:<13} {:<28} {}", c.verdict.name().to_uppercase(), c.name, c.message));
    }
    if let Some(as_of) = &run.test_clock {
        line(format_args!("TEST CLOCK: this run is dated {as_of} (--as-of), not by when it ran"));
    }
    for d in &run.datasets {
        let b = &d.budget;
        match (&d.error, &d.reserved_from, &d.version, &b.plan) {
            (Some(e), ..) => line(format_args!("dataset {}: {:?}: {e}", d.name, d.status)),
            (None, Some(from), Some(version), _) => line(format_args!(
                "dataset {}: {} (job {}): nothing charged, ε spent {} of {}, {} nights \
                 left at this rate",
                d.name,
                reserve::note(version, from.started_unix, zone),
                from.job_id,
                Figure(b.spent),
                Figure(b.cap),
                b.nights_left
            )),
            (None, _, _, Some(p)) => line(format_args!(
                "dataset {}: gated, ε {} charged tonight; lifetime ε spent {} of {} \
                 ({} planned over {} nights), {} fresh releases left of {} planned",
                d.name,
                Figure(b.per_run),
                Figure(p.spent),
                Figure(b.cap),
                Figure(p.planned),
                p.horizon_nights,
                p.refreshes_left,
                p.refreshes_planned
            )),
            _ => line(format_args!(
                "dataset {}: ε spent {} of {}, {} left, {} nights left at this rate",
                d.name,
                Figure(b.spent + b.per_run),
                Figure(b.cap),
                Figure(b.remaining),
                b.nights_left
            )),
        }
    }
    out
}

/// Each check's nights (`dpincon-cli audit history`), dated in ISO 8601 in
/// `zone` (UTC without one); a night dated by a test clock or re-served
/// says so, and a change beyond the noise of two nights is flagged.
pub fn trends(trends: &[Trend], zone: Option<Tz>) -> String {
    let mut out = String::new();
    for t in trends {
        let _ = writeln!(out, "{} ({}, {}):", t.check, t.dataset, t.measure);
        for p in &t.points {
            let _ = writeln!(
                out,
                "  {}  {:>10}  [{}, {}]  {:<12}{}{}{}",
                iso8601(p.started_unix, zone),
                p.value,
                p.ci95[0],
                p.ci95[1],
                p.verdict,
                if p.changed { "  CHANGED beyond the noise" } else { "" },
                if p.reserved { "  re-served" } else { "" },
                if p.test_clock { "  (test clock)" } else { "" }
            );
        }
    }
    out
}
