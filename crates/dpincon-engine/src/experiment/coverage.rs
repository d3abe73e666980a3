//! How often each released interval holds the measure itself, and how
//! often an audit verdict drawn from it is wrong (issue 33). NON-PRIVATE:
//! it scores releases against exact values.
//!
//! Per run and measure: is the truth F in `ci95`, is the point inside it,
//! the interval's width relative to F, and the verdicts of `measure <= T`
//! checks (the audit's rule: pass when the whole interval is at or
//! below T, fail when above, else inconclusive) for thresholds on both
//! sides of F. For I_MI and I_P one threshold sits between the projected
//! count f(G_θ*) and F, where a noise-only interval would pass wrongly.

use dpincon_measures::DegreeBound;
use dpincon_release::{NoiseRng, ProjectedMeasure, prepare, release_projected, release_repair};
use serde::{Deserialize, Serialize};

use super::cache::ProjectionCache;
use crate::job::noise_rng;
use crate::load::LoadedJob;
use crate::privacy::{budget_split, repair_values};
use crate::repair::{EXACT_COVER_WORK, exact_repair};
use crate::{EngineError, JobConfig, Measure, NON_PRIVATE_LABEL};

/// Thresholds, as multiples of F, where the truth is above them (a pass
/// is wrong) and below them (a fail is wrong).
const BELOW_TRUTH: [f64; 2] = [0.8, 0.95];
const ABOVE_TRUTH: [f64; 2] = [1.05, 1.25];

/// What to run.
#[derive(Debug, Clone)]
pub struct CoverageOptions {
    /// ε per measure, each run.
    pub epsilons: Vec<f64>,
    /// Seeded runs per ε.
    pub runs: usize,
    /// The first seed.
    pub seed: u64,
}

/// One measure at one ε, over all runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoverageRow {
    /// ε per measure.
    pub epsilon: f64,
    /// `mi`, `p` or `r`.
    pub measure: Measure,
    /// The exact value.
    pub exact: u64,
    /// Runs.
    pub runs: usize,
    /// Runs whose interval held the exact value.
    pub covered: usize,
    /// `covered / runs`.
    pub coverage: f64,
    /// Runs whose point lay outside its own interval.
    pub point_outside: usize,
    /// Median of (hi − lo) / max(F, 1).
    pub median_relative_width: f64,
    /// Mean of |point − F| / max(F, 1).
    pub mean_relative_error: f64,
    /// I_MI, I_P: how often the noise-only 95% interval around the point
    /// (the one released before issue 33) held F.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noise_only_coverage: Option<f64>,
    /// I_MI, I_P: its median width relative to F.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noise_only_median_width: Option<f64>,
    /// Verdicts of `<=` checks at thresholds on both sides of F.
    pub verdicts: usize,
    /// Of those, wrong ones (pass with F > T, or fail with F ≤ T).
    pub wrong_verdicts: usize,
    /// Runs where f(G_θ*) < F (I_MI, I_P): a check with T between them.
    pub between_runs: usize,
    /// Of those, passes (wrong: F > T).
    pub between_passes: usize,
    /// I_MI, I_P: the mean θ* (τ under a class count).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_theta: Option<f64>,
}

impl CoverageRow {
    /// A row of `measure` with nothing counted yet.
    pub fn empty(measure: Measure) -> Self {
        CoverageRow {
            epsilon: 0.0,
            measure,
            exact: 0,
            runs: 0,
            covered: 0,
            coverage: 0.0,
            point_outside: 0,
            median_relative_width: 0.0,
            mean_relative_error: 0.0,
            noise_only_coverage: None,
            noise_only_median_width: None,
            verdicts: 0,
            wrong_verdicts: 0,
            between_runs: 0,
            between_passes: 0,
            mean_theta: None,
        }
    }
}

/// The experiment's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoverageReport {
    /// Always [`NON_PRIVATE_LABEL`].
    pub label: String,
    /// The intervals' stated coverage.
    pub stated: f64,
    /// The rows, by ε then measure.
    pub rows: Vec<CoverageRow>,
}

