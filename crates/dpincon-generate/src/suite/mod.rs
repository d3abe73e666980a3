//! The θ-selection training suite (issue 49): tables of every conflict-graph
//! shape family, each family a grid of parameters, with a typed manifest.
//!
//! Why a suite: a θ-selection default tuned on a handful of tables wins on
//! those and loses badly on a shape nobody looked at (the notes on θ
//! selection found the winner differs by shape). Issue 49 asks for defaults
//! chosen by their *worst-case* ratio to the oracle over ≥ 40 tables that
//! span the shape families, validated leave-one-family-out; this module
//! writes those tables. It measures nothing itself: `dpincon-cli experiment
//! suite` reads the manifest and scores the releases.
//!
//! Families ([`Family`]), each a grid of several tables from 10^3 to 10^5
//! rows ([`Scale::Small`] caps them at 10^4 for quick runs and tests):
//!
//! - `fd-plus-nodc` (module `nodc`): an FD beside one or two DCs with no equality
//!   predicate (interval nesting), which contribute a chosen share of the
//!   edges, 0.1% to 50%: the degree bound of the FD says nothing about them.
//! - `dup-keys` (module `dupkeys`): a key broken by 10 to 10^4 duplicates in
//!   tiny groups (degrees ≤ 2), optionally beside sparse FDs: large counts
//!   made of tiny degrees, where any θ above 2 only adds noise.
//! - `key-copies` (module `copies`): a key broken by copied rows, many pairs
//!   and a few large groups, beside an FD of another left-hand side with
//!   small classes: Stock's shape, two sources of I_P under one bound.
//! - `overlap-fds` (module `overlap`): three measurements, any two determining
//!   the third, plus an inequality DC: FDs whose left-hand sides overlap.
//! - `hubs`, `cliques`, `sparse`, `mixed`, `order` (module `shaped`): the hard
//!   shapes of `generate shapes`, with their Zipf skew, violation counts,
//!   clique and group sizes varied; `order` with and without an equality.
//! - `references` (module `refs`): rows referencing other rows by id
//!   (`t1.parent = t2.id`), chains to flat charts: a DC whose only
//!   equality is across two columns.
//! - `wide` (module `wide`): an FD per column pair, 6 to 20 of them, each
//!   over its own left-hand side: the degree bound sums many terms.
//!
//! Everything is a function of the suite's seed (each table's seed is
//! derived from it and the table's name, so adding a table changes no
//! other). Tables are CSV through the crate's `TableWriter`, constraints
//! one file per table, and `manifest.json` the typed [`SuiteManifest`].

mod copies;
mod dupkeys;
mod nodc;
mod overlap;
mod refs;
mod shaped;
mod wide;

use std::path::{Path, PathBuf};

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

pub use copies::CopyParams;
pub use dupkeys::DupKeyParams;
pub use nodc::NodcParams;
pub use overlap::OverlapParams;
pub use refs::ReferenceParams;
pub use shaped::{CliqueParams, HubParams, MixedParams, OrderParams, SparseParams};
pub use wide::{MIXED_GROUPS, WideParams};

use crate::GenerateError;

/// The manifest's format version: bumped whenever a family's tables change
/// for the same seed, so results of different suites are never compared.
pub const SUITE_VERSION: u32 = 1;

/// The manifest's file name inside the suite's directory.
pub const MANIFEST: &str = "manifest.json";

/// How large the suite's tables are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scale {
    /// At most [`Scale::SMALL_ROWS`] rows a table: minutes for the whole
    /// suite, for quick runs and tests.
    Small,
    /// 10^3 to 10^5 rows, as planned.
    Full,
}

impl Scale {
    /// The row cap of [`Scale::Small`].
    pub const SMALL_ROWS: u64 = 10_000;

    /// A planned table's rows at this scale.
    pub fn rows(self, full: u64) -> u64 {
        match self {
            Scale::Small => full.min(Self::SMALL_ROWS),
            Scale::Full => full,
        }
    }

    /// The scale's name, as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            Scale::Small => "small",
            Scale::Full => "full",
        }
    }
}

