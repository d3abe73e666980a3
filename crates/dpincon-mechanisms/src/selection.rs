//! Private selection of a candidate index: the exponential mechanism and
//! permute-and-flip, both sampled exactly (SPEC §4 "Choosing θ*", §7).
//!
//! # Scores
//!
//! A candidate's quality is given exactly as [`Score`] `{ data, public }`
//! meaning `q = data − public`: `data` is the data-dependent integer part
//! (for θ selection, `−(f(G_θmax) − f(G_θ))`) and `public` a real that
//! depends only on public inputs (`√2·Δ(θ)/ε2`). The public part is
//! rounded up to a multiple of 2^-32 before use. That is privacy-neutral:
//! the rounded value is still a function of the candidate alone, so
//! `q'(θ, D) = data(θ, D) − round(public(θ))` is a quality function with
//! the same sensitivity Δ as the data part, and the mechanisms below are
//! *exactly* EM / permute-and-flip for `q'`.
//!
//! # Exact sampling
//!
//! ε is rounded down to ε' (a multiple of 2^-32; a smaller ε is a stronger
//! guarantee). With q* the largest quality and
//! `γ_i = ε'·(q* − q_i)/(2Δ) ≥ 0` (an exact rational, computed in 256
//! bits so no quality can overflow):
//!
//! * **EM** by rejection: propose i uniformly, accept with
//!   Bernoulli(exp(−γ_i)). Then P(i) ∝ exp(−γ_i) ∝ exp(ε'·q_i/(2Δ)),
//!   exactly the exponential mechanism; q* depends on the data but cancels
//!   in the normalisation. The best candidate is accepted with
//!   probability 1, so at most n proposals are needed on average.
//! * **Permute-and-flip** (McKenna & Sheldon 2020): walk a uniformly random
//!   permutation and stop at the first i accepted by
//!   Bernoulli(exp(−γ_i)). It is ε'-DP with the same 2Δ, and never worse
//!   than EM in expected quality.
//!
//! The number of draws (hence the running time) depends on the scores;
//! like the samplers of Canonne, Kamath and Steinke, this crate does not
//! hide timing.
//!
//! All checks (ε, Δ, the public parts) look at public values only, so an
//! error never depends on the data.

use crate::MechanismError;
use crate::bernoulli::bernoulli_exp_neg_parts;
use crate::laplace::epsilon_at_most;
use crate::rng::NoiseRng;
use crate::wide::U256;

/// Public parts and ε' are multiples of 2^-32.
const DENOM_BITS: u32 = 32;
/// The smallest ε a selection step accepts: 2^-32 (ε is rounded down to a
/// multiple of it, and must not round to zero).
pub const MIN_EPSILON: f64 = 1.0 / (1u64 << DENOM_BITS) as f64;
/// The largest |public part| of a score: 2^62 (see [`Score`]).
pub const MAX_PUBLIC_SCORE: f64 = MAX_PUBLIC;
/// Largest supported sensitivity: keeps `2Δ · 2^64` below 2^128.
const MAX_SENSITIVITY: u64 = 1 << 62;
/// Largest supported |public part|: keeps every quality below 2^96 / 2^32.
const MAX_PUBLIC: f64 = 4_611_686_018_427_387_904.0; // 2^62

/// The quality of one candidate, `data − public` (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Score {
    /// Data-dependent integer part of the quality.
    pub data: i64,
    /// Data-independent part, subtracted from `data`; must be finite with
    /// `|public| ≤ 2^62`.
    pub public: f64,
}

impl Score {
    /// `Score { data, public }`.
    pub fn new(data: i64, public: f64) -> Self {
        Score { data, public }
    }

    /// `data − public` in floating point, for reporting.
    pub fn quality(&self) -> f64 {
        self.data as f64 - self.public
    }
}

/// Validated (ε, Δ) with ε' = ε rounded down, as a numerator over 2^32.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Params {
    epsilon: f64,
    sensitivity: u64,
    /// ε' · 2^32.
    eps_num: u128,
}

