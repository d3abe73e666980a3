//! The θ-selection suite's runner (issue 49; NON-PRIVATE: it scores
//! releases against exact values).
//!
//! One table at a time: its graph is loaded once by the caller, then every
//! candidate configuration ([`SuiteConfig`]: a strategy, optionally with
//! another selector, selection share or candidate grid) is run `runs` times
//! at every ε through [`coverage_with`], the same runner as `experiment
//! coverage`, all reading one [`ProjectionCache`] so each θ is projected
//! once. The [`oracle`] (the sweep's: the best fixed θ in hindsight, the
//! whole ε on the release) comes from the exact projection curve, and I_R
//! (which no θ strategy touches) is scored once per ε with the default
//! `--ir-method`. Each (ε, measure, configuration) becomes one
//! [`SuiteCell`]; the module `judge` compares them. A default or I_R cell
//! whose coverage reads below 95% is run again on fresh seeds
//! ([`SuiteOptions::confirm_runs`]): a hundred runs cannot tell 0.93 from
//! 0.95.

use std::fmt;
use std::str::FromStr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use dpincon_api::{Measure, ReleaseOptions, Selector, Strategy};
use dpincon_release::ProjectedMeasure;
use serde::{Deserialize, Serialize};

use super::cache::ProjectionCache;
use super::coverage::{CoverageOptions, CoverageRow, coverage_with};
use super::curve::projection_curve;
use super::sweep::{ORACLE, oracle};
use crate::load::LoadedJob;
use crate::{EngineError, JobConfig};

/// A fixed public candidate grid a configuration may use instead of its
/// strategy's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CandidateGrid {
    /// 1, 2, 4, …, 2^17 (above 10^5 rows): denser than {1, 2, 5} × 10^k.
    Pow2,
}

impl CandidateGrid {
    /// The grid's θ values.
    pub fn thetas(self) -> Vec<u32> {
        match self {
            CandidateGrid::Pow2 => (0..=17).map(|k| 1u32 << k).collect(),
        }
    }

    fn name(self) -> &'static str {
        match self {
            CandidateGrid::Pow2 => "pow2",
        }
    }
}

/// One candidate configuration of the θ selection: a strategy and the
/// release options that change how it selects. Written
/// `STRATEGY[/SELECTOR][@SHARE][~GRID]`, e.g. `gem/em@0.2` (`em` or `pf`
/// for the selector, the share of ε spent before the release, `pow2`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SuiteConfig {
    /// How θ* is chosen.
    pub strategy: Strategy,
    /// The selection mechanism; `None`: the default (permute-and-flip).
    pub selector: Option<Selector>,
    /// ε1/ε; `None`: the strategy's default.
    pub selection_share: Option<f64>,
    /// Candidates; `None`: the strategy's own.
    pub grid: Option<CandidateGrid>,
}

impl SuiteConfig {
    /// `strategy` with every other option at its default.
    pub fn plain(strategy: Strategy) -> Self {
        SuiteConfig { strategy, selector: None, selection_share: None, grid: None }
    }

    /// The product's default: the default strategy, plain.
    pub fn default_config() -> Self {
        Self::plain(Strategy::default())
    }

    /// No option beyond the strategy.
    pub fn is_plain(&self) -> bool {
        self.selector.is_none() && self.selection_share.is_none() && self.grid.is_none()
    }

    /// The default strategy, then every other private strategy that is no
    /// baseline, plain.
    pub fn strategies() -> Vec<SuiteConfig> {
        let others = Strategy::ALL
            .into_iter()
            .filter(|&s| s.is_private() && s != Strategy::BaselineNmax && s != Strategy::default());
        std::iter::once(Strategy::default()).chain(others).map(Self::plain).collect()
    }

