//! The data behind `ub-hem`'s degree upper bound (SPEC §4).
//!
//! A DC with a predicate `t1.A = t2.A` (an FD, a key, Tax's `State =` DCs)
//! can only pair tuples that agree on all such attributes X_σ, so a tuple's
//! degree under σ is below maxfreq_{X_σ}(D). DCs sharing X count once. Each
//! max frequency changes by at most 1 when a row is added or removed.
//!
//! Only the *minimal* sets matter for a degree bound: a neighbour under σ
//! agrees with the tuple on X_σ, hence on every X ⊆ X_σ, so
//! deg(t) ≤ Σ over minimal X of (freq_X(t) − 1). On Tax this sums 3 sets
//! (State, AreaCode, Zip: 444) where all 7 sum to 686; the true maximum
//! degree is 395.

use std::collections::BTreeSet;

use crate::algorithms::{runs, sort_on};
use crate::compile::{KeyConstraint, KeyOperand};
use crate::relation::Relation;

/// Max frequencies of the distinct equality attribute sets, and whether some
/// constraint has no such set (its degrees are then unbounded by them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EqualityFrequencies {
    /// maxfreq_X(D) for each distinct X among the X_σ (rows with a NULL in
    /// X never conflict under σ and are not counted).
    pub max_frequencies: Vec<u64>,
    /// maxfreq_X(D) for the minimal sets only (no other X_σ is a proper
    /// subset of them), in the order of `max_frequencies`.
    pub minimal_max_frequencies: Vec<u64>,
    /// Some constraint has no predicate `t1.A = t2.A`.
    pub unbounded: bool,
    /// For each FD-shaped constraint (see [`fd_cover`]), in constraint
    /// order: the minimum vertex cover of its own conflict graph.
    pub fd_covers: Vec<u64>,
}

/// The slots of σ's `t1.A = t2.A` predicates (X_σ), empty when σ has none.
pub fn equality_attributes(constraint: &KeyConstraint) -> BTreeSet<usize> {
    constraint
        .predicates
        .iter()
        .filter(|p| p.op.get() == dpincon_constraints::Operator::Eq && is_cross(p))
        .map(|p| p.slot)
        .collect()
}

/// Computes [`EqualityFrequencies`]: private values, to be released with noise.
pub fn equality_frequencies(
    relation: &Relation,
    constraints: &[KeyConstraint],
) -> EqualityFrequencies {
    let mut sets: BTreeSet<Vec<usize>> = BTreeSet::new();
    let mut unbounded = false;
    for c in constraints {
        let x = equality_attributes(c);
        if x.is_empty() {
            unbounded = true;
        } else {
            sets.insert(x.into_iter().collect());
        }
    }
    let max_frequencies: Vec<u64> =
        sets.iter().map(|slots| max_frequency(relation, slots)).collect();
    let sets: Vec<Vec<usize>> = sets.into_iter().collect();
    let fd_covers = constraints.iter().filter_map(|c| fd_cover(relation, c)).collect();
    EqualityFrequencies {
        fd_covers,
        ..EqualityFrequencies::from_maxima(&sets, max_frequencies, unbounded)
    }
}

/// X and B when σ is FD-shaped: cross equalities `t1.A = t2.A` (A ∈ X, at
/// least one) and exactly one `t1.B != t2.B`, nothing else.
pub fn fd_shape(constraint: &KeyConstraint) -> Option<(Vec<usize>, usize)> {
    let x: Vec<usize> = equality_attributes(constraint).into_iter().collect();
    let mut rest = constraint.predicates.iter().filter(|p| {
        !(p.op.get() == dpincon_constraints::Operator::Eq && x.contains(&p.slot) && is_cross(p))
    });
    let b = match (rest.next(), rest.next()) {
        (Some(p), None) if p.op.get() == dpincon_constraints::Operator::Ne && is_cross(p) => p.slot,
        _ => return None,
    };
    (!x.is_empty() && !x.contains(&b)).then_some((x, b))
}

