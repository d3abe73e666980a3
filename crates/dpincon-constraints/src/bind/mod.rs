//! Binding parsed constraints to a table schema: resolve column names to
//! indexes, type-check every predicate, and normalise predicates into the
//! shape the violation detector relies on.

use crate::error::ConstraintError;
use crate::model::{DenialConstraint, Literal, Operand, Operator, Origin, Predicate, TupleVar};

type Result<T> = std::result::Result<T, ConstraintError>;

/// The comparable kind of a table column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ColumnKind {
    /// Integers of any width (a Boolean column may be mapped here).
    Int,
    /// Floating-point numbers.
    Float,
    /// Strings; order comparisons are lexicographic.
    Str,
    /// A type that cannot be compared (binary, list, ...).
    Other,
}

impl ColumnKind {
    fn name(self) -> &'static str {
        match self {
            ColumnKind::Int => "integer",
            ColumnKind::Float => "float",
            ColumnKind::Str => "string",
            ColumnKind::Other => "non-comparable",
        }
    }
}

/// The columns of the table the constraints apply to, in table order.
#[derive(Debug, Clone, Default)]
pub struct TableSchema {
    /// `(name, kind)` per column; a column's index is its position here.
    pub columns: Vec<(String, ColumnKind)>,
}

impl TableSchema {
    /// A schema from `(name, kind)` pairs in table order.
    pub fn new<S: Into<String>>(columns: impl IntoIterator<Item = (S, ColumnKind)>) -> Self {
        TableSchema {
            columns: columns.into_iter().map(|(name, kind)| (name.into(), kind)).collect(),
        }
    }

    /// Index of the column named exactly `name` (case-sensitive).
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|(n, _)| n == name)
    }
}

/// The value domain a predicate compares in. Int vs Float compares in Float.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Domain {
    /// Both sides integers.
    Int,
    /// Both sides numbers, at least one a float.
    Float,
    /// Both sides strings.
    Str,
}

/// One side of a bound predicate.
#[derive(Debug, Clone, PartialEq)]
pub enum BoundOperand {
    /// Column `index` of the schema, read from tuple `tuple`.
    Column {
        /// Which tuple of the pair.
        tuple: TupleVar,
        /// Index into [`TableSchema::columns`].
        index: usize,
    },
    /// Converted to the predicate's domain: an Int literal compared in Float
    /// becomes `Literal::Float`.
    Const(Literal),
}

/// A type-checked, normalised predicate.
///
/// `left` is always a [`BoundOperand::Column`]. When both sides are columns
/// of different tuples, `left` is of `t1` and `right` of `t2`.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundPredicate {
    /// Always a column.
    pub left: BoundOperand,
    /// The comparison.
    pub op: Operator,
    /// A column or a constant of `domain`.
    pub right: BoundOperand,
    /// The domain both sides are compared in.
    pub domain: Domain,
}

/// A denial constraint bound to a table schema.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundConstraint {
    /// Position in the slice given to `bind` (stable id of the constraint).
    pub id: usize,
    /// The conjunction that must not hold, normalised.
    pub predicates: Vec<BoundPredicate>,
    /// Where the constraint was written.
    pub origin: Origin,
    /// Canonical text, e.g. `not(t1.Zip=t2.Zip & t1.City!=t2.City)` (Display
    /// of the DenialConstraint).
    pub display: String,
}

/// Resolves columns, type-checks, normalises. Errors name line, text and
/// attribute.
///
/// Normalisation: the left operand of every predicate is a column
/// (`Const op Attr` becomes `Attr op.flip() Const`); a predicate comparing
/// columns of different tuples has `t1` on the left (`t2.A < t1.B` becomes
/// `t1.B > t2.A`); same-tuple predicates (`t1.A < t1.B`) are kept as they are.
pub fn bind(
    constraints: &[DenialConstraint],
    schema: &TableSchema,
) -> Result<Vec<BoundConstraint>> {
    constraints
        .iter()
        .enumerate()
        .map(|(id, constraint)| bind_constraint(id, constraint, schema))
        .collect()
}

fn bind_constraint(
    id: usize,
    constraint: &DenialConstraint,
    schema: &TableSchema,
) -> Result<BoundConstraint> {
    let origin = &constraint.origin;
    if constraint.predicates.is_empty() {
        return Err(ConstraintError::Type {
            line: origin.line,
            text: origin.text.clone(),
            message: "the constraint has no predicate".to_string(),
        });
    }
    let predicates = constraint
        .predicates
        .iter()
        .map(|p| bind_predicate(p, origin, schema))
        .collect::<Result<Vec<_>>>()?;
    // Also checked by the parser; repeated here for constraints built in code.
    crate::parse::check_binary(constraint)?;
    Ok(BoundConstraint { id, predicates, origin: origin.clone(), display: constraint.to_string() })
}

