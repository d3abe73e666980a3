//! Adjacency shards on the wire, for distributed detection.
//!
//! A worker detects the edges of one partition task into an
//! [`EdgeCollector`] (memory follows the task's edges, not the graph's
//! node count), cuts them into [`AdjacencyShard`]s by node-id range and
//! sends each as [`encode_shard`] bytes; the coordinator decodes them
//! ([`decode_shard`]) and merges them into one [`GraphBuilder`]
//! ([`GraphBuilder::absorb_shard`]). Merging is a set union, so the edge
//! stream of the merged graph depends only on the edges, never on how many
//! workers sent them or in which order; [`edge_stream_fingerprint`] lets
//! tests and job reports check exactly that.
//!
//! Each node's neighbour set travels in the standard portable roaring
//! serialisation (readable by CRoaring, Java and Go roaring), optimised to
//! run containers first. Encoding, all integers little-endian:
//!
//! ```text
//! "DPGS" version:u8 first:u32 len:u32 entries:u32
//! entries × ( offset:u32  size:u32  portable-roaring[size] )
//! ```
//!
//! Only nodes with neighbours are written; `offset` is `node - first`,
//! strictly increasing.

use std::collections::BTreeMap;
use std::fmt;

use roaring::RoaringBitmap;

use crate::{AdjacencyShard, Edge, EdgeSink, GraphBuilder, GraphError};

const MAGIC: &[u8; 4] = b"DPGS";
const VERSION: u8 = 1;
const HEADER: usize = 4 + 1 + 4 + 4 + 4;

/// Pairs an [`EdgeCollector`] buffers before folding them into bitmaps:
/// bounds its memory at 8 MiB of pairs on top of the compressed bitmaps.
const COLLECT_PAIRS: usize = 1 << 20;

/// Encodes `shard` for the wire. Call [`AdjacencyShard::optimize`] first to
/// send run containers (shards from [`EdgeCollector::into_shards`] and
/// `GraphBuilder::finish` already are).
pub fn encode_shard(shard: &AdjacencyShard) -> Vec<u8> {
    let entries: Vec<(u32, &RoaringBitmap)> = shard
        .bitmaps()
        .iter()
        .enumerate()
        .filter(|(_, bits)| !bits.is_empty())
        .map(|(k, bits)| (k as u32, bits))
        .collect();
    let size: usize = entries.iter().map(|(_, b)| 8 + b.serialized_size()).sum();
    let mut out = Vec::with_capacity(HEADER + size);
    out.extend_from_slice(MAGIC);
    out.push(VERSION);
    out.extend_from_slice(&shard.first().to_le_bytes());
    out.extend_from_slice(&shard.len().to_le_bytes());
    out.extend_from_slice(&(entries.len() as u32).to_le_bytes());
    for (offset, bits) in entries {
        out.extend_from_slice(&offset.to_le_bytes());
        out.extend_from_slice(&(bits.serialized_size() as u32).to_le_bytes());
        bits.serialize_into(&mut out).expect("writing to a Vec cannot fail");
    }
    out
}

/// Decodes a shard of a graph on `nodes` nodes, checking everything a
/// peer could get wrong: framing, the node range, that each neighbour set
/// holds only larger node ids below `nodes`.
pub fn decode_shard(bytes: &[u8], nodes: u32) -> Result<AdjacencyShard, GraphError> {
    let bad = |message: String| GraphError::Wire { message };
    let mut input = Reader::new(bytes);
    if input.take(4).map_err(bad)? != MAGIC {
        return Err(bad("not an adjacency shard (bad magic)".into()));
    }
    let version = input.take(1).map_err(bad)?[0];
    if version != VERSION {
        return Err(bad(format!("shard encoding version {version}, expected {VERSION}")));
    }
    let first = input.u32().map_err(bad)?;
    let len = input.u32().map_err(bad)?;
    let entries = input.u32().map_err(bad)?;
    if u64::from(first) + u64::from(len) > u64::from(nodes) {
        return Err(bad(format!(
            "shard covers nodes {first}..{} but the graph has {nodes}",
            u64::from(first) + u64::from(len)
        )));
    }
    if entries > len {
        return Err(bad(format!("{entries} entries in a shard of {len} nodes")));
    }
    let mut upper = vec![RoaringBitmap::new(); len as usize];
    let mut previous: Option<u32> = None;
    for _ in 0..entries {
        let offset = input.u32().map_err(bad)?;
        let size = input.u32().map_err(bad)? as usize;
        if offset >= len || previous.is_some_and(|p| p >= offset) {
            return Err(bad(format!("entry offset {offset} out of order or out of range")));
        }
        previous = Some(offset);
        let raw = input.take(size).map_err(bad)?;
        let bits = RoaringBitmap::deserialize_from(raw)
            .map_err(|e| bad(format!("node {}: {e}", first + offset)))?;
        if bits.serialized_size() != size {
            return Err(bad(format!("node {}: trailing bytes in its bitmap", first + offset)));
        }
        if let Some(max) = bits.max().filter(|&m| m >= nodes) {
            return Err(GraphError::NeighbourOutOfRange {
                node: first + offset,
                neighbour: max,
                nodes,
            });
        }
        upper[offset as usize] = bits;
    }
    if input.at != bytes.len() {
        return Err(bad(format!("{} trailing bytes after the shard", bytes.len() - input.at)));
    }
    AdjacencyShard::from_bitmaps(first, upper)
        .ok_or_else(|| bad("a node lists a neighbour not above itself".into()))
}

