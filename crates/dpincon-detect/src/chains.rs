//! The exact minimum cover of an *order pair*: a DC of equalities
//! `t1.X = t2.X` (any number, none too) and two inequalities on two other
//! attributes, `t1.A op t2.A` and `t1.B op t2.B` (op among <, ≤, >, ≥),
//! such as Tax's `State = ∧ Salary > ∧ Rate <` (issue 28).
//!
//! Inside a group of rows agreeing on X (no NULL in X, A or B; a row with
//! one conflicts with none), "conflicts" is the comparability of a
//! 2-dimensional partial order, so the largest independent set is the
//! longest chain of the other order, found by a longest (non-)decreasing
//! subsequence after one sort: the minimum cover is the group's rows minus
//! it, O(n log n) in all. Writing the DC with `op_A ∈ {<, ≤}` (swap t1 and
//! t2) and `op_B ∈ {>, ≥}` (reverse B's order), two rows i, j conflict iff
//! A_i op_A A_j and B_i op_B B_j in one of the two orders. Sorted by A
//! ascending (ties: B ascending when op_A is <, descending when ≤), a set
//! of rows is independent iff, along the sort, it is
//! - (<, >) or (≤, >): non-decreasing in B;
//! - (<, ≥): non-decreasing in (B, A descending): equal B only within
//!   one A;
//! - (≤, ≥): strictly increasing in B.
//!
//! The proof is case by case on A_i < A_j (a later row may not fall in B)
//! and A_i = A_j (only ≤ pairs them; the tie order keeps them out of, or
//! in, one subsequence); `tests` checks every case against the brute-force
//! cover of the detected graph. Adding or removing a row moves the group's
//! rows by one and its longest chain by zero or one, so the cover moves by
//! at most 1: node sensitivity 1, like an FD's cover.

use crate::relation::Relation;
use crate::shape::OrderPair;
use crate::tuples::{NO_TUPLE, TupleIds, TupleIndex};

/// The minimum vertex cover of `pair`'s own conflict graph over
/// `relation` (module docs): exact, node sensitivity 1.
pub fn chain_cover(relation: &Relation, pair: &OrderPair) -> u64 {
    let groups = TupleIndex::new(relation).ids_of(&pair.x);
    chain_cover_in(relation, pair, groups.as_deref())
}

/// [`chain_cover`] with X's tuple ids given (`None`: X is empty).
pub(crate) fn chain_cover_in(
    relation: &Relation,
    pair: &OrderPair,
    groups: Option<&TupleIds>,
) -> u64 {
    let (a, b) = (relation.column(pair.a), relation.column(pair.b));
    // (group, A, B in the sort's tie order) per row.
    let mut rows: Vec<(u32, u64, u64)> = (0..relation.rows())
        .filter_map(|r| {
            let g = groups.map_or(0, |ids| ids.ids[r as usize]);
            let (ka, kb) = (a.get(r)?, b.get(r)?);
            let kb = if pair.b_reversed { !kb } else { kb };
            (g != NO_TUPLE).then_some((g, ka, if pair.a_strict { kb } else { !kb }))
        })
        .collect();
    rows.sort_unstable();
    // B as compared, from the tie order.
    let b_of = |r: &(u32, u64, u64)| if pair.a_strict { r.2 } else { !r.2 };
    let mut cover = 0;
    for group in rows.chunk_by(|p, q| p.0 == q.0) {
        let chain = match (pair.a_strict, pair.b_strict) {
            (true, false) => longest_chain(group.iter().map(|r| (b_of(r), !r.1)), false),
            (false, false) => longest_chain(group.iter().map(|r| (b_of(r), 0)), true),
            _ => longest_chain(group.iter().map(|r| (b_of(r), 0)), false),
        };
        cover += (group.len() - chain) as u64;
    }
    cover
}

