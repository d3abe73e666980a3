//! The orders table of [`super`]: a fixed world of ZIP codes (each in one
//! city and one state) and products (each with one price), fresh rows drawn
//! from it, and the wrong cells that make a row violate a constraint.

use rand::seq::index;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, LogNormal};

use crate::tax::states::STATES;
use crate::tax::{city_name, cumulative, pick};
use crate::typo::typo;

/// Rows per ZIP code and per product on average: the groups of the FDs,
/// hence the degree of a wrong row (tens, like a warehouse's small groups,
/// so I_MI moves by tens of pairs per wrong row and I_R by one).
const ROWS_PER_ZIP: u64 = 25;
const ROWS_PER_SKU: u64 = 40;
/// Neighbouring ZIP codes share a city: 1 to this many each.
const ZIPS_PER_CITY: usize = 4;
/// Spread (log-normal σ) of the group weights: the largest of ~400 ZIP
/// groups is about four times the average, not a hub.
const GROUP_SIGMA: f64 = 0.5;

/// The table's columns, in order.
pub(super) const COLUMNS: [&str; 8] =
    ["order_id", "customer", "zip", "city", "state", "sku", "unit_price", "quantity"];
pub(super) const ZIP: usize = 2;
pub(super) const CITY: usize = 3;
pub(super) const STATE: usize = 4;
pub(super) const SKU: usize = 5;
pub(super) const PRICE: usize = 6;
/// The columns a wrong cell may land in: every column an FD uses, as
/// RNoise picks them.
pub(super) const CONSTRAINED: [usize; 5] = [ZIP, CITY, STATE, SKU, PRICE];

/// One order as the table holds it: indexes into the world, and at most one
/// wrong cell.
#[derive(Debug, Clone)]
pub(super) struct Row {
    id: u64,
    customer: u32,
    zip: u32,
    sku: u32,
    quantity: u8,
    pub(super) fault: Option<Fault>,
}

/// A wrong cell: the column and the text written there instead of the
/// world's value.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Fault {
    pub(super) column: usize,
    text: Box<str>,
}

pub(super) struct World {
    zips: Vec<u32>,
    zip_cum: Vec<f64>,
    zip_city: Vec<u32>,
    cities: Vec<String>,
    city_state: Vec<usize>,
    skus: Vec<String>,
    sku_cum: Vec<f64>,
    /// Prices in cents.
    prices: Vec<u32>,
    customers: u32,
    next_id: u64,
}

/// `1299` → `12.99`.
fn price_text(cents: u32) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

/// A draw from `0..n` other than `not`, uniformly (`n` ≥ 2).
fn other(n: usize, not: usize, rng: &mut impl Rng) -> usize {
    let j = rng.random_range(0..n - 1);
    if j >= not { j + 1 } else { j }
}

impl World {
    /// The world of a table of `rows` rows, from stream 0 of `seed` (rows
    /// come from another stream, so the world does not depend on them).
    pub(super) fn draw(rows: u64, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let weight = LogNormal::new(0.0, GROUP_SIGMA).expect("valid");
        let n_zip = (rows / ROWS_PER_ZIP).clamp(20, 80_000) as usize;
        let mut zips: Vec<u32> =
            index::sample(&mut rng, 90_000, n_zip).into_iter().map(|i| 10_000 + i as u32).collect();
        zips.sort_unstable();
        let zip_cum = cumulative((0..n_zip).map(|_| weight.sample(&mut rng)));
        let mut cities = Vec::new();
        let mut city_state = Vec::new();
        let mut zip_city = Vec::with_capacity(n_zip);
        let mut seen = std::collections::HashSet::new();
        while zip_city.len() < n_zip {
            let mut name = city_name(&mut rng);
            while !seen.insert(name.clone()) {
                name =
                    format!("{name} {}", ["EAST", "NEW", "OLD", "UPPER"][rng.random_range(0..4)]);
            }
            let id = cities.len() as u32;
            cities.push(name);
            city_state.push(rng.random_range(0..STATES.len()));
            for _ in 0..rng.random_range(1..=ZIPS_PER_CITY).min(n_zip - zip_city.len()) {
                zip_city.push(id);
            }
        }
        let n_sku = (rows / ROWS_PER_SKU).clamp(10, 90_000) as usize;
        let skus = index::sample(&mut rng, 90_000, n_sku)
            .into_iter()
            .map(|i| format!("SKU-{}", 10_000 + i))
            .collect();
        let sku_cum = cumulative((0..n_sku).map(|_| weight.sample(&mut rng)));
        let price = LogNormal::new(2_500f64.ln(), 1.0).expect("valid");
        let prices = (0..n_sku)
            .map(|_| (price.sample(&mut rng).round() as u32).clamp(99, 999_999))
            .collect();
        let customers = (rows / 3).clamp(1, u64::from(u32::MAX)) as u32;
        World {
            zips,
            zip_cum,
            zip_city,
            cities,
            city_state,
            skus,
            sku_cum,
            prices,
            customers,
            next_id: 1_000_001,
        }
    }

