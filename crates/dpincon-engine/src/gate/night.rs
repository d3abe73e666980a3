//! One gated night: ask the running epochs, then release afresh and open
//! new epochs where needed (module docs of [`super`]).

use std::collections::BTreeMap;
use std::time::Instant;

use dpincon_api::Measure;
use dpincon_graph::ConflictGraph;
use dpincon_measures::DegreeBound;
use dpincon_release::{
    Epoch, EpochParams, GateVerdict, MeasureGate, NightFacts, NoiseRng, ProjectionTable,
    RepairValues, TableFacts,
};

use super::state::{EpochPublic, Loaded, Pending, StateFile, StoredEpoch};
use super::{
    EpochReport, GateCheck, GateOptions, GateOutcome, GateReport, OpenReason, epoch_charges,
};
use crate::job::{JobOutcome, check_quota, noise_rng};
use crate::load::{JobLoader, LocalLoader, job_threads, load_with};
use crate::privacy::{
    PassResult, budget_split, measure_and_release, projection_pass, repair_values,
};
use crate::report::{BudgetReport, DetectionReport, MeasuresReport, Report};
use crate::{EngineError, JobConfig, Prepaid, Progress, failpoint, ledger, new_job_id};

fn invalid(message: impl Into<String>) -> EngineError {
    EngineError::Config(message.into())
}

/// A measure's epoch that may answer tonight.
struct Running {
    public: EpochPublic,
    epoch: Epoch,
}

/// Runs one gated night of `config`'s dataset (module docs of [`super`]).
///
/// Order, for privacy and crash safety: options, state and ledger are
/// checked before the table is read; the epochs' answers are stored
/// before anything is published; a fresh release is recorded as pending,
/// then charged, then drawn, and its epoch stored, before the report
/// returns. A failure returns no report: nothing drawn reaches anyone.
///
/// # Errors
/// As [`crate::run_job`], and [`EngineError::Ledger`] for the state file.
pub async fn run_gated_night(
    config: &JobConfig,
    options: &GateOptions,
    progress: &dyn Progress,
) -> Result<Report, EngineError> {
    night(config, options, None, progress, &LocalLoader).await.report
}

/// [`run_gated_night`] on a coordinator, where the operator owns the
/// epochs: the night was charged a *hold* when it was accepted (every
/// measure's epoch opening, and the `over quota` verdict's ε), so it
/// charges nothing here; the epochs it opens draw under that hold, and
/// the report's `budget.total` says how much of it the night used (the
/// coordinator returns the rest at the night's release time; the cluster
/// README, "Gated nights"). The table is loaded by `loader` (Ballista).
///
/// # Errors
/// As [`run_gated_night`]; [`EngineError::Ledger`] if the night would
/// need more than its hold (a coordinator bug: nothing is drawn).
pub async fn run_prepaid_gated_night<L: JobLoader>(
    config: &JobConfig,
    options: &GateOptions,
    prepaid: Prepaid,
    progress: &dyn Progress,
    loader: &L,
) -> JobOutcome<L::Stats> {
    night(config, options, Some(prepaid), progress, loader).await
}

async fn night<L: JobLoader>(
    config: &JobConfig,
    options: &GateOptions,
    hold: Option<Prepaid>,
    progress: &dyn Progress,
    loader: &L,
) -> JobOutcome<L::Stats> {
    let mut stats = None;
    let report = night_report(config, options, hold, progress, loader, &mut stats).await;
    JobOutcome { report, stats }
}

