//! A gated dataset's budget plan: public arithmetic on public settings,
//! checked before any night runs (by the audit at suite load, by the
//! coordinator at start). `refreshes` epochs per measure, each charged
//! (release ε + gate ε), plus every night's fixed charges (a coordinator's
//! `over quota` verdict), must fit the cap; and a check whose gate α at
//! Δ = 1 (the least any gated statistic has) is wider than its threshold
//! could never pass usefully.

use dpincon_release::{alpha_pass, min_epsilon};

use crate::validate::{MAX_EPSILON, MIN_EPSILON};

/// β when the settings do not say: the intervals' own miss.
pub const DEFAULT_BETA: f64 = 0.05;

/// The public figures of a gated dataset's plan.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GatePlan {
    /// ε of each fresh release, per measure.
    pub release_epsilon: f64,
    /// The gated measures.
    pub measures: usize,
    /// ε of each epoch's gate, per measure.
    pub gate_epsilon: f64,
    /// Fresh releases planned per measure over the horizon (the first included).
    pub refreshes: u32,
    /// β of every epoch.
    pub beta: f64,
    /// Nights over the horizon.
    pub nights: u32,
    /// ε every night is charged whatever its gates answer (0 locally; a
    /// coordinator's `over quota` verdict).
    pub nightly: f64,
}

impl GatePlan {
    /// ε one epoch of every measure costs: (release + gate) × measures.
    pub fn per_epoch(&self) -> f64 {
        (self.release_epsilon + self.gate_epsilon) * self.measures as f64
    }

    /// ε the whole horizon is planned to cost.
    pub fn planned(&self) -> f64 {
        self.per_epoch() * f64::from(self.refreshes) + self.nightly * f64::from(self.nights)
    }

    /// Checks the settings, that the plan fits `cap`, and that each
    /// check's threshold (`(name, width)`, in the measure's units) is
    /// wider than the gate's least α; the error says what would do.
    pub fn check(&self, cap: f64, thresholds: &[(&str, u64)]) -> Result<(), PlanError> {
        let e = self.gate_epsilon;
        if !(e.is_finite() && (MIN_EPSILON..=MAX_EPSILON).contains(&e)) {
            return Err(PlanError::GateEpsilon(e));
        }
        if self.refreshes == 0 {
            return Err(PlanError::NoRefreshes);
        }
        if !(self.beta > 0.0 && self.beta <= 0.5) {
            return Err(PlanError::Beta(self.beta));
        }
        if self.planned() > cap * (1.0 + 1e-9) {
            return Err(PlanError::OverCap { plan: *self, cap });
        }
        let alpha = alpha_pass(e, 1, self.beta)?;
        for &(name, width) in thresholds {
            if alpha > width {
                let least = min_epsilon(1, self.beta, width)?;
                return Err(PlanError::TooNarrow {
                    check: name.to_string(),
                    alpha,
                    epsilon: e,
                    beta: self.beta,
                    width,
                    least: (least * 1000.0).ceil() / 1000.0,
                });
            }
        }
        Ok(())
    }

    /// The nightly charges' part of the over-cap message.
    fn nightly_text(&self) -> String {
        match self.nightly > 0.0 {
            true => format!(" + {} nights × ε {} a night", self.nights, self.nightly),
            false => String::new(),
        }
    }
}

/// Why a gated dataset's plan is refused; the message says what would do.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The gate's ε is outside the engine's public limits.
    #[error("gate epsilon = {0} must be finite, between {MIN_EPSILON} and {MAX_EPSILON}")]
    GateEpsilon(f64),
    /// No epoch planned.
    #[error("gate refreshes must be at least 1 (the first release opens the first epoch)")]
    NoRefreshes,
    /// β outside (0, 0.5].
    #[error("gate beta = {0} must lie in (0, 0.5]")]
    Beta(f64),
    /// The planned ε is above the cap.
    #[error(
        "the budget plan cannot last the horizon: {} refreshes × ε {} an epoch \
         (({} + {}) × {} measures){} = {} > budget-cap {cap}; plan fewer \
         refreshes, less ε, or a larger cap",
        plan.refreshes, plan.per_epoch(), plan.release_epsilon, plan.gate_epsilon,
        plan.measures, plan.nightly_text(), plan.planned()
    )]
    OverCap {
        /// The plan.
        plan: GatePlan,
        /// `budget-cap`.
        cap: f64,
    },
    /// The gate's α cannot be computed at these settings.
    #[error(transparent)]
    Alpha(#[from] dpincon_release::ReleaseError),
    /// A check's threshold is narrower than the gate's α.
    #[error(
        "check '{check}': the gate's α = {alpha} (at ε {epsilon} and β {beta}, for a statistic \
         of sensitivity 1) is wider than its threshold {width}, so a pass would say \
         nothing; a gate epsilon of at least {least:.3} would do"
    )]
    TooNarrow {
        /// The check's name.
        check: String,
        /// The gate's α at Δ = 1.
        alpha: u64,
        /// The gate's ε.
        epsilon: f64,
        /// β.
        beta: f64,
        /// The threshold, in the measure's units.
        width: u64,
        /// The least gate ε that would do, rounded up to 0.001.
        least: f64,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> GatePlan {
        GatePlan {
            release_epsilon: 1.0,
            measures: 1,
            gate_epsilon: 2.0,
            refreshes: 10,
            beta: 0.05,
            nights: 365,
            nightly: 0.0,
        }
    }

    #[test]
    fn the_plan_must_fit_the_cap_and_every_threshold_the_gate() {
        assert_eq!(plan().planned(), 30.0);
        assert!(plan().check(30.0, &[("r", 175)]).is_ok());
        let err = plan().check(29.0, &[]).unwrap_err().to_string();
        assert!(err.contains("cannot last the horizon") && err.contains("= 30 >"), "{err}");
        // The nightly charges count too.
        let quota = GatePlan { nightly: 0.01, ..plan() };
        let err = quota.check(30.0, &[]).unwrap_err().to_string();
        assert!(err.contains("365 nights × ε 0.01 a night"), "{err}");
        assert!(quota.check(33.7, &[]).is_ok());
        // A threshold narrower than α names the gate ε that would do.
        let err = plan().check(30.0, &[("tight", 1)]).unwrap_err().to_string();
        assert!(err.contains("check 'tight'") && err.contains("would do"), "{err}");
        for bad in [
            GatePlan { refreshes: 0, ..plan() },
            GatePlan { beta: 0.6, ..plan() },
            GatePlan { gate_epsilon: f64::INFINITY, ..plan() },
        ] {
            assert!(bad.check(1e9, &[]).is_err(), "{bad:?}");
        }
    }
}
