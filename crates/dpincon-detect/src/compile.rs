//! Compiling bound constraints into predicates over a [`Relation`]'s keys.

use std::collections::BTreeSet;

use dpincon_constraints::{BoundConstraint, BoundOperand, Domain, Literal, Operator, TupleVar};

use crate::DetectError;
use crate::relation::{Relation, float_key, int_key};

/// An operand of a compiled predicate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeyOperand {
    /// A column of one tuple, by its slot in the [`Relation`].
    Column {
        /// Which tuple of the pair.
        tuple: TupleVar,
        /// The relation slot.
        slot: usize,
    },
    /// A constant's key.
    Const(u64),
}

/// `t.column op right`, compared on keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyPredicate {
    /// Tuple of the left operand.
    pub tuple: TupleVar,
    /// Slot of the left operand.
    pub slot: usize,
    /// The comparison.
    pub op: OrderedOperator,
    /// The right operand.
    pub right: KeyOperand,
}

impl KeyPredicate {
    /// The cross predicate `t1.left op t2.right` (slots of the relation).
    pub fn cross(left: usize, op: Operator, right: usize) -> Self {
        KeyPredicate {
            tuple: TupleVar::T1,
            slot: left,
            op: OrderedOperator::new(op),
            right: KeyOperand::Column { tuple: TupleVar::T2, slot: right },
        }
    }
}

/// [`Operator`] with a total order, so predicates can be sorted and compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OrderedOperator(u8);

impl OrderedOperator {
    const ALL: [Operator; 6] =
        [Operator::Eq, Operator::Ne, Operator::Lt, Operator::Gt, Operator::Le, Operator::Ge];

    /// Wraps an operator.
    pub fn new(op: Operator) -> Self {
        OrderedOperator(Self::ALL.iter().position(|&o| o == op).expect("known operator") as u8)
    }

    /// The operator.
    pub fn get(self) -> Operator {
        Self::ALL[self.0 as usize]
    }
}

/// A denial constraint ready for detection.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyConstraint {
    /// The constraint's id (its position in the bound list).
    pub id: usize,
    /// Its canonical text, for reports.
    pub display: String,
    /// The conjunction that must not hold for a pair.
    pub predicates: Vec<KeyPredicate>,
}

/// The (column, domain) encodings the constraints compare.
pub fn required_columns(constraints: &[BoundConstraint]) -> BTreeSet<(usize, Domain)> {
    let mut out = BTreeSet::new();
    for p in constraints.iter().flat_map(|c| &c.predicates) {
        for operand in [&p.left, &p.right] {
            if let BoundOperand::Column { index, .. } = operand {
                out.insert((*index, p.domain));
            }
        }
    }
    out
}

/// The string constants the constraints mention (they join the dictionary).
pub fn string_constants(constraints: &[BoundConstraint]) -> BTreeSet<String> {
    constraints
        .iter()
        .flat_map(|c| &c.predicates)
        .flat_map(|p| [&p.left, &p.right])
        .filter_map(|operand| match operand {
            BoundOperand::Const(Literal::Str(s)) => Some(s.clone()),
            _ => None,
        })
        .collect()
}

/// Compiles constraints against an encoded relation.
pub fn compile(
    constraints: &[BoundConstraint],
    relation: &Relation,
) -> Result<Vec<KeyConstraint>, DetectError> {
    constraints
        .iter()
        .map(|c| {
            let predicates = c
                .predicates
                .iter()
                .map(|p| {
                    let (tuple, slot) = match column_operand(&p.left, p.domain, relation, c)? {
                        KeyOperand::Column { tuple, slot } => (tuple, slot),
                        KeyOperand::Const(_) => {
                            return Err(DetectError::Compile {
                                constraint: c.display.clone(),
                                message: "the left operand of a bound predicate must be a column"
                                    .into(),
                            });
                        }
                    };
                    let right = column_operand(&p.right, p.domain, relation, c)?;
                    Ok(KeyPredicate { tuple, slot, op: OrderedOperator::new(p.op), right })
                })
                .collect::<Result<_, _>>()?;
            Ok(KeyConstraint { id: c.id, display: c.display.clone(), predicates })
        })
        .collect()
}

fn column_operand(
    operand: &BoundOperand,
    domain: Domain,
    relation: &Relation,
    constraint: &BoundConstraint,
) -> Result<KeyOperand, DetectError> {
    let missing = |what: String| DetectError::Compile {
        constraint: constraint.display.clone(),
        message: format!("{what} was not encoded"),
    };
    Ok(match operand {
        BoundOperand::Column { tuple, index } => KeyOperand::Column {
            tuple: *tuple,
            slot: relation
                .slot(*index, domain)
                .ok_or_else(|| missing(format!("column #{index} in domain {domain:?}")))?,
        },
        BoundOperand::Const(literal) => KeyOperand::Const(match (literal, domain) {
            (Literal::Int(v), Domain::Int) => int_key(*v),
            (Literal::Int(v), Domain::Float) => float_key(*v as f64),
            (Literal::Float(v), Domain::Float) => float_key(*v),
            (Literal::Str(s), Domain::Str) => {
                relation.string_code(s).ok_or_else(|| missing(format!("string constant '{s}'")))?
            }
            (literal, domain) => {
                return Err(DetectError::Compile {
                    constraint: constraint.display.clone(),
                    message: format!("constant {literal} cannot be compared in domain {domain:?}"),
                });
            }
        }),
    })
}
