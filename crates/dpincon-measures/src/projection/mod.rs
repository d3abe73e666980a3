//! The edge-addition projection G_θ (SPEC §4): f(G_θ) for many θ in one pass.

use dpincon_graph::Edge;

use crate::EdgeVisitor;

mod rows;

pub use rows::{LANES, NeighbourDegrees, ProjectionScratch, project_rows};

/// A degree bound θ ≥ 1 of the edge-addition projection (SPEC §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DegreeBound(u32);

impl DegreeBound {
    /// θ; `None` for 0 (a projection keeping no edge has no use).
    pub fn new(theta: u32) -> Option<Self> {
        (theta > 0).then_some(DegreeBound(theta))
    }

    /// The bound as a number.
    pub fn get(self) -> u32 {
        self.0
    }
}

/// f(G_θ) for one θ: the projected graph's measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProjectedCounts {
    /// θ.
    pub theta: DegreeBound,
    /// Edges kept: I_MI of G_θ.
    pub edges: u64,
    /// Nodes with kept degree > 0: I_P of G_θ.
    pub problematic: u64,
}

/// Edge addition π_θ (SPEC §4) for several θ in one pass over Λ: an edge
/// `(u, v)` is kept iff both endpoints have kept degree `< θ` so far.
///
/// This is the definition, edge by edge, for streams without a graph and
/// for tests; [`project_rows`] computes the same counts from the graph's
/// rows, checking only the edges θ can drop, and is what the engine runs.
///
/// Memory is one degree per node and candidate, O(|Θ|·n); time O(|Θ|·m).
/// The degrees of a node for all θ sit side by side, so an edge touches two
/// cache lines however many candidates there are. The stable order is what
/// bounds the sensitivity (the paper's Lemma 1, corrected in SPEC §6): a new
/// node's edges can only displace later edges.
#[derive(Debug, Clone)]
pub struct EdgeAddition {
    bounds: Vec<DegreeBound>,
    limits: Vec<u32>,
    /// `degree[node * k + j]`: kept degree of `node` under bound `j`.
    degree: Vec<u32>,
    kept: Vec<u64>,
    touched: Vec<u64>,
}

impl EdgeAddition {
    /// Projections of a graph on `nodes` nodes for each bound in `bounds`.
    pub fn new(nodes: u32, bounds: &[DegreeBound]) -> Self {
        EdgeAddition {
            bounds: bounds.to_vec(),
            limits: bounds.iter().map(|b| b.0).collect(),
            degree: vec![0; nodes as usize * bounds.len()],
            kept: vec![0; bounds.len()],
            touched: vec![0; bounds.len()],
        }
    }

    /// f(G_θ) for every bound, in the order given to [`EdgeAddition::new`].
    pub fn counts(&self) -> Vec<ProjectedCounts> {
        self.bounds
            .iter()
            .zip(self.kept.iter().zip(&self.touched))
            .map(|(&theta, (&edges, &problematic))| ProjectedCounts { theta, edges, problematic })
            .collect()
    }
}

impl EdgeVisitor for EdgeAddition {
    fn visit(&mut self, edge: Edge) {
        let k = self.limits.len();
        if k == 0 {
            return;
        }
        let (u, v) = (edge.u as usize * k, edge.v as usize * k);
        // u < v, so u's degrees lie wholly before v's.
        let (low, high) = self.degree.split_at_mut(v);
        let (du, dv) = (&mut low[u..u + k], &mut high[..k]);
        for j in 0..k {
            let (a, b) = (du[j], dv[j]);
            if a < self.limits[j] && b < self.limits[j] {
                du[j] = a + 1;
                dv[j] = b + 1;
                self.kept[j] += 1;
                self.touched[j] += u64::from(a == 0) + u64::from(b == 0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DegreeCounts, GreedyCover, walk};
    use dpincon_graph::ConflictGraph;

    fn star_then_path() -> ConflictGraph {
        // Node 0 is a hub joined to 1..=4; then the path 1-2, 2-3, 3-4.
        let edges = [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (2, 3), (3, 4)];
        ConflictGraph::from_edges(6, edges.iter().map(|&(a, b)| Edge::new(a, b)))
    }

    #[test]
    fn projection_keeps_edges_in_stable_order_until_degrees_fill() {
        let g = star_then_path();
        let bounds: Vec<_> = [1, 2, 4].map(|t| DegreeBound::new(t).unwrap()).to_vec();
        let mut proj = EdgeAddition::new(g.nodes(), &bounds);
        walk(g.edges(), &mut [&mut proj]);
        let counts = proj.counts();
        // θ=1: (0,1) kept; (0,*) blocked by 0; (1,2) blocked by 1; (2,3) kept; (3,4) blocked.
        assert_eq!((counts[0].edges, counts[0].problematic), (2, 4));
        // θ=2: (0,1),(0,2) kept; (1,2) kept (1 and 2 at degree 1); (2,3) blocked (2 full);
        // (3,4) kept.
        assert_eq!((counts[1].edges, counts[1].problematic), (4, 5));
        // θ=4 ≥ max degree: nothing dropped.
        assert_eq!((counts[2].edges, counts[2].problematic), (7, 5));
    }

    #[test]
    fn one_pass_feeds_every_visitor() {
        let g = star_then_path();
        let mut degrees = DegreeCounts::new(g.nodes());
        let mut cover = GreedyCover::new(g.nodes());
        walk(g.edges(), &mut [&mut degrees, &mut cover]);
        let c = degrees.counts();
        assert_eq!((c.rows, c.edges, c.problematic, c.max_degree, c.drastic), (6, 7, 5, 4, 1));
        // Matching in order: (0,1), then (2,3); (3,4) blocked by 3.
        assert_eq!(cover.size().cover, 4);
        assert_eq!(cover.size().lower_bound, 2);
        assert!(cover.contains(0) && cover.contains(3) && !cover.contains(4));
    }

    #[test]
    fn degree_bound_rejects_zero() {
        assert!(DegreeBound::new(0).is_none());
        assert_eq!(DegreeBound::new(3).map(DegreeBound::get), Some(3));
    }
}
