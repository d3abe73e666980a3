//! Driving the measures over a graph, row by row: the greedy cover (an
//! order-dependent walk of Λ) beside the degrees (shards shared out among
//! the other threads), then one projection per θ (each an order-dependent
//! walk), side by side.

use std::sync::atomic::{AtomicUsize, Ordering};

use dpincon_graph::{ConflictGraph, Row};

use crate::{DegreeBound, DegreeCounts, ExactCounts, GreedyCover, ProjectedCounts};
use crate::{LANES, NeighbourDegrees, ProjectionScratch, project_rows};

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
/// `threads` threads. The degrees and the cover come first, side by side
/// (`degrees_beside_cover`); the degrees tell each projection which rows
/// it can skip ([`project_rows`]). The cover and the projections each walk
/// Λ in order on one thread, so the result does not depend on `threads`;
/// batches of θs are handed out to whichever thread is free.
pub fn measure_pass(graph: &ConflictGraph, thetas: &[DegreeBound], threads: usize) -> PassCounts {
    let threads = threads.max(1);
    let nodes = graph.nodes();
    let (degrees, cover) = degrees_beside_cover(graph, threads);
    let max_degree = degrees.counts().max_degree;
    // θ above every degree keeps G whole and needs no more walks.
    let neighbours = if thetas.iter().any(|t| t.get() <= max_degree) {
        neighbour_degrees(graph, degrees.degrees(), threads)
    } else {
        NeighbourDegrees::new(nodes)
    };
    // θs projected side by side share a walk (rows read once, a node's
    // state for all of them in one cache line): neighbouring θs, which
    // check the same rows, go together, and θs whose states need the same
    // width (`project_rows`), in as many batches as threads can share.
    // θs above every degree cost nothing and go in one batch. The largest
    // θs go first: the small ones, quicker, even out the threads' ends.
    let mut order: Vec<usize> = (0..thetas.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(thetas[i]));
    let width = |i: usize| match thetas[i].get() {
        t if t > max_degree => 0,
        t if t <= u32::from(u8::MAX) => 1,
        t if t <= u32::from(u16::MAX) => 2,
        _ => 3,
    };
    let mut batches: Vec<&[usize]> = Vec::new();
    for group in order.chunk_by(|&a, &b| width(a) == width(b)) {
        if width(group[0]) == 0 {
            batches.push(group);
            continue;
        }
        // Split among threads, unless states are 4 bytes a lane (64 MB a
        // thread at 10^6 rows): θs past 65,535 are few and cheap.
        let spread = if width(group[0]) == 3 { 1 } else { threads.min(group.len()) };
        let count = group.len().div_ceil(LANES).max(spread);
        batches.extend(group.chunks(group.len().div_ceil(count)));
    }
    let next = AtomicUsize::new(0);
    let project = || {
        let mut scratch = ProjectionScratch::new(nodes);
        let mut done = Vec::new();
        while let Some(&batch) = batches.get(next.fetch_add(1, Ordering::Relaxed)) {
            let bounds: Vec<DegreeBound> = batch.iter().map(|&i| thetas[i]).collect();
            let counts = project_rows(graph, degrees.degrees(), &neighbours, &bounds, &mut scratch);
            done.extend(batch.iter().copied().zip(counts));
        }
        done
    };
    let mut projected = std::thread::scope(|scope| {
        let handles: Vec<_> =
            (1..threads.min(batches.len())).map(|_| scope.spawn(project)).collect();
        let mut projected = project();
        for h in handles {
            projected.extend(h.join().expect("projection thread panicked"));
        }
        projected
    });
    projected.sort_unstable_by_key(|&(i, _)| i);
    PassCounts { degrees, cover, projected: projected.into_iter().map(|(_, c)| c).collect() }
}

