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
//!
//! A DC whose equalities are across two attributes (`t1.L = t2.R`, a
//! [`CrossEquality`]) pairs a row t with rows s where s.R = t.L (t as t1)
//! or s.L = t.R (t as t2): deg_σ(t) ≤ maxfreq_R + maxfreq_L, each again of
//! sensitivity 1. Those two terms add to the sum with no −1 (t may or may
//! not be in its own group), once per distinct form (a DC and its mirror
//! reach the same two groups).

use std::collections::{BTreeMap, BTreeSet};

use crate::chains::chain_cover_in;
use crate::compile::KeyConstraint;
use crate::relation::Relation;
use crate::sets::{ListedRows, all_fd_shaped, fd_sets, order_pairs};
use crate::shape::{CrossEquality, cross_equality, equality_attributes};
use crate::tuples::{NO_TUPLE, TupleIds, TupleIndex};

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
    /// maxfreq of each side of each distinct [`CrossEquality`] (in
    /// [`cross_equalities`] order): its left side's, then its right's.
    pub cross_max_frequencies: Vec<u64>,
    /// Some constraint has neither a predicate `t1.A = t2.A` nor a cross
    /// equality `t1.L = t2.R`.
    pub unbounded: bool,
    /// For each X with FD-shaped constraints X → B (see [`fd_classes`]), in
    /// the order of X: their conflict graph's classes.
    pub fd_classes: Vec<ConflictClasses>,
    /// Every constraint is a key or an FD (`fd_shape`), or has exactly a
    /// key's equality set, so that its edges are the key's
    /// ([`crate::all_fd_shaped`]).
    pub all_fd_shaped: bool,
    /// For each distinct order pair ([`crate::order_pair`]), in their
    /// order: the minimum cover of its own graph ([`crate::chain_cover`]).
    /// With `fd_classes`, the covers of the sets [`crate::cover_sets`]
    /// describes from the constraints alone.
    pub chain_covers: Vec<u64>,
}

