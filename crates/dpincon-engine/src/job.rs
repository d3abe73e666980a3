use std::path::Path;
use std::time::Instant;

use dpincon_detect::{DetectOptions, compile, detect};
use dpincon_measures::{DegreeCounts, GreedyCover, walk};
use dpincon_source::{DataFormat, ReadOptions, encode, parse_schema_override, read_table};

use crate::report::{
    DetectionReport, NON_PRIVATE_LABEL, NonPrivateReport, PlanReport, Report, Timings,
};
use crate::{EngineError, JobConfig};

/// The phases of a job, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Parsing the constraints and reading the table.
    Read,
    /// Finding the conflicts.
    Detect,
    /// The pass over the edge stream.
    Measure,
}

impl Phase {
    /// A short human name.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Read => "reading table",
            Phase::Detect => "detecting conflicts",
            Phase::Measure => "measuring",
        }
    }
}

/// Receives progress; the CLI draws it, services forward it.
pub trait Progress: Sync {
    /// A phase starts.
    fn start(&self, phase: Phase);
    /// A phase ends.
    fn finish(&self, phase: Phase, seconds: f64);
}

/// Progress that goes nowhere.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _: Phase) {}
    fn finish(&self, _: Phase, _: f64) {}
}

fn timed<T>(progress: &dyn Progress, phase: Phase, f: impl FnOnce() -> T) -> (T, f64) {
    progress.start(phase);
    let start = Instant::now();
    let out = f();
    let seconds = start.elapsed().as_secs_f64();
    progress.finish(phase, seconds);
    (out, seconds)
}

/// Runs a job to its report. Constraints are parsed before the table is read,
/// so a malformed constraint costs nothing.
pub async fn run_job(config: &JobConfig, progress: &dyn Progress) -> Result<Report, EngineError> {
    let total = Instant::now();
    let parsed = read_constraints(&config.constraints)?;
    let read_options = ReadOptions {
        format: match config.format.as_deref() {
            None => None,
            Some("csv") => Some(DataFormat::Csv),
            Some("parquet") => Some(DataFormat::Parquet),
            Some(other) => {
                return Err(EngineError::Config(format!(
                    "unknown data format '{other}' (use csv or parquet)"
                )));
            }
        },
        schema: config
            .schema
            .as_deref()
            .map(parse_schema_override)
            .transpose()?
            .unwrap_or_default(),
        infer_rows: config.infer_rows,
    };

    progress.start(Phase::Read);
    let read_start = Instant::now();
    let table = read_table(&config.data, &read_options).await?;
    let bound = dpincon_constraints::bind(&parsed, &table.schema())
        .map_err(|source| EngineError::Constraint { path: config.constraints.clone(), source })?;
    let relation = encode(&table, &bound)?;
    drop(table);
    let compiled = compile(&bound, &relation)?;
    let read_s = read_start.elapsed().as_secs_f64();
    progress.finish(Phase::Read, read_s);

    let options = DetectOptions {
        threads: config.threads.unwrap_or_else(|| DetectOptions::default().threads).max(1),
        brute_force: config.brute_force,
    };
    let (detection, detect_s) =
        timed(progress, Phase::Detect, || detect(&relation, &compiled, options));
    let graph = detection.graph;

    let ((degrees, cover), measures_s) = timed(progress, Phase::Measure, || {
        let mut degrees = DegreeCounts::new(graph.nodes());
        let mut cover = GreedyCover::new(graph.nodes());
        walk(graph.edges(), &mut [&mut degrees, &mut cover]);
        (degrees.counts(), cover.size())
    });

    let non_private = config.non_private.then_some(NonPrivateReport {
        label: NON_PRIVATE_LABEL,
        rows: degrees.rows,
        edges: degrees.edges,
        problematic: degrees.problematic,
        max_degree: degrees.max_degree,
        greedy_cover: cover.cover,
        min_cover_lower_bound: cover.lower_bound,
        drastic: degrees.drastic,
    });
    let plans = detection
        .plans
        .iter()
        .map(|p| PlanReport {
            line: bound[p.constraint].origin.line,
            constraint: p.display.clone(),
            partition_attributes: p.partition_attributes,
            driver: p.driver.to_string(),
        })
        .collect();
    Ok(Report {
        data: config.data.display().to_string(),
        constraints: config.constraints.display().to_string(),
        constraint_count: bound.len(),
        detection: DetectionReport { threads: options.threads, plans },
        timings: Timings { read_s, detect_s, measures_s, total_s: total.elapsed().as_secs_f64() },
        non_private,
    })
}

fn read_constraints(
    path: &Path,
) -> Result<Vec<dpincon_constraints::DenialConstraint>, EngineError> {
    let text = std::fs::read_to_string(path).map_err(|e| EngineError::ConstraintFile {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    dpincon_constraints::parse_constraints(&text)
        .map_err(|source| EngineError::Constraint { path: path.to_path_buf(), source })
}
