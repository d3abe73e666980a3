//! Deterministic pseudo-random pairs for the crate's tests.

/// `count` pairs of distinct nodes below `n`, from an LCG seeded by `state`.
pub(crate) fn pseudo_random_pairs(n: u32, count: usize, mut state: u64) -> Vec<(u32, u32)> {
    let mut step = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 33) % u64::from(n)) as u32
    };
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let (a, b) = (step(), step());
        if a != b {
            out.push((a, b));
        }
    }
    out
}