/// A shape family of the suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// FDs plus DCs without an equality predicate.
    FdPlusNodc,
    /// A key broken by many tiny groups of duplicates.
    DupKeys,
    /// A key broken by copies beside an FD of another left-hand side.
    KeyCopies,
    /// FDs with overlapping left-hand sides, beside an inequality DC.
    OverlapFds,
    /// Stars on the largest groups of Zipf-sized FD groups.
    Hubs,
    /// Duplicated keys as cliques.
    Cliques,
    /// Many small stars in small FD groups.
    Sparse,
    /// Hubs and sparse errors in one table.
    Mixed,
    /// An order DC, with or without an equality predicate.
    Order,
    /// Rows referencing rows by id: a cross equality `t1.parent = t2.id`.
    References,
    /// An FD per column pair, each over its own left-hand side.
    Wide,
}

impl Family {
    /// Every family, in the order reports list them.
    pub const ALL: [Family; 11] = [
        Family::FdPlusNodc,
        Family::DupKeys,
        Family::KeyCopies,
        Family::OverlapFds,
        Family::Hubs,
        Family::Cliques,
        Family::Sparse,
        Family::Mixed,
        Family::Order,
        Family::References,
        Family::Wide,
    ];

    /// The family's name, as manifests and reports spell it.
    pub fn name(self) -> &'static str {
        match self {
            Family::FdPlusNodc => "fd-plus-nodc",
            Family::DupKeys => "dup-keys",
            Family::KeyCopies => "key-copies",
            Family::OverlapFds => "overlap-fds",
            Family::Hubs => "hubs",
            Family::Cliques => "cliques",
            Family::Sparse => "sparse",
            Family::Mixed => "mixed",
            Family::Order => "order",
            Family::References => "references",
            Family::Wide => "wide",
        }
    }
}

impl std::fmt::Display for Family {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One table's parameters, by family (the manifest's `params`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FamilyParams {
    /// See [`NodcParams`].
    FdPlusNodc(NodcParams),
    /// See [`DupKeyParams`].
    DupKeys(DupKeyParams),
    /// See [`CopyParams`].
    KeyCopies(CopyParams),
    /// See [`OverlapParams`].
    OverlapFds(OverlapParams),
    /// See [`HubParams`].
    Hubs(HubParams),
    /// See [`CliqueParams`].
    Cliques(CliqueParams),
    /// See [`SparseParams`].
    Sparse(SparseParams),
    /// See [`MixedParams`].
    Mixed(MixedParams),
    /// See [`OrderParams`].
    Order(OrderParams),
    /// See [`ReferenceParams`].
    References(ReferenceParams),
    /// See [`WideParams`].
    Wide(WideParams),
}

impl FamilyParams {
    /// The family these parameters belong to.
    pub fn family(&self) -> Family {
        match self {
            FamilyParams::FdPlusNodc(_) => Family::FdPlusNodc,
            FamilyParams::DupKeys(_) => Family::DupKeys,
            FamilyParams::KeyCopies(_) => Family::KeyCopies,
            FamilyParams::OverlapFds(_) => Family::OverlapFds,
            FamilyParams::Hubs(_) => Family::Hubs,
            FamilyParams::Cliques(_) => Family::Cliques,
            FamilyParams::Sparse(_) => Family::Sparse,
            FamilyParams::Mixed(_) => Family::Mixed,
            FamilyParams::Order(_) => Family::Order,
            FamilyParams::References(_) => Family::References,
            FamilyParams::Wide(_) => Family::Wide,
        }
    }
}

/// What a table holds by construction, where its generator knows it
/// exactly (the tests read these back from the table or its graph).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Known {
    /// Rows given a wrong value, moved out of order, or copied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub violating_rows: Option<u64>,
    /// Conflict edges of the FD part alone (`fd-plus-nodc`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fd_edges: Option<u64>,
    /// Conflict edges of the DCs without equality (`fd-plus-nodc`): the
    /// sum over DCs, exact for each DC alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodc_edges: Option<u64>,
    /// The largest group of rows sharing an FD's left-hand side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub largest_group: Option<u64>,
}

