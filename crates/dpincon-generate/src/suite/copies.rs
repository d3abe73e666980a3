//! `key-copies`: daily quotes under the key (day, ticker), broken by copied
//! rows (many pairs and a few large groups), beside the FD
//! `volume, open -> ticker` with small classes: Stock's shape.
//!
//! Why: a key beside an FD of another left-hand side gives I_P two sources
//! that a degree bound cannot tell apart. The key's groups are cliques
//! (every row of a copied quote is problematic); one large group of copies
//! (a feed replayed fifty times) makes d̃ about fifty while almost every
//! row has degree 1. The FD's impure groups are a few rows of two tickers
//! that share a volume and an opening price. The release README's
//! fifteenth round (the leading count over several X) was built on the
//! public Stock tables; this family is its shape, generated, so that rule
//! is judged in family rather than on the tables that motivated it.
//!
//! As an engineer writes them, the constraints also hold an FD and, with
//! `order_dc`, an order DC on the key itself: both add no edge (their pairs
//! agree on the key), which is what the fifteenth round must recognise.
//!
//! Every (volume, open) is unique but in the FD's collision groups; the
//! copied quotes and the collision groups are disjoint, so I_P is exactly
//! the rows of copied quotes plus the rows of collision groups
//! ([`Known::violating_rows`] counts the rows given a copy or a wrong
//! volume, as the other families do).

use std::path::Path;

use rand::seq::{SliceRandom, index};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{FamilyParams, Known, PlannedTable, Scale};
use crate::GenerateError;
use crate::table::{Kind, TableFormat, TableWriter};

/// Parameters of a `key-copies` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CopyParams {
    /// Quotes copied once (groups of two rows).
    pub pairs: u64,
    /// The sizes (rows, ≥ 2) of the larger groups of copies of one quote.
    pub groups: Vec<u32>,
    /// Collision groups of the FD `volume, open -> ticker`: rows of two
    /// tickers sharing a volume and an opening price.
    pub collisions: u64,
    /// The most rows of one ticker in a collision group (1 to 3): each
    /// ticker's class there has 1 to `class_max` rows.
    pub class_max: u8,
    /// An order DC on the key beside it.
    pub order_dc: bool,
}

const COLUMNS: [&str; 7] = ["day", "ticker", "open", "high", "low", "close", "volume"];
const KINDS: [Kind; 7] =
    [Kind::Int, Kind::Str, Kind::Int, Kind::Int, Kind::Int, Kind::Int, Kind::Int];
const KEY: &str = "not(t1.day=t2.day&t1.ticker=t2.ticker)\nday, ticker -> close\n";
const ORDER: &str = "not(t1.ticker=t2.ticker&t1.day=t2.day&t1.high<t2.low)\n";
const FD: &str = "volume, open -> ticker\n";
/// Quotes per ticker, about: a table of n rows has n / 250 tickers.
const DAYS: u64 = 250;

