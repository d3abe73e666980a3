//! The θ-selection strategies (SPEC §4) and the quality scores their
//! selection steps rank candidates by.

use std::fmt;
use std::str::FromStr;

use dpincon_mechanisms::Score;
use serde::{Deserialize, Serialize};

use crate::{ProjectedMeasure, ProjectionTable, ReleaseError};

/// How θ* is chosen for a projected measure (SPEC §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum Strategy {
    /// θ* = n_max, the public row bound; the whole budget goes to the release.
    #[serde(rename = "baseline-nmax")]
    BaselineNmax,
    /// θ* = the true maximum degree. NON-PRIVATE: for experiments only.
    #[serde(rename = "baseline-truemax")]
    BaselineTruemax,
    /// One exponential mechanism over the candidates with ε1.
    #[serde(rename = "em")]
    Em,
    /// Two-step hierarchical EM, ε1/2 each; step 2 keeps θ ≤ θ*1.
    #[serde(rename = "hem")]
    Hem,
    /// A noisy degree upper bound from the equality constraints prunes the
    /// candidates, then `hem` (the paper's Algorithm 4, generalised).
    #[serde(rename = "ub-hem")]
    UbHem,
    /// The generalized exponential mechanism (SPEC §4.1) over a halving grid
    /// from n_max: each candidate judged with its own sensitivity.
    #[serde(rename = "gem")]
    Gem,
    /// A tight noisy degree bound d̃ over the minimal equality sets caps the
    /// grid, then `gem` below it.
    #[serde(rename = "ub-gem")]
    UbGem,
    /// θ* = d̃ itself: no selection step, so nearly all of ε goes to the
    /// release and θ* truncates nothing whenever d̃ bounds the degrees. Falls
    /// back to `gem` when some constraint has no equality (public).
    #[default]
    #[serde(rename = "ub-direct")]
    UbDirect,
}

impl Strategy {
    /// Every strategy, in the order reports list them.
    pub const ALL: [Strategy; 8] = [
        Strategy::BaselineNmax,
        Strategy::BaselineTruemax,
        Strategy::Em,
        Strategy::Hem,
        Strategy::UbHem,
        Strategy::Gem,
        Strategy::UbGem,
        Strategy::UbDirect,
    ];

    /// The strategy's name as the CLI takes it.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::BaselineNmax => "baseline-nmax",
            Strategy::BaselineTruemax => "baseline-truemax",
            Strategy::Em => "em",
            Strategy::Hem => "hem",
            Strategy::UbHem => "ub-hem",
            Strategy::Gem => "gem",
            Strategy::UbGem => "ub-gem",
            Strategy::UbDirect => "ub-direct",
        }
    }

    /// The default share of ε spent before the release (choosing θ*), by
    /// strategy, by whether some constraint has no equality predicate
    /// (public: it depends on the constraints only) and by ε (public).
    /// 0.4 is the paper's. `ub-direct` spends only d̃'s share when it can use
    /// it: 0.1/√ε within [0.1, 0.3], so more of a small ε goes to a d̃ whose
    /// noise would otherwise dwarf the degrees (chosen on the generated and
    /// noised training tables: best share 0.3 at ε = 0.1, 0.2 at 0.2, 0.1
    /// from 0.5 up; `crates/dpincon-release/README.md`).
    pub fn default_selection_share(self, unbounded: bool, epsilon: f64) -> f64 {
        match self {
            Strategy::UbDirect if !unbounded => (0.1 / epsilon.sqrt()).clamp(0.1, 0.3),
            // ñ and the noisy look at f(G_{n_max}); gem, if it runs, takes
            // its share from the release's.
            Strategy::UbDirect => 0.1,
            _ => 0.4,
        }
    }

    /// True for the strategy that reads the true maximum degree.
    pub fn is_private(self) -> bool {
        self != Strategy::BaselineTruemax
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Strategy {
    type Err = ReleaseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Strategy::ALL.into_iter().find(|st| st.name() == s).ok_or_else(|| {
            let names: Vec<&str> = Strategy::ALL.iter().map(|s| s.name()).collect();
            ReleaseError::Invalid(format!(
                "unknown strategy '{s}' (use one of {})",
                names.join(", ")
            ))
        })
    }
}

/// The EM qualities q(θ) = −(f(G_reference) − f(G_θ)) − √2·Δ(θ)/ε2 (SPEC §4),
/// split into the data-dependent integer part and the public real part.
///
/// `unbiased` names a candidate (ub-hem's n_max) whose quality is the noise
/// term alone: it truncates nothing, so it has no bias term.
pub fn quality_scores(
    measure: ProjectedMeasure,
    table: &ProjectionTable,
    candidates: &[u32],
    reference: u32,
    release_epsilon: f64,
    unbiased: Option<u32>,
) -> Result<Vec<Score>, ReleaseError> {
    let f = |theta: u32| table.get(theta).map(|c| measure.value(&c) as i64);
    let reference_value = f(reference)?;
    candidates
        .iter()
        .map(|&theta| {
            let noise =
                std::f64::consts::SQRT_2 * measure.sensitivity(theta) as f64 / release_epsilon;
            let data = if Some(theta) == unbiased { 0 } else { f(theta)? - reference_value };
            Ok(Score::new(data, noise))
        })
        .collect()
}
