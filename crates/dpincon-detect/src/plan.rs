//! Choosing how to find a constraint's violating pairs (SPEC §2).
//!
//! Predicates fall in three kinds: *filters* on one tuple (`t1.A > 30`,
//! `t1.A < t1.B`), *equalities* across the pair (`t1.A = t2.B`), which
//! partition the rows, and the other *cross* predicates, one or two of which
//! drive the search inside each partition:
//!
//! | cross predicates left | driver |
//! |---|---|
//! | none | [`Driver::AllPairs`]: every pair in the group violates (keys) |
//! | two or more order comparisons | [`Driver::IeJoin`] on two of them |
//! | one order comparison | [`Driver::RangeScan`] over the group sorted on it |
//! | only `!=` | [`Driver::Complement`] of the equality classes |
//!
//! Every driver enumerates only pairs that satisfy the predicates it is
//! built on; the remaining ones are checked per candidate.

use std::fmt;

use dpincon_constraints::{Operator, TupleVar};

use crate::compile::{KeyConstraint, KeyOperand, KeyPredicate, OrderedOperator};

/// A predicate on one tuple: `t.slot op rhs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Filter {
    pub slot: usize,
    pub op: Operator,
    pub rhs: FilterRhs,
}

/// The right side of a [`Filter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FilterRhs {
    Const(u64),
    Slot(usize),
}

/// A cross predicate `t1.left op t2.right`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cross {
    pub left: usize,
    pub op: Operator,
    pub right: usize,
}

/// The algorithm enumerating candidate pairs inside a partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Driver {
    AllPairs,
    Complement(Cross),
    RangeScan(Cross),
    IeJoin(Cross, Cross),
}

/// How one constraint is detected.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    /// Filters on t1 (index 0) and t2 (index 1).
    pub filters: [Vec<Filter>; 2],
    /// Equalities `t1.left = t2.right` partitioning the rows.
    pub equalities: Vec<(usize, usize)>,
    pub driver: Driver,
    /// Cross predicates checked per candidate pair.
    pub residual: Vec<Cross>,
    /// Swapping t1 and t2 gives the same constraint, so each unordered pair
    /// needs checking in one orientation only.
    pub symmetric: bool,
}

/// What the planner chose for a constraint, as reported to users.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DetectionPlan {
    /// The constraint's id.
    pub constraint: usize,
    /// Its canonical text.
    pub display: String,
    /// Number of equality predicates the rows are partitioned on.
    pub partition_attributes: usize,
    /// The algorithm inside each partition.
    pub driver: DriverKind,
}

/// The algorithm used inside each partition, as reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DriverKind {
    /// Every pair of a group violates (a key, or an FD with no residual).
    AllPairs,
    /// `!=` as the complement of equality classes (FDs).
    Complement,
    /// One inequality: sort and scan the satisfying range.
    RangeScan,
    /// Two inequalities: IEJoin (sorted arrays, permutation, bit array).
    IeJoin,
    /// Every pair tested: only the reference oracle uses it.
    BruteForce,
}

impl fmt::Display for DriverKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DriverKind::AllPairs => "all-pairs",
            DriverKind::Complement => "complement",
            DriverKind::RangeScan => "range-scan",
            DriverKind::IeJoin => "iejoin",
            DriverKind::BruteForce => "brute-force",
        })
    }
}

