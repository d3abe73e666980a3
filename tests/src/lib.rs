//! Helpers shared by the cross-crate tests in `tests/`: where the paper's
//! data sets are (when present), and a tiny in-memory table builder.

use std::path::PathBuf;

/// `shared/data` beside the repository, when it is there (CI has it; a
/// checkout on its own may not). Tests that need it say so when skipping.
pub fn shared_data() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data");
    dir.is_dir().then_some(dir)
}

/// Cases per property test of the fuzz targets and the detection oracle:
/// `DPINCON_FUZZ_CASES` when set (the documented long run, e.g. 100000),
/// else `default` (what CI runs).
pub fn fuzz_cases(default: u32) -> u32 {
    std::env::var("DPINCON_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}
