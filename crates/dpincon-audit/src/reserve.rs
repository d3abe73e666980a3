//! Re-serving: while a dataset's declared public version is unchanged, a
//! run does not release again; it serves the last release once more, as
//! post-processing, at no ε. That is what lets nightly audits of tables
//! that change monthly last a year on one budget.
//!
//! The decision reads public inputs only: the declared version
//! ([`crate::version`], never a hash, size or time of the table), the
//! suite's release settings and the history's last release. So it reveals
//! nothing about the rows, and what it serves is a function of an earlier
//! DP release: no ε is spent, no ledger is touched, and the engine never
//! runs. Thresholds are not release settings: a changed threshold is judged
//! again on the stored 95% interval, which is post-processing too.

use std::collections::BTreeMap;

use dpincon_engine::Measure;

use crate::checks::{Released, check_results};
use crate::context::RunContext;
use crate::history::StoredRelease;
use crate::outcome::{DatasetBudget, DatasetResult, DatasetStatus};
use crate::reason::Failure;
use crate::suite::Dataset;

pub use crate::outcome::{ReleaseSettings, ReservedFrom};
use crate::time::{Tz, iso8601};

impl ReleaseSettings {
    /// The settings of `d`'s release in this run; `None` when the
    /// constraint file cannot be read (then the job fails on it anyway).
    pub fn of(d: &Dataset, seeded: bool) -> Option<ReleaseSettings> {
        let mut measures = d.measures.clone();
        measures.sort();
        measures.dedup();
        Some(ReleaseSettings {
            epsilon: d.epsilon,
            measures,
            max_rows: d.max_rows(),
            constraints: std::fs::read_to_string(&d.constraints).ok()?,
            seeded,
        })
    }
}

/// A dataset's declared version, as this run read it, with its settings.
#[derive(Debug, Clone)]
pub(crate) struct Declared {
    version: String,
    settings: Option<ReleaseSettings>,
}

/// What to do with one dataset in this run.
pub(crate) enum Plan {
    /// Release afresh; a declared version and the settings are recorded.
    Release(Option<Declared>),
    /// Serve the stored release again: nothing runs, nothing is charged.
    Reserve(Declared, StoredRelease),
    /// The declared version cannot be read: refuse before any work.
    Unreadable(Failure),
}

/// The plan for `d`: re-serve when it declares a version equal to that of
/// its last release in the history (a run that released it, or that
/// re-served one) and the release settings are equal too.
pub(crate) fn plan(d: &Dataset, ctx: &RunContext) -> Plan {
    let version = match d.read_version() {
        Ok(Some(v)) => v,
        Ok(None) => return Plan::Release(None),
        Err(f) => return Plan::Unreadable(f),
    };
    let declared = Declared { version, settings: ReleaseSettings::of(d, ctx.seed.is_some()) };
    match ctx.releases.get(&d.name) {
        Some(last)
            if last.version.as_ref() == Some(&declared.version)
                && declared.settings.is_some()
                && last.settings == declared.settings =>
        {
            Plan::Reserve(declared, last.clone())
        }
        _ => Plan::Release(Some(declared)),
    }
}

impl Plan {
    /// `result` with the declared version and settings recorded (what a
    /// later run compares with).
    pub(crate) fn record(self, mut result: DatasetResult) -> DatasetResult {
        if let Plan::Release(Some(declared)) | Plan::Reserve(declared, _) = self {
            result.version = Some(declared.version);
            result.settings = declared.settings;
        }
        result
    }
}

/// "re-served: version X unchanged since DATE" (DATE in `zone`, else UTC).
pub fn note(version: &str, since_unix: u64, zone: Option<Tz>) -> String {
    format!("re-served: version {version} unchanged since {}", iso8601(since_unix, zone))
}

/// `d`'s result when it re-serves `last`: each check judged on the stored
/// release of its measure against today's threshold, the budget untouched
/// (`per_run` 0: this night spends nothing).
pub(crate) fn reserved(
    d: &Dataset,
    declared: Declared,
    last: StoredRelease,
    budget: DatasetBudget,
    zone: Option<Tz>,
) -> DatasetResult {
    let note = note(&declared.version, last.from.started_unix, zone);
    // One release per measure; every check of a measure shows the same
    // one, so a check added or renamed since reads it too.
    let stored: BTreeMap<Measure, Released> = last
        .checks
        .iter()
        .filter_map(|c| {
            let (value, ci95, epsilon) = (c.value?, c.ci95?, c.epsilon?);
            Some((c.measure, Released { value, ci95, epsilon, gate: None }))
        })
        .collect();
    let mut checks = check_results(d, None, |measure| stored.get(&measure).cloned());
    for c in &mut checks {
        c.message = match c.ci95 {
            Some(_) => format!("{note}; {}", c.message),
            None => format!(
                "no value: the re-served release has no check on {} ({note}); a new version \
                 releases it",
                c.measure
            ),
        };
    }
    let seeded = declared.settings.as_ref().is_some_and(|s| s.seeded);
    DatasetResult {
        name: d.name.clone(),
        data: d.source_name().display().to_string(),
        status: DatasetStatus::Reserved,
        budget: DatasetBudget { per_run: 0.0, refused: None, ..budget },
        job_id: None,
        seeded,
        error: None,
        checks,
        version: Some(declared.version),
        settings: declared.settings,
        reserved_from: Some(last.from),
    }
}

#[cfg(test)]
#[path = "reserve_tests.rs"]
mod tests;
