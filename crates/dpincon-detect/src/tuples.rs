//! Dense ids of the rows' value tuples on a list of columns: rows with
//! equal tuples get equal ids. Where only group and class sizes matter
//! (the degree bound's max frequencies, the FD classes), counting by id
//! replaces a sort of the rows per attribute set: one hash pass per column
//! and one per extra column of a set, each prefix of a set computed once.

use std::collections::HashMap;
use std::sync::Arc;

use crate::relation::Relation;

/// The id of a row with a NULL in the tuple's columns: it has no tuple.
pub(crate) const NO_TUPLE: u32 = u32::MAX;

/// One id per row (`NO_TUPLE` for rows with a NULL), ids `0..distinct`.
#[derive(Debug)]
pub(crate) struct TupleIds {
    pub(crate) ids: Vec<u32>,
    pub(crate) distinct: u32,
}

impl TupleIds {
    /// Rows per id.
    pub(crate) fn counts(&self) -> Vec<u64> {
        let mut counts = vec![0u64; self.distinct as usize];
        for &id in self.ids.iter().filter(|&&id| id != NO_TUPLE) {
            counts[id as usize] += 1;
        }
        counts
    }

    /// Rows that have a tuple (no NULL in its columns).
    pub(crate) fn rows(&self) -> u64 {
        self.ids.iter().filter(|&&id| id != NO_TUPLE).count() as u64
    }

    /// Ids of the rows' keys, NULL rows none.
    fn of_keys(rows: u32, key: impl Fn(u32) -> Option<u64>) -> TupleIds {
        let mut dense = HashMap::<u64, u32, foldhash::fast::RandomState>::default();
        let ids = (0..rows)
            .map(|r| match key(r) {
                None => NO_TUPLE,
                Some(k) => {
                    let next = dense.len() as u32;
                    *dense.entry(k).or_insert(next)
                }
            })
            .collect();
        TupleIds { ids, distinct: dense.len() as u32 }
    }

    /// Ids of the pairs (self's tuple, other's tuple): the tuple on both
    /// column lists.
    fn pair(&self, other: &TupleIds) -> TupleIds {
        let (a, b) = (&self.ids, &other.ids);
        Self::of_keys(a.len() as u32, |r| {
            let (x, y) = (a[r as usize], b[r as usize]);
            (x != NO_TUPLE && y != NO_TUPLE).then(|| u64::from(x) << 32 | u64::from(y))
        })
    }
}

/// Tuple ids of a relation by column list, each prefix of a list computed
/// once: sets sharing a first column (Tax's `State`, `State, Salary`, ...)
/// share its pass.
pub(crate) struct TupleIndex<'a> {
    relation: &'a Relation,
    memo: HashMap<Vec<usize>, Arc<TupleIds>>,
}

impl<'a> TupleIndex<'a> {
    pub(crate) fn new(relation: &'a Relation) -> Self {
        TupleIndex { relation, memo: HashMap::new() }
    }

    /// The rows' tuple ids on `slots` if any (none: one tuple for all).
    pub(crate) fn ids_of(&mut self, slots: &[usize]) -> Option<Arc<TupleIds>> {
        (!slots.is_empty()).then(|| self.ids(slots))
    }

    /// The rows' tuple ids on `slots`, in that order (a non-empty list).
    pub(crate) fn ids(&mut self, slots: &[usize]) -> Arc<TupleIds> {
        if let Some(ids) = self.memo.get(slots) {
            return ids.clone();
        }
        let ids = match slots {
            [] => unreachable!("a tuple of no column"),
            [slot] => {
                let column = self.relation.column(*slot);
                TupleIds::of_keys(self.relation.rows(), |r| column.get(r))
            }
            [prefix @ .., last] => self.ids(prefix).pair(&self.ids(&[*last])),
        };
        let ids = Arc::new(ids);
        self.memo.insert(slots.to_vec(), ids.clone());
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::relation::KeyColumn;

    #[test]
    fn ids_are_equal_exactly_when_tuples_are_and_null_rows_have_none() {
        // Three columns of small keys with NULLs: every pair of rows, on
        // every column list, shares an id iff it shares the tuple.
        let mut state = 7u64;
        let mut next = move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            state >> 33
        };
        let rows: Vec<[Option<u64>; 3]> =
            (0..60).map(|_| [0, 1, 2].map(|_| Some(next() % 4).filter(|&k| k != 3))).collect();
        let mut relation = Relation::new(rows.len() as u32);
        for slot in 0..3 {
            let column = KeyColumn::from_keys(rows.iter().map(|t| t[slot]));
            relation.insert_column(slot, dpincon_constraints::Domain::Int, column);
        }
        let mut index = TupleIndex::new(&relation);
        for slots in [vec![0], vec![2], vec![0, 1], vec![1, 0], vec![0, 1, 2], vec![2, 0]] {
            let ids = index.ids(&slots);
            let tuple = |r: usize| slots.iter().map(|&s| rows[r][s]).collect::<Option<Vec<_>>>();
            for a in 0..rows.len() {
                assert_eq!(ids.ids[a] == NO_TUPLE, tuple(a).is_none(), "{slots:?} row {a}");
                for b in 0..rows.len() {
                    let same = tuple(a).is_some() && tuple(a) == tuple(b);
                    assert_eq!(ids.ids[a] != NO_TUPLE && ids.ids[a] == ids.ids[b], same);
                }
            }
            let counted: u64 = ids.counts().iter().sum();
            assert_eq!(counted, ids.rows());
            assert!(ids.counts().iter().all(|&c| c > 0), "ids are dense");
        }
    }
}
