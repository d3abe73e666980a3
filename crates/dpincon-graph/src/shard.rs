//! The growing adjacency of one node range while detection runs.

use roaring::RoaringBitmap;

/// The adjacency of a contiguous node-id range `first..first + len`.
///
/// Entry `k` holds the neighbours `v > first + k` of node `first + k`; an
/// edge is stored once, at its smaller endpoint.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AdjacencyShard {
    first: u32,
    upper: Vec<RoaringBitmap>,
}

impl AdjacencyShard {
    /// An empty shard covering `first..first + len`.
    pub fn new(first: u32, len: u32) -> Self {
        AdjacencyShard { first, upper: vec![RoaringBitmap::new(); len as usize] }
    }

    /// A shard from its bitmaps; entry `k` belongs to node `first + k`.
    /// Returns `None` if some bitmap holds a neighbour `<=` its own node.
    pub fn from_bitmaps(first: u32, upper: Vec<RoaringBitmap>) -> Option<Self> {
        let valid = upper.iter().enumerate().all(|(k, bits)| {
            bits.min().is_none_or(|min| u64::from(min) > u64::from(first) + k as u64)
        });
        valid.then_some(AdjacencyShard { first, upper })
    }

    /// The first node id of the range.
    pub fn first(&self) -> u32 {
        self.first
    }

    /// How many node ids the shard covers.
    pub fn len(&self) -> u32 {
        self.upper.len() as u32
    }

    /// True if the shard covers no node.
    pub fn is_empty(&self) -> bool {
        self.upper.is_empty()
    }

    /// One past the last node id of the range.
    pub fn end(&self) -> u64 {
        u64::from(self.first) + self.upper.len() as u64
    }

    /// Neighbours `v > u` of node `u`, which must lie in the shard.
    pub fn upper_neighbours(&self, u: u32) -> &RoaringBitmap {
        &self.upper[(u - self.first) as usize]
    }

    /// The bitmaps, by value.
    pub fn into_bitmaps(self) -> Vec<RoaringBitmap> {
        self.upper
    }

    /// All bitmaps, entry `k` for node `first + k`.
    pub fn bitmaps(&self) -> &[RoaringBitmap] {
        &self.upper
    }

    /// The bitmaps, mutably (spilling empties and refills them).
    pub(crate) fn bitmaps_mut(&mut self) -> &mut [RoaringBitmap] {
        &mut self.upper
    }

    /// Adds the edges `(u, v)` for every `v` of `upper` (all above `u`, which
    /// must lie in the shard). With `account`, returns how many bytes the
    /// bitmap grew by in memory (the builder's estimate, see
    /// [`heap_bytes`]); else 0, and the per-container walk it costs is
    /// skipped.
    pub(crate) fn absorb_upper(&mut self, u: u32, upper: &RoaringBitmap, account: bool) -> i64 {
        debug_assert!(upper.min().is_none_or(|v| v > u));
        let slot = &mut self.upper[(u - self.first) as usize];
        let before = if account { heap_bytes(slot) } else { 0 };
        if slot.is_empty() {
            slot.clone_from(upper);
        } else {
            *slot |= upper;
        }
        if account { heap_bytes(slot) - before } else { 0 }
    }

    /// Compacts the bitmaps (run containers) before they are kept or sent.
    pub fn optimize(&mut self) {
        for bits in &mut self.upper {
            bits.optimize();
        }
    }
}

/// Bytes each container is taken to cost besides its values: the
/// `Container` in the bitmap's vector (with growth slack) and, for arrays and
/// runs, the allocator's header and rounding of a separate allocation.
const CONTAINER_BYTES: u64 = 64;

/// Heap bytes a bitmap is taken to use, counted per container. Sparse rows
/// of big graphs hold one or two values per container, where the container
/// itself is most of the cost: an estimate from the serialized size (10 B a
/// container) let a 10^7-row build under `--memory-limit 6GiB` reach 16 GiB.
fn heap_bytes(bits: &RoaringBitmap) -> i64 {
    if bits.is_empty() {
        return 0;
    }
    let s = bits.statistics();
    let bytes = u64::from(s.n_containers) * CONTAINER_BYTES
        // u16 values, with up to twice the capacity a growing vector keeps.
        + u64::from(s.n_values_array_containers) * 4
        + u64::from(s.n_bitset_containers) * 8192
        + 2 * s.n_bytes_run_containers;
    i64::try_from(bytes).unwrap_or(i64::MAX)
}