/// [`night`]'s steps; `stats` gets the loader's figures once detection
/// ends.
async fn night_report<L: JobLoader>(
    config: &JobConfig,
    options: &GateOptions,
    hold: Option<Prepaid>,
    progress: &dyn Progress,
    loader: &L,
    stats: &mut Option<L::Stats>,
) -> Result<Report, EngineError> {
    let plan = budget_split(config)?.ok_or_else(|| invalid("a gated night needs --epsilon"))?;
    let data = &config.data;
    if config.test.non_private {
        return Err(invalid("a gated night releases DP values only: no --non-private"));
    }
    let ledger = data.ledger.as_ref().ok_or_else(|| invalid("a gated night needs a ledger"))?;
    if data.max_rows.is_none() {
        return Err(invalid(
            "a gated night needs the public max-rows (its bounds hold every night)",
        ));
    }
    crate::validate::check_epsilon("the gate's epsilon", options.epsilon)?;
    if options.nights == 0 || !(options.beta > 0.0 && options.beta < 1.0) {
        return Err(invalid("a gate needs nights ≥ 1 and β in (0, 1)"));
    }
    let release_epsilon = plan.epsilon.value();
    let per_epoch = release_epsilon + options.epsilon;

    let (file, loaded) = StateFile::open(&options.state)?;
    let (mut state, lost) = match loaded {
        Loaded::Fresh(s) | Loaded::Read(s) => (s, false),
        Loaded::Lost(s, why) => {
            // The operator's eyes only: the reason names no data.
            eprintln!(
                "gate state '{}': {why}; every epoch reopens, charged",
                options.state.display()
            );
            (s, true)
        }
    };
    // A fresh release charged before a crash: redrawn under its charge.
    let prepaid = match state.pending.take() {
        Some(p) if ledger::has_job(ledger, &p.job)? => Some(p),
        _ => None,
    };
    let mut running = BTreeMap::new();
    let mut fresh: BTreeMap<Measure, OpenReason> = BTreeMap::new();
    for m in plan.measures() {
        let stored = state.epochs.remove(m.name());
        if prepaid.as_ref().is_some_and(|p| p.measures.contains(&m)) {
            fresh.insert(m, OpenReason::Recovered);
            continue;
        }
        match stored.map(|s| resume(s, m, options, release_epsilon)) {
            Some(Ok(r)) => {
                running.insert(m, r);
            }
            Some(Err(reason)) => {
                fresh.insert(m, reason);
            }
            None => {
                // No state, but the history shows an epoch: it was lost.
                let lost = lost || options.history.published.contains_key(&m);
                fresh.insert(m, if lost { OpenReason::Lost } else { OpenReason::First });
            }
        }
    }
    // Every epoch that must open tonight is paid for before any work.
    // (A held night was paid for every opening when it was accepted.)
    let opening =
        fresh.keys().filter(|m| !prepaid.as_ref().is_some_and(|p| p.measures.contains(m)));
    if hold.is_none() {
        ledger::check(
            ledger,
            &config.table.name(),
            data.budget_cap,
            opening.count() as f64 * per_epoch,
        )?;
    }
    failpoint::hit("after-check");
    let id = match (&hold, &prepaid) {
        (Some(h), _) => h.job_id.clone(),
        (None, Some(p)) => p.job.clone(),
        (None, None) => new_job_id()?,
    };
    let (loaded, figures) = load_with(config, progress, loader).await?.split_stats();
    *stats = Some(figures);
    failpoint::hit("after-load");
    let quota_epsilon = hold.as_ref().and_then(|h| h.quota_epsilon);
    check_quota(config, &loaded, quota_epsilon)?;
    let threads = job_threads(config);
    let mut rng = noise_rng(config.test.seed)?;
    let mut reports = Vec::new();

    // Tonight's answers, stored before anything is published.
    if !running.is_empty() {
        let gates: Vec<&MeasureGate> = running.values().map(|r: &Running| &r.public.gate).collect();
        let (table, repair) = night_pass(&loaded.graph, &loaded.facts, &gates, threads)?;
        let night = NightFacts { table: &table, facts: &loaded.facts, repair };
        for (&m, r) in &mut running {
            let values = r.public.gate.values(&night)?;
            match r.epoch.check_all(&values, &mut rng)? {
                GateVerdict::Pass => reports.push(passed(m, r)?),
                GateVerdict::Above => {
                    fresh.insert(m, OpenReason::Above);
                }
            }
        }
        for (m, r) in std::mem::take(&mut running) {
            let stored = StoredEpoch { public: r.public, secret: r.epoch.into_secret() };
            state.epochs.insert(m.name().into(), stored);
        }
        file.write(&state)?;
        failpoint::hit("gate-answered");
    }

    let mut measures = None;
    let mut ledger_state = None;
    let mut charged = 0.0;
    if !fresh.is_empty() {
        let opening: Vec<Measure> = fresh.keys().copied().collect();
        let unpaid: Vec<Measure> = opening
            .iter()
            .copied()
            .filter(|m| !prepaid.as_ref().is_some_and(|p| p.measures.contains(m)))
            .collect();
        charged = unpaid.len() as f64 * per_epoch;
        // Drawn under a hold, it must cover every opening: checked before
        // the pending record, which a later night would redraw under.
        if let Some(h) = &hold {
            let held = h.ledger.as_ref().map_or(0.0, |l| l.spent_after - l.spent_before);
            if charged + quota_epsilon.unwrap_or(0.0) > held * (1.0 + 1e-9) {
                return Err(EngineError::Ledger {
                    path: ledger.clone(),
                    message: format!(
                        "the night would open epochs of ε {charged} beyond its hold of ε \
                         {held}: nothing was drawn"
                    ),
                });
            }
        }
        // Write-ahead: the pending record, then the charge.
        state.pending = Some(Pending { job: id.clone(), measures: opening.clone() });
        file.write(&state)?;
        failpoint::hit("gate-pending");
        if hold.is_none() && !unpaid.is_empty() {
            let charges = epoch_charges(&unpaid, release_epsilon, options.epsilon);
            ledger_state =
                Some(ledger::charge(ledger, &config.table.name(), data.budget_cap, &id, &charges)?);
        }
        failpoint::hit("after-charge");
        progress.start(crate::Phase::Measure);
        let started = Instant::now();
        let sub = plan.only(&opening);
        let PassResult { releases, .. } =
            measure_and_release(&loaded.graph, Some((&sub, &mut rng)), &loaded.facts, threads)?;
        progress.finish(crate::Phase::Measure, started.elapsed().as_secs_f64());
        let releases = releases.unwrap_or_default();
        failpoint::hit("after-release");
        for (&m, &reason) in &fresh {
            let stored = open(m, &releases, id.clone(), release_epsilon, options, &mut rng)?;
            reports.push(opened(m, reason, &stored, &releases)?);
            state.epochs.insert(m.name().into(), stored);
        }
        failpoint::hit("gate-drawn");
        state.pending = None;
        file.write(&state)?;
        measures = Some(releases);
    }
    reports.sort_by_key(|r| r.measure);
    let budget = BudgetReport {
        per_measure: release_epsilon,
        measures: fresh.keys().copied().collect(),
        total: charged + quota_epsilon.unwrap_or(0.0),
        quota_verdict: quota_epsilon,
        ledger: ledger_state,
    };
    Ok(Report {
        job_id: id,
        seeded: rng.is_seeded(),
        budget: Some(budget),
        measures,
        data: config.table.name().display().to_string(),
        constraints: config.constraints.origin().display().to_string(),
        constraint_count: loaded.constraint_count,
        detection: DetectionReport { threads: loaded.threads, plans: loaded.plans },
        timings: None,
        non_private: None,
        gated: Some(reports),
    })
}

