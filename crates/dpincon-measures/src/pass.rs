//! Driving the visitors over a graph: the exact counts, the greedy cover and
//! the projections for every θ, with the θs shared out among threads.

use dpincon_graph::ConflictGraph;

use crate::{CoverSize, DegreeBound, DegreeCounts, EdgeAddition, ExactCounts, GreedyCover};
use crate::{ProjectedCounts, walk};

/// Everything one pass over the edge stream yields.
#[derive(Debug, Clone, PartialEq)]
pub struct PassCounts {
    /// |E|, I_P, max degree, I_D.
    pub exact: ExactCounts,
    /// The stable-order greedy cover.
    pub cover: CoverSize,
    /// f(G_θ) for each requested θ, in request order.
    pub projected: Vec<ProjectedCounts>,
}

/// Walks the edge stream once per thread: the first thread also counts
/// degrees and builds the cover, and the θs are shared out so every thread
/// carries about the same number of degree arrays. Each walk sees the same
/// stable order, so the result does not depend on `threads`.
pub fn measure_pass(graph: &ConflictGraph, thetas: &[DegreeBound], threads: usize) -> PassCounts {
    let threads = threads.clamp(1, thetas.len().max(1));
    // The first share is smaller: its thread also counts degrees and covers.
    let first = thetas.len() / threads / 2;
    let rest = &thetas[first..];
    let per = rest.len().div_ceil((threads - 1).max(1));
    let shares: Vec<&[DegreeBound]> =
        if threads == 1 { vec![] } else { rest.chunks(per.max(1)).collect() };
    let (head, tail) = if threads == 1 { (thetas, &[][..]) } else { (&thetas[..first], rest) };
    debug_assert_eq!(head.len() + tail.len(), thetas.len());
    let nodes = graph.nodes();
    std::thread::scope(|scope| {
        let handles: Vec<_> = shares
            .iter()
            .map(|share| {
                scope.spawn(move || {
                    let mut projection = EdgeAddition::new(nodes, share);
                    walk(graph.edges(), &mut [&mut projection]);
                    projection.counts()
                })
            })
            .collect();
        let mut degrees = DegreeCounts::new(nodes);
        let mut cover = GreedyCover::new(nodes);
        let mut projection = EdgeAddition::new(nodes, head);
        walk(graph.edges(), &mut [&mut degrees, &mut cover, &mut projection]);
        let mut projected = projection.counts();
        for h in handles {
            projected.extend(h.join().expect("projection thread panicked"));
        }
        PassCounts { exact: degrees.counts(), cover: cover.size(), projected }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use dpincon_graph::Edge;

    #[test]
    fn threads_do_not_change_the_counts() {
        let mut edges = Vec::new();
        let mut state = 7u64;
        for _ in 0..20_000 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            let a = (state >> 40) as u32 % 3_000;
            let b = (state >> 20) as u32 % 3_000;
            if a != b {
                edges.push(Edge::new(a, b));
            }
        }
        let graph = ConflictGraph::from_edges(3_000, edges);
        let thetas: Vec<DegreeBound> =
            [1, 2, 3, 5, 8, 13, 21, 34].map(|t| DegreeBound::new(t).unwrap()).to_vec();
        let one = measure_pass(&graph, &thetas, 1);
        for threads in [2, 3, 8, 20] {
            assert_eq!(measure_pass(&graph, &thetas, threads), one, "{threads} threads");
        }
        assert_eq!(one.projected.iter().map(|c| c.theta).collect::<Vec<_>>(), thetas);
        assert_eq!(measure_pass(&graph, &[], 2).exact, one.exact);
    }
}
