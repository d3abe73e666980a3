//! Row-range pair tasks for the group without equality (the IEJoin split,
//! issue 29).
//!
//! With no equality to hash on, any two rows may conflict. The table's
//! scan units (Parquet row groups, CSV ranges) are dealt round-robin into
//! B blocks, as the scan deals them to its partitions, and a task is a
//! pair of blocks: task `(i, i)` reads block `i` and keeps every pair
//! inside it; task `(i, j)`, `i < j`, reads both and keeps only the pairs
//! across them. Every pair of rows lies in exactly one task, so the union
//! of the tasks' edges is the graph's, each edge sent once; the tasks
//! `(i, i)` report their block's rows, so the group's row count sums to n
//! as every group's must.
//!
//! A task `(i, j)` detects only the pairs across its blocks
//! (`dpincon_detect::detect_parts_across`: each constraint's driver on t1
//! rows of one block and t2 rows of the other, both ways unless the
//! constraint is symmetric), so no pair is detected twice: B(B + 1)/2
//! tasks of at most 2n/B rows each, where one task read all n before.

use serde::{Deserialize, Serialize};

/// How a group without equality is cut into pair tasks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Blocks {
    /// The first row id of each scan unit, in row order (ascending).
    pub unit_starts: Vec<u64>,
    /// B: unit `g` belongs to block `g % B`.
    pub count: u32,
}

impl Blocks {
    /// Blocks for a table whose scan units hold `unit_rows` rows each, in
    /// order, with at most `tasks` tasks: the largest B with B(B + 1)/2 ≤
    /// `tasks` and no block without rows (a task is known by its rows'
    /// blocks: two, or one for a block's own task); `None` when that is
    /// one block (one task reads the table, as before).
    pub fn for_units(unit_rows: &[u64], tasks: usize) -> Option<Blocks> {
        let mut count = 1u32;
        let fits = |b: u32| {
            (b * (b + 1) / 2) as usize <= tasks
                && (0..b)
                    .all(|k| unit_rows.iter().skip(k as usize).step_by(b as usize).any(|&r| r > 0))
        };
        while (count as usize) < unit_rows.len() && fits(count + 1) {
            count += 1;
        }
        let unit_starts = unit_rows
            .iter()
            .scan(0u64, |next, rows| {
                let start = *next;
                *next += rows;
                Some(start)
            })
            .collect();
        (count > 1).then_some(Blocks { unit_starts, count })
    }

    /// Number of pair tasks, B(B + 1)/2.
    pub fn tasks(&self) -> usize {
        let b = self.count as usize;
        b * (b + 1) / 2
    }

    /// The blocks of task `t`: the pairs `(i, j)`, `i < j`, first (the
    /// larger tasks start first), then `(i, i)`.
    pub fn pair(&self, t: usize) -> (u32, u32) {
        let b = self.count as usize;
        let across = b * (b - 1) / 2;
        if t >= across {
            let i = (t - across) as u32;
            return (i, i);
        }
        let (mut i, mut left) = (0usize, t);
        while left >= b - 1 - i {
            left -= b - 1 - i;
            i += 1;
        }
        (i as u32, (i + 1 + left) as u32)
    }

    /// The block of row `id`.
    pub fn block_of(&self, id: u32) -> u32 {
        let unit = self.unit_starts.partition_point(|&s| s <= u64::from(id)).saturating_sub(1);
        (unit % self.count as usize) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pair of rows, in or across blocks, lies in exactly one task,
    /// and the diagonal tasks' blocks cover every row once.
    #[test]
    fn every_pair_of_rows_lies_in_exactly_one_task() {
        let units = [3, 0, 5, 2, 4, 1, 6];
        // Seven units, one empty: with six blocks, block 1 would hold
        // only the empty unit; five hold rows each.
        assert_eq!(Blocks::for_units(&units, 28).unwrap().count, 5);
        assert_eq!(Blocks::for_units(&[4, 0], 28), None);
        let n: u64 = units.iter().sum();
        for tasks in [1, 2, 3, 6, 10, 28, 100] {
            let Some(blocks) = Blocks::for_units(&units, tasks) else {
                assert!(tasks < 3, "{tasks} tasks allow two blocks");
                continue;
            };
            assert!(blocks.tasks() <= tasks && blocks.count as usize <= units.len());
            let pairs: Vec<_> = (0..blocks.tasks()).map(|t| blocks.pair(t)).collect();
            for u in 0..n as u32 {
                for v in u + 1..n as u32 {
                    let (a, b) = (blocks.block_of(u), blocks.block_of(v));
                    let key = (a.min(b), a.max(b));
                    assert_eq!(pairs.iter().filter(|&&p| p == key).count(), 1, "{u}-{v}");
                }
            }
            let diagonal = pairs.iter().filter(|(i, j)| i == j).count();
            assert_eq!(diagonal, blocks.count as usize);
        }
        // Units dealt round-robin: unit 2 (rows 3..8) in block 2 % B.
        let blocks = Blocks::for_units(&units, 6).unwrap();
        assert_eq!((blocks.count, blocks.block_of(3), blocks.block_of(7)), (3, 2, 2));
    }
}
