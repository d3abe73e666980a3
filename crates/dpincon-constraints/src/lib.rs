//! dpincon-constraints: the constraint model, the parser of the three
//! accepted syntaxes, and binding to a table schema (SPEC §1).
//!
//! - [`model`]: denial constraints over a pair of tuples `(t1, t2)`.
//! - [`parse_constraints`] / [`parse_line`]: read a constraint file written
//!   as FDs (`FD: Zip, State -> City`), NADEEF DCs
//!   (`not(t1.Zip=t2.Zip&t1.City!=t2.City)`) or HoloClean DCs
//!   (`t1&t2&EQ(t1.Zip,t2.Zip)&IQ(t1.City,t2.City)`).
//! - [`bind()`]: resolve attribute names against a [`TableSchema`], type-check
//!   and normalise every predicate for violation detection.
//!
//! Every failure is a [`ConstraintError`] naming the line (and, for syntax
//! errors, the column) of the constraint.
//!
//! ```
//! use dpincon_constraints::{bind, parse_constraints, ColumnKind, TableSchema};
//!
//! let dcs = parse_constraints("FD: Zip -> City\n# a comment\n").unwrap();
//! assert_eq!(dcs[0].to_string(), "not(t1.Zip=t2.Zip & t1.City!=t2.City)");
//! let schema = TableSchema::new([("Zip", ColumnKind::Int), ("City", ColumnKind::Str)]);
//! let bound = bind(&dcs, &schema).unwrap();
//! assert_eq!(bound[0].predicates.len(), 2);
//! ```

#![warn(missing_docs)]

pub mod bind;
pub mod error;
pub mod model;
pub mod parse;

pub use bind::{
    BoundConstraint, BoundOperand, BoundPredicate, ColumnKind, Domain, TableSchema, bind,
};
pub use error::ConstraintError;
pub use model::{
    DenialConstraint, Literal, Operand, Operator, Origin, Predicate, TupleVar, is_identifier,
};
pub use parse::{parse_constraints, parse_line};
