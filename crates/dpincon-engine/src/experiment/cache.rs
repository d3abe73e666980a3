//! f(G_θ) kept across the runs of an experiment (NON-PRIVATE).
//!
//! A release needs f(G_θ) for a handful of θ, and a real job walks the edge
//! stream once for them. An experiment releases thousands of times on one
//! graph (runs × ε × strategies), and most of those θ repeat: the fixed
//! grids always, a noisy bound's θ often. The graph and its projections
//! do not change between runs, so each θ is projected once and looked up
//! afterwards; a θ at or above the maximum degree keeps the whole graph
//! and is not projected at all. The values are exactly what the per-run
//! pass would give, so scores do not change, only the time they take.

use std::collections::BTreeMap;
use std::sync::Mutex;

use dpincon_graph::ConflictGraph;
use dpincon_measures::{DegreeBound, ExactCounts, GreedyCover, ProjectedCounts, measure_pass};
use dpincon_release::{ClassFacts, ProjectionTable};

use super::curve::ProjectionCurve;
use crate::load::LoadedJob;

/// The projections of one graph computed so far.
#[derive(Debug)]
pub struct ProjectionCache<'g> {
    graph: &'g ConflictGraph,
    threads: usize,
    exact: ExactCounts,
    cover: GreedyCover,
    known: Mutex<BTreeMap<u32, ProjectedCounts>>,
    passes: Mutex<usize>,
}

impl<'g> ProjectionCache<'g> {
    /// An empty cache over `loaded`'s graph: one pass for the exact counts
    /// and the greedy cover.
    pub fn new(loaded: &'g LoadedJob) -> Self {
        let base = measure_pass(&loaded.graph, &[], loaded.threads);
        ProjectionCache {
            graph: &loaded.graph,
            threads: loaded.threads,
            exact: base.exact(),
            cover: base.cover,
            known: Mutex::new(BTreeMap::new()),
            passes: Mutex::new(0),
        }
    }

    /// Also keeps the curve's projections (computed by the same pass).
    pub fn with_curve(self, curve: &ProjectionCurve) -> Self {
        {
            let mut known = self.known.lock().expect("cache lock");
            for (i, &theta) in curve.thetas.iter().enumerate() {
                if let Some(bound) = DegreeBound::new(theta) {
                    let counts = ProjectedCounts {
                        theta: bound,
                        edges: curve.edges[i],
                        problematic: curve.problematic[i],
                    };
                    known.insert(theta, counts);
                }
            }
        }
        self
    }

    /// The unprojected counts.
    pub fn exact(&self) -> ExactCounts {
        self.exact
    }

    /// The stable-order greedy cover (I_R's inputs).
    pub fn cover(&self) -> &GreedyCover {
        &self.cover
    }

    /// Passes over the edges made for θ not yet known (for reports).
    pub fn passes(&self) -> usize {
        *self.passes.lock().expect("cache lock")
    }

    /// The projection table a release reads for `thetas`, with `classes`:
    /// θ not yet known are projected in one pass, then kept.
    pub fn table(&self, thetas: &[DegreeBound], classes: Option<ClassFacts>) -> ProjectionTable {
        let max_degree = self.exact.max_degree;
        let whole = |theta: DegreeBound| ProjectedCounts {
            theta,
            edges: self.exact.edges,
            problematic: self.exact.problematic,
        };
        let mut missing: Vec<DegreeBound> = {
            let known = self.known.lock().expect("cache lock");
            thetas
                .iter()
                .copied()
                .filter(|t| t.get() < max_degree && !known.contains_key(&t.get()))
                .collect()
        };
        missing.sort_unstable();
        missing.dedup();
        if !missing.is_empty() {
            // Computed outside the lock: another thread may project the
            // same θ meanwhile, and both get the same counts.
            let projected = measure_pass(self.graph, &missing, self.threads).projected;
            *self.passes.lock().expect("cache lock") += 1;
            let mut known = self.known.lock().expect("cache lock");
            for counts in projected {
                known.insert(counts.theta.get(), counts);
            }
        }
        let known = self.known.lock().expect("cache lock");
        let counts: Vec<ProjectedCounts> = thetas
            .iter()
            .map(|&t| if t.get() >= max_degree { whole(t) } else { known[&t.get()] })
            .collect();
        ProjectionTable::new(self.exact, counts).with_classes(classes)
    }
}

#[cfg(test)]
mod tests {
    use dpincon_graph::{ConflictGraph, Edge};
    use dpincon_measures::{DegreeBound, measure_pass};

    use super::*;

    fn loaded(graph: ConflictGraph) -> LoadedJob {
        LoadedJob {
            graph,
            facts: dpincon_release::TableFacts {
                rows: 0,
                max_frequencies: vec![],
                minimal_max_frequencies: vec![],
                cross_max_frequencies: vec![],
                unbounded: false,
                covers: Default::default(),
                classes: None,
            },
            plans: vec![],
            constraint_count: 0,
            threads: 1,
            read_s: 0.0,
            detect_s: 0.0,
            fingerprint: None,
            stats: (),
        }
    }

    /// Cached lookups give what a fresh pass gives, for θ below, at and
    /// above the maximum degree, and known θ cost no pass.
    #[test]
    fn cached_projections_equal_a_fresh_pass() {
        // A star of 5 leaves on node 0, a triangle 6-7-8, an edge 9-10.
        let edges = [(0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (6, 7), (6, 8), (7, 8), (9, 10)];
        let job = loaded(ConflictGraph::from_edges(11, edges.map(|(a, b)| Edge::new(a, b))));
        let cache = ProjectionCache::new(&job);
        let thetas: Vec<DegreeBound> = [1, 2, 3, 5, 9].map(|t| DegreeBound::new(t).unwrap()).into();
        let fresh = measure_pass(&job.graph, &thetas, 1).projected;
        for _ in 0..2 {
            let table = cache.table(&thetas, None);
            for counts in &fresh {
                assert_eq!(table.get(counts.theta.get()).unwrap(), *counts);
            }
        }
        assert_eq!(cache.passes(), 1, "θ 1, 2, 3 once; 5 and 9 keep the whole graph");
        let table = cache.table(&[DegreeBound::new(2).unwrap()], None);
        assert_eq!(table.get(2).unwrap().edges, fresh[1].edges);
        assert_eq!(cache.passes(), 1);
    }
}