/// `measure <= threshold`'s verdict from `interval`: Some(true) pass,
/// Some(false) fail, None inconclusive (the audit's rule).
fn verdict([lo, hi]: [i64; 2], threshold: f64) -> Option<bool> {
    if hi as f64 <= threshold {
        Some(true)
    } else if lo as f64 > threshold {
        Some(false)
    } else {
        None
    }
}

/// Accumulates one measure's runs.
struct Tally {
    row: CoverageRow,
    widths: Vec<f64>,
    errors: f64,
    /// The noise-only interval's hits and widths (I_MI, I_P).
    noise_only: (usize, Vec<f64>),
    /// θ* of each run (I_MI, I_P).
    thetas: Vec<u32>,
}

impl Tally {
    fn new(measure: Measure) -> Self {
        let row = CoverageRow::empty(measure);
        Tally { row, widths: vec![], errors: 0.0, noise_only: (0, vec![]), thetas: vec![] }
    }

    fn add(&mut self, exact: u64, point: i64, ci: [i64; 2], projected: Option<u64>) {
        let f = exact as f64;
        let scale = exact.max(1) as f64;
        let r = &mut self.row;
        r.exact = exact;
        r.runs += 1;
        r.covered += usize::from(ci[0] as f64 <= f && f <= ci[1] as f64);
        r.point_outside += usize::from(point < ci[0] || point > ci[1]);
        self.widths.push((ci[1] - ci[0]) as f64 / scale);
        self.errors += (point as f64 - f).abs() / scale;
        for (multiples, pass_is_wrong) in [(BELOW_TRUTH, true), (ABOVE_TRUTH, false)] {
            // With F = 0 no threshold lies below the truth.
            if exact == 0 && pass_is_wrong {
                continue;
            }
            for m in multiples {
                let v = verdict(ci, m * f);
                r.verdicts += 1;
                r.wrong_verdicts += usize::from(v == Some(pass_is_wrong));
            }
        }
        if let Some(p) = projected.filter(|&p| p < exact) {
            r.between_runs += 1;
            let threshold = (p as f64 + f) / 2.0;
            r.between_passes += usize::from(verdict(ci, threshold) == Some(true));
        }
    }

    /// The noise-only interval [point − h, point + h] (h at 95%) of a run.
    fn add_noise_only(&mut self, exact: u64, point: i64, h: u64) {
        let (lo, hi) = (point.saturating_sub(h as i64).max(0), point.saturating_add(h as i64));
        let f = exact as i64;
        self.noise_only.0 += usize::from(lo <= f && f <= hi);
        self.noise_only.1.push((hi - lo) as f64 / exact.max(1) as f64);
    }

    fn finish(mut self, epsilon: f64) -> CoverageRow {
        let runs = self.row.runs.max(1) as f64;
        self.widths.sort_by(f64::total_cmp);
        let (hits, mut widths) = self.noise_only;
        widths.sort_by(f64::total_cmp);
        let noise_only = !widths.is_empty();
        let thetas = &self.thetas;
        let mean_theta = (!thetas.is_empty())
            .then(|| thetas.iter().map(|&t| f64::from(t)).sum::<f64>() / thetas.len() as f64);
        CoverageRow {
            mean_theta,
            noise_only_coverage: noise_only.then(|| hits as f64 / runs),
            noise_only_median_width: widths.get(widths.len() / 2).copied(),
            epsilon,
            coverage: self.row.covered as f64 / runs,
            median_relative_width: self.widths.get(self.widths.len() / 2).copied().unwrap_or(0.0),
            mean_relative_error: self.errors / runs,
            ..self.row
        }
    }
}

/// Runs every measure of `config` `runs` times per ε (seeds `seed`,
/// `seed + 1`, …) and scores the intervals; `tick` after each ε.
pub fn coverage(
    config: &JobConfig,
    loaded: &LoadedJob,
    options: &CoverageOptions,
    tick: &dyn Fn(),
) -> Result<CoverageReport, EngineError> {
    coverage_with(config, loaded, options, &ProjectionCache::new(loaded), tick)
}

