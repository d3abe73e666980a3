//! Tests of the three constraint syntaxes and their error columns.

use super::*;
use crate::model::{Literal, Operator, Predicate, TupleVar};

fn attr(tuple: TupleVar, column: &str) -> Operand {
    Operand::Attr { tuple, column: column.to_string() }
}

fn t1(column: &str) -> Operand {
    attr(TupleVar::T1, column)
}

fn t2(column: &str) -> Operand {
    attr(TupleVar::T2, column)
}

fn int(v: i64) -> Operand {
    Operand::Const(Literal::Int(v))
}

fn float(v: f64) -> Operand {
    Operand::Const(Literal::Float(v))
}

fn string(s: &str) -> Operand {
    Operand::Const(Literal::Str(s.to_string()))
}

fn pred(left: Operand, op: Operator, right: Operand) -> Predicate {
    Predicate { left, op, right }
}

/// Parses a line that must hold exactly one constraint; returns its predicates.
fn one(text: &str) -> Vec<Predicate> {
    let mut dcs = parse_line(1, text).unwrap_or_else(|e| panic!("{text}: {e}"));
    assert_eq!(dcs.len(), 1, "{text}");
    dcs.remove(0).predicates
}

/// The (column, message) of the syntax error a line must produce.
fn syntax(text: &str) -> (usize, String) {
    match parse_line(3, text) {
        Err(ConstraintError::Syntax { line, column, message, text: shown }) => {
            assert_eq!(line, 3);
            assert_eq!(shown, text.trim_end());
            (column, message)
        }
        other => panic!("{text}: expected a syntax error, got {other:?}"),
    }
}

/// 1-based character column of the first occurrence of `needle` in `text`.
fn column_of(text: &str, needle: &str) -> usize {
    let byte = text.find(needle).expect("needle in text");
    text[..byte].chars().count() + 1
}

// ----- NADEEF form -----

#[test]
fn nadeef_form_as_the_public_datasets_ship_it() {
    let dcs = parse_line(4, "not(t1.Zip=t2.Zip&t1.City!=t2.City)").unwrap();
    assert_eq!(
        dcs,
        vec![DenialConstraint {
            predicates: vec![
                pred(t1("Zip"), Operator::Eq, t2("Zip")),
                pred(t1("City"), Operator::Ne, t2("City")),
            ],
            origin: Origin { line: 4, text: "not(t1.Zip=t2.Zip&t1.City!=t2.City)".to_string() },
        }]
    );
}

#[test]
fn all_six_operators_and_their_aliases() {
    let p = one("not(t1.A=t2.A&t1.B!=t2.B&t1.C<t2.C&t1.D>t2.D&t1.E<=t2.E&t1.F>=t2.F)");
    let ops: Vec<Operator> = p.iter().map(|p| p.op).collect();
    assert_eq!(
        ops,
        [Operator::Eq, Operator::Ne, Operator::Lt, Operator::Gt, Operator::Le, Operator::Ge]
    );
    let aliases = one("not(t1.A==t2.A & t1.B<>t2.B)");
    assert_eq!(aliases[0].op, Operator::Eq);
    assert_eq!(aliases[1].op, Operator::Ne);
}

#[test]
fn and_keyword_is_a_case_insensitive_word() {
    let expected = vec![
        pred(t1("A"), Operator::Eq, t2("A")),
        pred(t1("B"), Operator::Ne, t2("B")),
        pred(t1("C"), Operator::Lt, t2("C")),
    ];
    assert_eq!(one("not(t1.A=t2.A and t1.B!=t2.B AND t1.C<t2.C)"), expected);
    assert_eq!(one("not(t1.A=t2.A & t1.B!=t2.B And t1.C<t2.C)"), expected);
    // `andrew` is a column, not `and` followed by `rew`.
    assert_eq!(
        one("not(t1.A=t2.A&t1.andrew!=t2.andrew)")[1],
        pred(t1("andrew"), Operator::Ne, t2("andrew"))
    );
}

#[test]
fn spaces_anywhere_between_tokens_and_prefixes() {
    let expected =
        vec![pred(t1("Zip"), Operator::Eq, t2("Zip")), pred(t1("City"), Operator::Ne, t2("City"))];
    assert_eq!(one("  not ( t1 . Zip = t2.Zip   &  t1.City != t2 . City )  "), expected);
    assert_eq!(one("DC: not(t1.Zip=t2.Zip&t1.City!=t2.City)"), expected);
    assert_eq!(one("dc :NOT(T1.Zip=T2.Zip&t1.City!=t2.City)"), expected);
    assert_eq!(one("\tnot(t1.Zip\t=\tt2.Zip&t1.City!=t2.City)"), expected);
}

