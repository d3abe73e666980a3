//! The public ε limits of `dpincon_engine::validate` leave every sampler
//! room: a job at the smallest ε, with the most lopsided split allowed,
//! runs to a release under every private strategy and I_R method, with
//! and without a declared n_max (a huge one included). If a strategy ever
//! hands a step less than its sampler can represent, this fails.

use dpincon_api::{RepairMethod, Strategy};
use dpincon_engine::validate::{MAX_EPSILON, MIN_EPSILON, MIN_SHARE};
use dpincon_engine::{JobConfig, NoProgress, ReleaseOptions, run_job};

fn fixture(dir: &std::path::Path) -> (std::path::PathBuf, Vec<std::path::PathBuf>) {
    let data = dir.join("t.csv");
    let mut csv = String::from("Zip,City,Gain,Loss\n");
    for i in 0..40 {
        csv += &format!("{},{},{},{}\n", i % 5, i % 3, i, (i * 7) % 11);
    }
    std::fs::write(&data, csv).unwrap();
    // Σ_eq only, and one DC outside Σ_eq (d̃ bounds nothing: n_max too).
    let eq = dir.join("eq.txt");
    std::fs::write(&eq, "FD: Zip -> City\n").unwrap();
    let mixed = dir.join("mixed.txt");
    std::fs::write(&mixed, "FD: Zip -> City\nnot(t1.Gain<t2.Gain&t1.Loss>t2.Loss)\n").unwrap();
    (data, vec![eq, mixed])
}

#[tokio::test]
async fn the_limits_leave_every_sampler_room() {
    let dir = tempfile::tempdir().unwrap();
    let (data, constraint_files) = fixture(dir.path());
    for constraints in &constraint_files {
        for strategy in Strategy::ALL.into_iter().filter(|s| s.is_private()) {
            for split in
                [None, Some([MIN_SHARE, 1.0 - MIN_SHARE]), Some([1.0 - MIN_SHARE, MIN_SHARE])]
            {
                for max_rows in [None, Some(u64::from(u32::MAX))] {
                    for (epsilon, ir) in
                        [(MIN_EPSILON, RepairMethod::Combined), (MAX_EPSILON, RepairMethod::Lp)]
                    {
                        let mut job = JobConfig::new(&data, constraints);
                        job.release = ReleaseOptions {
                            epsilon: Some(epsilon),
                            strategy: Some(strategy),
                            epsilon_split: split,
                            ir_method: Some(ir),
                            ..ReleaseOptions::default()
                        };
                        job.data.max_rows = max_rows;
                        job.test.seed = Some(7);
                        let report = run_job(&job, &NoProgress).await.unwrap_or_else(|e| {
                            panic!("{strategy} {split:?} {max_rows:?} ε={epsilon}: {e}")
                        });
                        let budget = report.budget.expect("a private job reports its budget");
                        assert!(budget.total.is_finite() && budget.total == 3.0 * epsilon);
                        let json = serde_json::to_value(&budget).unwrap();
                        assert!(json["total"].is_number(), "{json}");
                    }
                }
            }
        }
    }
}