    /// [`SuiteConfig::strategies`] and the variants `ReleaseOptions`
    /// exposes: the exponential mechanism instead of permute-and-flip for
    /// every strategy that selects; selection shares 0.2 and 0.6 (default
    /// 0.4) for those, 0.2 and 0.3 for `ub-direct` (default 0.1/√ε within
    /// [0.1, 0.3]); and the powers-of-two grid for `hem` and `ub-gem`.
    pub fn variants() -> Vec<SuiteConfig> {
        let mut out = Self::strategies();
        let selecting =
            [Strategy::Gem, Strategy::UbGem, Strategy::UbHem, Strategy::Hem, Strategy::Em];
        for s in selecting {
            out.push(SuiteConfig { selector: Some(Selector::Exponential), ..Self::plain(s) });
        }
        for s in [Strategy::Gem, Strategy::UbGem, Strategy::UbHem] {
            for share in [0.2, 0.6] {
                out.push(SuiteConfig { selection_share: Some(share), ..Self::plain(s) });
            }
        }
        for share in [0.2, 0.3] {
            out.push(SuiteConfig {
                selection_share: Some(share),
                ..Self::plain(Strategy::UbDirect)
            });
        }
        for s in [Strategy::Hem, Strategy::UbGem] {
            out.push(SuiteConfig { grid: Some(CandidateGrid::Pow2), ..Self::plain(s) });
        }
        out
    }

    /// `release` with this configuration's options set.
    pub fn apply(&self, release: &mut ReleaseOptions) {
        release.strategy = Some(self.strategy);
        release.selector = self.selector;
        release.epsilon_split = self.selection_share.map(|s| [s, 1.0 - s]);
        release.candidates = self.grid.map(CandidateGrid::thetas);
    }
}

impl fmt::Display for SuiteConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.strategy.name())?;
        match self.selector {
            Some(Selector::Exponential) => f.write_str("/em")?,
            Some(Selector::PermuteAndFlip) => f.write_str("/pf")?,
            None => {}
        }
        if let Some(share) = self.selection_share {
            write!(f, "@{share}")?;
        }
        if let Some(grid) = self.grid {
            write!(f, "~{}", grid.name())?;
        }
        Ok(())
    }
}

impl FromStr for SuiteConfig {
    type Err = EngineError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = |why: String| {
            EngineError::Config(format!(
                "configuration '{text}': {why} (write STRATEGY[/em|/pf][@SHARE][~pow2])"
            ))
        };
        let (rest, grid) = match text.split_once('~') {
            Some((rest, "pow2")) => (rest, Some(CandidateGrid::Pow2)),
            Some((_, other)) => return Err(bad(format!("unknown grid '{other}'"))),
            None => (text, None),
        };
        let (rest, share) = match rest.split_once('@') {
            Some((rest, share)) => {
                let s: f64 = share.parse().map_err(|_| bad(format!("share '{share}'")))?;
                if !(s > 0.0 && s < 1.0) {
                    return Err(bad(format!("share {s} is not strictly between 0 and 1")));
                }
                (rest, Some(s))
            }
            None => (rest, None),
        };
        let (name, selector) = match rest.split_once('/') {
            Some((name, "em")) => (name, Some(Selector::Exponential)),
            Some((name, "pf")) => (name, Some(Selector::PermuteAndFlip)),
            Some((_, other)) => return Err(bad(format!("unknown selector '{other}'"))),
            None => (rest, None),
        };
        let strategy: Strategy =
            name.parse().map_err(|e: dpincon_api::ParseError| bad(e.to_string()))?;
        Ok(SuiteConfig { strategy, selector, selection_share: share, grid })
    }
}

/// One table × ε × measure × configuration (or the oracle): a row of
/// `cells.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteCell {
    /// The table's name.
    pub table: String,
    /// Its family.
    pub family: String,
    /// Its rows.
    pub rows: u64,
    /// ε per measure.
    pub epsilon: f64,
    /// `mi`, `p` or `r`.
    pub measure: Measure,
    /// The configuration ([`SuiteConfig`]'s form), [`ORACLE`], or for I_R
    /// `ir-METHOD`.
    pub config: String,
    /// The exact value.
    pub exact: u64,
    /// Seeded runs (0 for the oracle, an exact expectation).
    pub runs: usize,
    /// Mean of |released − exact| / max(exact, 1).
    pub mean_relative_error: f64,
    /// Share of runs whose 95% interval held the exact value.
    pub coverage: Option<f64>,
    /// Median interval width relative to max(exact, 1).
    pub median_relative_width: Option<f64>,
    /// Share of runs whose point lay inside its own interval.
    pub point_in_interval: Option<f64>,
    /// Mean θ* (the oracle's θ).
    pub mean_theta: Option<f64>,
    /// Where `coverage` read below the stated 95%: the coverage over
    /// [`SuiteOptions::confirm_runs`] further runs on seeds the first runs
    /// did not use. At 100 runs a cell a true 95% reads 0.92 or less about
    /// once in eight cells; this says whether the miss is the interval's
    /// or the sample's. Default and I_R cells only.
    #[serde(default)]
    pub confirmed_coverage: Option<f64>,
}