/// Reads little-endian fields off a byte slice (shards on the wire and
/// in the spill file).
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, at: 0 }
    }

    /// True when every byte was read.
    pub(crate) fn is_done(&self) -> bool {
        self.at == self.bytes.len()
    }

    pub(crate) fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| format!("shard truncated at byte {}", self.at))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    pub(crate) fn u32(&mut self) -> Result<u32, String> {
        let raw = self.take(4)?;
        Ok(u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]))
    }
}

impl GraphBuilder {
    /// Adds every edge of `shard` (received from a worker). Idempotent: a
    /// shard absorbed twice, or edges also found by another task, leave the
    /// graph unchanged, so a retried task can never corrupt it.
    pub fn absorb_shard(&mut self, shard: &AdjacencyShard) {
        assert!(shard.end() <= u64::from(self.nodes()), "shard outside the graph's node range");
        for (k, bits) in shard.bitmaps().iter().enumerate() {
            self.add_upper(shard.first() + k as u32, bits);
        }
    }
}

/// An [`EdgeSink`] for one task on a worker: keeps neighbour sets only for
/// nodes that have edges, so its memory follows the task's output rather
/// than the graph's node count.
#[derive(Debug)]
pub struct EdgeCollector {
    nodes: u32,
    pending: Vec<(u32, u32)>,
    upper: BTreeMap<u32, RoaringBitmap>,
}

impl EdgeCollector {
    /// A collector for edges of a graph on nodes `0..nodes`.
    pub fn new(nodes: u32) -> Self {
        EdgeCollector { nodes, pending: Vec::new(), upper: BTreeMap::new() }
    }

    fn fold(&mut self) {
        self.pending.sort_unstable();
        self.pending.dedup();
        let mut rest = &self.pending[..];
        while let Some(&(u, _)) = rest.first() {
            let run = rest.iter().take_while(|e| e.0 == u).count();
            let (head, tail) = rest.split_at(run);
            let fresh = RoaringBitmap::from_sorted_iter(head.iter().map(|e| e.1))
                .expect("pairs are sorted and deduplicated");
            *self.upper.entry(u).or_default() |= fresh;
            rest = tail;
        }
        self.pending.clear();
    }

    /// Distinct edges collected so far.
    pub fn edge_count(&mut self) -> u64 {
        self.fold();
        self.upper.values().map(RoaringBitmap::len).sum()
    }

    /// The edges as optimised shards, one per block of `shard_nodes` node
    /// ids that holds edges, each narrowed to its first and last node with
    /// edges. Shards are in node order and cover disjoint ranges.
    pub fn into_shards(mut self, shard_nodes: u32) -> Vec<AdjacencyShard> {
        assert!(shard_nodes > 0, "a shard covers at least one node");
        self.fold();
        let mut shards = Vec::new();
        let mut block: Vec<(u32, RoaringBitmap)> = Vec::new();
        let mut flush = |block: &mut Vec<(u32, RoaringBitmap)>| {
            let (Some(&(first, _)), Some(&(last, _))) = (block.first(), block.last()) else {
                return;
            };
            let mut upper = vec![RoaringBitmap::new(); (last - first + 1) as usize];
            for (u, mut bits) in block.drain(..) {
                bits.optimize();
                upper[(u - first) as usize] = bits;
            }
            shards.push(AdjacencyShard::from_bitmaps(first, upper).expect("v > u for every edge"));
        };
        for (u, bits) in std::mem::take(&mut self.upper) {
            if block.first().is_some_and(|&(first, _)| first / shard_nodes != u / shard_nodes) {
                flush(&mut block);
            }
            block.push((u, bits));
        }
        flush(&mut block);
        shards
    }
}

impl EdgeSink for EdgeCollector {
    fn add(&mut self, a: u32, b: u32) {
        debug_assert!(a < self.nodes && b < self.nodes && a != b);
        let e = Edge::new(a, b);
        self.pending.push((e.u, e.v));
        if self.pending.len() >= COLLECT_PAIRS {
            self.fold();
        }
    }

    fn add_upper(&mut self, a: u32, upper: &RoaringBitmap) {
        debug_assert!(
            upper.min().is_none_or(|b| b > a) && upper.max().is_none_or(|b| b < self.nodes)
        );
        if !upper.is_empty() {
            *self.upper.entry(a).or_default() |= upper;
        }
    }
}

/// A fingerprint of an edge stream: its length and an order-sensitive hash
/// of every `(u, v)` in stream order. Two runs on the same input must give
/// the same fingerprint whatever the number of workers (SPEC §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EdgeFingerprint {
    /// Number of edges.
    pub edges: u64,
    /// The hash (SplitMix64 chained over the edges; stable across versions).
    pub hash: u64,
}

