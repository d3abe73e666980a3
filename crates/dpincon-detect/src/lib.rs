//! Output-sensitive conflict detection for denial constraints (SPEC §2).
//!
//! Input is a [`Relation`], the table with every compared column encoded as
//! order-preserving `u64` keys, and the constraints compiled against it
//! ([`compile`]). Output is the [`ConflictGraph`](dpincon_graph::ConflictGraph).
//!
//! Each constraint is planned on its own (see `plan.rs` and README.md):
//! equality predicates partition the rows; inside a partition a key pairs
//! every row, an FD pairs rows across its right-hand-side classes, one
//! inequality scans a sorted range and two run an IEJoin. Every path emits
//! only pairs that can violate, so the cost follows the number of conflicts
//! rather than n². [`brute_force`] is the quadratic definition the fast paths
//! are tested against.
//!
//! Beside the graph it counts the facts the releases read, private values
//! from the same relation: the equality sets' max frequencies and FD
//! classes ([`equality_frequencies`]), the order pairs' exact covers
//! ([`chain_cover`]), I_R's union cover ([`union_cover`]), and, public,
//! which cover sets the constraints form ([`cover_sets`]).
//!
//! The crate knows nothing about files: `dpincon-source` builds the relation.

mod across;
mod algorithms;
mod cap;
mod chains;
mod compile;
mod exec;
#[cfg(test)]
mod fixtures;
mod frequencies;
mod leading;
mod plan;
mod relation;
mod sets;
mod shape;
mod tuples;
mod union;

pub use across::detect_parts_across;
pub use chains::chain_cover;
pub use compile::{
    KeyConstraint, KeyOperand, KeyPredicate, OrderedOperator, compile, required_columns,
    string_constants,
};
pub use exec::{DetectOptions, Detection, brute_force, detect, detect_parts};
pub use frequencies::{
    ConflictClasses, EXCESS_FROM, EqualityFrequencies, KEEP_PER_MARGIN, cross_equalities,
    degrees_unbounded, equality_frequencies, fd_classes, side_max_frequency,
};
pub use leading::{
    leading_count, leading_count_sensitivity, leading_miss, leading_miss_sensitivity,
};
pub use plan::{DetectionPlan, DriverKind, brute_force_plans, describe_plans, residual_predicates};
pub use relation::{KeyColumn, Relation, float_key, int_key};
pub use sets::{
    CoverSets, ListedRows, all_fd_shaped, compile_shapes, cover_sets, key_rows_wanted,
    leading_wanted,
};
pub use shape::{
    CrossEquality, OrderPair, cross_equality, equality_attributes, fd_shape, order_pair,
};
pub use union::{union_cover, union_cover_sensitivity};

/// The crate's one error type.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DetectError {
    /// A constraint refers to something the relation does not encode.
    #[error("constraint `{constraint}`: {message}")]
    Compile {
        /// The constraint's canonical text.
        constraint: String,
        /// What is missing.
        message: String,
    },
    /// The graph could not spill to disk under its memory limit.
    #[error("cannot create the graph spill file in '{dir}': {message}")]
    Spill {
        /// The temporary directory.
        dir: String,
        /// Why.
        message: String,
    },
    /// The drivers emitted more than [`DetectOptions::max_pairs`] pairs
    /// and stopped (the graph is then over its edge cap; `cap.rs`).
    #[error("detection emitted more than {cap} violating pairs and stopped")]
    PairCap {
        /// The cap.
        cap: u64,
    },
}
