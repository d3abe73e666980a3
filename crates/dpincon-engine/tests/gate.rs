//! Gated nights (`dpincon_engine::gate`) on real tables: the first night
//! opens a charged epoch per measure, unchanged nights pass for free with
//! intervals that hold the measure, a burst of violations ends the epoch
//! with a fresh, charged release, and a lost, shared, stale or changed
//! state is never reused for free.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use dpincon_engine::gate::{
    GateCheck, GateOptions, GateOutcome, GateReport, OpenReason, PublishedEpochs, run_gated_night,
};
use dpincon_engine::{JobConfig, Measure, NoProgress, ReleaseOptions, Report, ledger, run_job};
use dpincon_release::Direction;

const RELEASE_EPSILON: f64 = 1.0;
const GATE_EPSILON: f64 = 1.0;

/// 600 rows over 60 zips; `bad` of them break `Zip -> City`.
fn write_table(path: &Path, bad: usize) {
    let mut csv = String::from("Zip,City,Street\n");
    for i in 0..600 {
        let zip = i % 60;
        let city = if i < bad { 1000 + i } else { zip * 3 };
        csv += &format!("{zip},{city},{i}\n");
    }
    std::fs::write(path, csv).unwrap();
}

struct Night {
    dir: tempfile::TempDir,
    data: PathBuf,
    job: JobConfig,
    options: GateOptions,
}

fn night(measures: &[Measure]) -> Night {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("t.csv");
    write_table(&data, 10);
    let dcs = dir.path().join("fd.txt");
    std::fs::write(&dcs, "FD: Zip -> City\n").unwrap();
    let mut job = JobConfig::new(&data, &dcs);
    job.release = ReleaseOptions {
        epsilon: Some(RELEASE_EPSILON),
        measures: Some(measures.to_vec()),
        ..ReleaseOptions::default()
    };
    job.data.max_rows = Some(1000);
    job.data.ledger = Some(dir.path().join("t.ledger"));
    job.data.budget_cap = Some(100.0);
    let checks = measures
        .iter()
        .map(|&measure| GateCheck { measure, direction: Direction::AtMost, threshold: 5_000 })
        .collect();
    let options = GateOptions {
        state: dir.path().join("t.gate"),
        epsilon: GATE_EPSILON,
        nights: 365,
        beta: 0.05,
        moved: None,
        checks,
        history: PublishedEpochs::default(),
    };
    Night { dir, data, job, options }
}

impl Night {
    async fn run(&mut self, seed: u64) -> Report {
        self.job.test.seed = Some(seed);
        let report = run_gated_night(&self.job, &self.options, &NoProgress).await.unwrap();
        // The history the audit keeps: each measure's epoch and nights.
        for g in report.gated.as_ref().unwrap() {
            self.options.history.record(g.measure, &g.epoch.opened_by, g.epoch.nights_used);
        }
        report
    }

    fn spent(&self) -> f64 {
        ledger::summary(self.job.data.ledger.as_ref().unwrap()).unwrap().spent
    }

    /// The measures' exact values (the test's ground truth).
    async fn truth(&self) -> BTreeMap<Measure, i64> {
        let mut exact = self.job.clone();
        exact.release = ReleaseOptions::default();
        exact.data.ledger = None;
        exact.data.budget_cap = None;
        exact.test.non_private = true;
        let np = run_job(&exact, &NoProgress).await.unwrap().non_private.unwrap();
        let r = np.repair.and_then(|r| r.min_cover).unwrap();
        BTreeMap::from([
            (Measure::Mi, np.edges as i64),
            (Measure::P, np.problematic as i64),
            (Measure::R, r as i64),
        ])
    }
}

fn outcomes(report: &Report) -> Vec<(Measure, GateOutcome, Option<OpenReason>)> {
    report.gated.as_ref().unwrap().iter().map(|g| (g.measure, g.outcome, g.reason)).collect()
}

fn per_epoch() -> f64 {
    RELEASE_EPSILON + GATE_EPSILON
}

