//! What a run needs besides the suite: its clock (now, or a test clock),
//! its test options and the releases it may re-serve.
//!
//! The test clock (`--as-of DATE`) exists so that a script can replay a
//! year of nights in minutes: each run is dated by it instead of now, and
//! that date is the only time the audit uses (`started_unix`: trends,
//! reports, "re-served since"). It is test mode and says so everywhere
//! ([`crate::AuditRun::test_clock`]).

use std::collections::BTreeMap;

use crate::history::{History, HistoryEpochs, StoredRelease};
use crate::time::{iso8601, parse_as_of};
use crate::{AuditError, Suite};

/// The context of one run of a suite.
#[derive(Debug, Clone, Default)]
pub struct RunContext {
    /// The run's start, seconds since the epoch: now, or the test clock's.
    pub started_unix: u64,
    /// TEST MODE: `--as-of`'s value, when it set `started_unix`.
    pub test_clock: Option<String>,
    /// Seed the noise (test mode; every report says so).
    pub seed: Option<u64>,
    /// The last release of each dataset that declares a version, by
    /// dataset name ([`History::last_release`]): what it may re-serve.
    pub releases: BTreeMap<String, StoredRelease>,
    /// The epochs of each gated dataset as the history shows them, by
    /// dataset name ([`History::epochs`]).
    pub epochs: BTreeMap<String, HistoryEpochs>,
}

impl RunContext {
    /// A run starting now with nothing to re-serve.
    pub fn now(seed: Option<u64>) -> RunContext {
        RunContext { started_unix: now(), seed, ..RunContext::default() }
    }

    /// A run of `suite`, recorded in `history`: dated `as_of` (a test
    /// clock: a date at 00:00 in the suite's time zone, or an RFC 3339
    /// instant) or now, with the last release of each versioned dataset.
    /// An `as_of` before the suite's latest run in the history is refused
    /// (its trends would go back in time).
    pub fn load(
        suite: &Suite,
        history: &History,
        as_of: Option<&str>,
        seed: Option<u64>,
    ) -> Result<RunContext, AuditError> {
        let started_unix = match as_of {
            None => now(),
            Some(text) => {
                let at = parse_as_of(text, suite.zone())?;
                if let Some(latest) = history.latest_started(&suite.name)?
                    && at < latest
                {
                    let date = |t| iso8601(t, suite.zone());
                    return Err(AuditError::TestClock(format!(
                        "--as-of {text} ({}) is earlier than the latest run of suite '{}' in \
                         the history ({}): nights are recorded in order",
                        date(at),
                        suite.name,
                        date(latest)
                    )));
                }
                at
            }
        };
        let mut releases = BTreeMap::new();
        for d in suite.datasets.iter().filter(|d| d.version_source().is_some()) {
            if let Some(last) = history.last_release(&suite.name, &d.name)? {
                releases.insert(d.name.clone(), last);
            }
        }
        let mut epochs = BTreeMap::new();
        for d in suite.datasets.iter().filter(|d| d.gate.is_some()) {
            epochs.insert(d.name.clone(), history.epochs(&suite.name, &d.name)?);
        }
        let test_clock = as_of.map(str::to_string);
        Ok(RunContext { started_unix, test_clock, seed, releases, epochs })
    }
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}
