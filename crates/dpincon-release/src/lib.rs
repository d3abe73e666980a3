//! Differentially private releases of the inconsistency measures (SPEC §4–§6).
//!
//! - I_MI and I_P: project the conflict graph to degree bound θ* (edge
//!   addition over the stable order), then add discrete Laplace noise scaled
//!   to the projection's sensitivity. θ* is chosen privately by one of the
//!   [`Strategy`]s. The default, `ub-direct`, caps θ with a tight noisy
//!   degree bound over the minimal equality sets and spends the rest on the
//!   release; the generalized exponential mechanism ([`gem`], SPEC §4.1)
//!   chooses θ when no such bound exists. The paper's `em`, `hem` and
//!   `ub-hem` (its Algorithm 4 with SPEC §6's corrected sensitivities) stay
//!   selectable for comparison.
//! - I_R ([`repair`]): the LP relaxation (exact, node sensitivity 1) and
//!   the stable-order greedy cover (Algorithm 5 with the scale the paper
//!   misprints), each with discrete Laplace noise, and a point estimate and
//!   an interval for I_R post-processed from them; `--ir-method` chooses.
//!
//! A release runs in two steps around the single pass over the edge stream:
//! [`prepare`] spends the budget that does not need the graph (the noisy row
//! bound ñ, the noisy degree bound d̃) and fixes every θ the pass must
//! evaluate; [`release_projected`] then selects θ* from the pass's
//! [`ProjectionTable`] and adds the final noise. [`release_repair`] is one
//! step. [`quota`] releases a coordinator job's `over quota` verdict. All
//! randomness comes from a [`NoiseRng`]; no float touches a secret.
//!
//! [`sparse`] gates nightly verdicts by the sparse vector technique
//! (README, "Gated verdicts"): an [`Epoch`] is one AboveThreshold run,
//! charged once, whose nights pass at no further cost while the statistic
//! stays inside its [`Band`] (a check, the region between several checks,
//! or the moved gate around the last released value); its first `above`
//! ends it and calls for a fresh release. [`Accuracy`] states what a pass
//! guarantees, and [`min_epsilon`] the least ε that makes a check useful.

mod classes;
pub mod gem;
mod interval;
mod measure;
mod miss;
mod prepare;
mod projected;
pub mod quota;
pub mod repair;
mod selection;
pub mod sparse;
mod spec;
mod table;

pub use classes::{ClassBounds, ClassFacts, ExcessBound, LeadingFacts, NoisyClassBound};
pub use dpincon_mechanisms::{Budget, MechanismError, NoiseRng, Selector, SelectorExt};
pub use interval::IntervalBounds;
pub use measure::{COVER_SENSITIVITY, ProjectedMeasure};
pub use miss::COVERAGE;
pub use prepare::{Prepared, default_candidates, halving_candidates, prepare};
pub use projected::{IntervalRelease, ProjectedRelease, SelectionStep, release_projected};
pub use repair::{
    CoverFacts, KeyCover, RepairMethod, RepairMethodExt, RepairRelease, RepairValues, UnionCover,
    UpperCover, UpperRelease, release_repair,
};
pub use selection::{Strategy, StrategyExt, quality_scores};
pub use sparse::{
    Accuracy, Band, Direction, Epoch, EpochParams, EpochSecret, GateVerdict, GatedStatistic,
    MeasureGate, NightFacts, Statistic, alpha_pass, alpha_quiet, alpha_two_sided, min_epsilon,
};
pub use spec::{
    BudgetUse, DegreeTerms, LargestTerm, MaxRows, NoisyDegreeBound, ProjectedSpec, TableFacts,
};
pub use table::ProjectionTable;

/// The crate's one error type.
#[derive(Debug, thiserror::Error)]
pub enum ReleaseError {
    /// A mechanism refused its parameters (ε, sensitivity, scores).
    #[error(transparent)]
    Mechanism(#[from] MechanismError),
    /// The release's options are inconsistent.
    #[error("{0}")]
    Invalid(String),
    /// The projection table lacks a θ the strategy needs (a driver bug).
    #[error("f(G_θ) for θ = {0} was not computed in the pass over the edges")]
    MissingTheta(u32),
    /// A class count was chosen but the table carries no classes (a driver bug).
    #[error("I_P's class count was chosen but the projection table has no classes")]
    MissingClasses,
    /// A gate epoch was asked again after its `above` ended it.
    #[error("the epoch ended with its `above`; start a new (charged) epoch")]
    EpochEnded,
    /// A gate epoch was asked for more nights than it was planned for.
    #[error("the epoch's {nights} planned nights are used up; start a new (charged) epoch")]
    EpochExhausted {
        /// k, the nights planned.
        nights: u32,
    },
    /// A stored epoch secret cannot continue this epoch (other parameters,
    /// or a stale copy).
    #[error("the stored epoch secret is refused ({0}); start a new (charged) epoch")]
    SecretRefused(String),
    /// A gated check whose pass accuracy α is wider than its use allows.
    #[error(
        "the gate's α = {alpha} at ε = {epsilon} is wider than the {width} this check allows; \
         an ε of at least {min_epsilon} would do"
    )]
    GateTooWide {
        /// The pass α at the check's ε.
        alpha: u64,
        /// The widest useful α.
        width: u64,
        /// The check's ε.
        epsilon: f64,
        /// The least ε whose α fits, rounded up to three digits.
        min_epsilon: f64,
    },
}