/// The epoch's public parameters for `gate` under tonight's options.
fn params(gate: &MeasureGate, options: &GateOptions) -> Result<EpochParams, EngineError> {
    let (e, d, n, b) = (options.epsilon, gate.sensitivity(), options.nights, options.beta);
    Ok(EpochParams::new(e, d, gate.bands(), n, b)?)
}

/// The checks on `measure`.
fn cuts(options: &GateOptions, measure: Measure) -> Vec<GateCheck> {
    options.checks.iter().filter(|c| c.measure == measure).copied().collect()
}

/// The stored epoch, if it may answer tonight; else why it reopens.
fn resume(
    stored: StoredEpoch,
    measure: Measure,
    options: &GateOptions,
    release_epsilon: f64,
) -> Result<Running, OpenReason> {
    let StoredEpoch { public, secret } = stored;
    if secret.ended() {
        return Err(OpenReason::Above);
    }
    if secret.nights_used() >= secret.params().nights() {
        return Err(OpenReason::Exhausted);
    }
    let expected = params(&public.gate, options).map_err(|_| OpenReason::Changed)?;
    let unchanged = public.release_epsilon == release_epsilon
        && public.checks == cuts(options, measure)
        && public.moved == options.moved
        && *secret.params() == expected;
    if !unchanged {
        return Err(OpenReason::Changed);
    }
    // A copy of an epoch the history has moved past, or one behind it.
    let nights = match options.history.published.get(&measure) {
        Some(p) if p.opened_by == public.opened_by => p.nights,
        _ if options.history.retired.contains(&public.opened_by) => return Err(OpenReason::Lost),
        // Opened by a night the history never recorded (a crash after the
        // state was stored): nothing of it was published.
        _ => 0,
    };
    match Epoch::resume(&expected, secret, nights) {
        Ok(epoch) => Ok(Running { public, epoch }),
        Err(_) => Err(OpenReason::Lost),
    }
}

/// The epoch's public figures.
fn epoch_report(
    public: &EpochPublic,
    params: &EpochParams,
    nights_used: u32,
) -> Result<EpochReport, EngineError> {
    let accuracy = params.accuracy()?;
    Ok(EpochReport {
        opened_by: public.opened_by.clone(),
        epsilon: params.epsilon(),
        release_epsilon: public.release_epsilon,
        sensitivity: params.sensitivity(),
        nights: params.nights(),
        nights_used,
        beta: params.beta(),
        alpha: accuracy.pass,
        alpha_two_sided: accuracy.two_sided,
        alpha_quiet: accuracy.quiet,
        moved: public.moved_width,
        gate: public.gate.clone(),
    })
}

