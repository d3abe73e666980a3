//! Brute-force checks of the classes' covers, counts and rows.

use super::*;
use crate::compile::KeyPredicate;
use crate::fixtures::{
    Sets, brute_cover_of, classes_of_sets, conflict_under, random_rows, relation, xorshift,
};
use crate::relation::KeyColumn;
use crate::shape::{cross_equality, fd_shape};
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
        let rows = random_rows(&mut next, n, domain, 3);
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
        let brute_one = brute_cover_of(n, |i, j| same_x(i, j) && differ(rows[i][1], rows[j][1]));
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
    let f = equality_frequencies(
        &relation(&[[Some(1), Some(1), Some(2)]]),
        &[fd(1), fd(2)],
        ListedRows::default(),
    );
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
    let key = KeyConstraint { predicates: vec![KeyPredicate::cross(0, Operator::Eq, 0)], ..fd(1) };
    assert_eq!(fd_shape(&key), Some((vec![0], None)));
    let rows = [
        [Some(1), Some(1), None],
        [Some(1), Some(1), None],
        [Some(1), None, None],
        [None, Some(2), None],
        [Some(2), None, None],
    ];
    let f = equality_frequencies(&relation(&rows), &[fd(1), key], ListedRows::default());
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
    let fd =
        dc(vec![KeyPredicate::cross(0, Operator::Eq, 0), KeyPredicate::cross(1, Operator::Ne, 1)]);
    let fd_twin =
        dc(vec![KeyPredicate::cross(1, Operator::Ne, 1), KeyPredicate::cross(0, Operator::Eq, 0)]);
    let both =
        dc(vec![KeyPredicate::cross(0, Operator::Eq, 0), KeyPredicate::cross(1, Operator::Eq, 1)]);
    let ineq =
        dc(vec![KeyPredicate::cross(0, Operator::Lt, 0), KeyPredicate::cross(1, Operator::Gt, 1)]);
    let cross = dc(vec![KeyPredicate::cross(0, Operator::Eq, 1)]);
    let f = equality_frequencies(&r, &[fd, fd_twin, both], ListedRows::default());
    // X = {0}: value 1 three times; X = {0,1}: (1,5) twice (row 2 is NULL).
    // {0} ⊂ {0,1}: only {0} is minimal.
    let expected = EqualityFrequencies {
        max_frequencies: vec![3, 2],
        minimal_max_frequencies: vec![3],
        cross_max_frequencies: vec![],
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
    let f = equality_frequencies(&r, &[ineq, cross], ListedRows::default());
    let expected = EqualityFrequencies {
        max_frequencies: vec![],
        minimal_max_frequencies: vec![],
        // `cross` (t1.0 = t2.1): slot 0's 1 three times, slot 1's 5 five
        // times; `ineq` has no equality at all.
        cross_max_frequencies: vec![3, 5],
        unbounded: true,
        fd_classes: vec![],
        all_fd_shaped: false,
        // `ineq` is an order pair with no conflict (B is 5 or NULL).
        chain_covers: vec![0],
    };
    assert_eq!(f, expected);
}

