//! Driving the measures over a graph, row by row: the degrees (rows shared
//! out among threads), then the greedy cover and one projection per θ
//! (each an order-dependent walk of Λ) side by side.

use dpincon_graph::ConflictGraph;

use crate::{DegreeBound, DegreeCounts, ExactCounts, GreedyCover, ProjectedCounts};
use crate::{ProjectionScratch, project_rows};

/// Everything one pass over the edge stream yields.
#[derive(Debug, Clone, PartialEq)]
pub struct PassCounts {
    /// Every node's degree, behind the exact counts.
    pub degrees: DegreeCounts,
    /// The stable-order greedy cover: its size, and the rows the LP's
    /// kernel is built around ([`crate::twice_fractional_cover`]).
    pub cover: GreedyCover,
    /// f(G_θ) for each requested θ, in request order.
    pub projected: Vec<ProjectedCounts>,
}

impl PassCounts {
    /// |E|, I_P, max degree, I_D.
    pub fn exact(&self) -> ExactCounts {
        self.degrees.counts()
    }
}

/// The exact counts, the greedy cover and f(G_θ) for every θ, on up to
/// `threads` threads. The degrees come first: they tell each projection
/// which rows it can skip ([`project_rows`]). The cover and the
/// projections each walk Λ in order on one thread, so the result does not
/// depend on `threads`.
pub fn measure_pass(graph: &ConflictGraph, thetas: &[DegreeBound], threads: usize) -> PassCounts {
    let threads = threads.max(1);
    let degrees = count_degrees(graph, threads);
    let nodes = graph.nodes();
    // θs dealt round-robin; thread 0 also builds the cover.
    let shares: Vec<Vec<(usize, DegreeBound)>> = (0..threads)
        .map(|t| thetas.iter().copied().enumerate().skip(t).step_by(threads).collect())
        .collect();
    let project = |share: &[(usize, DegreeBound)]| {
        let mut scratch = ProjectionScratch::new(nodes);
        share
            .iter()
            .map(|&(i, theta)| (i, project_rows(graph, degrees.degrees(), theta, &mut scratch)))
            .collect::<Vec<_>>()
    };
    let (cover, mut projected) = std::thread::scope(|scope| {
        let handles: Vec<_> = shares[1..]
            .iter()
            .filter(|share| !share.is_empty())
            .map(|share| scope.spawn(|| project(share)))
            .collect();
        let mut cover = GreedyCover::new(nodes);
        graph.for_each_row(0..graph.shard_count(), |u, upper| cover.visit_row(u, upper));
        let mut projected = project(&shares[0]);
        for h in handles {
            projected.extend(h.join().expect("projection thread panicked"));
        }
        (cover, projected)
    });
    projected.sort_unstable_by_key(|&(i, _)| i);
    PassCounts { degrees, cover, projected: projected.into_iter().map(|(_, c)| c).collect() }
}

/// Node degrees, the rows split among `threads` threads (each with its
/// own counters: 4 bytes per node per thread), summed.
pub fn count_degrees(graph: &ConflictGraph, threads: usize) -> DegreeCounts {
    let nodes = graph.nodes();
    let parts: Vec<DegreeCounts> = std::thread::scope(|scope| {
        let handles: Vec<_> = graph
            .balanced_shard_ranges(threads)
            .into_iter()
            .map(|range| {
                scope.spawn(move || {
                    let mut part = DegreeCounts::new(nodes);
                    graph.for_each_row(range, |u, upper| part.visit_row(u, upper));
                    part
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("degree thread panicked")).collect()
    });
    let mut parts = parts.into_iter();
    let mut total = parts.next().unwrap_or_else(|| DegreeCounts::new(nodes));
    for part in parts {
        total.merge(&part);
    }
    total
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
        // The definitions, edge by edge.
        let mut degrees = crate::DegreeCounts::new(3_000);
        let mut cover = crate::GreedyCover::new(3_000);
        let mut projection = crate::EdgeAddition::new(3_000, &thetas);
        crate::walk(graph.edges(), &mut [&mut degrees, &mut cover, &mut projection]);
        assert_eq!(one.exact(), degrees.counts());
        assert_eq!(one.cover, cover);
        assert_eq!(one.projected, projection.counts());
        for threads in [2, 3, 8, 20] {
            assert_eq!(measure_pass(&graph, &thetas, threads), one, "{threads} threads");
        }
        assert_eq!(one.projected.iter().map(|c| c.theta).collect::<Vec<_>>(), thetas);
        assert_eq!(measure_pass(&graph, &[], 2).exact(), one.exact());
    }
}
