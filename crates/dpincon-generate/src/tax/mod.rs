//! The Tax-like table generator: the schema of the paper's Tax table with
//! realistic group sizes, consistent under its nine denial constraints
//! ([`TAX_CONSTRAINTS`]) by construction.
//!
//! A *world* (states, area codes, ZIP codes, cities, tax schedules,
//! exemptions) is drawn first from the seed; it is small (about 40,000 ZIP
//! codes) and independent of the row count. Rows are then drawn one at a time
//! from a second ChaCha stream and written at once, so memory does not grow
//! with the table and the first rows of a 10^6-row table are the rows of a
//! 10^4-row table with the same seed.
//!
//! Why each constraint holds:
//! - `AreaCode, Phone` is a key: phones are a per-area-code permutation of a
//!   counter.
//! - `Zip → City`, `Zip → State`, `AreaCode → State`: ZIP codes and area codes
//!   belong to one state (disjoint ZIP prefixes, disjoint area codes) and each
//!   ZIP code to one city.
//! - `State, MaritalStatus → SingleExemp`, `State, HasChild → ChildExemp`:
//!   exemptions are a function of those attributes.
//! - `State, Salary → Rate` and the two order DCs: the rate is the *average*
//!   tax rate of the state's brackets, `tax(s) / s`, computed exactly in
//!   integers and rounded to 4 decimals; `tax` is convex with `tax(0) = 0`, so
//!   `tax(s) / s` is non-decreasing in `s`, and rounding keeps it so.

pub(crate) mod states;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, LogNormal};
use serde::Serialize;

use crate::GenerateError;
use crate::table::{Kind, TableFormat, TableWriter};
use states::{CITY_HEADS, CITY_TAILS, FEMALE, MALE, STATES, SURNAMES, SYLLABLES, TaxShape};

/// The columns of the Tax table, in order (the paper's `inputDB` files).
pub const TAX_COLUMNS: [&str; 15] = [
    "FName",
    "LName",
    "Gender",
    "AreaCode",
    "Phone",
    "City",
    "State",
    "Zip",
    "MaritalStatus",
    "HasChild",
    "Salary",
    "Rate",
    "SingleExemp",
    "MarriedExemp",
    "ChildExemp",
];

/// The Tax constraints (as the paper's experiment repository ships them),
/// which every generated table satisfies.
pub const TAX_CONSTRAINTS: &str = "\
not(t1.AreaCode=t2.AreaCode&t1.Phone=t2.Phone)
not(t1.City!=t2.City&t1.Zip=t2.Zip)
not(t1.AreaCode=t2.AreaCode&t1.State!=t2.State)
not(t1.State!=t2.State&t1.Zip=t2.Zip)
not(t1.State=t2.State&t1.HasChild=t2.HasChild&t1.ChildExemp!=t2.ChildExemp)
not(t1.State=t2.State&t1.MaritalStatus=t2.MaritalStatus&t1.SingleExemp!=t2.SingleExemp)
not(t1.State=t2.State&t1.Salary=t2.Salary&t1.Rate!=t2.Rate)
not(t1.State=t2.State&t1.Salary>t2.Salary&t1.Rate<t2.Rate)
not(t1.State=t2.State&t1.Salary<t2.Salary&t1.Rate>t2.Rate)
";

/// The Parquet types of [`TAX_COLUMNS`].
const TAX_KINDS: [Kind; 15] = [
    Kind::Str,
    Kind::Str,
    Kind::Str,
    Kind::Int,
    Kind::Int,
    Kind::Str,
    Kind::Str,
    Kind::Int,
    Kind::Str,
    Kind::Str,
    Kind::Int,
    Kind::Float,
    Kind::Int,
    Kind::Int,
    Kind::Int,
];