/// A resolved operand, before domain conversion.
enum Side<'a> {
    Column { tuple: TupleVar, index: usize, name: &'a str, kind: ColumnKind },
    Const(&'a Literal),
}

impl Side<'_> {
    fn kind(&self) -> ColumnKind {
        match self {
            Side::Column { kind, .. } => *kind,
            Side::Const(Literal::Int(_)) => ColumnKind::Int,
            Side::Const(Literal::Float(_)) => ColumnKind::Float,
            Side::Const(Literal::Str(_)) => ColumnKind::Str,
        }
    }

    /// E.g. `t1.City (string)` or `constant 30 (integer)`.
    fn describe(&self) -> String {
        match self {
            Side::Column { tuple, name, .. } => {
                let operand = Operand::Attr { tuple: *tuple, column: (*name).to_string() };
                format!("{operand} ({})", self.kind().name())
            }
            Side::Const(literal) => format!("constant {literal} ({})", self.kind().name()),
        }
    }

    fn into_bound(self, domain: Domain) -> BoundOperand {
        match self {
            Side::Column { tuple, index, .. } => BoundOperand::Column { tuple, index },
            Side::Const(Literal::Int(v)) if domain == Domain::Float => {
                BoundOperand::Const(Literal::Float(*v as f64))
            }
            Side::Const(literal) => BoundOperand::Const(literal.clone()),
        }
    }
}

fn resolve<'a>(operand: &'a Operand, origin: &Origin, schema: &'a TableSchema) -> Result<Side<'a>> {
    match operand {
        Operand::Const(literal) => Ok(Side::Const(literal)),
        Operand::Attr { tuple, column } => {
            let Some(index) = schema.index_of(column) else {
                return Err(ConstraintError::UnknownColumn {
                    line: origin.line,
                    text: origin.text.clone(),
                    column: column.clone(),
                    hint: column_hint(column, schema),
                });
            };
            let (name, kind) = &schema.columns[index];
            Ok(Side::Column { tuple: *tuple, index, name, kind: *kind })
        }
    }
}

fn bind_predicate(
    predicate: &Predicate,
    origin: &Origin,
    schema: &TableSchema,
) -> Result<BoundPredicate> {
    let type_error = |message: String| ConstraintError::Type {
        line: origin.line,
        text: origin.text.clone(),
        message,
    };
    let mut left = resolve(&predicate.left, origin, schema)?;
    let mut right = resolve(&predicate.right, origin, schema)?;
    let mut op = predicate.op;

    if let (Side::Const(_), Side::Const(_)) = (&left, &right) {
        return Err(type_error(format!(
            "predicate `{predicate}` compares two constants; it needs t1.Column or t2.Column"
        )));
    }
    for side in [&left, &right] {
        if let Side::Column { kind: ColumnKind::Other, .. } = side {
            return Err(type_error(format!(
                "in `{predicate}`, {} has a type that cannot be compared",
                side.describe()
            )));
        }
    }
    let domain = match (left.kind(), right.kind()) {
        (ColumnKind::Str, ColumnKind::Str) => Domain::Str,
        (ColumnKind::Int, ColumnKind::Int) => Domain::Int,
        (ColumnKind::Int | ColumnKind::Float, ColumnKind::Int | ColumnKind::Float) => Domain::Float,
        _ => {
            return Err(type_error(format!(
                "predicate `{predicate}` compares {} with {}: strings and numbers cannot be compared{}",
                left.describe(),
                right.describe(),
                quoting_hint(&left, &right)
            )));
        }
    };

    // Detection reads the left side from a tuple, so a constant goes right.
    if matches!(left, Side::Const(_)) {
        std::mem::swap(&mut left, &mut right);
        op = op.flip();
    }
    // Detection pairs a t1 column with a t2 column in that order.
    if let (Side::Column { tuple: TupleVar::T2, .. }, Side::Column { tuple: TupleVar::T1, .. }) =
        (&left, &right)
    {
        std::mem::swap(&mut left, &mut right);
        op = op.flip();
    }
    Ok(BoundPredicate {
        left: left.into_bound(domain),
        op,
        right: right.into_bound(domain),
        domain,
    })
}

/// When a string column meets a numeric constant (or the other way round),
/// say how to write the constant so it matches the column's type.
fn quoting_hint(left: &Side, right: &Side) -> String {
    let (column_kind, literal) = match (left, right) {
        (Side::Column { kind, .. }, Side::Const(l))
        | (Side::Const(l), Side::Column { kind, .. }) => (*kind, *l),
        _ => return String::new(),
    };
    match (column_kind, literal) {
        (ColumnKind::Str, Literal::Int(_) | Literal::Float(_)) => {
            format!(" (quote the constant to compare it as a string: '{literal}')")
        }
        (ColumnKind::Int | ColumnKind::Float, Literal::Str(s))
            if s.trim().parse::<f64>().is_ok() =>
        {
            format!(" (write the constant without quotes to compare it as a number: {})", s.trim())
        }
        _ => String::new(),
    }
}

/// A "did you mean" for an unknown column: a case-insensitive match, else
/// the closest name by edit distance, else the list of columns when short.
fn column_hint(name: &str, schema: &TableSchema) -> String {
    let lower = name.to_lowercase();
    if let Some((column, _)) = schema.columns.iter().find(|(c, _)| c.to_lowercase() == lower) {
        return format!(" (did you mean '{column}'?)");
    }
    // Allow about one typo per three characters, at least one.
    let max_distance = (name.chars().count() / 3).max(1);
    let closest = schema
        .columns
        .iter()
        .map(|(c, _)| (edit_distance(&c.to_lowercase(), &lower), c))
        .filter(|(d, _)| *d <= max_distance)
        .min_by_key(|(d, _)| *d);
    if let Some((_, column)) = closest {
        return format!(" (did you mean '{column}'?)");
    }
    if (1..=30).contains(&schema.columns.len()) {
        let names: Vec<&str> = schema.columns.iter().map(|(c, _)| c.as_str()).collect();
        return format!(" (available columns: {})", names.join(", "));
    }
    String::new()
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests;
