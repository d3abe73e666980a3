//! A year of nightly versions of one table, for replaying a nightly audit:
//! an orders table under three FDs ([`NIGHTLY_CONSTRAINTS`]) that drifts
//! slowly, whose errors grow slowly, with one-night bursts of violations.
//!
//! The table is held in memory (a few dozen bytes a row) and evolved night
//! by night; each night is written whole as `night-NNN.csv`:
//!
//! 1. **Drift**: from the second night on, `drift × rows` random rows are
//!    replaced by fresh, correct orders (new order ids): old orders leave,
//!    new ones arrive, and a wrong row replaced is an error gone.
//! 2. **Trend**: the rows holding a wrong cell are brought to
//!    `round(rows × rate)`, the rate moving linearly from `error_start` on
//!    the first night to `error_end` on the last, by giving random correct
//!    rows one wrong cell (RNoise-like: a random constrained column, another
//!    value of its domain or a typo). Wrong cells persist until their row is
//!    rewritten, so the violations grow slowly and each night is close to
//!    the one before.
//! 3. **Burst**: on a burst night, `burst_rows` more correct rows get a
//!    wrong cell in that night's file only; the table carried to the next
//!    night does not keep them, so the next night is back on trend.
//!
//! Every wrong cell violates an FD against the correct rows of its group
//! (see `World::fault`), and the correct rows satisfy all three, so
//! deleting the wrong rows repairs the table: I_R ≤ `wrong_rows` of the
//! night, with equality unless some group's wrong rows outnumber its
//! correct ones. Each wrong row has tens of conflicts (the groups hold ~25
//! and ~40 rows), so on a burst night I_R rises by about `burst_rows`, and
//! I_P and I_MI by tens of times as much.
//!
//! `nights.json` holds the design and each night's ground truth
//! ([`NightTruth`]). Everything is a function of the seed (ChaCha8: the
//! world on stream 0, drift and trend on stream 1, night `k`'s burst on
//! stream `2 + k`, so adding or removing a burst changes that night only).

mod world;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::table::{Kind, TableFormat, TableWriter};
use crate::{GenerateError, OutputFile};
use world::{COLUMNS, Fault, Row, World};

/// The constraints of the nightly orders table: a ZIP code lies in one city
/// and one state, and a product has one price.
pub const NIGHTLY_CONSTRAINTS: &str = "zip -> city\nzip -> state\nsku -> unit_price\n";

/// The nightly table's columns with their types, as an audit suite's
/// `schema` (and `run --schema`) declares them.
pub const NIGHTLY_SCHEMA: &str = "order_id:int, customer:int, zip:int, city:string, \
                                  state:string, sku:string, unit_price:float, quantity:int";

/// The name of the constraint file in the output directory.
pub const NIGHTLY_CONSTRAINT_FILE: &str = "orders.dcs";

const KINDS: [Kind; 8] =
    [Kind::Int, Kind::Int, Kind::Int, Kind::Str, Kind::Str, Kind::Str, Kind::Float, Kind::Int];

/// Options of [`generate_nightly`].
#[derive(Debug, Clone, PartialEq)]
pub struct NightlyOptions {
    /// Rows of every night's table (default 10,000).
    pub rows: u64,
    /// Nights to write (default 365).
    pub nights: u32,
    /// Share of the rows replaced by fresh orders each night (default
    /// 0.005: 50 of 10,000).
    pub drift: f64,
    /// Share of the rows with a wrong cell on the first night (default
    /// 0.005).
    pub error_start: f64,
    /// ... and on the last night, linearly in between (default 0.01).
    pub error_end: f64,
    /// Nights (1-based) with a burst of violations.
    pub bursts: Vec<u32>,
    /// Rows given a wrong cell on a burst night, on top of the trend;
    /// `None` is 2% of the rows.
    pub burst_rows: Option<u64>,
    /// Seed: the same seed gives the same bytes.
    pub seed: u64,
}

impl Default for NightlyOptions {
    fn default() -> Self {
        NightlyOptions {
            rows: 10_000,
            nights: 365,
            drift: 0.005,
            error_start: 0.005,
            error_end: 0.01,
            bursts: Vec::new(),
            burst_rows: None,
            seed: 0,
        }
    }
}