/// Computes [`EqualityFrequencies`]: private values, to be released with
/// noise. The classes list the rows `listed` asks for
/// ([`ConflictClasses::leading`]; [`ListedRows::of`] says which the
/// release reads).
pub fn equality_frequencies(
    relation: &Relation,
    constraints: &[KeyConstraint],
    listed: ListedRows,
) -> EqualityFrequencies {
    let sets: BTreeSet<Vec<usize>> = constraints
        .iter()
        .map(equality_attributes)
        .filter(|x| !x.is_empty())
        .map(|x| x.into_iter().collect())
        .collect();
    let mut index = TupleIndex::new(relation);
    let max_frequencies: Vec<u64> =
        sets.iter().map(|slots| max_frequency(&mut index, slots)).collect();
    let cross_max_frequencies: Vec<u64> =
        cross_sides(constraints).iter().map(|slots| max_frequency(&mut index, slots)).collect();
    let sets: Vec<Vec<usize>> = sets.into_iter().collect();
    let fds = fd_sets(constraints);
    // The order pairs' chains on a thread of their own, beside the
    // classes (a sort each: at 10^6 Tax rows about as long as the classes).
    let pairs: Vec<_> =
        order_pairs(constraints).into_iter().map(|p| (index.ids_of(&p.x), p)).collect();
    let (fd_classes, chain_covers) = std::thread::scope(|scope| {
        let chains = scope.spawn(|| {
            pairs.iter().map(|(groups, p)| chain_cover_in(relation, p, groups.as_deref())).collect()
        });
        let classes =
            fds.iter().map(|(x, bs)| classes_of(&mut index, x, bs.as_ref(), listed)).collect();
        (classes, chains.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
    });
    EqualityFrequencies {
        fd_classes,
        all_fd_shaped: all_fd_shaped(constraints),
        chain_covers,
        cross_max_frequencies,
        ..EqualityFrequencies::from_maxima(&sets, max_frequencies, degrees_unbounded(constraints))
    }
}

/// maxfreq over `slots` of the rows with none of them NULL (0 without rows).
fn max_frequency(index: &mut TupleIndex<'_>, slots: &[usize]) -> u64 {
    index.ids(slots).counts().into_iter().max().unwrap_or(0)
}

/// maxfreq of one side of a [`CrossEquality`], counted alone (a cluster's
/// group of that side).
pub fn side_max_frequency(relation: &Relation, slots: &[usize]) -> u64 {
    max_frequency(&mut TupleIndex::new(relation), slots)
}

/// Some constraint has neither a `t1.A = t2.A` nor a cross equality: no
/// frequency bounds its degrees ([`EqualityFrequencies::unbounded`]).
pub fn degrees_unbounded(constraints: &[KeyConstraint]) -> bool {
    constraints.iter().any(|c| equality_attributes(c).is_empty() && cross_equality(c).is_none())
}

/// The distinct [`CrossEquality`] forms among the constraints, sorted, each
/// with the id of the first constraint of that form.
pub fn cross_equalities(constraints: &[KeyConstraint]) -> Vec<(CrossEquality, usize)> {
    let mut forms: BTreeMap<CrossEquality, usize> = BTreeMap::new();
    for c in constraints {
        if let Some(form) = cross_equality(c) {
            forms.entry(form).or_insert(c.id);
        }
    }
    forms.into_iter().collect()
}

/// The slot sets whose maxfreq [`EqualityFrequencies::cross_max_frequencies`]
/// holds, in its order: each form's left side, then its right.
fn cross_sides(constraints: &[KeyConstraint]) -> Vec<Vec<usize>> {
    cross_equalities(constraints).iter().flat_map(|(c, _)| [c.left(), c.right()]).collect()
}

/// The classes of one X's keys and FDs X → B1, …, Bm (issue 28): within a
/// group of rows agreeing on X (no NULL), two rows with no NULL B conflict
/// iff their tuples (B1, …, Bm) differ, so those rows form a complete
/// multipartite graph by that tuple, its *classes*. A key (no B: every two
/// rows of a group conflict) makes each row its own class. Two statistics
/// of G follow, each a lower bound exact without NULLs:
///
/// - I_R: a group's minimum cover is its rows minus its largest class, so
///   [`ConflictClasses::cover`] is the minimum cover of an induced subgraph
///   of G, at most I_R. Adding or removing one row changes one group by one
///   row, so the sum by at most 1 (node sensitivity 1, like the LP).
/// - I_P: every row of a group with two classes or more conflicts, so
///   [`ConflictClasses::capped`]`(τ)` = Σ over such groups and their classes
///   of min(class, τ) is at most I_P, equal to it for τ ≥ the largest
///   class. One row moves it by at most τ + 1: it makes a pure group of
///   one class impure (min(c, τ) + 1), or moves one class by one row.
///
/// `max_class` (over every group, pure ones too), `null_rows` and
/// `excess` each move by at most 1: they say privately how large τ must
/// be, what NULLs left out and what a small τ would cut. `excess` sums
/// over every class, pure groups' too, because a pure group's one class
/// joining the impure ones would move an impure-only sum by its size.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ConflictClasses {
    /// X's constraints include a key: every row is its own class.
    pub key: bool,
    /// `cover` is the minimum cover of X's constraints' own graph, not only
    /// a lower bound: a key (a clique per group), or FDs of one B (a row
    /// with B NULL conflicts with none). With two B or more, a row with
    /// one B NULL can still conflict outside the classes; deleting those
    /// rows leaves the classes, so the minimum cover is at most `cover +
    /// null_rows`. Public: it depends on the constraints only.
    pub exact: bool,
    /// Σ over groups of (rows − largest class): a lower bound on I_R.
    pub cover: u64,
    /// The largest class in any group (1 under a key, 0 without rows).
    pub max_class: u64,
    /// Rows with X but some B NULL, left out of the classes (0 under a key).
    pub null_rows: u64,
    /// (class size, classes of that size) over the groups of two classes
    /// or more, by size.
    pub sizes: Vec<(u64, u64)>,
    /// Σ over every class, pure groups' too, of max(class − [`EXCESS_FROM`],
    /// 0) (0 under a key). One row moves one class by one row, a NULL-B
    /// row none: sensitivity 1. For τ ≥ [`EXCESS_FROM`], I_P ≤ capped(τ) +
    /// excess + (τ + 1)·null_rows (proof in `fd_classes`).
    pub excess: u64,
    /// When asked for ([`ListedRows`]): the rows, ascending, among the
    /// first [`EXCESS_FROM`] of their class (by row order) in a group of two
    /// classes or more. Every one conflicts; their union over the X is
    /// I_P's leading count (`crate::leading`). Under a key, every row of a
    /// group of two or more: the key's conflicting rows, which I_R's key
    /// partition bound leaves out of the rest of G.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Vec::is_empty"))]
    pub leading: Vec<u32>,
    /// When asked for ([`ListedRows::deleted`]): the rows, ascending, that
    /// X's *margin cover* deletes ([`crate::union_cover`]). Under a key,
    /// every row of a group but its first; else every NULL-B row when X
    /// has several B, and in each group of two classes or more every row
    /// but the first min(a₁, [`KEEP_PER_MARGIN`]·(a₁ − a₂)) of its largest
    /// class (a₁ > a₂ the two largest classes; none kept on a tie).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Vec::is_empty"))]
    pub deleted: Vec<u32>,
}

