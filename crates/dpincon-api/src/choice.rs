//! The public choices of how a job releases: [`Strategy`] (how θ* is
//! chosen), [`Selector`] (the selection mechanism of each step) and
//! [`RepairMethod`] (how I_R is released). Plain names here; what each
//! does is `dpincon-release`'s and `dpincon-mechanisms`'.

use crate::ParseError;
use crate::named::named;

/// How θ* is chosen for a projected measure (SPEC §4; `--strategy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Strategy {
    /// θ* = n_max, the public row bound; the whole budget goes to the release.
    BaselineNmax,
    /// θ* = the true maximum degree. NON-PRIVATE: for experiments only.
    BaselineTruemax,
    /// One exponential mechanism over the candidates.
    Em,
    /// Two-step hierarchical EM.
    Hem,
    /// A noisy degree upper bound prunes the candidates, then `hem`.
    UbHem,
    /// The generalized exponential mechanism over a halving grid from n_max.
    Gem,
    /// A tight noisy degree bound d̃ caps the grid, then `gem` below it.
    UbGem,
    /// θ* = d̃ itself (the default).
    #[default]
    UbDirect,
}

named!(Strategy, |s| ParseError::Strategy(s.into()), {
    BaselineNmax => "baseline-nmax",
    BaselineTruemax => "baseline-truemax",
    Em => "em",
    Hem => "hem",
    UbHem => "ub-hem",
    Gem => "gem",
    UbGem => "ub-gem",
    UbDirect => "ub-direct",
});

impl Strategy {
    /// False for the strategy that reads the true maximum degree.
    pub fn is_private(self) -> bool {
        self != Strategy::BaselineTruemax
    }
}

/// The selection mechanism of each private selection step (`--selector`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Selector {
    /// The exponential mechanism (the paper's choice).
    Exponential,
    /// Permute-and-flip: same privacy, never worse expected quality (the
    /// default).
    #[default]
    PermuteAndFlip,
}

named!(Selector, |s| ParseError::Selector(s.into()), {
    Exponential => "em",
    PermuteAndFlip => "permute-and-flip",
});

/// How I_R is released (`--ir-method`): public, chosen by the job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RepairMethod {
    /// The stable-order greedy cover only: one pass, O(n) memory.
    Greedy,
    /// The LP relaxation only: a second pass, and the edges among the
    /// greedy cover's rows in memory.
    Lp,
    /// Both, ε split between them (the default).
    #[default]
    Combined,
}

named!(RepairMethod, |s| ParseError::RepairMethod(s.into()), {
    Greedy => "greedy",
    Lp => "lp",
    Combined => "combined",
});

impl RepairMethod {
    /// Whether the method needs the LP relaxation (memory no public input
    /// bounds).
    pub fn needs_lp(self) -> bool {
        self != RepairMethod::Greedy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_refusals_say_what_is_accepted() {
        for s in Strategy::ALL {
            assert_eq!(s.name().parse::<Strategy>(), Ok(s));
        }
        for s in Selector::ALL {
            assert_eq!(s.to_string().parse::<Selector>(), Ok(s));
        }
        for m in RepairMethod::ALL {
            assert_eq!(m.to_string().parse::<RepairMethod>(), Ok(m));
        }
        assert_eq!(
            "paper".parse::<Strategy>().unwrap_err().to_string(),
            "unknown strategy 'paper' (use one of baseline-nmax, baseline-truemax, em, hem, \
             ub-hem, gem, ub-gem, ub-direct)"
        );
        assert_eq!(
            "gumbel".parse::<Selector>().unwrap_err().to_string(),
            "unknown selection mechanism 'gumbel': expected 'em' or 'permute-and-flip'"
        );
        assert_eq!(
            "exact".parse::<RepairMethod>().unwrap_err().to_string(),
            "unknown I_R method 'exact' (use greedy, lp or combined)"
        );
    }
}
