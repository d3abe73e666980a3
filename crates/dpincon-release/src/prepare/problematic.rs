//! `ub-direct`'s I_P under a degree bound whose constraints all have an
//! equality: θ* is d̃ + margin, capped so the noise stays a small share of
//! ñ (the thirteenth round); over keys and FDs the class or leading count
//! is released there (the seventh, fifteenth and sixteenth rounds). No θ*
//! below d̃ + margin from the largest term, as I_MI's: a row that conflicts
//! under every X would lose its leaves (README, "the eighteenth round").

use dpincon_mechanisms::{Budget, NoiseRng};

use super::choice::Choice;
use super::leading::{self, LeadingAt};
use super::problematic_cap;
use crate::ReleaseError;
use crate::classes::{ClassFacts, ExcessBound};
use crate::spec::{BudgetUse, ProjectedSpec};

/// Where the choice starts from: d̃ + margin, ñ (both released) and the
/// table's classes when every constraint is a key or an FD.
pub(super) struct At<'a> {
    pub(super) top: u32,
    pub(super) rows: u64,
    pub(super) classes: Option<&'a ClassFacts>,
}

/// What the look at M drew where it ran: its noisy value (none over keys
/// alone) and the interval's bound on what the leading count misses.
pub(super) type LeadingDraw = (Option<i64>, ExcessBound);

/// I_P's choice, and the look at M's draw.
pub(super) fn choose(
    spec: &ProjectedSpec,
    at: At<'_>,
    release: &mut Budget,
    budget: &mut BudgetUse,
    rng: &mut NoiseRng,
) -> Result<(Choice, Option<LeadingDraw>), ReleaseError> {
    let theta = problematic_cap(spec.measure, at.top, at.rows, *release);
    // Keys and FDs of several X: at θ* the largest class count over them
    // is, like f(G_θ*), a lower bound on I_P with sensitivity θ* + 1, so
    // their maximum is never further from I_P than f(G_θ*) alone, at no
    // cost in ε. The leading count at τ₀ may cost far less noise: a look
    // at what it misses decides (the fifteenth round).
    let Some(classes) = at.classes else {
        return Ok((Choice::Fixed(theta), None));
    };
    let look = match &classes.leading {
        Some(lead) => {
            let at = LeadingAt { tau: classes.excess_from, theta, rows: at.rows };
            leading::look(lead, at, spec.epsilon, release, budget, rng)?
        }
        None => None,
    };
    Ok(match look {
        Some(look) => (Choice::Leading(look.choice), Some((look.miss, look.high))),
        None => (Choice::Classes { tau: theta, theta, test: None }, None),
    })
}
