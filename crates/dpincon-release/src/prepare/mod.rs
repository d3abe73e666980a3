//! The first half of a projected release: everything that needs no graph.
//! It splits ε, releases the noisy row bound ñ and degree bound d̃, and fixes
//! the candidates, so the pass over the edges knows every θ to evaluate
//! (SPEC §4, §4.1).

use dpincon_measures::DegreeBound;
use dpincon_mechanisms::{Budget, NoiseRng};

mod bounds;
mod candidates;
mod choice;
mod leading;
mod problematic;
mod terms;

use crate::classes::{ClassFacts, ClassLooks, NoisyClassBound, class_bound};
use crate::interval::IntervalBounds;
use crate::spec::{BudgetUse, MaxRows, NoisyDegreeBound, ProjectedSpec, TableFacts};
use crate::{ProjectedMeasure, ReleaseError, Strategy, StrategyExt, gem};
use bounds::{
    MAX_ROWS_SHARE, degree_noise_sd, minimal_set_bound, noisy_degree_bound, row_bound,
    row_bound_share, sharper_degree_bound, sharper_rows, split2,
};
pub(crate) use candidates::clamp_theta;
use candidates::{candidates_or, floor_grid};
pub use candidates::{default_candidates, halving_candidates};
pub(crate) use choice::Choice;

/// Share of the selection budget spent on d̃ by `ub-hem` and `ub-gem`.
const DEGREE_BOUND_SHARE: f64 = 0.25;
/// `ub-direct` projects at no θ below this where d̃ bounds the degrees:
/// d̃'s noise (scale ≈ 15 at ε = 0.5) puts d̃ + margin below 1 in about a
/// fifth of the runs, and on duplicated keys, whose degrees are 1–2, θ = 1
/// then drops a third of the edges. One more unit of θ costs at most 1/ε2
/// of noise. 2 is I_P's τ₀ (`dpincon_detect::EXCESS_FROM`: exact copies
/// come in pairs most often); chosen on the training suite (README, the
/// tenth round).
/// The fourteenth round's GEM step may choose 1: it sees what θ = 1 drops.
const THETA_FLOOR: u32 = 2;
/// `ub-direct` draws d̃ a second time when d̃ + margin is at most this many
/// standard deviations of its noise: there θ* is mostly d̃'s noise (scale
/// 15 at ε = 0.5 against degrees of 1–10), and each unit of it costs the
/// release 1/ε2 (README, the eleventh round: chosen on the training suite
/// among 1–4 by the worst ratio to the limit, left-one-family-out).
const SHARPER_BOUND_SDS: f64 = 3.0;
/// Share of ε (from the release's) on that second d̃ (among 0.1–0.3).
const SHARPER_BOUND_SHARE: f64 = 0.2;
/// After the second draw, I_MI's θ* is chosen by a GEM step over the
/// halvings of d̃ + margin when that is still at most this many standard
/// deviations of the average's noise: there the degrees may be 1 or 40
/// alike (duplicated keys, Stock's copies), and GEM reads f(G_θ) itself
/// (README, the fourteenth round: chosen on the training suite among 1–3
/// by the worst ratio to the limit, left-one-family-out, and checked on a
/// second suite drawn with another seed).
const GEM_BELOW_SDS: f64 = 2.0;
/// Share of ε (from the release's) on that GEM step (among 0.1–0.3).
const GEM_BELOW_SHARE: f64 = 0.2;
/// `ub-direct` keeps I_P's noise scale (θ + 1)/ε2 at most this share of the
/// row count ñ: I_P ≤ n, so noise near a tenth of n buys nothing, and a
/// smaller θ trades it for a truncation bias that is often near zero (I_P
/// saturates long before the largest degree). Chosen on the training suite
/// among 0.03–0.15 by the worst ratio to the limit, left-one-family-out
/// (README of this crate, the thirteenth round; 0.1 before).
const PROBLEMATIC_NOISE_SHARE: f64 = 0.07;
/// `ub-direct`'s I_MI floor θ_c = ⌊0.1·ñ⌋ when d̃ exceeds it: on near-FDs
/// over low-cardinality columns a hub's degree is its group size, and the
/// floor caps the noise at a tenth of n over ε2 (issue 28; README).
const HUB_FLOOR_SHARE: f64 = 0.1;
/// Share of ε spent on the look at f(G_θc) above that floor.
const FLOOR_LOOK_SHARE: f64 = 0.15;
/// The floor raises θ* while the release's noise scale stays at most
/// this fraction of the look's count: 8 (κ of
/// `docs/notes/theta-hubs.md`, flat from 6 to 10).
const FLOOR_LOOK_NOISE_RATIO: f64 = 8.0;
/// Beside a DC without equality, share of ε on the look at f(G_θ) at the
/// equality part's θ (the ninth round).
const RAISE_LOOK_SHARE: f64 = 0.05;
/// There, θ* rises while the release's noise scale stays at most this
/// fraction of that count (chosen on the training suite among 10, 30,
/// 100 and 300 by the worst ratio to the limit: the ninth round).
const RAISE_NOISE_RATIO: f64 = 30.0;
/// With a degree bound, share of ε (from the release's) on a second ñ for
/// the floor and the density raise's cap ([`sharper_rows`]).
const FLOOR_ROWS_SHARE: f64 = 0.01;
/// Share of ε bounding the largest class when I_P may use the class count
/// (FDs of one X): a smaller share lets τ undershoot star-like groups, a
/// larger one starves the release (README of this crate, chosen with
/// [`CLASS_EXCESS_SHARE`] on generated cliques and sparse FDs).
const CLASS_BOUND_SHARE: f64 = 0.2;
/// Share of ε on the excess over the small τ₀ (module `classes`).
const CLASS_EXCESS_SHARE: f64 = 0.05;

