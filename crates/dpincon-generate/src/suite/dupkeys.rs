//! `dup-keys`: a key (`id -> name, email, zip, city, state`) broken by
//! 10 to 10^4 duplicated records, each id copied once or twice.
//!
//! Why: customer or order tables loaded twice in places give many tiny
//! conflict groups, pairs and triangles, and nothing else: the maximum
//! degree is 2 however large the count. Every θ ≥ 2 gives the whole count,
//! so any θ above 2 only adds noise (θ/ε), and a release whose degree bound
//! comes from the key's group sizes (2 or 3) is at its best; one that
//! searches a grid up to n is at its worst. With `extra_fds`, the FDs
//! `zip -> city` (wrong cities in 1% of the records, zip groups of 5–40
//! records) and `zip -> state` (which holds) sit beside the key, so the
//! degree bound of the other sets is in the tens.
//!
//! A copy repeats its record's id, zip, city and state, and changes the
//! name or the e-mail address by a typo, always to a value no other copy of
//! the id has: each group of copies is a clique. The duplicates (rows
//! beyond the first of their id) are exactly `duplicates`.

use std::collections::HashSet;
use std::path::Path;

use rand::seq::{SliceRandom, index};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{FamilyParams, Known, PlannedTable, Scale};
use crate::GenerateError;
use crate::table::{Kind, TableFormat, TableWriter};
use crate::tax::city_name;
use crate::tax::states::{STATES, SURNAMES};
use crate::typo::typo;

/// Parameters of a `dup-keys` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DupKeyParams {
    /// Rows beyond the first of their id.
    pub duplicates: u64,
    /// The most rows one id has (2 or 3): the largest degree is one less.
    pub max_group: u8,
    /// Sparse `zip -> city`, `zip -> state` errors beside the key.
    pub extra_fds: bool,
}

const COLUMNS: [&str; 6] = ["id", "name", "email", "zip", "city", "state"];
const KINDS: [Kind; 6] = [Kind::Int, Kind::Str, Kind::Str, Kind::Int, Kind::Str, Kind::Str];
const KEY: &str = "id -> name, email, zip, city, state\n";
const ZIP_FDS: &str = "zip -> city\nzip -> state\n";
/// A group of three rows (two copies) for this share of the duplicated ids
/// when `max_group` is 3.
const TRIPLES: f64 = 0.3;
/// Wrong cities in this share of the records with `extra_fds`.
const CITY_ERRORS: f64 = 0.01;
const DOMAINS: [&str; 5] =
    ["example.org", "mail.test", "post.example", "inbox.test", "web.example"];

/// The grid: 10 to 10^4 duplicates, alone or beside sparse FD errors. At
/// small scale a table keeps at most a quarter of its rows as duplicates.
pub(super) fn grid(scale: Scale) -> Vec<PlannedTable> {
    let grid: [(u64, u64, bool); 7] = [
        (1_000, 10, false),
        (10_000, 100, false),
        (20_000, 1_000, false),
        (100_000, 10_000, false),
        (5_000, 100, true),
        (50_000, 1_000, true),
        (50_000, 10_000, true),
    ];
    grid.into_iter()
        .map(|(rows, duplicates, extra_fds)| {
            let n = scale.rows(rows);
            let duplicates = duplicates.min(n / 4);
            let fd = if extra_fds { "-fd" } else { "" };
            let params = DupKeyParams {
                duplicates,
                max_group: if duplicates >= 1_000 { 3 } else { 2 },
                extra_fds,
            };
            PlannedTable::new(
                format!("dupkeys-d{duplicates}{fd}"),
                FamilyParams::DupKeys(params),
                n,
            )
        })
        .collect()
}

/// A record: one person with an id.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Record {
    id: u32,
    name: String,
    email: String,
    zip: u32,
}

