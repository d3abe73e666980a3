//! The crate's one error type.

use crate::model::TupleVar;

/// Everything that can be wrong with a constraint file or with a constraint
/// against a table schema.
///
/// Every variant names where the constraint was written (line and text) so
/// the user can fix the file without guessing.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ConstraintError {
    /// Malformed text. `line` is 1-based, `column` is the 1-based character
    /// column in that line where the problem is.
    #[error("constraint file line {line}, column {column}: {message}\n  {text}")]
    Syntax {
        /// 1-based line number.
        line: usize,
        /// 1-based character (not byte) column of the offending character.
        column: usize,
        /// What is wrong.
        message: String,
        /// The line as written (trailing whitespace removed), so `column`
        /// points into it.
        text: String,
    },
    /// An attribute not in the table.
    #[error("constraint on line {line} `{text}`: unknown column '{column}'{hint}")]
    UnknownColumn {
        /// 1-based line of the constraint.
        line: usize,
        /// The constraint's text.
        text: String,
        /// The attribute as written.
        column: String,
        /// E.g. ` (did you mean 'City'?)`, a list of the available columns,
        /// or empty.
        hint: String,
    },
    /// Comparing a string with a number (column vs column, or column vs
    /// constant), comparing two constants, or a column of a type that
    /// cannot be compared.
    #[error("constraint on line {line} `{text}`: {message}")]
    Type {
        /// 1-based line of the constraint.
        line: usize,
        /// The constraint's text.
        text: String,
        /// What is wrong, naming both operands and their types.
        message: String,
    },
    /// A DC violated by one tuple alone (mentions only t1 or only t2): not
    /// representable in a conflict graph.
    #[error(
        "constraint on line {line} `{text}` mentions only {tuple}: a constraint violated by a single tuple has no place in a conflict graph"
    )]
    Unary {
        /// 1-based line of the constraint.
        line: usize,
        /// The constraint's text.
        text: String,
        /// The only tuple variable the constraint mentions.
        tuple: TupleVar,
    },
    /// The file has no constraint at all.
    #[error("no constraint found in the constraint file")]
    Empty,
}
