//! The crate's single error type.
//!
//! Every message names the offending value so that a CLI user can fix the
//! call without reading the source. None of these errors is ever raised
//! because of a *secret* value: every check runs on public parameters only
//! (ε, sensitivities, the public part of a score, fractions), so an error
//! cannot become a side channel on the data (SPEC §7).

use thiserror::Error;

/// A number for a message: as Rust prints it when that is short
/// (`0.5`, `NaN`, `1e-7`), else in scientific notation with four
/// significant digits, never a 300-digit decimal (`1e-300` printed with
/// `{}` is one).
pub fn short(x: f64) -> String {
    let plain = x.to_string();
    if plain.len() <= 12 {
        return plain;
    }
    let sci = format!("{x:.3e}");
    // Drop trailing zeros of the mantissa: 1.000e-300 → 1e-300.
    match sci.split_once('e') {
        Some((mantissa, exponent)) if mantissa.contains('.') => {
            let m = mantissa.trim_end_matches('0').trim_end_matches('.');
            format!("{m}e{exponent}")
        }
        _ => sci,
    }
}

/// Everything that can go wrong when building or running a mechanism.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum MechanismError {
    /// ε was NaN, infinite, zero or negative.
    #[error("epsilon must be a finite number > 0, got {}", short(*.0))]
    InvalidEpsilon(f64),

    /// ε is positive but below what the exact samplers can represent after
    /// rounding it down to a rational with a fixed power-of-two denominator.
    #[error("epsilon {} is too small: the smallest supported value is {}", short(*.epsilon), short(*.min))]
    EpsilonTooSmall {
        /// The ε that was asked for.
        epsilon: f64,
        /// The smallest ε the mechanism accepts.
        min: f64,
    },

    /// A sensitivity of zero (meaningless: it would mean no noise) or one
    /// beyond what exact integer arithmetic supports.
    #[error("sensitivity must be between 1 and {max}, got {got}")]
    InvalidSensitivity {
        /// The sensitivity that was asked for.
        got: u64,
        /// The largest supported sensitivity.
        max: u64,
    },

    /// A noise scale (or other rational parameter) that is not positive.
    #[error("noise scale must be > 0, got {0}")]
    InvalidScale(String),

    /// Budget fractions that are not all positive or do not sum to 1.
    #[error(
        "budget fractions must each be a finite number > 0 and sum to 1 (within 1e-9), got {fractions:?} (sum {sum})"
    )]
    InvalidFractions {
        /// The fractions that were asked for.
        fractions: Vec<f64>,
        /// Their floating-point sum.
        sum: f64,
    },

    /// A budget split produced a part that is zero or not finite (ε too
    /// small to be divided further in floating point).
    #[error(
        "budget {epsilon} cannot be split by {fractions:?}: a part would not be a positive finite number"
    )]
    UnsplittableBudget {
        /// The budget being split.
        epsilon: f64,
        /// The fractions that were asked for.
        fractions: Vec<f64>,
    },

    /// A selection mechanism was given no candidates.
    #[error("cannot select from an empty list of candidates")]
    NoCandidates,

    /// The public part of a score is not a finite number of bounded size.
    #[error(
        "the public part of score {index} must be a finite number with |x| <= 2^62, got {value}"
    )]
    InvalidPublicScore {
        /// Position of the score in the slice.
        index: usize,
        /// The offending public value.
        value: f64,
    },

    /// A public real number that cannot be turned into a rational of the
    /// requested form (NaN, negative, or too large).
    #[error("cannot represent {value} as a non-negative rational with denominator 2^{denom_bits}")]
    NotRepresentable {
        /// The value that was asked for.
        value: f64,
        /// The requested power-of-two denominator.
        denom_bits: u32,
    },

    /// A rational was built with a zero denominator, or a probability
    /// exceeds 1.
    #[error("invalid rational {num}/{den}: {reason}")]
    InvalidRational {
        /// Numerator.
        num: u128,
        /// Denominator.
        den: u128,
        /// What is wrong with it.
        reason: &'static str,
    },

    /// Exact arithmetic would overflow 128 bits (never silently wrapped).
    #[error("exact arithmetic overflow in {0}")]
    Overflow(&'static str),

    /// The operating system could not provide a seed for the noise RNG.
    #[error("could not seed the noise generator from the operating system: {0}")]
    OsRng(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_messages_stay_short() {
        assert_eq!(short(0.5), "0.5");
        assert_eq!(short(f64::NAN), "NaN");
        assert_eq!(short(-1.0), "-1");
        assert_eq!(short(1e-300), "1e-300");
        assert_eq!(short(1e308), "1e308");
        assert_eq!(short(f64::INFINITY), "inf");
        assert_eq!(short(1.0 / 3.0), "3.333e-1");
        assert_eq!(short(2f64.powi(-48)), "3.553e-15");
        for x in [1e-300, -1e308, f64::MIN_POSITIVE, 123_456_789_012.5] {
            assert!(short(x).len() <= 12, "{x}: {}", short(x));
        }
        assert_eq!(
            MechanismError::InvalidEpsilon(-1e308).to_string(),
            "epsilon must be a finite number > 0, got -1e308"
        );
    }
}
