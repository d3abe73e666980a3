//! Helpers of this crate's unit tests: small relations, a seeded stream,
//! and the brute-force minimum vertex cover the exact covers are checked
//! against.

use crate::relation::{KeyColumn, Relation};

/// A relation of three integer columns (slots 0, 1, 2) from optional keys.
pub(crate) fn relation(rows: &[[Option<u64>; 3]]) -> Relation {
    let mut r = Relation::new(rows.len() as u32);
    let int = dpincon_constraints::Domain::Int;
    for slot in 0..3 {
        r.insert_column(slot, int, KeyColumn::from_keys(rows.iter().map(|t| t[slot])));
    }
    r
}

/// A seeded stream of values below `m` (xorshift64).
pub(crate) fn xorshift(mut state: u64) -> impl FnMut(u64) -> u64 {
    move |m| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % m
    }
}

/// The minimum vertex cover of the graph on `n` rows that `conflict`
/// defines, by trying every subset.
pub(crate) fn brute_cover_of(n: usize, conflict: impl Fn(usize, usize) -> bool) -> u64 {
    (0u32..1 << n)
        .filter(|mask| {
            (0..n).all(|i| {
                (i + 1..n).all(|j| !conflict(i, j) || mask >> i & 1 == 1 || mask >> j & 1 == 1)
            })
        })
        .map(|mask| u64::from(mask.count_ones()))
        .min()
        .unwrap_or(0)
}