/// What to run on each table.
#[derive(Debug, Clone)]
pub struct SuiteOptions {
    /// ε per measure.
    pub epsilons: Vec<f64>,
    /// The configurations, the default first.
    pub configs: Vec<SuiteConfig>,
    /// Seeded runs per (ε, configuration); the seeds are shared by all
    /// configurations (common random numbers).
    pub runs: usize,
    /// The first seed.
    pub seed: u64,
    /// Configurations run side by side.
    pub workers: usize,
    /// The oracle's curve: every θ up to this, then a 5% grid.
    pub dense_limit: u32,
    /// Score I_R too.
    pub repair: bool,
    /// Runs that re-measure the coverage of a default or I_R cell reading
    /// below the stated 95% ([`SuiteCell::confirmed_coverage`]); 0: none.
    pub confirm_runs: usize,
}

/// One table's cells, and what failed.
#[derive(Debug)]
pub struct TableScore {
    /// The cells, by configuration (the oracle and I_R last), then ε and measure.
    pub cells: Vec<SuiteCell>,
    /// Configurations that failed on this table, with the error.
    pub failures: Vec<(String, EngineError)>,
    /// Passes over the edges for θ not in the curve.
    pub passes: usize,
}

/// The table a score is for.
#[derive(Debug, Clone, Copy)]
pub struct TableLabel<'a> {
    /// Its name.
    pub table: &'a str,
    /// Its family.
    pub family: &'a str,
}

/// A configuration's index and its cells, or why it failed.
type Scored = (usize, Result<Vec<SuiteCell>, EngineError>);

fn cell(label: TableLabel<'_>, rows: u64, config: String, r: &CoverageRow) -> SuiteCell {
    SuiteCell {
        table: label.table.into(),
        family: label.family.into(),
        rows,
        epsilon: r.epsilon,
        measure: r.measure,
        config,
        exact: r.exact,
        runs: r.runs,
        mean_relative_error: r.mean_relative_error,
        coverage: Some(r.coverage),
        median_relative_width: Some(r.median_relative_width),
        point_in_interval: Some(1.0 - r.point_outside as f64 / r.runs.max(1) as f64),
        mean_theta: r.mean_theta,
        confirmed_coverage: None,
    }
}

