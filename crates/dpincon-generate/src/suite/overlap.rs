//! `overlap-fds`: three measurements, any two of which determine the third
//! (`price, qty -> total`, `price, total -> qty`, `qty, total -> price`),
//! beside an inequality DC at equal price
//! (`not(t1.price=t2.price&t1.qty>t2.qty&t1.total<t2.total)`).
//!
//! Why: the degree bound d̃ sums the largest group of each *minimal*
//! equality set. Here the sets overlap (`price` is in two FDs and the DC,
//! `{price}` is a subset of `{price, qty}`), so which sets are minimal and
//! how their groups add up is exactly what a bound can get wrong: one wrong
//! total conflicts with its (price, qty) group under the first FD, perhaps
//! with another (price, total) group under the second, and, when the total
//! went down, with every cheaper line of the same price under the DC.
//!
//! Clean rows: `total = price × qty` exactly (cents), `price` one of
//! `price_points` values with Zipf-like popularity, `qty` 1–12 (1 the most
//! common). A corrupted row changes one of the three (total 60%: one unit
//! off, a dropped digit or a cents typo; qty 20%: one off; price 20%: a
//! neighbouring price point), so it is in conflict, and the corrupted rows
//! are exactly the rows where `total ≠ price × qty`.

use std::path::Path;

use rand::seq::{SliceRandom, index};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{FamilyParams, Known, PlannedTable, Scale, permille};
use crate::GenerateError;
use crate::table::{Kind, TableFormat, TableWriter};
use crate::tax::{city_name, cumulative, pick};

/// Parameters of an `overlap-fds` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverlapParams {
    /// Distinct prices: fewer means larger (price, qty) groups.
    pub price_points: u32,
    /// The share of rows with one of the three measurements changed.
    pub error_rate: f64,
}

const COLUMNS: [&str; 5] = ["id", "store", "price", "qty", "total"];
const KINDS: [Kind; 5] = [Kind::Int, Kind::Str, Kind::Int, Kind::Int, Kind::Int];
const CONSTRAINTS: &str = "price, qty -> total\nprice, total -> qty\nqty, total -> price\n\
                           not(t1.price=t2.price&t1.qty>t2.qty&t1.total<t2.total)\n";
const MAX_QTY: u64 = 12;
/// Price popularity ∝ 1 / rank^0.8.
const PRICE_ZIPF: f64 = 0.8;
const STORES: usize = 25;

/// The grid: group sizes from a few rows to hundreds, error rates 0.1% to 5%.
pub(super) fn grid(scale: Scale) -> Vec<PlannedTable> {
    let grid: [(u64, u32, f64); 5] = [
        (1_000, 10, 0.01),
        (10_000, 100, 0.001),
        (20_000, 100, 0.01),
        (5_000, 100, 0.05),
        (100_000, 1_000, 0.01),
    ];
    grid.into_iter()
        .map(|(rows, price_points, error_rate)| {
            PlannedTable::new(
                format!("overlap-p{price_points}-e{}", permille(error_rate)),
                FamilyParams::OverlapFds(OverlapParams { price_points, error_rate }),
                scale.rows(rows),
            )
        })
        .collect()
}

/// One line: price (cents), quantity, total (cents).
#[derive(Clone, Copy)]
struct Line {
    price: u64,
    qty: u64,
    total: u64,
}

/// `line` with one measurement changed, so that `total ≠ price × qty`.
fn corrupt(line: Line, prices: &[u64], rng: &mut ChaCha8Rng) -> Line {
    let mut out = line;
    match rng.random_range(0..10) {
        0..6 => {
            out.total = match rng.random_range(0..4) {
                0 if line.total > line.price => line.total - line.price,
                0 | 1 => line.total + line.price,
                2 => line.total / 10,
                _ => line.total + rng.random_range(1..=99),
            }
        }
        6..8 => {
            out.qty = if line.qty > 1 && rng.random_bool(0.5) { line.qty - 1 } else { line.qty + 1 }
        }
        _ => {
            let i = prices.binary_search(&line.price).expect("a listed price");
            out.price = match i {
                0 => prices[1],
                i if i + 1 == prices.len() || rng.random_bool(0.5) => prices[i - 1],
                i => prices[i + 1],
            };
        }
    }
    debug_assert_ne!(out.total, out.price * out.qty);
    out
}

/// Writes the table to `out`; returns its constraint file and facts.
pub(super) fn write(
    p: &OverlapParams,
    rows: u64,
    seed: u64,
    out: &Path,
) -> Result<(String, Known), GenerateError> {
    let n = rows as usize;
    if p.price_points < 2 || !(0.0..=0.5).contains(&p.error_rate) {
        return Err(GenerateError::Option(format!("overlap-fds: bad parameters {p:?}")));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let points = p.price_points as usize;
    let mut prices: Vec<u64> =
        index::sample(&mut rng, 50_000, points).into_iter().map(|i| 100 + i as u64).collect();
    prices.sort_unstable();
    let mut popularity: Vec<usize> = (0..points).collect();
    popularity.shuffle(&mut rng);
    let price_cum = cumulative(popularity.iter().map(|&r| 1.0 / ((r + 1) as f64).powf(PRICE_ZIPF)));
    let qty_cum = cumulative((1..=MAX_QTY).map(|q| 1.0 / q as f64));
    let mut lines: Vec<Line> = (0..n)
        .map(|_| {
            let price = prices[pick(&price_cum, &mut rng)];
            let qty = pick(&qty_cum, &mut rng) as u64 + 1;
            Line { price, qty, total: price * qty }
        })
        .collect();
    let errors = (p.error_rate * n as f64).round() as usize;
    for i in index::sample(&mut rng, n, errors) {
        lines[i] = corrupt(lines[i], &prices, &mut rng);
    }
    let stores: Vec<String> = (0..STORES).map(|_| city_name(&mut rng)).collect();

    let names: Vec<String> = COLUMNS.iter().map(|c| c.to_string()).collect();
    let mut writer = TableWriter::create(out, TableFormat::Csv, &names, &KINDS)?;
    for (row, line) in lines.iter().enumerate() {
        let cells = [
            (row + 1).to_string(),
            stores[rng.random_range(0..STORES)].clone(),
            line.price.to_string(),
            line.qty.to_string(),
            line.total.to_string(),
        ];
        writer.write_cells(&cells)?;
    }
    writer.finish()?;
    Ok((CONSTRAINTS.to_string(), Known { violating_rows: Some(errors as u64), ..Known::default() }))
}
