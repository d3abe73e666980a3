//! The second half of a projected release: choosing θ* from the pass's
//! projection table and adding the final noise (SPEC §4, §4.1, §8).

use dpincon_mechanisms::{Budget, DiscreteLaplace, NoiseRng, SelectorExt};
use serde::{Deserialize, Serialize};

use crate::classes::NoisyClassBound;
use crate::gem;
use crate::interval::{IntervalBounds, measure_interval, paired_interval};
use crate::miss::COVERAGE;
use crate::prepare::{Choice, Prepared};
use crate::selection::{Strategy, quality_scores};
use crate::spec::{BudgetUse, MaxRows, NoisyDegreeBound};
use crate::{ProjectedMeasure, ProjectionTable, ReleaseError};

/// One selection step, as reported (everything here is public).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelectionStep {
    /// Candidates θ.
    pub candidates: Vec<u32>,
    /// `em` (one step of em/hem/ub-hem), `gem`, `floor-look` (ub-direct's
    /// noisy f(G_θc) raising θ* from its floor), `class-count` (ub-direct's
    /// I_P by class count, chosen from the noisy class bound) or
    /// `leading-count` (ub-direct's I_P over several X: τ₀ or θ*, chosen by
    /// the noisy M; its sensitivity is M's).
    pub mechanism: String,
    /// θmax the quality sensitivity is based on (the largest candidate).
    pub theta_max: u32,
    /// Sensitivity of the quality function (`gem`: 1, in the fixed-point
    /// units of `dpincon_release::gem`, 2^20 + 1).
    pub sensitivity: u64,
    /// ε of the step.
    pub epsilon: f64,
    /// The chosen θ.
    pub chosen: u32,
}

/// A second release of the same pass at a larger θ, read only for the
/// interval's upper end (README, "the seventeenth round"); a DP release.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalRelease {
    /// Its θ (d̃ + margin).
    pub theta: u32,
    /// f(G_θ) + DLap(Δ(θ)/ε_u), not clamped.
    pub value: i64,
    /// Its discrete Laplace scale Δ(θ)/ε_u (rounded up).
    pub noise_scale: f64,
    /// ε_u, a part of `budget.release`.
    pub epsilon: f64,
}

/// A released projected measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProjectedRelease {
    /// `mi` or `p`.
    pub measure: ProjectedMeasure,
    /// The noisy value f(G_θ*) + DLap(Δ(θ*)/ε2), clamped at 0 (post-processing);
    /// under a class count, max(f(G_τ), capped(τ)) + DLap((τ + 1)/ε2); under
    /// a leading count, max(f(G_τ), the count) + DLap(max(1 + k_key +
    /// k_fd·τ, τ + 1)/ε2).
    pub value: i64,
    /// The measure's ε.
    pub epsilon: f64,
    /// Δ(θ*) of the final noise.
    pub sensitivity: u64,
    /// The discrete Laplace scale Δ(θ*)/ε2 (rounded up).
    pub noise_scale: f64,
    /// An interval that holds the measure itself (F, not only f(G_θ*))
    /// with probability at least `coverage`, the projection's bias
    /// included (README of this crate, "Intervals").
    pub ci95: [i64; 2],
    /// [`crate::COVERAGE`].
    pub coverage: f64,
    /// The high-confidence bounds `ci95`'s upper end rests on (public).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bounds: Option<IntervalBounds>,
    /// θ*, or τ of I_P's class count (`class_bound` set) or leading count
    /// (`bounds.leading` set).
    pub theta: u32,
    /// The strategy that chose θ*.
    pub strategy: Strategy,
    /// `em` or `permute-and-flip`.
    pub selector: String,
    /// Whether the release is differentially private (`baseline-truemax` is not).
    pub private: bool,
    /// The row bound in use.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_rows: Option<MaxRows>,
    /// ub-hem's noisy degree bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub degree_bound: Option<NoisyDegreeBound>,
    /// The noisy class bound, when I_P was released by class count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class_bound: Option<NoisyClassBound>,
    /// M + noise (what the leading count misses), when its look ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leading_miss: Option<i64>,
    /// The selection steps.
    pub selection: Vec<SelectionStep>,
    /// The interval's second release, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval_release: Option<IntervalRelease>,
    /// Where ε went.
    pub budget: BudgetUse,
}

impl ProjectedRelease {
    /// The final release's noise DLap(Δ(θ*)/ε2), rebuilt from the report's
    /// public fields: ε2 is `budget.release` less the interval release's
    /// ε_u, when there is one. For reading its tails (a note, a noise-only
    /// interval), never for drawing.
    ///
    /// # Errors
    /// Only where the report's fields could not have come from a release.
    pub fn noise(&self) -> Result<DiscreteLaplace, ReleaseError> {
        let upper = self.interval_release.as_ref().map_or(0.0, |u| u.epsilon);
        Ok(DiscreteLaplace::new(self.sensitivity, self.budget.release - upper)?)
    }
}

