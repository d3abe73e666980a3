//! RNoise(α) (SPEC §9): α × (#cells in attributes used by some constraint)
//! times, pick such a cell uniformly at random (with replacement); with
//! probability 0.5 replace its value by another value of the attribute's
//! active domain, else by a typo of it.
//!
//! Streamed in three passes over the input, so memory is the active domains
//! and the picks, never the table:
//! 1. count the rows, collect the active domains of the constrained
//!    attributes (in first-seen order, so the result does not depend on
//!    hashing) and the kind of every column;
//! 2. draw the picks, sort them by row (stably: two picks of one cell apply
//!    in draw order) and compute each picked cell's final value;
//! 3. copy the table with those values, now that every column's output type
//!    is known (a Parquet column must be typed before its first batch).
//!
//! Each pick carries its own sub-seed, so its replacement is the same
//! whatever the order of evaluation: the output is a function of the seed.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::table::{Kind, TableFormat, TableReader, TableWriter, check_distinct};
use crate::typo::typo;
use crate::{DenialConstraint, GenerateError, constrained_columns, resolve};

/// At most this many picks (α × cells): they are held in memory, 32 bytes
/// each.
const MAX_PICKS: f64 = 1e8;

/// What [`rnoise`] did.
#[derive(Debug, Clone, Serialize)]
pub struct NoiseStats {
    /// Always `rnoise`.
    pub generator: &'static str,
    /// The input table.
    pub input: PathBuf,
    /// The noisy table written.
    pub out: PathBuf,
    /// Its format.
    pub format: TableFormat,
    /// Rows (input = output).
    pub rows: u64,
    /// The seed.
    pub seed: u64,
    /// α.
    pub alpha: f64,
    /// The attributes some constraint uses, in table order: the only ones
    /// touched.
    pub attributes: Vec<String>,
    /// rows × attributes.
    pub constrained_cells: u64,
    /// Cells picked, with replacement: round(α × constrained_cells).
    pub picks: u64,
    /// Picks that drew another active-domain value.
    pub domain_picks: u64,
    /// Picks that made a typo.
    pub typo_picks: u64,
    /// Distinct cells whose final value differs from the input (fewer than
    /// `picks` when a cell is picked twice or a domain has one value).
    pub cells_modified: u64,
    /// `cells_modified` by attribute.
    pub modified_per_attribute: BTreeMap<String, u64>,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// An attribute's active domain: its distinct non-NULL values, in
/// first-seen order.
#[derive(Default)]
pub(crate) struct Domain {
    values: Vec<Box<str>>,
    index: HashMap<Box<str>, usize>,
}

impl Domain {
    pub(crate) fn insert(&mut self, v: &str) {
        if !self.index.contains_key(v) {
            self.index.insert(v.into(), self.values.len());
            self.values.push(v.into());
        }
    }

