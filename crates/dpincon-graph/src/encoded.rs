//! Rows of the adjacency as bytes: what a cluster's executors send the
//! coordinator (adjacency pieces, by row), and what the spill file holds
//! while the graph is built.
//!
//! A record is one node's neighbours above it, all or some of them, in the
//! frozen row's own layout (`frozen/`), little-endian:
//!
//! ```text
//! node: u32   n: u32 (≥ 1)   n × (key: u16, card − 1: u16)   units: u16 …
//! ```
//!
//! A container's units are its lows ascending (up to 4,096 of them) or,
//! above that, a 65,536-bit bitmap as 4,096 words. A node may have any
//! number of records, overlapping or not, in any order: the builder unions
//! them when it freezes the shard (`freezer.rs`), and a node with a single
//! record has it copied. Records from another process are checked
//! ([`EncodedRow::check`]) before they are kept: a malformed piece is an
//! error, never a wrong graph.

use std::ops::Range;

use crate::container::{ARRAY_MAX, BITMAP_WORDS, Container};

/// Why a piece of a graph from another process (a cluster executor's row
/// records and groups) is refused: a malformed piece is an error, never a
/// wrong graph.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PieceError {
    /// The bytes end inside a record.
    #[error("a row record cut short ({left} bytes left)")]
    CutShort {
        /// Bytes left where the record starts.
        left: usize,
    },
    /// A record with no container.
    #[error("a row record of node {node} with no container")]
    NoContainer {
        /// The record's node.
        node: u32,
    },
    /// A record's node is not one of the graph's.
    #[error("the row record of node {node}: no such node in a graph of {nodes} nodes")]
    NoSuchNode {
        /// The record's node.
        node: u32,
        /// The graph's nodes.
        nodes: u32,
    },
    /// A record's container keys do not ascend.
    #[error("the row record of node {node}: container keys do not ascend")]
    KeysOutOfOrder {
        /// The record's node.
        node: u32,
    },
    /// A bitmap container holds another number of bits than it says.
    #[error("the row record of node {node}: a bitmap container's count is wrong")]
    BitmapCount {
        /// The record's node.
        node: u32,
    },
    /// An array container's values do not ascend.
    #[error("the row record of node {node}: an array container's values do not ascend")]
    ValuesOutOfOrder {
        /// The record's node.
        node: u32,
    },
    /// A neighbour at or below the record's node.
    #[error("the row record of node {node}: a neighbour below the node")]
    NeighbourBelow {
        /// The record's node.
        node: u32,
    },
    /// A neighbour past the graph's nodes.
    #[error(
        "the row record of node {node}: neighbour {neighbour} outside the graph's {nodes} nodes"
    )]
    NeighbourOutside {
        /// The record's node.
        node: u32,
        /// The neighbour.
        neighbour: u32,
        /// The graph's nodes.
        nodes: u32,
    },
    /// A group's class does not ascend.
    #[error("a group's class does not ascend")]
    ClassOutOfOrder,
    /// A group's row past the graph's nodes.
    #[error("a group's row outside the graph's {nodes} nodes")]
    GroupRowOutside {
        /// The graph's nodes.
        nodes: u32,
    },
    /// A row in two classes of one group.
    #[error("a row in two classes of one group")]
    RowInTwoClasses,
    /// A share past its group's rows.
    #[error("a share {share:?} of a group of {rows} rows")]
    BadShare {
        /// The share.
        share: Range<usize>,
        /// The group's rows.
        rows: usize,
    },
}

