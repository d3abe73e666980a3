//! The stable-order greedy vertex cover (SPEC §5), a one-pass visitor.

use std::ops::ControlFlow;

use dpincon_graph::{ConflictGraph, Edge, Row};

use crate::EdgeVisitor;

/// The stable-order greedy vertex cover of SPEC §5: walking Λ, an edge whose
/// endpoints are both uncovered puts both in the cover. The chosen edges form
/// a maximal matching M, so the cover has `c = 2|M|` nodes and
/// `|M| <= OPT <= c`: a 2-approximation of the minimum vertex cover (I_R).
///
/// Adding or removing one tuple changes `c` by at most 2 (SPEC §5), which is
/// the sensitivity the release uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GreedyCover {
    covered: Vec<u64>,
    matching: u64,
}

/// The greedy cover's size and the bounds it gives on the optimum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoverSize {
    /// c, the size of the greedy cover (twice the matching).
    pub cover: u64,
    /// |M| = c / 2, a lower bound on the minimum vertex cover.
    pub lower_bound: u64,
}

impl GreedyCover {
    /// An empty cover of a graph on `nodes` nodes.
    pub fn new(nodes: u32) -> Self {
        GreedyCover { covered: vec![0; (nodes as usize).div_ceil(64)], matching: 0 }
    }

    /// A walk whose matching is that of G minus `rows`: they start
    /// covered, so no edge at one of them is matched (Λ restricted to an
    /// induced subgraph is that subgraph's Λ). Not a cover of G (it holds
    /// `rows`), so only [`greedy_matching_outside`] reads it. Rows at or
    /// past `nodes` are ignored.
    fn outside(nodes: u32, rows: &[u32]) -> Self {
        let mut cover = GreedyCover::new(nodes);
        rows.iter().filter(|&&r| r < nodes).for_each(|&r| cover.cover(r));
        cover
    }

    /// The cover as a bitset: bit `v % 64` of word `v / 64` is node `v`.
    pub(crate) fn bits(&self) -> &[u64] {
        &self.covered
    }

    fn is_covered(&self, node: u32) -> bool {
        self.covered[(node / 64) as usize] >> (node % 64) & 1 == 1
    }

    fn cover(&mut self, node: u32) {
        self.covered[(node / 64) as usize] |= 1 << (node % 64);
    }

    /// Whether `node` is in the cover built so far.
    pub fn contains(&self, node: u32) -> bool {
        self.is_covered(node)
    }

    /// Visits the row `u` (its neighbours above it, ascending) at once: a
    /// covered `u` blocks the whole row, else its first uncovered neighbour
    /// is matched with it, exactly as edge by edge.
    pub fn visit_row(&mut self, u: u32, upper: Row<'_>) {
        if self.is_covered(u) {
            return;
        }
        let first_uncovered =
            upper.chunks(|chunk| match chunk.iter().find(|&&v| !self.is_covered(v)) {
                Some(&v) => ControlFlow::Break(v),
                None => ControlFlow::Continue(()),
            });
        if let ControlFlow::Break(v) = first_uncovered {
            self.cover(u);
            self.cover(v);
            self.matching += 1;
        }
    }

    /// The cover size and the matching lower bound.
    pub fn size(&self) -> CoverSize {
        CoverSize { cover: 2 * self.matching, lower_bound: self.matching }
    }
}

impl EdgeVisitor for GreedyCover {
    fn visit(&mut self, edge: Edge) {
        if !self.is_covered(edge.u) && !self.is_covered(edge.v) {
            self.cover(edge.u);
            self.cover(edge.v);
            self.matching += 1;
        }
    }
}

/// |M| of the stable-order greedy matching of G minus `rows`
/// (the walk starts with `rows` covered), one walk of Λ on this thread: what I_R's
/// key partition bound adds to a key's cover (`dpincon-release`). Adding a
/// node to a graph moves its greedy matching by 0 or +1, removing one by 0
/// or −1: the two matchings differ by one alternating path from that node.
pub fn greedy_matching_outside(graph: &ConflictGraph, rows: &[u32]) -> u64 {
    let mut cover = GreedyCover::outside(graph.nodes(), rows);
    graph.for_each_row(0..graph.shard_count(), |u, upper| cover.visit_row(u, upper));
    cover.size().lower_bound
}
