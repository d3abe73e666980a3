//! I_R's cover sets, from the constraints' shapes alone (public): one X's
//! keys and FDs ([`fd_shape`]) or one order pair ([`order_pair`]) each has
//! a cover of its own graph (`frequencies/`, `chains.rs`). Which sets
//! there are, whether every constraint is in one, and whether one set's
//! cover is I_R itself decide how I_R is released, and whether the LP is
//! needed at all, before any row is read.

use std::collections::{BTreeMap, BTreeSet};

use dpincon_constraints::BoundConstraint;

use crate::DetectError;
use crate::compile::{KeyConstraint, KeyOperand, compile, required_columns, string_constants};
use crate::relation::{KeyColumn, Relation};
use crate::shape::{OrderPair, equality_attributes, fd_shape, order_pair};

/// The shape of the constraints' cover sets (public).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CoverSets {
    /// How many sets: distinct X with keys or FDs, and distinct order pairs.
    pub sets: usize,
    /// Every constraint is in a set (a key, an FD or an order pair).
    pub all: bool,
    /// The constraints are one set whose cover is its graph's minimum
    /// cover, so I_R itself: one X's keys and FDs with a key among them or
    /// one B only (a row with B NULL conflicts with none), or one order pair.
    pub exact: bool,
    /// Two sets read a common attribute, so one wrong cell can put a row
    /// in both sets' covers, which their sum then counts twice: I_R's
    /// upper bound also reads the union cover ([`crate::union_cover`]).
    pub overlap: bool,
}

impl CoverSets {
    /// Whether a key's set reads its partition bound (`dpincon-release`,
    /// "the key partition bound"): beside another cover set; one set alone
    /// is its own exact cover. [`key_rows_wanted`] lists the key's rows on
    /// the same test.
    pub fn key_partitions(&self) -> bool {
        self.sets > 1
    }

    /// Whether I_R's upper bound reads the union cover
    /// ([`crate::union_cover`]): every constraint is in a set and two sets
    /// overlap. Elsewhere the covers' sum is as tight, with less noise.
    pub fn union_cover(&self) -> bool {
        self.all && self.overlap
    }
}

/// X → every B of X's FD-shaped constraints (`None`: a key among them, no B).
pub(crate) fn fd_sets(
    constraints: &[KeyConstraint],
) -> BTreeMap<Vec<usize>, Option<BTreeSet<usize>>> {
    let mut fds: BTreeMap<Vec<usize>, Option<BTreeSet<usize>>> = BTreeMap::new();
    for (x, b) in constraints.iter().filter_map(fd_shape) {
        let bs = fds.entry(x).or_insert_with(|| Some(BTreeSet::new()));
        match (b, bs.as_mut()) {
            (Some(b), Some(bs)) => {
                bs.insert(b);
            }
            (Some(_), None) => {}
            (None, _) => *bs = None,
        }
    }
    fds
}

/// Every constraint is a key or an FD, or has exactly a key's equality set
/// X (its violating pairs agree on X, so the key's edges include its own:
/// the graph is the keys' and FDs' alone). Public: the shapes only.
pub fn all_fd_shaped(constraints: &[KeyConstraint]) -> bool {
    let keys: BTreeSet<Vec<usize>> = constraints
        .iter()
        .filter_map(fd_shape)
        .filter_map(|(x, b)| b.is_none().then_some(x))
        .collect();
    constraints.iter().all(|c| {
        fd_shape(c).is_some()
            || keys.contains(&equality_attributes(c).into_iter().collect::<Vec<_>>())
    })
}

/// Whether the release reads the classes' leading rows
/// ([`crate::ConflictClasses::leading`]): every constraint is a key or an
/// FD ([`all_fd_shaped`]) of two X or more. Public: the shapes only.
pub fn leading_wanted(constraints: &[KeyConstraint]) -> bool {
    all_fd_shaped(constraints) && fd_sets(constraints).len() > 1
}

