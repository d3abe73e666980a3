//! `wide`: a wide table with one FD per column pair, `a_i -> b_i`, each
//! over its own left-hand side, and typos in the `b_i`.
//!
//! Why: the degree bound sums one term per minimal set, Σ_i (maxfreq_{a_i}
//! − 1), while a row conflicts under one or two FDs at a time, so the sum
//! is many times the largest degree (a dozen FDs over groups of 20: d ≈
//! 260 against 27). Tables with ten or more constraints are common (a
//! warehouse dimension has an id and a name per attribute); the other
//! families have at most four.
//!
//! Row r draws each `a_i` uniformly among rows/group values (`group` 0:
//! mixed sizes, 1 to 400 rows per value, cycling over the FDs), and writes
//! `b_i` = the name of `a_i`, replaced by another value's name at
//! `error_rate`. A share `garbage_rate` of the rows are corrupt records
//! (a misaligned or mangled line): every `b_i` is a wrong name, so the row
//! conflicts under every FD at once and its degree is near the sum, the
//! shape that keeps θ* from stopping at the largest term (release README,
//! the eighteenth round).

use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{FamilyParams, Known, PlannedTable, Scale, permille};
use crate::GenerateError;
use crate::table::{Kind, TableFormat, TableWriter};

/// Parameters of a `wide` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WideParams {
    /// FDs, one per column pair.
    pub fds: u32,
    /// Mean rows per left-hand-side value (0: [`MIXED_GROUPS`], cycling).
    pub group: u64,
    /// The share of each `b_i` replaced by a wrong name.
    pub error_rate: f64,
    /// The share of rows whose every `b_i` is a wrong name.
    #[serde(default)]
    pub garbage_rate: f64,
}

impl WideParams {
    /// Mean rows per value of `a_i`: `group`, or [`MIXED_GROUPS`] cycling.
    pub fn group_of(&self, i: usize) -> u64 {
        if self.group == 0 { MIXED_GROUPS[i % MIXED_GROUPS.len()] } else { self.group }
    }
}

/// Rows per value when `group` is 0: from near-keys to hubs.
pub const MIXED_GROUPS: [u64; 6] = [1, 4, 10, 40, 100, 400];

/// The grid: 6 to 20 FDs over groups of 5 to 100 or mixed, 1k to 100k
/// rows; three with 0.2% to 1% corrupt rows.
pub(super) fn grid(scale: Scale) -> Vec<PlannedTable> {
    let grid: [(u64, u32, u64, f64, f64); 9] = [
        (1_000, 8, 5, 0.01, 0.0),
        (5_000, 6, 20, 0.01, 0.0),
        (10_000, 20, 5, 0.005, 0.0),
        (20_000, 12, 10, 0.002, 0.0),
        (50_000, 8, 0, 0.003, 0.0),
        (100_000, 12, 100, 0.001, 0.0),
        (10_000, 8, 20, 0.002, 0.01),
        (20_000, 12, 10, 0.002, 0.005),
        (50_000, 12, 50, 0.001, 0.002),
    ];
    grid.into_iter()
        .map(|(rows, fds, group, error_rate, garbage_rate)| {
            let g = if group == 0 { "mix".to_string() } else { group.to_string() };
            let x = if garbage_rate > 0.0 {
                format!("-x{}", permille(garbage_rate))
            } else {
                String::new()
            };
            PlannedTable::new(
                format!("wide-k{fds}-g{g}-e{}{x}-n{}k", permille(error_rate), rows / 1000),
                FamilyParams::Wide(WideParams { fds, group, error_rate, garbage_rate }),
                scale.rows(rows),
            )
        })
        .collect()
}

/// Writes the table to `out`; returns its constraint file and facts.
pub(super) fn write(
    p: &WideParams,
    rows: u64,
    seed: u64,
    out: &Path,
) -> Result<(String, Known), GenerateError> {
    let rates = [p.error_rate, p.garbage_rate];
    if p.fds == 0 || !rates.iter().all(|r| (0.0..=0.5).contains(r)) || rows < 2 {
        return Err(GenerateError::Option(format!("wide: bad parameters {p:?}")));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let fds = p.fds as usize;
    let values: Vec<u64> = (0..fds).map(|i| (rows / p.group_of(i)).max(2)).collect();
    let names: Vec<String> = (0..fds).flat_map(|i| [format!("a{i}"), format!("b{i}")]).collect();
    let kinds = vec![Kind::Str; names.len()];
    let mut writer = TableWriter::create(out, TableFormat::Csv, &names, &kinds)?;
    let mut wrong_rows = 0u64;
    let mut cells = vec![String::new(); names.len()];
    for _ in 0..rows {
        // No draw without corrupt rows: those tables stay as they were.
        let garbage = p.garbage_rate > 0.0 && rng.random_bool(p.garbage_rate);
        let mut wrong = false;
        for (i, &count) in values.iter().enumerate() {
            let a = rng.random_range(0..count);
            let mut b = a;
            if garbage || rng.random_bool(p.error_rate) {
                b = (a + rng.random_range(1..count)) % count;
                wrong = true;
            }
            cells[2 * i] = format!("A{i}-{a}");
            cells[2 * i + 1] = format!("name {i}-{b}");
        }
        wrong_rows += u64::from(wrong);
        let row: Vec<Option<&str>> = cells.iter().map(|c| Some(c.as_str())).collect();
        writer.write_row(&row)?;
    }
    writer.finish()?;
    let constraints: String = (0..fds).map(|i| format!("a{i} -> b{i}\n")).collect();
    let known = Known { violating_rows: Some(wrong_rows), ..Known::default() };
    Ok((constraints, known))
}