/// `t1.A op t2.A`: the same attribute of both tuples.
fn is_cross(p: &crate::compile::KeyPredicate) -> bool {
    matches!(p.right, KeyOperand::Column { tuple, slot } if tuple != p.tuple && slot == p.slot)
}

/// The minimum vertex cover of an FD-shaped σ's conflict graph G_σ (issue
/// 28): within a group of rows agreeing on X (no NULL), two rows conflict
/// iff their B differ (neither NULL), so the group is complete
/// multipartite by B and its minimum cover is its rows minus the largest
/// class. G_σ ⊆ G, so the sum over groups is at most I_R; adding or
/// removing one row changes one group by one row, so the sum by at most 1
/// (node sensitivity 1, like the LP). `None` when σ is not FD-shaped.
pub fn fd_cover(relation: &Relation, constraint: &KeyConstraint) -> Option<u64> {
    let (x, b) = fd_shape(constraint)?;
    let slots: Vec<usize> = x.iter().copied().chain([b]).collect();
    let mut rows: Vec<u32> = (0..relation.rows())
        .filter(|&r| slots.iter().all(|&s| !relation.column(s).is_null(r)))
        .collect();
    sort_on(relation, &mut rows, &slots);
    let cover = runs(relation, &rows, &x)
        .into_iter()
        .map(|group| {
            let largest = runs(relation, &rows[group.clone()], &[b]).iter().map(|r| r.len()).max();
            (group.len() - largest.unwrap_or(0)) as u64
        })
        .sum();
    Some(cover)
}

impl EqualityFrequencies {
    /// The facts from maxfreq_X(D) of each distinct set X (`sets` sorted
    /// and distinct, as slot lists), however those maxima were counted
    /// (here, or per hash partition on a cluster).
    pub fn from_maxima(sets: &[Vec<usize>], max_frequencies: Vec<u64>, unbounded: bool) -> Self {
        let minimal_max_frequencies = sets
            .iter()
            .zip(&max_frequencies)
            .filter(|(x, _)| {
                !sets.iter().any(|y| y.len() < x.len() && y.iter().all(|s| x.contains(s)))
            })
            .map(|(_, &f)| f)
            .collect();
        EqualityFrequencies {
            max_frequencies,
            minimal_max_frequencies,
            unbounded,
            fd_covers: vec![],
        }
    }
}