/// Which row lists the classes carry ([`crate::ConflictClasses::leading`]),
/// from the constraints' shapes alone (public), so that detection lists
/// them once, here or on every executor.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ListedRows {
    /// Every X lists its leading rows: I_P's leading count reads them
    /// ([`leading_wanted`]).
    pub leading: bool,
    /// Each key's X lists its rows in groups of two or more (under a key
    /// every such row leads): I_R's key partition bound reads them where a
    /// key's set is one of two cover sets or more ([`key_rows_wanted`]).
    pub key_rows: bool,
    /// Every X lists the rows its margin cover deletes
    /// ([`crate::ConflictClasses::deleted`]): I_R's union cover reads them
    /// where [`CoverSets::union_cover`] says so.
    #[cfg_attr(feature = "serde", serde(default))]
    pub deleted: bool,
}

impl ListedRows {
    /// The lists the release reads for `constraints`.
    pub fn of(constraints: &[KeyConstraint]) -> Self {
        ListedRows {
            leading: leading_wanted(constraints),
            key_rows: key_rows_wanted(constraints),
            deleted: cover_sets(constraints).union_cover(),
        }
    }
}

/// Whether I_R's lower bound reads a key's rows (`dpincon-release`, "the
/// key partition bound"): some X's keys and FDs include a key, beside at
/// least one other cover set (one set alone is its own exact cover).
/// Public: the shapes only.
pub fn key_rows_wanted(constraints: &[KeyConstraint]) -> bool {
    fd_sets(constraints).values().any(Option::is_none) && cover_sets(constraints).key_partitions()
}

/// The distinct order pairs, in their order.
pub(crate) fn order_pairs(constraints: &[KeyConstraint]) -> BTreeSet<OrderPair> {
    constraints.iter().filter_map(order_pair).collect()
}

/// [`CoverSets`] of `constraints`. A DC whose equality set is exactly a
/// key's X is in that key's set: its violating pairs agree on X, so they
/// are edges of the key's cliques, which the key's cover covers.
pub fn cover_sets(constraints: &[KeyConstraint]) -> CoverSets {
    let fds = fd_sets(constraints);
    // Each constraint's set (none: not all are in one), and each set's
    // attributes, every slot its constraints read.
    let mut read: BTreeMap<SetId, BTreeSet<usize>> = BTreeMap::new();
    let mut all = true;
    for c in constraints {
        let x = || equality_attributes(c).into_iter().collect::<Vec<usize>>();
        let id = match (fd_shape(c), order_pair(c)) {
            (Some((x, _)), _) => SetId::Fds(x),
            (None, Some(pair)) => SetId::Order(pair),
            (None, None) if fds.get(&x()).is_some_and(Option::is_none) => SetId::Fds(x()),
            (None, None) => {
                all = false;
                continue;
            }
        };
        read.entry(id).or_default().extend(slots(c));
    }
    let sets = read.len();
    let exact_fds = fds.values().all(|bs| bs.as_ref().is_none_or(|bs| bs.len() == 1));
    let read: Vec<_> = read.into_values().collect();
    let overlap =
        read.iter().enumerate().any(|(i, a)| read[i + 1..].iter().any(|b| !a.is_disjoint(b)));
    CoverSets { sets, all, exact: all && sets == 1 && exact_fds, overlap }
}

/// A cover set: one X's keys and FDs, or one order pair.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum SetId {
    Fds(Vec<usize>),
    Order(OrderPair),
}

/// The slots a constraint reads, on either side.
fn slots(c: &KeyConstraint) -> impl Iterator<Item = usize> + '_ {
    c.predicates.iter().flat_map(|p| {
        let right = match p.right {
            KeyOperand::Column { slot, .. } => Some(slot),
            KeyOperand::Const(_) => None,
        };
        std::iter::once(p.slot).chain(right)
    })
}