#[tokio::test]
async fn a_quiet_table_passes_for_free_and_a_burst_reopens_charged() {
    let all = [Measure::Mi, Measure::P, Measure::R];
    let mut n = night(&all);
    let first = n.run(1).await;
    assert!(
        outcomes(&first)
            .iter()
            .all(|o| o.1 == GateOutcome::Fresh && o.2 == Some(OpenReason::First))
    );
    assert!((n.spent() - 3.0 * per_epoch()).abs() < 1e-9);
    assert!((first.budget.as_ref().unwrap().total - 3.0 * per_epoch()).abs() < 1e-9);
    // The state is the owner's only, and no report carries its secret.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&n.options.state).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{mode:o}");
    }
    let text = serde_json::to_string(&first).unwrap();
    assert!(!text.contains("threshold_noise") && !text.contains("secret"), "{text}");
    assert!(std::fs::read_to_string(&n.options.state).unwrap().contains("threshold_noise"));

    // Quiet nights: passes, nothing charged, intervals that hold the truth.
    let truth = n.truth().await;
    let mut passes = 0;
    for seed in 2..12 {
        let report = n.run(seed).await;
        for g in report.gated.as_ref().unwrap() {
            if g.outcome == GateOutcome::Pass {
                passes += 1;
                let t = truth[&g.measure];
                assert!(g.ci95[0] <= t && t <= g.ci95[1], "{g:?}: {t}");
                assert!(g.ci95[0] <= g.value && g.value <= g.ci95[1]);
                assert!(g.epoch.alpha > 0 && g.epoch.alpha <= g.epoch.alpha_two_sided);
            }
        }
    }
    // α₂-wide gates end an unmoved epoch with probability ≤ β over the year.
    assert!(passes >= 27, "{passes} of 30 quiet measure-nights passed");
    let charged_quiet = n.spent() - 3.0 * per_epoch();
    assert!(charged_quiet <= 3.0 * per_epoch() + 1e-9, "{charged_quiet}");

    // A burst: 200 rows break the FD.
    write_table(&n.data, 200);
    let before = n.spent();
    let burst = n.run(50).await;
    let truth = n.truth().await;
    let mut reopened = 0.0;
    for g in burst.gated.as_ref().unwrap() {
        // Each measure reopens, or passes with an interval that still
        // holds it (a projected count saturated at a small θ stays in its
        // band while its interval's upper end, from the gated degree
        // bound, covers what θ cut).
        let t = truth[&g.measure];
        assert!(g.ci95[0] <= t && t <= g.ci95[1], "{g:?}: {t}");
        if g.outcome == GateOutcome::Fresh {
            assert_eq!(g.reason, Some(OpenReason::Above));
            reopened += per_epoch();
        }
    }
    // I_R, released exactly (Δ = 1), moved by far more than its gate.
    let r: &GateReport =
        burst.gated.as_ref().unwrap().iter().find(|g| g.measure == Measure::R).unwrap();
    assert_eq!(r.outcome, GateOutcome::Fresh);
    assert!((n.spent() - before - reopened).abs() < 1e-9);
}

#[tokio::test]
async fn a_lost_shared_stale_or_changed_state_is_never_reused_for_free() {
    let mut n = night(&[Measure::R]);
    n.run(1).await;
    n.run(2).await;
    let spent = n.spent();

    // A state others can read is refused before any work or charge.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let state = &n.options.state;
        std::fs::set_permissions(state, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = run_gated_night(&n.job, &n.options, &NoProgress).await.unwrap_err();
        assert!(err.to_string().contains("owner only"), "{err}");
        assert_eq!(n.spent(), spent);
        std::fs::set_permissions(state, std::fs::Permissions::from_mode(0o600)).unwrap();
    }

    // A copy from before the last night is behind the history: stale.
    let copy = n.dir.path().join("copy");
    std::fs::copy(&n.options.state, &copy).unwrap();
    let report = n.run(3).await;
    assert_eq!(outcomes(&report)[0].1, GateOutcome::Pass);
    std::fs::copy(&copy, &n.options.state).unwrap();
    let report = n.run(4).await;
    assert_eq!(outcomes(&report)[0].2, Some(OpenReason::Lost));
    assert!((n.spent() - spent - per_epoch()).abs() < 1e-9);

    // Deleted, or corrupt: a new, charged epoch.
    for damage in [None, Some("{not json")] {
        let spent = n.spent();
        match damage {
            None => std::fs::remove_file(&n.options.state).unwrap(),
            Some(text) => {
                std::fs::write(&n.options.state, text).unwrap();
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt;
                    let owner_only = std::fs::Permissions::from_mode(0o600);
                    std::fs::set_permissions(&n.options.state, owner_only).unwrap();
                }
            }
        }
        let report = n.run(5).await;
        assert_eq!(outcomes(&report)[0].2, Some(OpenReason::Lost), "{damage:?}");
        assert!((n.spent() - spent - per_epoch()).abs() < 1e-9);
    }

    // Changed settings: a new epoch.
    let spent = n.spent();
    n.options.checks[0].threshold = 10;
    let report = n.run(6).await;
    assert_eq!(outcomes(&report)[0].2, Some(OpenReason::Changed));
    assert!((n.spent() - spent - per_epoch()).abs() < 1e-9);
}

