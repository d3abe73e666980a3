//! A constraint's shape, read from its predicates alone (public): its
//! equality attributes X_σ (or, without them, its equalities across two
//! attributes, [`cross_equality`]), whether it is a key or an FD
//! ([`fd_shape`]), whether it is an order pair ([`order_pair`], the
//! chains of `chains.rs`). Detection, the degree bounds and the cover sets
//! all decide by these.

use std::collections::BTreeSet;

use dpincon_constraints::{Operator, TupleVar};

use crate::compile::{KeyConstraint, KeyOperand, KeyPredicate};

/// The slots of σ's `t1.A = t2.A` predicates (X_σ), empty when σ has none.
pub fn equality_attributes(constraint: &KeyConstraint) -> BTreeSet<usize> {
    constraint
        .predicates
        .iter()
        .filter(|p| p.op.get() == dpincon_constraints::Operator::Eq && is_cross(p))
        .map(|p| p.slot)
        .collect()
}

/// σ's equalities across two attributes, `t1.L = t2.R` with L ≠ R (an
/// `Id`/`Manager` join, a parent key), when σ has no `t1.A = t2.A`: its
/// degrees are bounded by the two sides' frequencies, not by X's
/// (`frequencies`, "cross equalities").
///
/// Canonical: the pairs (L, R) sorted, or their mirror (each pair swapped)
/// if that sorts first. A DC and its mirror pair a row with the rows of
/// the same two groups, so they share one form and one bound.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CrossEquality {
    /// The pairs (L, R) of slots, `t1.L = t2.R`.
    pub pairs: Vec<(usize, usize)>,
}

impl CrossEquality {
    /// The slots of the t1 side (sorted, distinct).
    pub fn left(&self) -> Vec<usize> {
        self.pairs.iter().map(|&(l, _)| l).collect::<BTreeSet<_>>().into_iter().collect()
    }

    /// The slots of the t2 side (sorted, distinct).
    pub fn right(&self) -> Vec<usize> {
        self.pairs.iter().map(|&(_, r)| r).collect::<BTreeSet<_>>().into_iter().collect()
    }
}

/// σ's [`CrossEquality`]: `None` when σ has a `t1.A = t2.A` (X_σ bounds
/// its degrees) or no equality across the tuples at all.
pub fn cross_equality(constraint: &KeyConstraint) -> Option<CrossEquality> {
    if !equality_attributes(constraint).is_empty() {
        return None;
    }
    let mut pairs: Vec<(usize, usize)> = constraint
        .predicates
        .iter()
        .filter(|p| p.op.get() == Operator::Eq)
        .filter_map(|p| match p.right {
            KeyOperand::Column { tuple, slot } if tuple != p.tuple => {
                Some(if p.tuple == TupleVar::T1 { (p.slot, slot) } else { (slot, p.slot) })
            }
            _ => None,
        })
        .collect();
    if pairs.is_empty() {
        return None;
    }
    pairs.sort_unstable();
    pairs.dedup();
    let mut mirror: Vec<(usize, usize)> = pairs.iter().map(|&(l, r)| (r, l)).collect();
    mirror.sort_unstable();
    Some(CrossEquality { pairs: pairs.min(mirror) })
}

/// X and B when σ is FD-shaped: cross equalities `t1.A = t2.A` (A ∈ X, at
/// least one) and at most one `t1.B != t2.B`, nothing else (no B: a key).
///
/// `t1.B < t2.B` or `t1.B > t2.B` in place of `!=` is the same FD: keys
/// are totally ordered and a NULL compares with nothing, so an unordered
/// pair satisfies the strict order one way round exactly when both B are
/// set and differ. (Users write a sanity rule such as `not(t1.Title =
/// t2.Title & t1.Year > t2.Year)`; read as a general DC its cliques left
/// I_R on LP's k/2: issue 49.)
pub fn fd_shape(constraint: &KeyConstraint) -> Option<(Vec<usize>, Option<usize>)> {
    let x: Vec<usize> = equality_attributes(constraint).into_iter().collect();
    let mut rest = constraint
        .predicates
        .iter()
        .filter(|p| !(p.op.get() == Operator::Eq && x.contains(&p.slot) && is_cross(p)));
    let b = match (rest.next(), rest.next()) {
        (None, _) => None,
        (Some(p), None)
            if matches!(p.op.get(), Operator::Ne | Operator::Lt | Operator::Gt) && is_cross(p) =>
        {
            Some(p.slot)
        }
        _ => return None,
    };
    (!x.is_empty() && b.is_none_or(|b| !x.contains(&b))).then_some((x, b))
}

/// `t1.A op t2.A`: the same attribute of both tuples.
fn is_cross(p: &KeyPredicate) -> bool {
    matches!(p.right, KeyOperand::Column { tuple, slot } if tuple != p.tuple && slot == p.slot)
}

/// An order pair's canonical form: two DCs with one form have one graph
/// (the mirrored `Salary > ∧ Rate <` and `Salary < ∧ Rate >` are one).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OrderPair {
    /// The equality attributes X (slots, sorted; empty: one group).
    pub x: Vec<usize>,
    /// A: the lower slot of the two.
    pub a: usize,
    /// B: the other.
    pub b: usize,
    /// op_A is `<` (else `≤`).
    pub a_strict: bool,
    /// op_B is `>` (else `≥`).
    pub b_strict: bool,
    /// B's order is reversed (the DC read `op_B ∈ {<, ≤}`).
    pub b_reversed: bool,
}

/// σ's [`OrderPair`] when σ is one (module docs), else `None`.
pub fn order_pair(constraint: &KeyConstraint) -> Option<OrderPair> {
    let x: Vec<usize> = equality_attributes(constraint).into_iter().collect();
    let mut inequalities = Vec::new();
    for p in &constraint.predicates {
        let op = p.op.get();
        let cross = matches!(p.right, KeyOperand::Column { tuple, slot }
            if tuple != p.tuple && slot == p.slot);
        if op == Operator::Eq && cross && x.contains(&p.slot) {
            continue;
        }
        if !cross || matches!(op, Operator::Eq | Operator::Ne) || x.contains(&p.slot) {
            return None;
        }
        inequalities.push(as_t1(p));
    }
    let [(a, op_a), (b, op_b)] = inequalities.as_slice() else { return None };
    if a == b {
        return None;
    }
    // A is the lower slot; swapping t1 and t2 turns each op around.
    let (a, mut op_a, b, mut op_b) =
        if a < b { (*a, *op_a, *b, *op_b) } else { (*b, *op_b, *a, *op_a) };
    if matches!(op_a, Operator::Gt | Operator::Ge) {
        (op_a, op_b) = (converse(op_a), converse(op_b));
    }
    let b_reversed = matches!(op_b, Operator::Lt | Operator::Le);
    Some(OrderPair {
        x,
        a,
        b,
        a_strict: op_a == Operator::Lt,
        b_strict: matches!(op_b, Operator::Gt | Operator::Lt),
        b_reversed,
    })
}

/// `(slot, op)` of `t1.slot op t2.slot`, whichever tuple `p` names first.
fn as_t1(p: &KeyPredicate) -> (usize, Operator) {
    let op = p.op.get();
    (p.slot, if p.tuple == TupleVar::T1 { op } else { converse(op) })
}

/// `op` with its operands swapped.
fn converse(op: Operator) -> Operator {
    match op {
        Operator::Lt => Operator::Gt,
        Operator::Gt => Operator::Lt,
        Operator::Le => Operator::Ge,
        Operator::Ge => Operator::Le,
        other => other,
    }
}
