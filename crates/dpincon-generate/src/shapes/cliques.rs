//! `cliques`: duplicated keys with conflicting attributes, as in
//! bibliographic data (the same DBLP-style key entered several times with a
//! different title spelling or year).
//!
//! Most keys occur once. Each duplicated key gets 2–12 copies (2 plus a
//! geometric count), and 5% of them 13–30 copies, the occasional heavily
//! duplicated record. The second copy always differs from the first; later
//! copies either repeat an earlier copy exactly or are new variants. So the
//! copies of a key form a complete multipartite graph (a clique when all
//! variants differ), and every copy is in some conflict: I_P counts exactly
//! the copies, while I_R is the copies minus the largest class of equal
//! copies, far below I_P (unlike in stars, where I_R is the number of
//! centres).

use std::collections::HashMap;

use rand::seq::{SliceRandom, index};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::Outcome;
use super::names::{TITLE_ADJ, TITLE_DOMAIN, TITLE_NOUN, VENUES};
use crate::GenerateError;
use crate::table::{Kind, TableWriter};
use crate::tax::states::SURNAMES;
use crate::typo::typo;

pub(super) const COLUMNS: [&str; 5] = ["id", "key", "title", "year", "venue"];
pub(super) const KINDS: [Kind; 5] = [Kind::Int, Kind::Str, Kind::Str, Kind::Int, Kind::Str];
pub(super) const CONSTRAINTS: &str = "key -> title\nkey -> year\nkey -> venue\n";

/// Copies beyond the first two: geometric with this success probability,
/// capped so that a key has at most [`USUAL_MAX`] copies (mean ≈ 3.5).
pub(super) const GEOMETRIC_P: f64 = 0.4;
const USUAL_MAX: usize = 12;
/// The share of duplicated keys with [`USUAL_MAX`] + 1 ..= [`TAIL_MAX`]
/// copies.
pub(super) const TAIL_SHARE: f64 = 0.05;
/// The most copies of one key.
pub(super) const TAIL_MAX: usize = 30;
/// Chance that a third or later copy repeats an earlier copy exactly (an
/// independent class of the multipartite graph otherwise).
const REPEAT: f64 = 0.3;

#[derive(Debug, Clone, PartialEq)]
struct Paper {
    key: String,
    title: String,
    year: u16,
    venue: String,
}

/// Draws papers with distinct keys.
struct Library {
    /// How often each key stem was issued, for DBLP's `a`, `b`, ... suffixes.
    stems: HashMap<String, u32>,
}