#[test]
fn origin_text_is_trimmed_and_without_comment() {
    let dcs = parse_line(9, "   not(t1.A=t2.A)   # the key  ").unwrap();
    assert_eq!(dcs[0].origin.line, 9);
    assert_eq!(dcs[0].origin.text, "not(t1.A=t2.A)");
}

#[test]
fn constants_of_each_type() {
    let p =
        one("not(t1.A=t2.A & t1.Age>30 & t1.T<-3 & t1.X>=+7 & t1.P<=2.5 & t1.Q>-1e3 & t1.R<.5 \
         & t1.S='NY' & t1.U!=\"New York\" & t1.V=CA & t1.W='it''s')");
    let rights: Vec<&Operand> = p.iter().skip(1).map(|p| &p.right).collect();
    assert_eq!(
        rights,
        [
            &int(30),
            &int(-3),
            &int(7),
            &float(2.5),
            &float(-1000.0),
            &float(0.5),
            &string("NY"),
            &string("New York"),
            &string("CA"),
            &string("it's"),
        ]
    );
    // A constant on the left is kept as written; bind normalises it.
    assert_eq!(one("not(30 < t1.Age & t1.A = t2.A)")[0], pred(int(30), Operator::Lt, t1("Age")));
    // Quoted numbers stay strings.
    assert_eq!(one("not(t1.Z='10001'&t1.A=t2.A)")[0].right, string("10001"));
}

#[test]
fn extreme_integer_constants() {
    assert_eq!(one("not(t1.A>-9223372036854775808 & t1.B=t2.B)")[0].right, int(i64::MIN));
    let (column, message) = syntax("not(t1.A>9223372036854775808 & t1.B=t2.B)");
    assert_eq!(column, 10);
    assert!(message.contains("64 bits"), "{message}");
    let (column, message) = syntax("not(t1.A>1e999 & t1.B=t2.B)");
    assert_eq!(column, 10);
    assert!(message.contains("out of range"), "{message}");
}

#[test]
fn quoted_column_names() {
    assert_eq!(
        one("not(t1.\"Zip Code\"=t2.`Zip Code` & t1.\"say \"\"hi\"\"\"!=t2.City)"),
        vec![
            pred(t1("Zip Code"), Operator::Eq, t2("Zip Code")),
            pred(t1("say \"hi\""), Operator::Ne, t2("City")),
        ]
    );
}

#[test]
fn same_tuple_predicates_are_kept() {
    assert_eq!(
        one("not(t1.Start<t1.End & t1.Room=t2.Room)")[0],
        pred(t1("Start"), Operator::Lt, t1("End"))
    );
}

#[test]
fn hash_inside_a_string_is_not_a_comment() {
    assert_eq!(one("not(t1.Tag='#1' & t1.A=t2.A) # real comment")[0].right, string("#1"));
    assert_eq!(one("not(t1.\"No#\"=t2.\"No#\")")[0].left, t1("No#"));
}

// ----- HoloClean form -----

#[test]
fn holoclean_form_with_and_without_header() {
    let expected =
        vec![pred(t1("Zip"), Operator::Eq, t2("Zip")), pred(t1("City"), Operator::Ne, t2("City"))];
    assert_eq!(one("t1&t2&EQ(t1.Zip,t2.Zip)&IQ(t1.City,t2.City)"), expected);
    assert_eq!(one("EQ(t1.Zip,t2.Zip)&IQ(t1.City,t2.City)"), expected);
    assert_eq!(one(" t1 & t2 & eq ( t1.Zip , t2.Zip ) and Iq(t1.City,t2.City) "), expected);
    assert_eq!(one("DC: t1&t2&EQ(t1.Zip,t2.Zip)&IQ(t1.City,t2.City)"), expected);
}

#[test]
fn holoclean_all_functions_and_constants() {
    let p = one(
        "t1&t2&EQ(t1.A,t2.A)&IQ(t1.B,t2.B)&LT(t1.C,t2.C)&GT(t1.D,t2.D)&LTE(t1.E,t2.E)&GTE(t1.F,t2.F)",
    );
    let ops: Vec<Operator> = p.iter().map(|p| p.op).collect();
    assert_eq!(
        ops,
        [Operator::Eq, Operator::Ne, Operator::Lt, Operator::Gt, Operator::Le, Operator::Ge]
    );
    let p = one("t1&t2&EQ(t1.State,\"NY\")&EQ(t1.Zip,t2.Zip)&GT(t2.Age,-2.5)&LT(t1.N,4)");
    assert_eq!(p[0].right, string("NY"));
    assert_eq!(p[2], pred(t2("Age"), Operator::Gt, float(-2.5)));
    assert_eq!(p[3].right, int(4));
}

