//! `hubs`, `sparse` and `mixed`: FDs over groups of rows, with violations
//! injected as wrong right-hand sides.
//!
//! A row with a wrong right-hand side conflicts with every other row of its
//! group (they hold the correct value, or another wrong one), so its degree
//! is its group's size minus one. Where the violations go decides the shape:
//! the largest groups of a Zipf-like column give stars of degree in the
//! thousands (hubs); random rows of small groups give many small stars
//! (sparse). Each group keeps a strict majority of correct rows, so the
//! correct value, and hence the number of wrong rows, can be read back from
//! the table.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use rand::seq::SliceRandom;
use rand::{Rng, seq::index};
use rand_chacha::ChaCha8Rng;

use super::names::{BOROUGHS, OFFENSES, PRECINCTS};
use super::{Outcome, Shape, ShapeParams, capacity, spread_over_largest};
use crate::GenerateError;
use crate::table::{Kind, TableWriter};
use crate::tax::states::STATES;
use crate::tax::{city_name, cumulative, pick};

/// Violations of the hub FDs by default, and in `mixed` the first this many
/// of `--violations`: 6 wrong descriptions and 3 wrong boroughs, i.e. two
/// stars in each of the three largest code groups and one in each of the
/// three largest precincts.
pub(super) const HUB_VIOLATIONS: u64 = 9;
/// Code group sizes ∝ 1 / rank^0.7 over the offense codes: the largest holds
/// ~11% of the rows, like the most frequent offense of the NYPD complaint
/// data (exponent 1 would give 21%, 0.5 would give 6%).
pub(super) const CODE_ZIPF: f64 = 0.7;
/// Precinct sizes ∝ 1 / rank^0.5: the busiest precinct has ~6% of the rows.
const PRECINCT_ZIPF: f64 = 0.5;
/// Hub violations go round-robin to this many of the largest groups: a few
/// stars, as in the brief's "placed in the largest groups".
pub(super) const STARS: usize = 3;
/// Zip groups have 5 to 40 rows (uniform): degrees of tens at most.
pub(super) const ZIP_MIN: usize = 5;
pub(super) const ZIP_MAX: usize = 40;
/// Neighbouring zip codes share a city: up to this many per city.
const ZIPS_PER_CITY: usize = 4;
/// States of the zip codes (contiguous runs of cities).
const ZIP_STATES: usize = 6;

pub(super) const HUBS_COLUMNS: &[&str] = &["id", "code", "description", "precinct", "borough"];
pub(super) const HUBS_KINDS: [Kind; 5] = [Kind::Int, Kind::Int, Kind::Str, Kind::Int, Kind::Str];
pub(super) const SPARSE_COLUMNS: &[&str] = &["id", "zip", "city", "state"];
pub(super) const SPARSE_KINDS: [Kind; 4] = [Kind::Int, Kind::Int, Kind::Str, Kind::Str];
pub(super) const MIXED_COLUMNS: &[&str] =
    &["id", "code", "description", "precinct", "borough", "zip", "city", "state"];
pub(super) const MIXED_KINDS: [Kind; 8] =
    [Kind::Int, Kind::Int, Kind::Str, Kind::Int, Kind::Str, Kind::Int, Kind::Str, Kind::Str];

pub(super) const HUBS_CONSTRAINTS: &str = "code -> description\nprecinct -> borough\n";
pub(super) const SPARSE_CONSTRAINTS: &str = "zip -> city\nzip -> state\n";
pub(super) const MIXED_CONSTRAINTS: &str =
    "code -> description\nprecinct -> borough\nzip -> city\nzip -> state\n";

/// Which column families a table has.
#[derive(Debug, Clone, Copy)]
pub(super) struct Layout {
    hubs: bool,
    zips: bool,
}

impl Layout {
    /// The layout of `hubs`, `sparse` or `mixed`.
    pub(super) fn of(shape: Shape) -> Self {
        Layout {
            hubs: matches!(shape, Shape::Hubs | Shape::Mixed),
            zips: matches!(shape, Shape::Sparse | Shape::Mixed),
        }
    }
}

