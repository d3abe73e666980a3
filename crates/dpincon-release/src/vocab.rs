//! The job's vocabulary ([`dpincon_api`]) as the release runs it.
//!
//! [`Strategy`], [`RepairMethod`] and [`Selector`] are still declared
//! here and in `dpincon-mechanisms` beside their algorithms (`selection.rs`
//! and `repair.rs` are being changed on another branch); until they become
//! re-exports of `dpincon_api`'s, these conversions are the one bridge.
//! Each match is exhaustive both ways, and the test below pins the names,
//! so the two declarations cannot drift apart.

use dpincon_api as api;

use crate::{ProjectedMeasure, RepairMethod, Selector, Strategy};

macro_rules! same_names {
    ($api:ty, $ours:ty, { $($a:ident <=> $o:ident),+ $(,)? }) => {
        impl From<$api> for $ours {
            fn from(v: $api) -> Self {
                match v {
                    $(<$api>::$a => <$ours>::$o),+
                }
            }
        }

        impl From<$ours> for $api {
            fn from(v: $ours) -> Self {
                match v {
                    $(<$ours>::$o => <$api>::$a),+
                }
            }
        }
    };
}

same_names!(api::Strategy, Strategy, {
    BaselineNmax <=> BaselineNmax,
    BaselineTruemax <=> BaselineTruemax,
    Em <=> Em,
    Hem <=> Hem,
    UbHem <=> UbHem,
    Gem <=> Gem,
    UbGem <=> UbGem,
    UbDirect <=> UbDirect,
});

same_names!(api::RepairMethod, RepairMethod, {
    Greedy <=> Greedy,
    Lp <=> Lp,
    Combined <=> Combined,
});

/// The mechanism a job's [`api::Selector`] names (`dpincon-mechanisms`
/// declares its own, whose `select` runs it).
pub fn selector(s: api::Selector) -> Selector {
    match s {
        api::Selector::Exponential => Selector::Exponential,
        api::Selector::PermuteAndFlip => Selector::PermuteAndFlip,
    }
}

impl From<ProjectedMeasure> for api::Measure {
    fn from(m: ProjectedMeasure) -> Self {
        match m {
            ProjectedMeasure::Mi => api::Measure::Mi,
            ProjectedMeasure::P => api::Measure::P,
        }
    }
}

impl ProjectedMeasure {
    /// The measure as graph projection releases it (`None` for I_R).
    pub fn of(m: api::Measure) -> Option<Self> {
        match m {
            api::Measure::Mi => Some(ProjectedMeasure::Mi),
            api::Measure::P => Some(ProjectedMeasure::P),
            api::Measure::R => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_declarations_name_every_value_alike() {
        assert_eq!(Strategy::ALL.len(), api::Strategy::ALL.len());
        for s in api::Strategy::ALL {
            assert_eq!(Strategy::from(s).name(), s.name());
            assert_eq!(api::Strategy::from(Strategy::from(s)), s);
            assert_eq!(Strategy::from(s).is_private(), s.is_private());
        }
        assert_eq!(Strategy::from(api::Strategy::default()), Strategy::default());
        assert_eq!(RepairMethod::ALL.len(), api::RepairMethod::ALL.len());
        for m in api::RepairMethod::ALL {
            assert_eq!(RepairMethod::from(m).name(), m.name());
            assert_eq!(RepairMethod::from(m).needs_lp(), m.needs_lp());
        }
        assert_eq!(RepairMethod::from(api::RepairMethod::default()), RepairMethod::default());
        assert_eq!(Selector::ALL.len(), api::Selector::ALL.len());
        for s in api::Selector::ALL {
            assert_eq!(selector(s).name(), s.name());
        }
        assert_eq!(selector(api::Selector::default()), Selector::default());
        for m in api::Measure::ALL {
            assert_eq!(ProjectedMeasure::of(m).map(api::Measure::from).unwrap_or(m), m);
            assert_eq!(ProjectedMeasure::of(m).map_or("r", |p| p.name()), m.name());
        }
    }
}
