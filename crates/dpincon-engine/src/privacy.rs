//! Turning a job's DP options into validated release specs (before any data
//! is read), and running the releases around the one pass over the edges.

use std::collections::BTreeSet;

use dpincon_graph::ConflictGraph;
use dpincon_measures::{CoverSize, ExactCounts, PassCounts, measure_pass, twice_fractional_cover};
use dpincon_release::{
    Budget, NoiseRng, ProjectedMeasure, ProjectedSpec, ProjectionTable, RepairMethod, RepairValues,
    Selector, Strategy, TableFacts, prepare, release_projected, release_repair,
};

use crate::report::MeasuresReport;
use crate::validate::{check_cap, check_epsilon, check_split};
use crate::{EngineError, JobConfig};

/// The validated DP part of a job.
#[derive(Debug, Clone)]
pub(crate) struct PrivacyPlan {
    pub epsilon: Budget,
    pub projected: Vec<ProjectedSpec>,
    pub cover: bool,
    /// How I_R is released (public).
    pub repair: RepairMethod,
}

impl PrivacyPlan {
    /// The measures in release order, by name.
    pub fn measure_names(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> =
            self.projected.iter().map(|s| s.measure.name()).collect();
        if self.cover {
            names.push("r");
        }
        names
    }

    /// The job's total ε: the sum over measures (sequential composition).
    pub fn total(&self) -> f64 {
        self.epsilon.value() * self.measure_names().len() as f64
    }
}

fn invalid(message: impl Into<String>) -> EngineError {
    EngineError::Config(message.into())
}

/// The one validation step of a job's public options (ε within
/// [`crate::validate`]'s limits, measures, strategy, split, candidates,
/// cap): reads no data and touches no ledger. `run`, the experiments and
/// the coordinator call it before any work or charge.
///
/// # Errors
/// [`EngineError::Config`] naming the option at fault.
pub fn validate(config: &JobConfig) -> Result<(), EngineError> {
    plan(config).map(drop)
}

/// Validates the DP options. `None` when the job releases nothing (only
/// `--non-private`).
pub(crate) fn plan(config: &JobConfig) -> Result<Option<PrivacyPlan>, EngineError> {
    let Some(epsilon) = config.epsilon else {
        if config.non_private {
            return Ok(None);
        }
        return Err(invalid(
            "no privacy budget: give --epsilon for differentially private releases \
             (or --non-private for exact values only)",
        ));
    };
    let epsilon = check_epsilon("--epsilon", epsilon)?;
    let mut wanted = BTreeSet::new();
    for m in &config.measures {
        match m.as_str() {
            "mi" | "p" | "r" => {
                if !wanted.insert(m.as_str()) {
                    return Err(invalid(format!("measure '{m}' is listed twice")));
                }
            }
            "d" | "mc" => {
                return Err(invalid(format!(
                    "measure '{m}' is not released under DP (SPEC §3: I_D has sensitivity 1 on a \
                     0/1 value; I_MC is #P-complete): use mi, p or r"
                )));
            }
            other => return Err(invalid(format!("unknown measure '{other}' (use mi, p, r)"))),
        }
    }
    if wanted.is_empty() {
        return Err(invalid("no measure to release"));
    }
    let strategy: Strategy = match &config.strategy {
        Some(s) => s.parse().map_err(|e: dpincon_release::ReleaseError| invalid(e.to_string()))?,
        None => Strategy::default(),
    };
    if !strategy.is_private() && !config.non_private {
        return Err(invalid(
            "strategy baseline-truemax reads the true maximum degree and is NOT private: \
             it needs --non-private",
        ));
    }
    let selector: Selector = match &config.selector {
        Some(s) => s.parse().map_err(|e| invalid(format!("--selector: {e}")))?,
        None => Selector::default(),
    };
    let selection_share = config.epsilon_split.map(check_split).transpose()?;
    if let Some(c) = &config.candidates
        && (c.is_empty() || c.contains(&0))
    {
        return Err(invalid("--candidates must list degree bounds ≥ 1"));
    }
    if config.max_rows == Some(0) {
        return Err(invalid("--max-rows must be ≥ 1"));
    }
    if let Some(cap) = config.budget_cap {
        check_cap(cap)?;
        if config.ledger.is_none() {
            return Err(invalid("--budget-cap needs --ledger (where the spending is recorded)"));
        }
    }
    let repair = repair_method(config)?;
    let projected = [ProjectedMeasure::Mi, ProjectedMeasure::P]
        .into_iter()
        .filter(|m| wanted.contains(m.name()))
        .map(|measure| ProjectedSpec {
            strategy,
            selector,
            selection_share,
            candidates: config.candidates.clone(),
            max_rows: config.max_rows,
            ..ProjectedSpec::new(measure, epsilon)
        })
        .collect();
    Ok(Some(PrivacyPlan { epsilon, projected, cover: wanted.contains("r"), repair }))
}

