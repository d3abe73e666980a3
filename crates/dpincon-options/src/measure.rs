//! The measures a job releases under DP: I_MI, I_P and I_R.

use std::fmt;
use std::str::FromStr;

use dpincon_release::ProjectedMeasure;
use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error};

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

impl Measure {
    /// Every measure, in release order.
    pub const ALL: [Measure; 3] = [Measure::Mi, Measure::P, Measure::R];

    /// The name jobs and reports use.
    pub fn name(self) -> &'static str {
        match self {
            Measure::Mi => "mi",
            Measure::P => "p",
            Measure::R => "r",
        }
    }

    /// The measure as graph projection releases it (`None` for I_R).
    pub fn projected(self) -> Option<ProjectedMeasure> {
        match self {
            Measure::Mi => Some(ProjectedMeasure::Mi),
            Measure::P => Some(ProjectedMeasure::P),
            Measure::R => None,
        }
    }
}

impl From<ProjectedMeasure> for Measure {
    fn from(m: ProjectedMeasure) -> Self {
        match m {
            ProjectedMeasure::Mi => Measure::Mi,
            ProjectedMeasure::P => Measure::P,
        }
    }
}

impl fmt::Display for Measure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Measure {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "mi" => Ok(Measure::Mi),
            "p" => Ok(Measure::P),
            "r" => Ok(Measure::R),
            "d" | "mc" => Err(format!(
                "measure '{s}' is not released under DP (SPEC §3: I_D has sensitivity 1 on a \
                 0/1 value; I_MC is #P-complete): use mi, p or r"
            )),
            other => Err(format!("unknown measure '{other}' (use mi, p, r)")),
        }
    }
}

impl Serialize for Measure {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Measure {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?.parse().map_err(D::Error::custom)
    }
}
