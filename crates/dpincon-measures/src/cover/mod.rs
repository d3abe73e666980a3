//! Vertex covers of the conflict graph, the measure I_R (SPEC §3, §5).
//!
//! - [`GreedyCover`]: the stable-order greedy cover c of SPEC §5, one pass
//!   over Λ (an [`EdgeVisitor`](crate::EdgeVisitor)); c/2 ≤ I_R ≤ c, node
//!   sensitivity 2.
//! - [`fractional_cover`]: the LP relaxation LP(G) ≤ I_R ≤ 2·LP(G), exact
//!   and half-integral, node sensitivity 1 (proof in `fractional.rs`). It
//!   needs the full [`Adjacency`] in memory, not just the stream.
//! - [`minimum_cover`]: I_R itself (kernel, components, branch and bound)
//!   under a work limit; NON-PRIVATE, for experiments and curators.

mod adjacency;
mod exact;
mod fractional;
mod greedy;
#[cfg(test)]
mod tests;

pub use adjacency::Adjacency;
pub use exact::{MinimumCover, minimum_cover};
pub use fractional::{FractionalCover, fractional_cover};
pub use greedy::{CoverSize, GreedyCover};
