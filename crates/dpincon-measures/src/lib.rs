//! Inconsistency measures of the conflict graph: one-pass visitors over the
//! stable edge stream, and the vertex covers behind I_R.
//!
//! Most algorithms are an [`EdgeVisitor`]: they see the edges of Λ (SPEC §2)
//! one at a time and never need the edge list in memory. [`walk`] drives
//! any set of visitors over one [`dpincon_graph::EdgeStream`], so the exact
//! measures, the greedy cover and the projections for every degree bound θ
//! share a single pass.
//!
//! - [`DegreeCounts`]: |E| (I_MI), nodes of positive degree (I_P), maximum
//!   degree, and the drastic measure I_D.
//! - [`GreedyCover`]: the stable-order greedy vertex cover of SPEC §5 (the
//!   paper's Algorithm 5 without its noise).
//! - [`EdgeAddition`]: the projection π_θ of SPEC §4 for many θ at once.
//!   [`project_rows`] computes the same from the graph's rows, checking
//!   only the edges θ can drop, [`LANES`] θs per walk; [`measure_pass`]
//!   runs it with the degrees and the cover.
//!
//! I_R's LP relaxation and exact value are not one-pass:
//!
//! - [`fractional_cover`]: the minimum fractional vertex cover, exactly
//!   (Hopcroft–Karp on the bipartite double cover of an [`Adjacency`], 8
//!   bytes per edge); node sensitivity 1.
//! - [`twice_fractional_cover`]: its value from a second pass, through a
//!   kernel around the greedy cover (what releases use).
//! - [`minimum_cover`]: the minimum vertex cover I_R (kernel, components,
//!   branch and bound) under a work limit, for experiments.
//!
//! Nothing here is differentially private: these are the exact values the
//! mechanisms of `dpincon-release` add calibrated noise to.

mod cover;
mod degree;
mod pass;
mod projection;

pub use cover::{
    Adjacency, CoverSize, FractionalCover, GreedyCover, MinimumCover, fractional_cover,
    greedy_matching_outside, minimum_cover, twice_fractional_cover,
};
pub use degree::{DegreeCounts, ExactCounts};
pub use pass::{PassCounts, count_degrees, measure_pass};
pub use projection::{
    DegreeBound, EdgeAddition, LANES, NeighbourDegrees, ProjectedCounts, ProjectionScratch,
    project_rows,
};

use dpincon_graph::Edge;

/// An algorithm that consumes the edges of Λ one at a time, in order.
pub trait EdgeVisitor {
    /// Sees the next edge of the stable order.
    fn visit(&mut self, edge: Edge);
}

/// Feeds every edge of `stream`, in order, to each visitor: one pass for all.
pub fn walk(stream: impl IntoIterator<Item = Edge>, visitors: &mut [&mut dyn EdgeVisitor]) {
    for edge in stream {
        for visitor in visitors.iter_mut() {
            visitor.visit(edge);
        }
    }
}