/// The group-size knobs (see the crate README for how they were tuned
/// against the paper's 322 million edges).
///
/// ZIP codes in the whole country: about the real 41,000, so a 10^6-row
/// table has ~25 rows per ZIP code (the `Zip` FDs' group size).
const ZIP_CODES: f64 = 40_000.0;
/// People per area code: the real US has ~335 area codes for 331 million
/// people, one per ~1 million; each state gets at least one.
const PEOPLE_PER_AREA_CODE_K: f64 = 1_000.0;
/// Phones are `2000000 + (offset + k * PHONE_STRIDE) mod 8000000`: seven
/// digits, distinct for the first 8 million rows of an area code (the stride
/// is coprime with 8,000,000 = 2^9 * 5^6).
const PHONE_SPACE: u64 = 8_000_000;
const PHONE_STRIDE: u64 = 3_021_377;
/// A state's share of the rows is proportional to population^STATE_SKEW.
/// Most conflicts come from constraints inside a state (`State=`), so the
/// graph's weight grows with the sum of squared shares: 1.0 (true
/// populations, California 12 %) gives ~456 million edges at 10^6 rows after
/// RNoise α = 0.005, 0 (uniform, like the paper's sample) ~260 million; 0.7
/// (California 7.6 %, Wyoming 0.4 %) gives the paper's ~322 million.
const STATE_SKEW: f64 = 0.7;
/// Spread (log-normal σ) of salaries around a state's median.
const SALARY_SIGMA: f64 = 0.6;
/// Individual salary median as a share of the household median income.
const SALARY_SHARE: f64 = 0.65;

/// Options of [`generate_tax`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaxOptions {
    /// Rows to generate.
    pub rows: u64,
    /// Seed: the same seed gives the same bytes.
    pub seed: u64,
    /// Output format; `None` goes by the output's extension.
    pub format: Option<TableFormat>,
}