/// A passed night: the opening value within the gate's interval.
fn passed(measure: Measure, running: &Running) -> Result<GateReport, EngineError> {
    let epoch = epoch_report(&running.public, running.epoch.params(), running.epoch.nights_used())?;
    let ci95 = running.public.gate.interval(epoch.alpha);
    Ok(GateReport {
        measure,
        outcome: GateOutcome::Pass,
        reason: None,
        value: running.public.value.clamp(ci95[0], ci95[1]),
        ci95,
        epoch,
    })
}

/// The gate of `measure`'s fresh release with the moved gate `moved`.
fn gate_of(
    measure: Measure,
    releases: &MeasuresReport,
    checks: &[(dpincon_release::Direction, i64)],
    moved: u64,
) -> Result<MeasureGate, EngineError> {
    let missing = || invalid(format!("the fresh release lacks {}", measure.name()));
    Ok(match measure {
        Measure::Mi => {
            MeasureGate::projected(releases.mi.as_ref().ok_or_else(missing)?, checks, moved)?
        }
        Measure::P => {
            MeasureGate::projected(releases.p.as_ref().ok_or_else(missing)?, checks, moved)?
        }
        Measure::R => MeasureGate::repair(releases.r.as_ref().ok_or_else(missing)?, checks, moved)?,
    })
}

/// The point and interval of `measure`'s fresh release.
fn released(measure: Measure, releases: &MeasuresReport) -> Option<(i64, [i64; 2])> {
    match measure {
        Measure::Mi => releases.mi.as_ref().map(|r| (r.value, r.ci95)),
        Measure::P => releases.p.as_ref().map(|r| (r.value, r.ci95)),
        Measure::R => releases.r.as_ref().map(|r| (r.value, r.ci95)),
    }
}

/// Opens `measure`'s epoch on its fresh release: the gate, then ρ. The
/// moved gate defaults to the epoch's quiet width α_q (computed at the
/// same Δ, which the bands do not change).
fn open(
    measure: Measure,
    releases: &MeasuresReport,
    opened_by: String,
    release_epsilon: f64,
    options: &GateOptions,
    rng: &mut NoiseRng,
) -> Result<StoredEpoch, EngineError> {
    let checks = cuts(options, measure);
    let pairs: Vec<_> = checks.iter().map(|c| (c.direction, c.threshold)).collect();
    let moved_width = match options.moved {
        Some(m) => m,
        None => params(&gate_of(measure, releases, &pairs, 0)?, options)?.accuracy()?.quiet,
    };
    let gate = gate_of(measure, releases, &pairs, moved_width)?;
    let epoch = Epoch::start(params(&gate, options)?, rng)?;
    let (value, _) = released(measure, releases).ok_or_else(|| invalid("no release"))?;
    let public = EpochPublic {
        opened_by,
        value,
        release_epsilon,
        checks,
        moved: options.moved,
        moved_width,
        gate,
    };
    Ok(StoredEpoch { public, secret: epoch.into_secret() })
}

/// A fresh night's report for `measure`.
fn opened(
    measure: Measure,
    reason: OpenReason,
    stored: &StoredEpoch,
    releases: &MeasuresReport,
) -> Result<GateReport, EngineError> {
    let (value, ci95) = released(measure, releases).ok_or_else(|| invalid("no release"))?;
    Ok(GateReport {
        measure,
        outcome: GateOutcome::Fresh,
        reason: Some(reason),
        value,
        ci95,
        epoch: epoch_report(&stored.public, stored.secret.params(), 0)?,
    })
}

/// The night's private inputs for `gates`: f(G_θ) at their θ, and I_R's
/// statistics when one reads them.
fn night_pass(
    graph: &ConflictGraph,
    facts: &TableFacts,
    gates: &[&MeasureGate],
    threads: usize,
) -> Result<(ProjectionTable, Option<RepairValues>), EngineError> {
    let thetas = gates.iter().flat_map(|g| g.thetas()).filter_map(DegreeBound::new).collect();
    let (table, cover) = projection_pass(graph, facts, thetas, threads);
    let (repair, lp) = gates.iter().fold((false, false), |(r, l), g| {
        let (gr, gl) = g.needs_repair();
        (r || gr, l || gl)
    });
    let values = repair.then(|| repair_values(graph, facts, &cover, lp, threads));
    Ok((table, values))
}