/// Appends the record of `node` with neighbours `values` (strictly
/// ascending, all above `node`) to `out`; nothing when `values` is empty.
pub fn encode_row(out: &mut Vec<u8>, node: u32, values: &[u32]) {
    debug_assert!(values.windows(2).all(|w| w[0] < w[1]), "a row ascends");
    debug_assert!(values.first().is_none_or(|&v| v > node), "neighbours lie above the node");
    if values.is_empty() {
        return;
    }
    // Three linear passes over the runs of one key (the executors encode
    // every edge: this is their hot loop): sizes, headers, units.
    let runs = || values.chunk_by(|a, b| a >> 16 == b >> 16);
    let units = |run: &[u32]| if run.len() > ARRAY_MAX { BITMAP_WORDS } else { run.len() };
    let (count, total) = runs().fold((0u32, 0usize), |(n, u), run| (n + 1, u + units(run)));
    out.reserve(8 + 4 * count as usize + 2 * total);
    out.extend_from_slice(&node.to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    for run in runs() {
        out.extend_from_slice(&((run[0] >> 16) as u16).to_le_bytes());
        out.extend_from_slice(&((run.len() - 1) as u16).to_le_bytes());
    }
    for run in runs() {
        let start = out.len();
        out.resize(start + 2 * units(run), 0);
        let dst = &mut out[start..];
        if run.len() > ARRAY_MAX {
            for &v in run {
                let (word, bit) = (usize::from(v as u16 / 16), v % 16);
                dst[2 * word + usize::from(bit >= 8)] |= 1 << (bit % 8);
            }
        } else {
            for (d, &v) in dst.chunks_exact_mut(2).zip(run) {
                d.copy_from_slice(&(v as u16).to_le_bytes());
            }
        }
    }
}

/// One record: a node and some of its neighbours above it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EncodedRow<'a> {
    pub(crate) node: u32,
    /// `n` container headers, 4 bytes each.
    headers: &'a [u8],
    /// The containers' units, 2 bytes each.
    units: &'a [u8],
}

fn u16_at(bytes: &[u8], i: usize) -> u16 {
    u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]])
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().expect("4 bytes")))
}

impl<'a> EncodedRow<'a> {
    /// The first record of `bytes` and what follows it, checking only
    /// that the record's lengths fit (see [`EncodedRow::check`]).
    pub(crate) fn split(bytes: &'a [u8]) -> Result<(Self, &'a [u8]), PieceError> {
        let short = || PieceError::CutShort { left: bytes.len() };
        let node = u32_at(bytes, 0).ok_or_else(short)?;
        let n = u32_at(bytes, 4).ok_or_else(short)? as usize;
        if n == 0 {
            return Err(PieceError::NoContainer { node });
        }
        let headers = bytes.get(8..8 + 4 * n).ok_or_else(short)?;
        let units: usize = (0..n)
            .map(|c| {
                let card = usize::from(u16_at(headers, 2 * c + 1)) + 1;
                if card > ARRAY_MAX { BITMAP_WORDS } else { card }
            })
            .sum();
        let end = 8 + 4 * n + 2 * units;
        let units = bytes.get(8 + 4 * n..end).ok_or_else(short)?;
        Ok((EncodedRow { node, headers, units }, &bytes[end..]))
    }