/// The longest subsequence of `keys` that is non-decreasing (`strict`:
/// increasing): patience sorting, O(n log n).
fn longest_chain(keys: impl Iterator<Item = (u64, u64)>, strict: bool) -> usize {
    // tails[k]: the least last key of a chain of k + 1 keys so far.
    let mut tails: Vec<(u64, u64)> = Vec::new();
    for key in keys {
        let at = if strict {
            tails.partition_point(|t| *t < key)
        } else {
            tails.partition_point(|t| *t <= key)
        };
        match tails.get_mut(at) {
            Some(t) => *t = key,
            None => tails.push(key),
        }
    }
    tails.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::{KeyConstraint, KeyOperand, KeyPredicate};
    use crate::exec::brute_force;
    use crate::fixtures::{brute_cover_of, relation, xorshift};
    use crate::shape::order_pair;
    use dpincon_constraints::{Operator, TupleVar};
    use dpincon_graph::Edge;

    /// The minimum vertex cover of the graph that detection finds
    /// (relation slots X, A, B).
    fn brute_cover(relation: &Relation, constraint: &KeyConstraint) -> u64 {
        let mut edges: Vec<Edge> = Vec::new();
        brute_force(relation, constraint, &mut edges);
        let edge = |i: usize, j: usize| edges.contains(&Edge::new(i as u32, j as u32));
        brute_cover_of(relation.rows() as usize, edge)
    }

    const OPS: [Operator; 4] = [Operator::Lt, Operator::Le, Operator::Gt, Operator::Ge];

    /// Every op pair, either tuple first in either predicate, with and
    /// without X, on tables of up to 8 rows with ties and NULLs: the chain
    /// cover is the detected graph's minimum cover, and removing a row
    /// moves it by at most 1.
    #[test]
    fn chain_cover_is_the_minimum_cover_with_sensitivity_one() {
        let mut next = xorshift(0x243f_6a88_85a3_08d3);
        let mut covered = 0;
        for round in 0..4000 {
            let n = 1 + next(8) as usize;
            let key = |v: u64| (v < 4).then_some(v);
            let rows: Vec<[Option<u64>; 3]> =
                (0..n).map(|_| [key(next(3)), key(next(5)), key(next(5))]).collect();
            let side = |flip: u64| if flip == 1 { TupleVar::T2 } else { TupleVar::T1 };
            let ineq = |slot: usize, op: Operator, tuple: TupleVar| KeyPredicate {
                tuple,
                slot,
                op: crate::OrderedOperator::new(op),
                right: KeyOperand::Column {
                    tuple: if tuple == TupleVar::T1 { TupleVar::T2 } else { TupleVar::T1 },
                    slot,
                },
            };
            let mut predicates = vec![
                ineq(1, OPS[next(4) as usize], side(next(2))),
                ineq(2, OPS[next(4) as usize], side(next(2))),
            ];
            if round % 2 == 0 {
                predicates.push(KeyPredicate::cross(0, Operator::Eq, 0));
            }
            if next(2) == 1 {
                predicates.reverse();
            }
            let dc = KeyConstraint { id: 0, display: String::new(), predicates };
            let pair = order_pair(&dc).expect("an order pair");
            let r = relation(&rows);
            let cover = chain_cover(&r, &pair);
            assert_eq!(cover, brute_cover(&r, &dc), "{rows:?} under {dc:?}");
            covered += cover;
            for i in 0..n {
                let mut fewer = rows.clone();
                fewer.remove(i);
                let moved = cover.abs_diff(chain_cover(&relation(&fewer), &pair));
                assert!(moved <= 1, "{rows:?} without {i}: moved {moved}");
            }
        }
        assert!(covered > 1000, "the tables have conflicts");
    }

    #[test]
    fn mirrored_pairs_are_one_and_other_shapes_are_none() {
        let dc = |predicates| KeyConstraint { id: 0, display: String::new(), predicates };
        let gt_lt = dc(vec![
            KeyPredicate::cross(0, Operator::Eq, 0),
            KeyPredicate::cross(1, Operator::Gt, 1),
            KeyPredicate::cross(2, Operator::Lt, 2),
        ]);
        let lt_gt = dc(vec![
            KeyPredicate::cross(2, Operator::Gt, 2),
            KeyPredicate::cross(1, Operator::Lt, 1),
            KeyPredicate::cross(0, Operator::Eq, 0),
        ]);
        assert_eq!(order_pair(&gt_lt), order_pair(&lt_gt));
        assert!(order_pair(&gt_lt).is_some());
        let none = [
            // An FD, one inequality, three, the same attribute twice, a
            // constant, an inequality on X.
            vec![KeyPredicate::cross(0, Operator::Eq, 0), KeyPredicate::cross(1, Operator::Ne, 1)],
            vec![KeyPredicate::cross(0, Operator::Eq, 0), KeyPredicate::cross(1, Operator::Lt, 1)],
            vec![
                KeyPredicate::cross(0, Operator::Lt, 0),
                KeyPredicate::cross(1, Operator::Lt, 1),
                KeyPredicate::cross(2, Operator::Lt, 2),
            ],
            vec![KeyPredicate::cross(1, Operator::Lt, 1), KeyPredicate::cross(1, Operator::Gt, 1)],
            vec![
                KeyPredicate::cross(1, Operator::Lt, 1),
                KeyPredicate {
                    tuple: TupleVar::T1,
                    slot: 2,
                    op: crate::OrderedOperator::new(Operator::Gt),
                    right: KeyOperand::Const(3),
                },
            ],
            vec![KeyPredicate::cross(1, Operator::Lt, 2), KeyPredicate::cross(2, Operator::Gt, 1)],
            vec![
                KeyPredicate::cross(0, Operator::Eq, 0),
                KeyPredicate::cross(0, Operator::Lt, 0),
                KeyPredicate::cross(1, Operator::Gt, 1),
            ],
        ];
        for predicates in none {
            assert_eq!(order_pair(&dc(predicates.clone())), None, "{predicates:?}");
        }
    }
}
