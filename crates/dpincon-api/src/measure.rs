//! The measures a job releases under DP: I_MI, I_P and I_R.

use crate::ParseError;
use crate::named::named;

/// A measure a job may release (`mi`, `p`, `r`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Measure {
    /// I_MI: conflicting row pairs.
    Mi,
    /// I_P: rows in some conflict.
    P,
    /// I_R: rows to delete to remove every conflict.
    R,
}

named!(Measure, refuse, {
    Mi => "mi",
    P => "p",
    R => "r",
});

/// I_D and I_MC are measures, but never released under DP.
fn refuse(s: &str) -> ParseError {
    match s {
        "d" | "mc" => ParseError::NotReleased(s.into()),
        other => ParseError::Measure(other.into()),
    }
}

impl Measure {
    /// What the measure counts, for people (reports).
    pub fn meaning(self) -> &'static str {
        match self {
            Measure::Mi => "I_MI: number of conflicting row pairs (edges of the conflict graph)",
            Measure::P => "I_P: number of rows involved in at least one conflict",
            Measure::R => "I_R: minimum number of rows to delete to remove every conflict",
        }
    }
}
