//! Driving the releases: budget splits, the noisy public bounds, the EM
//! steps and the final noise (SPEC §4, §5, §8).

use dpincon_measures::DegreeBound;
use dpincon_mechanisms::{Budget, DiscreteLaplace, NoiseRng, Selector};
use serde::Serialize;

use crate::selection::{Strategy, quality_scores};
use crate::{COVER_SENSITIVITY, ProjectedMeasure, ProjectionTable, ReleaseError};

/// Share of ε1 spent on ñ when the job declares no row bound (SPEC §4).
const MAX_ROWS_SHARE: f64 = 0.05;
/// Share of the selection budget spent on d̃ by `ub-hem` (Algorithm 4).
const DEGREE_BOUND_SHARE: f64 = 0.25;

/// What to release for one projected measure, and how.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectedSpec {
    /// I_MI or I_P.
    pub measure: ProjectedMeasure,
    /// How θ* is chosen.
    pub strategy: Strategy,
    /// Exponential mechanism or permute-and-flip for each selection step.
    pub selector: Selector,
    /// ε of this measure's release.
    pub epsilon: Budget,
    /// ε1/ε, the share that chooses θ* (SPEC default 0.4; ε2 is the rest).
    pub selection_share: f64,
    /// Candidate degree bounds Θ; default [`default_candidates`] of n_max.
    pub candidates: Option<Vec<u32>>,
    /// The public upper bound n_max on the row count, when declared.
    pub max_rows: Option<u64>,
}

impl ProjectedSpec {
    /// The SPEC's defaults for `measure` at budget `epsilon`.
    pub fn new(measure: ProjectedMeasure, epsilon: Budget) -> Self {
        ProjectedSpec {
            measure,
            strategy: Strategy::default(),
            selector: Selector::default(),
            epsilon,
            selection_share: 0.4,
            candidates: None,
            max_rows: None,
        }
    }
}

/// Private facts about the table that [`prepare`] releases with noise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableFacts {
    /// The row count n (never a noise scale or candidate, SPEC §6.4).
    pub rows: u64,
    /// maxfreq_X(D) for each distinct equality attribute set X.
    pub max_frequencies: Vec<u64>,
    /// Some constraint has no `t1.A = t2.A` predicate.
    pub unbounded: bool,
}

/// The row bound n_max in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MaxRows {
    /// n_max.
    pub value: u64,
    /// Estimated as ñ + ⌈ln 20 / ε_n⌉ (a DP release) rather than declared.
    pub estimated: bool,
}

/// ub-hem's noisy degree bound d̃ = Σ_X (maxfreq_X − 1 + DLap(k/ε0)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct NoisyDegreeBound {
    /// d̃ (a DP release).
    pub value: i64,
    /// k, the number of distinct equality attribute sets.
    pub sets: usize,
}

/// Where one measure's ε went. The parts never sum to more than `total`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct BudgetUse {
    /// ε_n for ñ (0 when n_max is declared).
    pub max_rows: f64,
    /// ε0 for d̃ (ub-hem only).
    pub degree_bound: f64,
    /// The EM steps choosing θ*.
    pub selection: f64,
    /// ε2 of the final noise.
    pub release: f64,
    /// The measure's ε.
    pub total: f64,
}

/// One selection step, as reported (everything here is public).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SelectionStep {
    /// Candidates θ.
    pub candidates: Vec<u32>,
    /// θmax the quality sensitivity is based on.
    pub theta_max: u32,
    /// Sensitivity of the quality function.
    pub sensitivity: u64,
    /// ε of the step.
    pub epsilon: f64,
    /// The chosen θ.
    pub chosen: u32,
}

/// The state between [`prepare`] and [`release_projected`]: only public or
/// already-released values.
#[derive(Debug, Clone)]
pub struct Prepared {
    spec: ProjectedSpec,
    max_rows: Option<MaxRows>,
    degree_bound: Option<NoisyDegreeBound>,
    candidates: Vec<u32>,
    unbiased: Option<u32>,
    first_theta_max: u32,
    steps: Vec<Budget>,
    release: Budget,
    budget: BudgetUse,
}

