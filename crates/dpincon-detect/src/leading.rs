//! I_P's leading count over several X (dpincon-release, "the fifteenth
//! round"): when every constraint is a key or an FD
//! ([`crate::all_fd_shaped`]) of k ≥ 2 attribute sets X, let L_X be X's
//! leading rows ([`ConflictClasses::leading`]: the first τ₀ =
//! [`EXCESS_FROM`] rows, by row order, of each class of a group with two
//! classes or more; under a key every row of a group of two rows or more).
//!
//! - **A lower bound.** A leading row's class has a row of another class
//!   beside it in its group, and the two conflict: |∪_X L_X| ≤ I_P.
//! - **What it misses.** A problematic row conflicts under some X, so I_P =
//!   |∪_X P_X|, and |P_X \ L_X| ≤ excess_X + (τ₀ + 1)·null_rows_X (the
//!   excess bound of [`crate::fd_classes`] at τ = τ₀, |L_X| being its
//!   capped(τ₀)). So I_P ≤ |∪_X L_X| + M with M = Σ_X (excess_X + (τ₀ +
//!   1)·null_rows_X), [`leading_miss`].
//! - **Sensitivity of the count: 1 + k_key + k_fd·τ₀** (k_key of the X
//!   keys, k_fd FDs; public, it reads the constraints only). Adding a row r
//!   changes one group of each X. Under an FD, r joins a class (it leads if
//!   among its class's first τ₀ rows, and the row it displaces stops
//!   leading), or starts one: a group that was pure now has two classes,
//!   and its class's first τ₀ rows lead with r. So L_X gains r and at most
//!   τ₀ other rows, and loses at most one. Under a key, L_X is the rows of
//!   groups of two or more: r's group gains r, and its one row if it had
//!   one; nothing leaves. The union gains at most 1 + k_key + k_fd·τ₀ rows
//!   and loses at most k_fd. A row with a NULL in X or in a B is in no
//!   class and moves no L_X. Removing a row is the same step backwards.
//! - **Sensitivity of M: k_fd·(τ₀ + 1).** In each FD's X a row moves the
//!   excess by at most 1 (a row with every B) or the NULL rows by 1 (one
//!   without), never both. A key has neither (L_X is its P_X exactly), so
//!   over keys alone M is 0 and needs no look.
//!
//! `leading_count_bounds_i_p_with_its_sensitivities` checks all four on
//! 4,000 tables with NULLs, removing every row in turn.

use crate::frequencies::{ConflictClasses, EXCESS_FROM, distinct_rows};

/// |∪_X L_X| over `sets` (each X's classes, with their leading rows).
pub fn leading_count(sets: &[ConflictClasses]) -> u64 {
    distinct_rows(sets.iter().map(|c| c.leading.as_slice()))
}

/// M = Σ_X (excess_X + (τ₀ + 1)·null_rows_X): at least what the leading
/// count misses of I_P (module docs).
pub fn leading_miss(sets: &[ConflictClasses]) -> u64 {
    sets.iter().map(|c| c.excess + (EXCESS_FROM + 1) * c.null_rows).sum()
}

/// The node sensitivity of [`leading_count`] over `sets`: 1 + k_key +
/// k_fd·τ₀. Public: whether an X is a key reads the constraints only.
pub fn leading_count_sensitivity(sets: &[ConflictClasses]) -> u64 {
    1 + sets.iter().map(|c| if c.key { 1 } else { EXCESS_FROM }).sum::<u64>()
}

/// The node sensitivity of [`leading_miss`] over `sets`: k_fd·(τ₀ + 1)
/// (a key adds nothing to M).
pub fn leading_miss_sensitivity(sets: &[ConflictClasses]) -> u64 {
    sets.iter().filter(|c| !c.key).count() as u64 * (EXCESS_FROM + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{Sets, classes_of_sets, conflict_under, random_rows, xorshift};
    use crate::sets::ListedRows;

    fn sets_of(rows: &[[Option<u64>; 3]], sets: Sets) -> Vec<ConflictClasses> {
        classes_of_sets(rows, sets, ListedRows { leading: true, key_rows: true, deleted: false })
    }

    /// The problematic rows by brute force ([`conflict_under`]).
    fn brute_problematic(rows: &[[Option<u64>; 3]], sets: Sets) -> u64 {
        (0..rows.len())
            .filter(|&i| {
                (0..rows.len()).any(|j| i != j && conflict_under(sets, &rows[i], &rows[j]))
            })
            .count() as u64
    }

    #[test]
    fn leading_count_bounds_i_p_with_its_sensitivities() {
        let all: [Sets; 4] = [
            &[(0, Some(&[1])), (1, Some(&[2]))],
            &[(0, Some(&[1, 2])), (2, Some(&[0]))],
            &[(0, None), (1, Some(&[2]))],
            &[(0, None), (1, Some(&[0, 2])), (2, None)],
        ];
        let mut next = xorshift(0x6a09_e667_f3bc_c909);
        let (mut widest, mut tight) = ([0; 4], 0);
        for round in 0..4000 {
            let n = 1 + next(7) as usize;
            let domain = if round % 2 == 0 { 3 } else { 4 };
            let rows = random_rows(&mut next, n, domain, 3);
            for (s, sets) in all.into_iter().enumerate() {
                let c = sets_of(&rows, sets);
                let (count, miss) = (leading_count(&c), leading_miss(&c));
                let truth = brute_problematic(&rows, sets);
                assert!(count <= truth, "{rows:?} {sets:?}: {count} > {truth}");
                assert!(truth <= count + miss, "{rows:?} {sets:?}: {truth} > {count} + {miss}");
                tight += usize::from(count == truth);
                for i in 0..n {
                    let mut fewer = rows.clone();
                    fewer.remove(i);
                    let d = sets_of(&fewer, sets);
                    let moved = count.abs_diff(leading_count(&d));
                    assert!(moved <= leading_count_sensitivity(&c), "{rows:?} −{i}");
                    let moved_miss = miss.abs_diff(leading_miss(&d));
                    assert!(moved_miss <= leading_miss_sensitivity(&c), "{rows:?} −{i}");
                    widest[s] = widest[s].max(moved);
                }
            }
        }
        // The bound on a row's effect is reached by two FDs (1 + 2·τ₀) and by
        // a key beside an FD (1 + 1 + τ₀), and the count is often I_P.
        assert_eq!([widest[0], widest[2]], [5, 4], "a row moves every X's leaders");
        assert!(tight > 8000, "the count equalled I_P in {tight} of 16,000 cases");
    }
}
