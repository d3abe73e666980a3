//! What a projected release is asked for, the table facts it may read,
//! and the public values it reports about its budget (SPEC §4). Both
//! halves read these: `prepare` fills them, `projected`
//! reports them.

use dpincon_mechanisms::{Budget, Selector};
use serde::{Deserialize, Serialize};

use crate::classes::ClassFacts;
use crate::{ProjectedMeasure, Strategy};

/// What to release for one projected measure, and how.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectedSpec {
    /// I_MI or I_P.
    pub measure: ProjectedMeasure,
    /// How θ* is chosen.
    pub strategy: Strategy,
    /// Exponential mechanism or permute-and-flip for each selection step.
    pub selector: Selector,
    /// ε of this measure's release.
    pub epsilon: Budget,
    /// ε1/ε, the share spent before the release (choosing θ*); ε2 is the
    /// rest. `None`: the strategy's default
    /// ([`crate::StrategyExt::default_selection_share`]).
    pub selection_share: Option<f64>,
    /// Candidate degree bounds Θ; default [`default_candidates`](crate::default_candidates) of n_max.
    pub candidates: Option<Vec<u32>>,
    /// The public upper bound n_max on the row count, when declared.
    pub max_rows: Option<u64>,
}

impl ProjectedSpec {
    /// The SPEC's defaults for `measure` at budget `epsilon`.
    pub fn new(measure: ProjectedMeasure, epsilon: Budget) -> Self {
        ProjectedSpec {
            measure,
            strategy: Strategy::default(),
            selector: Selector::default(),
            epsilon,
            selection_share: None,
            candidates: None,
            max_rows: None,
        }
    }
}

/// Private facts about the table that [`prepare`](crate::prepare()) releases with noise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableFacts {
    /// The row count n (never a noise scale or candidate, SPEC §6.4).
    pub rows: u64,
    /// maxfreq_X(D) for each distinct equality attribute set X.
    pub max_frequencies: Vec<u64>,
    /// maxfreq_X(D) for the minimal sets among them (SPEC §4.1's d̃).
    pub minimal_max_frequencies: Vec<u64>,
    /// maxfreq of both sides of each distinct cross equality `t1.L = t2.R`
    /// of a DC without `t1.A = t2.A` (`dpincon_detect::cross_equalities`):
    /// each adds maxfreq_L + maxfreq_R to the degree bound.
    pub cross_max_frequencies: Vec<u64>,
    /// Some constraint has neither a `t1.A = t2.A` predicate nor a cross
    /// equality: its degrees have no bound but n.
    pub unbounded: bool,
    /// The covers of the constraints' own graphs: I_R's lower bound, and
    /// its exact value or an upper bound.
    pub covers: crate::repair::CoverFacts,
    /// The classes of the table's one X when every constraint is a key or
    /// an FD of it (`dpincon_detect::fd_classes`): I_P by class count.
    pub classes: Option<ClassFacts>,
}

impl TableFacts {
    /// I_R itself when the constraints make one set's cover exact: one X
    /// whose keys and FDs include a key (the graph is a clique per X
    /// group) or have one B only (complete multipartite by B per group; a
    /// row with B NULL conflicts with none), or one order pair (its
    /// chain cover, `dpincon_detect::chain_cover`). Which case applies is
    /// public (the constraints); the value is private.
    pub fn exact_repair(&self) -> Option<u64> {
        self.covers.sum.filter(|u| u.exact).map(|u| u.sum)
    }

    /// The degree bound's terms, with no noise: Σ_X (maxfreq_X − 1) over
    /// the minimal equality sets (over every set with `minimal` false),
    /// plus maxfreq_L + maxfreq_R over each cross equality; a row's degree
    /// is at most this sum. Each term has sensitivity 1, so the sum has
    /// sensitivity `count` (README, "cross equalities").
    pub fn degree_terms(&self, minimal: bool) -> DegreeTerms {
        let sets = if minimal { &self.minimal_max_frequencies } else { &self.max_frequencies };
        let sum = sets
            .iter()
            .map(|&f| f.saturating_sub(1))
            .chain(self.cross_max_frequencies.iter().copied());
        DegreeTerms {
            sum: sum.map(|f| f as i64).fold(0, i64::saturating_add),
            count: sets.len() + self.cross_max_frequencies.len(),
        }
    }