impl Prepared {
    /// Every θ whose f(G_θ) the release may need: the pass must compute them.
    pub fn thetas(&self) -> Vec<DegreeBound> {
        let mut thetas = self.candidates.clone();
        if self.spec.strategy == Strategy::BaselineNmax {
            thetas.push(self.n_max_theta());
        }
        thetas.sort_unstable();
        thetas.dedup();
        thetas.into_iter().filter_map(DegreeBound::new).collect()
    }

    /// The row bound in use, if the strategy needs one.
    pub fn max_rows(&self) -> Option<MaxRows> {
        self.max_rows
    }

    /// The spec this was prepared from.
    pub fn spec(&self) -> &ProjectedSpec {
        &self.spec
    }

    fn n_max_theta(&self) -> u32 {
        self.max_rows.map_or(1, |m| clamp_theta(m.value))
    }
}

/// A released projected measure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProjectedRelease {
    /// `mi` or `p`.
    pub measure: ProjectedMeasure,
    /// The noisy value f(G_θ*) + DLap(Δ(θ*)/ε2), clamped at 0 (post-processing).
    pub value: i64,
    /// The measure's ε.
    pub epsilon: f64,
    /// Δ(θ*) of the final noise.
    pub sensitivity: u64,
    /// The discrete Laplace scale Δ(θ*)/ε2 (rounded up).
    pub noise_scale: f64,
    /// 95% interval of the noise around `value` (projection bias not included).
    pub ci95: [i64; 2],
    /// θ*.
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
    /// The selection steps.
    pub selection: Vec<SelectionStep>,
    /// Where ε went.
    pub budget: BudgetUse,
}

/// The released greedy-cover size (I_R).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CoverRelease {
    /// c + DLap(2/ε), clamped at 0.
    pub value: i64,
    /// ε.
    pub epsilon: f64,
    /// 2 (SPEC §5).
    pub sensitivity: u64,
    /// 2/ε, rounded up.
    pub noise_scale: f64,
    /// 95% interval of the noise.
    pub ci95: [i64; 2],
}

/// SPEC §4's default candidates: {1, 2, 5} × 10^k up to n_max, plus n_max.
pub fn default_candidates(max_rows: u64) -> Vec<u32> {
    let top = clamp_theta(max_rows);
    let mut out: Vec<u32> = (0..10)
        .flat_map(|k| [1u64, 2, 5].map(|m| m * 10u64.pow(k)))
        .filter(|&t| t <= u64::from(top))
        .map(|t| t as u32)
        .collect();
    out.push(top);
    out.sort_unstable();
    out.dedup();
    out
}

fn clamp_theta(v: u64) -> u32 {
    v.clamp(1, u64::from(u32::MAX)) as u32
}

fn split2(b: Budget, first: f64) -> Result<(Budget, Budget), ReleaseError> {
    let parts = b.split(&[first, 1.0 - first])?;
    Ok((parts[0], parts[1]))
}