/// With a degree bound, θ* also rises to (v − c·θ_c/ε_t)/a, v's lower end
/// over a (README of this crate, "the eighth round"): a count of a·θ
/// edges at the floor means many rows saturated there, so dense graphs,
/// whose counts keep growing past the floor, leave it, while a few stars
/// (v ≈ 6·θ_c) stay. a = 6 and c = 1 were chosen on the training tables.
const FLOOR_DENSITY: f64 = 6.0;
/// c above: look noise scales taken off v before dividing by a.
const FLOOR_DENSITY_MARGIN: f64 = 1.0;
/// With a degree bound, θ* rises to the density cap (the smaller of ñ' and
/// the bound) when v's lower end holds this many θ_c's worth of edges: on
/// dense hubs (tens of rows saturated at the floor) the degrees run on to
/// a large share of n, which a raise to v/a never reaches (README of this
/// crate, "the nineteenth round": chosen on the suite's dense `hubs`
/// tables, validated on held-out Flight).
const FLOOR_DENSE: f64 = 10.0;

/// Chooses θ* and releases f(G_θ*) + DLap(Δ(θ*)/ε2).
pub fn release_projected(
    prepared: &Prepared,
    table: &ProjectionTable,
    rng: &mut NoiseRng,
) -> Result<ProjectedRelease, ReleaseError> {
    let spec = &prepared.spec;
    let measure = spec.measure;
    let release = prepared.release;
    let mut steps = Vec::new();
    let theta = match &prepared.choice {
        Choice::Fixed(theta) => *theta,
        Choice::TrueMax => table.exact().max_degree.max(1),
        Choice::Hierarchical { candidates, unbiased, first_theta_max, steps: budgets } => {
            hierarchical(
                prepared,
                table,
                candidates,
                *unbiased,
                *first_theta_max,
                budgets,
                &mut steps,
                rng,
            )?
        }
        Choice::Generalized { candidates, epsilon, penalty } => {
            generalized(prepared, table, candidates, *epsilon, *penalty, &mut steps, rng)?
        }
        Choice::Floored { floor, top, test, grid, density_cap, ratio } => {
            // v = f(G_θc) + DLap(Δ(θc)/ε_t); θ* keeps the release's noise
            // scale Δ(θ)/ε2 at most v/κ, or (with a density cap) rises to the
            // density raise, or to the cap where v is dense, between θc and
            // top: post-processing.
            let sensitivity = measure.sensitivity(*floor);
            let look = DiscreteLaplace::new(sensitivity, test.value())?;
            let noisy = look.release(measure.value(&table.get(*floor)?) as i64, rng) as f64;
            let mut raised = release.value() * noisy / ratio;
            if let Some(cap) = density_cap {
                let low = noisy - FLOOR_DENSITY_MARGIN * sensitivity as f64 / test.value();
                raised = raised.max((low / FLOOR_DENSITY).min(f64::from(*cap)));
                if low >= FLOOR_DENSE * f64::from(*floor) {
                    raised = raised.max(f64::from(*cap));
                }
            }
            let target = (raised.floor().max(0.0) as u64).clamp(u64::from(*floor), u64::from(*top));
            let chosen = grid
                .iter()
                .copied()
                .take_while(|&t| u64::from(t) <= target)
                .last()
                .unwrap_or(*floor);
            steps.push(SelectionStep {
                candidates: grid.clone(),
                mechanism: "floor-look".into(),
                theta_max: *top,
                sensitivity,
                epsilon: test.value(),
                chosen,
            });
            chosen
        }
        Choice::Classes { tau, theta, test } => {
            // Post-processing of the class bound: the step records it.
            steps.push(SelectionStep {
                candidates: if tau == theta { vec![*tau] } else { vec![*tau, *theta] },
                mechanism: "class-count".into(),
                theta_max: *theta,
                sensitivity: measure.sensitivity(*tau),
                epsilon: test.map_or(0.0, |t| t.value()),
                chosen: *tau,
            });
            *tau
        }
        Choice::Leading(leading) => {
            // Post-processing of M's draw: the step records it.
            steps.push(SelectionStep {
                candidates: vec![leading.tau, leading.theta],
                mechanism: "leading-count".into(),
                theta_max: leading.theta,
                sensitivity: leading.miss_sensitivity,
                epsilon: leading.look.map_or(0.0, |l| l.value()),
                chosen: leading.released(),
            });
            leading.released()
        }
    };
    let eps2 = release.value();
    let value = match &prepared.choice {
        Choice::TrueMax => measure.value(&table.at_max_degree()),
        // Both lower bounds on I_P, with sensitivities τ + 1 and 1 + k_key +
        // k_fd·τ (the larger is `sensitivity`): so is their max.
        Choice::Leading(leading) if leading.lead => {
            measure.value(&table.get(theta)?).max(table.leading_count()?)
        }
        // Both lower bounds on I_P with sensitivity τ + 1: so is their max.
        Choice::Classes { .. } | Choice::Leading(_) => {
            measure.value(&table.get(theta)?).max(table.capped_classes(theta)?)
        }
        _ => measure.value(&table.get(theta)?),
    };
    let sensitivity = match &prepared.choice {
        Choice::Leading(leading) if leading.lead => {
            leading.sensitivity.max(measure.sensitivity(theta))
        }
        _ => measure.sensitivity(theta),
    };
    let noise = DiscreteLaplace::new(sensitivity, eps2)?;
    let noisy = noise.release(value as i64, rng);
    // `baseline-truemax` (not private) truncates nothing.
    let bounds = prepared.bounds.unwrap_or(IntervalBounds {
        rows: None,
        max_degree: u64::from(table.exact().max_degree),
        classes: None,
        leading: None,
    });
    let (value, ci95, upper_release) = match prepared.upper {
        Some((top, epsilon)) => {
            let upper = DiscreteLaplace::new(measure.sensitivity(top), epsilon.value())?;
            let released = upper.release(measure.value(&table.get(top)?) as i64, rng);
            let (value, ci95) =
                paired_interval(measure, (noisy, &noise, theta), (released, &upper, top), bounds);
            let report = IntervalRelease {
                theta: top,
                value: released,
                noise_scale: upper.scale_f64(),
                epsilon: epsilon.value(),
            };
            (value, ci95, Some(report))
        }
        None => {
            let (value, ci95) = measure_interval(measure, noisy, &noise, theta, bounds);
            (value, ci95, None)
        }
    };
    Ok(ProjectedRelease {
        measure,
        value,
        epsilon: spec.epsilon.value(),
        sensitivity,
        noise_scale: noise.scale_f64(),
        ci95,
        coverage: COVERAGE,
        bounds: prepared.bounds,
        theta,
        strategy: spec.strategy,
        selector: spec.selector.name().to_string(),
        private: spec.strategy.is_private(),
        max_rows: prepared.max_rows,
        degree_bound: prepared.degree_bound,
        class_bound: prepared.class_bound,
        leading_miss: prepared.leading_miss,
        selection: steps,
        interval_release: upper_release,
        budget: prepared.budget,
    })
}

