//! The accuracy sweep: every strategy at several ε, beside the oracle.

use dpincon_api::Strategy;
use dpincon_release::ProjectedMeasure;
use serde::{Deserialize, Serialize};

use super::curve::ProjectionCurve;
use super::utility::{UtilityRow, utility};
use crate::load::LoadedJob;
use crate::{EngineError, JobConfig, NON_PRIVATE_LABEL};

/// The oracle's name in sweep rows.
pub const ORACLE: &str = "oracle";

/// What to sweep.
#[derive(Debug, Clone)]
pub struct SweepOptions {
    /// ε per measure, each swept.
    pub epsilons: Vec<f64>,
    /// The strategies compared.
    pub strategies: Vec<Strategy>,
    /// Seeded runs per (ε, strategy).
    pub runs: usize,
    /// The first seed.
    pub seed: u64,
}

/// One point of the sweep: a measure under one strategy (or the oracle) at one ε.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepRow {
    /// ε per measure.
    pub epsilon: f64,
    /// The measure and its error figures.
    #[serde(flatten)]
    pub row: UtilityRow,
}

/// The sweep's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepReport {
    /// Always [`NON_PRIVATE_LABEL`].
    pub label: String,
    /// Seeded runs per point.
    pub runs: usize,
    /// The points, by ε, then measure, then strategy.
    pub rows: Vec<SweepRow>,
}

/// Runs every strategy `runs` times at every ε, calling `tick` after each ε,
/// and adds the oracle of [`oracle`] for I_MI and I_P.
pub fn sweep(
    config: &JobConfig,
    loaded: &LoadedJob,
    curve: &ProjectionCurve,
    options: &SweepOptions,
    tick: &dyn Fn(),
) -> Result<SweepReport, EngineError> {
    let mut rows = Vec::new();
    for &epsilon in &options.epsilons {
        let mut job = config.clone();
        job.release.epsilon = Some(epsilon);
        let report = utility(&job, loaded, &options.strategies, options.runs, options.seed)?;
        rows.extend(report.rows.into_iter().map(|row| SweepRow { epsilon, row }));
        tick();
        for measure in [ProjectedMeasure::Mi, ProjectedMeasure::P] {
            if !config.release.measures().contains(&measure.into()) {
                continue;
            }
            let (theta, error) = oracle(curve, measure, epsilon);
            rows.push(SweepRow {
                epsilon,
                row: UtilityRow {
                    measure: measure.into(),
                    strategy: ORACLE.into(),
                    exact: values(curve, measure).last().copied().unwrap_or(0),
                    mean_relative_error: error,
                    median_relative_error: error,
                    mean_theta: Some(f64::from(theta)),
                },
            });
        }
    }
    Ok(SweepReport { label: NON_PRIVATE_LABEL.into(), runs: options.runs, rows })
}

fn values(curve: &ProjectionCurve, measure: ProjectedMeasure) -> &[u64] {
    match measure {
        ProjectedMeasure::Mi => &curve.edges,
        ProjectedMeasure::P => &curve.problematic,
    }
}

/// The floor no private selector can beat: the best fixed θ in hindsight,
/// released with the whole ε (nothing spent on choosing), scored by its
/// exact expected relative error. Returns (θ, error).
pub fn oracle(curve: &ProjectionCurve, measure: ProjectedMeasure, epsilon: f64) -> (u32, f64) {
    let values = values(curve, measure);
    let exact = values.last().copied().unwrap_or(0);
    curve
        .thetas
        .iter()
        .zip(values)
        .map(|(&theta, &value)| {
            let scale = measure.sensitivity(theta) as f64 / epsilon;
            (theta, expected_error(value, exact, scale) / exact.max(1) as f64)
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or((1, 0.0))
}

/// E|max(0, x + N) − F| for N ~ DLap(s), P(N = k) ∝ q^|k|, q = e^(−1/s), in
/// closed form: with T(m) = E[(N − m)⁺] = q^(m+1) / ((1 + q)(1 − q)),
/// E|x − F + N| = |x − F| + 2·T(|x − F|), and the clamp at 0 saves T(x).
pub fn expected_error(value: u64, exact: u64, scale: f64) -> f64 {
    let q = (-1.0 / scale).exp();
    let tail = |m: f64| q.powf(m + 1.0) / ((1.0 + q) * (1.0 - q));
    let bias = (value as f64 - exact as f64).abs();
    bias + 2.0 * tail(bias) - tail(value as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The closed form against a direct sum over the discrete Laplace pmf.
    #[test]
    fn expected_error_matches_the_sum_over_the_pmf() {
        for (value, exact, scale) in [(0, 0, 1.0), (5, 9, 2.5), (100, 100, 30.0), (3, 50, 10.0)] {
            let q: f64 = (-1.0f64 / scale).exp();
            let norm = (1.0 - q) / (1.0 + q);
            let direct: f64 = (-4000i64..=4000)
                .map(|k| {
                    let released = (value as i64 + k).max(0);
                    norm * q.powi(k.abs() as i32) * (released - exact as i64).abs() as f64
                })
                .sum();
            let closed = expected_error(value, exact, scale);
            assert!((closed - direct).abs() < 1e-6 * direct.max(1.0), "{closed} vs {direct}");
        }
    }

    #[test]
    fn oracle_picks_the_theta_trading_bias_for_noise() {
        // A curve that saturates at θ = 40 of 1000 edges: at ε = 1 the best
        // θ keeps nearly every edge with little noise.
        let thetas: Vec<u32> = (1..=200).collect();
        let edges: Vec<u64> = thetas.iter().map(|&t| (25 * u64::from(t)).min(1000)).collect();
        let curve = ProjectionCurve {
            exact: dpincon_measures::measure_pass(
                &dpincon_graph::ConflictGraph::from_edges(1, []),
                &[],
                1,
            )
            .exact(),
            thetas,
            problematic: edges.clone(),
            edges,
        };
        let (theta, error) = oracle(&curve, ProjectedMeasure::Mi, 1.0);
        assert_eq!(theta, 40);
        assert!(error > 0.03 && error < 0.05, "noise alone at θ = 40: {error}");
        let (theta, _) = oracle(&curve, ProjectedMeasure::Mi, 0.01);
        assert!(theta < 40, "at tiny ε truncating pays: θ = {theta}");
    }
}
