//! Tests of binding constraints to a schema.

use super::*;
use crate::parse::parse_line;

fn schema() -> TableSchema {
    TableSchema::new([
        ("Zip", ColumnKind::Int),
        ("City", ColumnKind::Str),
        ("Salary", ColumnKind::Float),
        ("Age", ColumnKind::Int),
        ("Photo", ColumnKind::Other),
        ("Start", ColumnKind::Int),
        ("End", ColumnKind::Int),
    ])
}

/// Parses one line and binds it against [`schema`].
fn bind_text(text: &str) -> Result<Vec<BoundConstraint>> {
    bind(&parse_line(6, text).expect("parses"), &schema())
}

fn col(tuple: TupleVar, index: usize) -> BoundOperand {
    BoundOperand::Column { tuple, index }
}

const T1: TupleVar = TupleVar::T1;
const T2: TupleVar = TupleVar::T2;

/// The message of the type error `text` must produce.
fn type_error(text: &str) -> String {
    match bind_text(text) {
        Err(ConstraintError::Type { line, text: shown, message }) => {
            assert_eq!(line, 6);
            assert_eq!(shown, text);
            message
        }
        other => panic!("{text}: expected a type error, got {other:?}"),
    }
}

#[test]
fn index_of_is_exact_and_case_sensitive() {
    let s = schema();
    assert_eq!(s.index_of("City"), Some(1));
    assert_eq!(s.index_of("city"), None);
    assert_eq!(s.index_of("Nope"), None);
}

#[test]
fn binds_an_fd() {
    let bound = bind_text("FD: Zip -> City, Age").unwrap();
    assert_eq!(bound.len(), 2);
    assert_eq!(bound[0].id, 0);
    assert_eq!(bound[1].id, 1);
    assert_eq!(bound[1].display, "not(t1.Zip=t2.Zip & t1.Age!=t2.Age)");
    assert_eq!(bound[1].origin.text, "FD: Zip -> City, Age");
    assert_eq!(
        bound[0].predicates,
        vec![
            BoundPredicate {
                left: col(T1, 0),
                op: Operator::Eq,
                right: col(T2, 0),
                domain: Domain::Int,
            },
            BoundPredicate {
                left: col(T1, 1),
                op: Operator::Ne,
                right: col(T2, 1),
                domain: Domain::Str,
            },
        ]
    );
}

#[test]
fn constant_on_the_left_moves_right_with_flipped_operator() {
    let bound = bind_text("not(30 < t1.Age & t1.Zip = t2.Zip & 'Paris' = t2.City)").unwrap();
    let p = &bound[0].predicates;
    assert_eq!(
        p[0],
        BoundPredicate {
            left: col(T1, 3),
            op: Operator::Gt,
            right: BoundOperand::Const(Literal::Int(30)),
            domain: Domain::Int,
        }
    );
    assert_eq!(p[2].left, col(T2, 1));
    assert_eq!(p[2].op, Operator::Eq);
    assert_eq!(p[2].right, BoundOperand::Const(Literal::Str("Paris".into())));
    // The display keeps the constraint as written.
    assert_eq!(bound[0].display, "not(30<t1.Age & t1.Zip=t2.Zip & 'Paris'=t2.City)");
}

#[test]
fn t2_on_the_left_is_swapped_to_t1() {
    let bound = bind_text("not(t2.Zip < t1.Age & t2.City >= t1.City)").unwrap();
    let p = &bound[0].predicates;
    assert_eq!((&p[0].left, p[0].op, &p[0].right), (&col(T1, 3), Operator::Gt, &col(T2, 0)));
    assert_eq!((&p[1].left, p[1].op, &p[1].right), (&col(T1, 1), Operator::Le, &col(T2, 1)));
}

#[test]
fn same_tuple_predicates_are_kept_as_written() {
    let bound = bind_text("not(t2.End < t2.Start & t1.Zip = t2.Zip)").unwrap();
    let p = &bound[0].predicates[0];
    assert_eq!((&p.left, p.op, &p.right), (&col(T2, 6), Operator::Lt, &col(T2, 5)));
}

#[test]
fn mixed_numbers_compare_as_floats() {
    let bound =
        bind_text("not(t1.Zip=t2.Zip & t1.Salary > 50000 & t1.Age < 2.5 & t1.Age <= t2.Salary)")
            .unwrap();
    let p = &bound[0].predicates;
    assert_eq!(p[0].domain, Domain::Int);
    // An integer literal compared in Float is converted.
    assert_eq!(p[1].domain, Domain::Float);
    assert_eq!(p[1].right, BoundOperand::Const(Literal::Float(50000.0)));
    assert_eq!(p[2].domain, Domain::Float);
    assert_eq!(p[2].right, BoundOperand::Const(Literal::Float(2.5)));
    assert_eq!(p[3].domain, Domain::Float);
    // An integer literal compared with an integer column stays an integer.
    let bound = bind_text("not(t1.Age > 17 & t1.Zip = t2.Zip)").unwrap();
    assert_eq!(bound[0].predicates[0].right, BoundOperand::Const(Literal::Int(17)));
}

#[test]
fn ids_are_positions_in_the_input_slice() {
    let mut dcs = parse_line(1, "not(t1.Zip=t2.Zip & t1.City!=t2.City)").unwrap();
    dcs.extend(parse_line(2, "FD: City -> Zip").unwrap());
    let bound = bind(&dcs, &schema()).unwrap();
    let ids: Vec<usize> = bound.iter().map(|b| b.id).collect();
    assert_eq!(ids, [0, 1]);
    assert_eq!(bound[1].origin.line, 2);
}