// ----- FDs -----

#[test]
fn fd_expands_to_one_dc_per_right_hand_attribute() {
    let dcs = parse_line(2, "FD: Zip, State -> City, County").unwrap();
    let shown: Vec<String> = dcs.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [
            "not(t1.Zip=t2.Zip & t1.State=t2.State & t1.City!=t2.City)",
            "not(t1.Zip=t2.Zip & t1.State=t2.State & t1.County!=t2.County)",
        ]
    );
    for dc in &dcs {
        assert_eq!(
            dc.origin,
            Origin { line: 2, text: "FD: Zip, State -> City, County".to_string() }
        );
    }
}

#[test]
fn fd_prefix_is_optional_and_case_insensitive() {
    let expected = parse_line(1, "FD: Zip -> City").unwrap();
    assert_eq!(expected.len(), 1);
    for text in ["fd:Zip->City", "Zip -> City", "  Fd :  Zip->  City  # note", "`Zip` -> \"City\""]
    {
        let dcs = parse_line(1, text).unwrap();
        assert_eq!(
            dcs.iter().map(|d| &d.predicates).collect::<Vec<_>>(),
            expected.iter().map(|d| &d.predicates).collect::<Vec<_>>(),
            "{text}"
        );
    }
}

#[test]
fn fd_quoted_names_and_duplicates() {
    let dcs = parse_line(1, "FD: \"Zip Code\", `Zip Code` -> City, City").unwrap();
    assert_eq!(dcs.len(), 1);
    assert_eq!(
        dcs[0].predicates,
        vec![
            pred(t1("Zip Code"), Operator::Eq, t2("Zip Code")),
            pred(t1("City"), Operator::Ne, t2("City")),
        ]
    );
}

#[test]
fn fd_errors() {
    let text = "FD: -> City";
    let (column, message) = syntax(text);
    assert_eq!(column, column_of(text, "->"));
    assert!(message.contains("at least one attribute"), "{message}");

    let (column, message) = syntax("FD: Zip ->  ");
    assert_eq!(column, 11);
    assert!(message.contains("after '->'"), "{message}");

    let text = "FD: Zip, City -> State, City";
    let (column, message) = syntax(text);
    assert_eq!(column, 25);
    assert!(message.contains("trivial FD"), "{message}");

    let text = "FD: Zip Code -> City";
    let (column, message) = syntax(text);
    assert_eq!(column, column_of(text, "Code"));
    assert!(message.contains("quote"), "{message}");

    let text = "FD: A -> B -> C";
    let (column, message) = syntax(text);
    assert_eq!(column, 12);
    assert!(message.contains("only one '->'"), "{message}");

    let text = "FD: A, -> B";
    assert_eq!(syntax(text).0, column_of(text, "->"));
}

// ----- files, comments, blank lines -----

#[test]
fn comment_and_blank_lines_yield_nothing() {
    assert_eq!(parse_line(1, ""), Ok(vec![]));
    assert_eq!(parse_line(1, "   \t "), Ok(vec![]));
    assert_eq!(parse_line(1, "# not(t1.A=t2.A)"), Ok(vec![]));
    assert_eq!(parse_line(1, "   # indented comment"), Ok(vec![]));
}

#[test]
fn file_keeps_line_numbers_across_comments_and_blank_lines() {
    let file = "\u{feff}# header\r\n\r\nnot(t1.A=t2.A&t1.B!=t2.B)\r\n   \n\
                FD: C -> D, E # trailing\n";
    let dcs = parse_constraints(file).unwrap();
    let lines: Vec<usize> = dcs.iter().map(|d| d.origin.line).collect();
    assert_eq!(lines, [3, 5, 5]);
    assert_eq!(dcs[1].origin.text, "FD: C -> D, E");
}