/// γ_i = whole + num/den, the exponent of candidate i's acceptance
/// probability exp(−γ_i).
#[derive(Debug, Clone, Copy)]
struct Exponent {
    whole: U256,
    num: u128,
    den: u128,
}

impl Exponent {
    fn accept(&self, rng: &mut NoiseRng) -> bool {
        bernoulli_exp_neg_parts(rng, self.whole, self.num, self.den)
    }

    /// γ_i as an `f64`, for reporting.
    fn to_f64(self) -> f64 {
        let whole = self.whole.hi as f64 * 2f64.powi(128) + self.whole.lo as f64;
        whole + self.num as f64 / self.den as f64
    }
}

impl Params {
    fn new(epsilon: f64, sensitivity: u64) -> Result<Self, MechanismError> {
        let eps = epsilon_at_most(epsilon, DENOM_BITS)?;
        if sensitivity == 0 || sensitivity > MAX_SENSITIVITY {
            return Err(MechanismError::InvalidSensitivity {
                got: sensitivity,
                max: MAX_SENSITIVITY,
            });
        }
        // Back to the common denominator 2^32 (the reduced denominator
        // divides it, and the product is at most the unreduced numerator).
        let eps_num = eps.numer() * ((1u128 << DENOM_BITS) / eps.denom());
        Ok(Params { epsilon, sensitivity, eps_num })
    }

    /// The exponents γ_i for every candidate.
    fn exponents(&self, scores: &[Score]) -> Result<Vec<Exponent>, MechanismError> {
        if scores.is_empty() {
            return Err(MechanismError::NoCandidates);
        }
        // Qualities as integers over 2^32: Q_i = data·2^32 − ceil(public·2^32).
        // |data·2^32| ≤ 2^95 and |ceil(public·2^32)| ≤ 2^94, so |Q_i| < 2^96.
        let pow = (1u64 << DENOM_BITS) as f64;
        let mut q = Vec::with_capacity(scores.len());
        for (index, s) in scores.iter().enumerate() {
            if !s.public.is_finite() || s.public.abs() > MAX_PUBLIC {
                return Err(MechanismError::InvalidPublicScore { index, value: s.public });
            }
            // Exact: scaling by a power of two, then ceil, then an
            // integer-valued f64 below 2^95 cast to i128.
            let public = (s.public * pow).ceil() as i128;
            q.push((i128::from(s.data) << DENOM_BITS) - public);
        }
        let q_star = q.iter().copied().max().unwrap_or(0);
        // γ_i = (ε'_num/2^32)·((q* − Q_i)/2^32)/(2Δ) = ε'_num·(q* − Q_i)/(Δ·2^65);
        // Δ ≤ 2^62 keeps the denominator below 2^127.
        let den = u128::from(self.sensitivity) << 65;
        Ok(q.into_iter()
            .map(|qi| {
                let gap = (q_star - qi) as u128; // 0 ≤ gap < 2^97
                let (whole, num) = U256::mul(self.eps_num, gap).div_rem(den);
                Exponent { whole, num, den }
            })
            .collect())
    }
}

/// The exponential mechanism: P(i) ∝ exp(ε·q_i/(2Δ)), sampled exactly.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExponentialMechanism {
    params: Params,
}

impl ExponentialMechanism {
    /// EM with budget ε for a quality function of sensitivity Δ.
    ///
    /// # Errors
    /// [`MechanismError::InvalidEpsilon`] unless ε is finite and > 0,
    /// [`MechanismError::EpsilonTooSmall`] if ε < 2^-32,
    /// [`MechanismError::InvalidSensitivity`] unless 1 ≤ Δ ≤ 2^62.
    pub fn new(epsilon: f64, sensitivity: u64) -> Result<Self, MechanismError> {
        Ok(ExponentialMechanism { params: Params::new(epsilon, sensitivity)? })
    }