/// [`coverage`] reading f(G_θ) from `cache` (built on `loaded`), which
/// keeps them for the next call: one experiment over many strategies
/// projects each θ once.
pub fn coverage_with(
    config: &JobConfig,
    loaded: &LoadedJob,
    options: &CoverageOptions,
    cache: &ProjectionCache<'_>,
    tick: &dyn Fn(),
) -> Result<CoverageReport, EngineError> {
    if options.runs == 0 {
        return Err(EngineError::Config("an experiment needs at least one run".into()));
    }
    let graph = &loaded.graph;
    let threads = loaded.threads;
    // I_R's inputs do not depend on the noise: computed once.
    let wants_r = config.release.measures().contains(&Measure::R);
    let exact = cache.exact();
    let repair = wants_r.then(|| {
        let greedy = cache.cover().size().cover;
        let facts = exact_repair(graph, greedy, EXACT_COVER_WORK, threads);
        (repair_values(graph, &loaded.facts, cache.cover(), true, threads), facts.min_cover)
    });
    let mut rows = Vec::new();
    for &epsilon in &options.epsilons {
        let mut job = config.clone();
        job.release.epsilon = Some(epsilon);
        job.test.non_private = true;
        let privacy = budget_split(&job)?
            .ok_or_else(|| EngineError::Config("an experiment needs --epsilon".into()))?;
        let mut tallies = Measure::ALL.map(Tally::new);
        for run in 0..options.runs {
            let mut rng: NoiseRng = noise_rng(Some(options.seed.wrapping_add(run as u64)))?;
            let prepared = privacy
                .projected
                .iter()
                .map(|spec| prepare(spec, &loaded.facts, &mut rng))
                .collect::<Result<Vec<_>, _>>()?;
            let mut thetas: Vec<DegreeBound> = prepared.iter().flat_map(|p| p.thetas()).collect();
            thetas.sort_unstable();
            thetas.dedup();
            let table = cache.table(&thetas, loaded.facts.classes.clone());
            for p in &prepared {
                let r = release_projected(p, &table, &mut rng)?;
                let (i, truth) = match r.measure {
                    ProjectedMeasure::Mi => (0, exact.edges),
                    ProjectedMeasure::P => (1, exact.problematic),
                };
                let projected = table.get(r.theta).ok().map(|c| r.measure.value(&c));
                tallies[i].add(truth, r.value, r.ci95, projected);
                tallies[i].thetas.push(r.theta);
                tallies[i].add_noise_only(truth, r.value, r.noise()?.ci95_halfwidth());
            }
            if let Some((values, Some(min_cover))) = repair {
                let r = release_repair(privacy.repair, privacy.epsilon, values, &mut rng)?;
                tallies[2].add(min_cover, r.value, r.ci95, None);
            }
        }
        for tally in tallies {
            if tally.row.runs > 0 {
                rows.push(tally.finish(epsilon));
            }
        }
        tick();
    }
    Ok(CoverageReport { label: NON_PRIVATE_LABEL.into(), stated: dpincon_release::COVERAGE, rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_follow_the_audit_rule_and_wrong_ones_are_counted() {
        assert_eq!(verdict([3, 5], 5.0), Some(true));
        assert_eq!(verdict([3, 5], 2.9), Some(false));
        assert_eq!(verdict([3, 5], 4.0), None);
        let mut t = Tally::new(Measure::Mi);
        // F = 100: [90, 94] misses it and passes the 0.95·F check wrongly.
        t.add(100, 92, [90, 94], Some(80));
        let r = t.finish(1.0);
        assert_eq!((r.covered, r.point_outside), (0, 0));
        assert_eq!((r.verdicts, r.wrong_verdicts), (4, 1));
        assert_eq!((r.between_runs, r.between_passes), (1, 0));
    }
}