    /// A uniformly random domain value different from `current`; `None`
    /// when there is none (a one-value domain holding `current`, or an
    /// all-NULL attribute).
    pub(crate) fn other_than(&self, current: Option<&str>, rng: &mut impl Rng) -> Option<&str> {
        let n = self.values.len();
        match current.and_then(|c| self.index.get(c)) {
            Some(&i) => {
                if n < 2 {
                    return None;
                }
                // Uniform over the n - 1 others, without rejection.
                let j = rng.random_range(0..n - 1);
                Some(&self.values[if j >= i { j + 1 } else { j }])
            }
            None if n == 0 => None,
            None => Some(&self.values[rng.random_range(0..n)]),
        }
    }
}

struct Pick {
    row: u64,
    slot: usize,
    domain: bool,
    seed: u64,
}

/// Apply RNoise(α) to `input` under `constraints` and write the result to
/// `out` (CSV or Parquet by extension). The input is never modified, and
/// `out` may not be the input file.
pub fn rnoise(
    input: &Path,
    constraints: &[DenialConstraint],
    alpha: f64,
    seed: u64,
    out: &Path,
) -> Result<NoiseStats, GenerateError> {
    let start = Instant::now();
    if !alpha.is_finite() || alpha < 0.0 {
        return Err(GenerateError::Option(format!("alpha must be a number >= 0, got {alpha}")));
    }
    check_distinct(input, out)?;
    let reader = TableReader::open(input)?;
    let header = reader.header().clone();
    let width = header.names.len();
    let resolved = resolve(constraints, &header, input)?;
    let cols = constrained_columns(&resolved, width);
    let mut slot_of = vec![usize::MAX; width];
    for (slot, &c) in cols.iter().enumerate() {
        slot_of[c] = slot;
    }

    // Pass 1: row count, active domains, column kinds.
    let mut domains: Vec<Domain> = cols.iter().map(|_| Domain::default()).collect();
    let mut kinds = header.kinds.clone();
    let rows = reader.for_each(|_, values| {
        for (c, v) in values.iter().enumerate() {
            if let Some(v) = v {
                kinds[c] = kinds[c].join(Kind::of(v));
                if slot_of[c] != usize::MAX {
                    domains[slot_of[c]].insert(v);
                }
            }
        }
        Ok(())
    })?;

    // The picks: cell and kind of error, each with its own sub-seed.
    let constrained_cells = rows * cols.len() as u64;
    let target = (alpha * constrained_cells as f64).round();
    if target > MAX_PICKS {
        return Err(GenerateError::Option(format!(
            "alpha = {alpha} asks for {target} picks; at most {MAX_PICKS} are supported"
        )));
    }
    let count = target as u64;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut picks: Vec<Pick> = (0..count)
        .map(|_| Pick {
            row: rng.random_range(0..rows),
            slot: rng.random_range(0..cols.len()),
            domain: rng.random_bool(0.5),
            seed: rng.random(),
        })
        .collect();
    picks.sort_by_key(|p| p.row); // stable: a cell's picks keep their draw order
    let domain_picks = picks.iter().filter(|p| p.domain).count() as u64;

    // Pass 2: the final value of every picked cell.
    let mut overrides: Vec<(u64, usize, String)> = Vec::new();
    let mut next = 0;
    let rows_again = TableReader::open(input)?.for_each(|row, values| {
        let mut touched: Vec<(usize, Option<String>)> = Vec::new();
        while next < picks.len() && picks[next].row == row {
            let p = &picks[next];
            let col = cols[p.slot];
            let at = match touched.iter().position(|(c, _)| *c == col) {
                Some(i) => i,
                None => {
                    touched.push((col, values[col].map(str::to_string)));
                    touched.len() - 1
                }
            };
            let current = touched[at].1.as_deref();
            let mut cell_rng = ChaCha8Rng::seed_from_u64(p.seed);
            let new = if p.domain {
                domains[p.slot].other_than(current, &mut cell_rng).map(str::to_string)
            } else {
                Some(typo(current.unwrap_or(""), &mut cell_rng))
            };
            if let Some(new) = new {
                touched[at].1 = Some(new);
            }
            next += 1;
        }
        touched.sort_by_key(|(c, _)| *c);
        for (col, value) in touched {
            if let Some(v) = value.filter(|v| values[col] != Some(v.as_str())) {
                kinds[col] = kinds[col].join(Kind::of(&v));
                overrides.push((row, col, v));
            }
        }
        Ok(())
    })?;
    if rows_again != rows {
        return Err(GenerateError::Format {
            path: input.into(),
            message: format!("changed while being read ({rows} rows, then {rows_again})"),
        });
    }

    // Pass 3: copy with the new values.
    let format = TableFormat::from_path(out);
    let mut writer = TableWriter::create(out, format, &header.names, &kinds)?;
    let mut next = 0;
    TableReader::open(input)?.for_each(|row, values| {
        if next < overrides.len() && overrides[next].0 == row {
            let mut row_values = values.to_vec();
            while next < overrides.len() && overrides[next].0 == row {
                row_values[overrides[next].1] = Some(overrides[next].2.as_str());
                next += 1;
            }
            writer.write_row(&row_values)
        } else {
            writer.write_row(values)
        }
    })?;
    writer.finish()?;

    let mut modified_per_attribute: BTreeMap<String, u64> =
        cols.iter().map(|&c| (header.names[c].clone(), 0)).collect();
    for (_, c, _) in &overrides {
        *modified_per_attribute.entry(header.names[*c].clone()).or_default() += 1;
    }
    Ok(NoiseStats {
        generator: "rnoise",
        input: input.into(),
        out: out.into(),
        format,
        rows,
        seed,
        alpha,
        attributes: cols.iter().map(|&c| header.names[c].clone()).collect(),
        constrained_cells,
        picks: count,
        domain_picks,
        typo_picks: count - domain_picks,
        cells_modified: overrides.len() as u64,
        modified_per_attribute,
        seconds: start.elapsed().as_secs_f64(),
    })
}
