//! The constraint model: denial constraints over pairs of tuples (SPEC §1).

use std::fmt;

/// Which tuple variable of the pair `(t1, t2)` an attribute reference names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TupleVar {
    /// The first tuple, `t1`.
    T1,
    /// The second tuple, `t2`.
    T2,
}

impl TupleVar {
    /// The other tuple variable.
    pub fn other(self) -> Self {
        match self {
            TupleVar::T1 => TupleVar::T2,
            TupleVar::T2 => TupleVar::T1,
        }
    }
}

impl fmt::Display for TupleVar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TupleVar::T1 => "t1",
            TupleVar::T2 => "t2",
        })
    }
}

/// A comparison operator of a predicate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operator {
    /// `=`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `>`
    Gt,
    /// `<=`
    Le,
    /// `>=`
    Ge,
}

impl Operator {
    /// The operator with its operands swapped: `a op b` iff `b op.flip() a`.
    pub fn flip(self) -> Self {
        match self {
            Operator::Eq => Operator::Eq,
            Operator::Ne => Operator::Ne,
            Operator::Lt => Operator::Gt,
            Operator::Gt => Operator::Lt,
            Operator::Le => Operator::Ge,
            Operator::Ge => Operator::Le,
        }
    }

    /// Whether `a op b` holds for totally ordered `a`, `b`.
    pub fn holds<T: Ord>(self, a: &T, b: &T) -> bool {
        match self {
            Operator::Eq => a == b,
            Operator::Ne => a != b,
            Operator::Lt => a < b,
            Operator::Gt => a > b,
            Operator::Le => a <= b,
            Operator::Ge => a >= b,
        }
    }

    /// True for the four order comparisons `< > <= >=`.
    pub fn is_order(self) -> bool {
        matches!(self, Operator::Lt | Operator::Gt | Operator::Le | Operator::Ge)
    }
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Operator::Eq => "=",
            Operator::Ne => "!=",
            Operator::Lt => "<",
            Operator::Gt => ">",
            Operator::Le => "<=",
            Operator::Ge => ">=",
        })
    }
}

/// A constant in a predicate such as `t1.Age > 30`.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// An integer constant, e.g. `30`.
    Int(i64),
    /// A floating-point constant, e.g. `2.5`.
    Float(f64),
    /// A string constant, quoted (`'NY'`, `"NY"`) or a bare word.
    Str(String),
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Int(v) => write!(f, "{v}"),
            Literal::Float(v) => write!(f, "{v:?}"),
            // A quote inside the string is doubled (SQL style), which the
            // parser reads back, so Display always re-parses to the same value.
            Literal::Str(s) => write!(f, "'{}'", s.replace('\'', "''")),
        }
    }
}

/// Whether `name` can be written unquoted in a constraint:
/// `[A-Za-z_][A-Za-z0-9_]*`.
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// One side of a predicate.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    /// An attribute of one tuple, `t1.Zip`.
    Attr {
        /// The tuple variable.
        tuple: TupleVar,
        /// The attribute (column) name, as written.
        column: String,
    },
    /// A constant.
    Const(Literal),
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Attr { tuple, column } if is_identifier(column) => {
                write!(f, "{tuple}.{column}")
            }
            // Names such as `Zip Code` must be quoted to re-parse.
            Operand::Attr { tuple, column } => {
                write!(f, "{tuple}.\"{}\"", column.replace('"', "\"\""))
            }
            Operand::Const(l) => write!(f, "{l}"),
        }
    }
}

/// A predicate `left op right`. At least one side is an attribute.
#[derive(Debug, Clone, PartialEq)]
pub struct Predicate {
    /// Left operand.
    pub left: Operand,
    /// Comparison.
    pub op: Operator,
    /// Right operand.
    pub right: Operand,
}

impl fmt::Display for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}{}", self.left, self.op, self.right)
    }
}

/// Where a constraint came from, for error messages.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Origin {
    /// 1-based line in the constraint file (0 when built in code).
    pub line: usize,
    /// The line's text as written (trimmed).
    pub text: String,
}

/// A denial constraint `forall t1, t2: not(p1 and ... and pk)`.
///
/// An FD `X -> Y` is parsed into one denial constraint per attribute of `Y`
/// (SPEC §1); they share the same [`Origin`].
#[derive(Debug, Clone, PartialEq)]
pub struct DenialConstraint {
    /// The conjunction that must not hold.
    pub predicates: Vec<Predicate>,
    /// Where it was written.
    pub origin: Origin,
}

impl fmt::Display for DenialConstraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not(")?;
        for (i, p) in self.predicates.iter().enumerate() {
            if i > 0 {
                f.write_str(" & ")?;
            }
            write!(f, "{p}")?;
        }
        f.write_str(")")
    }
}
