//! Complete multipartite conflict groups: how FD and key groups reach a sink.
//!
//! Under an FD `X → A`, the rows agreeing on `X` conflict exactly when they
//! differ on `A` (SPEC §2): the group's conflict graph is complete
//! multipartite, one part per value of `A`. A key is the case where every
//! row is a part of its own. Handing a sink the whole group, rather than
//! its edges, lets a sink that stores rows build each row's adjacency once,
//! after every constraint has been detected (`freezer.rs`), instead of
//! merging one bitmap per constraint into it.

use std::ops::Range;

use crate::{EdgeSink, PieceError};

/// A row of a group with neighbours above it, and where they start
/// ([`Multipartite::uppers`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UpperStart {
    /// The row.
    pub row: u32,
    class: u32,
    /// Where its upper rows start in the rows it reads.
    at: u32,
}

/// The rows of one group, split into classes (parts) whose rows do not
/// conflict with each other and conflict with every row of another class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Multipartite {
    /// The rows sorted on (class, id): the order shares are cut in.
    by_class: Vec<u32>,
    /// Class `c` is `by_class[class_start[c]..class_start[c + 1]]`.
    class_start: Vec<u32>,
    /// The rows ascending, and the class of each.
    by_id: Vec<u32>,
    class_of: Vec<u32>,
    /// The rows outside the class holding more than half the group,
    /// ascending: its rows' upper rows are read from here, so that no
    /// row scans the many rows of its own class.
    big: Option<(u32, Vec<u32>)>,
}