fn max_frequency(relation: &Relation, slots: &[usize]) -> u64 {
    // The longest run of equal keys once the non-NULL rows are sorted on
    // them: the same sort and runs as detection's partitioning.
    let mut rows: Vec<u32> = (0..relation.rows())
        .filter(|&r| slots.iter().all(|&s| !relation.column(s).is_null(r)))
        .collect();
    sort_on(relation, &mut rows, slots);
    runs(relation, &rows, slots).iter().map(|r| r.len() as u64).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::KeyPredicate;
    use crate::relation::KeyColumn;
    use dpincon_constraints::Operator;

    /// A two-column relation (X, B) from optional keys.
    fn relation(rows: &[(Option<u64>, Option<u64>)]) -> Relation {
        let mut r = Relation::new(rows.len() as u32);
        let int = dpincon_constraints::Domain::Int;
        r.insert_column(0, int, KeyColumn::from_keys(rows.iter().map(|t| t.0)));
        r.insert_column(1, int, KeyColumn::from_keys(rows.iter().map(|t| t.1)));
        r
    }

    /// The minimum vertex cover of σ's conflict graph by brute force.
    fn brute_cover(rows: &[(Option<u64>, Option<u64>)]) -> u64 {
        let n = rows.len();
        let conflict = |i: usize, j: usize| {
            let (a, b) = (rows[i], rows[j]);
            a.0.is_some() && a.0 == b.0 && a.1.is_some() && b.1.is_some() && a.1 != b.1
        };
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

    /// Every table of up to 7 rows over small domains (NULLs included)
    /// from a seeded stream: the FD cover is G_σ's minimum cover, and
    /// removing any row moves it by at most 1.
    #[test]
    fn fd_cover_is_the_exact_cover_of_its_constraint_with_sensitivity_one() {
        let fd = KeyConstraint {
            id: 0,
            display: String::new(),
            predicates: vec![
                KeyPredicate::cross(0, Operator::Eq, 0),
                KeyPredicate::cross(1, Operator::Ne, 1),
            ],
        };
        assert_eq!(fd_shape(&fd), Some((vec![0], 1)));
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |m: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % m
        };
        for _ in 0..2000 {
            let n = 1 + next(7) as usize;
            let key = |v: u64| (v < 3).then_some(v);
            let rows: Vec<_> = (0..n).map(|_| (key(next(4)), key(next(4)))).collect();
            let cover = fd_cover(&relation(&rows), &fd).unwrap();
            assert_eq!(cover, brute_cover(&rows), "{rows:?}");
            for i in 0..n {
                let mut fewer = rows.clone();
                fewer.remove(i);
                let smaller = fd_cover(&relation(&fewer), &fd).unwrap();
                assert!(smaller <= cover && cover <= smaller + 1, "{rows:?} without {i}");
            }
        }
        // Not FD-shaped: an order predicate, or two inequalities.
        let order = KeyConstraint {
            predicates: vec![
                KeyPredicate::cross(0, Operator::Eq, 0),
                KeyPredicate::cross(1, Operator::Lt, 1),
            ],
            ..fd.clone()
        };
        assert_eq!(fd_cover(&relation(&[(Some(1), Some(1))]), &order), None);
    }

    #[test]
    fn frequencies_of_distinct_equality_sets() {
        let mut r = Relation::new(6);
        r.insert_column(
            0,
            dpincon_constraints::Domain::Int,
            KeyColumn::from_keys([1, 1, 1, 2, 2, 3].map(Some)),
        );
        r.insert_column(
            1,
            dpincon_constraints::Domain::Int,
            KeyColumn::from_keys([Some(5), Some(5), None, Some(5), Some(5), Some(5)]),
        );
        let dc = |predicates| KeyConstraint { id: 0, display: String::new(), predicates };
        let fd = dc(vec![
            KeyPredicate::cross(0, Operator::Eq, 0),
            KeyPredicate::cross(1, Operator::Ne, 1),
        ]);
        let fd_twin = dc(vec![
            KeyPredicate::cross(1, Operator::Ne, 1),
            KeyPredicate::cross(0, Operator::Eq, 0),
        ]);
        let both = dc(vec![
            KeyPredicate::cross(0, Operator::Eq, 0),
            KeyPredicate::cross(1, Operator::Eq, 1),
        ]);
        let ineq = dc(vec![
            KeyPredicate::cross(0, Operator::Lt, 0),
            KeyPredicate::cross(1, Operator::Gt, 1),
        ]);
        let cross = dc(vec![KeyPredicate::cross(0, Operator::Eq, 1)]);
        let f = equality_frequencies(&r, &[fd, fd_twin, both]);
        // X = {0}: value 1 three times; X = {0,1}: (1,5) twice (row 2 is NULL).
        // {0} ⊂ {0,1}: only {0} is minimal.
        let expected = EqualityFrequencies {
            max_frequencies: vec![3, 2],
            minimal_max_frequencies: vec![3],
            unbounded: false,
            // fd and its twin are FD-shaped; B agrees in every group.
            fd_covers: vec![0, 0],
        };
        assert_eq!(f, expected);
        let f = equality_frequencies(&r, &[ineq, cross]);
        let expected = EqualityFrequencies {
            max_frequencies: vec![],
            minimal_max_frequencies: vec![],
            unbounded: true,
            fd_covers: vec![],
        };
        assert_eq!(f, expected);
    }
}