    /// ZIP codes, cities and products in the world.
    pub(super) fn sizes(&self) -> (usize, usize, usize) {
        (self.zips.len(), self.cities.len(), self.skus.len())
    }

    /// A new, correct order with the next order id.
    pub(super) fn fresh(&mut self, rng: &mut impl Rng) -> Row {
        let id = self.next_id;
        self.next_id += 1;
        Row {
            id,
            customer: rng.random_range(1..=self.customers),
            zip: pick(&self.zip_cum, rng) as u32,
            sku: pick(&self.sku_cum, rng) as u32,
            quantity: rng.random_range(1..=9),
            fault: None,
        }
    }

    fn city(&self, zip: u32) -> usize {
        self.zip_city[zip as usize] as usize
    }

    /// A wrong cell for `row`, in a random constrained column, that makes
    /// it violate an FD against the correct rows of its group: another ZIP
    /// code of another city, another city or state (half the time a typo,
    /// as RNoise), another product of another price, or another price (half
    /// a typo that changes the number, never only its spelling: `12.90` →
    /// `12.9` would equal the group's value).
    pub(super) fn fault(&self, row: &Row, rng: &mut impl Rng) -> Fault {
        let column = CONSTRAINED[rng.random_range(0..CONSTRAINED.len())];
        let city = self.city(row.zip);
        let text = match column {
            ZIP => loop {
                let z = other(self.zips.len(), row.zip as usize, rng);
                if self.city(z as u32) != city {
                    break self.zips[z].to_string();
                }
            },
            CITY if rng.random_bool(0.5) => typo(&self.cities[city], rng),
            CITY => self.cities[other(self.cities.len(), city, rng)].clone(),
            STATE if rng.random_bool(0.5) => typo(STATES[self.city_state[city]].code, rng),
            STATE => STATES[other(STATES.len(), self.city_state[city], rng)].code.to_string(),
            SKU => loop {
                let s = other(self.skus.len(), row.sku as usize, rng);
                if self.prices[s] != self.prices[row.sku as usize] {
                    break self.skus[s].clone();
                }
            },
            _ => {
                let correct = self.prices[row.sku as usize];
                let wrong = |t: &str| t.parse::<f64>().ok() != Some(f64::from(correct) / 100.0);
                let slip = typo(&price_text(correct), rng);
                if rng.random_bool(0.5) && wrong(&slip) {
                    slip
                } else {
                    loop {
                        let p = self.prices[rng.random_range(0..self.prices.len())];
                        if p != correct {
                            break price_text(p);
                        }
                    }
                }
            }
        };
        Fault { column, text: text.into() }
    }

    /// Write `row`'s cells into `cells`, `fault` (a burst's, else the row's
    /// own) in place of the world's value.
    pub(super) fn cells(&self, row: &Row, fault: Option<&Fault>, cells: &mut [String; 8]) {
        use std::fmt::Write as _;
        for c in cells.iter_mut() {
            c.clear();
        }
        let city = self.city(row.zip);
        let _ = write!(cells[0], "{}", row.id);
        let _ = write!(cells[1], "{}", row.customer);
        let _ = write!(cells[ZIP], "{}", self.zips[row.zip as usize]);
        cells[CITY].push_str(&self.cities[city]);
        cells[STATE].push_str(STATES[self.city_state[city]].code);
        cells[SKU].push_str(&self.skus[row.sku as usize]);
        cells[PRICE].push_str(&price_text(self.prices[row.sku as usize]));
        let _ = write!(cells[7], "{}", row.quantity);
        if let Some(f) = fault.or(row.fault.as_ref()) {
            cells[f.column].clear();
            cells[f.column].push_str(&f.text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every wrong cell differs from the world's value (numerically for a
    /// price), and a wrong ZIP code or product moves the row into a group
    /// whose city or price differs: each fault is a violation.
    #[test]
    fn every_fault_breaks_its_fd() {
        let mut world = World::draw(4_000, 3);
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let mut seen = [0; 8];
        for _ in 0..2_000 {
            let row = world.fresh(&mut rng);
            let fault = world.fault(&row, &mut rng);
            seen[fault.column] += 1;
            let (mut clean, mut dirty) = (Default::default(), Default::default());
            world.cells(&row, None, &mut clean);
            world.cells(&row, Some(&fault), &mut dirty);
            let changed: Vec<usize> = (0..8).filter(|&c| clean[c] != dirty[c]).collect();
            assert_eq!(changed, vec![fault.column]);
            match fault.column {
                PRICE => assert_ne!(
                    clean[PRICE].parse::<f64>().unwrap(),
                    dirty[PRICE].parse::<f64>().unwrap()
                ),
                ZIP => {
                    let z = world.zips.iter().position(|z| z.to_string() == dirty[ZIP]).unwrap();
                    assert_ne!(world.city(z as u32), world.city(row.zip));
                }
                SKU => {
                    let s = world.skus.iter().position(|s| *s == *dirty[SKU]).unwrap();
                    assert_ne!(world.prices[s], world.prices[row.sku as usize]);
                }
                _ => {}
            }
        }
        for c in CONSTRAINED {
            assert!(seen[c] > 300, "column {c} drawn {} times of 2000", seen[c]);
        }
    }
}