impl Plan {
    /// Plans the detection of `constraint`.
    pub fn new(constraint: &KeyConstraint) -> Plan {
        let mut filters: [Vec<Filter>; 2] = [Vec::new(), Vec::new()];
        let mut equalities = Vec::new();
        let mut cross = Vec::new();
        for p in &constraint.predicates {
            let op = p.op.get();
            match p.right {
                KeyOperand::Const(key) => filters[index(p.tuple)].push(Filter {
                    slot: p.slot,
                    op,
                    rhs: FilterRhs::Const(key),
                }),
                KeyOperand::Column { tuple, slot } if tuple == p.tuple => filters[index(tuple)]
                    .push(Filter { slot: p.slot, op, rhs: FilterRhs::Slot(slot) }),
                KeyOperand::Column { slot, .. } => {
                    // `bind` puts t1 on the left of every cross predicate.
                    let c = if p.tuple == TupleVar::T1 {
                        Cross { left: p.slot, op, right: slot }
                    } else {
                        Cross { left: slot, op: op.flip(), right: p.slot }
                    };
                    if op == Operator::Eq {
                        equalities.push((c.left, c.right));
                    } else {
                        cross.push(c);
                    }
                }
            }
        }
        // The unordered enumeration pairs the rows of one group as both t1
        // and t2, so each equality must compare an attribute with itself:
        // `t1.a = t2.b & t1.b = t2.a` is symmetric, but a group's t1 rows
        // (keyed on (a, b)) and its t2 rows (keyed on (b, a)) differ, and
        // treating them as one set lost every edge (found by the detection
        // oracle, issue 14).
        let symmetric =
            is_symmetric(&constraint.predicates) && equalities.iter().all(|(l, r)| l == r);
        let order: Vec<usize> = (0..cross.len()).filter(|&i| cross[i].op.is_order()).collect();
        let (driver, used) = if order.len() >= 2 {
            (Driver::IeJoin(cross[order[0]], cross[order[1]]), vec![order[0], order[1]])
        } else if order.len() == 1 {
            (Driver::RangeScan(cross[order[0]]), vec![order[0]])
        } else if let Some(i) = best_complement(&cross) {
            (Driver::Complement(cross[i]), vec![i])
        } else {
            (Driver::AllPairs, vec![])
        };
        let residual =
            cross.iter().enumerate().filter(|(i, _)| !used.contains(i)).map(|(_, c)| *c).collect();
        Plan { filters, equalities, driver, residual, symmetric }
    }

    /// The user-facing summary.
    pub fn describe(&self, constraint: &KeyConstraint) -> DetectionPlan {
        DetectionPlan {
            constraint: constraint.id,
            display: constraint.display.clone(),
            partition_attributes: self.equalities.len(),
            driver: match self.driver {
                Driver::AllPairs => DriverKind::AllPairs,
                Driver::Complement(_) => DriverKind::Complement,
                Driver::RangeScan(_) => DriverKind::RangeScan,
                Driver::IeJoin(..) => DriverKind::IeJoin,
            },
        }
    }

    /// Slots a row must have non-NULL to play tuple `t` (a predicate with a
    /// NULL operand is not satisfied, SPEC §1).
    pub fn required_slots(&self, t: TupleVar) -> Vec<usize> {
        let mut slots: Vec<usize> = Vec::new();
        for f in &self.filters[index(t)] {
            slots.push(f.slot);
            if let FilterRhs::Slot(s) = f.rhs {
                slots.push(s);
            }
        }
        let side = |c: &Cross| if t == TupleVar::T1 { c.left } else { c.right };
        slots.extend(self.equalities.iter().map(|&(l, r)| if t == TupleVar::T1 { l } else { r }));
        slots.extend(self.residual.iter().map(side));
        match self.driver {
            Driver::AllPairs => {}
            Driver::Complement(c) | Driver::RangeScan(c) => slots.push(side(&c)),
            Driver::IeJoin(a, b) => slots.extend([side(&a), side(&b)]),
        }
        slots.sort_unstable();
        slots.dedup();
        slots
    }
}

/// How each constraint would be detected, as [`detect`](crate::detect)
/// reports it: for detectors that run the partition tasks elsewhere.
pub fn describe_plans(constraints: &[KeyConstraint]) -> Vec<DetectionPlan> {
    constraints.iter().map(|c| Plan::new(c).describe(c)).collect()
}

/// The plans of a brute-force run (`--brute-force`): every pair of rows
/// tested, whatever the constraint.
pub fn brute_force_plans(constraints: &[KeyConstraint]) -> Vec<DetectionPlan> {
    constraints
        .iter()
        .map(|c| DetectionPlan {
            constraint: c.id,
            display: c.display.clone(),
            partition_attributes: 0,
            driver: DriverKind::BruteForce,
        })
        .collect()
}

pub(crate) fn index(t: TupleVar) -> usize {
    match t {
        TupleVar::T1 => 0,
        TupleVar::T2 => 1,
    }
}

/// Prefers a `!=` on the same attribute of both tuples (the FD case), which
/// the symmetric path enumerates once per unordered pair.
fn best_complement(cross: &[Cross]) -> Option<usize> {
    let ne = |c: &&Cross| c.op == Operator::Ne;
    cross
        .iter()
        .position(|c| c.op == Operator::Ne && c.left == c.right)
        .or_else(|| cross.iter().position(|c| ne(&c)))
}