/// The state between [`prepare`] and [`crate::release_projected`]: only
/// public or already-released values.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub(crate) spec: ProjectedSpec,
    pub(crate) max_rows: Option<MaxRows>,
    pub(crate) degree_bound: Option<NoisyDegreeBound>,
    pub(crate) class_bound: Option<NoisyClassBound>,
    /// M + noise, when the leading count's look ran.
    pub(crate) leading_miss: Option<i64>,
    pub(crate) choice: Choice,
    pub(crate) release: Budget,
    pub(crate) budget: BudgetUse,
    /// What the interval's upper end rests on (`None`: `baseline-truemax`,
    /// whose θ* truncates nothing).
    pub(crate) bounds: Option<IntervalBounds>,
    /// A second release at this θ with this ε, for the interval only (the
    /// seventeenth round).
    pub(crate) upper: Option<(u32, Budget)>,
}

impl Prepared {
    /// Every θ whose f(G_θ) the release may need: the pass must compute them.
    pub fn thetas(&self) -> Vec<DegreeBound> {
        let mut thetas = match &self.choice {
            Choice::Fixed(theta) => vec![*theta],
            Choice::TrueMax => vec![],
            Choice::Classes { tau, .. } => vec![*tau],
            Choice::Leading(leading) => vec![leading.released()],
            Choice::Hierarchical { candidates, .. } | Choice::Generalized { candidates, .. } => {
                candidates.clone()
            }
            Choice::Floored { grid, .. } => grid.clone(),
        };
        thetas.extend(self.upper.map(|(theta, _)| theta));
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

    /// The noisy degree bound d̃, if the strategy released one.
    pub fn degree_bound(&self) -> Option<NoisyDegreeBound> {
        self.degree_bound
    }

    /// Where the measure's ε goes.
    pub fn budget(&self) -> BudgetUse {
        self.budget
    }

    /// The bounds the interval's upper end rests on.
    pub fn bounds(&self) -> Option<IntervalBounds> {
        self.bounds
    }
}

/// The share of `release` that [`take_from_release`] takes for
/// `of_epsilon` of the measure's ε `total`: at most half of what it holds
/// whatever split a job asks for (selection and earlier looks may have
/// left little).
fn release_share(release: Budget, of_epsilon: f64, total: Budget) -> f64 {
    (of_epsilon * total.value() / release.value()).min(0.5)
}

/// Takes `of_epsilon` of the measure's ε `total` out of `release`
/// ([`release_share`]), and returns it.
fn take_from_release(
    release: &mut Budget,
    of_epsilon: f64,
    total: Budget,
) -> Result<Budget, ReleaseError> {
    let (taken, rest) = split2(*release, release_share(*release, of_epsilon, total))?;
    *release = rest;
    Ok(taken)
}

/// The hubs' floored choice: from `floor` up to `top` on the
/// quarter-octave grid, by the look `test`, at κ = 8.
fn hub_floored(floor: u32, top: u32, test: Budget, density_cap: Option<u32>) -> Choice {
    let grid = floor_grid(floor, top);
    Choice::Floored { floor, top, test, grid, density_cap, ratio: FLOOR_LOOK_NOISE_RATIO }
}

/// One GEM step over `candidates` with `epsilon`, at the penalty its grid
/// size and budget give (`gem::penalty`).
fn generalized(candidates: Vec<u32>, epsilon: Budget) -> Choice {
    let penalty = gem::penalty(candidates.len(), epsilon.value());
    Choice::Generalized { candidates, epsilon, penalty }
}

/// The hubs' floor θ_c = ⌊0.1·ñ⌋.
fn hub_floor(rows: u64) -> u32 {
    clamp_theta((HUB_FLOOR_SHARE * rows as f64) as u64)
}

fn validate(spec: &ProjectedSpec) -> Result<(), ReleaseError> {
    if let Some(share) = spec.selection_share
        && !(share > 0.0 && share < 1.0)
    {
        return Err(ReleaseError::Invalid(format!(
            "the selection share ε1/ε must lie strictly between 0 and 1, got {share}"
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
    Ok(())
}

/// I_P's θ* under `ub-direct`: `top`, lowered until the noise scale
/// (θ + 1)/ε2 is at most [`PROBLEMATIC_NOISE_SHARE`] of ñ. I_MI keeps `top`.
fn problematic_cap(measure: ProjectedMeasure, top: u32, rows: u64, release: Budget) -> u32 {
    if measure != ProjectedMeasure::P {
        return top;
    }
    let cap = (PROBLEMATIC_NOISE_SHARE * release.value() * rows as f64).floor() - 1.0;
    top.min(clamp_theta(cap.max(1.0) as u64))
}

/// Spends the budget that needs no graph (ñ, d̃) and fixes the candidates.
/// Validates everything before drawing any noise.
pub fn prepare(
    spec: &ProjectedSpec,
    facts: &TableFacts,
    rng: &mut NoiseRng,
) -> Result<Prepared, ReleaseError> {
    validate(spec)?;
    let strategy = spec.strategy;
    let share = spec
        .selection_share
        .unwrap_or_else(|| strategy.default_selection_share(facts.unbounded, spec.epsilon.value()));
    let mut budget = BudgetUse { total: spec.epsilon.value(), ..BudgetUse::default() };
    let mut max_rows = None;
    let mut degree_bound = None;
    // The interval's bounds (module `interval`): rows, then degrees.
    let mut rows_high = spec.max_rows;
    let mut degree_high = None;
    // A public bound caps every θ: no degree exceeds n − 1.
    let declared_cap = spec.max_rows.map_or(u32::MAX, clamp_theta);
    // The minimal-set bound d̃ over the equality constraints' sets: for
    // `ub-gem` only when every constraint has an equality (else it bounds
    // nothing); `ub-direct` starts from it beside others (the ninth round).
    let minimal_bound = match strategy {
        // `ub-direct` projects at the equality constraints' bound even
        // beside constraints without one (structure first): their edges
        // past it are the only bias, and the interval rests on n.
        Strategy::UbDirect => facts.degree_terms(true).count > 0,
        Strategy::UbGem => !facts.unbounded && facts.degree_terms(true).count > 0,
        _ => false,
    };
    // `ub-direct`'s I_P over one X's keys and FDs: the class count, whose
    // classes under a key are single rows (τ = 1 with no bound to draw).
    let classes = facts
        .classes
        .as_ref()
        .filter(|_| strategy == Strategy::UbDirect && spec.measure == ProjectedMeasure::P);
    let mut class_bound_out = None;
    let mut class_high = None;
    let mut leading_out = None;
    let mut upper = None;
    // `ub-direct`'s I_P without a degree bound, or by class count of one
    // X, needs only ñ: that class count's τ needs no degree bound.
    let rows_only = strategy == Strategy::UbDirect
        && spec.measure == ProjectedMeasure::P
        && (!minimal_bound || classes.is_some_and(ClassFacts::one_x));
    // The baselines spend nothing on selection; the others split ε.
    let (selection, mut release) = match strategy {
        Strategy::BaselineTruemax => (None, spec.epsilon),
        Strategy::BaselineNmax => {
            let (bound, release) =
                row_bound_share(spec, facts, spec.epsilon, false, &mut budget, rng)?;
            (max_rows, rows_high) = (Some(bound.bound), Some(bound.high));
            (None, release)
        }
        // Under a key τ = 1 needs no row count: a declared bound suffices.
        _ if rows_only && spec.max_rows.is_some() && classes.is_some_and(|c| c.key) => {
            (None, spec.epsilon)
        }
        _ if rows_only => {
            let (s, r) = split2(spec.epsilon, share * MAX_ROWS_SHARE)?;
            (Some(s), r)
        }
        _ => {
            let (s, r) = split2(spec.epsilon, share)?;
            (Some(s), r)
        }
    };
    let choice = match (strategy, selection) {
        (Strategy::BaselineTruemax, _) => Choice::TrueMax,
        (Strategy::BaselineNmax, _) => {
            Choice::Fixed(clamp_theta(max_rows.expect("n_max was set above").value))
        }
        (Strategy::UbDirect, selection) if rows_only => {
            // θ = n_max truncates nothing; ñ caps I_P's noise, beside a
            // declared bound too. No selection budget only under a key
            // with n_max declared: nothing is spent.
            let source = selection.unwrap_or(release);
            let sharpen = selection.is_some();
            let (bound_rows, _) = row_bound(spec, facts, source, 1.0, sharpen, &mut budget, rng)?;
            (max_rows, rows_high) = (Some(bound_rows.bound), Some(bound_rows.high));
            let top = clamp_theta(bound_rows.bound.value);
            match classes {
                Some(c) if c.key => {
                    let (bound, tau, high) = class_bound(c, None, rng)?;
                    (class_bound_out, class_high) = (Some(bound), Some(high));
                    Choice::Classes { tau, theta: tau, test: None }
                }
                Some(c) => {
                    let looks = CLASS_BOUND_SHARE + CLASS_EXCESS_SHARE;
                    let test = take_from_release(&mut release, looks, spec.epsilon)?;
                    let parts =
                        test.split(&[CLASS_BOUND_SHARE / looks, CLASS_EXCESS_SHARE / looks])?;
                    budget.class_bound = test.value();
                    let looks = ClassLooks { bound: parts[0], excess: parts[1], release };
                    let (bound, tau, high) = class_bound(c, Some(looks), rng)?;
                    (class_bound_out, class_high) = (Some(bound), Some(high));
                    let theta = problematic_cap(spec.measure, top, bound_rows.rows, release);
                    Choice::Classes { tau: tau.min(theta), theta, test: Some(test) }
                }
                None => Choice::Fixed(problematic_cap(spec.measure, top, bound_rows.rows, release)),
            }
        }
        (Strategy::UbDirect, Some(selection)) if minimal_bound => {
            // ñ, then θ* = min(d̃ + margin, n_max): no degree exceeds n − 1.
            // I_P's noise cap reads ñ even beside a declared bound.
            let sharpen = spec.measure == ProjectedMeasure::P;
            let (rows, eps0) = row_bound_share(spec, facts, selection, sharpen, &mut budget, rng)?;
            (max_rows, rows_high) = (Some(rows.bound), Some(rows.high));
            let n_max = clamp_theta(rows.bound.value);
            let (mut bound, mut top, mut high) = minimal_set_bound(facts, eps0, &mut budget, rng)?;
            // Where d̃ is mostly its own noise, θ* is too: a second draw
            // from the release's share (the eleventh round), and where the
            // average is still mostly noise, I_MI's θ* by a GEM step below
            // it (the fourteenth round).
            let sd = degree_noise_sd(bound.sets, &[eps0.value()]);
            let mut gem_below = false;
            if ((bound.value + bound.margin) as f64) <= SHARPER_BOUND_SDS * sd {
                let second = take_from_release(&mut release, SHARPER_BOUND_SHARE, spec.epsilon)?;
                (bound, high) = sharper_degree_bound(facts, (bound, eps0.value()), second, rng)?;
                budget.degree_bound += second.value();
                top = clamp_theta(bound.value.saturating_add(bound.margin).max(1) as u64);
                let sd = degree_noise_sd(bound.sets, &[eps0.value(), second.value()]);
                gem_below = spec.measure == ProjectedMeasure::Mi
                    && !facts.unbounded
                    && f64::from(top) <= GEM_BELOW_SDS * sd;
            }
            // d̃ bounds the degrees only when every DC has an equality.
            degree_high = (!facts.unbounded).then_some(high);
            let top = top.max(THETA_FLOOR).min(n_max);
            let floor = hub_floor(rows.rows);
            let choice = if gem_below && top <= floor {
                let epsilon = take_from_release(&mut release, GEM_BELOW_SHARE, spec.epsilon)?;
                generalized(halving_candidates(top), epsilon)
            } else if spec.measure == ProjectedMeasure::Mi && top > floor {
                // A vacuous bound (hubs: group sizes far above any real
                // degree): θ* from the floor up, by one noisy look.
                let test = take_from_release(&mut release, FLOOR_LOOK_SHARE, spec.epsilon)?;
                // θ_c and the density raise's cap from a sharper ñ. Beside
                // a declared bound it is the only draw, read as I_P's is
                // (`row_bound`): a generous bound would raise the floor.
                let second = take_from_release(&mut release, FLOOR_ROWS_SHARE, spec.epsilon)?;
                let rows = match spec.max_rows {
                    Some(_) => row_bound(spec, facts, second, 1.0, true, &mut budget, rng)?.0.rows,
                    None => {
                        let sharper =
                            sharper_rows(facts, (rows.rows, budget.max_rows), second, rng)?;
                        budget.max_rows += second.value();
                        sharper
                    }
                };
                // Where d̃ bounds no degree (a DC without equality beside),
                // the floor rises to n_max, as with no equality at all.
                let top = if facts.unbounded { n_max } else { top };
                // No density raise where d̃ bounds no degree (a DC without
                // equality beside): measured, it cost the order shapes more
                // than it gained (README, "the eighth round").
                let density_cap = (!facts.unbounded).then(|| clamp_theta(rows).min(top));
                hub_floored(hub_floor(rows).min(top), top, test, density_cap)
            } else if facts.unbounded {
                // Beside a DC without equality: from d̃ up, while the
                // release's noise stays a small share of the count there
                // (the other DC's edges past d̃ are the only bias).
                let test = take_from_release(&mut release, RAISE_LOOK_SHARE, spec.epsilon)?;
                let floor = problematic_cap(spec.measure, top, rows.rows, release);
                let ceiling = problematic_cap(spec.measure, n_max, rows.rows, release).max(floor);
                // Octaves: the pass projects every grid θ at once.
                let grid = std::iter::successors(Some(floor), |t| t.checked_mul(2))
                    .take_while(|&t| t < ceiling)
                    .chain([ceiling])
                    .collect();
                Choice::Floored {
                    floor,
                    top: ceiling,
                    test,
                    grid,
                    density_cap: None,
                    ratio: RAISE_NOISE_RATIO,
                }
            } else if spec.measure == ProjectedMeasure::P {
                let at = problematic::At { top, rows: rows.rows, classes };
                let (choice, leading) =
                    problematic::choose(spec, at, &mut release, &mut budget, rng)?;
                leading_out = leading;
                choice
            } else if let Some((choice, upper_epsilon)) = terms::above_largest_term(
                spec,
                facts,
                top,
                &mut release,
                &mut budget,
                &mut bound,
                rng,
            )? {
                // d̃ sums many comparable terms: GEM above the largest, and
                // the interval's upper end from a release at the old θ*.
                upper = Some((top, upper_epsilon));
                choice
            } else {
                // I_MI at d̃ + margin (I_P took the branch above).
                Choice::Fixed(top)
            };
            degree_bound = Some(bound);
            choice
        }
        (Strategy::UbDirect, Some(selection)) => {
            // I_MI with no degree bound: n_max is the only one. A noisy look
            // (sensitivity n_max) decides between releasing there and gem.
            let (bound, test) = row_bound_share(spec, facts, selection, true, &mut budget, rng)?;
            (max_rows, rows_high) = (Some(bound.bound), Some(bound.high));
            let top = clamp_theta(bound.bound.value);
            // The hubs' floor with n_max as the top: θ* from θ_c = ⌊0.1·ñ⌋
            // up by one look (README of this crate, "the fifth round").
            // No density raise: measured, it cost the order shapes more
            // than it gained (README, "the eighth round").
            hub_floored(hub_floor(bound.rows).min(top), top, test, None)
        }
        (Strategy::UbGem, Some(selection)) if minimal_bound => {
            let (eps0, epsilon) = split2(selection, DEGREE_BOUND_SHARE)?;
            let (bound, top, high) = minimal_set_bound(facts, eps0, &mut budget, rng)?;
            (degree_bound, degree_high) = (Some(bound), Some(high));
            let top = top.min(declared_cap);
            let mut candidates = candidates_or(spec, top, halving_candidates);
            candidates.retain(|&t| t <= top);
            if candidates.last() != Some(&top) {
                candidates.push(top);
            }
            generalized(candidates, epsilon)
        }
        (Strategy::Gem | Strategy::UbGem, Some(selection)) => {
            let (bound, epsilon) =
                row_bound_share(spec, facts, selection, false, &mut budget, rng)?;
            (max_rows, rows_high) = (Some(bound.bound), Some(bound.high));
            let candidates =
                candidates_or(spec, clamp_theta(bound.bound.value), halving_candidates);
            generalized(candidates, epsilon)
        }
        (Strategy::Em | Strategy::Hem | Strategy::UbHem, Some(selection)) => {
            let (bound, selection) =
                row_bound_share(spec, facts, selection, false, &mut budget, rng)?;
            (max_rows, rows_high) = (Some(bound.bound), Some(bound.high));
            let n_max = clamp_theta(bound.bound.value);
            let grid = candidates_or(spec, n_max, |top| default_candidates(top.into()));
            let first_theta_max = *grid.last().expect("candidates are non-empty");
            match strategy {
                Strategy::Em => Choice::Hierarchical {
                    candidates: grid,
                    unbiased: None,
                    first_theta_max,
                    steps: vec![selection],
                },
                Strategy::UbHem if facts.degree_terms(false).count > 0 => {
                    let (eps0, rest) = split2(selection, DEGREE_BOUND_SHARE)?;
                    budget.degree_bound = eps0.value();
                    // The paper's d̃ sums every distinct set, with no margin.
                    let (bound, high) =
                        noisy_degree_bound(facts.degree_terms(false), eps0, 0.0, rng)?;
                    degree_bound = Some(bound);
                    // Σ over every set bounds the degrees when every DC has one.
                    degree_high = (!facts.unbounded).then_some(high);
                    let top = clamp_theta(bound.value.max(1) as u64).min(n_max);
                    let mut candidates: Vec<u32> =
                        grid.iter().copied().filter(|&t| t <= top).collect();
                    candidates.push(top);
                    let mut unbiased = None;
                    if facts.unbounded && n_max > top {
                        // d̃ bounds nothing for DCs without equality: keep the
                        // no-truncation candidate, judged by its noise alone.
                        candidates.push(n_max);
                        unbiased = Some(n_max);
                    }
                    candidates.sort_unstable();
                    candidates.dedup();
                    Choice::Hierarchical {
                        candidates,
                        unbiased,
                        first_theta_max: top,
                        steps: rest.split(&[0.5, 0.5])?,
                    }
                }
                _ => Choice::Hierarchical {
                    candidates: grid,
                    unbiased: None,
                    first_theta_max,
                    steps: selection.split(&[0.5, 0.5])?,
                },
            }
        }
        (_, None) => unreachable!("only the baselines spend nothing on selection"),
    };
    budget.selection = match &choice {
        Choice::Hierarchical { steps, .. } => steps.iter().map(Budget::value).sum(),
        Choice::Generalized { epsilon, .. } => epsilon.value(),
        // The look; `release_projected` adds gem's step if it runs.
        Choice::Floored { test, .. } => test.value(),
        // The class bound and the look at M are `budget.class_bound`.
        Choice::Fixed(_) | Choice::TrueMax | Choice::Classes { .. } | Choice::Leading(_) => 0.0,
    };
    budget.release = release.value() + upper.map_or(0.0, |(_, e): (u32, Budget)| e.value());
    // No degree exceeds n − 1; `baseline-truemax` truncates nothing.
    let max_degree = match (degree_high, rows_high) {
        (Some(d), Some(n)) => Some(d.min(n.saturating_sub(1))),
        (d, n) => d.or(n.map(|n| n.saturating_sub(1))),
    };
    let bounds = match choice {
        Choice::TrueMax => None,
        _ => Some(IntervalBounds {
            rows: rows_high,
            max_degree: max_degree.expect("every private strategy bounds the rows or degrees"),
            classes: class_high.filter(|_| matches!(choice, Choice::Classes { .. })),
            leading: leading_out
                .map(|(_, high)| high)
                .filter(|_| matches!(&choice, Choice::Leading(l) if l.lead)),
        }),
    };
    Ok(Prepared {
        spec: spec.clone(),
        max_rows,
        degree_bound,
        class_bound: class_bound_out,
        leading_miss: leading_out.and_then(|(miss, _)| miss),
        choice,
        release,
        budget,
        bounds,
        upper,
    })
}
