//! The projected measures I_MI and I_P: their value on f(G_θ) and their
//! sensitivity at θ (SPEC §4).

use std::fmt;

use dpincon_measures::ProjectedCounts;
use serde::{Deserialize, Serialize};

/// Sensitivity of the stable-order greedy cover size (SPEC §5, Proposition 3).
pub const COVER_SENSITIVITY: u64 = 2;

/// The measures released through graph projection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProjectedMeasure {
    /// I_MI: conflicting pairs.
    Mi,
    /// I_P: tuples in some conflict.
    P,
}

impl ProjectedMeasure {
    /// f(G_θ).
    pub fn value(self, counts: &ProjectedCounts) -> u64 {
        match self {
            ProjectedMeasure::Mi => counts.edges,
            ProjectedMeasure::P => counts.problematic,
        }
    }

    /// Node sensitivity of f∘π_θ: θ for I_MI, θ + 1 for I_P. The paper's
    /// Lemma 1 claims θ for I_P; SPEC §6.1 gives the counterexample.
    pub fn sensitivity(self, theta: u32) -> u64 {
        match self {
            ProjectedMeasure::Mi => u64::from(theta),
            ProjectedMeasure::P => u64::from(theta) + 1,
        }
    }

    /// Sensitivity of the EM quality function over candidates up to θmax:
    /// θmax for I_MI (Lemma 2), 2·θmax for I_P (SPEC §6.2: the projection's
    /// I_P is not monotone in node addition).
    pub fn quality_sensitivity(self, theta_max: u32) -> u64 {
        match self {
            ProjectedMeasure::Mi => u64::from(theta_max),
            ProjectedMeasure::P => 2 * u64::from(theta_max),
        }
    }

    /// The measure as graph projection releases it (`None` for I_R).
    pub fn of(m: dpincon_api::Measure) -> Option<Self> {
        match m {
            dpincon_api::Measure::Mi => Some(ProjectedMeasure::Mi),
            dpincon_api::Measure::P => Some(ProjectedMeasure::P),
            dpincon_api::Measure::R => None,
        }
    }

    /// Short name used in reports (`mi`, `p`).
    pub fn name(self) -> &'static str {
        match self {
            ProjectedMeasure::Mi => "mi",
            ProjectedMeasure::P => "p",
        }
    }
}

impl From<ProjectedMeasure> for dpincon_api::Measure {
    fn from(m: ProjectedMeasure) -> Self {
        match m {
            ProjectedMeasure::Mi => dpincon_api::Measure::Mi,
            ProjectedMeasure::P => dpincon_api::Measure::P,
        }
    }
}

impl fmt::Display for ProjectedMeasure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_projected_measure_is_the_job_measure_of_its_name() {
        for m in dpincon_api::Measure::ALL {
            assert_eq!(ProjectedMeasure::of(m).map(dpincon_api::Measure::from).unwrap_or(m), m);
            assert_eq!(ProjectedMeasure::of(m).map_or("r", |p| p.name()), m.name());
        }
    }
}
