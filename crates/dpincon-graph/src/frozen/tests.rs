//! Tests of frozen rows: every read path, chunks, bytes.

use std::ops::ControlFlow;

use super::*;

/// Rows of every shape: empty, sparse, an array at the 4,096 limit, a
/// bitmap just over it, a full block, values at the top of u32.
fn rows() -> Vec<Vec<u32>> {
    let mut out = vec![vec![], vec![7], (10..20).collect()];
    out.push((0..ARRAY_MAX as u32).map(|i| 100_000 + i * 3).collect());
    out.push((0..=ARRAY_MAX as u32).map(|i| (5 << 16) + i * 2).collect());
    out.push(((9 << 16)..(10 << 16)).chain([20 << 16, 21 << 16]).collect());
    out.push(vec![1 << 16, (1 << 16) + 1, u32::MAX - 1, u32::MAX]);
    let mut state = 5u64;
    let mut mixed: Vec<u32> = (0..30_000)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            // Dense in block 3, sparse elsewhere.
            if state >> 63 == 1 {
                (3 << 16) + (state >> 40) as u32 % 65_536
            } else {
                (state >> 33) as u32 % (40 << 16)
            }
        })
        .filter(|&v| v > 8)
        .collect();
    mixed.sort_unstable();
    mixed.dedup();
    out.push(mixed);
    out
}

#[test]
fn rows_read_back_as_written_every_way() {
    let want = rows();
    let mut shard = FrozenShard::new(0);
    for row in &want {
        shard.push_sorted(row);
    }
    assert_eq!(shard.len(), want.len() as u32);
    assert_eq!(shard.edge_count(), want.iter().map(|r| r.len() as u64).sum::<u64>());
    for (k, row) in want.iter().enumerate() {
        let got = shard.row(k as u32);
        assert_eq!(got.len(), row.len() as u64);
        assert_eq!(got.is_empty(), row.is_empty());
        assert_eq!(got.max(), row.last().copied());
        assert_eq!(got.iter().collect::<Vec<_>>(), *row, "row {k}");
        let mut chunked = Vec::new();
        let _ = got.chunks(|c| {
            assert!(!c.is_empty());
            chunked.extend_from_slice(c);
            ControlFlow::<()>::Continue(())
        });
        assert_eq!(chunked, *row, "row {k} by chunks");
        for range in
            [0..0, 0..u32::MAX, 15..100_010, (5 << 16) + 3..(9 << 16) + 2, 1..(1 << 16) + 1]
        {
            let mut inside = Vec::new();
            got.for_each_in(range.clone(), |v| inside.push(v));
            let want: Vec<u32> = row.iter().copied().filter(|v| range.contains(v)).collect();
            assert_eq!(inside, want, "row {k} in {range:?}");
        }
        let by_block: u64 = got.blocks().map(|b| u64::from(b.len())).sum();
        assert_eq!(by_block, row.len() as u64);
        let mut each = Vec::new();
        for block in got.blocks() {
            let before = each.len();
            block.for_each(|v| each.push(v));
            assert!(each[before..].iter().all(|&v| v >> 16 == u32::from(block.key())));
            assert!(each[before..].iter().all(|&v| block.contains(v)));
            let base = u32::from(block.key()) << 16;
            let outside = (0..65_536).map(|l| base | l).filter(|v| !row.contains(v));
            assert!(outside.take(500).all(|v| !block.contains(v)));
        }
        assert_eq!(each, *row, "row {k} by blocks");
        assert!(got.blocks().all(|b| !b.is_empty()));
    }
}

#[test]
fn chunks_stop_where_the_visitor_breaks() {
    let mut shard = FrozenShard::new(0);
    shard.push_sorted(&(1..20_000).collect::<Vec<_>>());
    let found = shard.row(0).chunks(|c| match c.iter().find(|&&v| v % 5_000 == 0) {
        Some(&v) => ControlFlow::Break(v),
        None => ControlFlow::Continue(()),
    });
    assert_eq!(found, ControlFlow::Break(5_000));
}

#[test]
fn shards_round_trip_through_bytes() {
    let mut shard = FrozenShard::new(0);
    rows().iter().for_each(|r| shard.push_sorted(r));
    let bytes = shard.to_bytes();
    assert_eq!(FrozenShard::from_bytes(&bytes), Some(shard.clone()));
    // Truncated or tampered bytes are refused, never misread.
    assert_eq!(FrozenShard::from_bytes(&bytes[..bytes.len() - 1]), None);
    let mut tampered = bytes.clone();
    tampered[32] ^= 1; // the first row's container start
    assert_eq!(FrozenShard::from_bytes(&tampered), None);
    let empty = FrozenShard::empty(70, 3);
    assert_eq!((empty.first(), empty.len(), empty.end()), (70, 3, 73));
    assert_eq!(FrozenShard::from_bytes(&empty.to_bytes()), Some(empty));
}

/// A row unioned from records, container by container, equals the sorted
/// union of their values: a key in one record, arrays merged, arrays
/// whose counts pass 4,096 but whose union does not, and bitmaps.
#[test]
fn union_of_records_is_the_union_of_their_values() {
    use crate::encoded::{encode_row, records};
    let node = 3;
    let sets: Vec<Vec<Vec<u32>>> = vec![
        vec![vec![4, 9, 70_000], vec![9, 10, 200_000]],
        // 3,000 + 3,000 values in one block, overlapping: union 4,000.
        vec![(10..3010).collect(), (1010..4010).collect()],
        // A bitmap and an array, and a third record of another block.
        vec![(100..5200).collect(), vec![5, 6000, 65_535], vec![1 << 20]],
        // Unions past 4,096 from arrays alone.
        vec![(10..4000).step_by(2).collect(), (11..4100).step_by(2).collect()],
    ];
    for values in sets {
        let mut bytes = Vec::new();
        values.iter().for_each(|v| encode_row(&mut bytes, node, v));
        let rows: Vec<_> = records(&bytes).collect::<Result<_, _>>().unwrap();
        let mut shard = FrozenShard::new(node);
        shard.push_union(&rows, &mut UnionScratch::default());
        let mut want: Vec<u32> = values.concat();
        want.sort_unstable();
        want.dedup();
        assert_eq!(shard.row(0).iter().collect::<Vec<_>>(), want);
        assert_eq!(shard.edge_count(), want.len() as u64);
        // Read back through the spill format too.
        assert_eq!(FrozenShard::from_bytes(&shard.to_bytes()).unwrap(), shard);
    }
}