/// One table of the suite, as the manifest lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteTable {
    /// Unique within the suite; also the files' stem.
    pub name: String,
    /// The family.
    pub family: Family,
    /// The family's parameters (their variant is the family's).
    pub params: FamilyParams,
    /// Rows written.
    pub rows: u64,
    /// The table's seed (derived from the suite's seed and the name, or its
    /// twin's: [`PlannedTable::seed_name`]).
    pub seed: u64,
    /// The CSV table, relative to the manifest's directory.
    pub data: PathBuf,
    /// Its constraint file, relative to the manifest's directory.
    pub constraints: PathBuf,
    /// What the table holds by construction.
    #[serde(default)]
    pub known: Known,
}

/// `manifest.json`: the suite's tables and how they were made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteManifest {
    /// [`SUITE_VERSION`] of the generator that wrote it.
    pub version: u32,
    /// The suite's seed.
    pub seed: u64,
    /// The scale.
    pub scale: Scale,
    /// The tables, by family then grid order.
    pub tables: Vec<SuiteTable>,
}

impl SuiteManifest {
    /// Reads a manifest and checks it: this generator's version, each
    /// table's parameters of its family, names unique.
    pub fn read(path: &Path) -> Result<Self, GenerateError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| GenerateError::Read { path: path.into(), source })?;
        let manifest: SuiteManifest = serde_json::from_str(&text).map_err(|e| {
            GenerateError::Format { path: path.into(), message: format!("not a manifest: {e}") }
        })?;
        let bad = |message: String| GenerateError::Format { path: path.into(), message };
        if manifest.version != SUITE_VERSION {
            return Err(bad(format!(
                "suite version {} (this generator writes {SUITE_VERSION}): regenerate it",
                manifest.version
            )));
        }
        let mut names = std::collections::HashSet::new();
        for t in &manifest.tables {
            if t.params.family() != t.family {
                return Err(bad(format!(
                    "table '{}': family {} with parameters of {}",
                    t.name,
                    t.family,
                    t.params.family()
                )));
            }
            if !names.insert(t.name.as_str()) {
                return Err(bad(format!("table '{}' is listed twice", t.name)));
            }
        }
        Ok(manifest)
    }

    /// Writes the manifest to `path`, whole or not at all.
    pub fn write(&self, path: &Path) -> Result<(), GenerateError> {
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| GenerateError::Option(format!("manifest: {e}")))?;
        crate::write_constraint_file(path, &(text + "\n"))
    }
}

/// A table the suite will write: its name, parameters and rows.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedTable {
    /// Unique within the suite.
    pub name: String,
    /// The name its seed is derived from: its own, or its twin's when two
    /// tables hold the same rows under different constraints (`order` with
    /// and without the equality).
    pub seed_name: String,
    /// The parameters (and so the family).
    pub params: FamilyParams,
    /// Rows to write.
    pub rows: u64,
}

impl PlannedTable {
    /// A table seeded by its own name.
    pub fn new(name: String, params: FamilyParams, rows: u64) -> Self {
        PlannedTable { seed_name: name.clone(), name, params, rows }
    }
}

/// Every table of the suite at `scale`, family by family: the grids of the
/// family modules. Pure: no file is read or written.
pub fn plan(scale: Scale) -> Vec<PlannedTable> {
    let mut out = Vec::new();
    out.extend(nodc::grid(scale));
    out.extend(dupkeys::grid(scale));
    out.extend(copies::grid(scale));
    out.extend(overlap::grid(scale));
    out.extend(shaped::grid(scale));
    out.extend(refs::grid(scale));
    out.extend(wide::grid(scale));
    out
}

/// A table's seed: ChaCha8 seeded by the suite's seed mixed with the
/// table's name (FNV-1a), so a table's bytes depend on its name and the
/// suite's seed only.
pub fn table_seed(suite_seed: u64, name: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    ChaCha8Rng::seed_from_u64(suite_seed ^ hash).next_u64()
}