    /// The ε it was built with.
    pub fn epsilon(&self) -> f64 {
        self.params.epsilon
    }

    /// The sensitivity Δ of the quality function.
    pub fn sensitivity(&self) -> u64 {
        self.params.sensitivity
    }

    /// The selection probabilities, in floating point, for reporting and
    /// tests only. They use the same rounded ε' and public parts as
    /// [`ExponentialMechanism::select`], so they are its exact law up to
    /// floating-point error.
    ///
    /// # Errors
    /// As [`ExponentialMechanism::select`].
    pub fn probabilities(&self, scores: &[Score]) -> Result<Vec<f64>, MechanismError> {
        let weights: Vec<f64> =
            self.params.exponents(scores)?.into_iter().map(|g| (-g.to_f64()).exp()).collect();
        // The best candidate has weight exactly 1, so the total is ≥ 1.
        let total: f64 = weights.iter().sum();
        Ok(weights.into_iter().map(|w| w / total).collect())
    }

    /// Draw a candidate index with probability ∝ exp(ε'·q_i/(2Δ)), exactly
    /// (rejection sampling, see the module docs).
    ///
    /// # Errors
    /// [`MechanismError::NoCandidates`] if `scores` is empty,
    /// [`MechanismError::InvalidPublicScore`] if a public part is not
    /// finite or exceeds 2^62 in magnitude.
    pub fn select(&self, scores: &[Score], rng: &mut NoiseRng) -> Result<usize, MechanismError> {
        let exponents = self.params.exponents(scores)?;
        let n = exponents.len() as u128;
        loop {
            // n ≤ usize::MAX, so the draw fits back in a usize.
            let i = rng.uniform_below(n) as usize;
            if exponents[i].accept(rng) {
                return Ok(i);
            }
        }
    }
}

/// Permute-and-flip (McKenna & Sheldon 2020), sampled exactly.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PermuteAndFlip {
    params: Params,
}

impl PermuteAndFlip {
    /// Permute-and-flip with budget ε for a quality function of
    /// sensitivity Δ.
    ///
    /// # Errors
    /// As [`ExponentialMechanism::new`].
    pub fn new(epsilon: f64, sensitivity: u64) -> Result<Self, MechanismError> {
        Ok(PermuteAndFlip { params: Params::new(epsilon, sensitivity)? })
    }

    /// The ε it was built with.
    pub fn epsilon(&self) -> f64 {
        self.params.epsilon
    }

    /// The sensitivity Δ of the quality function.
    pub fn sensitivity(&self) -> u64 {
        self.params.sensitivity
    }

    /// Walk a uniformly random permutation of the candidates and return
    /// the first one accepted with probability exp(−ε'·(q* − q_i)/(2Δ)).
    ///
    /// # Errors
    /// As [`ExponentialMechanism::select`].
    pub fn select(&self, scores: &[Score], rng: &mut NoiseRng) -> Result<usize, MechanismError> {
        let exponents = self.params.exponents(scores)?;
        let n = exponents.len();
        let mut order: Vec<usize> = (0..n).collect();
        for j in 0..n {
            // Lazy Fisher–Yates: position j gets a uniform remaining index.
            let k = j + rng.uniform_below((n - j) as u128) as usize;
            order.swap(j, k);
            let i = order[j];
            if exponents[i].accept(rng) {
                return Ok(i);
            }
        }
        // The best candidate has γ = 0, and Bernoulli(exp(0)) always
        // accepts; it is in every permutation.
        unreachable!("permute-and-flip: the best candidate is accepted with probability 1")
    }
}

/// The selection mechanisms, selectable by name (`em`,
/// `permute-and-flip`): declared in [`dpincon_api`] with the job's other
/// options, run here by [`SelectorExt::select`].
pub use dpincon_api::Selector;

