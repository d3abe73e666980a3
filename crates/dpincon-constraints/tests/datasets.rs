//! End to end through the public API: constraint lines as the shipped
//! datasets write them (copied from shared/data/*/dcs.txt), in all three
//! syntaxes, parsed and bound to a schema like the table's.

use dpincon_constraints::{
    BoundOperand, ColumnKind, ConstraintError, Domain, Operator, TableSchema, TupleVar, bind,
    parse_constraints,
};

fn tax_schema() -> TableSchema {
    TableSchema::new([
        ("AreaCode", ColumnKind::Int),
        ("Phone", ColumnKind::Int),
        ("City", ColumnKind::Str),
        ("State", ColumnKind::Str),
        ("Zip", ColumnKind::Int),
        ("Salary", ColumnKind::Int),
        ("Rate", ColumnKind::Float),
    ])
}

#[test]
fn tax_constraints_parse_and_bind() {
    let file = "\
# Tax (shared/data/Tax/dcs.txt)
not(t1.AreaCode=t2.AreaCode&t1.Phone=t2.Phone)
not(t1.City!=t2.City&t1.Zip=t2.Zip)
not(t1.State=t2.State&t1.Salary>t2.Salary&t1.Rate<t2.Rate)
";
    let dcs = parse_constraints(file).unwrap();
    let bound = bind(&dcs, &tax_schema()).unwrap();
    assert_eq!(bound.len(), 3);
    let last = &bound[2];
    assert_eq!(last.origin.line, 4);
    assert_eq!(last.display, "not(t1.State=t2.State & t1.Salary>t2.Salary & t1.Rate<t2.Rate)");
    let shape: Vec<(usize, Operator, Domain)> = last
        .predicates
        .iter()
        .map(|p| match (&p.left, &p.right) {
            (
                BoundOperand::Column { tuple: TupleVar::T1, index },
                BoundOperand::Column { tuple: TupleVar::T2, index: right },
            ) => {
                assert_eq!(index, right);
                (*index, p.op, p.domain)
            }
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        shape,
        [
            (3, Operator::Eq, Domain::Str),
            (5, Operator::Gt, Domain::Int),
            (6, Operator::Lt, Domain::Float),
        ]
    );
}

#[test]
fn the_three_syntaxes_say_the_same_thing() {
    let file = "\
FD: Zip -> City
DC: not(t1.Zip = t2.Zip and t1.City <> t2.City)
t1&t2&EQ(t1.Zip,t2.Zip)&IQ(t1.City,t2.City)
";
    let bound = bind(&parse_constraints(file).unwrap(), &tax_schema()).unwrap();
    assert_eq!(bound.len(), 3);
    assert_eq!(bound[0].predicates, bound[1].predicates);
    assert_eq!(bound[1].predicates, bound[2].predicates);
    let ids: Vec<usize> = bound.iter().map(|b| b.id).collect();
    assert_eq!(ids, [0, 1, 2]);
}

#[test]
fn a_misspelt_column_is_reported_before_any_work() {
    let file = "not(t1.AreaCode=t2.AreaCode&t1.Phone=t2.Phone)\nnot(t1.Zipcode=t2.Zipcode&t1.City!=t2.City)";
    let err = bind(&parse_constraints(file).unwrap(), &tax_schema()).unwrap_err();
    assert_eq!(
        err,
        ConstraintError::UnknownColumn {
            line: 2,
            text: "not(t1.Zipcode=t2.Zipcode&t1.City!=t2.City)".into(),
            column: "Zipcode".into(),
            hint: " (available columns: AreaCode, Phone, City, State, Zip, Salary, Rate)".into(),
        }
    );
}