/// What [`generate_tax`] wrote.
#[derive(Debug, Clone, Serialize)]
pub struct GenerateStats {
    /// Always `tax`.
    pub generator: &'static str,
    /// The output file.
    pub out: PathBuf,
    /// Its format.
    pub format: TableFormat,
    /// Rows written.
    pub rows: u64,
    /// Columns written.
    pub columns: usize,
    /// The seed.
    pub seed: u64,
    /// States in the world (all may not occur in a small table).
    pub states: usize,
    /// Area codes in the world.
    pub area_codes: usize,
    /// ZIP codes in the world.
    pub zip_codes: usize,
    /// Cities in the world.
    pub cities: usize,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// A state's income tax, in integers so the rate is exact.
#[derive(Debug, Clone)]
enum Schedule {
    None,
    Flat(u64),
    /// Standard deduction, then `(lower bound, marginal basis points)` of
    /// each bracket, bounds increasing, rates non-decreasing.
    Progressive {
        deduction: u64,
        brackets: Vec<(u64, u64)>,
    },
}

impl Schedule {
    /// The average rate in percent, in units of 10^-4 %, rounded half up:
    /// `100 * tax(s) / s`. Non-decreasing in `salary` (see the module doc).
    fn rate_e4(&self, salary: u64) -> u64 {
        match self {
            Schedule::None => 0,
            // bp / 100 % = bp * 100 units of 10^-4 %.
            Schedule::Flat(bp) => bp * 100,
            Schedule::Progressive { deduction, brackets } => {
                if salary == 0 {
                    return 0;
                }
                let taxable = salary.saturating_sub(*deduction);
                // tax in dollars * basis points
                let mut tax: u128 = 0;
                for (i, &(lower, bp)) in brackets.iter().enumerate() {
                    let upper = brackets.get(i + 1).map_or(u64::MAX, |b| b.0);
                    if taxable > lower {
                        tax += u128::from(taxable.min(upper) - lower) * u128::from(bp);
                    }
                }
                // rate% * 10^4 = tax_bp / 10^4 / s * 100 * 10^4 = tax_bp * 100 / s
                let num = tax * 100;
                let s = u128::from(salary);
                ((2 * num + s) / (2 * s)) as u64
            }
        }
    }
}

/// `12345` → `1.2345`, `50000` → `5.0`, `0` → `0.0` (the Tax file's style).
fn write_rate(out: &mut String, e4: u64) {
    let _ = write!(out, "{}.", e4 / 10_000);
    let frac = format!("{:04}", e4 % 10_000);
    let frac = frac.trim_end_matches('0');
    out.push_str(if frac.is_empty() { "0" } else { frac });
}

struct StateModel {
    code: &'static str,
    /// Area codes of the state and the next phone counter of each.
    area_codes: Vec<u16>,
    phone_offsets: Vec<u64>,
    phone_next: Vec<u64>,
    /// ZIP codes, cumulative weights, and each one's city and home area code.
    zips: Vec<u32>,
    zip_cum: Vec<f64>,
    zip_city: Vec<u32>,
    zip_area: Vec<u16>,
    cities: Vec<String>,
    salary: LogNormal<f64>,
    schedule: Schedule,
    single_exemp: u32,
    married_exemp: u32,
    child_exemp: u32,
}

struct World {
    states: Vec<StateModel>,
    state_cum: Vec<f64>,
}

/// Index of the first cumulative weight above `u * total`.
pub(crate) fn pick(cum: &[f64], rng: &mut impl Rng) -> usize {
    let total = *cum.last().expect("non-empty weights");
    let u = rng.random::<f64>() * total;
    cum.partition_point(|&c| c <= u).min(cum.len() - 1)
}

/// Running sums of `weights`, for [`pick`].
pub(crate) fn cumulative(weights: impl IntoIterator<Item = f64>) -> Vec<f64> {
    let mut acc = 0.0;
    weights
        .into_iter()
        .map(|w| {
            acc += w;
            acc
        })
        .collect()
}

/// A made-up US-style city name (`MAPLEFORD`, `NORTH OAKDALE`).
pub(crate) fn city_name(rng: &mut impl Rng) -> String {
    let head = CITY_HEADS[rng.random_range(0..CITY_HEADS.len())];
    let mut tail = CITY_TAILS[rng.random_range(0..CITY_TAILS.len())];
    // MILL + LAND is MILLAND, not MILLLAND.
    if let (Some(last), Some(first)) = (head.chars().last(), tail.chars().next())
        && head.ends_with(&format!("{last}{last}"))
        && first == last
    {
        tail = &tail[first.len_utf8()..];
    }
    match rng.random_range(0..12) {
        0 => format!("NORTH {head}{tail}"),
        1 => format!("WEST {head}{tail}"),
        2 => format!("{head}{tail} CENTER"),
        _ => format!("{head}{tail}"),
    }
}

fn schedule(shape: TaxShape, rng: &mut impl Rng) -> Schedule {
    match shape {
        TaxShape::None => Schedule::None,
        TaxShape::Flat(bp) => Schedule::Flat(bp.into()),
        TaxShape::Progressive(top) => {
            let top = u64::from(top);
            let k: u64 = rng.random_range(3..=8);
            let first: f64 = rng.random_range(3_000.0..12_000.0);
            let last: f64 = rng.random_range(40_000.0..500_000.0);
            let deduction =
                if rng.random_bool(0.3) { 0 } else { rng.random_range(2..=30u64) * 500 };
            let brackets = (0..k)
                .map(|i| {
                    let lower = if i == 0 {
                        0
                    } else {
                        // Geometric from `first` to `last`, rounded to $100.
                        let t = (i - 1) as f64 / (k - 2) as f64;
                        (first * (last / first).powf(t) / 100.0).round() as u64 * 100
                    };
                    (lower, (top * (i + 1) / k).max(10))
                })
                .collect();
            Schedule::Progressive { deduction, brackets }
        }
    }
}

fn build_world(seed: u64) -> World {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let total_pop: f64 = STATES.iter().map(|s| f64::from(s.population_k)).sum();

    // Area codes: valid NANP codes (NXX, no N11, no N9X), shuffled, dealt to
    // states in proportion to population, so they never straddle two states.
    let mut npa: Vec<u16> =
        (200..1000u16).filter(|c| (c / 10) % 10 != 9 && c % 100 != 11).collect();
    npa.shuffle(&mut rng);
    let mut npa = npa.into_iter();

    let zip_weight = LogNormal::new(0.0, 1.0).expect("valid");
    let city_zips = LogNormal::new(0.0, 1.1).expect("valid");

    let states = STATES
        .iter()
        .map(|facts| {
            let share = f64::from(facts.population_k) / total_pop;
            let n_area =
                ((f64::from(facts.population_k) / PEOPLE_PER_AREA_CODE_K).round() as usize).max(1);
            let area_codes: Vec<u16> =
                (0..n_area).map(|_| npa.next().expect("712 codes suffice")).collect();
            let phone_offsets = (0..n_area).map(|_| rng.random_range(0..PHONE_SPACE)).collect();

            // ZIP codes: distinct 5-digit codes under the state's prefixes.
            let lo = facts.zip3.0 * 100;
            let span = (facts.zip3.1 + 1) * 100 - lo;
            let n_zip =
                ((ZIP_CODES * share).round() as usize).clamp(20, (f64::from(span) * 0.7) as usize);
            let mut zips: Vec<u32> = rand::seq::index::sample(&mut rng, span as usize, n_zip)
                .into_iter()
                .map(|i| lo + i as u32)
                .collect();
            zips.sort_unstable();
            let zip_cum = cumulative((0..n_zip).map(|_| zip_weight.sample(&mut rng)));

            // Cities: runs of neighbouring ZIP codes (a big city has many).
            let mut cities: Vec<String> = Vec::new();
            let mut seen = std::collections::HashSet::new();
            let mut zip_city = Vec::with_capacity(n_zip);
            while zip_city.len() < n_zip {
                let run: f64 = city_zips.sample(&mut rng);
                let run = (run.ceil() as usize).clamp(1, 60);
                let mut name = city_name(&mut rng);
                for _ in 0..8 {
                    if seen.insert(name.clone()) {
                        break;
                    }
                    name = city_name(&mut rng);
                }
                let id = cities.len() as u32;
                cities.push(name);
                for _ in 0..run.min(n_zip - zip_city.len()) {
                    zip_city.push(id);
                }
            }
            // Each ZIP code's home area code: contiguous ZIP ranges share one.
            let zip_area = (0..n_zip).map(|z| (z * n_area / n_zip) as u16).collect();

            let median = f64::from(facts.median_income_k) * 1000.0 * SALARY_SHARE;
            let salary = LogNormal::new(median.ln(), SALARY_SIGMA).expect("valid");
            let schedule = schedule(facts.tax, &mut rng);
            let (single_exemp, married_exemp, child_exemp) = match facts.tax {
                TaxShape::None => (0, 0, 0),
                _ => {
                    let single =
                        if rng.random_bool(0.2) { 0 } else { rng.random_range(10..=100u32) * 50 };
                    let married = if rng.random_bool(0.7) {
                        2 * single
                    } else {
                        rng.random_range(10..=200u32) * 50
                    };
                    let child =
                        if rng.random_bool(0.25) { 0 } else { rng.random_range(10..=80u32) * 50 };
                    (single, married, child)
                }
            };
            StateModel {
                code: facts.code,
                phone_next: vec![0; n_area],
                area_codes,
                phone_offsets,
                zips,
                zip_cum,
                zip_city,
                zip_area,
                cities,
                salary,
                schedule,
                single_exemp,
                married_exemp,
                child_exemp,
            }
        })
        .collect();
    let state_cum = cumulative(STATES.iter().map(|s| f64::from(s.population_k).powf(STATE_SKEW)));
    World { states, state_cum }
}

/// Generate a Tax-like table of `options.rows` rows into `out` (CSV with a
/// header row, or Parquet), streaming: constant memory, written to a
/// temporary file in `out`'s directory and renamed at the end.
///
/// The table satisfies every constraint of [`TAX_CONSTRAINTS`] (0 conflicts)
/// and is a deterministic function of the seed (ChaCha8: synthetic data, not
/// privacy noise).
pub fn generate_tax(options: &TaxOptions, out: &Path) -> Result<GenerateStats, GenerateError> {
    let start = Instant::now();
    let format = options.format.unwrap_or_else(|| TableFormat::from_path(out));
    let mut world = build_world(options.seed);
    // Rows come from their own stream, so the world does not depend on how
    // many rows are drawn and a longer table extends a shorter one.
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
    rng.set_stream(1);
    let surname_syllables = LogNormal::new(0.8, 0.3).expect("valid");

    let names: Vec<String> = TAX_COLUMNS.iter().map(|s| s.to_string()).collect();
    let mut writer = TableWriter::create(out, format, &names, &TAX_KINDS)?;
    let mut f: [String; 15] = Default::default();
    for _ in 0..options.rows {
        for s in &mut f {
            s.clear();
        }
        let st = &mut world.states[pick(&world.state_cum, &mut rng)];
        let z = pick(&st.zip_cum, &mut rng);
        // Most people have a phone of their home region; some moved.
        let area = if rng.random_bool(0.9) {
            usize::from(st.zip_area[z])
        } else {
            rng.random_range(0..st.area_codes.len())
        };
        let k = st.phone_next[area];
        if k >= PHONE_SPACE {
            return Err(GenerateError::Option(format!(
                "more than {PHONE_SPACE} rows in area code {} of {}: too many rows for distinct \
                 7-digit phones",
                st.area_codes[area], st.code
            )));
        }
        st.phone_next[area] += 1;
        let phone = 2_000_000 + (st.phone_offsets[area] + k * PHONE_STRIDE) % PHONE_SPACE;

        let male = rng.random_bool(0.5);
        let first = if male { MALE } else { FEMALE };
        f[0].push_str(first[rng.random_range(0..first.len())]);
        if rng.random_bool(0.5) {
            f[1].push_str(SURNAMES[rng.random_range(0..SURNAMES.len())]);
        } else {
            let n: f64 = surname_syllables.sample(&mut rng);
            let n = (n.round() as usize).clamp(2, 4);
            for i in 0..n {
                let syl = SYLLABLES[rng.random_range(0..SYLLABLES.len())];
                if i == 0 {
                    let mut c = syl.chars();
                    if let Some(h) = c.next() {
                        f[1].extend(h.to_uppercase());
                        f[1].push_str(c.as_str());
                    }
                } else {
                    f[1].push_str(syl);
                }
            }
        }
        f[2].push_str(if male { "M" } else { "F" });
        let _ = write!(f[3], "{}", st.area_codes[area]);
        let _ = write!(f[4], "{phone}");
        f[5].push_str(&st.cities[st.zip_city[z] as usize]);
        f[6].push_str(st.code);
        let _ = write!(f[7], "{}", st.zips[z]);
        let married = rng.random_bool(0.5);
        let child = rng.random_bool(if married { 0.6 } else { 0.3 });
        f[8].push_str(if married { "M" } else { "S" });
        f[9].push_str(if child { "Y" } else { "N" });
        // Salaries in steps of $500, like the Tax file.
        let salary = ((st.salary.sample(&mut rng) / 500.0).round() as u64).clamp(1, 4_000) * 500;
        let _ = write!(f[10], "{salary}");
        write_rate(&mut f[11], st.schedule.rate_e4(salary));
        let _ = write!(f[12], "{}", if married { 0 } else { st.single_exemp });
        let _ = write!(f[13], "{}", if married { st.married_exemp } else { 0 });
        let _ = write!(f[14], "{}", if child { st.child_exemp } else { 0 });

        let row: [Option<&str>; 15] = std::array::from_fn(|i| Some(f[i].as_str()));
        writer.write_row(&row)?;
    }
    let rows = writer.finish()?;
    Ok(GenerateStats {
        generator: "tax",
        out: out.to_path_buf(),
        format,
        rows,
        columns: TAX_COLUMNS.len(),
        seed: options.seed,
        states: world.states.len(),
        area_codes: world.states.iter().map(|s| s.area_codes.len()).sum(),
        zip_codes: world.states.iter().map(|s| s.zips.len()).sum(),
        cities: world.states.iter().map(|s| s.cities.len()).sum(),
        seconds: start.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_non_decreasing_in_salary() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for facts in STATES {
            let sched = schedule(facts.tax, &mut rng);
            let mut prev = 0;
            for s in (500..=2_000_000).step_by(500) {
                let r = sched.rate_e4(s);
                assert!(r >= prev, "{}: rate({s}) = {r} < {prev}", facts.code);
                prev = r;
            }
        }
    }

    #[test]
    fn rate_style() {
        let mut s = String::new();
        for (e4, want) in [(0, "0.0"), (50_000, "5.0"), (49_500, "4.95"), (12_345, "1.2345")] {
            s.clear();
            write_rate(&mut s, e4);
            assert_eq!(s, want);
        }
    }

    #[test]
    fn world_is_consistent() {
        let world = build_world(11);
        let mut codes = std::collections::HashSet::new();
        let mut zips = std::collections::HashSet::new();
        for st in &world.states {
            for &a in &st.area_codes {
                assert!(codes.insert(a), "area code {a} in two states");
            }
            for &z in &st.zips {
                assert!(zips.insert(z), "zip {z} twice");
            }
            assert_eq!(st.zip_city.len(), st.zips.len());
            assert!(st.zip_area.iter().all(|&a| usize::from(a) < st.area_codes.len()));
        }
        assert_eq!(world.states.len(), 52);
    }
}
