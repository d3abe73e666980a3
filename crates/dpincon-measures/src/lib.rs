//! Inconsistency measures computed in one pass over the stable edge stream.
//!
//! Each algorithm is an [`EdgeVisitor`]: it sees the edges of Λ (SPEC §2) one
//! at a time and never needs the edge list in memory. [`walk`] drives any set
//! of visitors over one [`dpincon_graph::EdgeStream`], so the exact measures,
//! the greedy cover and the projections for every degree bound θ share a
//! single pass.
//!
//! - [`DegreeCounts`]: |E| (I_MI), nodes of positive degree (I_P), maximum
//!   degree, and the drastic measure I_D.
//! - [`GreedyCover`]: the stable-order greedy vertex cover of SPEC §5 (the
//!   paper's Algorithm 5 without its noise).
//! - [`EdgeAddition`]: the projection π_θ of SPEC §4 for many θ at once.
//!
//! Nothing here is differentially private: these are the exact values the
//! mechanisms of `dpincon-release` add calibrated noise to.

mod cover;
mod degree;
mod pass;
mod projection;

pub use cover::{
    Adjacency, CoverSize, FractionalCover, GreedyCover, MinimumCover, fractional_cover,
    minimum_cover,
};
pub use degree::{DegreeCounts, ExactCounts};
pub use pass::{PassCounts, measure_pass};
pub use projection::{DegreeBound, EdgeAddition, ProjectedCounts};

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
