//! Helpers shared by the cross-crate tests in `tests/`: where the paper's
//! data sets are (when present), and a tiny in-memory table builder.

use std::path::PathBuf;

use dpincon_engine::{JobConfig, MeasuresReport, NoProgress, NonPrivateReport, load, run_job};
use dpincon_graph::{EdgeFingerprint, edge_stream_fingerprint};

/// A seeded non-private report's exact values and releases.
pub type ExactView = (Option<NonPrivateReport>, Option<MeasuresReport>);

/// The exact, NON-PRIVATE view of a job: rows, the edge stream's
/// fingerprint, the non-private report and the seeded releases (what two
/// sources of the same rows must agree on).
pub async fn exact(config: JobConfig) -> (u64, EdgeFingerprint, ExactView) {
    let loaded = load(&config, &NoProgress).await.unwrap();
    let fingerprint = edge_stream_fingerprint(loaded.graph.edges());
    let mut config = config;
    config.test.non_private = true;
    config.test.seed = Some(11);
    config.release.epsilon = Some(1.0);
    let report = run_job(&config, &NoProgress).await.unwrap();
    (loaded.facts.rows, fingerprint, (report.non_private, report.measures))
}

/// `shared/data` beside the repository, when it is there (CI has it; a
/// checkout on its own may not). Tests that need it say so when skipping.
pub fn shared_data() -> Option<PathBuf> {
    // At run time: `env!` keeps the path of the checkout that compiled it,
    // stale when a shared build cache serves another checkout.
    let dir =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap()).join("../../shared/data");
    dir.is_dir().then_some(dir)
}

/// Cases per property test of the fuzz targets and the detection oracle:
/// `DPINCON_FUZZ_CASES` when set (the documented long run, e.g. 100000),
/// else `default` (what CI runs).
pub fn fuzz_cases(default: u32) -> u32 {
    std::env::var("DPINCON_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}