/// Writes the table to `out`; returns its constraint file and facts.
pub(super) fn write(
    p: &DupKeyParams,
    rows: u64,
    seed: u64,
    out: &Path,
) -> Result<(String, Known), GenerateError> {
    let n = rows as usize;
    let dups = p.duplicates as usize;
    if dups > n / 2 || !(2..=3).contains(&p.max_group) {
        return Err(GenerateError::Option(format!(
            "dup-keys: {dups} duplicates in {n} rows (at most half), groups of at most {} rows \
             (2 or 3)",
            p.max_group
        )));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let records = n - dups;

    // Zip groups of 5–40 records, each zip a city and a state.
    let mut zip_of = Vec::with_capacity(records);
    let mut zip_sizes = Vec::new();
    while zip_of.len() < records {
        let s = rng.random_range(5..=40).min(records - zip_of.len());
        zip_of.extend(std::iter::repeat_n(zip_sizes.len() as u32, s));
        zip_sizes.push(s);
    }
    zip_of.shuffle(&mut rng);
    let zips = zip_sizes.len();
    let zip_codes: Vec<u32> =
        index::sample(&mut rng, 89_000, zips).into_iter().map(|i| 10_000 + i as u32).collect();
    let cities: Vec<String> = (0..zips).map(|_| city_name(&mut rng)).collect();
    let states: Vec<&str> =
        (0..zips).map(|_| STATES[rng.random_range(0..STATES.len())].code).collect();

    let mut people: Vec<Record> = (0..records)
        .map(|i| {
            let surname = SURNAMES[rng.random_range(0..SURNAMES.len())];
            let initial = (b'A' + rng.random_range(0..26u8)) as char;
            let domain = DOMAINS[rng.random_range(0..DOMAINS.len())];
            Record {
                id: i as u32 + 1,
                name: format!("{surname}, {initial}."),
                email: format!("{}.{}{}@{domain}", surname.to_lowercase(), initial, i + 1)
                    .to_lowercase(),
                zip: zip_of[i],
            }
        })
        .collect();
    // Wrong cities: a record's city differs from its zip's, each zip keeping
    // a strict majority of right ones.
    let mut wrong_city: Vec<Option<u32>> = vec![None; records];
    let mut city_errors = 0;
    if p.extra_fds && zips > 1 {
        let want = (CITY_ERRORS * records as f64).round() as usize;
        let mut taken = vec![0usize; zips];
        let mut order: Vec<usize> = (0..records).collect();
        order.shuffle(&mut rng);
        for i in order {
            let z = people[i].zip as usize;
            if city_errors < want && taken[z] < (zip_sizes[z] - 1) / 2 {
                let mut w = rng.random_range(0..zips as u32 - 1);
                if w >= z as u32 {
                    w += 1;
                }
                wrong_city[i] = Some(w);
                taken[z] += 1;
                city_errors += 1;
            }
        }
    }

    // The duplicated ids and their copies.
    let mut extras = Vec::new();
    let mut left = dups;
    while left > 0 {
        let k = if p.max_group == 3 && left >= 2 && rng.random_bool(TRIPLES) { 2 } else { 1 };
        extras.push(k);
        left -= k;
    }
    let originals = index::sample(&mut rng, records, extras.len());
    let mut rows_out: Vec<(Record, Option<u32>)> =
        people.iter().cloned().zip(wrong_city.iter().copied()).collect();
    for (original, k) in originals.into_iter().zip(extras) {
        let record = &mut people[original];
        let mut seen: HashSet<(String, String)> = HashSet::new();
        seen.insert((record.name.clone(), record.email.clone()));
        for _ in 0..k {
            let mut copy = record.clone();
            loop {
                if rng.random_bool(0.5) {
                    copy.name = typo(&record.name, &mut rng);
                } else {
                    copy.email = typo(&record.email, &mut rng);
                }
                if seen.insert((copy.name.clone(), copy.email.clone())) {
                    break;
                }
                copy = record.clone();
            }
            rows_out.push((copy, wrong_city[original]));
        }
    }
    rows_out.shuffle(&mut rng);

    let names: Vec<String> = COLUMNS.iter().map(|c| c.to_string()).collect();
    let mut writer = TableWriter::create(out, TableFormat::Csv, &names, &KINDS)?;
    for (record, wrong) in &rows_out {
        let z = record.zip as usize;
        let city = &cities[wrong.map_or(z, |w| w as usize)];
        let (id, zip) = (record.id.to_string(), zip_codes[z].to_string());
        writer.write_row(&[
            Some(id.as_str()),
            Some(record.name.as_str()),
            Some(record.email.as_str()),
            Some(zip.as_str()),
            Some(city.as_str()),
            Some(states[z]),
        ])?;
    }
    writer.finish()?;

    let mut text = String::from(KEY);
    if p.extra_fds {
        text += ZIP_FDS;
    }
    // Copies of a record with a wrong city repeat it; they count once, as
    // copies.
    let known = Known { violating_rows: Some((dups + city_errors) as u64), ..Known::default() };
    Ok((text, known))
}
