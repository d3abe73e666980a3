//! The pure cores: candidate selection, partitioning and the four drivers.
//! They read keys from a [`Relation`] and write pairs to an [`EdgeSink`];
//! how they are scheduled lives in `exec.rs`.

use std::cmp::Ordering;
use std::sync::Arc;

use dpincon_constraints::{Operator, TupleVar};
use dpincon_graph::{EdgeSink, Multipartite};

use crate::cap::Capped;
use crate::plan::{Cross, Driver, FilterRhs, Plan, index};
use crate::relation::Relation;

/// Rows that can play tuple `t`: no NULL in a slot `t` compares, and every
/// filter on `t` satisfied.
pub(crate) fn candidates(relation: &Relation, plan: &Plan, t: TupleVar) -> Vec<u32> {
    let required = plan.required_slots(t);
    let filters = &plan.filters[index(t)];
    (0..relation.rows())
        .filter(|&row| {
            required.iter().all(|&s| !relation.column(s).is_null(row))
                && filters.iter().all(|f| {
                    let left = relation.column(f.slot).key(row);
                    let right = match f.rhs {
                        FilterRhs::Const(key) => key,
                        FilterRhs::Slot(s) => relation.column(s).key(row),
                    };
                    f.op.holds(&left, &right)
                })
        })
        .collect()
}

/// The rows that can play t1 and those that can play t2. For a symmetric
/// plan both roles have the same requirements, so the second is a copy.
pub(crate) fn sides(relation: &Relation, plan: &Plan) -> (Vec<u32>, Vec<u32>) {
    let left = candidates(relation, plan, TupleVar::T1);
    let right =
        if plan.symmetric { left.clone() } else { candidates(relation, plan, TupleVar::T2) };
    (left, right)
}

/// A partition: rows for t1 and rows for t2 that agree on every equality.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    pub left: std::ops::Range<usize>,
    pub right: std::ops::Range<usize>,
}

/// Sorts `left` and `right` on their equality keys and pairs up the runs
/// with equal keys (a sort-merge form of hash partitioning: deterministic).
/// A symmetric plan's one-row runs are left out: they hold no pair, and a
/// key column (a phone number) would otherwise make a task per row.
pub(crate) fn partition(
    relation: &Relation,
    plan: &Plan,
    left: &mut [u32],
    right: &mut [u32],
) -> Vec<Group> {
    let lslots: Vec<usize> = plan.equalities.iter().map(|e| e.0).collect();
    let rslots: Vec<usize> = plan.equalities.iter().map(|e| e.1).collect();
    let key_cmp = |slots_a: &[usize], a: u32, slots_b: &[usize], b: u32| -> Ordering {
        slots_a
            .iter()
            .zip(slots_b)
            .map(|(&sa, &sb)| relation.column(sa).key(a).cmp(&relation.column(sb).key(b)))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    };
    sort_on(relation, left, &lslots);
    if plan.symmetric {
        // The same rows on the same keys (`sides`): sorted once.
        right.copy_from_slice(left);
    } else {
        sort_on(relation, right, &rslots);
    }
    let lruns = runs(relation, left, &lslots);
    if plan.symmetric {
        // t1 and t2 are the same rows: a run of one row has no pair.
        let groups = lruns.into_iter().filter(|r| r.len() > 1);
        return groups.map(|r| Group { left: r.clone(), right: r }).collect();
    }
    let rruns = runs(relation, right, &rslots);
    let (mut i, mut j) = (0, 0);
    let mut groups = Vec::new();
    while i < lruns.len() && j < rruns.len() {
        let (l, r) = (&lruns[i], &rruns[j]);
        match key_cmp(&lslots, left[l.start], &rslots, right[r.start]) {
            Ordering::Less => i += 1,
            Ordering::Greater => j += 1,
            Ordering::Equal => {
                groups.push(Group { left: l.clone(), right: r.clone() });
                (i, j) = (i + 1, j + 1);
            }
        }
    }
    groups
}

/// Sorts `rows` on the keys of `slots`, then on id. Least significant
/// first: the id, then each slot from the last, each pass keeping the order
/// of the previous ones.
pub(crate) fn sort_on(relation: &Relation, rows: &mut [u32], slots: &[usize]) {
    rows.sort_unstable();
    for &slot in slots.iter().rev() {
        sort_rows_by(rows, |r| relation.column(slot).key(r));
    }
}