/// `bound` compiled against a relation of no row that encodes every
/// column they compare and their string constants: their shapes (for
/// [`cover_sets`]) before any data is read.
pub fn compile_shapes(bound: &[BoundConstraint]) -> Result<Vec<KeyConstraint>, DetectError> {
    let mut relation = Relation::new(0);
    for (column, domain) in required_columns(bound) {
        relation.insert_column(column, domain, KeyColumn::default());
    }
    for (code, value) in string_constants(bound).into_iter().enumerate() {
        relation.insert_string_code(value, code as u64);
    }
    compile(bound, &relation)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dpincon_constraints::{ColumnKind, TableSchema, bind, parse_constraints};

    /// The shapes of `text` over zip, city, state, salary and rate.
    fn shapes_of(text: &str) -> Vec<KeyConstraint> {
        let schema = TableSchema::new([
            ("zip", ColumnKind::Int),
            ("city", ColumnKind::Str),
            ("state", ColumnKind::Str),
            ("salary", ColumnKind::Int),
            ("rate", ColumnKind::Float),
        ]);
        compile_shapes(&bind(&parse_constraints(text).unwrap(), &schema).unwrap()).unwrap()
    }

    fn sets_of(text: &str) -> CoverSets {
        cover_sets(&shapes_of(text))
    }

    /// Keys, FDs and one or two order comparisons are checked by their
    /// drivers alone; a third comparison, or a ≠ beside an order, is a
    /// residual (`residual_predicates`).
    #[test]
    fn which_shapes_check_predicates_pair_by_pair() {
        let schema = TableSchema::new([
            ("zip", ColumnKind::Int),
            ("city", ColumnKind::Str),
            ("salary", ColumnKind::Int),
            ("rate", ColumnKind::Float),
        ]);
        for (text, want) in [
            ("FD: zip -> city", 0),
            ("not(t1.zip=t2.zip)", 0),
            ("not(t1.zip=t2.zip & t1.salary>t2.salary & t1.rate<t2.rate)", 0),
            ("not(t1.salary>t2.salary & t1.city='A')", 0),
            ("not(t1.zip!=t2.zip & t1.city!=t2.city)", 1),
            ("not(t1.salary>t2.salary & t1.city!=t2.city)", 1),
            ("not(t1.salary>t2.salary & t1.rate<t2.rate & t1.zip<t2.zip)", 1),
        ] {
            let bound = bind(&parse_constraints(text).unwrap(), &schema).unwrap();
            let shapes = compile_shapes(&bound).unwrap();
            let got: usize = shapes.iter().map(crate::residual_predicates).sum();
            assert_eq!(got, want, "{text}");
        }
    }

    /// A DC with exactly a key's equality set adds no edge (its pairs agree
    /// on the key), so the rest decide whether every constraint is a key or
    /// an FD; a DC on a larger set is another X and still counts. The
    /// leading count is wanted with two X or more only, a key's rows
    /// wherever its set is one of two cover sets or more.
    #[test]
    fn a_key_subsumes_the_dcs_of_its_equality_set() {
        let shapes = |text: &str| {
            let schema = TableSchema::new([
                ("zip", ColumnKind::Int),
                ("city", ColumnKind::Str),
                ("salary", ColumnKind::Int),
                ("rate", ColumnKind::Float),
            ]);
            compile_shapes(&bind(&parse_constraints(text).unwrap(), &schema).unwrap()).unwrap()
        };
        let order = "not(t1.zip=t2.zip & t1.salary>t2.salary & t1.rate<t2.rate)";
        let wide = "not(t1.zip=t2.zip & t1.city=t2.city & t1.salary>t2.salary & t1.rate<t2.rate)";
        for (text, all, leading, key_rows) in [
            ("FD: zip -> city".to_string(), true, false, false),
            ("not(t1.zip=t2.zip)".to_string(), true, false, false),
            (order.to_string(), false, false, false),
            (format!("not(t1.zip=t2.zip)\n{order}"), true, false, true),
            (format!("not(t1.zip=t2.zip)\n{order}\nFD: salary -> city"), true, true, true),
            (format!("not(t1.zip=t2.zip)\n{wide}"), false, false, true),
            (format!("FD: zip -> city\n{order}"), false, false, false),
            ("FD: zip -> city\nFD: city -> zip".to_string(), true, true, false),
            ("not(t1.zip=t2.zip)\nFD: city -> salary".to_string(), true, true, true),
        ] {
            let shapes = shapes(&text);
            let listed = ListedRows::of(&shapes);
            assert_eq!((listed.leading, listed.key_rows), (leading, key_rows), "{text}");
            assert_eq!(all_fd_shaped(&shapes), all, "{text}");
            assert_eq!(listed.leading, leading_wanted(&shapes), "{text}");
        }
    }

    #[test]
    fn which_constraints_make_one_exact_set() {
        let exact = |sets| (sets, true, true);
        let summed = |sets| (sets, true, false);
        for (text, want) in [
            ("FD: zip -> city", exact(1)),
            ("not(t1.zip=t2.zip)\nFD: zip -> city, state", exact(1)),
            ("not(t1.salary>t2.salary & t1.rate<t2.rate)", exact(1)),
            // The mirrored pair is the same set.
            (
                "not(t1.state=t2.state & t1.salary>t2.salary & t1.rate<t2.rate)\n\
                 not(t1.state=t2.state & t1.salary<t2.salary & t1.rate>t2.rate)",
                exact(1),
            ),
            // One strict order on B beside X's equalities is the FD X → B.
            ("not(t1.zip=t2.zip & t1.salary>t2.salary)", exact(1)),
            ("not(t1.zip=t2.zip)\nnot(t1.city=t2.city & t1.salary<t2.salary)", summed(2)),
            ("FD: zip -> city, state", summed(1)),
            ("FD: zip -> city\nFD: state -> zip", summed(2)),
            ("FD: zip -> city\nnot(t1.salary>t2.salary & t1.rate<t2.rate)", summed(2)),
            ("FD: zip -> city\nnot(t1.city='Boston' & t1.zip!=t2.zip)", (1, false, false)),
            // An FD and a key on a larger X are two sets; an order pair
            // beside a DC across two attributes is one, not all.
            ("FD: zip -> city\nnot(t1.zip=t2.zip & t1.city=t2.city)", summed(2)),
            // A DC on exactly a key's X is in the key's set (Stock's
            // `Ticker, Date` key and its `High < Low` sanity DC); on a
            // larger or smaller X it is in none.
            ("not(t1.zip=t2.zip)\nnot(t1.zip=t2.zip & t1.salary<t2.rate)", exact(1)),
            (
                "not(t1.zip=t2.zip)\nnot(t1.zip=t2.zip & t1.salary<t2.rate)\nFD: city -> zip",
                summed(2),
            ),
            (
                "not(t1.zip=t2.zip & t1.city=t2.city)\nnot(t1.zip=t2.zip & t1.salary<t2.rate)",
                (1, false, false),
            ),
            ("FD: zip -> city\nnot(t1.zip=t2.zip & t1.salary<t2.rate)", (1, false, false)),
            ("not(t1.zip<t2.zip & t1.salary>t2.salary)\nnot(t1.city=t2.state)", (1, false, false)),
        ] {
            let got = sets_of(text);
            assert_eq!((got.sets, got.all, got.exact), want, "{text}");
        }
    }

    /// Sets overlap when two read a common attribute (as encoded: a column
    /// compared across domains is another slot), on either side of a
    /// predicate; a DC in a key's set reads for the key's set. The union
    /// cover (and its rows) is wanted where every constraint is in a set
    /// and two overlap.
    #[test]
    fn sets_overlap_on_a_common_attribute() {
        let order = "not(t1.state=t2.state & t1.salary>t2.salary & t1.rate<t2.rate)";
        let on_key = "not(t1.zip=t2.zip & t1.salary<t2.salary & t1.city!=t2.city)";
        for (text, overlap, wanted) in [
            ("FD: zip -> city".to_string(), false, false),
            ("FD: zip -> city\nFD: state -> salary".to_string(), false, false),
            ("FD: zip -> city\nFD: state -> zip".to_string(), true, true),
            ("FD: zip -> city\nFD: city -> state".to_string(), true, true),
            (format!("FD: zip -> city, state\n{order}"), true, true),
            ("FD: zip -> city\nnot(t1.salary>t2.salary & t1.rate<t2.rate)".into(), false, false),
            (format!("not(t1.zip=t2.zip)\n{on_key}\nFD: state -> salary"), true, true),
            (format!("not(t1.zip=t2.zip)\n{on_key}\nFD: state -> rate"), false, false),
            (
                "FD: zip -> city\nFD: state -> zip\nnot(t1.city='B' & t1.zip!=t2.zip)".into(),
                true,
                false,
            ),
        ] {
            let shapes = shapes_of(&text);
            assert_eq!(cover_sets(&shapes).overlap, overlap, "{text}");
            assert_eq!(ListedRows::of(&shapes).deleted, wanted, "{text}");
        }
    }
}