/// One GEM step over `candidates` (SPEC §4.1), for the prepared release.
fn generalized(
    prepared: &Prepared,
    table: &ProjectionTable,
    candidates: &[u32],
    epsilon: Budget,
    penalty: f64,
    steps: &mut Vec<SelectionStep>,
    rng: &mut NoiseRng,
) -> Result<u32, ReleaseError> {
    let spec = &prepared.spec;
    let measure = spec.measure;
    let values = candidates
        .iter()
        .map(|&t| table.get(t).map(|c| measure.value(&c)))
        .collect::<Result<Vec<_>, _>>()?;
    let deltas: Vec<u64> = candidates.iter().map(|&t| measure.sensitivity(t)).collect();
    let per_unit = gem::NOISE_STD_PER_SCALE / prepared.release.value() + penalty;
    let scores = gem::normalised_scores(&values, &deltas, per_unit);
    let index =
        spec.selector.select(epsilon.value(), gem::SENSITIVITY, &gem::qualities(&scores), rng)?;
    let chosen = candidates[index];
    steps.push(SelectionStep {
        candidates: candidates.to_vec(),
        mechanism: "gem".into(),
        theta_max: *candidates.last().unwrap_or(&chosen),
        sensitivity: gem::SENSITIVITY,
        epsilon: epsilon.value(),
        chosen,
    });
    Ok(chosen)
}

/// em / hem / ub-hem: one or two EM steps; step 2 keeps θ ≤ θ*1 and bases
/// its sensitivity on θ*1 (SPEC §4).
#[allow(clippy::too_many_arguments)]
fn hierarchical(
    prepared: &Prepared,
    table: &ProjectionTable,
    candidates: &[u32],
    unbiased: Option<u32>,
    first_theta_max: u32,
    budgets: &[Budget],
    steps: &mut Vec<SelectionStep>,
    rng: &mut NoiseRng,
) -> Result<u32, ReleaseError> {
    let spec = &prepared.spec;
    let measure = spec.measure;
    let eps2 = prepared.release.value();
    let mut candidates = candidates.to_vec();
    let mut theta_max = first_theta_max;
    let mut unbiased = unbiased;
    let mut chosen = theta_max;
    for (i, step) in budgets.iter().enumerate() {
        let reference =
            candidates.iter().copied().filter(|&t| Some(t) != unbiased).max().unwrap_or(theta_max);
        let scores = quality_scores(measure, table, &candidates, reference, eps2, unbiased)?;
        let sensitivity = measure.quality_sensitivity(theta_max);
        let index = spec.selector.select(step.value(), sensitivity, &scores, rng)?;
        chosen = candidates[index];
        steps.push(SelectionStep {
            candidates: candidates.clone(),
            mechanism: "em".into(),
            theta_max,
            sensitivity,
            epsilon: step.value(),
            chosen,
        });
        if i + 1 < budgets.len() {
            candidates.retain(|&t| t <= chosen);
            theta_max = chosen;
            unbiased = None;
        }
    }
    Ok(chosen)
}
