//! I_R's exact values for `--non-private` reports and experiments: the
//! greedy cover c, the LP relaxation and the minimum cover itself
//! (`dpincon_measures::cover`). NON-PRIVATE: nothing here is released.

use dpincon_graph::ConflictGraph;
use dpincon_measures::{Adjacency, MinimumCover, fractional_cover, minimum_cover};
use serde::{Deserialize, Serialize};

/// Work units (nodes scanned, `dpincon_measures::minimum_cover`) the exact
/// minimum cover may spend before it reports "not computed (too slow)"
/// with its bounds: about ten seconds in a release build. A kernel with no
/// structure for the reductions to use can need exponential time.
pub const EXACT_COVER_WORK: u64 = 10_000_000_000;

/// I_R's exact values (NON-PRIVATE).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RepairFacts {
    /// The stable-order greedy cover c (SPEC §5): c/2 ≤ I_R ≤ c.
    pub greedy_cover: u64,
    /// LP(G), the minimum fractional vertex cover: LP ≤ I_R ≤ 2·LP.
    pub lp_relaxation: f64,
    /// I_R, the minimum vertex cover, when computed within the work limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_cover: Option<u64>,
    /// When the work limit was reached: bounds lower ≤ I_R ≤ upper.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_cover_bounds: Option<[u64; 2]>,
}

impl RepairFacts {
    /// The paper's yardstick for I_R errors, 2·LP (SPEC §6 erratum: not I_R).
    pub fn paper_yardstick(&self) -> u64 {
        (2.0 * self.lp_relaxation) as u64
    }
}

/// Computes the LP relaxation and the minimum cover of `graph` (whose greedy
/// cover is `greedy_cover`), the latter within `work_limit` branch nodes;
/// the adjacency is built on `threads` threads.
pub fn exact_repair(
    graph: &ConflictGraph,
    greedy_cover: u64,
    work_limit: u64,
    threads: usize,
) -> RepairFacts {
    let adjacency = Adjacency::from_graph(graph, threads);
    let lp = fractional_cover(&adjacency);
    let minimum = minimum_cover(&adjacency, &lp, work_limit);
    RepairFacts {
        greedy_cover,
        lp_relaxation: lp.twice_value() as f64 / 2.0,
        min_cover: minimum.exact(),
        min_cover_bounds: match minimum {
            MinimumCover::TooSlow { lower, upper } => Some([lower, upper]),
            MinimumCover::Exact(_) => None,
        },
    }
}