/// How many of `constraint`'s comparisons its detection checks pair by
/// pair, beyond the equalities it partitions on and the one or two
/// comparisons its driver indexes (`Plan::residual`; from its shape,
/// [`crate::compile_shapes`], before any row is read). With none, every
/// pair a driver looks at violates, so the work follows the conflicts and
/// a pair cap bounds it (`cap.rs`); with some, a driver may look at many
/// pairs that do not.
pub fn residual_predicates(constraint: &KeyConstraint) -> usize {
    Plan::new(constraint).residual.len()
}

/// Whether renaming t1 <-> t2 maps the predicate set onto itself.
fn is_symmetric(predicates: &[KeyPredicate]) -> bool {
    let (original, swapped) = orientations(predicates);
    original == swapped
}

/// For each constraint, false when an earlier one has the same conflict
/// edges (the same predicates, or the same with t1 and t2 swapped), so its
/// detection would only find them again.
pub(crate) fn distinct_edge_sets(constraints: &[KeyConstraint]) -> Vec<bool> {
    let mut seen = Vec::new();
    constraints
        .iter()
        .map(|c| {
            let class = edge_class(&c.predicates);
            let new = !seen.contains(&class);
            if new {
                seen.push(class);
            }
            new
        })
        .collect()
}

/// A key shared by exactly the constraints with the same conflict edges as
/// this one, up to renaming t1 <-> t2: `C` and `C` with t1, t2 swapped
/// violate on the same unordered pairs. DC discovery often outputs both
/// (Tax's `Salary > & Rate <` and `Salary < & Rate >`), and detecting the
/// second finds every edge again.
fn edge_class(predicates: &[KeyPredicate]) -> Vec<KeyPredicate> {
    let (original, swapped) = orientations(predicates);
    original.min(swapped)
}

/// The predicate set, normalised and sorted, as written and with t1, t2 swapped.
fn orientations(predicates: &[KeyPredicate]) -> (Vec<KeyPredicate>, Vec<KeyPredicate>) {
    let normal = |p: &KeyPredicate| -> KeyPredicate {
        match p.right {
            KeyOperand::Column { tuple, slot } if tuple != p.tuple && p.tuple == TupleVar::T2 => {
                KeyPredicate {
                    tuple: TupleVar::T1,
                    slot,
                    op: OrderedOperator::new(p.op.get().flip()),
                    right: KeyOperand::Column { tuple: TupleVar::T2, slot: p.slot },
                }
            }
            _ => *p,
        }
    };
    let swap = |p: &KeyPredicate| -> KeyPredicate {
        let right = match p.right {
            KeyOperand::Column { tuple, slot } => KeyOperand::Column { tuple: tuple.other(), slot },
            c => c,
        };
        normal(&KeyPredicate { tuple: p.tuple.other(), right, ..*p })
    };
    let mut original: Vec<KeyPredicate> = predicates.iter().map(normal).collect();
    let mut swapped: Vec<KeyPredicate> = predicates.iter().map(swap).collect();
    original.sort();
    original.dedup();
    swapped.sort();
    swapped.dedup();
    (original, swapped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::KeyPredicate;

    fn dc(predicates: Vec<KeyPredicate>) -> KeyConstraint {
        KeyConstraint { id: 0, display: String::new(), predicates }
    }

    #[test]
    fn a_constraint_with_t1_and_t2_swapped_is_not_detected_again() {
        let p = KeyPredicate::cross;
        // Tax's pair: State =, Salary >, Rate <; and its mirror.
        let salary = dc(vec![p(0, Operator::Eq, 0), p(1, Operator::Gt, 1), p(2, Operator::Lt, 2)]);
        let mirror = dc(vec![p(0, Operator::Eq, 0), p(1, Operator::Lt, 1), p(2, Operator::Gt, 2)]);
        // Written the other way round: t2.Salary < t1.Salary is salary's predicate.
        let reordered = dc(vec![
            p(2, Operator::Lt, 2),
            KeyPredicate {
                tuple: TupleVar::T2,
                right: KeyOperand::Column { tuple: TupleVar::T1, slot: 1 },
                ..p(1, Operator::Lt, 1)
            },
            p(0, Operator::Eq, 0),
        ]);
        // Not a mirror: both order comparisons the same way.
        let other = dc(vec![p(0, Operator::Eq, 0), p(1, Operator::Gt, 1), p(2, Operator::Gt, 2)]);
        let got = distinct_edge_sets(&[salary.clone(), mirror, other, reordered, salary]);
        assert_eq!(got, [true, false, true, false, false]);
    }
}