impl fmt::Display for EdgeFingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{:016x}", self.edges, self.hash)
    }
}

fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Fingerprints `edges` in the order given (pass `graph.edges()`).
pub fn edge_stream_fingerprint(edges: impl IntoIterator<Item = Edge>) -> EdgeFingerprint {
    let mut fp = EdgeFingerprint { edges: 0, hash: 0 };
    for e in edges {
        // Chaining (not summing) makes the hash depend on the order too.
        fp.hash = mix(fp.hash ^ (u64::from(e.u) << 32 | u64::from(e.v)));
        fp.edges += 1;
    }
    fp
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edges_of(shards: &[AdjacencyShard]) -> Vec<Edge> {
        let mut out = Vec::new();
        for s in shards {
            for (k, bits) in s.bitmaps().iter().enumerate() {
                out.extend(bits.iter().map(|v| Edge { u: s.first() + k as u32, v }));
            }
        }
        out
    }

    #[test]
    fn shards_round_trip() {
        let mut collector = EdgeCollector::new(1000);
        for (a, b) in crate::test_pairs::pseudo_random_pairs(1000, 5000, 3) {
            collector.add(a, b);
        }
        // A dense run, so some bitmaps become run containers.
        for v in 501..1000 {
            collector.add(500, v);
        }
        let shards = collector.into_shards(128);
        assert!(shards.len() > 1);
        for shard in &shards {
            let bytes = encode_shard(shard);
            assert_eq!(&decode_shard(&bytes, 1000).unwrap(), shard);
        }
        let empty = AdjacencyShard::new(10, 5);
        assert_eq!(decode_shard(&encode_shard(&empty), 15).unwrap(), empty);
    }

    #[test]
    fn collector_matches_builder_and_absorb_is_a_union() {
        let all = crate::test_pairs::pseudo_random_pairs(700, 4000, 9);
        let mut builder = GraphBuilder::new(700);
        for &(a, b) in &all {
            builder.add(a, b);
        }
        let want: Vec<Edge> = builder.finish().edges().collect();
        // Three "workers" with overlapping halves, merged in any order.
        let mut merged = GraphBuilder::with_shard_nodes(700, 100);
        for part in [&all[..2500], &all[1500..], &all[..1000]] {
            let mut c = EdgeCollector::new(700);
            for &(a, b) in part {
                c.add(b, a);
            }
            for shard in c.into_shards(64) {
                let wire = decode_shard(&encode_shard(&shard), 700).unwrap();
                merged.absorb_shard(&wire);
                merged.absorb_shard(&wire);
            }
        }
        let got: Vec<Edge> = merged.finish().edges().collect();
        assert_eq!(got, want);
        assert_eq!(edge_stream_fingerprint(got.iter().copied()), edge_stream_fingerprint(want));
    }

    #[test]
    fn fingerprint_sees_order_and_content() {
        let a = [Edge { u: 0, v: 1 }, Edge { u: 0, v: 2 }];
        let b = [Edge { u: 0, v: 2 }, Edge { u: 0, v: 1 }];
        let c = [Edge { u: 0, v: 1 }, Edge { u: 0, v: 3 }];
        let fa = edge_stream_fingerprint(a);
        assert_ne!(fa, edge_stream_fingerprint(b));
        assert_ne!(fa, edge_stream_fingerprint(c));
        assert_eq!(fa.edges, 2);
        assert_eq!(fa.to_string().split(':').next(), Some("2"));
    }

    #[test]
    fn bad_input_is_refused() {
        let mut c = EdgeCollector::new(50);
        c.add(3, 40);
        c.add(3, 7);
        let shard = c.into_shards(64).remove(0);
        assert_eq!(edges_of(std::slice::from_ref(&shard)).len(), 2);
        let bytes = encode_shard(&shard);
        assert!(decode_shard(&bytes, 50).is_ok());
        // Too few nodes for the neighbour 40.
        assert!(decode_shard(&bytes, 20).is_err());
        // Truncated, extended, bad magic.
        assert!(decode_shard(&bytes[..bytes.len() - 1], 50).is_err());
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode_shard(&longer, 50).is_err());
        let mut magic = bytes.clone();
        magic[0] = b'X';
        assert!(decode_shard(&magic, 50).is_err());
        // A neighbour below its node.
        let mut low = RoaringBitmap::new();
        low.insert(0);
        let forged = AdjacencyShard::from_bitmaps(0, vec![RoaringBitmap::new(); 1]).unwrap();
        let mut bytes = encode_shard(&forged);
        bytes[13..17].copy_from_slice(&1u32.to_le_bytes());
        bytes.extend_from_slice(&0u32.to_le_bytes());
        bytes.extend_from_slice(&(low.serialized_size() as u32).to_le_bytes());
        low.serialize_into(&mut bytes).unwrap();
        assert!(decode_shard(&bytes, 50).is_err());
    }
}