/// Scores every configuration of `options` on one loaded table (`config`
/// is its job: data, constraints, threads); `tick` after each
/// configuration. A configuration that fails is reported, not fatal.
pub fn score_table(
    config: &JobConfig,
    loaded: &LoadedJob,
    label: TableLabel<'_>,
    options: &SuiteOptions,
    tick: &(dyn Fn() + Sync),
) -> Result<TableScore, EngineError> {
    let mut job = config.clone();
    job.test.non_private = true;
    let rows = loaded.facts.rows;
    let curve = projection_curve(loaded, options.dense_limit);
    let cache = ProjectionCache::new(loaded).with_curve(&curve);
    let coverage_options = CoverageOptions {
        epsilons: options.epsilons.clone(),
        runs: options.runs,
        seed: options.seed,
    };
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Scored>> = Mutex::new(Vec::new());
    let work = || {
        loop {
            let index = next.fetch_add(1, Ordering::Relaxed);
            let Some(c) = options.configs.get(index) else { break };
            let run = projected_job(&job, c);
            let result =
                coverage_with(&run, loaded, &coverage_options, &cache, &|| {}).map(|report| {
                    report.rows.iter().map(|r| cell(label, rows, c.to_string(), r)).collect()
                });
            done.lock().expect("results lock").push((index, result));
            tick();
        }
    };
    std::thread::scope(|scope| {
        for _ in 1..options.workers.clamp(1, options.configs.len().max(1)) {
            scope.spawn(work);
        }
        work();
    });
    let mut done = done.into_inner().expect("results lock");
    done.sort_by_key(|(i, _)| *i);
    let mut cells = Vec::new();
    let mut failures = Vec::new();
    for (i, result) in done {
        match result {
            Ok(c) => cells.extend(c),
            Err(e) => failures.push((options.configs[i].to_string(), e)),
        }
    }
    for &epsilon in &options.epsilons {
        for measure in [ProjectedMeasure::Mi, ProjectedMeasure::P] {
            let (theta, error) = oracle(&curve, measure, epsilon);
            let exact = match measure {
                ProjectedMeasure::Mi => curve.exact.edges,
                ProjectedMeasure::P => curve.exact.problematic,
            };
            cells.push(SuiteCell {
                table: label.table.into(),
                family: label.family.into(),
                rows,
                epsilon,
                measure: measure.into(),
                config: ORACLE.into(),
                exact,
                runs: 0,
                mean_relative_error: error,
                coverage: None,
                median_relative_width: None,
                point_in_interval: None,
                mean_theta: Some(f64::from(theta)),
                confirmed_coverage: None,
            });
        }
    }
    let mut checked = Vec::new();
    if let Some(c) = options.configs.first() {
        checked.push((c.to_string(), projected_job(&job, c)));
    }
    if options.repair {
        let mut run = job.clone();
        run.release.measures = Some(vec![Measure::R]);
        let method = run.release.ir_method.unwrap_or_default();
        let name = format!("ir-{}", method.name());
        match coverage_with(&run, loaded, &coverage_options, &cache, &|| {}) {
            Ok(report) => {
                cells.extend(report.rows.iter().map(|r| cell(label, rows, name.clone(), r)));
                checked.push((name, run));
            }
            Err(e) => failures.push((name, e)),
        }
    }
    for (name, run) in &checked {
        if let Err(e) = confirm_coverage(&mut cells, name, run, loaded, options, &cache) {
            failures.push((name.clone(), e));
        }
    }
    Ok(TableScore { cells, failures, passes: cache.passes() })
}

/// `job` releasing I_MI and I_P under `config`.
fn projected_job(job: &JobConfig, config: &SuiteConfig) -> JobConfig {
    let mut run = job.clone();
    config.apply(&mut run.release);
    run.release.measures = Some(vec![Measure::Mi, Measure::P]);
    run
}