/// One FD `lhs -> rhs` as the table holds it.
struct Fd {
    /// Each row's group (its left-hand side value).
    group: Vec<u32>,
    /// Each group's correct right-hand side, an index into the FD's domain.
    rhs: Vec<u32>,
    /// The number of right-hand side values a wrong value is drawn from.
    domain: usize,
    /// Rows given a wrong right-hand side, and that value.
    wrong: HashMap<u32, u32>,
}

impl Fd {
    fn new(group: Vec<u32>, rhs: Vec<u32>, domain: usize) -> Self {
        Fd { group, rhs, domain, wrong: HashMap::new() }
    }

    fn sizes(&self) -> Vec<usize> {
        let mut sizes = vec![0; self.rhs.len()];
        for &g in &self.group {
            sizes[g as usize] += 1;
        }
        sizes
    }

    /// The right-hand side row `row` holds.
    fn value(&self, row: usize) -> usize {
        let correct = self.rhs[self.group[row] as usize];
        self.wrong.get(&(row as u32)).copied().unwrap_or(correct) as usize
    }

    /// Give `row` a wrong value, uniform over the domain's other values.
    fn corrupt(&mut self, row: u32, used: &mut [bool], rng: &mut ChaCha8Rng) {
        let correct = self.rhs[self.group[row as usize] as usize];
        let mut w = rng.random_range(0..self.domain as u32 - 1);
        if w >= correct {
            w += 1;
        }
        self.wrong.insert(row, w);
        used[row as usize] = true;
    }

    /// Give `per_group[g]` random rows of each group `g` a wrong value,
    /// never a row already `used` by another FD (a row carries one
    /// violation, so counting wrong rows per FD adds up).
    fn inject_in_groups(
        &mut self,
        per_group: &[usize],
        used: &mut [bool],
        rng: &mut ChaCha8Rng,
    ) -> Result<(), GenerateError> {
        let mut members: Vec<Vec<u32>> = vec![Vec::new(); self.rhs.len()];
        for (row, &g) in self.group.iter().enumerate() {
            if per_group[g as usize] > 0 && !used[row] {
                members[g as usize].push(row as u32);
            }
        }
        for (g, &k) in per_group.iter().enumerate() {
            if k > members[g].len() {
                return Err(GenerateError::Option(format!(
                    "{k} violations do not fit in a group of {} free rows",
                    members[g].len()
                )));
            }
            for i in index::sample(rng, members[g].len(), k) {
                self.corrupt(members[g][i], used, rng);
            }
        }
        Ok(())
    }

    /// Give `count` rows a wrong value, rows taken in random order and
    /// skipped when used or when their group is at [`capacity`].
    fn inject_scattered(
        &mut self,
        count: u64,
        used: &mut [bool],
        rng: &mut ChaCha8Rng,
    ) -> Result<(), GenerateError> {
        let sizes = self.sizes();
        let mut taken = vec![0usize; sizes.len()];
        let mut rows: Vec<u32> = (0..self.group.len() as u32).collect();
        rows.shuffle(rng);
        let mut left = count;
        for row in rows {
            if left == 0 {
                break;
            }
            let g = self.group[row as usize] as usize;
            if !used[row as usize] && taken[g] < capacity(sizes[g]) {
                taken[g] += 1;
                left -= 1;
                self.corrupt(row, used, rng);
            }
        }
        if left > 0 {
            return Err(GenerateError::Option(format!(
                "{count} violations do not fit: only {} rows can take a wrong value while every \
                 group keeps a correct majority (a group of s rows takes (s - 1) / 2); use fewer \
                 violations or more rows",
                count - left
            )));
        }
        Ok(())
    }
}