/// The runs of equal keys in `rows`, sorted on `slots`: one pass comparing
/// neighbours, slot by slot, so its cost is linear whatever the run lengths.
pub(crate) fn runs(
    relation: &Relation,
    rows: &[u32],
    slots: &[usize],
) -> Vec<std::ops::Range<usize>> {
    if rows.is_empty() {
        return Vec::new();
    }
    let mut boundary = vec![false; rows.len()];
    for &slot in slots {
        let column = relation.column(slot);
        for (b, pair) in boundary[1..].iter_mut().zip(rows.windows(2)) {
            *b |= column.key(pair[0]) != column.key(pair[1]);
        }
    }
    boundary.push(true);
    let mut runs = Vec::new();
    let mut start = 0;
    for (i, &b) in boundary.iter().enumerate().skip(1) {
        if b {
            runs.push(start..i);
            start = i;
        }
    }
    runs
}

/// The largest multipartite group emitted pair by pair, not handed over whole.
const SMALL_GROUP: usize = 32;

/// Which share of a group's t1 rows a task covers, so one big group can
/// keep several threads busy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Part {
    pub index: usize,
    pub of: usize,
}

impl Part {
    pub const WHOLE: Part = Part { index: 0, of: 1 };

    /// The share of `0..len` for ordered enumeration: equal slices.
    fn even(self, len: usize) -> std::ops::Range<usize> {
        len * self.index / self.of..len * (self.index + 1) / self.of
    }

    /// The share of `0..len` when row `i` pairs with the rows after it: the
    /// work of row `i` falls linearly, so the cuts sit at `len·(1 − √(1 − j/of))`.
    fn triangular(self, len: usize) -> std::ops::Range<usize> {
        let cut = |j: usize| {
            if j == self.of {
                return len;
            }
            let x = 1.0 - (1.0 - j as f64 / self.of as f64).sqrt();
            ((len as f64 * x) as usize).min(len)
        };
        cut(self.index)..cut(self.index + 1)
    }
}

/// Finds the violating pairs of one group. `same` says `left` and `right`
/// are the same rows of a symmetric plan: each unordered pair is then
/// enumerated once, in one orientation. `part` selects the share of the
/// t1 rows this call covers. Every emitted pair counts on the sink's cap;
/// the call returns early once it is over (`cap.rs`).
pub(crate) fn run_group(
    relation: &Relation,
    plan: &Plan,
    left: &[u32],
    right: &[u32],
    same: bool,
    part: Part,
    sink: &mut Capped<'_, impl EdgeSink>,
) {
    let key = |slot: usize, row: u32| relation.column(slot).key(row);
    let residual_holds = |a: u32, b: u32| {
        plan.residual.iter().all(|c| c.op.holds(&key(c.left, a), &key(c.right, b)))
    };
    // Emits a violating pair; false once detection must stop.
    let mut emit = |a: u32, b: u32| {
        if a != b && residual_holds(a, b) { sink.add(a, b) } else { true }
    };
    let symmetric_path = same
        && match plan.driver {
            Driver::AllPairs => true,
            Driver::Complement(c) => c.left == c.right,
            _ => false,
        };
    let left = if symmetric_path { left } else { &left[part.even(left.len())] };
    // With no residual, a symmetric group is complete multipartite and goes
    // to the sink whole (`add_multipartite`). A small group's few pairs are
    // cheaper through the writer's pair buffer (most groups of a 10^4-row
    // table are small).
    let rowwise = symmetric_path && plan.residual.is_empty() && left.len() > SMALL_GROUP;
    match plan.driver {
        Driver::AllPairs if same && rowwise => {
            // A key: every row pairs with every row above it.
            let mut rows = left.to_vec();
            rows.sort_unstable();
            let group = Arc::new(Multipartite::new(rows.chunks(1)));
            sink.add_multipartite(&group, part.triangular(rows.len()));
        }
        Driver::AllPairs if same => {
            for i in part.triangular(left.len()) {
                for &b in &left[i + 1..] {
                    if !emit(left[i], b) {
                        return;
                    }
                }
            }
        }
        Driver::Complement(c) if same && c.left == c.right && rowwise => {
            // FD: each row pairs with the group's rows outside its class.
            let mut rows = left.to_vec();
            sort_on(relation, &mut rows, &[c.left]);
            let classes = rows.chunk_by(|&a, &b| key(c.left, a) == key(c.left, b));
            let group = Arc::new(Multipartite::new(classes));
            sink.add_multipartite(&group, part.even(rows.len()));
        }
        Driver::AllPairs => {
            for &a in left {
                for &b in right {
                    if !emit(a, b) {
                        return;
                    }
                }
            }
        }
        Driver::Complement(c) if same && c.left == c.right => {
            // FD: pairs across different classes of the attribute, each once.
            let mut rows = left.to_vec();
            sort_rows_by(&mut rows, |r| key(c.left, r));
            let share = part.triangular(rows.len());
            let mut start = share.start;
            while start < share.end {
                let k = key(c.left, rows[start]);
                let end = start + rows[start..].partition_point(|&r| key(c.left, r) == k);
                for &a in &rows[start..end.min(share.end)] {
                    for &b in &rows[end..] {
                        if !emit(a, b) {
                            return;
                        }
                    }
                }
                start = end;
            }
        }
        Driver::Complement(c) => {
            let rows = sorted_on(right, |r| key(c.right, r));
            for &a in left {
                let ka = key(c.left, a);
                let lo = rows.partition_point(|&r| key(c.right, r) < ka);
                let hi = rows.partition_point(|&r| key(c.right, r) <= ka);
                for &b in rows[..lo].iter().chain(&rows[hi..]) {
                    if !emit(a, b) {
                        return;
                    }
                }
            }
        }
        Driver::RangeScan(c) => {
            let rows = sorted_on(right, |r| key(c.right, r));
            for &a in left {
                let range = satisfying_range(&rows, c, key(c.left, a), |r| key(c.right, r));
                for &b in &rows[range] {
                    if !emit(a, b) {
                        return;
                    }
                }
            }
        }
        Driver::IeJoin(x, y) => iejoin(relation, left, right, x, y, &mut emit),
    }
}

