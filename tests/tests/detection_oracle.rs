//! Property test: on random small tables and random denial constraints, the
//! planned detection (partitioning, complement, range scan, IEJoin, on
//! encoded keys) finds exactly the pairs a direct evaluation of the
//! constraint on the raw values finds, with SQL NULL semantics, mixed
//! int/float comparisons, string order, constants and asymmetric DCs.
//! CI runs 2000 cases; `DPINCON_FUZZ_CASES=100000` is the long run.

use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, Int64Array, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use dpincon_constraints::{
    ConstraintError, DenialConstraint, Literal, Operand, Operator, Origin, Predicate, TupleVar,
};
use dpincon_detect::{DetectOptions, detect};
use dpincon_graph::Edge;
use dpincon_source::{TableData, prepare_detection};
use proptest::prelude::*;

#[derive(Debug, Clone, PartialEq)]
enum Value {
    I(i64),
    F(f64),
    S(String),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    I,
    F,
    S,
}

const KINDS: [Kind; 5] = [Kind::I, Kind::I, Kind::F, Kind::S, Kind::S];
const NAMES: [&str; 5] = ["a", "b", "x", "s", "t"];

fn cell(kind: Kind) -> impl Strategy<Value = Option<Value>> {
    let value = match kind {
        Kind::I => (-2i64..3).prop_map(Value::I).boxed(),
        Kind::F => {
            prop::sample::select(vec![-1.5, -0.0, 0.0, 1.0, 2.0, 2.5]).prop_map(Value::F).boxed()
        }
        Kind::S => prop::sample::select(vec!["", "a", "ab", "b", "B", "ba"])
            .prop_map(|s| Value::S(s.to_string()))
            .boxed(),
    };
    prop::option::weighted(0.85, value)
}

fn table(rows: usize) -> impl Strategy<Value = Vec<Vec<Option<Value>>>> {
    KINDS.iter().map(|&k| prop::collection::vec(cell(k), rows)).collect::<Vec<_>>()
}

fn constant(kind: Kind) -> BoxedStrategy<Literal> {
    match kind {
        Kind::I | Kind::F => prop_oneof![
            (-2i64..3).prop_map(Literal::Int),
            prop::sample::select(vec![-0.5, 0.0, 1.0, 2.5]).prop_map(Literal::Float),
        ]
        .boxed(),
        Kind::S => prop::sample::select(vec!["a", "b", "aa", "zz"])
            .prop_map(|s| Literal::Str(s.into()))
            .boxed(),
    }
}

fn operator() -> impl Strategy<Value = Operator> {
    prop::sample::select(vec![
        Operator::Eq,
        Operator::Ne,
        Operator::Lt,
        Operator::Gt,
        Operator::Le,
        Operator::Ge,
    ])
}

fn tuple() -> impl Strategy<Value = TupleVar> {
    prop::sample::select(vec![TupleVar::T1, TupleVar::T2])
}

/// A predicate on compatible columns (numbers with numbers, strings with
/// strings), across tuples, within one tuple, or against a constant.
fn predicate() -> impl Strategy<Value = Predicate> {
    let numeric = prop::sample::select(vec![0usize, 1, 2]);
    let strings = prop::sample::select(vec![3usize, 4]);
    let pair = prop_oneof![
        3 => (numeric.clone(), numeric.clone()),
        2 => (strings.clone(), strings.clone()),
    ];
    (pair, tuple(), tuple(), operator(), prop::bool::weighted(0.2)).prop_flat_map(
        |((l, r), tl, tr, op, with_const)| {
            let left = Operand::Attr { tuple: tl, column: NAMES[l].into() };
            if with_const {
                constant(KINDS[l])
                    .prop_map(move |c| Predicate {
                        left: left.clone(),
                        op,
                        right: Operand::Const(c),
                    })
                    .boxed()
            } else {
                let right = Operand::Attr { tuple: tr, column: NAMES[r].into() };
                Just(Predicate { left, op, right }).boxed()
            }
        },
    )
}

fn mentions(p: &Predicate, t: TupleVar) -> bool {
    [&p.left, &p.right].iter().any(|o| matches!(o, Operand::Attr { tuple, .. } if *tuple == t))
}

/// Denial constraints that mention both tuples (unary ones are refused by
/// `bind`, tested elsewhere).
fn constraint() -> impl Strategy<Value = DenialConstraint> {
    prop::collection::vec(predicate(), 1..4)
        .prop_filter("a DC must mention both tuples", |ps| {
            ps.iter().any(|p| mentions(p, TupleVar::T1))
                && ps.iter().any(|p| mentions(p, TupleVar::T2))
        })
        .prop_map(|predicates| DenialConstraint { predicates, origin: Origin::default() })
}

