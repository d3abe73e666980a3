//! The θ candidates a release may evaluate: SPEC §4's defaults, GEM's
//! halvings, the floor's quarter-octave grid, or the user's own.

use crate::spec::ProjectedSpec;

/// SPEC §4's default candidates: {1, 2, 5} × 10^k up to n_max, plus n_max.
pub fn default_candidates(max_rows: u64) -> Vec<u32> {
    let top = clamp_theta(max_rows);
    let mut out: Vec<u32> = (0..10)
        .flat_map(|k| [1u64, 2, 5].map(|m| m * 10u64.pow(k)))
        .filter(|&t| t <= u64::from(top))
        .map(|t| t as u32)
        .collect();
    out.push(top);
    out.sort_unstable();
    out.dedup();
    out
}

/// GEM's default candidates: `top`, ⌊top/2⌋, ⌊top/4⌋, … down to 1. Few
/// candidates keep the selection's spread (ln K) small, and the grid is
/// anchored at the bound itself, the one candidate that truncates nothing.
pub fn halving_candidates(top: u32) -> Vec<u32> {
    let mut out = vec![top.max(1)];
    while let Some(&last) = out.last()
        && last > 1
    {
        out.push(last / 2);
    }
    out.reverse();
    out
}

/// The θ a floored release may take: θ_c·2^{j/4} below `top`, then `top`
/// (each a projection of the one pass; θ* rounds down onto them).
pub(crate) fn floor_grid(floor: u32, top: u32) -> Vec<u32> {
    let mut grid: Vec<u32> = (0..)
        .map(|j| (f64::from(floor) * 2f64.powf(f64::from(j) / 4.0)) as u64)
        .take_while(|&t| t < u64::from(top))
        .map(clamp_theta)
        .collect();
    grid.push(top);
    grid.dedup();
    grid
}

/// `v` as a θ: at least 1, at most `u32::MAX`.
pub(crate) fn clamp_theta(v: u64) -> u32 {
    v.clamp(1, u64::from(u32::MAX)) as u32
}

/// The user's candidates, sorted, or `default` of the top bound.
pub(crate) fn candidates_or(
    spec: &ProjectedSpec,
    top: u32,
    default: fn(u32) -> Vec<u32>,
) -> Vec<u32> {
    match &spec.candidates {
        Some(c) => {
            let mut c = c.clone();
            c.sort_unstable();
            c.dedup();
            c
        }
        None => default(top),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halving_candidates_run_from_the_bound_down_to_one() {
        assert_eq!(halving_candidates(444), vec![1, 3, 6, 13, 27, 55, 111, 222, 444]);
        assert_eq!(halving_candidates(1), vec![1]);
        assert_eq!(halving_candidates(0), vec![1]);
    }

    #[test]
    fn the_floor_grid_runs_in_quarter_octaves_to_the_top() {
        assert_eq!(floor_grid(100, 300), vec![100, 118, 141, 168, 200, 237, 282, 300]);
        assert_eq!(floor_grid(1, 2), vec![1, 2]);
    }

    #[test]
    fn default_candidates_follow_spec() {
        assert_eq!(default_candidates(60), vec![1, 2, 5, 10, 20, 50, 60]);
        assert_eq!(default_candidates(50), vec![1, 2, 5, 10, 20, 50]);
    }
}