/// `--ir-method`, checked against the job's public memory budget: the LP
/// holds the edges among the greedy cover's rows in memory (16 bytes each,
/// on top of the graph; `dpincon_measures::twice_fractional_cover`), and
/// no public input bounds their count, so a job that declares
/// `--memory-limit` cannot promise it. Refused here, before any
/// data is read, never a silent fallback to the greedy cover.
fn repair_method(config: &JobConfig) -> Result<RepairMethod, EngineError> {
    let method: RepairMethod = match &config.ir_method {
        Some(m) => m.parse().map_err(|e: dpincon_release::ReleaseError| invalid(e.to_string()))?,
        None => RepairMethod::default(),
    };
    let releases_r = config.measures.iter().any(|m| m == "r");
    if let (true, true, Some(limit)) = (method.needs_lp(), releases_r, &config.memory_limit) {
        return Err(invalid(format!(
            "--ir-method {method} computes the LP relaxation of I_R, which holds the conflict \
             edges among the greedy cover's rows in memory (16 bytes each, no public bound), \
             so it cannot keep to --memory-limit {limit}: use --ir-method greedy (one pass, 1 bit \
             per row), or drop --memory-limit"
        )));
    }
    Ok(method)
}

/// What the single pass over the edge stream produces.
pub(crate) struct PassResult {
    pub exact: ExactCounts,
    pub cover: CoverSize,
    pub releases: Option<MeasuresReport>,
}

/// Prepares the projected releases (drawing ñ and d̃), walks the edge stream
/// once for every θ, the exact counts and the cover, then releases. Without
/// a plan (exact values only) no noise is drawn.
pub(crate) fn measure_and_release(
    graph: &ConflictGraph,
    mut release: Option<(&PrivacyPlan, &mut NoiseRng)>,
    facts: &TableFacts,
    threads: usize,
) -> Result<PassResult, EngineError> {
    let mut prepared = Vec::new();
    if let Some((plan, rng)) = release.as_mut() {
        for spec in &plan.projected {
            prepared.push(prepare(spec, facts, rng)?);
        }
    }
    let mut thetas: Vec<_> = prepared.iter().flat_map(|p| p.thetas()).collect();
    thetas.sort_unstable();
    thetas.dedup();
    let PassCounts { degrees, cover, projected } = measure_pass(graph, &thetas, threads);
    let exact = degrees.counts();
    let releases = match release {
        Some((plan, rng)) => {
            let table = ProjectionTable::new(exact, projected).with_classes(facts.classes.clone());
            let mut report = MeasuresReport::default();
            for p in &prepared {
                let release = release_projected(p, &table, rng)?;
                match p.spec().measure {
                    ProjectedMeasure::Mi => report.mi = Some(release),
                    ProjectedMeasure::P => report.p = Some(release),
                }
            }
            if plan.cover {
                let twice_lp =
                    plan.repair.needs_lp().then(|| twice_fractional_cover(graph, &cover, threads));
                let values = RepairValues::new(cover.size().cover, twice_lp, facts.fd_cover);
                report.r = Some(release_repair(plan.repair, plan.epsilon, values, rng)?);
            }
            Some(report)
        }
        None => None,
    };
    Ok(PassResult { exact, cover: cover.size(), releases })
}
