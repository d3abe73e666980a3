//! The one validation step on a job's public privacy numbers, run before
//! any table is read or any ledger touched (SPEC §8). `run`, the
//! experiments, the CLI's sweep and the coordinator all call it, so a bad
//! ε is refused in one place, with one message.
//!
//! Limits (public, documented in the CLI help):
//! - ε per measure in [[`MIN_EPSILON`], [`MAX_EPSILON`]]. The floor is what
//!   the exact samplers can still represent after the job divides ε among
//!   its steps: the selection sampler rounds its ε down to a multiple of
//!   [`dpincon_mechanisms::selection::MIN_EPSILON`] (2^-32), and the
//!   smallest step of any strategy gets about 10^-4 of ε (selection share
//!   ≥ [`MIN_SHARE`], then ñ's 5 % and hem's halves); the test
//!   `the_limits_leave_every_sampler_room` runs every strategy at the floor.
//!   The ceiling keeps every sum (the job's total, the ledger's) a finite
//!   number; past it e^ε promises nothing anyway.
//! - each share of `--epsilon-split` at least [`MIN_SHARE`].

use dpincon_mechanisms::Budget;
pub use dpincon_mechanisms::short;

use crate::EngineError;

/// The smallest ε per measure a job may spend.
pub const MIN_EPSILON: f64 = 1e-5;
/// The largest ε per measure a job may spend.
pub const MAX_EPSILON: f64 = 1e4;
/// The smallest share of ε either side of `--epsilon-split` may get.
pub const MIN_SHARE: f64 = 0.01;

/// `--epsilon` (or an experiment's ε): a finite number within the limits.
///
/// # Errors
/// [`EngineError::Config`] naming `what`, the value (short) and the limits.
pub fn check_epsilon(what: &str, epsilon: f64) -> Result<Budget, EngineError> {
    let within = epsilon.is_finite() && (MIN_EPSILON..=MAX_EPSILON).contains(&epsilon);
    if !within {
        return Err(EngineError::Config(format!(
            "{what} must be a number from {} to {} (ε per measure), got {}",
            short(MIN_EPSILON),
            short(MAX_EPSILON),
            short(epsilon)
        )));
    }
    Budget::new(epsilon).map_err(|e| EngineError::Config(format!("{what}: {e}")))
}

/// `--epsilon-split`: two shares ≥ [`MIN_SHARE`] summing to 1; the first.
///
/// # Errors
/// [`EngineError::Config`] with the shares as given (short).
pub fn check_split([e1, e2]: [f64; 2]) -> Result<f64, EngineError> {
    let valid = e1.is_finite() && e2.is_finite() && e1 >= MIN_SHARE && e2 >= MIN_SHARE;
    if !valid || (e1 + e2 - 1.0).abs() > 1e-9 {
        return Err(EngineError::Config(format!(
            "--epsilon-split gives the shares of ε for choosing θ and for the release: \
             two numbers ≥ {} with ε1 + ε2 = 1, got {} + {}",
            short(MIN_SHARE),
            short(e1),
            short(e2)
        )));
    }
    Ok(e1)
}

/// `--budget-cap`: a finite number > 0.
///
/// # Errors
/// [`EngineError::Config`] with the value (short).
pub fn check_cap(cap: f64) -> Result<(), EngineError> {
    if cap.is_finite() && cap > 0.0 {
        Ok(())
    } else {
        Err(EngineError::Config(format!(
            "--budget-cap must be a finite number > 0, got {}",
            short(cap)
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epsilon_outside_the_limits_is_refused_with_short_numbers() {
        for (bad, shown) in [
            (1e-300, "got 1e-300"),
            (1e308, "got 1e308"),
            (f64::NAN, "got NaN"),
            (f64::INFINITY, "got inf"),
            (0.0, "got 0"),
            (-1.0, "got -1"),
            (9.9e-6, "got 0.0000099"),
            (1.5e4, "got 15000"),
        ] {
            let err = check_epsilon("--epsilon", bad).unwrap_err().to_string();
            assert!(err.contains("from 0.00001 to 10000") && err.contains(shown), "{bad}: {err}");
            assert!(err.len() < 120, "{err}");
        }
        for good in [MIN_EPSILON, 0.1, 1.0, MAX_EPSILON] {
            assert_eq!(check_epsilon("--epsilon", good).unwrap().value(), good);
        }
    }

    #[test]
    fn the_floor_sits_above_the_samplers_limits() {
        // The end-to-end check is tests/limits.rs; this one ties the
        // numbers: the smallest selection share at the floor still has
        // room for ñ's 5 % and hem's halves above the samplers' grids.
        let smallest_step = MIN_EPSILON * MIN_SHARE * 0.05 * 0.25 * 0.5;
        assert!(smallest_step > dpincon_mechanisms::selection::MIN_EPSILON);
        assert!(smallest_step > dpincon_mechanisms::laplace::MIN_EPSILON);
    }

    #[test]
    fn split_shares_have_a_floor() {
        assert_eq!(check_split([0.4, 0.6]).unwrap(), 0.4);
        assert_eq!(check_split([MIN_SHARE, 1.0 - MIN_SHARE]).unwrap(), MIN_SHARE);
        for bad in [[1e-12, 1.0 - 1e-12], [0.5, 0.6], [f64::NAN, 1.0], [1.0, 0.0]] {
            assert!(check_split(bad).is_err(), "{bad:?}");
        }
        assert!(check_cap(f64::INFINITY).is_err() && check_cap(0.0).is_err());
        assert!(check_cap(3.0).is_ok());
    }
}