/// Spends the budget that needs no graph (ñ, d̃) and fixes the candidates.
/// Validates everything before drawing any noise.
pub fn prepare(
    spec: &ProjectedSpec,
    facts: &TableFacts,
    rng: &mut NoiseRng,
) -> Result<Prepared, ReleaseError> {
    let selects = matches!(spec.strategy, Strategy::Em | Strategy::Hem | Strategy::UbHem);
    if selects && !(spec.selection_share > 0.0 && spec.selection_share < 1.0) {
        return Err(ReleaseError::Invalid(format!(
            "the selection share ε1/ε must lie strictly between 0 and 1, got {}",
            spec.selection_share
        )));
    }
    if let Some(c) = &spec.candidates
        && (c.is_empty() || c.contains(&0))
    {
        return Err(ReleaseError::Invalid(
            "candidate degree bounds must be a non-empty list of integers ≥ 1".into(),
        ));
    }
    if spec.max_rows == Some(0) {
        return Err(ReleaseError::Invalid("the public row bound n_max must be ≥ 1".into()));
    }
    let mut budget = BudgetUse { total: spec.epsilon.value(), ..BudgetUse::default() };
    let (mut selection, mut release) = if selects {
        let (s, r) = split2(spec.epsilon, spec.selection_share)?;
        (Some(s), r)
    } else {
        (None, spec.epsilon)
    };

    let max_rows = match (spec.max_rows, spec.strategy) {
        (_, Strategy::BaselineTruemax) => None,
        (Some(value), _) => Some(MaxRows { value, estimated: false }),
        (None, _) => {
            // ε_n comes out of ε1, or out of the release for baseline-nmax.
            let source = selection.unwrap_or(release);
            let (eps_n, rest) = split2(source, MAX_ROWS_SHARE)?;
            match selection {
                Some(_) => selection = Some(rest),
                None => release = rest,
            }
            budget.max_rows = eps_n.value();
            let noisy = DiscreteLaplace::new(1, eps_n.value())?.release(facts.rows as i64, rng);
            let margin = (20f64.ln() / eps_n.value()).ceil() as i64;
            Some(MaxRows { value: noisy.saturating_add(margin).max(1) as u64, estimated: true })
        }
    };
    let grid = match (&spec.candidates, max_rows) {
        (Some(c), _) => {
            let mut c = c.clone();
            c.sort_unstable();
            c.dedup();
            c
        }
        (None, Some(m)) => default_candidates(m.value),
        (None, None) => vec![],
    };
    let n_max = max_rows.map_or(1, |m| clamp_theta(m.value));

    let mut prepared = Prepared {
        spec: spec.clone(),
        max_rows,
        degree_bound: None,
        candidates: vec![],
        unbiased: None,
        first_theta_max: 1,
        steps: vec![],
        release,
        budget,
    };
    let Some(selection) = selection else {
        prepared.budget.release = release.value();
        return Ok(prepared);
    };
    prepared.first_theta_max = *grid.last().expect("candidates are non-empty");
    prepared.candidates = grid.clone();
    match spec.strategy {
        Strategy::Em => prepared.steps = vec![selection],
        Strategy::Hem => prepared.steps = selection.split(&[0.5, 0.5])?,
        Strategy::UbHem if facts.max_frequencies.is_empty() => {
            prepared.steps = selection.split(&[0.5, 0.5])?;
        }
        Strategy::UbHem => {
            let (eps0, rest) = split2(selection, DEGREE_BOUND_SHARE)?;
            prepared.budget.degree_bound = eps0.value();
            let k = facts.max_frequencies.len();
            let noise = DiscreteLaplace::new(k as u64, eps0.value())?;
            let noisy: i64 = facts
                .max_frequencies
                .iter()
                .map(|&f| noise.release(f as i64 - 1, rng))
                .fold(0i64, i64::saturating_add);
            prepared.degree_bound = Some(NoisyDegreeBound { value: noisy, sets: k });
            let bound = clamp_theta(noisy.max(1) as u64).min(n_max);
            let mut candidates: Vec<u32> = grid.iter().copied().filter(|&t| t <= bound).collect();
            candidates.push(bound);
            if facts.unbounded && n_max > bound {
                // d̃ bounds nothing for DCs without equality: keep the
                // no-truncation candidate, judged by its noise alone.
                candidates.push(n_max);
                prepared.unbiased = Some(n_max);
            }
            candidates.sort_unstable();
            candidates.dedup();
            prepared.candidates = candidates;
            prepared.first_theta_max = bound;
            prepared.steps = rest.split(&[0.5, 0.5])?;
        }
        Strategy::BaselineNmax | Strategy::BaselineTruemax => unreachable!("no selection"),
    }
    prepared.budget.selection = prepared.steps.iter().map(Budget::value).sum();
    prepared.budget.release = release.value();
    Ok(prepared)
}

