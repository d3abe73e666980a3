//! Experiments on the DP releases: how far they land from the exact values.
//!
//! NON-PRIVATE by nature: everything here reads exact values to score the
//! releases, so the CLI runs it only behind `--non-private`.
//!
//! - [`utility`]: mean relative error per measure and strategy at one ε.
//! - [`projection_curve`]: f(G_θ) of I_MI and I_P for every θ up to the
//!   maximum degree, the raw material of the oracle and of θ selectors.
//! - [`sweep`]: every strategy over several ε, beside the [`oracle`] (the
//!   best fixed θ in hindsight at the full ε), for `experiment sweep`.
//! - [`coverage`]: how often each interval holds the measure, and how often
//!   an audit verdict drawn from it is wrong, for `experiment coverage`.

mod coverage;
mod curve;
mod sweep;
mod utility;

pub use coverage::{CoverageOptions, CoverageReport, CoverageRow, coverage};
pub use curve::{ProjectionCurve, projection_curve};
pub use sweep::{ORACLE, SweepOptions, SweepReport, SweepRow, expected_error, oracle, sweep};
pub use utility::{UtilityReport, UtilityRow, utility};