fn sorted_on(rows: &[u32], key: impl Fn(u32) -> u64) -> Vec<u32> {
    let mut rows = rows.to_vec();
    sort_rows_by(&mut rows, key);
    rows
}

/// Sorts `rows` on `key`, stably. The `(key, position)` pairs are sorted
/// rather than the rows through `key`: a comparison reading two keys from
/// the columns is a random access each, and it was most of partitioning
/// at 10^6 rows.
fn sort_rows_by(rows: &mut [u32], key: impl Fn(u32) -> u64) {
    let mut keyed: Vec<(u64, u32)> =
        rows.iter().enumerate().map(|(i, &r)| (key(r), i as u32)).collect();
    keyed.sort_unstable();
    let old = rows.to_vec();
    for (row, &(_, i)) in rows.iter_mut().zip(&keyed) {
        *row = old[i as usize];
    }
}

/// The positions of `rows` (sorted on `c.right`'s key) whose key `k` makes
/// `ka c.op k` hold: a suffix for `<`/`<=`, a prefix for `>`/`>=`.
fn satisfying_range(
    rows: &[u32],
    c: Cross,
    ka: u64,
    key: impl Fn(u32) -> u64,
) -> std::ops::Range<usize> {
    let lower = || rows.partition_point(|&r| key(r) < ka);
    let upper = || rows.partition_point(|&r| key(r) <= ka);
    match c.op {
        Operator::Lt => upper()..rows.len(),
        Operator::Le => lower()..rows.len(),
        Operator::Gt => 0..lower(),
        Operator::Ge => 0..upper(),
        Operator::Eq | Operator::Ne => unreachable!("range scans are planned on order comparisons"),
    }
}

/// IEJoin (Khayyat et al., VLDB J. 2017) for `t1.X opx t2.X' and t1.Y opy t2.Y'`.
///
/// The t2 rows are laid out sorted on X', so each t1 row's X-partners are a
/// contiguous range of positions. Sweeping the t1 rows in Y order, the t2
/// rows satisfying the Y comparison only ever grow: each is marked once in a
/// bit array over the X' positions, and each t1 row scans the marked bits of
/// its range. A second-level bit array skips empty words, so cost tracks the
/// output plus n·(range/4096) rather than n².
fn iejoin(
    relation: &Relation,
    left: &[u32],
    right: &[u32],
    x: Cross,
    y: Cross,
    emit: &mut impl FnMut(u32, u32) -> bool,
) {
    let key = |slot: usize, row: u32| relation.column(slot).key(row);
    let by_x = sorted_on(right, |r| key(x.right, r));
    // X' positions in the order the sweep marks them (by Y').
    let ascending = matches!(y.op, Operator::Gt | Operator::Ge);
    // The sweep order as an ascending key.
    let sweep = |k: u64| if ascending { k } else { !k };
    let mut order: Vec<u32> = (0..by_x.len() as u32).collect();
    sort_rows_by(&mut order, |p| sweep(key(y.right, by_x[p as usize])));
    let order: Vec<usize> = order.into_iter().map(|p| p as usize).collect();
    let mut probes = left.to_vec();
    sort_rows_by(&mut probes, |a| sweep(key(y.left, a)));
    let mut marked = BitIndex::new(by_x.len());
    let mut next = 0;
    for a in probes {
        let ya = key(y.left, a);
        while next < order.len() && y.op.holds(&ya, &key(y.right, by_x[order[next]])) {
            marked.set(order[next]);
            next += 1;
        }
        let range = satisfying_range(&by_x, x, key(x.left, a), |r| key(x.right, r));
        if !marked.for_each_in(range, |p| emit(a, by_x[p])) {
            return;
        }
    }
}

/// A bit array with a summary level: bit `w` of `summary` says word `w` of
/// `words` is non-zero.
struct BitIndex {
    words: Vec<u64>,
    summary: Vec<u64>,
}

