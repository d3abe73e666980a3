//! A dataset's checks judged on its releases: a fresh night's report, a
//! gated night's epochs, or a re-served night's stored release.

use dpincon_engine::gate::GateOutcome;
use dpincon_engine::{Measure, Report};

use crate::outcome::{CheckGate, CheckResult};
use crate::reason::Reason;
use crate::suite::Dataset;
use crate::verdict::Verdict;

/// `d`'s checks judged on `release(measure)`; without one a check is an
/// error, for `error` (no release at all) or for a missing measure.
pub(crate) fn check_results(
    d: &Dataset,
    error: Option<Reason>,
    release: impl Fn(Measure) -> Option<Released>,
) -> Vec<CheckResult> {
    d.checks
        .iter()
        .map(|c| {
            let threshold = c.threshold(d.max_rows());
            let release = release(c.measure);
            let release = release.as_ref();
            let value = release.map(|r| r.value);
            let ci95 = release.map(|r| r.ci95);
            let epsilon = release.map(|r| r.epsilon);
            let at_least = c.at_least();
            let verdict = ci95.map_or(Verdict::Error, |i| Verdict::judge(i, threshold, at_least));
            let (op, side, other) =
                if at_least { ("≥", "above", "below") } else { ("≤", "below", "above") };
            let message = match (verdict, ci95) {
                (Verdict::Pass, Some([lo, hi])) => format!(
                    "{} {op} {threshold}: the 95% interval [{lo}, {hi}] lies at or {side} it",
                    c.measure
                ),
                (Verdict::Fail, Some([lo, hi])) => {
                    let not = if at_least { "<" } else { ">" };
                    format!(
                        "{} {not} {threshold}: the 95% interval [{lo}, {hi}] lies {other} it",
                        c.measure
                    )
                }
                (Verdict::Inconclusive, Some([lo, hi])) => format!(
                    "inconclusive: the 95% interval [{lo}, {hi}] contains the threshold {threshold}; \
                     the noise hides the answer (more ε or a looser threshold would decide it)"
                ),
                _ => match error {
                    Some(reason) => format!("no release: {reason}"),
                    None => "no release: the measure is missing from the report".to_string(),
                },
            };
            let passed = release.and_then(|r| r.gate.as_ref()).filter(|g| g.outcome == GateOutcome::Pass);
            let message = match passed {
                Some(g) => format!(
                    "gated (no ε; the gate's interval, α = {} at β = {}): {message}",
                    g.alpha, g.beta
                ),
                None => message,
            };
            CheckResult {
                at_least,
                gate: release.and_then(|r| r.gate.clone()),
                name: c.name.clone(),
                dataset: d.name.clone(),
                measure: c.measure,
                threshold,
                value,
                ci95,
                epsilon,
                verdict,
                warn_only: c.warn_only(),
                message,
            }
        })
        .collect()
}

/// What a check reads of a measure's release: its point value, interval
/// and ε (I_R's release has the same three).
#[derive(Clone)]
pub(crate) struct Released {
    pub(crate) value: i64,
    pub(crate) ci95: [i64; 2],
    pub(crate) epsilon: f64,
    /// A gated night's view of the measure's epoch.
    pub(crate) gate: Option<CheckGate>,
}

/// The release of `measure` (`mi`, `p` or `r`) in `report`, if any.
pub(crate) fn released(report: &Report, measure: Measure) -> Option<Released> {
    // A gated night: the gate's value and interval (a fresh one's are the
    // release's), and the epoch.
    if let Some(gated) = &report.gated {
        let g = gated.iter().find(|g| g.measure == measure)?;
        let gate = Some(CheckGate::of(g));
        let epsilon = g.epoch.release_epsilon;
        return Some(Released { value: g.value, ci95: g.ci95, epsilon, gate });
    }
    let m = report.measures.as_ref()?;
    let (value, ci95, epsilon) = match measure {
        Measure::Mi => m.mi.as_ref().map(|r| (r.value, r.ci95, r.epsilon)),
        Measure::P => m.p.as_ref().map(|r| (r.value, r.ci95, r.epsilon)),
        Measure::R => m.r.as_ref().map(|r| (r.value, r.ci95, r.epsilon)),
    }?;
    Some(Released { value, ci95, epsilon, gate: None })
}
