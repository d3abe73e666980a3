//! Fixtures shared by the criterion benchmarks in `benches/`: synthetic
//! encoded relations with FD-shaped and inequality conflicts, and seeded
//! edge sets for the adjacency bench (`benches/adjacency.rs`).

use dpincon_constraints::Operator;
use dpincon_detect::{KeyColumn, KeyConstraint, KeyPredicate, Relation};
use dpincon_graph::{Edge, Multipartite};

fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// A relation of `rows` rows with four slots: a group key (`groups`
/// values), an FD right-hand side that is wrong for one row in `dirty`, and
/// two loosely correlated numbers for inequality constraints.
pub fn relation(rows: u32, groups: u64, dirty: u64) -> Relation {
    let mut state = 0x2545_F491_4F6C_DD1D;
    let mut group = Vec::with_capacity(rows as usize);
    let mut rhs = Vec::with_capacity(rows as usize);
    let mut x = Vec::with_capacity(rows as usize);
    let mut y = Vec::with_capacity(rows as usize);
    for _ in 0..rows {
        let g = xorshift(&mut state) % groups;
        group.push(Some(g));
        let wrong = xorshift(&mut state).is_multiple_of(dirty);
        rhs.push(Some(if wrong { g + 1 + xorshift(&mut state) % 3 } else { g }));
        let salary = xorshift(&mut state) % 100_000;
        x.push(Some(salary));
        let noisy = xorshift(&mut state).is_multiple_of(50);
        y.push(Some(if noisy { xorshift(&mut state) % 100_000 } else { salary / 10 }));
    }
    let columns = [group, rhs, x, y].into_iter().map(KeyColumn::from_keys).collect();
    Relation::from_slots(rows, columns)
}

/// `group -> rhs` as a denial constraint.
pub fn fd() -> KeyConstraint {
    KeyConstraint {
        id: 0,
        display: "FD".into(),
        predicates: vec![
            KeyPredicate::cross(0, Operator::Eq, 0),
            KeyPredicate::cross(1, Operator::Ne, 1),
        ],
    }
}

/// `not(t1.group = t2.group & t1.x > t2.x & t1.y < t2.y)`.
pub fn two_inequalities() -> KeyConstraint {
    KeyConstraint {
        id: 1,
        display: "IEJoin".into(),
        predicates: vec![
            KeyPredicate::cross(0, Operator::Eq, 0),
            KeyPredicate::cross(2, Operator::Gt, 2),
            KeyPredicate::cross(3, Operator::Lt, 3),
        ],
    }
}

/// FD-shaped conflict groups on `rows` rows: each row joins one of
/// `groups` groups (the FD's left-hand side) at random, and its class (the
/// right-hand side) is the group's usual value, or, for one row in
/// `dirty`, one of five wrong values. Rows of the usual class get as many
/// neighbours as their group has dirty rows (arrays); dirty rows get
/// almost the whole group (bitmaps where a 65,536-id block holds more than
/// 4,096 of them). Each group's classes, rows ascending.
pub fn fd_groups(rows: u32, groups: u32, dirty: u64, seed: u64) -> Vec<Vec<Vec<u32>>> {
    let mut state = seed | 1;
    let mut out = vec![vec![Vec::new(); 6]; groups as usize];
    for row in 0..rows {
        let group = (xorshift(&mut state) % u64::from(groups)) as usize;
        let wrong = xorshift(&mut state).is_multiple_of(dirty);
        let class = if wrong { 1 + (xorshift(&mut state) % 5) as usize } else { 0 };
        out[group][class].push(row);
    }
    out
}

/// The groups' edges as pairs, group by group and row by row, as a
/// detector that did not hand groups over whole would emit them.
pub fn group_pairs(groups: &[Multipartite]) -> Vec<(u32, u32)> {
    let mut edges: Vec<Edge> = Vec::new();
    for group in groups {
        group.emit_rows(0..group.len(), &mut edges);
    }
    edges.into_iter().map(|e| (e.u, e.v)).collect()
}

/// `count` pairs of distinct rows below `rows`, uniform, in random order
/// and orientation (a few may repeat): the scattered conflicts of an order
/// constraint with no equality, a few neighbours per row, each alone in
/// its row's 65,536-id block.
pub fn scattered_pairs(rows: u32, count: usize, seed: u64) -> Vec<(u32, u32)> {
    let mut state = seed | 1;
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let a = (xorshift(&mut state) % u64::from(rows)) as u32;
        let b = (xorshift(&mut state) % u64::from(rows)) as u32;
        if a != b {
            out.push((a, b));
        }
    }
    out
}
