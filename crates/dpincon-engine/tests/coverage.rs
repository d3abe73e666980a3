//! Issue 33's guarantee, checked statistically: on a table where the
//! projection truncates often (stars whose degree equals the degree bound,
//! so θ* = d̃ + ½ sd falls below it about a fifth of the time; the degree,
//! 99, is beyond the 3 sd of ε = 1 below which `ub-direct` draws d̃ again
//! and truncates less), every
//! measure's interval holds the exact value in at least 95% of seeded runs
//! (within Monte Carlo error), no point leaves its interval, and `<=`
//! verdicts are rarely wrong. A noise-only interval fails here: the test
//! checks that too, so the table keeps testing what it is meant to.

use dpincon_engine::experiment::{CoverageOptions, coverage};
use dpincon_engine::{JobConfig, Measure, NoProgress, load};

/// 10 zip groups of 100 rows; in each, one row names another city: a star
/// of degree 99 = maxfreq − 1 per group (F_MI = 990, F_P = 1000).
fn stars(dir: &std::path::Path) -> JobConfig {
    let data = dir.join("stars.csv");
    let mut csv = String::from("Zip,City\n");
    for group in 0..10 {
        for i in 0..100 {
            let city = if i == 7 { format!("x{group}") } else { format!("c{group}") };
            csv += &format!("{group},{city}\n");
        }
    }
    std::fs::write(&data, csv).unwrap();
    let constraints = dir.join("fd.txt");
    std::fs::write(&constraints, "Zip -> City\n").unwrap();
    let mut job = JobConfig::new(&data, &constraints);
    job.test.non_private = true;
    job
}

#[tokio::test]
async fn intervals_hold_each_measure_at_their_stated_rate() {
    let dir = tempfile::tempdir().unwrap();
    let job = stars(dir.path());
    let loaded = load(&job, &NoProgress).await.unwrap();
    let runs = 400;
    let options = CoverageOptions { epsilons: vec![1.0], runs, seed: 11 };
    let report = coverage(&job, &loaded, &options, &|| {}).unwrap();
    assert_eq!(report.rows.len(), 3, "{report:?}");
    // Three standard errors below 95%: a correct interval fails this with
    // probability about 0.1%, one at 90% almost always.
    let floor = report.stated - 3.0 * (0.95 * 0.05 / runs as f64).sqrt();
    for row in &report.rows {
        assert_eq!(row.runs, runs);
        assert!(row.coverage >= floor, "{}: coverage {} < {floor}", row.measure, row.coverage);
        assert_eq!(row.point_outside, 0, "{}", row.measure);
        // A wrong verdict needs the interval to miss F: at most 5% of them.
        let wrong = row.wrong_verdicts as f64 / row.verdicts as f64;
        assert!(wrong <= 0.05, "{}: wrong verdicts {wrong}", row.measure);
        assert_eq!(row.between_passes, 0, "{}: a pass between f(G_θ*) and F", row.measure);
    }
    let mi = report.rows.iter().find(|r| r.measure == Measure::Mi).unwrap();
    assert_eq!(mi.exact, 990);
    // The shape truncates: the interval around f(G_θ*) alone misses F often.
    assert!(mi.between_runs > runs / 10, "θ* truncated in {} runs only", mi.between_runs);
    assert!(mi.noise_only_coverage.unwrap() < floor, "{mi:?}");
}
