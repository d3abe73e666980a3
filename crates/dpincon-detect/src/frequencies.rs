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

use crate::chains::chain_cover_in;
use crate::compile::KeyConstraint;
use crate::relation::Relation;
use crate::sets::{all_fd_shaped, fd_sets, order_pairs};
use crate::shape::equality_attributes;
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
    /// Some constraint has no predicate `t1.A = t2.A`.
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
/// noise. With `leading`, each X's classes list their leading rows
/// ([`ConflictClasses::leading`]; [`crate::leading_wanted`] says when the
/// release reads them).
pub fn equality_frequencies(
    relation: &Relation,
    constraints: &[KeyConstraint],
    leading: bool,
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
    let mut index = TupleIndex::new(relation);
    let max_frequencies: Vec<u64> =
        sets.iter().map(|slots| index.ids(slots).counts().into_iter().max().unwrap_or(0)).collect();
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
            fds.iter().map(|(x, bs)| classes_of(&mut index, x, bs.as_ref(), leading)).collect();
        (classes, chains.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
    });
    EqualityFrequencies {
        fd_classes,
        all_fd_shaped: all_fd_shaped(constraints),
        chain_covers,
        ..EqualityFrequencies::from_maxima(&sets, max_frequencies, unbounded)
    }
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
    /// When asked for ([`equality_frequencies`]'s `leading`): the rows,
    /// ascending, among the first [`EXCESS_FROM`] of their class (by row
    /// order) in a group of two classes or more. Every one conflicts; their
    /// union over the X is I_P's leading count (`crate::leading`).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Vec::is_empty"))]
    pub leading: Vec<u32>,
}

/// The small τ whose [`ConflictClasses::excess`] is counted: duplicated
/// keys' classes are a row or two (exact copies), so τ = 2 keeps most of
/// them whole (dpincon-release, "I_P by class count").
pub const EXCESS_FROM: u64 = 2;

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
        self.leading.extend_from_slice(&other.leading);
        self.leading.sort();
    }
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
    classes_of(&mut TupleIndex::new(relation), x, bs, false)
}