#[test]
fn string_column_against_number_column() {
    let message = type_error("not(t1.City = t2.Zip & t1.Age = t2.Age)");
    assert!(message.contains("t1.City (string)"), "{message}");
    assert!(message.contains("t2.Zip (integer)"), "{message}");
}

#[test]
fn number_column_against_string_constant() {
    let message = type_error("not(t1.Zip = '10001' & t1.Age = t2.Age)");
    assert!(message.contains("t1.Zip (integer)"), "{message}");
    assert!(message.contains("constant '10001' (string)"), "{message}");
    assert!(message.contains("without quotes"), "{message}");
    // A non-numeric string gets no quoting hint.
    let message = type_error("not('x' < t1.Salary & t1.Age = t2.Age)");
    assert!(message.contains("t1.Salary (float)"), "{message}");
    assert!(!message.contains("without quotes"), "{message}");
}

#[test]
fn string_column_against_number_constant() {
    let message = type_error("not(t1.City != 75001 & t1.Age = t2.Age)");
    assert!(message.contains("t1.City (string)"), "{message}");
    assert!(message.contains("constant 75001 (integer)"), "{message}");
    assert!(message.contains("'75001'"), "{message}");
}

#[test]
fn non_comparable_column() {
    let message = type_error("not(t1.Photo = t2.Photo)");
    assert!(message.contains("t1.Photo (non-comparable)"), "{message}");
}

#[test]
fn two_constants() {
    // The parser refuses this, so build it in code.
    let dc = DenialConstraint {
        predicates: vec![
            Predicate {
                left: Operand::Const(Literal::Int(1)),
                op: Operator::Eq,
                right: Operand::Const(Literal::Int(1)),
            },
            Predicate {
                left: Operand::Attr { tuple: T1, column: "Zip".into() },
                op: Operator::Eq,
                right: Operand::Attr { tuple: T2, column: "Zip".into() },
            },
        ],
        origin: Origin { line: 4, text: "built".into() },
    };
    match bind(&[dc], &schema()) {
        Err(ConstraintError::Type { line, message, .. }) => {
            assert_eq!(line, 4);
            assert!(message.contains("two constants"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn no_predicate_is_refused() {
    let dc = DenialConstraint { predicates: vec![], origin: Origin::default() };
    assert!(matches!(bind(&[dc], &schema()), Err(ConstraintError::Type { .. })));
}

#[test]
fn unary_constraint_built_in_code_is_refused() {
    let dc = DenialConstraint {
        predicates: vec![Predicate {
            left: Operand::Attr { tuple: T2, column: "Age".into() },
            op: Operator::Lt,
            right: Operand::Const(Literal::Int(0)),
        }],
        origin: Origin { line: 3, text: "age".into() },
    };
    assert_eq!(
        bind(&[dc], &schema()),
        Err(ConstraintError::Unary { line: 3, text: "age".into(), tuple: T2 })
    );
}

fn unknown(text: &str, schema: &TableSchema) -> (String, String) {
    match bind(&parse_line(2, text).unwrap(), schema) {
        Err(ConstraintError::UnknownColumn { line, text: shown, column, hint }) => {
            assert_eq!(line, 2);
            assert_eq!(shown, text);
            (column, hint)
        }
        other => panic!("{text}: {other:?}"),
    }
}

#[test]
fn unknown_column_suggests_a_case_insensitive_match() {
    let (column, hint) = unknown("not(t1.Zip=t2.Zip & t1.city!=t2.city)", &schema());
    assert_eq!(column, "city");
    assert_eq!(hint, " (did you mean 'City'?)");
}

#[test]
fn unknown_column_suggests_a_close_name() {
    let (_, hint) = unknown("not(t1.Zip=t2.Zip & t1.Salry!=t2.Salary)", &schema());
    assert_eq!(hint, " (did you mean 'Salary'?)");
}

#[test]
fn unknown_column_lists_a_short_schema() {
    let (column, hint) = unknown("FD: Zip -> Country", &schema());
    assert_eq!(column, "Country");
    assert_eq!(hint, " (available columns: Zip, City, Salary, Age, Photo, Start, End)");
}

#[test]
fn unknown_column_in_a_wide_schema_has_no_list() {
    let wide = TableSchema::new((0..31).map(|i| (format!("col{i}"), ColumnKind::Int)));
    let (_, hint) = unknown("FD: col1 -> Country", &wide);
    assert_eq!(hint, "");
}

#[test]
fn error_display_names_line_text_and_attribute() {
    let err = bind_text("FD: Zip -> city").unwrap_err();
    assert_eq!(
        err.to_string(),
        "constraint on line 6 `FD: Zip -> city`: unknown column 'city' (did you mean 'City'?)"
    );
    let err = bind_text("not(t1.City = t2.Zip & t1.Age = t2.Age)").unwrap_err();
    assert!(
        err.to_string()
            .starts_with("constraint on line 6 `not(t1.City = t2.Zip & t1.Age = t2.Age)`: "),
        "{err}"
    );
}

#[test]
fn edit_distance_counts_single_edits() {
    assert_eq!(edit_distance("kitten", "sitting"), 3);
    assert_eq!(edit_distance("", "abc"), 3);
    assert_eq!(edit_distance("città", "citta"), 1);
    assert_eq!(edit_distance("same", "same"), 0);
}