/// Tables of up to 7 rows with NULLs under a cross equality `t1.0 = t2.1`
/// (with `t1.2 > t2.2` in half the rounds, and its mirror written too)
/// beside the FD 2 → 0: every row's degree, by brute force, is at most
/// Σ over the minimal sets of (maxfreq − 1) plus both sides' maxfreq, and
/// the two cross terms are both needed (the bound is reached).
#[test]
fn cross_equalities_bound_the_degrees() {
    let dc = |predicates| KeyConstraint { id: 0, display: String::new(), predicates };
    let mut next = xorshift(0x2545_f491_4f6c_dd1d);
    let mut reached = false;
    for round in 0..4000 {
        let ordered = round % 2 == 1;
        let with_order = |mut p: Vec<KeyPredicate>, op| {
            if ordered {
                p.push(KeyPredicate::cross(2, op, 2));
            }
            dc(p)
        };
        let cross = with_order(vec![KeyPredicate::cross(0, Operator::Eq, 1)], Operator::Gt);
        let mirror = with_order(vec![KeyPredicate::cross(1, Operator::Eq, 0)], Operator::Lt);
        let fd = dc(vec![
            KeyPredicate::cross(2, Operator::Eq, 2),
            KeyPredicate::cross(0, Operator::Ne, 0),
        ]);
        assert_eq!(cross_equality(&cross), cross_equality(&mirror), "one form");
        let n = 1 + next(7) as usize;
        let rows = random_rows(&mut next, n, 4, 3);
        let f = equality_frequencies(&relation(&rows), &[cross, mirror, fd], ListedRows::default());
        assert!(!f.unbounded && f.cross_max_frequencies.len() == 2);
        let bound: u64 = f.minimal_max_frequencies.iter().map(|m| m.saturating_sub(1)).sum::<u64>()
            + f.cross_max_frequencies.iter().sum::<u64>();
        let eq = |a: Option<u64>, b: Option<u64>| a.is_some() && a == b;
        let gt = |a: Option<u64>, b: Option<u64>| a.is_some() && b.is_some() && a > b;
        let under = |a: &[Option<u64>; 3], b: &[Option<u64>; 3]| {
            eq(a[0], b[1]) && (!ordered || gt(a[2], b[2]))
        };
        let conflict = |a: &[Option<u64>; 3], b: &[Option<u64>; 3]| {
            under(a, b)
                || under(b, a)
                || (eq(a[2], b[2]) && a[0].zip(b[0]).is_some_and(|(x, y)| x != y))
        };
        for (i, t) in rows.iter().enumerate() {
            let degree =
                rows.iter().enumerate().filter(|&(j, s)| j != i && conflict(t, s)).count() as u64;
            assert!(degree <= bound, "row {i} of {rows:?}: degree {degree} > {bound}");
            let fd_term: u64 = f.minimal_max_frequencies.iter().map(|m| m.saturating_sub(1)).sum();
            reached |= degree == bound && degree > fd_term + f.cross_max_frequencies[0];
        }
    }
    assert!(reached, "both sides' terms are reached");
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
        let rows = random_rows(&mut next, n, domain, 2);
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
                assert!(c.capped(tau).abs_diff(d.capped(tau)) <= tau + 1, "{rows:?} −{i} τ={tau}");
            }
            assert!(c.max_class.abs_diff(d.max_class) <= 1);
            assert!(c.null_rows.abs_diff(d.null_rows) <= 1);
            assert!(c.excess.abs_diff(d.excess) <= 1);
        }
    }
    // Partitions of one X add up to the whole.
    let rows = [[Some(0), Some(0), Some(1)], [Some(0), Some(1), Some(1)], [Some(1), Some(0), None]];
    let mut whole = classes(&rows[..1]);
    whole.absorb(&classes(&rows[1..]));
    let mut expected = classes(&rows[..2]);
    expected.absorb(&classes(&rows[2..]));
    assert_eq!(expected, classes(&rows));
    assert_eq!(expected.sizes, vec![(1, 2)]);
    assert_eq!(expected.null_rows, 1);
}

/// I_R's key partition bound (`dpincon-release`): a key's cover plus the
/// stable-order greedy matching of G without the key's listed rows is at
/// most I_R, and a row moves it by at most 1, never down when added: the
/// rows a row joins are its own key group's (or that group's one other
/// row), and a greedy matching moves by 0 or 1 with one node
/// (`dpincon_measures::greedy_matching_outside`, checked there).
#[test]
fn the_key_partition_bound_is_below_i_r_with_sensitivity_one() {
    let all: [Sets; 3] = [
        &[(0, None), (1, Some(&[2]))],
        &[(0, None), (1, Some(&[0, 2])), (2, Some(&[1]))],
        &[(0, None), (1, None), (2, Some(&[0]))],
    ];
    let conflict = conflict_under;
    // The largest bound over the keys, from their listed rows.
    let bound = |rows: &[[Option<u64>; 3]], sets: Sets| {
        let listed = ListedRows { key_rows: true, ..ListedRows::default() };
        let mut best = 0;
        for c in classes_of_sets(rows, sets, listed).into_iter().filter(|c| c.key) {
            let (mut taken, mut matching) = (vec![false; rows.len()], 0);
            c.leading.iter().for_each(|&r| taken[r as usize] = true);
            for i in 0..rows.len() {
                for j in i + 1..rows.len() {
                    if !taken[i] && !taken[j] && conflict(sets, &rows[i], &rows[j]) {
                        (taken[i], taken[j], matching) = (true, true, matching + 1);
                    }
                }
            }
            best = best.max(c.cover + matching);
        }
        best
    };
    let mut next = xorshift(0x510e_527f_ade6_82d1);
    let (mut tight, mut moved_by_one) = (0, 0);
    for round in 0..3000 {
        let n = 1 + next(8) as usize;
        let domain = if round % 2 == 0 { 3 } else { 5 };
        let rows = random_rows(&mut next, n, domain, 4);
        for sets in all {
            let m = bound(&rows, sets);
            let truth = brute_cover_of(n, |i, j| conflict(sets, &rows[i], &rows[j]));
            assert!(m <= truth, "{rows:?} {sets:?}: {m} > I_R {truth}");
            tight += usize::from(m == truth && truth > 0);
            for i in 0..n {
                let mut fewer = rows.clone();
                fewer.remove(i);
                let less = bound(&fewer, sets);
                assert!(less <= m && m <= less + 1, "{rows:?} {sets:?} −{i}: {less} → {m}");
                moved_by_one += usize::from(m == less + 1);
            }
        }
    }
    assert!(tight > 3000 && moved_by_one > 0, "tight {tight}, moved {moved_by_one}");
}