/// One night's ground truth, as the generator made it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NightTruth {
    /// 1-based.
    pub night: u32,
    /// Its file, in the output directory.
    pub file: String,
    /// Whether it is a burst night.
    pub burst: bool,
    /// Rows replaced by fresh orders before this night (0 on the first).
    pub rewritten: u64,
    /// Wrong rows gone since the night before (rewritten, or repaired to
    /// follow a falling trend).
    pub errors_cleared: u64,
    /// Rows given a lasting wrong cell this night.
    pub errors_added: u64,
    /// Rows with a lasting wrong cell: the trend, `round(rows × rate)`.
    pub error_rows: u64,
    /// Rows with this night's burst wrong cell (0 on a quiet night).
    pub burst_rows: u64,
    /// `error_rows + burst_rows`: rows whose deletion repairs the table, an
    /// upper bound on I_R.
    pub wrong_rows: u64,
    /// `wrong_rows` by the column holding the wrong cell.
    pub wrong_by_column: BTreeMap<&'static str, u64>,
}

/// What [`generate_nightly`] wrote.
#[derive(Debug, Clone, Serialize)]
pub struct NightlyStats {
    /// Always `nightly`.
    pub generator: &'static str,
    /// The output directory.
    pub dir: PathBuf,
    /// The constraint file ([`NIGHTLY_CONSTRAINTS`]).
    pub constraints: PathBuf,
    /// The ground truth file, `nights.json`: these statistics and every
    /// night's [`NightTruth`].
    pub truth: PathBuf,
    /// The table's columns and types ([`NIGHTLY_SCHEMA`]).
    pub schema: &'static str,
    /// Rows of every night.
    pub rows: u64,
    /// Nights written.
    pub nights: u32,
    /// The seed.
    pub seed: u64,
    /// Share of the rows rewritten each night.
    pub drift: f64,
    /// Share of wrong rows on the first night.
    pub error_start: f64,
    /// Share of wrong rows on the last night.
    pub error_end: f64,
    /// Burst nights, sorted.
    pub bursts: Vec<u32>,
    /// Rows made wrong on each burst night.
    pub burst_rows: u64,
    /// ZIP codes in the world (the `zip` groups).
    pub zip_codes: usize,
    /// Cities.
    pub cities: usize,
    /// Products in the world (the `sku` groups).
    pub skus: usize,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Every night's truth (in `nights.json`, not in this summary).
    #[serde(skip)]
    pub per_night: Vec<NightTruth>,
}

/// `nights.json`: the summary and the nights.
#[derive(Serialize)]
struct TruthFile<'a> {
    #[serde(flatten)]
    stats: &'a NightlyStats,
    nights: &'a [NightTruth],
}

/// The file name of `night` among `nights`: `night-001.csv`, zero-padded to
/// three digits or as many as the last night has.
pub fn night_file(night: u32, nights: u32) -> String {
    let width = nights.to_string().len().max(3);
    format!("night-{night:0width$}.csv")
}

impl NightlyOptions {
    fn burst_rows(&self) -> u64 {
        self.burst_rows.unwrap_or(self.rows / 50)
    }

    /// The trend's wrong rows on `night`.
    fn target(&self, night: u32) -> u64 {
        let t =
            if self.nights > 1 { f64::from(night - 1) / f64::from(self.nights - 1) } else { 0.0 };
        let rate = self.error_start + (self.error_end - self.error_start) * t;
        (self.rows as f64 * rate).round() as u64
    }

    fn check(&self) -> Result<(), GenerateError> {
        let bad = |m: String| Err(GenerateError::Option(m));
        if self.rows < 100 || self.rows > u64::from(u32::MAX) {
            return bad(format!("rows = {}: between 100 and {}", self.rows, u32::MAX));
        }
        if self.nights == 0 {
            return bad("nights = 0: at least one night".into());
        }
        for (name, v) in [
            ("drift", self.drift),
            ("error-start", self.error_start),
            ("error-end", self.error_end),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return bad(format!("{name} = {v}: a share of the rows, between 0 and 1"));
            }
        }
        if let Some(&b) = self.bursts.iter().find(|&&b| b == 0 || b > self.nights) {
            return bad(format!("burst night {b} is not one of the nights 1..={}", self.nights));
        }
        // Wrong rows are drawn among the correct ones by rejection: keep
        // most rows correct (and every group's majority, mostly).
        let worst = self.target(1).max(self.target(self.nights)) + self.burst_rows();
        if worst > self.rows / 4 {
            return bad(format!(
                "{worst} wrong rows on the worst night (trend and burst) of {}: at most a quarter",
                self.rows
            ));
        }
        Ok(())
    }
}