/// A grid point at full scale: rows, pairs, groups, collisions, class_max
/// and order_dc.
type GridPoint = (u64, u64, &'static [u32], u64, u8, bool);

/// The grid: 10^3 to 10^5 rows, tens to thousands of copies, with and
/// without large groups, FD collisions from none to 1% of the rows.
/// Small scale keeps the ≤ 10^4-row tables and shrinks the others' counts
/// with their rows (group sizes stay).
pub(super) fn grid(scale: Scale) -> Vec<PlannedTable> {
    let grid: [GridPoint; 8] = [
        (2_000, 20, &[30], 5, 1, true),
        (10_000, 300, &[41, 44, 58], 11, 1, true),
        (10_000, 90, &[], 0, 1, true),
        (10_000, 70, &[3; 60], 64, 1, false),
        (10_000, 0, &[20, 40, 60, 80], 50, 1, false),
        (20_000, 200, &[100, 150], 100, 3, false),
        (50_000, 2_000, &[60; 5], 200, 1, true),
        (100_000, 1_000, &[500, 300], 1_000, 2, true),
    ];
    grid.into_iter()
        .map(|(full, pairs, groups, collisions, class_max, order_dc)| {
            let rows = scale.rows(full);
            let shrink = |x: u64| (x as f64 * rows as f64 / full as f64).round() as u64;
            let params = CopyParams {
                pairs: shrink(pairs),
                groups: groups.to_vec(),
                collisions: shrink(collisions),
                class_max,
                order_dc,
            };
            let largest = groups.iter().max().copied().unwrap_or(2);
            let name = format!(
                "copies-p{}-g{}x{largest}-c{}{}-n{}k",
                params.pairs,
                groups.len(),
                params.collisions,
                if class_max > 1 { format!("k{class_max}") } else { String::new() },
                rows / 1_000
            );
            PlannedTable::new(name, FamilyParams::KeyCopies(params), rows)
        })
        .collect()
}

/// One quote.
#[derive(Clone)]
struct Quote {
    day: u64,
    ticker: usize,
    open: u64,
    high: u64,
    low: u64,
    close: u64,
    volume: u64,
}

/// A ticker symbol: three or four capitals, from its index.
fn symbol(mut i: usize) -> String {
    let mut s = String::new();
    for _ in 0..3 {
        s.push((b'A' + (i % 26) as u8) as char);
        i /= 26;
    }
    if i > 0 {
        s.push((b'A' + (i % 26) as u8) as char);
    }
    s
}

/// Writes the table to `out`; returns its constraint file and facts.
pub(super) fn write(
    p: &CopyParams,
    rows: u64,
    seed: u64,
    out: &Path,
) -> Result<(String, Known), GenerateError> {
    let n = rows as usize;
    let copies = p.pairs as usize + p.groups.iter().map(|&g| g as usize - 1).sum::<usize>();
    let quoted = p.pairs as usize + p.groups.len();
    let per_collision = 2 * usize::from(p.class_max);
    if p.groups.iter().any(|&g| g < 2)
        || !(1..=3).contains(&p.class_max)
        || copies >= n / 2
        || quoted + p.collisions as usize * per_collision > n - copies
    {
        return Err(GenerateError::Option(format!(
            "key-copies: {p:?} does not fit in {n} rows (copies at most half of them, groups of \
             two rows or more, classes of 1 to 3)"
        )));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let records = n - copies;
    let tickers = (records as u64).div_ceil(DAYS).max(2) as usize;
    let days = (records as u64).div_ceil(tickers as u64);
    // Distinct (day, ticker) quotes, distinct volumes for every row written.
    let slots = index::sample(&mut rng, (days as usize) * tickers, records);
    let volumes = index::sample(&mut rng, 50_000_000, n);
    let mut volume = volumes.into_iter().map(|v| 1_000 + v as u64);
    let mut quotes: Vec<Quote> = slots
        .into_iter()
        .map(|s| {
            let open = rng.random_range(500..200_000u64);
            let swing = open / 50 + 1;
            let (up, down) = (rng.random_range(0..swing), rng.random_range(0..swing));
            Quote {
                day: 20_000_101 + (s / tickers) as u64,
                ticker: s % tickers,
                open,
                high: open + up,
                low: open - down.min(open - 1),
                close: open - down.min(open - 1) + rng.random_range(0..=up + down),
                volume: volume.next().expect("a volume per row"),
            }
        })
        .collect();

    // Which records are copied, and which collide under the FD: disjoint.
    let mut order: Vec<usize> = (0..records).collect();
    order.shuffle(&mut rng);
    let (copied, rest) = order.split_at(quoted);
    let mut changed = 0u64;
    let mut by_ticker: Vec<Vec<usize>> = vec![Vec::new(); tickers];
    for &r in rest {
        by_ticker[quotes[r].ticker].push(r);
    }
    for _ in 0..p.collisions {
        if by_ticker.iter().filter(|rows| !rows.is_empty()).count() < 2 {
            return Err(GenerateError::Option(format!(
                "key-copies: {p:?} leaves too few tickers for its collisions in {n} rows"
            )));
        }
        // Two tickers with rows left; each gives a class of 1..=class_max.
        let mut pick = |avoid: Option<usize>, rng: &mut ChaCha8Rng| loop {
            let t = rng.random_range(0..tickers);
            if Some(t) != avoid && !by_ticker[t].is_empty() {
                let want = rng.random_range(1..=usize::from(p.class_max)).min(by_ticker[t].len());
                let at = by_ticker[t].len() - want;
                return (t, by_ticker[t].split_off(at));
            }
        };
        let (first, mut group) = pick(None, &mut rng);
        group.extend(pick(Some(first), &mut rng).1);
        let (v, o) = (quotes[group[0]].volume, quotes[group[0]].open);
        for &r in &group[1..] {
            quotes[r].volume = v;
            quotes[r].open = o;
            changed += 1;
        }
    }
    let mut written: Vec<Quote> = quotes.clone();
    let sizes = std::iter::repeat_n(2u32, p.pairs as usize).chain(p.groups.iter().copied());
    for (&r, size) in copied.iter().zip(sizes) {
        for _ in 1..size {
            // Another feed's copy: its own volume and close.
            let mut copy = quotes[r].clone();
            copy.volume = volume.next().expect("a volume per row");
            copy.close = rng.random_range(copy.low..=copy.high);
            written.push(copy);
        }
    }
    written.shuffle(&mut rng);

    let symbols: Vec<String> = (0..tickers).map(symbol).collect();
    let names: Vec<String> = COLUMNS.iter().map(|c| c.to_string()).collect();
    let mut writer = TableWriter::create(out, TableFormat::Csv, &names, &KINDS)?;
    for q in &written {
        let cells = [
            q.day.to_string(),
            symbols[q.ticker].clone(),
            q.open.to_string(),
            q.high.to_string(),
            q.low.to_string(),
            q.close.to_string(),
            q.volume.to_string(),
        ];
        writer.write_cells(&cells)?;
    }
    writer.finish()?;

    let mut text = String::from(KEY);
    if p.order_dc {
        text += ORDER;
    }
    text += FD;
    let known = Known { violating_rows: Some(copies as u64 + changed), ..Known::default() };
    Ok((text, known))
}