/// Writes one planned table and its constraint file into `dir`
/// (`NAME.csv`, `NAME.dcs`) and returns its manifest entry.
pub fn generate_table(
    planned: &PlannedTable,
    suite_seed: u64,
    dir: &Path,
) -> Result<SuiteTable, GenerateError> {
    let seed = table_seed(suite_seed, &planned.seed_name);
    let data = PathBuf::from(format!("{}.csv", planned.name));
    let constraints = PathBuf::from(format!("{}.dcs", planned.name));
    let (out, dcs) = (dir.join(&data), dir.join(&constraints));
    let rows = planned.rows;
    let (text, known) = match &planned.params {
        FamilyParams::FdPlusNodc(p) => nodc::write(p, rows, seed, &out)?,
        FamilyParams::DupKeys(p) => dupkeys::write(p, rows, seed, &out)?,
        FamilyParams::KeyCopies(p) => copies::write(p, rows, seed, &out)?,
        FamilyParams::OverlapFds(p) => overlap::write(p, rows, seed, &out)?,
        FamilyParams::References(p) => refs::write(p, rows, seed, &out)?,
        FamilyParams::Wide(p) => wide::write(p, rows, seed, &out)?,
        other => shaped::write(other, rows, seed, &out)?,
    };
    crate::write_constraint_file(&dcs, &text)?;
    Ok(SuiteTable {
        name: planned.name.clone(),
        family: planned.params.family(),
        params: planned.params.clone(),
        rows,
        seed,
        data,
        constraints,
        known,
    })
}

/// Options of [`generate_suite`].
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteOptions {
    /// The directory to write (created if missing).
    pub out: PathBuf,
    /// The suite's seed.
    pub seed: u64,
    /// The scale.
    pub scale: Scale,
}

/// Writes every table of [`plan`] and `manifest.json` into `options.out`,
/// calling `written` after each table; returns the manifest.
pub fn generate_suite(
    options: &SuiteOptions,
    written: &mut dyn FnMut(&SuiteTable),
) -> Result<SuiteManifest, GenerateError> {
    std::fs::create_dir_all(&options.out)
        .map_err(|source| GenerateError::Write { path: options.out.clone(), source })?;
    let mut tables = Vec::new();
    for planned in plan(options.scale) {
        let table = generate_table(&planned, options.seed, &options.out)?;
        written(&table);
        tables.push(table);
    }
    let manifest =
        SuiteManifest { version: SUITE_VERSION, seed: options.seed, scale: options.scale, tables };
    manifest.write(&options.out.join(MANIFEST))?;
    Ok(manifest)
}

/// `x` in thousandths, for table names (`0.005` → `5`).
pub(crate) fn permille(x: f64) -> u64 {
    (x * 1000.0).round() as u64
}

/// A draw log-uniform over `1..=max` (`max` ≥ 1): mostly small, a few near
/// `max`; the suite's shifts.
pub(crate) fn log_uniform(max: u64, rng: &mut ChaCha8Rng) -> u64 {
    use rand::Rng;
    ((max as f64 + 1.0).powf(rng.random::<f64>()).floor() as u64).clamp(1, max.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_spans_the_families_with_unique_names() {
        for scale in [Scale::Small, Scale::Full] {
            let plan = plan(scale);
            assert!(plan.len() >= 40, "{} tables", plan.len());
            let mut names: Vec<&str> = plan.iter().map(|t| t.name.as_str()).collect();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), plan.len(), "names are unique");
            for family in Family::ALL {
                let n = plan.iter().filter(|t| t.params.family() == family).count();
                assert!(n >= 4, "{family}: {n} tables");
            }
            let rows: Vec<u64> = plan.iter().map(|t| t.rows).collect();
            assert!(rows.iter().all(|&r| r >= 1_000));
            match scale {
                Scale::Small => assert!(rows.iter().all(|&r| r <= Scale::SMALL_ROWS)),
                Scale::Full => assert_eq!(rows.iter().max(), Some(&100_000)),
            }
        }
    }

    #[test]
    fn table_seeds_depend_on_the_suite_seed_and_the_name_only() {
        assert_eq!(table_seed(1, "hubs-a"), table_seed(1, "hubs-a"));
        assert_ne!(table_seed(1, "hubs-a"), table_seed(2, "hubs-a"));
        assert_ne!(table_seed(1, "hubs-a"), table_seed(1, "hubs-b"));
    }
}
