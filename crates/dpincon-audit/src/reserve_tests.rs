//! Re-serving on real runs (the engine on a tiny table, a real history and
//! ledger): an unchanged version serves the latest release again and
//! charges nothing; a changed version or changed settings release afresh;
//! thresholds are judged again on the stored interval; `charged` counts
//! released nights only, locally and with a coordinator.

use std::cell::Cell;
use std::path::PathBuf;

use dpincon_engine::{NoProgress, ledger, run_job};

use crate::history::History;
use crate::run::job_config;
use crate::{
    AuditRun, DatasetStatus, Reason, RunContext, Suite, Verdict, run_suite, run_suite_remote,
};

/// A table (A → B with one violating group of three rows: I_MI = 3,
/// I_P = 3), its constraint file, and a suite of one dataset that reads
/// its version from `t.version`, in a temporary folder.
struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t.csv"), "A,B\na,1\na,2\na,3\nb,1\n").unwrap();
        std::fs::write(dir.path().join("t.dcs"), "FD: A -> B\n").unwrap();
        Fixture { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes the suite and the version file; returns the loaded suite.
    fn suite(&self, version: &str, epsilon: f64, checks: &str) -> Suite {
        std::fs::write(self.path("t.version"), version).unwrap();
        let text = format!(
            "name = \"s\"\n[[dataset]]\nname = \"t\"\ndata = \"t.csv\"\nconstraints = \"t.dcs\"\n\
             version-file = \"t.version\"\nmeasures = [\"mi\", \"p\"]\nepsilon = {epsilon}\n\
             max-rows = 10\nledger = \"t.ledger\"\nbudget-cap = 1e6\n{checks}"
        );
        std::fs::write(self.path("suite.toml"), text).unwrap();
        Suite::load(&self.path("suite.toml")).unwrap()
    }

    fn history(&self) -> History {
        History::open(&self.path("audit-history.sqlite")).unwrap()
    }

    fn spent(&self) -> f64 {
        ledger::summary(&self.path("t.ledger")).unwrap().spent
    }

    /// One night: the context from the history, a local run (counting the
    /// engine's jobs in `jobs`), appended.
    async fn night(&self, suite: &Suite, jobs: &Cell<u32>) -> AuditRun {
        let mut history = self.history();
        let ctx = RunContext::load(suite, &history, None, Some(1)).unwrap();
        let outcome = run_suite(suite, &ctx, async |config, _: &str| {
            jobs.set(jobs.get() + 1);
            Ok(run_job(config.config(), &NoProgress).await?)
        })
        .await;
        history.append(&outcome.run).unwrap();
        outcome.run
    }
}

const PAIRS: &str = "[[dataset.check]]\nname = \"pairs\"\nmeasure = \"mi\"\nmax = 5\n";

fn job(run: &AuditRun) -> &str {
    run.datasets[0].job_id.as_deref().expect("released")
}