#[test]
fn file_reports_the_first_error_with_its_line() {
    let file = "not(t1.A=t2.A)\n\nnot(t1.A=t2.A & t1.B =< t2.B)\nnot(";
    match parse_constraints(file) {
        Err(ConstraintError::Syntax { line, column, .. }) => {
            assert_eq!((line, column), (3, 22));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn empty_file_is_an_error() {
    assert_eq!(parse_constraints(""), Err(ConstraintError::Empty));
    assert_eq!(parse_constraints("# only a comment\n\n   \n"), Err(ConstraintError::Empty));
}

#[test]
fn lines_from_the_shipped_datasets_parse() {
    // Copied from shared/data/{Adult,Flight,Tax}/dcs.txt.
    let file = "not(t1.EduNum!=t2.EduNum&t1.Education=t2.Education)\n\
                not(t1.Gain<t2.Gain&t1.Loss<t2.Loss)\n\
                not(t1.DEST=t2.DEST&t1.ORIGIN=t2.ORIGIN&t1.DISTANCE!=t2.DISTANCE)\n\
                not(t1.State=t2.State&t1.Salary>t2.Salary&t1.Rate<t2.Rate)";
    let dcs = parse_constraints(file).unwrap();
    assert_eq!(dcs.len(), 4);
    assert_eq!(
        dcs[1].predicates,
        vec![
            pred(t1("Gain"), Operator::Lt, t2("Gain")),
            pred(t1("Loss"), Operator::Lt, t2("Loss")),
        ]
    );
    assert_eq!(
        dcs[3].to_string(),
        "not(t1.State=t2.State & t1.Salary>t2.Salary & t1.Rate<t2.Rate)"
    );
    assert_eq!(dcs[2].predicates.len(), 3);
}

// ----- syntax errors point at the offending character -----

#[test]
fn unknown_operator() {
    let text = "not(t1.A=t2.A & t1.B =< t2.B)";
    let (column, message) = syntax(text);
    assert_eq!(column, column_of(text, "=<"));
    assert!(message.contains("unknown operator '=<'"), "{message}");

    let text = "not(t1.A ~ t2.A)";
    let (column, message) = syntax(text);
    assert_eq!(column, column_of(text, "~"));
    assert!(message.contains("expected a comparison operator"), "{message}");
}

#[test]
fn columns_count_characters_not_bytes() {
    let text = "not(t1.\"Città\"=t2.\"Città\" & t1.B =< t2.B)";
    let (column, _) = syntax(text);
    assert_eq!(column, 34);
    assert_eq!(column, column_of(text, "=<"));
}

#[test]
fn missing_closing_parenthesis() {
    let text = "not(t1.A=t2.A&t1.B!=t2.B";
    let (column, message) = syntax(text);
    assert_eq!(column, text.len() + 1);
    assert!(message.contains("missing ')'"), "{message}");
    assert!(message.contains("column 4"), "{message}");
    // The comment is not part of the constraint.
    let (column, _) = syntax("not(t1.A=t2.A  # oops");
    assert_eq!(column, 14);
}

#[test]
fn missing_conjunction() {
    let text = "not(t1.A=t2.A t1.B=t2.B)";
    let (column, message) = syntax(text);
    assert_eq!(column, 15);
    assert!(message.contains("expected '&', 'and' or ')'"), "{message}");
}

#[test]
fn empty_not() {
    let (column, message) = syntax("not()");
    assert_eq!(column, 5);
    assert!(message.contains("empty 'not()'"), "{message}");
    assert_eq!(syntax("DC: not(   )").0, 12);
}

#[test]
fn predicate_without_attribute() {
    let text = "not(t1.A=t2.A & 3 = 3)";
    let (column, message) = syntax(text);
    assert_eq!(column, column_of(text, "3"));
    assert!(message.contains("no attribute"), "{message}");
    let text = "t1&t2&EQ(t1.A,t2.A)&EQ('x','y')";
    assert_eq!(syntax(text).0, column_of(text, "EQ('"));
}

#[test]
fn bad_operands() {
    let text = "not(t3.A=t2.A)";
    let (column, message) = syntax(text);
    assert_eq!(column, 5);
    assert!(message.contains("unknown tuple variable 't3'"), "{message}");

    let (column, message) = syntax("not(t1=t2.A)");
    assert_eq!(column, 7);
    assert!(message.contains("after 't1'"), "{message}");

    let (column, message) = syntax("not(t1.=t2.A)");
    assert_eq!(column, 8);
    assert!(message.contains("column name"), "{message}");

    let (column, message) = syntax("not(t1.A=t2.A & t1.B=)");
    assert_eq!(column, 22);
    assert!(message.contains("expected an operand"), "{message}");

    let text = "not(t1.A=t2.A & t1.B='NY)";
    let (column, message) = syntax(text);
    assert_eq!(column, column_of(text, "'"));
    assert!(message.contains("unterminated"), "{message}");

    let text = "not(t1.A=t2.A & t1.B=3rd)";
    let (column, message) = syntax(text);
    assert_eq!(column, column_of(text, "3rd"));
    assert!(message.contains("malformed number"), "{message}");

    let text = "not(t1.A=t2.A & t1.B=`x`)";
    assert_eq!(syntax(text).0, column_of(text, "`"));

    assert_eq!(syntax("not(t1.\"\"=t2.A)").0, 8);
}

#[test]
fn text_after_the_constraint() {
    let text = "not(t1.A=t2.A) extra";
    let (column, message) = syntax(text);
    assert_eq!(column, column_of(text, "extra"));
    assert!(message.contains("unexpected 'e'"), "{message}");
}

#[test]
fn unrecognised_line() {
    let (column, message) = syntax("  hello world");
    assert_eq!(column, 3);
    assert!(message.contains("expected a constraint"), "{message}");
    // A bare conjunction without not(...) is not accepted.
    assert_eq!(syntax("t1.A=t2.A & t1.B!=t2.B").0, 1);
}

#[test]
fn holoclean_errors() {
    let text = "t1&t2&EQ(t1.Zip,t2.Zip)&NE(t1.City,t2.City)";
    let (column, message) = syntax(text);
    assert_eq!(column, column_of(text, "NE"));
    assert!(message.contains("unknown HoloClean function 'NE'"), "{message}");

    let text = "t1&t2&EQ(t1.Zip t2.Zip)";
    let (column, message) = syntax(text);
    assert_eq!(column, column_of(text, " t2") + 1);
    assert!(message.contains("expected ','"), "{message}");

    let text = "t1&t2&EQ(t1.Zip,t2.Zip";
    let (column, message) = syntax(text);
    assert_eq!(column, text.len() + 1);
    assert!(message.contains("missing ')'"), "{message}");

    let (column, message) = syntax("t1&t2");
    assert_eq!(column, 6);
    assert!(message.contains("expected '&'"), "{message}");

    let (column, message) = syntax("t1&t2&");
    assert_eq!(column, 7);
    assert!(message.contains("expected a HoloClean predicate"), "{message}");

    let text = "t1&t2&EQ(t1.A,t2.A)&";
    assert_eq!(syntax(text).0, text.len() + 1);
}

#[test]
fn syntax_error_display() {
    let err = parse_line(7, "not(t1.A ~ t2.A)").unwrap_err();
    assert_eq!(
        err.to_string(),
        "constraint file line 7, column 10: expected a comparison operator \
         (= != < > <= >=), found '~'\n  not(t1.A ~ t2.A)"
    );
}

// ----- single-tuple constraints -----

#[test]
fn unary_constraints_are_refused_by_the_parser() {
    assert_eq!(
        parse_line(5, "not(t1.A>5 & t1.B<t1.C) # one tuple"),
        Err(ConstraintError::Unary {
            line: 5,
            text: "not(t1.A>5 & t1.B<t1.C)".to_string(),
            tuple: TupleVar::T1,
        })
    );
    // Declaring both tuples in the HoloClean header does not make it binary.
    assert!(matches!(
        parse_line(1, "t1&t2&EQ(t2.State,\"NY\")&LT(t2.Age,18)"),
        Err(ConstraintError::Unary { tuple: TupleVar::T2, .. })
    ));
    let err = parse_line(2, "not(t2.A=t2.B)").unwrap_err();
    assert_eq!(
        err.to_string(),
        "constraint on line 2 `not(t2.A=t2.B)` mentions only t2: a constraint violated \
         by a single tuple has no place in a conflict graph"
    );
    // One predicate per tuple is fine: the pair violates it.
    assert_eq!(one("not(t1.A=5 & t2.A=6)").len(), 2);
}

// ----- Display re-parses (fixed cases; the property test is in tests/) -----

#[test]
fn display_quotes_what_needs_quoting() {
    let dc = DenialConstraint {
        predicates: vec![
            pred(t1("Zip Code"), Operator::Eq, t2("Zip Code")),
            pred(t1("Name"), Operator::Ne, string("O'Hara # 1")),
            pred(t2("x\"y"), Operator::Ge, float(1e20)),
        ],
        origin: Origin::default(),
    };
    let text = dc.to_string();
    assert_eq!(
        text,
        "not(t1.\"Zip Code\"=t2.\"Zip Code\" & t1.Name!='O''Hara # 1' & t2.\"x\"\"y\">=1e20)"
    );
    assert_eq!(one(&text), dc.predicates);
}