/// [`fd_classes`] by tuple ids: groups are X's tuples, classes X ∪ B's.
pub(crate) fn classes_of(
    index: &mut TupleIndex<'_>,
    x: &[usize],
    bs: Option<&BTreeSet<usize>>,
    leading: bool,
) -> ConflictClasses {
    let groups = index.ids(x);
    let Some(bs) = bs else {
        let sizes = groups.counts();
        // Under a key every row is a class of one: a group's rows all lead.
        let leading = if leading {
            let conflicts = |&(_, &g): &(usize, &u32)| g != NO_TUPLE && sizes[g as usize] > 1;
            groups.ids.iter().enumerate().filter(conflicts).map(|(r, _)| r as u32).collect()
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
    let leading = if leading {
        let leads = |c: u32| count[group_of[c as usize] as usize] > 1;
        leading_rows(&classes, leads)
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
    }
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
            unbounded,
            fd_classes: vec![],
            all_fd_shaped: false,
            chain_covers: vec![],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::KeyPredicate;
    use crate::fixtures::{brute_cover_of, relation, xorshift};
    use crate::relation::KeyColumn;
    use crate::shape::fd_shape;
    use dpincon_constraints::Operator;

    /// The minimum vertex cover of X → B1, X → B2's conflict graph.
    fn brute_cover(rows: &[[Option<u64>; 3]]) -> u64 {
        let differ = |a: Option<u64>, b: Option<u64>| a.is_some() && b.is_some() && a != b;
        brute_cover_of(rows.len(), |i, j| {
            let (a, b) = (rows[i], rows[j]);
            a[0].is_some() && a[0] == b[0] && (differ(a[1], b[1]) || differ(a[2], b[2]))
        })
    }

    /// Tables of up to 7 rows over small domains from a seeded stream:
    /// the FD cover is at most the FDs' minimum cover, equal to it without
    /// NULLs, and removing any row moves it by at most 1; with two B the
    /// minimum cover is at most cover + null_rows.
    #[test]
    fn fd_cover_bounds_the_fds_cover_with_sensitivity_one() {
        let fd = |b| KeyConstraint {
            id: 0,
            display: String::new(),
            predicates: vec![
                KeyPredicate::cross(0, Operator::Eq, 0),
                KeyPredicate::cross(b, Operator::Ne, b),
            ],
        };
        assert_eq!(fd_shape(&fd(1)), Some((vec![0], Some(1))));
        let bs = BTreeSet::from([1, 2]);
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        for round in 0..3000 {
            let n = 1 + next(7) as usize;
            // Half the tables without NULLs, where the bound is exact.
            let domain = if round % 2 == 0 { 3 } else { 4 };
            let key = |v: u64| (v < 3).then_some(v);
            let rows: Vec<[Option<u64>; 3]> =
                (0..n).map(|_| [key(next(domain)), key(next(domain)), key(next(domain))]).collect();
            // A key on X: every two rows agreeing on X conflict, NULLs or
            // not, and the key cover is I_R exactly (the release's
            // `exact_repair` relies on it).
            let key_cover = fd_classes(&relation(&rows), &[0], None).cover;
            let same_x = |i: usize, j: usize| rows[i][0].is_some() && rows[i][0] == rows[j][0];
            assert_eq!(key_cover, brute_cover_of(n, same_x), "{rows:?}");
            // One B: a row with B NULL conflicts with none, so the cover is
            // exact too; with two (below) only without NULLs.
            let one_b = fd_classes(&relation(&rows), &[0], Some(&BTreeSet::from([1])));
            let differ = |a: Option<u64>, b: Option<u64>| a.is_some() && b.is_some() && a != b;
            let brute_one =
                brute_cover_of(n, |i, j| same_x(i, j) && differ(rows[i][1], rows[j][1]));
            assert!(one_b.exact && one_b.cover == brute_one, "{rows:?}");
            let classes = fd_classes(&relation(&rows), &[0], Some(&bs));
            assert!(!classes.exact, "two B");
            let cover = classes.cover;
            let brute = brute_cover(&rows);
            assert!(cover <= brute, "{rows:?}: {cover} > {brute}");
            // Deleting the rows with a NULL B leaves complete multipartite
            // groups: I_R ≤ cover + null_rows (the release's upper end).
            assert!(brute <= cover + classes.null_rows, "{rows:?}: {brute} > {classes:?}");
            if domain == 3 {
                assert_eq!(cover, brute, "{rows:?}");
            }
            for i in 0..n {
                let mut fewer = rows.clone();
                fewer.remove(i);
                let smaller = fd_classes(&relation(&fewer), &[0], Some(&bs)).cover;
                assert!(smaller <= cover && cover <= smaller + 1, "{rows:?} without {i}");
                let smaller = fd_classes(&relation(&fewer), &[0], None).cover;
                assert!(smaller <= key_cover && key_cover <= smaller + 1, "key, without {i}");
            }
        }
        // The two FDs give one cover (one X).
        let f =
            equality_frequencies(&relation(&[[Some(1), Some(1), Some(2)]]), &[fd(1), fd(2)], false);
        assert_eq!(f.fd_classes.iter().map(|c| c.cover).collect::<Vec<_>>(), vec![0]);
        // One strict order on B beside X's equalities is the FD X → B: an
        // unordered pair satisfies it one way round iff both B are set and
        // differ (the brute force above reads `differ`); `<=` is not (equal
        // B conflict), nor are two orders (an order pair) or `t1.B < t2.C`.
        let with = |ops: &[(usize, Operator, usize)]| KeyConstraint {
            predicates: std::iter::once(KeyPredicate::cross(0, Operator::Eq, 0))
                .chain(ops.iter().map(|&(a, op, b)| KeyPredicate::cross(a, op, b)))
                .collect(),
            ..fd(1)
        };
        for op in [Operator::Lt, Operator::Gt] {
            assert_eq!(fd_shape(&with(&[(1, op, 1)])), Some((vec![0], Some(1))));
        }
        assert_eq!(fd_shape(&with(&[(1, Operator::Le, 1)])), None);
        assert_eq!(fd_shape(&with(&[(1, Operator::Lt, 1), (2, Operator::Gt, 2)])), None);
        assert_eq!(fd_shape(&with(&[(1, Operator::Lt, 2)])), None);
        // The detector's own definition (`brute_force`, NULLs included)
        // finds the same unordered edges for `<`, `>` and `!=`.
        let mut next = xorshift(0x5851_f42d_4c95_7f2d);
        for _ in 0..500 {
            let n = 1 + next(7) as usize;
            let key = |v: u64| (v < 3).then_some(v);
            let rows: Vec<[Option<u64>; 3]> =
                (0..n).map(|_| [key(next(4)), key(next(4)), key(next(4))]).collect();
            let edges = |c: &KeyConstraint| {
                let mut e: Vec<dpincon_graph::Edge> = Vec::new();
                crate::exec::brute_force(&relation(&rows), c, &mut e);
                e.sort_unstable();
                e.dedup();
                e
            };
            let fd_edges = edges(&fd(1));
            for op in [Operator::Lt, Operator::Gt] {
                assert_eq!(edges(&with(&[(1, op, 1)])), fd_edges, "{rows:?}");
            }
        }
        // A key: every group is a clique, and it overrides X's FDs.
        let key =
            KeyConstraint { predicates: vec![KeyPredicate::cross(0, Operator::Eq, 0)], ..fd(1) };
        assert_eq!(fd_shape(&key), Some((vec![0], None)));
        let rows = [
            [Some(1), Some(1), None],
            [Some(1), Some(1), None],
            [Some(1), None, None],
            [None, Some(2), None],
            [Some(2), None, None],
        ];
        let f = equality_frequencies(&relation(&rows), &[fd(1), key], false);
        assert_eq!(f.fd_classes.len(), 1);
        let classes = &f.fd_classes[0];
        assert_eq!(classes.cover, 2, "the X = 1 group of three rows is a clique");
        assert!(classes.key && f.all_fd_shaped);
        assert_eq!((classes.max_class, classes.null_rows, classes.capped(1)), (1, 0, 3));
    }

    /// FDs of two X (col 0 → col 1, col 1 → col 2, and col 0 → cols 1, 2
    /// with col 2 → col 0): deleting each X's cover and NULL-B rows
    /// removes every edge, so I_R ≤ Σ_X (cover_X + null_rows_X); a row
    /// moves each X's term by at most 1, so the sum by at most the number
    /// of X (reached). Tables of up to 7 rows with NULLs, removing every
    /// row in turn.
    #[test]
    fn the_sum_of_the_covers_and_null_rows_bounds_i_r_over_several_x() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let differ = |a: Option<u64>, b: Option<u64>| a.is_some() && b.is_some() && a != b;
        // (X, its B) per FD set: X → B conflicts when X agrees and a B differs.
        let sets: [&[(usize, &[usize])]; 2] = [&[(0, &[1]), (1, &[2])], &[(0, &[1, 2]), (2, &[0])]];
        let upper = |rows: &[[Option<u64>; 3]], fds: &[(usize, &[usize])]| -> u64 {
            let r = relation(rows);
            fds.iter()
                .map(|&(x, bs)| {
                    let c = fd_classes(&r, &[x], Some(&bs.iter().copied().collect()));
                    c.cover + c.null_rows
                })
                .sum()
        };
        let mut worst = 0;
        for _ in 0..3000 {
            let n = 1 + next(7) as usize;
            let key = |v: u64| (v < 3).then_some(v);
            let rows: Vec<[Option<u64>; 3]> =
                (0..n).map(|_| [key(next(4)), key(next(4)), key(next(4))]).collect();
            for fds in sets {
                let brute = brute_cover_of(n, |i, j| {
                    fds.iter().any(|&(x, bs)| {
                        rows[i][x].is_some()
                            && rows[i][x] == rows[j][x]
                            && bs.iter().any(|&b| differ(rows[i][b], rows[j][b]))
                    })
                });
                let u = upper(&rows, fds);
                assert!(brute <= u, "{rows:?} under {fds:?}: I_R {brute} > {u}");
                for i in 0..n {
                    let mut fewer = rows.clone();
                    fewer.remove(i);
                    let moved = u.abs_diff(upper(&fewer, fds));
                    assert!(moved <= fds.len() as u64, "{rows:?} without {i}: moved {moved}");
                    worst = worst.max(moved);
                }
            }
        }
        assert_eq!(worst, 2, "a row moves both X's terms");
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
        let f = equality_frequencies(&r, &[fd, fd_twin, both], false);
        // X = {0}: value 1 three times; X = {0,1}: (1,5) twice (row 2 is NULL).
        // {0} ⊂ {0,1}: only {0} is minimal.
        let expected = EqualityFrequencies {
            max_frequencies: vec![3, 2],
            minimal_max_frequencies: vec![3],
            unbounded: false,
            // fd and its twin are one FD (X = {0}): B agrees in every group;
            // `both` is a key on {0, 1}: (1,5) and (2,5) twice, cover 2.
            fd_classes: vec![
                ConflictClasses {
                    exact: true,
                    cover: 0,
                    max_class: 2,
                    null_rows: 1,
                    ..Default::default()
                },
                ConflictClasses {
                    key: true,
                    exact: true,
                    cover: 2,
                    max_class: 1,
                    null_rows: 0,
                    sizes: vec![(1, 4)],
                    ..Default::default()
                },
            ],
            all_fd_shaped: true,
            chain_covers: vec![],
        };
        assert_eq!(f, expected);
        let f = equality_frequencies(&r, &[ineq, cross], false);
        let expected = EqualityFrequencies {
            max_frequencies: vec![],
            minimal_max_frequencies: vec![],
            unbounded: true,
            fd_classes: vec![],
            all_fd_shaped: false,
            // `ineq` is an order pair with no conflict (B is 5 or NULL).
            chain_covers: vec![0],
        };
        assert_eq!(f, expected);
    }

    /// The problematic rows of X → B1, X → B2 by brute force.
    fn brute_problematic(rows: &[[Option<u64>; 3]]) -> u64 {
        let differ = |a: Option<u64>, b: Option<u64>| a.is_some() && b.is_some() && a != b;
        let conflict = |a: [Option<u64>; 3], b: [Option<u64>; 3]| {
            a[0].is_some() && a[0] == b[0] && (differ(a[1], b[1]) || differ(a[2], b[2]))
        };
        rows.iter()
            .enumerate()
            .filter(|&(i, &a)| rows.iter().enumerate().any(|(j, &b)| i != j && conflict(a, b)))
            .count() as u64
    }

    /// Tables of up to 7 rows from a seeded stream: capped(τ) is at most
    /// I_P, equal to it without NULLs once τ reaches the largest class, and
    /// from τ = 2 on misses at most the excess plus τ + 1 per NULL-B row
    /// (`fd_classes`); removing
    /// a row moves it by at most τ + 1, and the largest class, the NULL
    /// rows and the excess by at most 1.
    #[test]
    fn capped_classes_bound_i_p_with_sensitivity_tau_plus_one() {
        let bs = BTreeSet::from([1, 2]);
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let classes = |rows: &[[Option<u64>; 3]]| fd_classes(&relation(rows), &[0], Some(&bs));
        for round in 0..3000 {
            let n = 1 + next(7) as usize;
            let domain = if round % 2 == 0 { 2 } else { 3 };
            let key = |v: u64| (v < 2).then_some(v);
            let rows: Vec<[Option<u64>; 3]> =
                (0..n).map(|_| [key(next(domain)), key(next(domain)), key(next(domain))]).collect();
            let c = classes(&rows);
            let truth = brute_problematic(&rows);
            for tau in 1..=7 {
                assert!(c.capped(tau) <= truth, "{rows:?} τ={tau}");
                if tau >= EXCESS_FROM {
                    let most = c.capped(tau) + c.excess + (tau + 1) * c.null_rows;
                    assert!(truth <= most, "{rows:?} τ={tau}");
                }
                if domain == 2 && tau >= c.max_class {
                    assert_eq!(c.capped(tau), truth, "{rows:?} τ={tau}");
                }
            }
            for i in 0..n {
                let mut fewer = rows.clone();
                fewer.remove(i);
                let d = classes(&fewer);
                for tau in 1..=7 {
                    assert!(
                        c.capped(tau).abs_diff(d.capped(tau)) <= tau + 1,
                        "{rows:?} −{i} τ={tau}"
                    );
                }
                assert!(c.max_class.abs_diff(d.max_class) <= 1);
                assert!(c.null_rows.abs_diff(d.null_rows) <= 1);
                assert!(c.excess.abs_diff(d.excess) <= 1);
            }
        }
        // Partitions of one X add up to the whole.
        let rows =
            [[Some(0), Some(0), Some(1)], [Some(0), Some(1), Some(1)], [Some(1), Some(0), None]];
        let mut whole = classes(&rows[..1]);
        whole.absorb(&classes(&rows[1..]));
        let mut expected = classes(&rows[..2]);
        expected.absorb(&classes(&rows[2..]));
        assert_eq!(expected, classes(&rows));
        assert_eq!(expected.sizes, vec![(1, 2)]);
        assert_eq!(expected.null_rows, 1);
    }
}
