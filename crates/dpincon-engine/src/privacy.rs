//! Turning a job's DP options into validated release specs (before any data
//! is read), and running the releases around the one pass over the edges.

use std::collections::BTreeSet;

use dpincon_api::Measure;
use dpincon_constraints::BoundConstraint;
use dpincon_detect::{compile_shapes, cover_sets};
use dpincon_graph::ConflictGraph;
use dpincon_measures::{
    CoverSize, DegreeBound, ExactCounts, GreedyCover, PassCounts, greedy_matching_outside,
    measure_pass, twice_fractional_cover,
};
use dpincon_release::{
    Budget, NoiseRng, ProjectedMeasure, ProjectedSpec, ProjectionTable, RepairMethod,
    RepairMethodExt, RepairValues, TableFacts, prepare, release_projected, release_repair,
};

use crate::report::MeasuresReport;
use crate::validate::{check_cap, check_epsilon, check_split};
use crate::{EngineError, JobConfig};

/// The validated DP part of a job.
#[derive(Debug, Clone)]
pub(crate) struct BudgetSplit {
    pub epsilon: Budget,
    pub projected: Vec<ProjectedSpec>,
    /// Whether I_R, the minimum vertex cover's size, is released.
    pub releases_r: bool,
    /// How I_R is released (public).
    pub repair: RepairMethod,
}

impl BudgetSplit {
    /// The measures in release order.
    pub fn measures(&self) -> Vec<Measure> {
        let mut measures: Vec<Measure> =
            self.projected.iter().map(|s| Measure::from(s.measure)).collect();
        if self.releases_r {
            measures.push(Measure::R);
        }
        measures
    }

    /// The same split releasing only `measures` (a gated night's fresh ones).
    pub fn only(&self, measures: &[Measure]) -> BudgetSplit {
        let wanted = |m: Measure| measures.contains(&m);
        BudgetSplit {
            projected: self
                .projected
                .iter()
                .filter(|s| wanted(Measure::from(s.measure)))
                .cloned()
                .collect(),
            releases_r: self.releases_r && wanted(Measure::R),
            ..self.clone()
        }
    }

    /// The job's total ε: the sum over measures (sequential composition).
    pub fn total(&self) -> f64 {
        self.epsilon.value() * self.measures().len() as f64
    }
}

fn invalid(message: impl Into<String>) -> EngineError {
    EngineError::Config(message.into())
}

/// The one validation step of a job's public options (ε within
/// [`crate::validate()`]'s limits, measures, strategy, split, candidates,
/// cap): reads no data and touches no ledger. `run`, the experiments and
/// the coordinator call it before any work or charge.
///
/// # Errors
/// [`EngineError::Config`] naming the option at fault.
pub fn validate(config: &JobConfig) -> Result<(), EngineError> {
    budget_split(config).map(drop)
}

/// Validates the DP options. `None` when the job releases nothing (only
/// `--non-private`).
pub(crate) fn budget_split(config: &JobConfig) -> Result<Option<BudgetSplit>, EngineError> {
    let release = &config.release;
    let Some(epsilon) = release.epsilon else {
        if config.test.non_private {
            return Ok(None);
        }
        return Err(invalid(
            "no privacy budget: give --epsilon for differentially private releases \
             (or --non-private for exact values only)",
        ));
    };
    let epsilon = check_epsilon("--epsilon", epsilon)?;
    let mut wanted = BTreeSet::new();
    for m in release.measures() {
        if !wanted.insert(m) {
            return Err(invalid(format!("measure '{m}' is listed twice")));
        }
    }
    if wanted.is_empty() {
        return Err(invalid("no measure to release"));
    }
    let strategy = release.strategy.unwrap_or_default();
    if !strategy.is_private() && !config.test.non_private {
        return Err(invalid(
            "strategy baseline-truemax reads the true maximum degree and is NOT private: \
             it needs --non-private",
        ));
    }
    let selection_share = release.epsilon_split.map(check_split).transpose()?;
    if let Some(c) = &release.candidates
        && (c.is_empty() || c.contains(&0))
    {
        return Err(invalid("--candidates must list degree bounds ≥ 1"));
    }
    if config.data.max_rows == Some(0) {
        return Err(invalid("--max-rows must be ≥ 1"));
    }
    if let Some(cap) = config.data.budget_cap {
        check_cap(cap)?;
        if config.data.ledger.is_none() {
            return Err(invalid("--budget-cap needs --ledger (where the spending is recorded)"));
        }
    }
    let repair = config.release.ir_method.unwrap_or_default();
    let projected = wanted
        .iter()
        .filter_map(|&m| ProjectedMeasure::of(m))
        .map(|measure| ProjectedSpec {
            strategy,
            selector: release.selector.unwrap_or_default(),
            selection_share,
            candidates: release.candidates.clone(),
            max_rows: config.data.max_rows,
            ..ProjectedSpec::new(measure, epsilon)
        })
        .collect();
    Ok(Some(BudgetSplit { epsilon, projected, releases_r: wanted.contains(&Measure::R), repair }))
}

