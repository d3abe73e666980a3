//! `references`: rows that reference other rows of the same table by id,
//! a tree where each row's `parent` is another row's `id` and a child sits
//! one `level` below its parent, under
//! `not(t1.parent=t2.id&t1.level<=t2.level)`; optionally beside an FD
//! `dept -> dept_name` with typos.
//!
//! Why: the DC's only equality is across two columns (`t1.parent = t2.id`,
//! a cross equality), so no equality set X bounds its degrees; what does is
//! the two sides' largest groups, a parent's children (the branching) and
//! the ids (unique). Branching 1 is a chain (a row's parent is the row
//! before: an event log's `prev`), 300 a flat org chart (a manager's
//! reports). Before cross equalities bounded the degrees, such a DC was a
//! DC without equality and its noise scaled with n.
//!
//! Rows are the nodes of a complete `branching`-ary tree in breadth-first
//! order: row i > 0 has parent (i − 1) / branching, level its depth. A
//! corrupted row's level is set to its parent's (already written) level
//! minus 0 or 1, so it conflicts with its parent, and with none of its
//! children (theirs is its old level plus one): the graph has exactly one
//! edge per corrupted row. With the FD, `dept` is one of 40 and
//! `dept_name` its name, replaced by another's at the same rate.

use std::path::Path;

use rand::seq::index;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{FamilyParams, Known, PlannedTable, Scale, permille};
use crate::GenerateError;
use crate::table::{Kind, TableFormat, TableWriter};

/// Parameters of a `references` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReferenceParams {
    /// Children per parent (1: a chain).
    pub branching: u32,
    /// The share of rows whose level is set at or above their parent's.
    pub error_rate: f64,
    /// Also `dept -> dept_name`, with typos at `error_rate`.
    pub with_fd: bool,
}

const COLUMNS: [&str; 5] = ["id", "parent", "level", "dept", "dept_name"];
const KINDS: [Kind; 5] = [Kind::Int, Kind::Int, Kind::Int, Kind::Str, Kind::Str];
const REFERENCE: &str = "not(t1.parent=t2.id&t1.level<=t2.level)\n";
const FD: &str = "dept -> dept_name\n";
const DEPTS: u64 = 40;

/// The grid: chains, trees of 3 and 30, flat charts of 300; error rates
/// 0.1% to 1%; two tables beside an FD.
pub(super) fn grid(scale: Scale) -> Vec<PlannedTable> {
    let grid: [(u64, u32, f64, bool); 6] = [
        (1_000, 3, 0.01, false),
        (10_000, 1, 0.002, false),
        (10_000, 30, 0.01, false),
        (20_000, 300, 0.002, false),
        (50_000, 3, 0.001, true),
        (100_000, 30, 0.005, true),
    ];
    grid.into_iter()
        .map(|(rows, branching, error_rate, with_fd)| {
            let fd = if with_fd { "-fd" } else { "" };
            PlannedTable::new(
                format!("refs-b{branching}-e{}-n{}k{fd}", permille(error_rate), rows / 1000),
                FamilyParams::References(ReferenceParams { branching, error_rate, with_fd }),
                scale.rows(rows),
            )
        })
        .collect()
}

/// Writes the table to `out`; returns its constraint file and facts.
pub(super) fn write(
    p: &ReferenceParams,
    rows: u64,
    seed: u64,
    out: &Path,
) -> Result<(String, Known), GenerateError> {
    let n = rows as usize;
    if p.branching == 0 || !(0.0..=0.5).contains(&p.error_rate) || n < 2 {
        return Err(GenerateError::Option(format!("references: bad parameters {p:?}")));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let b = p.branching as usize;
    let parent = |i: usize| (i - 1) / b;
    let mut level: Vec<u64> = vec![0; n];
    for i in 1..n {
        level[i] = level[parent(i)] + 1;
    }
    let errors = (p.error_rate * (n - 1) as f64).round() as usize;
    let mut corrupted: Vec<usize> = index::sample(&mut rng, n - 1, errors).into_iter().collect();
    // In row order, so a parent's level is final before its children's.
    corrupted.sort_unstable();
    for &i in &corrupted {
        let i = i + 1;
        level[i] = level[parent(i)].saturating_sub(rng.random_range(0..2));
    }

    let names: Vec<String> = COLUMNS.iter().map(|c| c.to_string()).collect();
    let mut writer = TableWriter::create(out, TableFormat::Csv, &names, &KINDS)?;
    let mut typos = 0u64;
    for (i, &lv) in level.iter().enumerate() {
        let dept = rng.random_range(0..DEPTS);
        let mut name = dept;
        if p.with_fd && rng.random_bool(p.error_rate) {
            name = (dept + rng.random_range(1..DEPTS)) % DEPTS;
            typos += 1;
        }
        let (id, parent, lv) =
            (i.to_string(), (i > 0).then(|| parent(i).to_string()), lv.to_string());
        let (dept, name) = (format!("D{dept}"), format!("department {name}"));
        writer.write_row(&[Some(&id), parent.as_deref(), Some(&lv), Some(&dept), Some(&name)])?;
    }
    writer.finish()?;
    let constraints = if p.with_fd { format!("{REFERENCE}{FD}") } else { REFERENCE.to_string() };
    let known = Known { violating_rows: Some(errors as u64 + typos), ..Known::default() };
    Ok((constraints, known))
}