    /// The containers, with their offsets (in units) from the first.
    pub(crate) fn containers(&self) -> impl Iterator<Item = Container> + 'a {
        let headers = self.headers;
        let mut offset = 0u32;
        (0..headers.len() / 4).map(move |c| {
            let container = Container {
                key: u16_at(headers, 2 * c),
                card_minus_1: u16_at(headers, 2 * c + 1),
                offset,
            };
            offset += container.units() as u32;
            container
        })
    }

    /// The units, decoded.
    pub(crate) fn units(&self) -> impl ExactSizeIterator<Item = u16> + 'a {
        self.units.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]]))
    }

    /// Unit `i`.
    pub(crate) fn unit(&self, i: usize) -> u16 {
        u16_at(self.units, i)
    }

    /// The units of container `c` (one of this record's), decoded.
    pub(crate) fn units_of(&self, c: Container) -> impl ExactSizeIterator<Item = u16> + 'a {
        let at = 2 * c.offset as usize;
        self.units[at..at + 2 * c.units()].chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]]))
    }

    /// The record's size in bytes.
    pub(crate) fn byte_len(&self) -> usize {
        8 + self.headers.len() + self.units.len()
    }

    /// Number of neighbours.
    pub(crate) fn len(&self) -> u64 {
        self.containers().map(|c| c.card() as u64).sum()
    }

    /// Checks what [`EncodedRow::split`] does not: the node lies in
    /// `0..nodes`, keys ascend, an array's lows ascend, a bitmap holds as
    /// many bits as it says, and every neighbour lies in `node + 1..nodes`.
    pub(crate) fn check(&self, nodes: u32) -> Result<(), PieceError> {
        let node = self.node;
        if node >= nodes {
            return Err(PieceError::NoSuchNode { node, nodes });
        }
        let (mut last_key, mut first, mut last) = (None, None, 0u32);
        for c in self.containers() {
            if last_key.is_some_and(|k| k >= c.key) {
                return Err(PieceError::KeysOutOfOrder { node });
            }
            last_key = Some(c.key);
            let base = u32::from(c.key) << 16;
            let units = self.units_of(c);
            let (low, high) = if c.is_bitmap() {
                let (mut bits, mut lowest, mut highest) = (0, None, 0);
                for (i, w) in units.enumerate().filter(|(_, w)| *w != 0) {
                    bits += w.count_ones() as usize;
                    lowest.get_or_insert(i as u32 * 16 + w.trailing_zeros());
                    highest = i as u32 * 16 + 15 - w.leading_zeros();
                }
                if bits != c.card() {
                    return Err(PieceError::BitmapCount { node });
                }
                (lowest.unwrap_or(0), highest)
            } else {
                // One pass: each low above the one before.
                let mut lows = units;
                let head = lows.next().expect("a container holds a value");
                let mut prev = head;
                for low in lows {
                    if low <= prev {
                        return Err(PieceError::ValuesOutOfOrder { node });
                    }
                    prev = low;
                }
                (u32::from(head), u32::from(prev))
            };
            first.get_or_insert(base | low);
            last = base | high;
        }
        if first.is_some_and(|v| v <= node) {
            return Err(PieceError::NeighbourBelow { node });
        }
        if last >= nodes {
            return Err(PieceError::NeighbourOutside { node, neighbour: last, nodes });
        }
        Ok(())
    }
}

/// Calls `f` with each record of `bytes` in order: its node and its
/// neighbours, ascending. An error for bytes that are not whole records
/// (they are not checked otherwise: records this process wrote).
pub fn for_each_record(bytes: &[u8], mut f: impl FnMut(u32, &[u32])) -> Result<(), PieceError> {
    let mut values = Vec::new();
    for row in records(bytes) {
        let row = row?;
        values.clear();
        for c in row.containers() {
            let base = u32::from(c.key) << 16;
            if c.is_bitmap() {
                for (i, word) in row.units_of(c).enumerate() {
                    let mut word = word;
                    while word != 0 {
                        values.push(base | (i as u32 * 16 + word.trailing_zeros()));
                        word &= word - 1;
                    }
                }
            } else {
                values.extend(row.units_of(c).map(|low| base | u32::from(low)));
            }
        }
        f(row.node, &values);
    }
    Ok(())
}

/// The pairs the records of `bytes` hold (each record's neighbour count,
/// summed), without decoding them; an error for bytes that are not whole
/// records.
pub fn record_pairs(bytes: &[u8]) -> Result<u64, PieceError> {
    records(bytes).map(|row| row.map(|r| r.len())).sum()
}

