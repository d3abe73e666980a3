//! Differential-privacy primitives for dpincon, and nothing else.
//!
//! This crate's one job is to turn public parameters (ε, sensitivities,
//! the public parts of scores) and secret integers into differentially
//! private outputs. It knows nothing of conflict graphs, files or the CLI:
//! callers compute a statistic and its sensitivity, and this crate adds
//! the noise or makes the private choice (SPEC §4, §7, §8).
//!
//! * [`NoiseRng`]: the only source of randomness for noise — ChaCha20
//!   seeded by the OS, or seeded explicitly in test mode (SPEC §7).
//! * [`Rational`]: exact rationals; public `f64` parameters become
//!   rationals rounded in the privacy-safe direction.
//! * [`bernoulli()`], [`bernoulli_exp_neg`]: exact Bernoulli samplers
//!   (Canonne, Kamath, Steinke 2020).
//! * [`DiscreteLaplace`]: the exact discrete Laplace mechanism (SPEC §6.5,
//!   §7).
//! * [`ExponentialMechanism`], [`PermuteAndFlip`], [`Selector`] (named in
//!   `dpincon-api`, run by [`SelectorExt`]): exact private selection for
//!   θ* (SPEC §4).
//! * [`Budget`], [`total`]: validated ε, splits that never create budget,
//!   and sequential composition (SPEC §8).
//!
//! No floating-point arithmetic ever touches a secret value: `f64` is used
//! on public parameters and for reporting (probabilities, pmf, interval
//! widths) only.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod bernoulli;
pub mod budget;
mod error;
pub mod laplace;
pub mod rational;
pub mod rng;
pub mod selection;
mod wide;

pub use bernoulli::{bernoulli, bernoulli_exp_neg};
pub use budget::{Budget, total};
pub use error::{MechanismError, short};
pub use laplace::DiscreteLaplace;
pub use rational::Rational;
pub use rng::NoiseRng;
pub use selection::{ExponentialMechanism, PermuteAndFlip, Score, Selector, SelectorExt};
