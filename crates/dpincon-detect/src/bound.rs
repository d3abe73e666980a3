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
}

/// The slots of σ's `t1.A = t2.A` predicates (X_σ), empty when σ has none.
pub fn equality_attributes(constraint: &KeyConstraint) -> BTreeSet<usize> {
    constraint
        .predicates
        .iter()
        .filter(|p| p.op.get() == dpincon_constraints::Operator::Eq)
        .filter_map(|p| match p.right {
            KeyOperand::Column { tuple, slot } if tuple != p.tuple && slot == p.slot => Some(slot),
            _ => None,
        })
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
    EqualityFrequencies::from_maxima(&sets, max_frequencies, unbounded)
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
        EqualityFrequencies { max_frequencies, minimal_max_frequencies, unbounded }
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
        };
        assert_eq!(f, expected);
        let f = equality_frequencies(&r, &[ineq, cross]);
        let expected = EqualityFrequencies {
            max_frequencies: vec![],
            minimal_max_frequencies: vec![],
            unbounded: true,
        };
        assert_eq!(f, expected);
    }
}
