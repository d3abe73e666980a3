//! Test helpers: a CSV loader and a small conflict checker written
//! independently of the crate (pairs inside equality partitions, every
//! predicate evaluated on raw values), so the tests do not trust the code
//! they test.

#![allow(dead_code)]

use std::cmp::Ordering;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use dpincon_constraints::{DenialConstraint, Literal, Operand, Operator, TupleVar};

/// The 9 lines of the paper's Tax `dcs.txt`, copied (not read from disk).
pub const TAX_DCS: &str = "\
not(t1.AreaCode=t2.AreaCode&t1.Phone=t2.Phone)
not(t1.City!=t2.City&t1.Zip=t2.Zip)
not(t1.AreaCode=t2.AreaCode&t1.State!=t2.State)
not(t1.State!=t2.State&t1.Zip=t2.Zip)
not(t1.State=t2.State&t1.HasChild=t2.HasChild&t1.ChildExemp!=t2.ChildExemp)
not(t1.State=t2.State&t1.MaritalStatus=t2.MaritalStatus&t1.SingleExemp!=t2.SingleExemp)
not(t1.State=t2.State&t1.Salary=t2.Salary&t1.Rate!=t2.Rate)
not(t1.State=t2.State&t1.Salary>t2.Salary&t1.Rate<t2.Rate)
not(t1.State=t2.State&t1.Salary<t2.Salary&t1.Rate>t2.Rate)";

pub fn dcs(text: &str) -> Vec<DenialConstraint> {
    dpincon_constraints::parse_constraints(text).unwrap()
}

/// A table of optional strings (empty CSV cell = NULL).
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<Option<String>>>,
}

impl Table {
    pub fn col(&self, name: &str) -> usize {
        self.header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}"))
    }

    pub fn get(&self, row: usize, name: &str) -> Option<&str> {
        self.rows[row][self.col(name)].as_deref()
    }

    /// Whether every value of the column is a number.
    fn numeric(&self, c: usize) -> bool {
        self.rows.iter().all(|r| r[c].as_deref().is_none_or(|v| v.parse::<f64>().is_ok()))
    }
}

pub fn read_csv(path: &Path) -> Table {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header = reader.headers().unwrap().iter().map(str::to_string).collect();
    let rows = reader
        .records()
        .map(|r| r.unwrap().iter().map(|v| (!v.is_empty()).then(|| v.to_string())).collect())
        .collect();
    Table { header, rows }
}

enum V<'v> {
    Num(f64),
    Str(&'v str),
}

/// A compiled operand: a cell of t1 (`true`) or t2, or a constant.
enum Arg<'a> {
    Cell(bool, usize),
    Num(f64),
    Str(&'a str),
}

/// Evaluates constraints on a table.
pub struct Checker<'a> {
    table: &'a Table,
    numeric: Vec<bool>,
    nums: Vec<Vec<Option<f64>>>,
}

impl<'a> Checker<'a> {
    pub fn new(table: &'a Table) -> Self {
        let numeric: Vec<bool> = (0..table.header.len()).map(|c| table.numeric(c)).collect();
        let nums = (0..table.header.len())
            .map(|c| {
                table
                    .rows
                    .iter()
                    .map(|r| {
                        if numeric[c] { r[c].as_deref().map(|v| v.parse().unwrap()) } else { None }
                    })
                    .collect()
            })
            .collect();
        Checker { table, numeric, nums }
    }