/// The records of `bytes`, in order; an error for bytes that are not
/// whole records.
pub(crate) fn records(
    mut bytes: &[u8],
) -> impl Iterator<Item = Result<EncodedRow<'_>, PieceError>> {
    std::iter::from_fn(move || {
        if bytes.is_empty() {
            return None;
        }
        match EncodedRow::split(bytes) {
            Ok((row, rest)) => {
                bytes = rest;
                Some(Ok(row))
            }
            Err(e) => {
                bytes = &[];
                Some(Err(e))
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FrozenShard;

    fn decoded(row: &EncodedRow<'_>) -> Vec<u32> {
        let mut shard = FrozenShard::new(row.node);
        shard.push_record(row);
        shard.row(0).iter().collect()
    }

    #[test]
    fn records_decode_to_their_rows_and_check_clean() {
        let rows: Vec<(u32, Vec<u32>)> = vec![
            (0, vec![1]),
            (3, (4..5000).chain([70_000, 1 << 20]).collect()),
            (9, (0..5000u32).map(|i| 10 + i * 2).collect()),
            (1 << 20, vec![(1 << 20) + 1, u32::MAX - 1]),
        ];
        let mut bytes = Vec::new();
        for (node, values) in &rows {
            encode_row(&mut bytes, *node, values);
        }
        encode_row(&mut bytes, 5, &[]);
        let got: Vec<EncodedRow<'_>> = records(&bytes).collect::<Result<_, _>>().unwrap();
        assert_eq!(got.len(), rows.len());
        for (row, (node, values)) in got.iter().zip(&rows) {
            assert_eq!(row.node, *node);
            assert_eq!(row.len(), values.len() as u64);
            assert_eq!(decoded(row), *values);
            row.check(u32::MAX).unwrap();
        }
        assert_eq!(got.iter().map(EncodedRow::byte_len).sum::<usize>(), bytes.len());
        // Read back whole, as an executor re-encodes its records.
        let mut back = Vec::new();
        for_each_record(&bytes, |u, vs| back.push((u, vs.to_vec()))).unwrap();
        assert_eq!(back, rows);
        assert!(for_each_record(&bytes[..bytes.len() - 1], |_, _| {}).is_err());
        let pairs: usize = rows.iter().map(|(_, vs)| vs.len()).sum();
        assert_eq!(record_pairs(&bytes), Ok(pairs as u64));
        assert!(record_pairs(&bytes[..bytes.len() - 1]).is_err());
    }

    #[test]
    fn malformed_records_are_refused() {
        let one = |node: u32, values: &[u32]| {
            let mut bytes = Vec::new();
            encode_row(&mut bytes, node, values);
            bytes
        };
        let check = |bytes: &[u8], nodes: u32| -> Result<(), PieceError> {
            for row in records(bytes) {
                row?.check(nodes)?;
            }
            Ok(())
        };
        use PieceError::*;
        let good = one(2, &[3, 9, 70_000]);
        assert_eq!(check(&good, 70_001), Ok(()));
        let outside = check(&good, 70_000).unwrap_err();
        assert_eq!(outside, NeighbourOutside { node: 2, neighbour: 70_000, nodes: 70_000 });
        assert_eq!(
            outside.to_string(),
            "the row record of node 2: neighbour 70000 outside the graph's 70000 nodes"
        );
        assert_eq!(check(&good, 2), Err(NoSuchNode { node: 2, nodes: 2 }));
        let cut = check(&good[..good.len() - 1], 80_000);
        assert_eq!(cut, Err(CutShort { left: good.len() - 1 }));
        // The node above its first neighbour.
        let mut below = good.clone();
        below[..4].copy_from_slice(&5u32.to_le_bytes());
        assert_eq!(check(&below, 80_000), Err(NeighbourBelow { node: 5 }));
        // Lows out of order: swap 3 and 9 (the first container's units).
        let mut swapped = good.clone();
        let units = 8 + 4 * 2;
        swapped[units..units + 4].copy_from_slice(&[9, 0, 3, 0]);
        assert_eq!(check(&swapped, 80_000), Err(ValuesOutOfOrder { node: 2 }));
        // Keys out of order.
        let mut keys = good.clone();
        keys[12..14].copy_from_slice(&0u16.to_le_bytes());
        assert_eq!(check(&keys, 80_000), Err(KeysOutOfOrder { node: 2 }));
        // A bitmap whose count lies.
        let dense: Vec<u32> = (10..5000).collect();
        let mut bitmap = one(1, &dense);
        bitmap[10..12].copy_from_slice(&5000u16.to_le_bytes());
        assert_eq!(check(&bitmap, 80_000), Err(BitmapCount { node: 1 }));
        // No container.
        let mut empty = 4u32.to_le_bytes().to_vec();
        empty.extend(0u32.to_le_bytes());
        assert_eq!(check(&empty, 80_000), Err(NoContainer { node: 4 }));
    }
}
