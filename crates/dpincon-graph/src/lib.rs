//! The conflict graph of a table (SPEC §2) and its one stable-order edge stream.
//!
//! Nodes are tuple ids `0..n`; an edge `{u, v}` joins two tuples that together
//! violate some denial constraint. The graph is stored in *shards*: each
//! covers a contiguous range of node ids and keeps, for every node `u` in
//! it, the row of its neighbours `v > u`, in roaring's container layout.
//! While the graph is built a row is a set of row records and multipartite
//! groups ([`GraphBuilder`]); once built it is frozen ([`FrozenShard`],
//! [`Row`]).
//! Walking the shards in order, the rows in order and each row in order
//! yields the edges in the lexicographic order Λ of SPEC §2, which every
//! measure and mechanism downstream consumes through [`EdgeStream`] or
//! [`ConflictGraph::for_each_row`].
//!
//! The order depends only on the edge set, never on how detection found the
//! edges or how many threads or executors it used; removing a row keeps the relative order
//! of all other edges, which the privacy proofs need.

mod buckets;
mod builder;
mod bytes;
mod container;
mod encoded;
mod fingerprint;
mod freezer;
mod frozen;
mod graph;
mod multipartite;
mod spill;
#[cfg(test)]
mod test_pairs;

pub use builder::{BuilderParts, EdgeSink, GraphBuilder, ShardWriter};
pub use encoded::{PieceError, encode_row, for_each_record, record_pairs};
pub use fingerprint::{EdgeFingerprint, edge_stream_fingerprint};
pub use frozen::{Block, FrozenShard, Row, RowIter};
pub use graph::{ConflictGraph, EdgeStream, GraphError};
pub use multipartite::{Multipartite, UpperStart};
pub use spill::SpillConfig;

/// An undirected conflict edge with `u < v`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Edge {
    /// The smaller tuple id.
    pub u: u32,
    /// The larger tuple id.
    pub v: u32,
}

impl Edge {
    /// The edge joining `a` and `b` (in either order). `a` must differ from `b`.
    pub fn new(a: u32, b: u32) -> Self {
        debug_assert_ne!(a, b, "a tuple does not conflict with itself");
        if a < b { Edge { u: a, v: b } } else { Edge { u: b, v: a } }
    }
}