    fn compile(&self, dc: &'a DenialConstraint) -> Vec<(Arg<'a>, Operator, Arg<'a>)> {
        let arg = |o: &'a Operand| match o {
            Operand::Attr { tuple, column } => {
                Arg::Cell(*tuple == TupleVar::T1, self.table.col(column))
            }
            Operand::Const(Literal::Int(i)) => Arg::Num(*i as f64),
            Operand::Const(Literal::Float(f)) => Arg::Num(*f),
            Operand::Const(Literal::Str(s)) => Arg::Str(s),
        };
        dc.predicates.iter().map(|p| (arg(&p.left), p.op, arg(&p.right))).collect()
    }

    fn value(&self, a: &Arg<'a>, t1: usize, t2: usize) -> Option<V<'a>> {
        match *a {
            Arg::Cell(first, c) => {
                let r = if first { t1 } else { t2 };
                if self.numeric[c] {
                    self.nums[c][r].map(V::Num)
                } else {
                    self.table.rows[r][c].as_deref().map(V::Str)
                }
            }
            Arg::Num(x) => Some(V::Num(x)),
            Arg::Str(s) => Some(V::Str(s)),
        }
    }

    fn holds(&self, pred: &[(Arg<'a>, Operator, Arg<'a>)], t1: usize, t2: usize) -> bool {
        pred.iter().all(|(l, op, r)| {
            let order = match (self.value(l, t1, t2), self.value(r, t1, t2)) {
                (Some(V::Num(x)), Some(V::Num(y))) => x.partial_cmp(&y),
                (Some(V::Str(x)), Some(V::Str(y))) => Some(x.cmp(y)),
                (Some(V::Num(x)), Some(V::Str(y))) => Some(x.to_string().as_str().cmp(y)),
                (Some(V::Str(x)), Some(V::Num(y))) => Some(x.cmp(y.to_string().as_str())),
                _ => None, // NULL satisfies nothing
            };
            order.is_some_and(|o| match op {
                Operator::Eq => o == Ordering::Equal,
                Operator::Ne => o != Ordering::Equal,
                Operator::Lt => o == Ordering::Less,
                Operator::Gt => o == Ordering::Greater,
                Operator::Le => o != Ordering::Greater,
                Operator::Ge => o != Ordering::Less,
            })
        })
    }

    /// Whether `(t1, t2)` violates `dc` (every predicate holds).
    pub fn violates(&self, dc: &'a DenialConstraint, t1: usize, t2: usize) -> bool {
        self.holds(&self.compile(dc), t1, t2)
    }

    /// The conflict graph's edges `(i, j)`, `i < j`: pairs inside the
    /// partitions of the `t1.A = t2.A` predicates, both orders tested.
    pub fn edges(&self, dcs: &'a [DenialConstraint]) -> BTreeSet<(usize, usize)> {
        let mut edges = BTreeSet::new();
        for dc in dcs {
            let compiled = self.compile(dc);
            let keys: Vec<usize> = dc
                .predicates
                .iter()
                .filter_map(|p| match (&p.left, p.op, &p.right) {
                    (
                        Operand::Attr { tuple: a, column: x },
                        Operator::Eq,
                        Operand::Attr { tuple: b, column: y },
                    ) if a != b && x == y => Some(self.table.col(x)),
                    _ => None,
                })
                .collect();
            let mut groups: HashMap<Vec<String>, Vec<usize>> = HashMap::new();
            'rows: for r in 0..self.table.rows.len() {
                let mut key = Vec::with_capacity(keys.len());
                for &c in &keys {
                    match (&self.table.rows[r][c], self.nums[c][r]) {
                        (None, _) => continue 'rows, // NULL equals nothing
                        (_, Some(x)) => key.push(format!("{x}")),
                        (Some(v), None) => key.push(v.clone()),
                    }
                }
                groups.entry(key).or_default().push(r);
            }
            for group in groups.values() {
                for (x, &i) in group.iter().enumerate() {
                    for &j in &group[x + 1..] {
                        if self.holds(&compiled, i, j) || self.holds(&compiled, j, i) {
                            edges.insert((i, j));
                        }
                    }
                }
            }
        }
        edges
    }
}

/// Cells that differ between two tables of the same shape: `(row, column)`.
pub fn diff(a: &Table, b: &Table) -> Vec<(usize, usize)> {
    assert_eq!(a.header, b.header);
    assert_eq!(a.rows.len(), b.rows.len());
    let mut out = Vec::new();
    for (r, (x, y)) in a.rows.iter().zip(&b.rows).enumerate() {
        for c in 0..x.len() {
            if x[c] != y[c] {
                out.push((r, c));
            }
        }
    }
    out
}