/// The offense code and precinct columns.
struct Hubs {
    /// `code -> description`: the group is the offense's index in
    /// [`OFFENSES`], its correct description the same index.
    code: Fd,
    /// `precinct -> borough`: groups index [`PRECINCTS`].
    precinct: Fd,
}

impl Hubs {
    fn draw(n: u32, code_zipf: f64, rng: &mut ChaCha8Rng) -> Self {
        // Which offense is the most frequent depends on the seed.
        let mut code_rank: Vec<usize> = (0..OFFENSES.len()).collect();
        code_rank.shuffle(rng);
        let code_cum = cumulative(code_rank.iter().map(|&r| zipf(r, code_zipf)));
        let mut precinct_rank: Vec<usize> = (0..PRECINCTS.len()).collect();
        precinct_rank.shuffle(rng);
        let precinct_cum = cumulative(precinct_rank.iter().map(|&r| zipf(r, PRECINCT_ZIPF)));
        let mut codes = Vec::with_capacity(n as usize);
        let mut precincts = Vec::with_capacity(n as usize);
        for _ in 0..n {
            codes.push(pick(&code_cum, rng) as u32);
            precincts.push(pick(&precinct_cum, rng) as u32);
        }
        Hubs {
            code: Fd::new(codes, (0..OFFENSES.len() as u32).collect(), OFFENSES.len()),
            precinct: Fd::new(
                precincts,
                PRECINCTS.iter().map(|p| u32::from(p.1)).collect(),
                BOROUGHS.len(),
            ),
        }
    }
}

/// Weight of the group of 0-based `rank`.
fn zipf(rank: usize, exponent: f64) -> f64 {
    1.0 / ((rank + 1) as f64).powf(exponent)
}

/// The zip, city and state columns.
struct Zips {
    /// Each zip group's code.
    codes: Vec<u32>,
    cities: Vec<String>,
    states: Vec<&'static str>,
    /// `zip -> city`; violations go here.
    city: Fd,
    /// `zip -> state`; holds.
    state: Fd,
}

impl Zips {
    fn draw(n: u32, (zip_min, zip_max): (usize, usize), rng: &mut ChaCha8Rng) -> Self {
        // Group sizes uniform in 5..=40 (by default); the last two absorb
        // the remainder so that every group stays in range (for n >= 5).
        let mut sizes = Vec::new();
        let mut left = n as usize;
        while left > 0 {
            let s = if left <= zip_max {
                left
            } else {
                let s = rng.random_range(zip_min..=zip_max);
                if left - s < zip_min { left - zip_min } else { s }
            };
            sizes.push(s);
            left -= s;
        }
        let mut group: Vec<u32> =
            sizes.iter().enumerate().flat_map(|(g, &s)| std::iter::repeat_n(g as u32, s)).collect();
        group.shuffle(rng);

        // Distinct 5-digit codes (more digits only past ~2 million rows).
        let span = 90_000.max(2 * sizes.len());
        let mut codes: Vec<u32> =
            index::sample(rng, span, sizes.len()).into_iter().map(|i| 10_000 + i as u32).collect();
        codes.sort_unstable();

        // Runs of neighbouring codes share a city; at least two cities, so
        // a wrong city always exists.
        let mut zip_city = Vec::with_capacity(sizes.len());
        let mut cities: Vec<String> = Vec::new();
        let mut seen = HashSet::new();
        while zip_city.len() < sizes.len() || cities.len() < 2 {
            let mut name = city_name(rng);
            for _ in 0..16 {
                if !seen.contains(&name) {
                    break;
                }
                name = city_name(rng);
            }
            if seen.contains(&name) {
                let _ = write!(name, " {}", cities.len());
            }
            seen.insert(name.clone());
            let run = rng.random_range(1..=ZIPS_PER_CITY).min(sizes.len() - zip_city.len());
            zip_city.extend(std::iter::repeat_n(cities.len() as u32, run));
            cities.push(name);
        }
        let states: Vec<&'static str> = index::sample(rng, STATES.len(), ZIP_STATES)
            .into_iter()
            .map(|i| STATES[i].code)
            .collect();
        let zip_state =
            zip_city.iter().map(|&c| (c as usize * ZIP_STATES / cities.len()) as u32).collect();
        Zips {
            codes,
            city: Fd::new(group.clone(), zip_city, cities.len()),
            state: Fd::new(group, zip_state, states.len()),
            cities,
            states,
        }
    }
}

