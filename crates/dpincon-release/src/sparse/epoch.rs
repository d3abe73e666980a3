//! One epoch of AboveThreshold (Dwork–Roth Algorithm 1) over integer
//! statistics with discrete Laplace noise (README, "Gated verdicts").
//!
//! At the start: ρ ~ DLap(2Δ/ε), drawn once and kept secret. Each night:
//! q = the statistics' largest distance outside their bands (public bands,
//! so q moves by at most Δ between neighbouring histories), ν ~ DLap(4Δ/ε)
//! fresh; `pass` iff q + ν ≤ ρ, else `above`, and the epoch ends: asking
//! again after the first `above` would be a second AboveThreshold on the
//! same ρ, which the proof does not cover. The ledger charges ε before
//! [`Epoch::start`] draws ρ; nothing after it is charged until the
//! epoch's `above` calls for a fresh release.

use std::fmt;

use dpincon_mechanisms::{DiscreteLaplace, NoiseRng};
use serde::{Deserialize, Serialize};

use super::Band;
use super::accuracy::{Accuracy, accuracy, epoch_noises, min_epsilon, round_up_3};
use crate::ReleaseError;

/// An epoch's public parameters: everything but ρ may be reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpochParams {
    epsilon: f64,
    sensitivity: u64,
    bands: Vec<Band>,
    nights: u32,
    beta: f64,
}

impl EpochParams {
    /// An epoch charged `epsilon`, over statistics each of sensitivity at
    /// most `sensitivity` (on neighbouring histories, at the epoch's fixed
    /// θ), one [`Band`] per statistic the night reads, asked on at most
    /// `nights` nights, its accuracy stated at `beta`.
    ///
    /// # Errors
    /// [`ReleaseError::Invalid`] for no band, a band without an end, no
    /// nights, β outside (0, 1) or Δ = 0; the mechanism's error for ε.
    pub fn new(
        epsilon: f64,
        sensitivity: u64,
        bands: Vec<Band>,
        nights: u32,
        beta: f64,
    ) -> Result<Self, ReleaseError> {
        let params = EpochParams { epsilon, sensitivity, bands, nights, beta };
        params.validate()?;
        Ok(params)
    }

    /// The checks of [`EpochParams::new`], again for parameters that came
    /// back through serde.
    fn validate(&self) -> Result<(), ReleaseError> {
        if self.bands.is_empty() || !self.bands.iter().all(Band::is_bounded) {
            return Err(ReleaseError::Invalid(
                "a gate needs at least one band, each with an end".into(),
            ));
        }
        if self.sensitivity == 0 {
            return Err(ReleaseError::Invalid("a gate's sensitivity must be at least 1".into()));
        }
        if self.nights == 0 {
            return Err(ReleaseError::Invalid("a gate must plan at least one night".into()));
        }
        if !(self.beta.is_finite() && self.beta > 0.0 && self.beta < 1.0) {
            return Err(ReleaseError::Invalid(format!(
                "a gate's β must lie in (0, 1), got {}",
                self.beta
            )));
        }
        epoch_noises(self.epsilon, self.sensitivity).map(|_| ()) // ε, and Δ's range
    }

    /// ε, charged once for the whole epoch.
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }

    /// Δ.
    pub fn sensitivity(&self) -> u64 {
        self.sensitivity
    }

    /// The bands, one per statistic.
    pub fn bands(&self) -> &[Band] {
        &self.bands
    }

    /// k, the nights planned.
    pub fn nights(&self) -> u32 {
        self.nights
    }

    /// β.
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// α and α₂ (module `accuracy`).
    ///
    /// # Errors
    /// As [`EpochParams::new`].
    pub fn accuracy(&self) -> Result<Accuracy, ReleaseError> {
        accuracy(self.epsilon, self.sensitivity, self.nights, self.beta)
    }

    /// The accuracy, unless the pass α exceeds `width` (what the suite
    /// finds useful for this check, in the statistic's units).
    ///
    /// # Errors
    /// [`ReleaseError::GateTooWide`] naming the smallest ε that would do.
    pub fn refuse_if_wider(&self, width: u64) -> Result<Accuracy, ReleaseError> {
        let accuracy = self.accuracy()?;
        if accuracy.pass <= width {
            return Ok(accuracy);
        }
        let least = min_epsilon(self.sensitivity, self.beta, width)?;
        Err(ReleaseError::GateTooWide {
            alpha: accuracy.pass,
            width,
            epsilon: self.epsilon,
            min_epsilon: round_up_3(least),
        })
    }
}

