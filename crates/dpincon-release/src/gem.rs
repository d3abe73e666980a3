//! The generalized exponential mechanism's scores (SPEC §4.1; Raskhodnikova
//! and Smith, FOCS 2016), in exact integer arithmetic.
//!
//! For candidates θ_i with sensitivities Δ_i and projected values f_i:
//!
//! ```text
//! d_ij = f_j − f_i + P·(Δ_i − Δ_j)        P = c/ε2 + t (public)
//! s_i  = max_j d_ij / (Δ_i + Δ_j)          (j = i gives 0, so s_i ≥ 0)
//! ```
//!
//! f_j − f_i moves by at most Δ_i + Δ_j between neighbours (SPEC §6), so
//! every ratio, and their maximum s_i, moves by at most 1. Selecting with
//! quality −s_i and sensitivity 1 is ε1-DP. f(G) never appears.
//!
//! Scores are fixed-point numbers with [`SCALE_BITS`] fraction bits, floored:
//! flooring a sensitivity-1 function to a grid of step 2^-b gives sensitivity
//! at most 1 + 2^-b, i.e. [`SENSITIVITY`] in grid units. P is rounded to the
//! grid too; it is public, so any rounding keeps the bound. Scores saturate
//! at `i64` (clamping keeps sensitivity), so no count can make this fail.

use dpincon_mechanisms::Score;

/// Fraction bits of the fixed-point scores.
pub const SCALE_BITS: u32 = 20;

/// The sensitivity of the fixed-point scores: 2^b + 1 grid units (one for
/// the ratio, one for the flooring).
pub const SENSITIVITY: u64 = (1 << SCALE_BITS) + 1;

/// c of SPEC §4.1: the standard deviation of DLap(1) per unit of scale.
pub const NOISE_STD_PER_SCALE: f64 = std::f64::consts::SQRT_2;

/// The normalised scores s_i in units of 2^-[`SCALE_BITS`] (lower is better).
///
/// `values[i]` is f(G_θi), `sensitivities[i]` is Δ_i ≥ 1, and
/// `per_unit_sensitivity` is P = c/ε2 + t ≥ 0.
pub fn normalised_scores(
    values: &[u64],
    sensitivities: &[u64],
    per_unit_sensitivity: f64,
) -> Vec<i64> {
    debug_assert_eq!(values.len(), sensitivities.len());
    let scale = f64::from(1u32 << SCALE_BITS);
    // Public: rounded to the grid, and bounded so that p·Δ fits in i128.
    let p = (per_unit_sensitivity.max(0.0) * scale).ceil().min(2f64.powi(62)) as i128;
    let one = 1i128 << SCALE_BITS;
    values
        .iter()
        .zip(sensitivities)
        .map(|(&fi, &di)| {
            let best = values
                .iter()
                .zip(sensitivities)
                .map(|(&fj, &dj)| {
                    let numerator = one * (i128::from(fj) - i128::from(fi))
                        + p * (i128::from(di) - i128::from(dj));
                    numerator.div_euclid(i128::from(di) + i128::from(dj))
                })
                .max()
                .unwrap_or(0);
            best.clamp(0, i128::from(i64::MAX)) as i64
        })
        .collect()
}

/// The qualities handed to the selector: −s_i, with no public part.
pub(crate) fn qualities(scores: &[i64]) -> Vec<Score> {
    scores.iter().map(|&s| Score::new(-s, 0.0)).collect()
}

/// The penalty t = τ·2·ln(K/β)/ε1 of SPEC §4.1 with the public τ and β.
pub(crate) fn penalty(candidates: usize, selection_epsilon: f64) -> f64 {
    PENALTY_SHARE * 2.0 * (candidates.max(1) as f64 / BETA).ln() / selection_epsilon
}

/// β of SPEC §4.1.
pub const BETA: f64 = 0.05;

/// τ: the share of the textbook penalty used. The textbook t makes GEM
/// prefer θ = 1 or 2 whenever t·Δ outweighs the whole count, and t = 0
/// leaves over-large θ too much mass; ¼ had the lowest mean error on the
/// generated and noised training tables (`crates/dpincon-release/README.md`).
pub const PENALTY_SHARE: f64 = 0.25;

#[cfg(test)]
mod tests {
    use super::*;

    fn real_scores(values: &[u64], deltas: &[u64], p: f64) -> Vec<f64> {
        (0..values.len())
            .map(|i| {
                (0..values.len())
                    .map(|j| {
                        (values[j] as f64 - values[i] as f64
                            + p * (deltas[i] as f64 - deltas[j] as f64))
                            / (deltas[i] + deltas[j]) as f64
                    })
                    .fold(f64::NEG_INFINITY, f64::max)
            })
            .collect()
    }

    #[test]
    fn fixed_point_scores_floor_the_real_ones() {
        let values = [86, 172, 431, 1600, 4300, 8100, 8623, 8623];
        let deltas = [1, 2, 5, 20, 50, 200, 400, 10_000];
        for p in [0.0, 1.5, 2.357, 40.0] {
            let exact = real_scores(&values, &deltas, p);
            let fixed = normalised_scores(&values, &deltas, p);
            for (e, f) in exact.iter().zip(&fixed) {
                let f = *f as f64 / f64::from(1u32 << SCALE_BITS);
                assert!(f <= e.max(0.0) + 1e-9 && f >= e - 2e-6, "p = {p}: {f} vs {e}");
            }
        }
    }

    #[test]
    fn the_best_candidate_scores_zero_and_dominated_ones_more() {
        // A curve that saturates at θ = 50: 50 is best, 10_000 pays noise only.
        let values = [100, 900, 1000, 1000];
        let deltas = [1, 10, 50, 10_000];
        let s = normalised_scores(&values, &deltas, 2.0);
        let best = s.iter().enumerate().min_by_key(|(_, v)| **v).unwrap().0;
        assert_eq!(best, 2);
        assert_eq!(s[2], 0);
        assert!(s[0] > 0 && s[3] > 0);
    }

    #[test]
    fn huge_counts_saturate_instead_of_overflowing() {
        let s = normalised_scores(&[0, u64::MAX], &[1, 1], 0.0);
        assert_eq!(s[0], i64::MAX);
        assert_eq!(s[1], 0);
    }
}