/// The degrees and the greedy cover: this thread walks the cover (an
/// order-dependent walk, one thread) while `threads` − 1 others count the
/// degrees a shard at a time, and joins them when it is done. Counting
/// shard by shard is summing, so the degrees do not depend on who counted
/// which shard. At 10^6 Tax rows this pass took 1.0–1.1 s with the cover
/// after the degrees, 0.64–0.80 s so.
fn degrees_beside_cover(graph: &ConflictGraph, threads: usize) -> (DegreeCounts, GreedyCover) {
    let nodes = graph.nodes();
    let next = AtomicUsize::new(0);
    let count = || {
        let mut part = DegreeCounts::new(nodes);
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            if k >= graph.shard_count() {
                break part;
            }
            graph.for_each_row(k..k + 1, |u, upper| part.visit_row(u, upper));
        }
    };
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(count)).collect();
        let mut cover = GreedyCover::new(nodes);
        graph.for_each_row(0..graph.shard_count(), |u, upper| cover.visit_row(u, upper));
        let mut total = count();
        for h in helpers {
            total.merge(&h.join().expect("degree thread panicked"));
        }
        (total, cover)
    })
}

/// Node degrees, the rows split among `threads` threads (each with its
/// own counters: 4 bytes per node per thread), summed.
pub fn count_degrees(graph: &ConflictGraph, threads: usize) -> DegreeCounts {
    let nodes = graph.nodes();
    rows_in_parallel(
        graph,
        threads,
        || DegreeCounts::new(nodes),
        |part, u, upper| part.visit_row(u, upper),
        |total, part| total.merge(part),
    )
}

/// [`NeighbourDegrees`] as [`count_degrees`] counts degrees: 8 bytes per
/// node per thread.
fn neighbour_degrees(graph: &ConflictGraph, degrees: &[u32], threads: usize) -> NeighbourDegrees {
    let nodes = graph.nodes();
    rows_in_parallel(
        graph,
        threads,
        || NeighbourDegrees::new(nodes),
        |part, u, upper| part.visit_row(u, upper, degrees),
        |total, part| total.merge(part),
    )
}

/// Walks the rows split among `threads` threads, each into a part of its
/// own (`new`, `visit`), and merges the parts into the first.
fn rows_in_parallel<T: Send>(
    graph: &ConflictGraph,
    threads: usize,
    new: impl Fn() -> T + Sync,
    visit: impl Fn(&mut T, u32, Row<'_>) + Sync,
    merge: impl Fn(&mut T, &T),
) -> T {
    let parts: Vec<T> = std::thread::scope(|scope| {
        let handles: Vec<_> = graph
            .balanced_shard_ranges(threads)
            .into_iter()
            .map(|range| {
                let (new, visit) = (&new, &visit);
                scope.spawn(move || {
                    let mut part = new();
                    graph.for_each_row(range, |u, upper| visit(&mut part, u, upper));
                    part
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("row walk thread panicked")).collect()
    });
    let mut parts = parts.into_iter();
    let mut total = parts.next().unwrap_or_else(new);
    for part in parts {
        merge(&mut total, &part);
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

    /// θs all above every degree (the default job's θ* often is): the
    /// pass skips the neighbour walk, and must still give f(G_θ) = f(G),
    /// edges and problematic nodes alike, as the edge-by-edge definition.
    #[test]
    fn thetas_above_every_degree_keep_the_whole_graph() {
        let mut edges: Vec<Edge> = (1..40).map(|v| Edge::new(0, v)).collect();
        edges.extend((50..60).map(|v| Edge::new(v, v + 1)));
        let graph = ConflictGraph::from_edges(100, edges);
        let max = 39;
        for thetas in [vec![max + 1], vec![max + 1, 5_000, 70_000], vec![3, max + 7]] {
            let thetas: Vec<DegreeBound> =
                thetas.into_iter().map(|t| DegreeBound::new(t).unwrap()).collect();
            let pass = measure_pass(&graph, &thetas, 2);
            let mut projection = crate::EdgeAddition::new(100, &thetas);
            crate::walk(graph.edges(), &mut [&mut projection]);
            assert_eq!(pass.projected, projection.counts(), "{thetas:?}");
            for counts in pass.projected.iter().filter(|c| c.theta.get() > max) {
                assert_eq!((counts.edges, counts.problematic), (49, 51), "{thetas:?}");
            }
        }
    }
}