    /// The largest single term of [`TableFacts::degree_terms`] over the
    /// minimal sets, a cross equality's two sides counting as one term
    /// (README, "the seventeenth round").
    pub fn largest_degree_term(&self) -> LargestTerm {
        let sets = self.minimal_max_frequencies.iter().map(|&f| f.saturating_sub(1));
        let cross = self.cross_max_frequencies.chunks(2).map(|sides| sides.iter().sum());
        let value = sets.chain(cross).max().unwrap_or(0);
        LargestTerm {
            value: value.min(i64::MAX as u64) as i64,
            sensitivity: if self.cross_max_frequencies.is_empty() { 1 } else { 2 },
            terms: self.minimal_max_frequencies.len() + self.cross_max_frequencies.len() / 2,
        }
    }

    /// U when every constraint is a key, an FD or an order pair and no one
    /// cover is exact ([`TableFacts::exact_repair`]): an upper bound on
    /// I_R with sensitivity k, the number of sets.
    pub fn upper_cover(&self) -> Option<crate::repair::UpperCover> {
        self.covers.sum.filter(|u| !u.exact)
    }
}

/// A degree bound with no noise: its value and how many terms of
/// sensitivity 1 it sums ([`TableFacts::degree_terms`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DegreeTerms {
    /// The sum: at least every row's degree.
    pub sum: i64,
    /// k, the number of terms (0: no bound).
    pub count: usize,
}

/// The largest term of a degree bound, with no noise
/// ([`TableFacts::largest_degree_term`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LargestTerm {
    /// max over the terms: maxfreq_X − 1, or maxfreq_L + maxfreq_R.
    pub value: i64,
    /// Its sensitivity: 1, or 2 beside a cross equality, whose two sides
    /// one row may both raise.
    pub sensitivity: u64,
    /// How many terms it is the largest of (public): the sum is at most
    /// this many times the largest.
    pub terms: usize,
}

/// The row bound n_max in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MaxRows {
    /// n_max.
    pub value: u64,
    /// Estimated as ñ + ⌈ln 20 / ε_n⌉ (a DP release) rather than declared.
    pub estimated: bool,
}

/// The noisy degree bound d̃ = Σ_X (maxfreq_X − 1) + Σ (maxfreq_L +
/// maxfreq_R) + DLap(k/ε0): over every distinct equality set X for
/// `ub-hem`, over the minimal ones for `ub-gem` and `ub-direct` (which then
/// cap θ at d̃ + margin), and over each cross equality `t1.L = t2.R`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoisyDegreeBound {
    /// d̃ (a DP release).
    pub value: i64,
    /// k, the number of terms summed: the equality attribute sets, and
    /// both sides of each cross equality ([`TableFacts::degree_terms`]).
    pub sets: usize,
    /// The public upward margin added before d̃ caps θ (0 for `ub-hem`).
    pub margin: i64,
    /// `ub-direct`'s I_MI: the largest single term plus noise (a DP
    /// release), when d̃ sums several (the seventeenth round).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub largest_term: Option<i64>,
}

/// Where one measure's ε went. The parts never sum to more than `total`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct BudgetUse {
    /// ε_n for ñ (0 when n_max is declared).
    pub max_rows: f64,
    /// ε0 for d̃ (ub-hem only).
    pub degree_bound: f64,
    /// ε_c for the class bound (I_P by class count).
    pub class_bound: f64,
    /// The steps choosing θ* (EM, GEM, ub-direct's look).
    pub selection: f64,
    /// ε2 of the final noise, and ε_u of the interval's second release
    /// when there is one (`ProjectedRelease::interval_release`).
    pub release: f64,
    /// The measure's ε.
    pub total: f64,
}
