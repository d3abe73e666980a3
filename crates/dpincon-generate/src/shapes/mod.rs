//! Hard conflict-graph shapes: tables whose conflict graphs have the shapes
//! real warehouses have, for experiments on the accuracy and interval
//! coverage of DP releases of I_MI, I_P and I_R.
//!
//! The Tax table with RNoise gives one kind of graph (dense, every error
//! touching a state-sized group). Real tables also give graphs that stress a
//! release differently, and each shape here isolates one of them:
//!
//! - [`Shape::Hubs`]: a few rows conflict with thousands of others (a wrong
//!   description under a frequent offense code). The maximum degree is large
//!   while the counts are small, so any release whose noise scales with the
//!   degree bound is tested at its worst.
//! - [`Shape::Cliques`]: duplicated keys, each a clique (or complete
//!   multipartite graph). I_R is far below I_P here, unlike in stars.
//! - [`Shape::Sparse`]: many small groups, a few errors each: small counts,
//!   degrees of tens; relative noise is largest.
//! - [`Shape::Mixed`]: hubs and sparse errors in one table, so a degree bound
//!   chosen for one part is wrong for the other.
//! - [`Shape::Order`]: a DC with no equality predicate, whose degree has no
//!   public bound (no group caps it), plus an FD for contrast.
//!
//! Every shape is written as one table (CSV or Parquet, through the crate's
//! [`TableWriter`]: temporary file, renamed when complete) and one constraint
//! file. Everything is a function of the seed (ChaCha8: synthetic data, not
//! privacy noise). Violations are injected so that the FDs' majority values
//! stay correct, which keeps the number of injected rows checkable from the
//! table alone (the tests do so).

mod cliques;
mod fds;
mod names;
mod order;

use std::path::PathBuf;
use std::time::Instant;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::GenerateError;
use crate::table::{Kind, TableFormat, TableWriter};

/// A conflict-graph shape (see the module documentation of each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Shape {
    /// NYPD-like near-FDs `code -> description`, `precinct -> borough` on
    /// Zipf-sized groups; each violation is a star of degree ≈ its group
    /// size (the largest groups hold ~10% of the rows).
    Hubs,
    /// Bibliographic duplicated keys (`key -> title, year, venue`): each
    /// duplicated key is a clique of 2–12 copies, rarely up to 30.
    Cliques,
    /// `zip -> city`, `zip -> state` over zip groups of 5–40 rows with 2% of
    /// the rows given a wrong city.
    Sparse,
    /// [`Shape::Hubs`] and [`Shape::Sparse`] in one table, all four FDs.
    Mixed,
    /// `not(t1.gain>t2.gain&t1.loss<t2.loss)` on a nearly monotone
    /// gain/loss, plus the FD `desk -> region`.
    Order,
}

impl Shape {
    /// Every shape, in documentation order.
    pub const ALL: [Shape; 5] =
        [Shape::Hubs, Shape::Cliques, Shape::Sparse, Shape::Mixed, Shape::Order];