#[tokio::test]
async fn an_unchanged_version_reserves_the_latest_release_and_charges_nothing() {
    let f = Fixture::new();
    let jobs = Cell::new(0);
    let v1 = f.night(&f.suite("v1\n", 1.0, PAIRS), &jobs).await;
    let v2 = f.night(&f.suite("v2", 1.0, PAIRS), &jobs).await;
    assert_eq!((v2.datasets[0].status, jobs.get(), f.spent()), (DatasetStatus::Ran, 2, 4.0));
    assert_eq!(v2.datasets[0].version.as_deref(), Some("v2"));

    // v2 again, twice: the latest release (v2's) is served, not v1's, and
    // a re-served night can be re-served in turn.
    let mut reserved_night = None;
    for _ in 0..2 {
        let again = f.night(&f.suite(" v2 \n", 1.0, PAIRS), &jobs).await;
        let d = &again.datasets[0];
        assert_eq!((d.status, d.job_id.as_deref(), d.error), (DatasetStatus::Reserved, None, None));
        let from = d.reserved_from.as_ref().unwrap();
        assert_eq!((from.job_id.as_str(), from.started_unix), (job(&v2), v2.started_unix));
        assert_eq!(d.checks[0].ci95, v2.datasets[0].checks[0].ci95);
        assert_eq!(d.checks[0].value, v2.datasets[0].checks[0].value);
        assert_eq!(d.checks[0].verdict, v2.datasets[0].checks[0].verdict);
        assert!(d.checks[0].message.starts_with("re-served: version v2 unchanged since "));
        // Nothing ran, nothing charged: the ledger and the budget say so.
        assert_eq!((jobs.get(), f.spent()), (2, 4.0));
        let b = &d.budget;
        assert_eq!((b.spent, b.per_run, b.remaining, b.refused), (4.0, 0.0, 1e6 - 4.0, None));
        assert_eq!(b.nights_left, 499_998.0, "nights at the rate of a release");
        reserved_night = Some(again);
    }

    // Back to v1: not v2's release, and v1's is not the latest: release.
    let back = f.night(&f.suite("v1", 1.0, PAIRS), &jobs).await;
    assert_eq!((back.datasets[0].status, jobs.get()), (DatasetStatus::Ran, 3));
    assert_ne!(job(&back), job(&v1));
    // The same version under other release settings is another release.
    let more_epsilon = f.night(&f.suite("v1", 2.0, PAIRS), &jobs).await;
    assert_eq!((more_epsilon.datasets[0].status, jobs.get()), (DatasetStatus::Ran, 4));
    std::fs::write(f.path("t.dcs"), "FD: B -> A\n").unwrap();
    let other_constraints = f.night(&f.suite("v1", 2.0, PAIRS), &jobs).await;
    assert_eq!((other_constraints.datasets[0].status, jobs.get()), (DatasetStatus::Ran, 5));
    assert_eq!(f.spent(), 2.0 + 2.0 + 2.0 + 4.0 + 4.0);

    // `charged` counts the released nights only: what a coordinator run's
    // budget is planned on.
    let charged = f.history().charged("s").unwrap();
    assert_eq!(charged.get("t"), Some(&f.spent()));
    // The status decides, not the figure: a re-served night is never
    // counted, whatever its budget says.
    let mut odd = reserved_night.unwrap();
    odd.datasets[0].budget.per_run = 2.0;
    let mut history = f.history();
    history.append(&odd).unwrap();
    assert_eq!(history.charged("s").unwrap(), charged);
    let trends = f.history().trends("s").unwrap();
    let reserved: Vec<bool> = trends[0].points.iter().map(|p| p.reserved).collect();
    assert_eq!(reserved, [false, false, true, true, false, false, false, true]);
    assert!(trends[0].points.iter().all(|p| !p.test_clock));
}

/// Re-serving spends nothing, so a budget too low for another release
/// does not stop it.
#[tokio::test]
async fn an_exhausted_budget_still_reserves() {
    let f = Fixture::new();
    let jobs = Cell::new(0);
    f.suite("v1", 1.0, PAIRS);
    let text = std::fs::read_to_string(f.path("suite.toml")).unwrap();
    let text = text.replace("budget-cap = 1e6", "budget-cap = 2");
    std::fs::write(f.path("suite.toml"), text).unwrap();
    let suite = Suite::load(&f.path("suite.toml")).unwrap();
    assert_eq!(f.night(&suite, &jobs).await.datasets[0].status, DatasetStatus::Ran);
    let d = f.night(&suite, &jobs).await.datasets.remove(0);
    assert_eq!(
        (d.status, d.budget.refused, d.budget.nights_left),
        (DatasetStatus::Reserved, None, 0.0)
    );
    std::fs::write(f.path("t.version"), "v2").unwrap();
    let d = f.night(&suite, &jobs).await.datasets.remove(0);
    assert_eq!((d.status, d.error), (DatasetStatus::Refused, Some(Reason::BudgetExhausted)));
    assert_eq!((jobs.get(), f.spent()), (1, 2.0));
}