/// What a [`Selector`] does: the mechanism it names, built and run.
pub trait SelectorExt {
    /// Build the mechanism with (ε, Δ) and select from `scores`.
    ///
    /// # Errors
    /// As [`ExponentialMechanism::new`] and
    /// [`ExponentialMechanism::select`].
    fn select(
        self,
        epsilon: f64,
        sensitivity: u64,
        scores: &[Score],
        rng: &mut NoiseRng,
    ) -> Result<usize, MechanismError>;
}

impl SelectorExt for Selector {
    fn select(
        self,
        epsilon: f64,
        sensitivity: u64,
        scores: &[Score],
        rng: &mut NoiseRng,
    ) -> Result<usize, MechanismError> {
        match self {
            Selector::Exponential => {
                ExponentialMechanism::new(epsilon, sensitivity)?.select(scores, rng)
            }
            Selector::PermuteAndFlip => {
                PermuteAndFlip::new(epsilon, sensitivity)?.select(scores, rng)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for sel in Selector::ALL {
            assert_eq!(sel.to_string().parse::<Selector>().unwrap(), sel);
        }
        assert_eq!("em".parse::<Selector>().unwrap(), Selector::Exponential);
        assert_eq!("permute-and-flip".parse::<Selector>().unwrap(), Selector::PermuteAndFlip);
        assert_eq!(
            "gumbel".parse::<Selector>().unwrap_err().to_string(),
            "unknown selection mechanism 'gumbel': expected 'em' or 'permute-and-flip'"
        );
    }

    #[test]
    fn invalid_inputs_are_refused() {
        let mut rng = NoiseRng::seeded(0);
        for sel in Selector::ALL {
            assert_eq!(sel.select(1.0, 1, &[], &mut rng), Err(MechanismError::NoCandidates));
            assert!(matches!(
                sel.select(f64::NAN, 1, &[Score::new(0, 0.0)], &mut rng),
                Err(MechanismError::InvalidEpsilon(e)) if e.is_nan()
            ));
            assert!(matches!(
                sel.select(1.0, 0, &[Score::new(0, 0.0)], &mut rng),
                Err(MechanismError::InvalidSensitivity { got: 0, .. })
            ));
            assert!(matches!(
                sel.select(1.0, (1 << 62) + 1, &[Score::new(0, 0.0)], &mut rng),
                Err(MechanismError::InvalidSensitivity { .. })
            ));
            assert!(matches!(
                sel.select(1e-11, 1, &[Score::new(0, 0.0)], &mut rng),
                Err(MechanismError::EpsilonTooSmall { .. })
            ));
            for bad in [f64::NAN, f64::INFINITY, 1e19] {
                assert!(matches!(
                    sel.select(1.0, 1, &[Score::new(0, 0.0), Score::new(0, bad)], &mut rng),
                    Err(MechanismError::InvalidPublicScore { index: 1, .. })
                ));
            }
        }
    }

    #[test]
    fn a_single_candidate_is_always_chosen() {
        let mut rng = NoiseRng::seeded(1);
        for sel in Selector::ALL {
            for _ in 0..100 {
                assert_eq!(sel.select(0.1, 5, &[Score::new(-7, 3.5)], &mut rng), Ok(0));
            }
        }
    }

    #[test]
    fn extreme_qualities_do_not_overflow() {
        // The largest gaps the types allow: the 256-bit exponent keeps the
        // computation exact instead of failing on (secret) data values.
        let mut rng = NoiseRng::seeded(2);
        let scores = [Score::new(i64::MIN, MAX_PUBLIC), Score::new(i64::MAX, -MAX_PUBLIC)];
        for sel in Selector::ALL {
            for eps in [1e-9, 1.0, 1e30] {
                for delta in [1, MAX_SENSITIVITY] {
                    let pick = sel.select(eps, delta, &scores, &mut rng).unwrap();
                    assert!(pick < 2);
                }
            }
        }
        let em = ExponentialMechanism::new(1.0, 1).unwrap();
        let p = em.probabilities(&scores).unwrap();
        assert_eq!(p, vec![0.0, 1.0]);
    }
}