/// An epoch's answer for one night.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GateVerdict {
    /// ⊥: still inside the band (within α). Costs nothing.
    Pass,
    /// ⊤: the epoch's one `above`. The epoch is over; the night gets a
    /// fresh, charged release, and the next night a new epoch.
    Above,
}

impl GateVerdict {
    /// Whether the night passed.
    pub fn is_pass(self) -> bool {
        self == GateVerdict::Pass
    }
}

/// **Secret.** The state an epoch needs between nights: its public
/// parameters, the nights asked, whether it ended, and the threshold noise
/// ρ, which must never reach a report, a log or the history (with it, each
/// night's pass would say q ≤ ρ − ν exactly, at no cost). Store it beside
/// the ledger, written before the night's answer is published; if it is
/// lost or refused, start a new epoch and charge it (README).
///
/// Not `Clone` (a copy is a way to reuse a threshold), and its `Debug`
/// redacts ρ.
#[derive(Serialize, Deserialize)]
pub struct EpochSecret {
    params: EpochParams,
    threshold_noise: i64,
    nights_used: u32,
    ended: bool,
}

impl fmt::Debug for EpochSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EpochSecret")
            .field("params", &self.params)
            .field("threshold_noise", &format_args!("<redacted>"))
            .field("nights_used", &self.nights_used)
            .field("ended", &self.ended)
            .finish()
    }
}

impl EpochSecret {
    /// The epoch's public parameters.
    pub fn params(&self) -> &EpochParams {
        &self.params
    }

    /// Nights asked so far (public: each was published).
    pub fn nights_used(&self) -> u32 {
        self.nights_used
    }

    /// Whether the epoch has answered `above` (public too).
    pub fn ended(&self) -> bool {
        self.ended
    }
}

/// A running epoch: its secret and its nightly noise.
pub struct Epoch {
    secret: EpochSecret,
    night_noise: DiscreteLaplace,
}

impl fmt::Debug for Epoch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Epoch").field("secret", &self.secret).finish_non_exhaustive()
    }
}

impl Epoch {
    /// Starts an epoch: draws ρ. Charge `params.epsilon()` first.
    ///
    /// # Errors
    /// As [`EpochParams::new`] (for parameters deserialized unchecked).
    pub fn start(params: EpochParams, rng: &mut NoiseRng) -> Result<Epoch, ReleaseError> {
        params.validate()?;
        let (threshold_noise, night_noise) = epoch_noises(params.epsilon, params.sensitivity)?;
        let rho = threshold_noise.sample(rng);
        Ok(Epoch::from_parts(params, rho, night_noise))
    }

    fn from_parts(params: EpochParams, rho: i64, night_noise: DiscreteLaplace) -> Epoch {
        let secret = EpochSecret { params, threshold_noise: rho, nights_used: 0, ended: false };
        Epoch { secret, night_noise }
    }

    /// Resumes an epoch from its stored secret, for the gate `params`,
    /// after `nights_published` nights of it appeared in the history.
    ///
    /// The secret may be one night ahead of the history or more (a crash
    /// after it was stored and before the night was published): those
    /// answers are part of the same AboveThreshold run, only unseen, and
    /// an ended epoch refuses to answer anyway.
    ///
    /// # Errors
    /// [`ReleaseError::SecretRefused`] when the secret belongs to other
    /// parameters (the suite or ε changed) or is behind the history (a
    /// stale or restored copy, whose ρ may already have answered `above`):
    /// the caller must start a new, charged epoch.
    pub fn resume(
        params: &EpochParams,
        secret: EpochSecret,
        nights_published: u32,
    ) -> Result<Epoch, ReleaseError> {
        if secret.params != *params {
            return Err(ReleaseError::SecretRefused("it was drawn for other parameters".into()));
        }
        if secret.nights_used < nights_published {
            return Err(ReleaseError::SecretRefused(format!(
                "it has answered {} nights where the history shows {nights_published}",
                secret.nights_used
            )));
        }
        let (_, night_noise) = epoch_noises(params.epsilon, params.sensitivity)?;
        Ok(Epoch { secret, night_noise })
    }

    /// The night's answer for one statistic (an epoch with one band).
    ///
    /// # Errors
    /// As [`Epoch::check_all`].
    pub fn check(
        &mut self,
        statistic: i64,
        rng: &mut NoiseRng,
    ) -> Result<GateVerdict, ReleaseError> {
        self.check_all(&[statistic], rng)
    }

