//! Helpers of this crate's unit tests: small relations, a seeded stream,
//! and the brute-force minimum vertex cover the exact covers are checked
//! against.

use std::collections::BTreeSet;

use crate::frequencies::{ConflictClasses, classes_of};
use crate::relation::{KeyColumn, Relation};
use crate::sets::ListedRows;
use crate::tuples::TupleIndex;

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

/// `n` rows of three keys, each drawn below `domain` by `next` in row
/// order; a draw of `values` or more is NULL.
pub(crate) fn random_rows(
    next: &mut impl FnMut(u64) -> u64,
    n: usize,
    domain: u64,
    values: u64,
) -> Vec<[Option<u64>; 3]> {
    let mut key = || Some(next(domain)).filter(|&v| v < values);
    (0..n).map(|_| [key(), key(), key()]).collect()
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

/// X and its B (`None`: a key) per set of keys and FDs, over the three
/// columns of [`relation`].
pub(crate) type Sets = &'static [(usize, Option<&'static [usize]>)];

/// Whether rows `a` and `b` conflict under `sets`: they agree on some X
/// (no NULL) and, for FDs, differ on one of its B (both set); under a key,
/// always.
pub(crate) fn conflict_under(sets: Sets, a: &[Option<u64>; 3], b: &[Option<u64>; 3]) -> bool {
    let differ = |a: Option<u64>, b: Option<u64>| a.is_some() && b.is_some() && a != b;
    sets.iter().any(|&(x, bs)| {
        a[x].is_some() && a[x] == b[x] && bs.is_none_or(|bs| bs.iter().any(|&c| differ(a[c], b[c])))
    })
}

/// Each set's classes over `rows` ([`relation`]), with the row lists
/// `listed` asks for.
pub(crate) fn classes_of_sets(
    rows: &[[Option<u64>; 3]],
    sets: Sets,
    listed: ListedRows,
) -> Vec<ConflictClasses> {
    let r = relation(rows);
    let mut index = TupleIndex::new(&r);
    sets.iter()
        .map(|&(x, bs)| {
            let bs: Option<BTreeSet<usize>> = bs.map(|b| b.iter().copied().collect());
            classes_of(&mut index, &[x], bs.as_ref(), listed)
        })
        .collect()
}