/// `--ir-method`, checked against the job's public memory budget: the LP
/// holds the edges among the greedy cover's rows in memory (16 bytes each,
/// on top of the graph; `dpincon_measures::twice_fractional_cover`), and
/// no public input bounds their count, so a job that declares
/// `--memory-limit` cannot promise it, unless the constraints make one
/// set's cover I_R itself (`exact_repair`: `dpincon_detect::cover_sets`,
/// from their shapes alone), which is released with no LP. Refused once
/// the constraints are bound, before detection and before any charge,
/// never a silent fallback to the greedy cover.
pub fn check_repair_memory(config: &JobConfig, exact_repair: bool) -> Result<(), EngineError> {
    // The options themselves are validated elsewhere (`validate`): this
    // reads them as they are, so `load` keeps serving jobs with no budget.
    let release = &config.release;
    let method = release.ir_method.unwrap_or_default();
    let releases_r = release.epsilon.is_some() && release.measures().contains(&Measure::R);
    if let (true, true, false, Some(limit)) =
        (method.needs_lp(), releases_r, exact_repair, &config.data.memory_limit)
    {
        return Err(invalid(format!(
            "--ir-method {method} computes the LP relaxation of I_R for these constraints, which \
             holds the conflict edges among the greedy cover's rows in memory (16 bytes each, no \
             public bound), so it cannot keep to --memory-limit {limit}: use --ir-method greedy \
             (one pass, 1 bit per row), or drop --memory-limit (a key, FDs of one left-hand side \
             and one right-hand side, or one order DC need no LP)"
        )));
    }
    Ok(())
}

/// Whether `bound` make one set's cover I_R itself, so that I_R needs no
/// LP (`dpincon_detect::cover_sets`): public, from their shapes alone,
/// before any row is read (a coordinator checks a job with it when it
/// accepts it).
pub fn repair_is_exact(bound: &[BoundConstraint]) -> Result<bool, EngineError> {
    Ok(cover_sets(&compile_shapes(bound)?).exact)
}

/// What the single pass over the edge stream produces.
pub(crate) struct PassResult {
    pub exact: ExactCounts,
    pub cover: CoverSize,
    pub releases: Option<MeasuresReport>,
}

/// The single pass over the edge stream at `thetas` (any order, repeats
/// allowed): the table of f(G_θ), with the exact counts and the table's
/// classes, and the stable-order greedy cover.
pub(crate) fn projection_pass(
    graph: &ConflictGraph,
    facts: &TableFacts,
    mut thetas: Vec<DegreeBound>,
    threads: usize,
) -> (ProjectionTable, GreedyCover) {
    thetas.sort_unstable();
    thetas.dedup();
    let PassCounts { degrees, cover, projected } = measure_pass(graph, &thetas, threads);
    let table =
        ProjectionTable::new(degrees.counts(), projected).with_classes(facts.classes.clone());
    (table, cover)
}

/// I_R's private statistics from the pass's `cover`: c, and 2·L when `lp`
/// (the LP's own pass over the cover's rows, and a greedy walk of G
/// without each key's rows for its partition bound).
pub(crate) fn repair_values(
    graph: &ConflictGraph,
    facts: &TableFacts,
    cover: &GreedyCover,
    lp: bool,
    threads: usize,
) -> RepairValues {
    let (twice_lp, outside) = if lp {
        // The walks are one thread's each: beside the LP's kernel, whose
        // matching runs on one thread too.
        std::thread::scope(|scope| {
            let outside = scope.spawn(|| matchings_outside_keys(graph, facts));
            let twice_lp = twice_fractional_cover(graph, cover, threads);
            (Some(twice_lp), outside.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
        })
    } else {
        (None, vec![])
    };
    RepairValues::new(cover.size().cover, twice_lp, &outside, facts)
}

/// For each key of `facts.covers.keys`, the stable-order greedy matching
/// of `graph` without its rows (`dpincon_release::KeyCover`): one walk of
/// Λ each, as the pass's own cover.
pub(crate) fn matchings_outside_keys(graph: &ConflictGraph, facts: &TableFacts) -> Vec<u64> {
    facts.covers.keys.iter().map(|key| greedy_matching_outside(graph, &key.rows)).collect()
}

/// Prepares the projected releases (drawing ñ and d̃), walks the edge stream
/// once for every θ, the exact counts and the cover, then releases. Without
/// a plan (exact values only) no noise is drawn.
pub(crate) fn measure_and_release(
    graph: &ConflictGraph,
    mut release: Option<(&BudgetSplit, &mut NoiseRng)>,
    facts: &TableFacts,
    threads: usize,
) -> Result<PassResult, EngineError> {
    let mut prepared = Vec::new();
    if let Some((plan, rng)) = release.as_mut() {
        for spec in &plan.projected {
            prepared.push(prepare(spec, facts, rng)?);
        }
    }
    let thetas = prepared.iter().flat_map(|p| p.thetas()).collect();
    let (table, cover) = projection_pass(graph, facts, thetas, threads);
    let exact = *table.exact();
    let releases = match release {
        Some((plan, rng)) => {
            let mut report = MeasuresReport::default();
            for p in &prepared {
                let release = release_projected(p, &table, rng)?;
                match p.spec().measure {
                    ProjectedMeasure::Mi => report.mi = Some(release),
                    ProjectedMeasure::P => report.p = Some(release),
                }
            }
            if plan.releases_r {
                let lp = plan.repair.computes_lp(facts);
                let values = repair_values(graph, facts, &cover, lp, threads);
                report.r = Some(release_repair(plan.repair, plan.epsilon, values, rng)?);
            }
            Some(report)
        }
        None => None,
    };
    Ok(PassResult { exact, cover: cover.size(), releases })
}
