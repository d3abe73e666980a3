//! Vertex covers of the conflict graph, the measure I_R (SPEC §3, §5).
//!
//! - [`GreedyCover`]: the stable-order greedy cover c of SPEC §5, one pass
//!   over Λ (an [`EdgeVisitor`](crate::EdgeVisitor)); c/2 ≤ I_R ≤ c, node
//!   sensitivity 2. [`greedy_matching_outside`]: its matching on G minus
//!   some rows.
//! - [`fractional_cover`]: the LP relaxation LP(G) ≤ I_R ≤ 2·LP(G), exact
//!   and half-integral, node sensitivity 1 (proof in `fractional.rs`), on a
//!   full [`Adjacency`] in memory.
//! - [`twice_fractional_cover`]: the same 2·LP(G) from the graph and its
//!   greedy cover, on a kernel around the greedy matching: G[C] and a few
//!   free neighbours per cover node (proof in `greedy_kernel.rs`), a small
//!   part of the adjacency on conflict graphs.
//! - [`minimum_cover`]: I_R itself (kernel, components, branch and bound)
//!   under a work limit; NON-PRIVATE, for experiments and curators.

mod adjacency;
mod exact;
mod fractional;
mod greedy;
mod greedy_kernel;
#[cfg(test)]
mod tests;

pub use adjacency::Adjacency;
pub use exact::{MinimumCover, minimum_cover};
pub use fractional::{FractionalCover, fractional_cover};
pub use greedy::{CoverSize, GreedyCover, greedy_matching_outside};
pub use greedy_kernel::twice_fractional_cover;