/// A coordinator's night (`run_prepaid_gated_night`) was charged its hold
/// when accepted: it charges nothing itself, reports what the hold paid
/// for (the epochs it opened and the quota verdict, every night), and
/// refuses, before any draw, to open more than the hold covers.
#[tokio::test]
async fn a_held_night_charges_nothing_and_reports_what_its_hold_paid_for() {
    use dpincon_engine::gate::run_prepaid_gated_night;
    use dpincon_engine::{LocalLoader, Prepaid};
    let mut n = night(&[Measure::R]);
    n.job.data.max_edges = Some(100_000_000);
    let ledger_path = n.job.data.ledger.clone().unwrap();
    let epoch = RELEASE_EPSILON + GATE_EPSILON;
    let quota = 0.01;
    // The coordinator's acceptance: the whole hold, before the night runs.
    let hold = |job: &str| {
        let charges = [("r", RELEASE_EPSILON), ("gate-r", GATE_EPSILON), ("quota", quota)];
        let state = ledger::charge(&ledger_path, &n.data, Some(100.0), job, &charges).unwrap();
        Prepaid { job_id: job.into(), ledger: Some(state), quota_epsilon: Some(quota) }
    };
    n.job.test.seed = Some(1);
    let first =
        run_prepaid_gated_night(&n.job, &n.options, hold("night-1"), &NoProgress, &LocalLoader)
            .await
            .report
            .unwrap();
    assert_eq!(outcomes(&first), [(Measure::R, GateOutcome::Fresh, Some(OpenReason::First))]);
    assert_eq!(first.job_id, "night-1");
    let budget = first.budget.as_ref().unwrap();
    assert!((budget.total - (epoch + quota)).abs() < 1e-12, "{budget:?}");
    assert_eq!(budget.quota_verdict, Some(quota));
    assert!((n.spent() - (epoch + quota)).abs() < 1e-12, "the night charged nothing itself");

    n.job.test.seed = Some(2);
    let second =
        run_prepaid_gated_night(&n.job, &n.options, hold("night-2"), &NoProgress, &LocalLoader)
            .await
            .report
            .unwrap();
    assert_eq!(outcomes(&second), [(Measure::R, GateOutcome::Pass, None)]);
    // A pass used only the quota verdict of its hold.
    assert_eq!(second.budget.as_ref().unwrap().total, quota);
    assert!((n.spent() - 2.0 * (epoch + quota)).abs() < 1e-12);

    // A hold that cannot pay for the epoch it would open: refused, nothing drawn.
    let mut fresh = night(&[Measure::R]);
    let small = ledger::charge(
        fresh.job.data.ledger.as_ref().unwrap(),
        &fresh.data,
        Some(100.0),
        "short",
        &[("r", RELEASE_EPSILON)],
    )
    .unwrap();
    let short = Prepaid { job_id: "short".into(), ledger: Some(small), quota_epsilon: None };
    fresh.job.test.seed = Some(3);
    let err = run_prepaid_gated_night(&fresh.job, &fresh.options, short, &NoProgress, &LocalLoader)
        .await
        .report
        .unwrap_err()
        .to_string();
    assert!(err.contains("beyond its hold") && err.contains("nothing was drawn"), "{err}");
    // Nothing stored either: no pending record a later night would redraw.
    assert!(!fresh.options.state.exists(), "no state written");
}