    /// The shape's name, as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Hubs => "hubs",
            Shape::Cliques => "cliques",
            Shape::Sparse => "sparse",
            Shape::Mixed => "mixed",
            Shape::Order => "order",
        }
    }

    /// The row count used when none is given: large enough for the shape to
    /// show (hubs need thousands of rows per group), small enough for the
    /// exact measures to be computed quickly.
    pub fn default_rows(self) -> u64 {
        match self {
            Shape::Hubs | Shape::Mixed => 20_000,
            Shape::Cliques => 1_000,
            Shape::Sparse => 2_400,
            Shape::Order => 2_000,
        }
    }

    /// The violations used when none are given, for a table of `rows` rows:
    /// 9 stars (hubs); `rows / 80` duplicated keys, about 5% of the rows at
    /// ~4 copies each (cliques); 2% of the rows (sparse); both (mixed: 9 +
    /// 2%); 1% of the rows out of order (order).
    pub fn default_violations(self, rows: u64) -> u64 {
        match self {
            Shape::Hubs => fds::HUB_VIOLATIONS,
            Shape::Cliques => rows / 80,
            Shape::Sparse => rows / 50,
            Shape::Mixed => fds::HUB_VIOLATIONS + rows / 50,
            Shape::Order => rows / 100,
        }
    }

    /// The shape's constraint file: FDs as `X -> Y` lines, DCs in NADEEF
    /// form.
    pub fn constraints(self) -> &'static str {
        match self {
            Shape::Hubs => fds::HUBS_CONSTRAINTS,
            Shape::Cliques => cliques::CONSTRAINTS,
            Shape::Sparse => fds::SPARSE_CONSTRAINTS,
            Shape::Mixed => fds::MIXED_CONSTRAINTS,
            Shape::Order => order::CONSTRAINTS,
        }
    }

    /// The table's columns and their Parquet types.
    fn columns(self) -> (&'static [&'static str], &'static [Kind]) {
        match self {
            Shape::Hubs => (fds::HUBS_COLUMNS, &fds::HUBS_KINDS),
            Shape::Cliques => (&cliques::COLUMNS, &cliques::KINDS),
            Shape::Sparse => (fds::SPARSE_COLUMNS, &fds::SPARSE_KINDS),
            Shape::Mixed => (fds::MIXED_COLUMNS, &fds::MIXED_KINDS),
            Shape::Order => (&order::COLUMNS, &order::KINDS),
        }
    }
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The knobs of the shapes beyond rows and violations, for the training
/// suite ([`crate::suite`]) to vary; [`ShapeParams::default`] is what
/// `generate shapes` uses, so its tables stay byte for byte as they were.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ShapeParams {
    /// Zipf exponent of the offense codes' group sizes (hubs, mixed).
    pub code_zipf: f64,
    /// Hub violations go round-robin over this many of the largest groups.
    pub stars: usize,
    /// In `mixed`, the first this many violations are hub stars.
    pub hub_violations: u64,
    /// Zip group sizes, uniform in `zip_min..=zip_max` (sparse, mixed).
    pub zip_min: usize,
    /// See `zip_min`.
    pub zip_max: usize,
    /// Copies of a duplicated key beyond two: geometric with this success
    /// probability (cliques; smaller means larger cliques).
    pub clique_p: f64,
    /// Share of duplicated keys with 13–30 copies (cliques).
    pub clique_tail: f64,
    /// `order`'s DC compares rows of the same desk only.
    pub order_by_desk: bool,
}

impl Default for ShapeParams {
    fn default() -> Self {
        ShapeParams {
            code_zipf: fds::CODE_ZIPF,
            stars: fds::STARS,
            hub_violations: fds::HUB_VIOLATIONS,
            zip_min: fds::ZIP_MIN,
            zip_max: fds::ZIP_MAX,
            clique_p: cliques::GEOMETRIC_P,
            clique_tail: cliques::TAIL_SHARE,
            order_by_desk: false,
        }
    }
}

impl ShapeParams {
    /// The constraint file of `shape` under these parameters.
    pub(crate) fn constraints(&self, shape: Shape) -> &'static str {
        match shape {
            Shape::Order if self.order_by_desk => order::CONSTRAINTS_BY_DESK,
            _ => shape.constraints(),
        }
    }
}

/// Options of [`generate_shape`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeOptions {
    /// The shape.
    pub shape: Shape,
    /// Rows to generate; `None` is [`Shape::default_rows`].
    pub rows: Option<u64>,
    /// Violations to inject, counted as the shape counts them (rows with a
    /// wrong value, duplicated keys for `cliques`, rows out of order for
    /// `order`); `None` is [`Shape::default_violations`].
    pub violations: Option<u64>,
    /// Seed: the same seed gives the same bytes.
    pub seed: u64,
    /// The table to write.
    pub out: PathBuf,
    /// Output format; `None` goes by the extension of `out`.
    pub format: Option<TableFormat>,
    /// Where to write [`Shape::constraints`]; `None` writes no constraint
    /// file.
    pub constraints_out: Option<PathBuf>,
}