#[tokio::test]
async fn thresholds_are_judged_again_on_the_stored_interval() {
    let f = Fixture::new();
    let jobs = Cell::new(0);
    // ε = 10⁴: the interval is the exact value, I_MI = 3.
    let first = f.night(&f.suite("v1", 1e4, PAIRS), &jobs).await;
    assert_eq!(first.datasets[0].checks[0].ci95, Some([3, 3]));
    assert_eq!(first.datasets[0].checks[0].verdict, Verdict::Pass);
    // Tighter threshold; a second check on I_MI; a new one on I_P, which
    // the suite released but no check of the stored night read.
    let checks = "[[dataset.check]]\nname = \"pairs\"\nmeasure = \"mi\"\nmax = 2\n\
                  [[dataset.check]]\nname = \"pairs-too\"\nmeasure = \"mi\"\nmax = 9\n\
                  [[dataset.check]]\nname = \"rows\"\nmeasure = \"p\"\nmax = 9\n";
    let second = f.night(&f.suite("v1", 1e4, checks), &jobs).await;
    let d = &second.datasets[0];
    assert_eq!((d.status, jobs.get()), (DatasetStatus::Reserved, 1));
    let verdicts: Vec<_> = d.checks.iter().map(|c| (c.ci95, c.verdict)).collect();
    assert_eq!(
        verdicts,
        [(Some([3, 3]), Verdict::Fail), (Some([3, 3]), Verdict::Pass), (None, Verdict::Error)]
    );
    assert_eq!(d.checks[0].threshold, 2.0);
    assert!(d.checks[2].message.starts_with("no value: the re-served release has no check on p"));
    assert_eq!(second.exit_code, 3);
}

#[tokio::test]
async fn an_unreadable_version_refuses_the_dataset_before_any_work() {
    let f = Fixture::new();
    let jobs = Cell::new(0);
    let suite = f.suite("v1", 1.0, PAIRS);
    std::fs::remove_file(f.path("t.version")).unwrap();
    let mut history = f.history();
    let ctx = RunContext::load(&suite, &history, None, Some(1)).unwrap();
    let outcome = run_suite(&suite, &ctx, async |config, _: &str| {
        jobs.set(jobs.get() + 1);
        Ok(run_job(config.config(), &NoProgress).await?)
    })
    .await;
    let d = &outcome.run.datasets[0];
    assert_eq!((d.status, d.error), (DatasetStatus::Error, Some(Reason::UnreadableVersion)));
    assert_eq!((d.budget.spent, d.budget.per_run, d.budget.remaining), (0.0, 2.0, 1e6));
    assert_eq!(d.checks[0].message, "no release: unreadable version");
    assert!(outcome.details[0].message.contains("`version-file`"), "{:?}", outcome.details);
    assert_eq!(jobs.get(), 0);
    assert!(!f.path("t.ledger").exists(), "nothing charged");
    history.append(&outcome.run).unwrap();
    assert_eq!(history.last_release("s", "t").unwrap(), None);
}

/// With a coordinator the decision is the client's, from the same public
/// data: the second night submits nothing and the suite's own charges
/// (its budget there) do not grow.
#[tokio::test]
async fn a_coordinator_run_reserves_too_and_charges_nothing() {
    let f = Fixture::new();
    let submitted = Cell::new(0);
    let night = async |suite: &Suite| {
        let mut history = f.history();
        let ctx = RunContext::load(suite, &history, None, Some(1)).unwrap();
        let charged = history.charged("s").unwrap();
        let outcome = run_suite_remote(
            suite,
            "http://c:1",
            &charged,
            &ctx,
            async |d: &crate::suite::Dataset| {
                submitted.set(submitted.get() + 1);
                Ok(run_job(&job_config(d, ctx.seed), &NoProgress).await?)
            },
        )
        .await;
        history.append(&outcome.run).unwrap();
        outcome.run
    };
    let first = night(&f.suite("v1", 1.0, PAIRS)).await;
    assert_eq!(first.datasets[0].status, DatasetStatus::Ran);
    let second = night(&f.suite("v1", 1.0, PAIRS)).await;
    let d = &second.datasets[0];
    assert_eq!((d.status, submitted.get()), (DatasetStatus::Reserved, 1));
    assert_eq!((d.budget.spent, d.budget.per_run), (2.0, 0.0));
    assert_eq!(d.reserved_from.as_ref().unwrap().job_id, job(&first));
    assert_eq!(f.history().charged("s").unwrap().get("t"), Some(&2.0));
}