    /// The night's answer: `above` iff q + ν > ρ, q = the largest distance
    /// of a statistic outside its band (statistics in the bands' order).
    ///
    /// # Errors
    /// [`ReleaseError::EpochEnded`] after the epoch's `above`,
    /// [`ReleaseError::EpochExhausted`] after its k nights,
    /// [`ReleaseError::Invalid`] for a wrong number of statistics. None of
    /// them draws noise.
    pub fn check_all(
        &mut self,
        statistics: &[i64],
        rng: &mut NoiseRng,
    ) -> Result<GateVerdict, ReleaseError> {
        let secret = &mut self.secret;
        if secret.ended {
            return Err(ReleaseError::EpochEnded);
        }
        if secret.nights_used >= secret.params.nights {
            return Err(ReleaseError::EpochExhausted { nights: secret.params.nights });
        }
        let bands = &secret.params.bands;
        if statistics.len() != bands.len() {
            return Err(ReleaseError::Invalid(format!(
                "the gate reads {} statistics a night, got {}",
                bands.len(),
                statistics.len()
            )));
        }
        let q = bands.iter().zip(statistics).map(|(b, &s)| b.distance(s)).max().unwrap_or(0);
        let noisy = q.saturating_add(i128::from(self.night_noise.sample(rng)));
        secret.nights_used += 1;
        if noisy > i128::from(secret.threshold_noise) {
            secret.ended = true;
            Ok(GateVerdict::Above)
        } else {
            Ok(GateVerdict::Pass)
        }
    }

    /// The secret to store after each night (before publishing it).
    pub fn secret(&self) -> &EpochSecret {
        &self.secret
    }

    /// The secret, to store when the epoch is set aside.
    pub fn into_secret(self) -> EpochSecret {
        self.secret
    }

    /// The public parameters.
    pub fn params(&self) -> &EpochParams {
        &self.secret.params
    }

    /// Nights asked so far.
    pub fn nights_used(&self) -> u32 {
        self.secret.nights_used
    }

    /// Nights the epoch may still be asked (0 once ended).
    pub fn nights_left(&self) -> u32 {
        if self.secret.ended { 0 } else { self.secret.params.nights - self.secret.nights_used }
    }

    /// Whether the epoch answered `above`.
    pub fn is_ended(&self) -> bool {
        self.secret.ended
    }

    /// Test-only: an epoch whose nightly noise is `night_noise` instead of
    /// DLap(4Δ/ε) (the monotone scales' mutant).
    #[cfg(test)]
    pub(crate) fn start_with_night_noise(
        params: EpochParams,
        night_noise: DiscreteLaplace,
        rng: &mut NoiseRng,
    ) -> Result<Epoch, ReleaseError> {
        let (threshold_noise, _) = epoch_noises(params.epsilon, params.sensitivity)?;
        let rho = threshold_noise.sample(rng);
        Ok(Epoch::from_parts(params, rho, night_noise))
    }

