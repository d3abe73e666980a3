//! Property tests: the canonical text of a constraint re-parses to the same
//! constraint, and the parser never panics.

use dpincon_constraints::{
    ConstraintError, DenialConstraint, Literal, Operand, Operator, Origin, Predicate, TupleVar,
    parse_line,
};
use proptest::prelude::*;

fn tuple() -> impl Strategy<Value = TupleVar> {
    prop_oneof![Just(TupleVar::T1), Just(TupleVar::T2)]
}

fn column() -> impl Strategy<Value = String> {
    prop_oneof![
        // Plain identifiers, written unquoted.
        "[A-Za-z_][A-Za-z0-9_]{0,10}",
        // Printable ASCII with spaces, quotes, `#`...: written quoted.
        "[ -~]{1,10}",
        // Any non-control characters.
        "\\PC{1,6}",
    ]
}

fn literal() -> impl Strategy<Value = Literal> {
    prop_oneof![
        any::<i64>().prop_map(Literal::Int),
        any::<f64>().prop_filter("finite", |v| v.is_finite()).prop_map(Literal::Float),
        "\\PC{0,10}".prop_map(Literal::Str),
    ]
}

fn operator() -> impl Strategy<Value = Operator> {
    prop_oneof![
        Just(Operator::Eq),
        Just(Operator::Ne),
        Just(Operator::Lt),
        Just(Operator::Gt),
        Just(Operator::Le),
        Just(Operator::Ge),
    ]
}

fn attribute() -> impl Strategy<Value = Operand> {
    (tuple(), column()).prop_map(|(tuple, column)| Operand::Attr { tuple, column })
}

/// A predicate with at least one attribute, on either side.
fn predicate() -> impl Strategy<Value = Predicate> {
    let other = prop_oneof![attribute(), literal().prop_map(Operand::Const)];
    (attribute(), operator(), other, any::<bool>()).prop_map(|(attr, op, other, swap)| {
        let (left, right) = if swap { (other, attr) } else { (attr, other) };
        Predicate { left, op, right }
    })
}

/// A constraint the parser accepts: it mentions both tuple variables.
fn constraint() -> impl Strategy<Value = Vec<Predicate>> {
    prop::collection::vec(predicate(), 1..6).prop_map(|mut predicates| {
        let mentions = |t: TupleVar| {
            predicates.iter().any(|p| {
                [&p.left, &p.right]
                    .iter()
                    .any(|o| matches!(o, Operand::Attr { tuple, .. } if *tuple == t))
            })
        };
        if !(mentions(TupleVar::T1) && mentions(TupleVar::T2)) {
            predicates.push(Predicate {
                left: Operand::Attr { tuple: TupleVar::T1, column: "K".into() },
                op: Operator::Eq,
                right: Operand::Attr { tuple: TupleVar::T2, column: "K".into() },
            });
        }
        predicates
    })
}

proptest! {
    #[test]
    fn display_reparses_to_an_equal_constraint(predicates in constraint()) {
        let dc = DenialConstraint { predicates, origin: Origin::default() };
        let text = dc.to_string();
        let parsed = parse_line(7, &text);
        let expected = DenialConstraint {
            predicates: dc.predicates.clone(),
            origin: Origin { line: 7, text: text.clone() },
        };
        prop_assert_eq!(parsed, Ok(vec![expected]), "text: {}", text);
    }

    #[test]
    fn parser_never_panics_and_columns_stay_in_the_line(text in "\\PC{0,40}") {
        if let Err(ConstraintError::Syntax { line, column, .. }) = parse_line(1, &text) {
            prop_assert_eq!(line, 1);
            prop_assert!(column >= 1 && column <= text.chars().count() + 1);
        }
    }

    #[test]
    fn parser_never_panics_on_constraint_like_text(
        text in "(not\\(|t1&t2&|FD: |EQ\\(|DC:)?[tT12.,&()=!<>'\"`# A-Za-z0-9_-]{0,40}"
    ) {
        if let Err(ConstraintError::Syntax { column, .. }) = parse_line(1, &text) {
            prop_assert!(column >= 1 && column <= text.chars().count() + 1);
        }
    }
}