impl Library {
    fn paper(&mut self, rng: &mut ChaCha8Rng) -> Paper {
        let (prefix, venue) = VENUES[rng.random_range(0..VENUES.len())];
        // Recent years are more frequent, as in DBLP.
        let year = 2024 - (rng.random::<f64>().powi(2) * 50.0) as u16;
        let surname = SURNAMES[rng.random_range(0..SURNAMES.len())];
        let mut stem = format!("{prefix}/{surname}");
        for _ in 0..rng.random_range(0..3) {
            stem.push((b'A' + rng.random_range(0..26u8)) as char);
        }
        stem.push_str(&format!("{:02}", year % 100));
        let issued = self.stems.entry(stem.clone()).or_insert(0);
        let key = match *issued {
            0 => stem,
            k @ 1..=26 => format!("{stem}{}", (b'a' + (k - 1) as u8) as char),
            k => format!("{stem}-{k}"),
        };
        *issued += 1;
        let pick =
            |list: &[&'static str], rng: &mut ChaCha8Rng| list[rng.random_range(0..list.len())];
        let title = match rng.random_range(0..4) {
            0 => format!(
                "{} {} for {}",
                pick(TITLE_ADJ, rng),
                pick(TITLE_NOUN, rng),
                pick(TITLE_DOMAIN, rng)
            ),
            1 => format!(
                "On the Complexity of {} over {}",
                pick(TITLE_NOUN, rng),
                pick(TITLE_DOMAIN, rng)
            ),
            2 => format!(
                "{}: {} {} in Practice",
                pick(TITLE_NOUN, rng),
                pick(TITLE_ADJ, rng),
                pick(TITLE_NOUN, rng)
            ),
            _ => format!("Towards {} {}", pick(TITLE_ADJ, rng), pick(TITLE_NOUN, rng)),
        };
        Paper { key, title, year, venue: venue.to_string() }
    }
}

/// A variant of `p` with the same key and a different title, year or venue
/// (or several): the usual ways one record is entered twice.
fn variant(p: &Paper, rng: &mut ChaCha8Rng) -> Paper {
    let mut v = p.clone();
    // Mostly the title (the field typed by hand), sometimes only the year.
    if rng.random_bool(0.85) {
        v.title = match rng.random_range(0..4) {
            0 => format!("{}.", p.title),
            1 => match p.title.split_once(':') {
                Some((head, _)) => head.to_string(),
                None => format!("{} (Extended Abstract)", p.title),
            },
            2 => p.title.to_lowercase(),
            _ => typo(&p.title, rng),
        };
    }
    if rng.random_bool(0.35) {
        // The journal version, a year later; or a typo'd year.
        v.year = if rng.random_bool(0.7) { p.year + 1 } else { p.year - 1 };
    }
    if rng.random_bool(0.1) {
        v.venue = format!("Proc. {}", p.venue);
    }
    if v == *p {
        // Lower-casing an already lower-case title changes nothing; a typo
        // always does.
        v.title = typo(&p.title, rng);
    }
    v
}

/// The number of copies of one duplicated key: geometric with success
/// probability `p` beyond two, a share `tail` of the keys in the tail.
fn copies((p, tail): (f64, f64), rng: &mut ChaCha8Rng) -> usize {
    if rng.random_bool(tail) {
        return rng.random_range(USUAL_MAX + 1..=TAIL_MAX);
    }
    let mut size = 2;
    while size < USUAL_MAX && !rng.random_bool(p) {
        size += 1;
    }
    size
}

/// A `cliques` table: the copies of the duplicated keys and the rows they
/// take; the other rows are single papers drawn while writing.
pub(super) struct Cliques {
    n: u32,
    /// The copies, shuffled, and their rows in increasing order.
    copies: Vec<Paper>,
    positions: Vec<u32>,
    largest: usize,
    library: Library,
    rng: ChaCha8Rng,
}

impl Cliques {
    /// Draw `violations` duplicated keys, their copies geometric with
    /// success probability `p` beyond two and a share `tail` in the tail
    /// ([`GEOMETRIC_P`] and [`TAIL_SHARE`] by default).
    pub(super) fn draw(
        n: u32,
        violations: u64,
        (p, tail): (f64, f64),
        mut rng: ChaCha8Rng,
    ) -> Result<Self, GenerateError> {
        let mut library = Library { stems: HashMap::new() };
        let mut all = Vec::new();
        let mut largest = usize::from(n > 0);
        for _ in 0..violations {
            let size = copies((p, tail), &mut rng);
            largest = largest.max(size);
            if all.len() + size > n as usize {
                return Err(GenerateError::Option(format!(
                    "{violations} duplicated keys need more than the {n} rows (each takes 2 to \
                     {TAIL_MAX} copies, about 4 on average); use fewer violations or more rows"
                )));
            }
            let original = library.paper(&mut rng);
            let mut group = vec![original.clone(), variant(&original, &mut rng)];
            while group.len() < size {
                let next = if rng.random_bool(REPEAT) {
                    group[rng.random_range(0..group.len())].clone()
                } else {
                    variant(&original, &mut rng)
                };
                group.push(next);
            }
            all.extend(group);
        }
        all.shuffle(&mut rng);
        let mut positions: Vec<u32> =
            index::sample(&mut rng, n as usize, all.len()).into_iter().map(|i| i as u32).collect();
        positions.sort_unstable();
        // Single papers come from their own stream, so that the duplicated
        // keys do not depend on how many rows are drawn after them.
        let rng = ChaCha8Rng::seed_from_u64(rng.next_u64());
        Ok(Cliques { n, copies: all, positions, largest, library, rng })
    }

    pub(super) fn outcome(&self) -> Outcome {
        Outcome { violating_rows: self.copies.len() as u64, largest_group: self.largest as u64 }
    }

    pub(super) fn write(&mut self, writer: &mut TableWriter) -> Result<(), GenerateError> {
        let mut next = 0;
        for row in 0..self.n {
            let single;
            let paper = if self.positions.get(next) == Some(&row) {
                next += 1;
                &self.copies[next - 1]
            } else {
                single = self.library.paper(&mut self.rng);
                &single
            };
            let id = (row + 1).to_string();
            let year = paper.year.to_string();
            writer.write_row(&[
                Some(id.as_str()),
                Some(paper.key.as_str()),
                Some(paper.title.as_str()),
                Some(year.as_str()),
                Some(paper.venue.as_str()),
            ])?;
        }
        Ok(())
    }
}