impl BitIndex {
    fn new(bits: usize) -> Self {
        let words = bits.div_ceil(64);
        BitIndex { words: vec![0; words], summary: vec![0; words.div_ceil(64)] }
    }

    fn set(&mut self, bit: usize) {
        self.words[bit / 64] |= 1 << (bit % 64);
        self.summary[bit / 4096] |= 1 << ((bit / 64) % 64);
    }

    /// Calls `f` on each set bit in `range`, in order, until it returns
    /// false; false if it did.
    fn for_each_in(&self, range: std::ops::Range<usize>, mut f: impl FnMut(usize) -> bool) -> bool {
        if range.is_empty() {
            return true;
        }
        let (first, last) = (range.start / 64, (range.end - 1) / 64);
        let mut w = first;
        while w <= last {
            let group = self.summary[w / 64] >> (w % 64);
            if group == 0 {
                w = (w / 64 + 1) * 64;
                continue;
            }
            w += group.trailing_zeros() as usize;
            if w > last {
                break;
            }
            let mut word = self.words[w];
            if w == first {
                word &= u64::MAX << (range.start % 64);
            }
            if w == last && !range.end.is_multiple_of(64) {
                word &= u64::MAX >> (64 - range.end % 64);
            }
            while word != 0 {
                if !f(w * 64 + word.trailing_zeros() as usize) {
                    return false;
                }
                word &= word - 1;
            }
            w += 1;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cap::PairCap;
    use crate::compile::{KeyConstraint, KeyPredicate};
    use crate::exec::brute_force;
    use crate::relation::KeyColumn;
    use dpincon_graph::Edge;

    /// Every share of a group, run row by row into bitmaps, gives exactly
    /// the pairs of the definition: FDs (many classes, one class, a class
    /// per row) and keys, split into 1 to 6 parts.
    #[test]
    fn multipartite_rows_over_every_share_equal_the_definition() {
        let rows = 300u32;
        let col = |f: &dyn Fn(u32) -> u64| KeyColumn::from_keys((0..rows).map(|r| Some(f(r))));
        let relation = Relation::from_slots(
            rows,
            vec![col(&|r| u64::from(r % 3)), col(&|r| u64::from(r * 7 % 11)), col(&|_| 5)],
        );
        let dc = |predicates| KeyConstraint { id: 0, display: String::new(), predicates };
        let constraints = [
            dc(vec![
                KeyPredicate::cross(0, Operator::Eq, 0),
                KeyPredicate::cross(1, Operator::Ne, 1),
            ]),
            dc(vec![
                KeyPredicate::cross(0, Operator::Eq, 0),
                KeyPredicate::cross(2, Operator::Ne, 2),
            ]),
            dc(vec![
                KeyPredicate::cross(2, Operator::Eq, 2),
                KeyPredicate::cross(1, Operator::Ne, 1),
            ]),
            dc(vec![KeyPredicate::cross(2, Operator::Eq, 2)]),
            dc(vec![KeyPredicate::cross(0, Operator::Eq, 0)]),
        ];
        for constraint in &constraints {
            let plan = Plan::new(constraint);
            assert!(plan.symmetric && plan.residual.is_empty());
            let mut want: Vec<Edge> = Vec::new();
            brute_force(&relation, constraint, &mut want);
            want.sort_unstable();
            want.dedup();
            for of in 1..=6 {
                let (mut left, mut right) = sides(&relation, &plan);
                let mut got: Vec<Edge> = Vec::new();
                for group in partition(&relation, &plan, &mut left, &mut right) {
                    let members = &left[group.left];
                    for index in 0..of {
                        let part = Part { index, of };
                        let cap = PairCap::new(None);
                        let mut sink = Capped::new(&mut got, &cap);
                        run_group(&relation, &plan, members, members, true, part, &mut sink);
                    }
                }
                got.sort_unstable();
                assert!(got.windows(2).all(|w| w[0] != w[1]), "a pair emitted twice ({of} parts)");
                assert_eq!(got, want, "{of} parts of {:?}", constraint.predicates);
            }
        }
    }

    #[test]
    fn bit_index_visits_exactly_the_set_bits_in_range() {
        let n = 10_000;
        let mut bits = BitIndex::new(n);
        let set: Vec<usize> = (0..n).filter(|i| i % 7 == 3 || (5000..5100).contains(i)).collect();
        for &b in &set {
            bits.set(b);
        }
        for range in [0..n, 3..4, 64..128, 63..4097, 4999..5101, 9_990..10_000, 20..20] {
            let mut seen = Vec::new();
            bits.for_each_in(range.clone(), |b| {
                seen.push(b);
                true
            });
            let want: Vec<usize> = set.iter().copied().filter(|b| range.contains(b)).collect();
            assert_eq!(seen, want, "range {range:?}");
        }
    }
}