impl Multipartite {
    /// A group from its classes, each a run of rows ascending. Empty
    /// classes are dropped; the rows must be distinct.
    pub fn new<'a>(classes: impl IntoIterator<Item = &'a [u32]>) -> Self {
        let group = Self::new_unchecked(classes.into_iter().inspect(|class| {
            debug_assert!(class.is_sorted(), "a class's rows ascend");
        }));
        debug_assert!(group.by_id.windows(2).all(|w| w[0] < w[1]), "rows are distinct");
        group
    }

    fn new_unchecked<'a>(classes: impl IntoIterator<Item = &'a [u32]>) -> Self {
        let mut by_class = Vec::new();
        let mut class_start = vec![0u32];
        for class in classes.into_iter().filter(|c| !c.is_empty()) {
            by_class.extend_from_slice(class);
            class_start.push(by_class.len() as u32);
        }
        let classes = class_start.len() - 1;
        let mut keyed: Vec<(u32, u32)> = Vec::with_capacity(by_class.len());
        for c in 0..classes {
            let rows = &by_class[class_start[c] as usize..class_start[c + 1] as usize];
            keyed.extend(rows.iter().map(|&r| (r, c as u32)));
        }
        keyed.sort_unstable();
        let (by_id, class_of): (Vec<u32>, Vec<u32>) = keyed.into_iter().unzip();
        let big = (0..classes)
            .find(|&c| 2 * (class_start[c + 1] - class_start[c]) as usize > by_id.len())
            .map(|c| {
                let c = c as u32;
                let rest = by_id.iter().zip(&class_of).filter(|p| *p.1 != c).map(|p| *p.0);
                (c, rest.collect())
            });
        Multipartite { by_class, class_start, by_id, class_of, big }
    }

    /// A group from classes that came from another process: each class's
    /// rows strictly ascending, every row distinct and below `nodes`;
    /// else why not. Empty classes are dropped.
    pub fn try_new(classes: &[Vec<u32>], nodes: u32) -> Result<Self, PieceError> {
        for class in classes {
            if !class.windows(2).all(|w| w[0] < w[1]) {
                return Err(PieceError::ClassOutOfOrder);
            }
            if class.last().is_some_and(|&r| r >= nodes) {
                return Err(PieceError::GroupRowOutside { nodes });
            }
        }
        let group = Self::new_unchecked(classes.iter().map(Vec::as_slice));
        if !group.by_id.windows(2).all(|w| w[0] < w[1]) {
            return Err(PieceError::RowInTwoClasses);
        }
        Ok(group)
    }

    /// The classes, each its rows ascending, in the order the group was
    /// made with (the (class, id) order shares are cut in).
    pub fn classes(&self) -> impl ExactSizeIterator<Item = &[u32]> + Clone {
        self.class_start.windows(2).map(|w| &self.by_class[w[0] as usize..w[1] as usize])
    }

    /// Its pairs: rows of different classes, (S² − Σ cᵢ²) / 2 for S rows
    /// in classes of cᵢ.
    pub fn pairs(&self) -> u64 {
        let rows = self.by_class.len() as u64;
        let within: u64 = self.class_start.windows(2).map(|w| u64::from(w[1] - w[0]).pow(2)).sum();
        (rows * rows - within) / 2
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.by_class.len()
    }

    /// True if the group has no row.
    pub fn is_empty(&self) -> bool {
        self.by_class.is_empty()
    }

    /// The row at position `i` of the (class, id) order, and its class.
    pub fn row(&self, i: usize) -> (u32, u32) {
        let class = self.class_start.partition_point(|&s| s as usize <= i) - 1;
        (self.by_class[i], class as u32)
    }

    /// The rows at positions `share` of the (class, id) order that have
    /// neighbours above them, each with where those start
    /// ([`Multipartite::for_each_upper`]). A class's rows ascend, so the
    /// starts only move forward: found in order here, group by group, the
    /// freeze reads them without a search in a group far from the cache
    /// (at 10^6 Tax rows, 5.1M searches in 80 MB of groups; a third of the
    /// rows, a big class's last ones, have no neighbour above).
    pub fn uppers(&self, share: Range<usize>) -> Vec<UpperStart> {
        let mut out = Vec::new();
        let mut i = share.start;
        while i < share.end {
            let (_, class) = self.row(i);
            let end = (self.class_start[class as usize + 1] as usize).min(share.end);
            let rows = &self.by_class[i..end];
            let (ids, other_last) = match &self.big {
                Some((big, rest)) if *big == class => (rest.as_slice(), rest.last().copied()),
                _ => {
                    // The last row of another class: none above it.
                    let last = self.by_id.iter().zip(&self.class_of).rev().find(|p| *p.1 != class);
                    (self.by_id.as_slice(), last.map(|p| *p.0))
                }
            };
            let mut at = 0;
            for &row in rows.iter().take_while(|&&r| other_last.is_some_and(|l| l > r)) {
                at += ids[at..].partition_point(|&v| v <= row);
                out.push(UpperStart { row, class, at: at as u32 });
            }
            i = end;
        }
        out
    }

    /// Calls `f` with the neighbours above a row in ascending order: the
    /// group's rows of other classes. Costs the group's rows above it, or,
    /// for rows of the big class, only the neighbours themselves.
    pub fn for_each_upper(&self, start: UpperStart, mut f: impl FnMut(u32)) {
        let at = start.at as usize;
        match &self.big {
            Some((big, rest)) if *big == start.class => rest[at..].iter().for_each(|&v| f(v)),
            _ => {
                for (&v, &c) in self.by_id[at..].iter().zip(&self.class_of[at..]) {
                    if c != start.class {
                        f(v);
                    }
                }
            }
        }
    }

    /// Hands `sink` the upper rows of the rows at positions `share` of the
    /// (class, id) order, one row at a time ([`EdgeSink::add_upper`]).
    pub fn emit_rows(&self, share: Range<usize>, sink: &mut (impl EdgeSink + ?Sized)) {
        let mut upper = Vec::new();
        for start in self.uppers(share) {
            upper.clear();
            self.for_each_upper(start, |v| upper.push(v));
            sink.add_upper(start.row, &upper);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Edge;

    /// The pairs of the definition: rows of different classes.
    fn definition(classes: &[Vec<u32>]) -> Vec<Edge> {
        let mut want = Vec::new();
        for (i, a) in classes.iter().enumerate() {
            for b in &classes[i + 1..] {
                want.extend(a.iter().flat_map(|&x| b.iter().map(move |&y| Edge::new(x, y))));
            }
        }
        want.sort_unstable();
        want
    }

    fn groups() -> Vec<Vec<Vec<u32>>> {
        vec![
            vec![vec![1, 5, 9, 40], vec![2, 3], vec![7], vec![0, 100]],
            // A big class (more than half the rows), first and last.
            vec![(10..40).collect(), vec![5, 17_000], vec![41]],
            vec![vec![3], vec![8], (100..200).step_by(3).collect()],
            vec![(0..50).collect()],
            vec![vec![6], vec![4]],
        ]
    }

    #[test]
    fn upper_rows_and_emitted_rows_equal_the_definition() {
        for classes in groups() {
            let group = Multipartite::new(classes.iter().map(Vec::as_slice));
            let want = definition(&classes);
            assert_eq!(group.pairs(), want.len() as u64, "{classes:?}");
            for of in 1..=5 {
                let mut got = Vec::new();
                let mut starts = Vec::new();
                for k in 0..of {
                    starts.extend(group.uppers(group.len() * k / of..group.len() * (k + 1) / of));
                }
                for &start in &starts {
                    let (row, mut count) = (start.row, 0);
                    let mut last = row;
                    group.for_each_upper(start, |v| {
                        assert!(v > last, "ascending and above the row");
                        (last, count) = (v, count + 1);
                        got.push(Edge::new(row, v));
                    });
                    assert!(count > 0, "a row without upper rows is left out");
                }
                got.sort_unstable();
                assert_eq!(got, want, "{of} shares of {classes:?}");
            }
            for of in 1..=5 {
                let mut emitted: Vec<Edge> = Vec::new();
                for k in 0..of {
                    let share = group.len() * k / of..group.len() * (k + 1) / of;
                    group.emit_rows(share, &mut emitted);
                }
                emitted.sort_unstable();
                assert_eq!(emitted, want, "{of} shares of {classes:?}");
            }
        }
    }

    #[test]
    fn a_group_of_singletons_is_a_keys_clique() {
        let rows = [2u32, 4, 9, 30];
        let group = Multipartite::new(rows.chunks(1));
        let mut got: Vec<Edge> = Vec::new();
        group.emit_rows(0..group.len(), &mut got);
        got.sort_unstable();
        let want: Vec<Edge> =
            (0..4).flat_map(|i| (i + 1..4).map(move |j| Edge::new(rows[i], rows[j]))).collect();
        assert_eq!(got, want);
    }
}
