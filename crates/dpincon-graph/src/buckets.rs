//! Counting sorts by row: pairs and records grouped by their row in one
//! count and one scatter (the builder's flushes, the freezer's shards).

/// A counting sort of `items` on their `row` in `first..first + len`,
/// keeping the order of items of one row; also returns where each row's
/// items start (and, last, their count). `items` is read twice (a count,
/// then a scatter): pieces chained in place need no copy into one vector.
pub(crate) fn bucket_by_row<'a, T: Copy + Default + 'a>(
    items: impl Iterator<Item = &'a T> + Clone,
    first: u32,
    len: u32,
    row: impl Fn(&T) -> u32,
) -> (Vec<T>, Vec<u32>) {
    let (mut sorted, mut starts) = (Vec::new(), Vec::new());
    bucket_by_row_into(items, first, len, row, |&item| item, &mut sorted, &mut starts);
    (sorted, starts)
}

/// [`bucket_by_row`] into the caller's buffers (a writer reuses them flush
/// after flush), each item written as `value(item)`: a flush keeps only
/// its pairs' v, 4 bytes instead of 8.
pub(crate) fn bucket_by_row_into<'a, T: 'a, V: Copy + Default>(
    items: impl Iterator<Item = &'a T> + Clone,
    first: u32,
    len: u32,
    row: impl Fn(&T) -> u32,
    value: impl Fn(&T) -> V,
    sorted: &mut Vec<V>,
    starts: &mut Vec<u32>,
) {
    starts.clear();
    starts.resize(len as usize + 1, 0);
    for item in items.clone() {
        starts[(row(item) - first) as usize + 1] += 1;
    }
    for i in 1..starts.len() {
        starts[i] += starts[i - 1];
    }
    sorted.clear();
    sorted.resize(starts[len as usize] as usize, V::default());
    // Each row's next slot, in `starts` itself: row i then ends where row
    // i + 1 starts, so shifting by one restores the starts.
    for item in items {
        let slot = &mut starts[(row(item) - first) as usize];
        sorted[*slot as usize] = value(item);
        *slot += 1;
    }
    starts.copy_within(..len as usize, 1);
    starts[0] = 0;
}
