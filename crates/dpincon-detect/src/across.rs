//! Detection of the pairs across two row sets only: a cluster's pair task
//! of two row blocks for the constraints without equality
//! (`dpincon-ballista`'s `detect::blocks`), which would otherwise find
//! each block's own pairs again, as the blocks' own tasks do, and drop
//! them.
//!
//! A constraint without equality runs its driver on t1 rows of one side
//! and t2 rows of the other, then the other way round; one way is enough
//! when the constraint is symmetric (renaming t1 ↔ t2 maps it onto
//! itself, so a pair violates one way iff it does the other). A
//! constraint with equality (never in such a task) and the brute-force
//! oracle run whole, their pairs kept only across.

use dpincon_graph::{BuilderParts, EdgeSink};

use crate::DetectError;
use crate::algorithms::{Part, partition, run_group, sides};
use crate::cap::{Capped, PairCap};
use crate::compile::KeyConstraint;
use crate::exec::{DetectOptions, brute_force, new_builder};
use crate::plan::{DetectionPlan, Plan, brute_force_plans, distinct_edge_sets};
use crate::relation::Relation;

/// A sink passing on the pairs with one row on each side.
struct Across<'a, S> {
    sink: &'a mut S,
    side: &'a dyn Fn(u32) -> bool,
}

impl<S: EdgeSink> EdgeSink for Across<'_, S> {
    fn add(&mut self, a: u32, b: u32) {
        if (self.side)(a) != (self.side)(b) {
            self.sink.add(a, b);
        }
    }
}

/// As [`crate::detect_parts`], keeping only the pairs with one row where
/// `side` holds and one where it does not (on one thread).
pub fn detect_parts_across(
    relation: &Relation,
    constraints: &[KeyConstraint],
    options: DetectOptions,
    side: &dyn Fn(u32) -> bool,
) -> Result<(BuilderParts, Vec<DetectionPlan>), DetectError> {
    let mut builder = new_builder(relation.rows(), &options)?;
    if options.brute_force {
        let mut across = Across { sink: &mut builder, side };
        for c in constraints {
            brute_force(relation, c, &mut across);
        }
        return Ok((builder.into_parts(), brute_force_plans(constraints)));
    }
    let plans: Vec<Plan> = constraints.iter().map(Plan::new).collect();
    // Every pair a driver emits counts on the cap, kept or not: each is a
    // violation among the task's rows (`cap.rs`).
    let cap = PairCap::new(options.max_pairs);
    for (plan, _) in plans.iter().zip(distinct_edge_sets(constraints)).filter(|p| p.1) {
        let (mut left, mut right) = sides(relation, plan);
        if !plan.equalities.is_empty() {
            let mut across = Across { sink: &mut builder, side };
            let mut sink = Capped::new(&mut across, &cap);
            for g in partition(relation, plan, &mut left, &mut right) {
                let right = if plan.symmetric { &left } else { &right };
                let (l, r) = (&left[g.left], &right[g.right]);
                run_group(relation, plan, l, r, plan.symmetric, Part::WHOLE, &mut sink);
            }
        } else {
            // No equality: every row is a candidate partner; sides keep the
            // rows' ascending order, as the whole run would see them.
            let (l_in, l_out): (Vec<u32>, Vec<u32>) = left.iter().partition(|&&r| side(r));
            let (r_in, r_out): (Vec<u32>, Vec<u32>) = right.iter().partition(|&&r| side(r));
            let mut sink = Capped::new(&mut builder, &cap);
            run_group(relation, plan, &l_in, &r_out, false, Part::WHOLE, &mut sink);
            if !plan.symmetric {
                run_group(relation, plan, &l_out, &r_in, false, Part::WHOLE, &mut sink);
            }
        }
        cap.check()?;
    }
    let plans = plans.iter().zip(constraints).map(|(p, c)| p.describe(c)).collect();
    Ok((builder.into_parts(), plans))
}

#[cfg(test)]
mod tests {
    use dpincon_constraints::Operator;
    use dpincon_graph::{Edge, GraphBuilder};

    use super::*;
    use crate::compile::KeyPredicate;
    use crate::exec::detect;
    use crate::relation::KeyColumn;

    /// The pairs across the two sides are the whole detection's pairs
    /// across them, for order DCs (asymmetric and symmetric), one
    /// inequality, an FD and a key, planned and brute force.
    #[test]
    fn pairs_across_equal_the_whole_detections_pairs_across() {
        let rows = 400u32;
        let mut state = 11u64;
        let mut next = move |m: u64| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) % m
        };
        let mut col = |m: u64| KeyColumn::from_keys((0..rows).map(|_| Some(next(m))));
        let relation = Relation::from_slots(rows, vec![col(50), col(50), col(7), col(400)]);
        let dc = |id, predicates| KeyConstraint { id, display: String::new(), predicates };
        let cross = KeyPredicate::cross;
        let constraints = [
            dc(0, vec![cross(0, Operator::Gt, 0), cross(1, Operator::Lt, 1)]),
            dc(1, vec![cross(0, Operator::Lt, 0), cross(1, Operator::Gt, 1)]),
            dc(2, vec![cross(3, Operator::Gt, 1)]),
            dc(3, vec![cross(2, Operator::Eq, 2), cross(0, Operator::Ne, 0)]),
            dc(4, vec![cross(3, Operator::Eq, 3)]),
        ];
        let side = |r: u32| r % 3 == 1 || r > 300;
        for brute_force in [false, true] {
            let options = DetectOptions { threads: 1, brute_force, ..DetectOptions::default() };
            let whole = detect(&relation, &constraints, options).unwrap().graph;
            let want: Vec<Edge> = whole.edges().filter(|e| side(e.u) != side(e.v)).collect();
            assert!(want.len() > 1000, "a test worth running: {}", want.len());
            let (parts, _) = detect_parts_across(&relation, &constraints, options, &side).unwrap();
            let rebuilt = GraphBuilder::new(rows);
            rebuilt.add_rows(&parts.records).unwrap();
            for (group, shares) in &parts.groups {
                rebuilt.add_shares(group, shares).unwrap();
            }
            let got: Vec<Edge> = rebuilt.finish().edges().collect();
            assert_eq!(got, want, "brute force {brute_force}");
        }
    }
}