/// The small τ whose [`ConflictClasses::excess`] is counted: duplicated
/// keys' classes are a row or two (exact copies), so τ = 2 keeps most of
/// them whole (dpincon-release, "I_P by class count").
pub const EXCESS_FROM: u64 = 2;

/// The margin cover keeps this many rows of a group's largest class per
/// row it leads the second by ([`ConflictClasses::deleted`]): 2 keeps the
/// whole class wherever it is at least twice the second (one wrong cell's
/// conflicts), and a row moves the kept rows by at most 2 (`union_cover`).
pub const KEEP_PER_MARGIN: u64 = 2;

impl ConflictClasses {
    /// Σ over impure groups' classes of min(class, τ): at most I_P, with node
    /// sensitivity τ + 1 (type docs).
    pub fn capped(&self, tau: u64) -> u64 {
        self.sizes.iter().map(|&(size, count)| size.min(tau).saturating_mul(count)).sum()
    }

    /// Adds another partition's classes of the same X (a group never spans
    /// two hash partitions of X, so every statistic adds up).
    pub fn absorb(&mut self, other: &ConflictClasses) {
        self.key |= other.key;
        self.exact |= other.exact;
        self.cover += other.cover;
        self.max_class = self.max_class.max(other.max_class);
        self.null_rows += other.null_rows;
        self.excess += other.excess;
        let mut sizes: std::collections::BTreeMap<u64, u64> = self.sizes.iter().copied().collect();
        for &(size, count) in &other.sizes {
            *sizes.entry(size).or_default() += count;
        }
        self.sizes = sizes.into_iter().collect();
        // Another partition's rows: disjoint, so the merge keeps them
        // distinct. Two ascending runs: the stable sort merges them in one
        // pass, where an unstable sort would sort the whole list again.
        for (mine, theirs) in
            [(&mut self.leading, &other.leading), (&mut self.deleted, &other.deleted)]
        {
            mine.extend_from_slice(theirs);
            mine.sort();
        }
    }
}

/// How many distinct rows the lists hold together (the leading count's
/// union over X, the union cover's).
pub(crate) fn distinct_rows<'a>(lists: impl Iterator<Item = &'a [u32]>) -> u64 {
    let mut rows: Vec<u32> = lists.flatten().copied().collect();
    rows.sort_unstable();
    rows.dedup();
    rows.len() as u64
}

/// [`ConflictClasses`] of X → `bs` (`None`: a key) over `relation`.
///
/// The excess bound: a problematic row lies in a group with two non-NULL
/// classes, or in a group with one and a NULL-B row. In the first kind,
/// capped(τ) leaves out each class's rows beyond τ and the NULL-B rows; in
/// the second it counts nothing, and the group is at most τ + its class's
/// rows beyond τ + its NULL-B rows ≤ (τ + 1)·its NULL-B rows + rows beyond
/// τ. Rows beyond τ ≥ τ₀ are at most the excess over τ₀.
pub fn fd_classes(
    relation: &Relation,
    x: &[usize],
    bs: Option<&BTreeSet<usize>>,
) -> ConflictClasses {
    classes_of(&mut TupleIndex::new(relation), x, bs, ListedRows::default())
}