fn compare(a: &Value, b: &Value) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Value::I(x), Value::I(y)) => Some(x.cmp(y)),
        (Value::S(x), Value::S(y)) => Some(x.cmp(y)),
        (Value::I(x), Value::F(y)) => (*x as f64).partial_cmp(y),
        (Value::F(x), Value::I(y)) => x.partial_cmp(&(*y as f64)),
        (Value::F(x), Value::F(y)) => x.partial_cmp(y),
        _ => None,
    }
}

fn literal_value(l: &Literal) -> Value {
    match l {
        Literal::Int(v) => Value::I(*v),
        Literal::Float(v) => Value::F(*v),
        Literal::Str(s) => Value::S(s.clone()),
    }
}

/// The definition: (D[a], D[b]) violates iff every predicate holds, a
/// predicate with a NULL operand does not hold.
fn oracle(columns: &[Vec<Option<Value>>], dcs: &[DenialConstraint]) -> Vec<Edge> {
    let n = columns[0].len() as u32;
    let value = |o: &Operand, a: u32, b: u32| -> Option<Value> {
        match o {
            Operand::Const(l) => Some(literal_value(l)),
            Operand::Attr { tuple, column } => {
                let c = NAMES.iter().position(|x| x == column).unwrap();
                let row = if *tuple == TupleVar::T1 { a } else { b };
                columns[c][row as usize].clone()
            }
        }
    };
    let mut edges = Vec::new();
    for a in 0..n {
        for b in 0..n {
            if a == b {
                continue;
            }
            let violates = |dc: &DenialConstraint| {
                dc.predicates.iter().all(|p| match (value(&p.left, a, b), value(&p.right, a, b)) {
                    (Some(l), Some(r)) => {
                        compare(&l, &r).is_some_and(|o| p.op.holds(&o, &std::cmp::Ordering::Equal))
                    }
                    _ => false,
                })
            };
            if dcs.iter().any(violates) {
                edges.push(Edge::new(a, b));
            }
        }
    }
    edges.sort();
    edges.dedup();
    edges
}

fn table_data(columns: &[Vec<Option<Value>>]) -> TableData {
    let fields: Vec<Field> = KINDS
        .iter()
        .zip(NAMES)
        .map(|(k, name)| {
            let t = match k {
                Kind::I => DataType::Int64,
                Kind::F => DataType::Float64,
                Kind::S => DataType::Utf8,
            };
            Field::new(name, t, true)
        })
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let rows = columns[0].len();
    // Two batches, to exercise batch boundaries in the encoder.
    let split = rows / 2;
    let batch = |range: std::ops::Range<usize>| {
        let arrays: Vec<ArrayRef> = columns
            .iter()
            .zip(KINDS)
            .map(|(col, kind)| -> ArrayRef {
                let cells = &col[range.clone()];
                match kind {
                    Kind::I => Arc::new(Int64Array::from_iter(cells.iter().map(|c| match c {
                        Some(Value::I(v)) => Some(*v),
                        _ => None,
                    }))),
                    Kind::F => Arc::new(Float64Array::from_iter(cells.iter().map(|c| match c {
                        Some(Value::F(v)) => Some(*v),
                        _ => None,
                    }))),
                    Kind::S => Arc::new(StringArray::from_iter(cells.iter().map(|c| match c {
                        Some(Value::S(v)) => Some(v.clone()),
                        _ => None,
                    }))),
                }
            })
            .collect();
        RecordBatch::try_new(schema.clone(), arrays).unwrap()
    };
    TableData {
        path: "generated".into(),
        arrow_schema: schema.clone(),
        batches: vec![batch(0..split), batch(split..rows)],
        rows: rows as u32,
    }
}

fn detected(
    columns: &[Vec<Option<Value>>],
    dcs: &[DenialConstraint],
    options: DetectOptions,
) -> Vec<Edge> {
    let table = table_data(columns);
    let bind_error = |e: ConstraintError| -> Box<dyn std::error::Error> { e.into() };
    let prepared = prepare_detection(dcs, &table, |_| true, 2, bind_error)
        .expect("generated constraints are well typed");
    detect(&prepared.relation, &prepared.compiled, options).unwrap().graph.edges().collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: dpincon_tests::fuzz_cases(2000), ..ProptestConfig::default() })]

    #[test]
    fn planned_detection_equals_the_definition(
        columns in (2usize..24).prop_flat_map(table),
        dcs in prop::collection::vec(constraint(), 1..4),
        threads in 1usize..3,
    ) {
        let want = oracle(&columns, &dcs);
        let fast = detected(&columns, &dcs, DetectOptions::with_threads(threads));
        prop_assert_eq!(&fast, &want);
        let brute = detected(&columns, &dcs, DetectOptions { brute_force: true, ..DetectOptions::with_threads(1) });
        prop_assert_eq!(&brute, &want);
    }
}