/// A random row index whose row `keep` accepts, by rejection. Drawing a
/// correct row takes under 4/3 tries on average ([`NightlyOptions`] keeps
/// wrong rows under a quarter); drawing a wrong one (only when a falling
/// trend repairs rows) about rows / wrong rows tries, still cheap next to
/// writing the night.
fn draw_row(rows: &[Row], rng: &mut impl Rng, keep: impl Fn(&Row) -> bool) -> usize {
    loop {
        let i = rng.random_range(0..rows.len());
        if keep(&rows[i]) {
            return i;
        }
    }
}

/// Write `options.nights` nightly versions of the orders table into `dir`
/// (created if missing): `night-001.csv` …, [`NIGHTLY_CONSTRAINT_FILE`] and
/// `nights.json`, each whole or not at all ([`OutputFile`]).
pub fn generate_nightly(
    options: &NightlyOptions,
    dir: &Path,
) -> Result<NightlyStats, GenerateError> {
    let start = Instant::now();
    options.check()?;
    std::fs::create_dir_all(dir)
        .map_err(|source| GenerateError::Write { path: dir.into(), source })?;
    let constraints = dir.join(NIGHTLY_CONSTRAINT_FILE);
    crate::write_constraint_file(&constraints, NIGHTLY_CONSTRAINTS)?;

    let mut world = World::draw(options.rows, options.seed);
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
    rng.set_stream(1);
    let mut table: Vec<Row> = (0..options.rows).map(|_| world.fresh(&mut rng)).collect();
    let mut errors = 0u64;
    let mut bursts = options.bursts.clone();
    bursts.sort_unstable();
    bursts.dedup();
    let names: Vec<String> = COLUMNS.iter().map(|c| c.to_string()).collect();
    let mut cells: [String; 8] = Default::default();
    let mut per_night = Vec::with_capacity(options.nights as usize);
    for night in 1..=options.nights {
        let mut cleared = 0;
        let rewritten =
            if night > 1 { (options.drift * options.rows as f64).round() as u64 } else { 0 };
        for i in rand::seq::index::sample(&mut rng, table.len(), rewritten as usize) {
            cleared += u64::from(table[i].fault.is_some());
            table[i] = world.fresh(&mut rng);
        }
        errors -= cleared;
        let target = options.target(night);
        let mut added = 0;
        while errors < target {
            let i = draw_row(&table, &mut rng, |r| r.fault.is_none());
            table[i].fault = Some(world.fault(&table[i], &mut rng));
            errors += 1;
            added += 1;
        }
        while errors > target {
            let i = draw_row(&table, &mut rng, |r| r.fault.is_some());
            table[i].fault = None;
            errors -= 1;
            cleared += 1;
        }

        // This night's burst: wrong cells on correct rows, in the file only,
        // drawn from the night's own stream so that the other nights are
        // byte for byte those of the same year without this burst.
        let burst = bursts.binary_search(&night).is_ok();
        let mut overlay: BTreeMap<usize, Fault> = BTreeMap::new();
        if burst {
            let mut burst_rng = ChaCha8Rng::seed_from_u64(options.seed);
            burst_rng.set_stream(2 + u64::from(night));
            while (overlay.len() as u64) < options.burst_rows() {
                let i = draw_row(&table, &mut burst_rng, |r| r.fault.is_none());
                if let std::collections::btree_map::Entry::Vacant(e) = overlay.entry(i) {
                    e.insert(world.fault(&table[i], &mut burst_rng));
                }
            }
        }

        let file = night_file(night, options.nights);
        let mut writer = TableWriter::create(&dir.join(&file), TableFormat::Csv, &names, &KINDS)?;
        let mut wrong_by_column: BTreeMap<&'static str, u64> =
            world::CONSTRAINED.iter().map(|&c| (COLUMNS[c], 0)).collect();
        for (i, row) in table.iter().enumerate() {
            let fault = overlay.get(&i);
            if let Some(f) = fault.or(row.fault.as_ref()) {
                *wrong_by_column.get_mut(COLUMNS[f.column]).expect("constrained") += 1;
            }
            world.cells(row, fault, &mut cells);
            let row: [Option<&str>; 8] = std::array::from_fn(|c| Some(cells[c].as_str()));
            writer.write_row(&row)?;
        }
        writer.finish()?;
        let burst_rows = overlay.len() as u64;
        per_night.push(NightTruth {
            night,
            file,
            burst,
            rewritten,
            errors_cleared: cleared,
            errors_added: added,
            error_rows: errors,
            burst_rows,
            wrong_rows: errors + burst_rows,
            wrong_by_column,
        });
    }

    let (zip_codes, cities, skus) = world.sizes();
    let truth = dir.join("nights.json");
    let stats = NightlyStats {
        generator: "nightly",
        dir: dir.into(),
        constraints,
        truth: truth.clone(),
        schema: NIGHTLY_SCHEMA,
        rows: options.rows,
        nights: options.nights,
        seed: options.seed,
        drift: options.drift,
        error_start: options.error_start,
        error_end: options.error_end,
        bursts,
        burst_rows: options.burst_rows(),
        zip_codes,
        cities,
        skus,
        seconds: start.elapsed().as_secs_f64(),
        per_night,
    };
    write_truth(&truth, &stats)?;
    Ok(stats)
}

