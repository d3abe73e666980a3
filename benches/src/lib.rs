//! Fixtures shared by the criterion benchmarks in `benches/`: synthetic
//! encoded relations with FD-shaped and inequality conflicts.

use dpincon_constraints::Operator;
use dpincon_detect::{KeyColumn, KeyConstraint, KeyPredicate, Relation};

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