/// [`fd_classes`] by tuple ids: groups are X's tuples, classes X ∪ B's.
pub(crate) fn classes_of(
    index: &mut TupleIndex<'_>,
    x: &[usize],
    bs: Option<&BTreeSet<usize>>,
    listed: ListedRows,
) -> ConflictClasses {
    let groups = index.ids(x);
    let Some(bs) = bs else {
        let sizes = groups.counts();
        // Under a key every row is a class of one: a group's rows all lead,
        // and they are the key's conflicting rows.
        let leading = if listed.leading || listed.key_rows {
            let conflicts = |&(_, &g): &(usize, &u32)| g != NO_TUPLE && sizes[g as usize] > 1;
            groups.ids.iter().enumerate().filter(conflicts).map(|(r, _)| r as u32).collect()
        } else {
            vec![]
        };
        // The margin cover keeps each group's first row.
        let deleted = if listed.deleted {
            let mut seen = vec![false; sizes.len()];
            let mut later = |&(_, &g): &(usize, &u32)| {
                g != NO_TUPLE && std::mem::replace(&mut seen[g as usize], true)
            };
            groups.ids.iter().enumerate().filter(|r| later(r)).map(|(r, _)| r as u32).collect()
        } else {
            vec![]
        };
        let cover = sizes.iter().map(|g| g - 1).sum();
        let conflicting: u64 = sizes.iter().filter(|&&g| g > 1).sum();
        return ConflictClasses {
            key: true,
            exact: true,
            cover,
            max_class: u64::from(!sizes.is_empty()),
            null_rows: 0,
            sizes: if conflicting > 0 { vec![(1, conflicting)] } else { vec![] },
            excess: 0,
            leading,
            deleted,
        };
    };
    let slots: Vec<usize> = x.iter().chain(bs).copied().collect();
    let classes = index.ids(&slots);
    // Each class's size and group, and per group: its rows with every B
    // (NULL-B rows are in no class), largest class and class count.
    let class_size = classes.counts();
    let mut group_of = vec![NO_TUPLE; classes.distinct as usize];
    for (&c, &g) in classes.ids.iter().zip(&groups.ids) {
        if c != NO_TUPLE {
            group_of[c as usize] = g;
        }
    }
    let n = groups.distinct as usize;
    let (mut rows, mut largest, mut count) = (vec![0u64; n], vec![0u64; n], vec![0u32; n]);
    for (&g, &size) in group_of.iter().zip(&class_size) {
        let g = g as usize;
        rows[g] += size;
        largest[g] = largest[g].max(size);
        count[g] += 1;
    }
    let mut sizes = std::collections::BTreeMap::<u64, u64>::new();
    for (&g, &size) in group_of.iter().zip(&class_size) {
        if count[g as usize] > 1 {
            *sizes.entry(size).or_default() += 1;
        }
    }
    let in_classes: u64 = rows.iter().sum();
    let leading = if listed.leading {
        let leads = |c: u32| count[group_of[c as usize] as usize] > 1;
        leading_rows(&classes, leads)
    } else {
        vec![]
    };
    let deleted = if listed.deleted {
        margin_cover(&groups, &classes, &group_of, &class_size, bs.len() > 1)
    } else {
        vec![]
    };
    ConflictClasses {
        key: false,
        exact: bs.len() == 1,
        cover: rows.iter().zip(&largest).map(|(r, l)| r - l).sum(),
        max_class: largest.iter().copied().max().unwrap_or(0),
        null_rows: groups.rows() - in_classes,
        sizes: sizes.into_iter().collect(),
        excess: class_size.iter().map(|&c| c.saturating_sub(EXCESS_FROM)).sum(),
        leading,
        deleted,
    }
}

/// The rows X's margin cover deletes, ascending ([`ConflictClasses::deleted`]):
/// NULL-B rows when X has several B (`null_b`; with one B they conflict
/// with none), and in each group every row but the first
/// min(a₁, [`KEEP_PER_MARGIN`]·(a₁ − a₂)) of its largest class.
fn margin_cover(
    groups: &TupleIds,
    classes: &TupleIds,
    group_of: &[u32],
    class_size: &[u64],
    null_b: bool,
) -> Vec<u32> {
    // Per group: its largest class, a₁ and a₂ (0 without a second class).
    let n = groups.distinct as usize;
    let (mut top, mut first, mut second) = (vec![NO_TUPLE; n], vec![0u64; n], vec![0u64; n]);
    for (c, (&g, &size)) in group_of.iter().zip(class_size).enumerate() {
        let g = g as usize;
        if size > first[g] {
            (second[g], first[g], top[g]) = (first[g], size, c as u32);
        } else {
            second[g] = second[g].max(size);
        }
    }
    let keep: Vec<u64> =
        first.iter().zip(&second).map(|(&a1, &a2)| a1.min(KEEP_PER_MARGIN * (a1 - a2))).collect();
    let mut kept = vec![0u64; n];
    let mut deleted = Vec::new();
    for (row, (&c, &g)) in classes.ids.iter().zip(&groups.ids).enumerate() {
        if g == NO_TUPLE {
            continue;
        }
        let g = g as usize;
        let delete = if c == NO_TUPLE {
            null_b
        } else if c == top[g] && kept[g] < keep[g] {
            kept[g] += 1;
            false
        } else {
            true
        };
        if delete {
            deleted.push(row as u32);
        }
    }
    deleted
}

/// The rows, ascending, among the first [`EXCESS_FROM`] of their class
/// (`classes`' ids) where `leads` holds for the class.
fn leading_rows(classes: &TupleIds, leads: impl Fn(u32) -> bool) -> Vec<u32> {
    let mut seen = vec![0u64; classes.distinct as usize];
    let mut rows = Vec::new();
    for (row, &c) in classes.ids.iter().enumerate() {
        if c != NO_TUPLE && leads(c) {
            seen[c as usize] += 1;
            if seen[c as usize] <= EXCESS_FROM {
                rows.push(row as u32);
            }
        }
    }
    rows
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
            cross_max_frequencies: vec![],
            unbounded,
            fd_classes: vec![],
            all_fd_shaped: false,
            chain_covers: vec![],
        }
    }
}

#[cfg(test)]
mod tests;
