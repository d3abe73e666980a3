//! `DetectExec`: the conflict edges of one group of constraints, found per
//! input partition on the executors.
//!
//! A group is the constraints sharing one equality attribute set X_σ (every
//! FD by its left-hand side; SPEC §2's "hash-partitioning on them first"):
//! the operator requires its input hash-partitioned on X (Ballista's
//! shuffle), so every pair that can violate lies inside one partition, and
//! each partition is detected alone with the embedded detector
//! (`dpincon_detect::detect`). Constraints without such a set form the
//! unbounded group, detected over the whole table in one partition, or
//! in pair tasks of row blocks ([`blocks`]) when the table has several
//! scan units.
//!
//! Each partition emits its summary ([`wire`]): its row count, the
//! maximum frequency of X among its rows (an X value lives in one
//! partition, so the maximum over partitions is maxfreq_X(D), SPEC §4's
//! `ub-hem` fact) and the classes of X's keys and FDs; then its graph,
//! unfrozen, in global row ids: the row records of its pairs and its FD
//! and key groups whole (the coordinator's builder files the records by
//! shard and expands the groups when it freezes, `crate::assemble`).

pub mod blocks;
mod exec;
mod spec;
mod stream;
#[cfg(test)]
mod tests;
pub mod wire;

pub use blocks::Blocks;
pub use exec::DetectExec;
pub use spec::{CrossSide, DetectSpec, KeyDomain};
pub use stream::detect_rows;