/// What [`generate_shape`] wrote.
#[derive(Debug, Clone, Serialize)]
pub struct ShapeStats {
    /// Always `shapes`.
    pub generator: &'static str,
    /// The shape.
    pub shape: Shape,
    /// The table.
    pub out: PathBuf,
    /// Its format.
    pub format: TableFormat,
    /// The constraint file, if one was written.
    pub constraints_out: Option<PathBuf>,
    /// Rows written.
    pub rows: u64,
    /// Columns written.
    pub columns: usize,
    /// The seed.
    pub seed: u64,
    /// Violations injected, as [`ShapeOptions::violations`] counts them.
    pub violations: u64,
    /// Rows made to violate a constraint: rows given a wrong value (hubs,
    /// sparse, mixed), rows moved out of order (order), every copy of a
    /// duplicated key (cliques: each copy conflicts with another copy).
    pub violating_rows: u64,
    /// The largest group of rows that agree on an FD's left-hand side (for
    /// `cliques`, the most copies of one key; for `order`, the largest
    /// `desk`, since the order DC has no groups): the degree bound an
    /// equality-based release would see.
    pub largest_group: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// A table with its violations placed, ready to write.
enum Drawn {
    Fds(fds::FdTable),
    Cliques(cliques::Cliques),
    Order(order::Order),
}

/// What a shape's writer reports back.
struct Outcome {
    violating_rows: u64,
    largest_group: u64,
}

/// Generate the table of `options.shape` into `options.out` and, if asked,
/// its constraint file into `options.constraints_out`.
///
/// Each output is written to a temporary file next to it and renamed when
/// complete. Violations that cannot be placed (too many for the rows: an FD
/// group of `s` rows takes at most `(s - 1) / 2` wrong values, so that its
/// majority value stays the correct one) are an error before anything is
/// written.
pub fn generate_shape(options: &ShapeOptions) -> Result<ShapeStats, GenerateError> {
    generate_shape_with(options, &ShapeParams::default())
}

/// [`generate_shape`] with the shape's knobs set (the training suite's).
pub(crate) fn generate_shape_with(
    options: &ShapeOptions,
    params: &ShapeParams,
) -> Result<ShapeStats, GenerateError> {
    let start = Instant::now();
    let shape = options.shape;
    let rows = options.rows.unwrap_or_else(|| shape.default_rows());
    let violations = options.violations.unwrap_or_else(|| shape.default_violations(rows));
    // Row indexes are u32 to keep per-row state small.
    let n = u32::try_from(rows).map_err(|_| {
        GenerateError::Option(format!("{rows} rows: at most {} rows per table", u32::MAX))
    })?;
    if options.constraints_out.as_deref() == Some(options.out.as_path()) {
        return Err(GenerateError::Option(format!(
            "the table and the constraint file are both '{}'",
            options.out.display()
        )));
    }
    let format = options.format.unwrap_or_else(|| TableFormat::from_path(&options.out));
    let (columns, kinds) = shape.columns();
    let names: Vec<String> = columns.iter().map(|c| c.to_string()).collect();

    let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
    // Each shape places its violations before the writer exists, so an
    // impossible request leaves no file behind.
    let mut drawn = match shape {
        Shape::Hubs | Shape::Sparse | Shape::Mixed => {
            Drawn::Fds(fds::FdTable::draw(fds::Layout::of(shape), n, violations, params, &mut rng)?)
        }
        Shape::Cliques => Drawn::Cliques(cliques::Cliques::draw(
            n,
            violations,
            (params.clique_p, params.clique_tail),
            rng,
        )?),
        Shape::Order => Drawn::Order(order::Order::draw(n, violations, &mut rng)?),
    };
    let outcome = match &drawn {
        Drawn::Fds(t) => t.outcome(),
        Drawn::Cliques(t) => t.outcome(),
        Drawn::Order(t) => t.outcome(),
    };
    let mut writer = TableWriter::create(&options.out, format, &names, kinds)?;
    match &mut drawn {
        Drawn::Fds(t) => t.write(&mut writer)?,
        Drawn::Cliques(t) => t.write(&mut writer)?,
        Drawn::Order(t) => t.write(&mut writer)?,
    }
    let written = writer.finish()?;
    if let Some(path) = &options.constraints_out {
        crate::write_constraint_file(path, params.constraints(shape))?;
    }
    Ok(ShapeStats {
        generator: "shapes",
        shape,
        out: options.out.clone(),
        format,
        constraints_out: options.constraints_out.clone(),
        rows: written,
        columns: columns.len(),
        seed: options.seed,
        violations,
        violating_rows: outcome.violating_rows,
        largest_group: outcome.largest_group,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// Group indexes, the largest group first (ties by index).
fn largest_first(sizes: &[usize]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_key(|&g| (std::cmp::Reverse(sizes[g]), g));
    order
}

/// The most wrong values a group of `size` rows can take while its correct
/// value keeps a strict majority.
fn capacity(size: usize) -> usize {
    size.saturating_sub(1) / 2
}

/// How many of `count` violations each group gets when they go round-robin
/// over the `stars` largest groups, moving on to the next largest group only
/// when those are full ([`capacity`]). An error says how many fit.
fn spread_over_largest(
    sizes: &[usize],
    count: u64,
    stars: usize,
    what: &str,
) -> Result<Vec<usize>, GenerateError> {
    let total: u64 = sizes.iter().map(|&s| capacity(s) as u64).sum();
    if count > total {
        return Err(GenerateError::Option(format!(
            "{count} {what} do not fit: at most {total} can be placed so that every group keeps \
             a correct majority (a group of s rows takes (s - 1) / 2); use fewer violations or \
             more rows"
        )));
    }
    let order = largest_first(sizes);
    let mut assigned = vec![0usize; sizes.len()];
    let mut width = stars.clamp(1, order.len().max(1));
    let mut left = count;
    while left > 0 {
        let mut placed = false;
        for &g in &order[..width] {
            if left > 0 && assigned[g] < capacity(sizes[g]) {
                assigned[g] += 1;
                left -= 1;
                placed = true;
            }
        }
        if !placed {
            // `count <= total` guarantees a later group has room.
            width += 1;
        }
    }
    Ok(assigned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn violations_go_to_the_largest_groups_first() {
        let sizes = [10, 100, 3, 50];
        assert_eq!(spread_over_largest(&sizes, 5, 2, "x").unwrap(), vec![0, 3, 0, 2]);
        // Group 3 holds 24; the rest spills to group 0 (4) and group 2 (1).
        assert_eq!(spread_over_largest(&sizes, 49 + 24 + 4, 2, "x").unwrap(), vec![4, 49, 0, 24]);
        assert_eq!(spread_over_largest(&sizes, 78, 2, "x").unwrap(), vec![4, 49, 1, 24]);
        let err = spread_over_largest(&sizes, 79, 2, "wrong values").unwrap_err().to_string();
        assert!(err.contains("79 wrong values do not fit: at most 78"), "{err}");
        assert_eq!(spread_over_largest(&[], 0, 3, "x").unwrap(), Vec::<usize>::new());
    }

    #[test]
    fn defaults() {
        assert_eq!(Shape::Hubs.default_violations(20_000), 9);
        assert_eq!(Shape::Cliques.default_violations(1_000), 12);
        assert_eq!(Shape::Sparse.default_violations(2_400), 48);
        assert_eq!(Shape::Mixed.default_violations(20_000), 409);
        assert_eq!(Shape::Order.default_violations(2_000), 20);
        for shape in Shape::ALL {
            let dcs = dpincon_constraints::parse_constraints(shape.constraints()).unwrap();
            let (columns, kinds) = shape.columns();
            assert_eq!(columns.len(), kinds.len());
            for dc in &dcs {
                for p in &dc.predicates {
                    for o in [&p.left, &p.right] {
                        if let dpincon_constraints::Operand::Attr { column, .. } = o {
                            assert!(columns.contains(&column.as_str()), "{shape}: {column}");
                        }
                    }
                }
            }
        }
    }
}