    /// Test-only: an epoch with a chosen ρ.
    #[cfg(test)]
    pub(crate) fn with_threshold_noise(params: EpochParams, rho: i64) -> Epoch {
        let (_, night_noise) = epoch_noises(params.epsilon, params.sensitivity).unwrap();
        Epoch::from_parts(params, rho, night_noise)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(nights: u32) -> EpochParams {
        EpochParams::new(1.0, 2, vec![Band::at_most(100)], nights, 0.05).unwrap()
    }

    #[test]
    fn invalid_parameters_are_refused() {
        let band = || vec![Band::at_most(0)];
        assert!(EpochParams::new(0.0, 1, band(), 5, 0.05).is_err());
        assert!(EpochParams::new(f64::NAN, 1, band(), 5, 0.05).is_err());
        assert!(EpochParams::new(1.0, 0, band(), 5, 0.05).is_err());
        assert!(EpochParams::new(1.0, u64::MAX / 3, band(), 5, 0.05).is_err());
        assert!(EpochParams::new(1.0, 1, vec![], 5, 0.05).is_err());
        let open = Band::at_most(0).intersect(Band::at_least(-5)).unwrap();
        assert!(EpochParams::new(1.0, 1, vec![open], 5, 0.05).is_ok());
        assert!(EpochParams::new(1.0, 1, band(), 0, 0.05).is_err());
        for beta in [0.0, 1.0, -0.1, f64::NAN] {
            assert!(EpochParams::new(1.0, 1, band(), 5, beta).is_err(), "{beta}");
        }
        // Parameters that bypassed `new` (serde) are checked again at start.
        let mut rng = NoiseRng::seeded(3);
        for bad in [
            EpochParams { nights: 0, ..params(3) },
            EpochParams { bands: vec![], ..params(3) },
            EpochParams { sensitivity: 0, ..params(3) },
            EpochParams { beta: 2.0, ..params(3) },
            EpochParams { epsilon: -1.0, ..params(3) },
        ] {
            assert!(Epoch::start(bad.clone(), &mut rng).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn an_ended_or_exhausted_epoch_refuses_to_answer() {
        let mut rng = NoiseRng::seeded(1);
        // ρ = 0 and a statistic far above the band: `above` on night 1.
        let mut epoch = Epoch::with_threshold_noise(params(3), 0);
        assert_eq!(epoch.check(1_000_000, &mut rng).unwrap(), GateVerdict::Above);
        assert!(epoch.is_ended() && epoch.nights_left() == 0);
        assert!(matches!(epoch.check(0, &mut rng), Err(ReleaseError::EpochEnded)));
        // Far below: three passes, then the plan is used up.
        let mut epoch = Epoch::with_threshold_noise(params(3), 0);
        for left in [2, 1, 0] {
            assert!(epoch.check(-1_000_000, &mut rng).unwrap().is_pass());
            assert_eq!(epoch.nights_left(), left);
        }
        let err = epoch.check(-1_000_000, &mut rng).unwrap_err();
        assert!(matches!(err, ReleaseError::EpochExhausted { nights: 3 }), "{err}");
        assert!(err.to_string().contains("new (charged) epoch"), "{err}");
        assert!(matches!(
            epoch.check_all(&[1, 2], &mut rng),
            Err(ReleaseError::EpochExhausted { .. })
        ));
        let mut epoch = Epoch::with_threshold_noise(params(3), 0);
        assert!(matches!(epoch.check_all(&[1, 2], &mut rng), Err(ReleaseError::Invalid(_))));
        assert_eq!(epoch.nights_used(), 0);
    }

    #[test]
    fn a_secret_resumes_only_its_own_epoch_at_its_own_night() {
        let mut rng = NoiseRng::seeded(2);
        let mut epoch = Epoch::start(params(10), &mut rng).unwrap();
        epoch.check(-1_000_000, &mut rng).unwrap();
        epoch.check(-1_000_000, &mut rng).unwrap();
        let secret = epoch.into_secret();
        let other = EpochParams::new(1.0, 2, vec![Band::at_most(101)], 10, 0.05).unwrap();
        let err = Epoch::resume(&other, secret, 2).unwrap_err();
        assert!(
            matches!(err, ReleaseError::SecretRefused(_)) && err.to_string().contains("charged")
        );
        let mut epoch = Epoch::start(params(10), &mut rng).unwrap();
        epoch.check(-1_000_000, &mut rng).unwrap();
        // A copy from one night ago (the history shows two nights): refused.
        let stale = epoch.into_secret();
        assert!(matches!(
            Epoch::resume(&params(10), stale, 2),
            Err(ReleaseError::SecretRefused(_))
        ));
        let mut epoch = Epoch::start(params(10), &mut rng).unwrap();
        epoch.check(-1_000_000, &mut rng).unwrap();
        let rho = epoch.secret().threshold_noise;
        let mut resumed = Epoch::resume(&params(10), epoch.into_secret(), 1).unwrap();
        assert_eq!((resumed.secret().threshold_noise, resumed.nights_used()), (rho, 1));
        assert!(resumed.check(-1_000_000, &mut rng).unwrap().is_pass());
    }

    #[test]
    fn debug_never_prints_the_threshold_noise() {
        let epoch = Epoch::with_threshold_noise(params(3), 987_654_321);
        for text in [format!("{epoch:?}"), format!("{:?}", epoch.secret()), format!("{epoch:#?}")] {
            assert!(!text.contains("987654321") && text.contains("<redacted>"), "{text}");
        }
    }

    #[test]
    fn a_check_too_wide_for_its_use_names_the_least_epsilon() {
        let p = EpochParams::new(0.5, 10, vec![Band::at_most(300)], 365, 0.05).unwrap();
        let wide = p.accuracy().unwrap().pass;
        assert_eq!(p.refuse_if_wider(wide).unwrap().pass, wide);
        let err = p.refuse_if_wider(wide / 4).unwrap_err();
        let ReleaseError::GateTooWide { alpha, min_epsilon, .. } = err else { panic!("{err}") };
        assert_eq!(alpha, wide);
        assert!(err.to_string().contains(&format!("{min_epsilon}")), "{err}");
        let enough =
            EpochParams::new(min_epsilon, 10, vec![Band::at_most(300)], 365, 0.05).unwrap();
        assert!(enough.refuse_if_wider(wide / 4).is_ok());
    }
}