/// A seeded (test) release never stands in for a real one: the seed is
/// part of the settings compared.
#[tokio::test]
async fn a_seeded_release_is_not_reserved_for_an_unseeded_run() {
    let f = Fixture::new();
    let jobs = Cell::new(0);
    let suite = f.suite("v1", 1.0, PAIRS);
    f.night(&suite, &jobs).await;
    let history = f.history();
    let unseeded = RunContext::load(&suite, &history, None, None).unwrap();
    let seeded = RunContext::load(&suite, &history, None, Some(9)).unwrap();
    let run = async |ctx: &RunContext| {
        run_suite(&suite, ctx, async |config, _: &str| {
            Ok(run_job(config.config(), &NoProgress).await?)
        })
        .await
        .run
    };
    assert_eq!(run(&unseeded).await.datasets[0].status, DatasetStatus::Ran);
    assert_eq!(run(&seeded).await.datasets[0].status, DatasetStatus::Reserved);
}

#[test]
fn a_test_clock_before_the_latest_run_is_refused_naming_both_dates() {
    let f = Fixture::new();
    let suite = f.suite("v1", 1.0, PAIRS);
    let mut history = f.history();
    let ctx = RunContext::load(&suite, &history, Some("2026-03-01"), None).unwrap();
    assert_eq!((ctx.started_unix, ctx.test_clock.as_deref()), (1_772_323_200, Some("2026-03-01")));
    let run = AuditRun {
        schema_version: 1,
        suite: "s".into(),
        started_unix: ctx.started_unix,
        test_clock: ctx.test_clock,
        datasets: vec![],
        status: crate::ExitStatus::Pass,
        exit_code: 0,
    };
    history.append(&run).unwrap();
    // The same night again is in order; the night before is not.
    RunContext::load(&suite, &history, Some("2026-03-01"), None).unwrap();
    let e = RunContext::load(&suite, &history, Some("2026-02-28"), None).unwrap_err();
    let e = e.to_string();
    assert!(e.contains("2026-02-28T00:00:00Z") && e.contains("2026-03-01T00:00:00Z"), "{e}");
    assert!(e.contains("earlier than the latest run of suite 's'"), "{e}");
}

/// A history written before these columns existed opens, and its nights
/// are neither test-clock nor re-served ones.
#[test]
fn an_older_history_gains_the_new_columns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.sqlite");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TABLE runs (id INTEGER PRIMARY KEY, suite TEXT NOT NULL,
             started_unix INTEGER NOT NULL, exit_code INTEGER NOT NULL, report TEXT NOT NULL);
         CREATE TABLE checks (run INTEGER NOT NULL REFERENCES runs(id), dataset TEXT NOT NULL,
             name TEXT NOT NULL, measure TEXT NOT NULL, threshold REAL NOT NULL,
             value INTEGER, lo INTEGER, hi INTEGER, verdict TEXT NOT NULL);
         INSERT INTO runs VALUES (1, 's', 100, 0, '{\"started_unix\": 100, \"datasets\": []}');
         INSERT INTO checks VALUES (1, 't', 'pairs', 'mi', 5, 3, 2, 4, 'pass');",
    )
    .unwrap();
    drop(conn);
    let history = History::open(&path).unwrap();
    let points = &history.trends("s").unwrap()[0].points;
    assert_eq!((points.len(), points[0].test_clock, points[0].reserved), (1, false, false));
    assert_eq!(history.latest_started("s").unwrap(), Some(100));
    // Opening again finds the columns there.
    History::open(&path).unwrap();
}
