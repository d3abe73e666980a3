//! Experiments on the DP releases: how far they land from the exact values.
//!
//! NON-PRIVATE by nature: everything here reads exact values to score the
//! releases, so the CLI runs it only behind `--non-private`.
//!
//! - [`utility`]: mean relative error per measure and strategy at one ε.
//! - [`projection_curve`]: f(G_θ) of I_MI and I_P for every θ up to the
//!   maximum degree, the raw material of the oracle and of θ selectors.

mod curve;
mod utility;

pub use curve::{ProjectionCurve, projection_curve};
pub use utility::{UtilityReport, UtilityRow, utility};