/// Chooses θ* and releases f(G_θ*) + DLap(Δ(θ*)/ε2).
pub fn release_projected(
    prepared: &Prepared,
    table: &ProjectionTable,
    rng: &mut NoiseRng,
) -> Result<ProjectedRelease, ReleaseError> {
    let spec = &prepared.spec;
    let measure = spec.measure;
    let eps2 = prepared.release.value();
    let mut steps = Vec::new();
    let theta = match spec.strategy {
        Strategy::BaselineNmax => prepared.n_max_theta(),
        Strategy::BaselineTruemax => table.exact().max_degree.max(1),
        Strategy::Em | Strategy::Hem | Strategy::UbHem => {
            let mut candidates = prepared.candidates.clone();
            let mut theta_max = prepared.first_theta_max;
            let mut unbiased = prepared.unbiased;
            let mut chosen = theta_max;
            for (i, step) in prepared.steps.iter().enumerate() {
                let reference = candidates
                    .iter()
                    .copied()
                    .filter(|&t| Some(t) != unbiased)
                    .max()
                    .unwrap_or(theta_max);
                let scores =
                    quality_scores(measure, table, &candidates, reference, eps2, unbiased)?;
                let sensitivity = measure.quality_sensitivity(theta_max);
                let index = spec.selector.select(step.value(), sensitivity, &scores, rng)?;
                chosen = candidates[index];
                steps.push(SelectionStep {
                    candidates: candidates.clone(),
                    theta_max,
                    sensitivity,
                    epsilon: step.value(),
                    chosen,
                });
                if i + 1 < prepared.steps.len() {
                    // Step 2 keeps θ ≤ θ*1 and bases its sensitivity on θ*1.
                    candidates.retain(|&t| t <= chosen);
                    theta_max = chosen;
                    unbiased = None;
                }
            }
            chosen
        }
    };
    let counts = table.get(theta)?;
    let sensitivity = measure.sensitivity(theta);
    let noise = DiscreteLaplace::new(sensitivity, eps2)?;
    let noisy = noise.release(measure.value(&counts) as i64, rng);
    let (value, ci95) = clamp_with_interval(noisy, noise.ci95_halfwidth());
    Ok(ProjectedRelease {
        measure,
        value,
        epsilon: spec.epsilon.value(),
        sensitivity,
        noise_scale: noise.scale_f64(),
        ci95,
        theta,
        strategy: spec.strategy,
        selector: spec.selector.name().to_string(),
        private: spec.strategy.is_private(),
        max_rows: prepared.max_rows,
        degree_bound: prepared.degree_bound,
        selection: steps,
        budget: prepared.budget,
    })
}

/// Releases the greedy cover size c with DLap(2/ε) (SPEC §5; the paper's
/// Algorithm 5 misprints the scale as ε/2, SPEC §6.3).
pub fn release_cover(
    cover: u64,
    epsilon: Budget,
    rng: &mut NoiseRng,
) -> Result<CoverRelease, ReleaseError> {
    let noise = DiscreteLaplace::new(COVER_SENSITIVITY, epsilon.value())?;
    let noisy = noise.release(cover as i64, rng);
    let (value, ci95) = clamp_with_interval(noisy, noise.ci95_halfwidth());
    Ok(CoverRelease {
        value,
        epsilon: epsilon.value(),
        sensitivity: COVER_SENSITIVITY,
        noise_scale: noise.scale_f64(),
        ci95,
    })
}

/// Counts are never negative: clamping at 0 is post-processing and costs no
/// privacy. The interval is the noise's, clamped the same way.
fn clamp_with_interval(noisy: i64, halfwidth: u64) -> (i64, [i64; 2]) {
    let h = halfwidth.min(i64::MAX as u64) as i64;
    let lo = noisy.saturating_sub(h).max(0);
    let hi = noisy.saturating_add(h).max(0);
    (noisy.max(0), [lo, hi])
}
