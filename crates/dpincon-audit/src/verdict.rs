//! Noise-aware verdicts and exit codes.
//!
//! A released value carries noise, so a check compares the release's 95%
//! interval (public: it comes from the public noise scale, SPEC §8) with
//! the threshold instead of the noisy point value. For I_R the interval is
//! the engine's, which holds I_R itself, not only the noise.

use serde::Serialize;

/// The verdict of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The whole interval is at or below the threshold.
    Pass,
    /// The interval straddles the threshold: the noise hides the answer.
    Inconclusive,
    /// The whole interval is above the threshold.
    Fail,
    /// No release (the dataset was refused or errored).
    Error,
}

impl Verdict {
    /// Compares interval `[lo, hi]` with `threshold`, a maximum, or a
    /// minimum when `at_least` (a `min` check: pass when the whole
    /// interval is at or above it, fail when wholly below).
    pub fn judge(interval: [i64; 2], threshold: f64, at_least: bool) -> Verdict {
        if !at_least {
            return Verdict::of(interval, threshold);
        }
        let [lo, hi] = interval;
        if (lo as f64) >= threshold {
            Verdict::Pass
        } else if (hi as f64) < threshold {
            Verdict::Fail
        } else {
            Verdict::Inconclusive
        }
    }

    /// Compares interval `[lo, hi]` with `threshold` (a maximum).
    pub fn of(interval: [i64; 2], threshold: f64) -> Verdict {
        let [lo, hi] = interval;
        if (hi as f64) <= threshold {
            Verdict::Pass
        } else if (lo as f64) > threshold {
            Verdict::Fail
        } else {
            Verdict::Inconclusive
        }
    }

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Fail => "fail",
            Verdict::Error => "error",
        }
    }
}

/// The process exit status of an audit, as Soda's: 0 every check passed,
/// 1 some check inconclusive (or a `warn` check failed), 2 some check
/// failed, 3 an error (bad suite, a refused or failed dataset). The worst
/// outcome wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ExitStatus {
    /// 0.
    Pass = 0,
    /// 1.
    Warn = 1,
    /// 2.
    Fail = 2,
    /// 3.
    Error = 3,
}

impl ExitStatus {
    /// The status one check contributes.
    pub fn of(verdict: Verdict, warn_only: bool) -> ExitStatus {
        match verdict {
            Verdict::Pass => ExitStatus::Pass,
            Verdict::Inconclusive => ExitStatus::Warn,
            Verdict::Fail if warn_only => ExitStatus::Warn,
            Verdict::Fail => ExitStatus::Fail,
            Verdict::Error => ExitStatus::Error,
        }
    }

    /// The process exit code.
    pub fn code(self) -> u8 {
        self as u8
    }
}

/// Whether two nights' releases differ beyond their combined noise: the
/// difference's interval `[lo_b − hi_a, hi_b − lo_a]` (from both public
/// 95% intervals) excludes 0. By the union bound it covers the true
/// difference with probability ≥ 90%, so a flag is rarely noise.
pub fn changed(a: [i64; 2], b: [i64; 2]) -> bool {
    let lo = b[0] as i128 - a[1] as i128;
    let hi = b[1] as i128 - a[0] as i128;
    lo > 0 || hi < 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_against_threshold() {
        assert_eq!(Verdict::of([10, 20], 20.0), Verdict::Pass);
        assert_eq!(Verdict::of([10, 21], 20.0), Verdict::Inconclusive);
        assert_eq!(Verdict::of([20, 30], 20.0), Verdict::Inconclusive);
        assert_eq!(Verdict::of([21, 30], 20.0), Verdict::Fail);
        // A minimum mirrors it.
        assert_eq!(Verdict::judge([20, 30], 20.0, true), Verdict::Pass);
        assert_eq!(Verdict::judge([19, 30], 20.0, true), Verdict::Inconclusive);
        assert_eq!(Verdict::judge([10, 19], 20.0, true), Verdict::Fail);
        assert_eq!(Verdict::judge([10, 19], 20.0, false), Verdict::Pass);
    }

    #[test]
    fn worst_status_wins_and_codes_match_soda() {
        let all = [
            ExitStatus::of(Verdict::Pass, false),
            ExitStatus::of(Verdict::Fail, true),
            ExitStatus::of(Verdict::Inconclusive, false),
        ];
        assert_eq!(all.iter().max().unwrap().code(), 1);
        assert_eq!(ExitStatus::of(Verdict::Fail, false).code(), 2);
        assert_eq!(ExitStatus::of(Verdict::Error, false).code(), 3);
    }

    #[test]
    fn change_needs_disjoint_intervals() {
        assert!(!changed([0, 10], [10, 20]));
        assert!(changed([0, 10], [11, 20]));
        assert!(changed([11, 20], [0, 10]));
    }
}