/// A `hubs`, `sparse` or `mixed` table, violations placed, ready to write.
pub(super) struct FdTable {
    n: u32,
    hubs: Option<Hubs>,
    zips: Option<Zips>,
}

impl FdTable {
    /// Draw the groups and place `violations`: in `mixed`, the first
    /// `params.hub_violations` ([`HUB_VIOLATIONS`] by default) go to the
    /// hubs and the rest to the zip codes.
    pub(super) fn draw(
        layout: Layout,
        n: u32,
        violations: u64,
        params: &ShapeParams,
        rng: &mut ChaCha8Rng,
    ) -> Result<Self, GenerateError> {
        let first = params.hub_violations;
        let (hub_violations, zip_violations) = match (layout.hubs, layout.zips) {
            (true, true) => (violations.min(first), violations.saturating_sub(first)),
            (true, false) => (violations, 0),
            _ => (0, violations),
        };
        let mut hubs = layout.hubs.then(|| Hubs::draw(n, params.code_zipf, rng));
        let mut zips = layout.zips.then(|| Zips::draw(n, (params.zip_min, params.zip_max), rng));
        let mut used = vec![false; n as usize];
        if let Some(h) = &mut hubs {
            // Every third violation is a wrong borough, the rest wrong
            // descriptions.
            let boroughs = hub_violations / 3;
            let descriptions = hub_violations - boroughs;
            let per_code = spread_over_largest(
                &h.code.sizes(),
                descriptions,
                params.stars,
                "wrong descriptions",
            )?;
            h.code.inject_in_groups(&per_code, &mut used, rng)?;
            let per_precinct =
                spread_over_largest(&h.precinct.sizes(), boroughs, params.stars, "wrong boroughs")?;
            h.precinct.inject_in_groups(&per_precinct, &mut used, rng)?;
        }
        if let Some(z) = &mut zips {
            z.city.inject_scattered(zip_violations, &mut used, rng)?;
        }
        Ok(FdTable { n, hubs, zips })
    }

    fn fds(&self) -> Vec<&Fd> {
        let mut fds = Vec::new();
        if let Some(h) = &self.hubs {
            fds.extend([&h.code, &h.precinct]);
        }
        if let Some(z) = &self.zips {
            fds.extend([&z.city, &z.state]);
        }
        fds
    }

    pub(super) fn outcome(&self) -> Outcome {
        let fds = self.fds();
        Outcome {
            violating_rows: fds.iter().map(|f| f.wrong.len() as u64).sum(),
            largest_group: fds.iter().flat_map(|f| f.sizes()).max().unwrap_or(0) as u64,
        }
    }

    pub(super) fn write(&self, writer: &mut TableWriter) -> Result<(), GenerateError> {
        let mut cells: Vec<String> = Vec::new();
        for row in 0..self.n as usize {
            cells.clear();
            cells.push((row + 1).to_string());
            if let Some(h) = &self.hubs {
                let code = h.code.group[row] as usize;
                cells.push(OFFENSES[code].0.to_string());
                cells.push(OFFENSES[h.code.value(row)].1.to_string());
                cells.push(PRECINCTS[h.precinct.group[row] as usize].0.to_string());
                cells.push(BOROUGHS[h.precinct.value(row)].to_string());
            }
            if let Some(z) = &self.zips {
                cells.push(z.codes[z.city.group[row] as usize].to_string());
                cells.push(z.cities[z.city.value(row)].clone());
                cells.push(z.states[z.state.value(row)].to_string());
            }
            writer.write_cells(&cells)?;
        }
        Ok(())
    }
}
