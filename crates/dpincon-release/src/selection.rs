//! The θ-selection strategies (SPEC §4) and the quality scores their
//! selection steps rank candidates by.

use dpincon_mechanisms::Score;

use crate::{ProjectedMeasure, ProjectionTable, ReleaseError};

/// How θ* is chosen for a projected measure (SPEC §4): declared in
/// [`dpincon_api`] with the job's other options; what a strategy spends
/// is [`StrategyExt`]'s.
pub use dpincon_api::Strategy;

/// What a [`Strategy`] spends, beside its name.
pub trait StrategyExt {
    /// The default share of ε spent before the release (choosing θ*), by
    /// strategy, by whether some constraint has no equality predicate
    /// (public: it depends on the constraints only) and by ε (public).
    /// 0.4 is the paper's. `ub-direct` spends only d̃'s share when it can use
    /// it: 0.1/√ε within [0.1, 0.3], so more of a small ε goes to a d̃ whose
    /// noise would otherwise dwarf the degrees (chosen on the generated and
    /// noised training tables: best share 0.3 at ε = 0.1, 0.2 at 0.2, 0.1
    /// from 0.5 up; `crates/dpincon-release/README.md`).
    fn default_selection_share(self, unbounded: bool, epsilon: f64) -> f64;
}

impl StrategyExt for Strategy {
    fn default_selection_share(self, unbounded: bool, epsilon: f64) -> f64 {
        match self {
            Strategy::UbDirect if !unbounded => (0.1 / epsilon.sqrt()).clamp(0.1, 0.3),
            // ñ and the noisy look at f(G_{n_max}); gem, if it runs, takes
            // its share from the release's.
            Strategy::UbDirect => 0.1,
            _ => 0.4,
        }
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