/// FD-shaped and key constraints over larger groups than the random test
/// makes (above `SMALL_GROUP`, 32 rows), where the symmetric enumeration
/// hands whole groups to the graph; the random test's groups take the
/// pair-by-pair path. With no memory limit the graph adds a group's rows
/// when it is finished, merged with the pairs of other constraints; under
/// a limit it adds them at once.
#[test]
fn fd_and_key_paths_on_larger_groups() {
    let rows = 300usize;
    let cell = |v: i64| Some(Value::I(v));
    let columns: Vec<Vec<Option<Value>>> = vec![
        (0..rows).map(|r| cell((r % 7) as i64)).collect(),
        // Mostly 3: within a group of `a`, one class holds most rows.
        (0..rows)
            .map(|r| match r {
                _ if r % 11 == 0 => None,
                _ if r % 4 == 0 => cell((r * 13 % 5) as i64),
                _ => cell(3),
            })
            .collect(),
        (0..rows).map(|r| Some(Value::F((r % 3) as f64))).collect(),
        (0..rows).map(|r| Some(Value::S(format!("s{}", r % 4)))).collect(),
        (0..rows).map(|r| Some(Value::S(format!("t{}", r * 7 % 9)))).collect(),
    ];
    let attr = |t: TupleVar, c: &str| Operand::Attr { tuple: t, column: c.into() };
    let pred = |l: &str, op, r: &str| Predicate {
        left: attr(TupleVar::T1, l),
        op,
        right: attr(TupleVar::T2, r),
    };
    let dc = |ps: Vec<Predicate>| DenialConstraint { predicates: ps, origin: Origin::default() };
    let dcs = vec![
        dc(vec![pred("a", Operator::Eq, "a"), pred("b", Operator::Ne, "b")]),
        dc(vec![pred("s", Operator::Eq, "s"), pred("a", Operator::Eq, "a")]),
        // Groups of 75 rows: a key large enough to go row by row.
        dc(vec![pred("s", Operator::Eq, "s")]),
        // The same groups in three classes of equal size.
        dc(vec![pred("s", Operator::Eq, "s"), pred("x", Operator::Ne, "x")]),
        dc(vec![
            pred("t", Operator::Eq, "t"),
            pred("x", Operator::Lt, "x"),
            pred("a", Operator::Gt, "b"),
        ]),
    ];
    let want = oracle(&columns, &dcs);
    assert!(want.len() > 1000, "the fixture should be conflict-heavy, got {}", want.len());
    for threads in [1, 2] {
        for memory_limit in [None, Some(16 << 10)] {
            let options = DetectOptions { memory_limit, ..DetectOptions::with_threads(threads) };
            assert_eq!(detected(&columns, &dcs, options), want, "{options:?}");
        }
    }
}

/// Regression (found by the long oracle run, issue 14): a symmetric DC
/// whose equalities cross attributes, `not(t1.a = t2.b & t2.a = t1.b)`,
/// was enumerated as if a group's t1 and t2 rows were the same rows, and
/// lost its edges.
#[test]
fn symmetric_constraint_with_crossed_equalities() {
    let cell = |v: i64| Some(Value::I(v));
    let rows = 40usize;
    // Rows 2k and 2k+1 swap (a, b): each such pair conflicts; a few rows
    // with a = b conflict with every other row holding the same value.
    let columns: Vec<Vec<Option<Value>>> = vec![
        (0..rows)
            .map(|r| cell(if r % 2 == 0 { (r / 2) as i64 } else { 100 + (r / 2) as i64 }))
            .collect(),
        (0..rows)
            .map(|r| cell(if r % 2 == 0 { 100 + (r / 2) as i64 } else { (r / 2) as i64 }))
            .collect(),
        vec![None; rows],
        vec![None; rows],
        vec![None; rows],
    ];
    let attr = |t: TupleVar, c: &str| Operand::Attr { tuple: t, column: c.into() };
    let dcs = vec![DenialConstraint {
        predicates: vec![
            Predicate {
                left: attr(TupleVar::T1, "a"),
                op: Operator::Eq,
                right: attr(TupleVar::T2, "b"),
            },
            Predicate {
                left: attr(TupleVar::T2, "a"),
                op: Operator::Eq,
                right: attr(TupleVar::T1, "b"),
            },
        ],
        origin: Origin::default(),
    }];
    let want = oracle(&columns, &dcs);
    assert_eq!(want.len(), rows / 2, "one edge per swapped pair");
    for threads in [1, 2] {
        assert_eq!(detected(&columns, &dcs, DetectOptions::with_threads(threads)), want);
    }
}
