//! How θ* will be chosen once the pass has run: everything [`super::prepare`]
//! fixes before the pass, public or already released.

use dpincon_mechanisms::Budget;

/// How θ* will be chosen once the pass has run.
#[derive(Debug, Clone)]
pub(crate) enum Choice {
    /// θ* is already fixed (`baseline-nmax`, `ub-direct`).
    Fixed(u32),
    /// θ* is the true maximum degree (NOT private).
    TrueMax,
    /// One or two EM steps over `candidates` (`em`, `hem`, `ub-hem`).
    Hierarchical {
        candidates: Vec<u32>,
        /// ub-hem's n_max candidate, judged by its noise alone.
        unbiased: Option<u32>,
        first_theta_max: u32,
        steps: Vec<Budget>,
    },
    /// One GEM step over `candidates` with penalty `t`.
    Generalized { candidates: Vec<u32>, epsilon: Budget, penalty: f64 },
    /// `ub-direct`'s I_MI when d̃ is above the floor θ_c, or there is no
    /// degree bound (`top` = n_max): a noisy look at f(G_θc) with `test`
    /// raises θ* from `floor` (up to `top`) while the count can absorb the
    /// noise, or, with a degree bound, up to `density_cap` = min(ñ, top)
    /// as far as the count's density allows (all the way where it is
    /// dense: the nineteenth round); θ* is rounded down onto `grid`.
    /// `ratio` is κ: θ* keeps the release's noise scale at most v/κ.
    Floored {
        floor: u32,
        top: u32,
        test: Budget,
        grid: Vec<u32>,
        density_cap: Option<u32>,
        ratio: f64,
    },
    /// `ub-direct`'s I_P by class count (module `classes`):
    /// max(f(G_τ), capped(τ)) at `tau`, at most `theta`, I_P's noise cap
    /// (`theta` = `tau` under a key, where τ = 1 costs nothing).
    Classes { tau: u32, theta: u32, test: Option<Budget> },
    /// `ub-direct`'s I_P over several X's keys and FDs after the look at M.
    Leading(LeadingChoice),
}

/// `ub-direct`'s I_P over several X's keys and FDs after the look at M
/// (`look`, at M's sensitivity `miss_sensitivity`; none over keys alone,
/// where M is 0 and the count is I_P): with `lead`,
/// max(f_P(G_τ), the leading count) at τ = `tau` with the count's
/// `sensitivity`, else the class count at `theta`, as [`Choice::Classes`].
#[derive(Debug, Clone)]
pub(crate) struct LeadingChoice {
    pub(crate) tau: u32,
    pub(crate) theta: u32,
    pub(crate) sensitivity: u64,
    pub(crate) look: Option<Budget>,
    pub(crate) miss_sensitivity: u64,
    pub(crate) lead: bool,
}

impl LeadingChoice {
    /// The θ released at: τ₀ with the leading count, else θ*.
    pub(crate) fn released(&self) -> u32 {
        if self.lead { self.tau } else { self.theta }
    }
}