/// Re-measures, over `options.confirm_runs` runs on fresh seeds, the
/// coverage of `config`'s cells that read below the stated 95%, at the ε
/// where any did ([`SuiteCell::confirmed_coverage`]).
fn confirm_coverage(
    cells: &mut [SuiteCell],
    config: &str,
    run: &JobConfig,
    loaded: &LoadedJob,
    options: &SuiteOptions,
    cache: &ProjectionCache<'_>,
) -> Result<(), EngineError> {
    let low = |c: &SuiteCell| {
        c.config == config && c.coverage.is_some_and(|v| v < dpincon_release::COVERAGE)
    };
    let mut epsilons: Vec<f64> = cells.iter().filter(|c| low(c)).map(|c| c.epsilon).collect();
    epsilons.sort_by(f64::total_cmp);
    epsilons.dedup();
    if options.confirm_runs == 0 || epsilons.is_empty() {
        return Ok(());
    }
    // The first runs used seeds seed .. seed + runs: start past them.
    let seed = options.seed.wrapping_add(options.runs as u64);
    let again = CoverageOptions { epsilons, runs: options.confirm_runs, seed };
    let report = coverage_with(run, loaded, &again, cache, &|| {})?;
    for r in &report.rows {
        let same = |c: &&mut SuiteCell| c.epsilon == r.epsilon && c.measure == r.measure;
        if let Some(c) = cells.iter_mut().filter(|c| low(c)).find(same) {
            c.confirmed_coverage = Some(r.coverage);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configurations_are_written_as_they_are_read() {
        for text in ["ub-direct", "gem/em", "ub-gem@0.2", "hem~pow2", "gem/pf@0.6~pow2"] {
            let config: SuiteConfig = text.parse().unwrap();
            assert_eq!(config.to_string(), text);
        }
        let config: SuiteConfig = "gem/em@0.2".parse().unwrap();
        assert_eq!(config.strategy, Strategy::Gem);
        assert_eq!(config.selector, Some(Selector::Exponential));
        let mut release = ReleaseOptions::default();
        config.apply(&mut release);
        assert_eq!(release.epsilon_split, Some([0.2, 0.8]));
        for bad in ["best", "gem/gumbel", "gem@1.5", "gem@x", "gem~dense"] {
            let message = bad.parse::<SuiteConfig>().unwrap_err().to_string();
            assert!(message.contains(bad.split(['/', '@', '~']).next_back().unwrap()), "{message}");
        }
    }

    /// A default cell read below 95% is re-measured on fresh seeds; one at
    /// or above it, and every other configuration's, is left as read.
    #[tokio::test]
    async fn only_the_defaults_low_readings_are_measured_again() {
        let dir = tempfile::tempdir().unwrap();
        let mut csv = String::from("Zip,City\n");
        for i in 0..300 {
            let city = if i % 17 == 0 { "X".to_string() } else { format!("C{}", i % 30) };
            csv += &format!("{},{city}\n", i % 30);
        }
        let data = dir.path().join("t.csv");
        std::fs::write(&data, csv).unwrap();
        let dcs = dir.path().join("t.dcs");
        std::fs::write(&dcs, "FD: Zip -> City\n").unwrap();
        let mut job = JobConfig::new(&data, &dcs);
        job.test.non_private = true;
        let loaded = crate::load(&job, &crate::NoProgress).await.unwrap();
        let cache = ProjectionCache::new(&loaded);
        let default = SuiteConfig::default_config();
        let options = SuiteOptions {
            epsilons: vec![1.0],
            configs: vec![default, "gem".parse().unwrap()],
            runs: 5,
            seed: 1,
            workers: 1,
            dense_limit: 50,
            repair: false,
            confirm_runs: 40,
        };
        let label = TableLabel { table: "t", family: "f" };
        let row = |measure, coverage| CoverageRow {
            epsilon: 1.0,
            runs: 5,
            coverage,
            ..CoverageRow::empty(measure)
        };
        let mut cells = vec![
            cell(label, 300, default.to_string(), &row(Measure::Mi, 0.6)),
            cell(label, 300, default.to_string(), &row(Measure::P, 1.0)),
            cell(label, 300, "gem".into(), &row(Measure::Mi, 0.6)),
        ];
        let run = projected_job(&job, &default);
        let name = default.to_string();
        confirm_coverage(&mut cells, &name, &run, &loaded, &options, &cache).unwrap();
        let again = cells[0].confirmed_coverage.expect("the low default cell is re-measured");
        assert!((again * 40.0 - (again * 40.0).round()).abs() < 1e-9, "a share of 40: {again}");
        // The intervals hold ≥ 95%: 30 of 40 or fewer has probability < 10^-6.
        assert!(again > 0.75, "{again}");
        assert_eq!(cells[1].confirmed_coverage, None, "read at 1.0: left as read");
        assert_eq!(cells[2].confirmed_coverage, None, "not the default");
        // Nothing to confirm, or no confirming runs: nothing runs.
        let mut none = cells[1..].to_vec();
        confirm_coverage(&mut none, &name, &run, &loaded, &options, &cache).unwrap();
        let off = SuiteOptions { confirm_runs: 0, ..options };
        let mut low = vec![cell(label, 300, name.clone(), &row(Measure::Mi, 0.6))];
        confirm_coverage(&mut low, &name, &run, &loaded, &off, &cache).unwrap();
        assert!(none.iter().chain(&low).all(|c| c.confirmed_coverage.is_none()));
    }

    #[test]
    fn the_strategies_start_with_the_default_and_leave_out_the_baselines() {
        let strategies = SuiteConfig::strategies();
        assert_eq!(strategies[0], SuiteConfig::default_config());
        assert!(strategies.iter().all(|c| c.is_plain() && c.strategy.is_private()));
        assert!(!strategies.iter().any(|c| c.strategy == Strategy::BaselineNmax));
        assert_eq!(strategies.len(), Strategy::ALL.len() - 2);
        let variants = SuiteConfig::variants();
        assert_eq!(&variants[..strategies.len()], &strategies[..]);
        let mut names: Vec<String> = variants.iter().map(ToString::to_string).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), variants.len(), "distinct names");
    }
}
