//! Splitting detection into independent partition tasks, for workers.
//!
//! A constraint with equality predicates is split by a stable hash of its
//! equality keys: a pair can only violate when its t1 key equals its t2 key,
//! so both rows land in the same partition and each partition is complete
//! on its own. A constraint with no equality is split by t1 row range
//! instead (each task sees every row as t2), as for an inequality join.
//!
//! The hash is ours (SplitMix64 over the keys), not DataFusion's: task
//! assignment, and so the edges each worker emits, must not change with a
//! library version. The graph does not depend on the split at all.

use std::collections::BTreeMap;
use std::ops::Range;

use dpincon_graph::EdgeSink;
use roaring::RoaringBitmap;

use crate::algorithms::{Part, partition, run_group, sides};
use crate::compile::{KeyConstraint, KeyOperand, KeyPredicate};
use crate::plan::{Plan, distinct_edge_sets};
use crate::relation::{KeyColumn, Relation};

/// One independent piece of a constraint's detection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionTask {
    /// Index of the constraint in the compiled list.
    pub constraint: usize,
    /// Rows (tuple ids) the task needs, ascending.
    pub rows: Vec<u32>,
    /// Only rows with ids in this range may play t1 (range splitting).
    pub left: Option<Range<u32>>,
}

fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

fn partition_of(relation: &Relation, slots: &[usize], row: u32, parts: u64) -> u64 {
    let h = slots.iter().fold(0u64, |h, &s| mix(h ^ relation.column(s).key(row)));
    h % parts
}

/// Splits every constraint into exactly `parts` tasks (some may be empty).
pub fn plan_partitions(
    relation: &Relation,
    constraints: &[KeyConstraint],
    parts: usize,
) -> Vec<PartitionTask> {
    let parts = parts.max(1);
    let mut tasks = Vec::new();
    let distinct = distinct_edge_sets(constraints);
    for (index, constraint) in constraints.iter().enumerate() {
        let plan = Plan::new(constraint);
        // A constraint with an earlier one's edges gets empty tasks only.
        let (left, right) =
            if distinct[index] { sides(relation, &plan) } else { (Vec::new(), Vec::new()) };
        // Always `parts` tasks per constraint, empty ones included: the task
        // count is shown to clients as progress and must not depend on data.
        if left.is_empty() || right.is_empty() {
            for _ in 0..parts {
                tasks.push(PartitionTask { constraint: index, rows: vec![], left: Some(0..0) });
            }
            continue;
        }
        if plan.equalities.is_empty() {
            // Range split of t1; every task needs all t2 rows.
            let mut all: Vec<u32> = left.iter().chain(&right).copied().collect();
            all.sort_unstable();
            all.dedup();
            for k in 0..parts {
                let piece = &left[left.len() * k / parts..left.len() * (k + 1) / parts];
                let Some((first, last)) = piece.first().zip(piece.last()) else {
                    tasks.push(PartitionTask { constraint: index, rows: vec![], left: Some(0..0) });
                    continue;
                };
                let range = *first..*last + 1;
                let rows = all
                    .iter()
                    .copied()
                    .filter(|r| range.contains(r) || right.binary_search(r).is_ok())
                    .collect();
                tasks.push(PartitionTask { constraint: index, rows, left: Some(range) });
            }
            continue;
        }
        let lslots: Vec<usize> = plan.equalities.iter().map(|e| e.0).collect();
        let rslots: Vec<usize> = plan.equalities.iter().map(|e| e.1).collect();
        let mut buckets: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
        for &row in &left {
            buckets
                .entry(partition_of(relation, &lslots, row, parts as u64))
                .or_default()
                .push(row);
        }
        for &row in &right {
            buckets
                .entry(partition_of(relation, &rslots, row, parts as u64))
                .or_default()
                .push(row);
        }
        for bucket in 0..parts as u64 {
            let mut rows = buckets.remove(&bucket).unwrap_or_default();
            rows.sort_unstable();
            rows.dedup();
            tasks.push(PartitionTask { constraint: index, rows, left: None });
        }
    }
    tasks
}

/// The part of a relation one task needs: its rows and only the columns
/// its constraint compares, with the constraint rewritten to the new slots.
/// Row `i` of the result is tuple `task.rows[i]`.
pub fn task_relation(
    relation: &Relation,
    constraint: &KeyConstraint,
    rows: &[u32],
) -> (Relation, KeyConstraint) {
    let mut slots: Vec<usize> = Vec::new();
    let mut slot_of = |s: usize| match slots.iter().position(|&x| x == s) {
        Some(i) => i,
        None => {
            slots.push(s);
            slots.len() - 1
        }
    };
    let predicates: Vec<KeyPredicate> = constraint
        .predicates
        .iter()
        .map(|p| KeyPredicate {
            slot: slot_of(p.slot),
            right: match p.right {
                KeyOperand::Column { tuple, slot } => {
                    KeyOperand::Column { tuple, slot: slot_of(slot) }
                }
                c => c,
            },
            ..*p
        })
        .collect();
    let columns = slots
        .iter()
        .map(|&s| KeyColumn::from_keys(rows.iter().map(|&r| relation.column(s).get(r))))
        .collect();
    let local = Relation::from_slots(rows.len() as u32, columns);
    (local, KeyConstraint { predicates, ..constraint.clone() })
}

