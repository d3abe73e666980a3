//! Node degrees and the edge count in one pass over the edge stream.

use std::ops::ControlFlow;

use dpincon_graph::{Edge, Row};

use crate::EdgeVisitor;

/// Degrees of every node and the edge count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DegreeCounts {
    degree: Vec<u32>,
    edges: u64,
}

/// The exact (non-private) measures read off the degrees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExactCounts {
    /// Number of tuples n.
    pub rows: u64,
    /// I_MI: the number of conflicting pairs |E|.
    pub edges: u64,
    /// I_P: the number of tuples in some conflict.
    pub problematic: u64,
    /// The largest degree.
    pub max_degree: u32,
    /// I_D: 1 if some conflict exists.
    pub drastic: u8,
}

impl DegreeCounts {
    /// Counters for a graph on `nodes` nodes.
    pub fn new(nodes: u32) -> Self {
        DegreeCounts { degree: vec![0; nodes as usize], edges: 0 }
    }

    /// The degree of every node, indexed by tuple id.
    pub fn degrees(&self) -> &[u32] {
        &self.degree
    }

    /// Counts the row `u`, `upper` = its neighbours above it: the same as
    /// visiting each of its edges.
    pub fn visit_row(&mut self, u: u32, upper: Row<'_>) {
        let len = upper.len();
        self.degree[u as usize] += len as u32;
        let _ = upper.chunks(|chunk| {
            for &v in chunk {
                self.degree[v as usize] += 1;
            }
            ControlFlow::<()>::Continue(())
        });
        self.edges += len;
    }

    /// Adds the counts of another part of the same graph's rows.
    pub fn merge(&mut self, other: &DegreeCounts) {
        debug_assert_eq!(self.degree.len(), other.degree.len());
        for (d, o) in self.degree.iter_mut().zip(&other.degree) {
            *d += o;
        }
        self.edges += other.edges;
    }

    /// The measures.
    pub fn counts(&self) -> ExactCounts {
        ExactCounts {
            rows: self.degree.len() as u64,
            edges: self.edges,
            problematic: self.degree.iter().filter(|&&d| d > 0).count() as u64,
            max_degree: self.degree.iter().copied().max().unwrap_or(0),
            drastic: u8::from(self.edges > 0),
        }
    }
}

impl EdgeVisitor for DegreeCounts {
    fn visit(&mut self, edge: Edge) {
        self.degree[edge.u as usize] += 1;
        self.degree[edge.v as usize] += 1;
        self.edges += 1;
    }
}
