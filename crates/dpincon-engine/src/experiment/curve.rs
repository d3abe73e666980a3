//! The exact projection curve θ ↦ f(G_θ) (NON-PRIVATE).

use crate::load::LoadedJob;
use dpincon_measures::{DegreeBound, ExactCounts, count_degrees, measure_pass};

/// f(G_θ) for θ = 1, 2, … up to the maximum degree (where G_θ = G).
#[derive(Debug, Clone)]
pub struct ProjectionCurve {
    /// The unprojected counts.
    pub exact: ExactCounts,
    /// θ values, ascending: every integer up to `min(max degree, dense_limit)`,
    /// then a geometric grid (ratio 1.05) up to the maximum degree.
    pub thetas: Vec<u32>,
    /// I_MI of G_θ, per θ.
    pub edges: Vec<u64>,
    /// I_P of G_θ, per θ.
    pub problematic: Vec<u64>,
}

/// Computes the curve: the degrees give the maximum degree, then one
/// projection per θ below it ([`measure_pass`], O(n) memory per thread).
pub fn projection_curve(loaded: &LoadedJob, dense_limit: u32) -> ProjectionCurve {
    let exact = count_degrees(&loaded.graph, loaded.threads).counts();
    let top = exact.max_degree.max(1);
    let mut thetas: Vec<u32> = (1..=top.min(dense_limit.max(1))).collect();
    let mut t = f64::from(*thetas.last().unwrap_or(&1));
    while (t as u32) < top {
        t = (t * 1.05).ceil();
        thetas.push((t as u32).min(top));
    }
    thetas.dedup();
    let bounds: Vec<DegreeBound> = thetas.iter().filter_map(|&t| DegreeBound::new(t)).collect();
    let pass = measure_pass(&loaded.graph, &bounds, loaded.threads);
    ProjectionCurve {
        exact: pass.exact(),
        thetas,
        edges: pass.projected.iter().map(|c| c.edges).collect(),
        problematic: pass.projected.iter().map(|c| c.problematic).collect(),
    }
}