/// Runs one task: finds the violating pairs of `constraint` among the rows
/// of `relation`, where local row `i` is tuple `ids[i]`, and only tuples in
/// `left` may play t1. Emits pairs of tuple ids.
pub fn detect_partition(
    relation: &Relation,
    constraint: &KeyConstraint,
    ids: &[u32],
    left: Option<Range<u32>>,
    sink: &mut impl EdgeSink,
) {
    assert_eq!(ids.len(), relation.rows() as usize, "one tuple id per local row");
    // Rows are handed over as bitmaps (`add_upper`): local order must be
    // tuple order for a local row to stay a row of Λ.
    assert!(ids.is_sorted(), "tuple ids ascend with local rows");
    let mut plan = Plan::new(constraint);
    let (mut l, mut r) = sides(relation, &plan);
    if let Some(range) = &left {
        l.retain(|&i| range.contains(&ids[i as usize]));
        // Unordered enumeration needs both sides equal: fall back to ordered.
        plan.symmetric = false;
    }
    let mut global = Translate { ids, sink };
    for group in partition(relation, &plan, &mut l, &mut r) {
        let (left, right) = (&l[group.left], &r[group.right]);
        run_group(relation, &plan, left, right, plan.symmetric, Part::WHOLE, &mut global);
    }
}

struct Translate<'a, S> {
    ids: &'a [u32],
    sink: &'a mut S,
}

impl<S: EdgeSink> EdgeSink for Translate<'_, S> {
    fn add(&mut self, a: u32, b: u32) {
        self.sink.add(self.ids[a as usize], self.ids[b as usize]);
    }

    fn add_upper(&mut self, a: u32, upper: &RoaringBitmap) {
        let ids = self.ids;
        let global = RoaringBitmap::from_sorted_iter(upper.iter().map(|b| ids[b as usize]))
            .expect("tuple ids ascend with local rows");
        self.sink.add_upper(ids[a as usize], &global);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DetectOptions, detect};
    use dpincon_constraints::Operator;
    use dpincon_graph::{Edge, GraphBuilder};

    fn relation(rows: u32) -> Relation {
        let col = |f: &dyn Fn(u32) -> Option<u64>| KeyColumn::from_keys((0..rows).map(f));
        Relation::from_slots(
            rows,
            vec![
                col(&|r| Some(u64::from(r % 13))),
                col(&|r| (r % 17 != 0).then_some(u64::from(r * 7 % 5))),
                col(&|r| Some(u64::from(r * 31 % 101))),
                col(&|r| Some(u64::from(r * 17 % 89))),
            ],
        )
    }

    #[test]
    fn partition_tasks_find_exactly_the_graph() {
        let rel = relation(400);
        let dc = |id, predicates| KeyConstraint { id, display: String::new(), predicates };
        let constraints = vec![
            dc(
                0,
                vec![
                    KeyPredicate::cross(0, Operator::Eq, 0),
                    KeyPredicate::cross(1, Operator::Ne, 1),
                ],
            ),
            dc(
                1,
                vec![
                    KeyPredicate::cross(2, Operator::Lt, 2),
                    KeyPredicate::cross(3, Operator::Gt, 3),
                    KeyPredicate::cross(1, Operator::Eq, 1),
                ],
            ),
            dc(
                2,
                vec![
                    KeyPredicate::cross(2, Operator::Lt, 3),
                    KeyPredicate::cross(3, Operator::Lt, 2),
                ],
            ),
            dc(3, vec![KeyPredicate::cross(0, Operator::Eq, 1)]),
        ];
        let want: Vec<Edge> = detect(&rel, &constraints, DetectOptions::with_threads(1))
            .unwrap()
            .graph
            .edges()
            .collect();
        assert!(want.len() > 1000);
        for parts in [1, 3, 7] {
            let tasks = plan_partitions(&rel, &constraints, parts);
            let mut builder = GraphBuilder::new(rel.rows());
            for task in &tasks {
                let (local, c) = task_relation(&rel, &constraints[task.constraint], &task.rows);
                detect_partition(&local, &c, &task.rows, task.left.clone(), &mut builder);
            }
            let got: Vec<Edge> = builder.finish().edges().collect();
            assert_eq!(got, want, "{parts} partitions");
            assert_eq!(
                tasks.len(),
                parts * constraints.len(),
                "the task count is data-independent"
            );
        }
    }
}
