//! Mean relative error of each measure and strategy over seeded runs (SPEC
//! §10). I_R is scored against the exact minimum cover, with the paper's
//! yardstick 2·LP beside it (SPEC §6: the paper's I_R error is against
//! 2·LP, itself a 2-approximation, not against I_R).

use dpincon_api::Strategy;
use dpincon_release::{ProjectedMeasure, RepairMethod, RepairValues, release_repair};
use serde::{Deserialize, Serialize};

use crate::job::noise_rng;
use crate::load::LoadedJob;
use crate::privacy::{budget_split, matchings_outside_keys, measure_and_release};
use crate::repair::{EXACT_COVER_WORK, RepairFacts, exact_repair};
use crate::{EngineError, JobConfig, Measure, NON_PRIVATE_LABEL};

/// One measure under one strategy, over all runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UtilityRow {
    /// `mi`, `p` or `r`.
    pub measure: Measure,
    /// The strategy choosing θ*. For I_R, the `--ir-method`, scored against
    /// the exact minimum cover, or `METHOD vs 2lp`: against the paper's
    /// yardstick 2·LP.
    pub strategy: String,
    /// The exact value errors are relative to (I_R: the minimum cover, or 2·LP).
    pub exact: u64,
    /// Mean of |released − exact| / exact.
    pub mean_relative_error: f64,
    /// Median of the same.
    pub median_relative_error: f64,
    /// Mean θ* (projected measures).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_theta: Option<f64>,
}

/// The experiment's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UtilityReport {
    /// Always [`NON_PRIVATE_LABEL`]: the experiment reads exact values.
    pub label: String,
    /// ε per measure.
    pub epsilon: f64,
    /// Seeded runs per row.
    pub runs: usize,
    /// The rows.
    pub rows: Vec<UtilityRow>,
    /// I_R's exact values (when I_R is released): without `min_cover`,
    /// the exact minimum cover was too slow and I_R is scored against 2·LP
    /// only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repair: Option<RepairFacts>,
}

fn relative_errors(released: &[i64], exact: u64) -> (f64, f64) {
    let denominator = exact.max(1) as f64;
    let mut errors: Vec<f64> =
        released.iter().map(|&v| (v as f64 - exact as f64).abs() / denominator).collect();
    errors.sort_by(f64::total_cmp);
    let mean = errors.iter().sum::<f64>() / errors.len().max(1) as f64;
    let median = errors.get(errors.len() / 2).copied().unwrap_or(0.0);
    (mean, median)
}

/// Releases every measure `runs` times per strategy (seeds `seed`,
/// `seed + 1`, ...) on an already loaded job and scores them.
pub fn utility(
    config: &JobConfig,
    loaded: &LoadedJob,
    strategies: &[Strategy],
    runs: usize,
    seed: u64,
) -> Result<UtilityReport, EngineError> {
    if runs == 0 {
        return Err(EngineError::Config("an experiment needs at least one run".into()));
    }
    let mut rows = Vec::new();
    // The strategy runs release I_MI and I_P only: I_R does not depend on the
    // strategy, and its LP would otherwise be solved again in every run.
    let projected: Vec<Measure> =
        config.release.measures().into_iter().filter(|&m| m != Measure::R).collect();
    let strategies = if projected.is_empty() { &[][..] } else { strategies };
    for &strategy in strategies {
        let mut job = config.clone();
        job.release.strategy = Some(strategy);
        job.release.measures = Some(projected.clone());
        job.test.non_private = true;
        let privacy = budget_split(&job)?
            .ok_or_else(|| EngineError::Config("an experiment needs --epsilon".into()))?;
        let mut values: [Vec<i64>; 2] = [vec![], vec![]];
        let mut thetas: [Vec<u32>; 2] = [vec![], vec![]];
        let mut exact = [0u64; 2];
        for run in 0..runs {
            let mut rng = noise_rng(Some(seed.wrapping_add(run as u64)))?;
            let release = Some((&privacy, &mut rng));
            let pass = measure_and_release(&loaded.graph, release, &loaded.facts, loaded.threads)?;
            exact = [pass.exact.edges, pass.exact.problematic];
            let measures = pass.releases.expect("a plan releases");
            for (i, release) in [&measures.mi, &measures.p].into_iter().enumerate() {
                if let Some(r) = release {
                    values[i].push(r.value);
                    thetas[i].push(r.theta);
                }
            }
        }
        for (i, measure) in [ProjectedMeasure::Mi, ProjectedMeasure::P].into_iter().enumerate() {
            if values[i].is_empty() {
                continue;
            }
            let (mean, median) = relative_errors(&values[i], exact[i]);
            let mean_theta =
                thetas[i].iter().map(|&t| f64::from(t)).sum::<f64>() / thetas[i].len() as f64;
            rows.push(UtilityRow {
                measure: measure.into(),
                strategy: strategy.name().to_string(),
                exact: exact[i],
                mean_relative_error: mean,
                median_relative_error: median,
                mean_theta: Some(mean_theta),
            });
        }
    }
    // I_R does not depend on the strategy: scored once per method.
    let repair = if config.release.measures().contains(&Measure::R) {
        Some(repair_rows(config, loaded, runs, seed, &mut rows)?)
    } else {
        None
    };
    Ok(UtilityReport {
        label: NON_PRIVATE_LABEL.into(),
        epsilon: config.release.epsilon.unwrap_or_default(),
        runs,
        rows,
        repair,
    })
}

/// Releases I_R `runs` times by every `--ir-method` and scores each against
/// the exact minimum cover (when computed) and against 2·LP.
fn repair_rows(
    config: &JobConfig,
    loaded: &LoadedJob,
    runs: usize,
    seed: u64,
    rows: &mut Vec<UtilityRow>,
) -> Result<RepairFacts, EngineError> {
    let privacy = budget_split(config)?
        .ok_or_else(|| EngineError::Config("an experiment needs --epsilon".into()))?;
    let greedy = dpincon_measures::measure_pass(&loaded.graph, &[], 1).cover.size().cover;
    let facts = exact_repair(&loaded.graph, greedy, EXACT_COVER_WORK, loaded.threads);
    let twice_lp = facts.paper_yardstick();
    let outside = matchings_outside_keys(&loaded.graph, &loaded.facts);
    let values = RepairValues::new(greedy, Some(twice_lp), &outside, &loaded.facts);
    for method in RepairMethod::ALL {
        let mut released = Vec::with_capacity(runs);
        for run in 0..runs {
            let mut rng = noise_rng(Some(seed.wrapping_add(run as u64)))?;
            released.push(release_repair(method, privacy.epsilon, values, &mut rng)?.value);
        }
        let yardsticks = [("", facts.min_cover), (" vs 2lp", Some(twice_lp))];
        for (yardstick, exact) in yardsticks {
            let Some(exact) = exact else { continue };
            let (mean, median) = relative_errors(&released, exact);
            rows.push(UtilityRow {
                measure: Measure::R,
                strategy: format!("{}{yardstick}", method.name()),
                exact,
                mean_relative_error: mean,
                median_relative_error: median,
                mean_theta: None,
            });
        }
    }
    Ok(facts)
}

#[cfg(test)]
mod tests {
    use super::relative_errors;

    #[test]
    fn relative_errors_mean_and_median() {
        let (mean, median) = relative_errors(&[90, 100, 130], 100);
        assert!((mean - (0.1 + 0.0 + 0.3) / 3.0).abs() < 1e-12);
        assert!((median - 0.1).abs() < 1e-12);
        // An exact value of 0 divides by 1: the error is the absolute one.
        assert_eq!(relative_errors(&[2], 0), (2.0, 2.0));
    }
}