fn write_truth(path: &Path, stats: &NightlyStats) -> Result<(), GenerateError> {
    use std::io::Write as _;
    let write_err = |source| GenerateError::Write { path: path.into(), source };
    let mut out = OutputFile::create(path).map_err(write_err)?;
    let file = TruthFile { stats, nights: &stats.per_night };
    serde_json::to_writer_pretty(&mut out, &file).map_err(|e| write_err(e.into()))?;
    out.write_all(b"\n").map_err(write_err)?;
    out.commit().map_err(write_err)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn year(bursts: Vec<u32>, seed: u64, dir: &Path) -> NightlyStats {
        let options = NightlyOptions {
            rows: 2_000,
            nights: 12,
            drift: 0.01,
            error_start: 0.01,
            error_end: 0.02,
            bursts,
            burst_rows: Some(60),
            seed,
        };
        generate_nightly(&options, dir).unwrap()
    }

    fn read(path: &Path) -> Vec<Vec<String>> {
        let mut reader = csv::Reader::from_path(path).unwrap();
        assert_eq!(reader.headers().unwrap().iter().collect::<Vec<_>>(), COLUMNS);
        reader.records().map(|r| r.unwrap().iter().map(str::to_string).collect()).collect()
    }

    /// Rows whose right-hand side is not the most frequent of their group
    /// under some FD, read from the file alone: deleting them repairs the
    /// table, so they bound I_R, and they are the wrong rows as long as
    /// every group keeps a correct majority.
    fn off_majority(rows: &[Vec<String>]) -> usize {
        let mut off = vec![false; rows.len()];
        for (lhs, rhs) in
            [(world::ZIP, world::CITY), (world::ZIP, world::STATE), (world::SKU, world::PRICE)]
        {
            let mut counts: HashMap<(&str, &str), usize> = HashMap::new();
            for r in rows {
                *counts.entry((&r[lhs], &r[rhs])).or_default() += 1;
            }
            let mut best: HashMap<&str, (&str, usize)> = HashMap::new();
            for (&(l, r), &n) in &counts {
                let b = best.entry(l).or_insert((r, n));
                if n > b.1 || (n == b.1 && r < b.0) {
                    *b = (r, n);
                }
            }
            for (i, r) in rows.iter().enumerate() {
                off[i] |= best[r[lhs].as_str()].0 != r[rhs];
            }
        }
        off.iter().filter(|&&o| o).count()
    }

    #[test]
    fn same_seed_same_bytes() {
        let (a, b, c) = (
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
        );
        let sa = year(vec![4], 7, a.path());
        let sb = year(vec![4], 7, b.path());
        year(vec![4], 8, c.path());
        assert_eq!(sa.per_night, sb.per_night);
        for t in &sa.per_night {
            let bytes = |d: &Path| std::fs::read(d.join(&t.file)).unwrap();
            assert_eq!(bytes(a.path()), bytes(b.path()), "{}", t.file);
            assert_ne!(bytes(a.path()), bytes(c.path()), "{}", t.file);
        }
        assert_eq!(
            std::fs::read_to_string(a.path().join(NIGHTLY_CONSTRAINT_FILE)).unwrap(),
            NIGHTLY_CONSTRAINTS
        );
        let truth: serde_json::Value =
            serde_json::from_slice(&std::fs::read(a.path().join("nights.json")).unwrap()).unwrap();
        assert_eq!(truth["nights"].as_array().unwrap().len(), 12);
        assert_eq!(truth["nights"][3]["burst"], true);
        assert_eq!(truth["bursts"], serde_json::json!([4]));
        assert_eq!(night_file(7, 365), "night-007.csv");
        assert_eq!(night_file(7, 1000), "night-0007.csv");
    }

    /// A burst night has its trend's wrong rows plus the burst's, read back
    /// from the file; the nights around it are on trend; and they are the
    /// very files of the same year without the burst.
    #[test]
    fn a_burst_is_one_night() {
        let (with, without) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let stats = year(vec![6], 3, with.path());
        let quiet = year(vec![], 3, without.path());
        for (t, q) in stats.per_night.iter().zip(&quiet.per_night) {
            let (a, b) = (read(&with.path().join(&t.file)), read(&without.path().join(&q.file)));
            assert_eq!(t.burst, t.night == 6);
            if t.burst {
                assert_eq!(t.burst_rows, 60);
                assert_eq!(t.wrong_rows, q.wrong_rows + 60);
                let changed = a.iter().zip(&b).filter(|(x, y)| x != y).count();
                assert_eq!(changed, 60, "the burst touches its rows only");
            } else {
                assert_eq!(a, b, "night {}", t.night);
                assert_eq!(t, q);
            }
            let off = off_majority(&a) as u64;
            assert!(
                off <= t.wrong_rows && off + 3 >= t.wrong_rows,
                "night {}: {off} vs {t:?}",
                t.night
            );
        }
        let off =
            |n: usize| off_majority(&read(&with.path().join(&stats.per_night[n].file))) as i64;
        let (before, on, after) = (off(4), off(5), off(6));
        assert!(on - before >= 55 && on - after >= 55, "{before} {on} {after}");
        assert!((after - before).abs() <= 10, "{before} {after}: back on trend");
    }

    /// Each night rewrites `drift × rows` rows (new order ids, in place) and
    /// changes no other row but those given or relieved of a wrong cell; the
    /// wrong rows follow the linear trend.
    #[test]
    fn drift_is_bounded_and_the_trend_linear() {
        let dir = tempfile::tempdir().unwrap();
        let stats = year(vec![], 5, dir.path());
        let nights: Vec<Vec<Vec<String>>> =
            stats.per_night.iter().map(|t| read(&dir.path().join(&t.file))).collect();
        for (k, t) in stats.per_night.iter().enumerate() {
            assert_eq!(t.error_rows, (2_000.0 * (0.01 + 0.01 * k as f64 / 11.0)).round() as u64);
            assert_eq!(t.wrong_by_column.values().sum::<u64>(), t.wrong_rows);
            if k == 0 {
                assert_eq!((t.rewritten, t.errors_cleared, t.errors_added), (0, 0, 20));
                continue;
            }
            assert_eq!(t.rewritten, 20);
            let (a, b) = (&nights[k - 1], &nights[k]);
            let new_ids = a.iter().zip(b).filter(|(x, y)| x[0] != y[0]).count() as u64;
            let changed = a.iter().zip(b).filter(|(x, y)| x != y).count() as u64;
            assert_eq!(new_ids, t.rewritten);
            assert!(changed <= t.rewritten + t.errors_added + t.errors_cleared, "{changed} {t:?}");
            assert_eq!(
                stats.per_night[k - 1].error_rows + t.errors_added - t.errors_cleared,
                t.error_rows
            );
        }
    }

    /// A falling trend repairs random wrong rows: the files follow it.
    #[test]
    fn a_falling_trend_is_followed() {
        let dir = tempfile::tempdir().unwrap();
        let options = NightlyOptions {
            rows: 1_000,
            nights: 5,
            error_start: 0.04,
            error_end: 0.0,
            seed: 2,
            ..NightlyOptions::default()
        };
        let stats = generate_nightly(&options, dir.path()).unwrap();
        let wrong: Vec<u64> = stats.per_night.iter().map(|t| t.wrong_rows).collect();
        assert_eq!(wrong, [40, 30, 20, 10, 0]);
        for t in &stats.per_night {
            let off = off_majority(&read(&dir.path().join(&t.file))) as u64;
            assert!(off <= t.wrong_rows && off + 2 >= t.wrong_rows, "{off} {t:?}");
        }
        assert!(stats.per_night[1..].iter().all(|t| t.errors_cleared >= 10 && t.errors_added == 0));
    }

    #[test]
    fn bad_options_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let refuse = |o: NightlyOptions| generate_nightly(&o, dir.path()).unwrap_err().to_string();
        let d = NightlyOptions::default;
        assert!(refuse(NightlyOptions { bursts: vec![366], ..d() }).contains("burst night 366"));
        assert!(refuse(NightlyOptions { drift: 1.5, ..d() }).contains("drift = 1.5"));
        assert!(
            refuse(NightlyOptions { burst_rows: Some(3_000), ..d() }).contains("at most a quarter")
        );
        assert!(refuse(NightlyOptions { nights: 0, ..d() }).contains("nights = 0"));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing written");
    }
}
