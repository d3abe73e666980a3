//! dpincon-generate: data for experiments and benchmarks, and nothing else —
//! a Tax-like table generator, the two violation generators of SPEC §9, and
//! tables of hard conflict-graph shapes.
//!
//! - [`generate_tax`]: a synthetic table with the schema of the paper's Tax
//!   table, realistic group sizes (population-weighted states, area codes,
//!   ZIP codes and cities inside states, bracket-like tax rates) and zero
//!   conflicts under [`TAX_CONSTRAINTS`]; streamed, any size.
//! - [`rnoise`]: RNoise(α), random errors in constrained attributes (half
//!   active-domain swaps, half typos), streamed in three passes.
//! - [`conoise`]: CONoise(k), k iterations that each make a random pair of
//!   tuples violate a random constraint; the table is held in memory.
//! - [`generate_shape`]: tables whose conflict graphs have the hard shapes
//!   of real data ([`Shape`]: hub stars on frequent codes, duplicated-key
//!   cliques, sparse small groups, both, and an order DC with no equality),
//!   each with its constraint file. RNoise on Tax gives one dense kind of
//!   graph; these isolate the cases where a DP release's degree bound, or
//!   the gap between I_P and I_R, is at its worst. Held in memory (tens of
//!   bytes a row).
//! - [`suite`]: the θ-selection training suite (issue 49), ≥ 40 tables
//!   over nine shape families, each a grid of parameters, with a typed
//!   manifest ([`suite::SuiteManifest`]) for `experiment suite`.
//! - [`generate_nightly`]: a year (or any number) of nightly versions of an
//!   orders table under three FDs that drifts slowly, with a slowly growing
//!   error rate and one-night bursts of violations, and each night's ground
//!   truth: the input of a replayed year of nightly audits.
//!
//! Tables are CSV (header row, empty cell = NULL, RFC 4180 quoting) or
//! Parquet, by extension. Outputs are written whole or not at all through
//! [`OutputFile`] (a temporary file beside the target, renamed when
//! complete; a device or FIFO in place), the one way a dpincon command
//! writes a file: the CLI's reports go through it too. The generators
//! never modify their input. All randomness is ChaCha8 seeded by the caller: this is synthetic
//! data, not privacy noise, so the same seed gives the same bytes.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod conoise;
mod error;
mod nightly;
mod rnoise;
mod shapes;
pub mod suite;
mod table;
mod tax;
mod typo;

use std::path::Path;

pub use conoise::{ConoisePair, ConoiseStats, conoise};
pub use dpincon_constraints::DenialConstraint;
pub use dpincon_source::OutputFile;
pub use error::GenerateError;
pub use nightly::{
    NIGHTLY_CONSTRAINT_FILE, NIGHTLY_CONSTRAINTS, NIGHTLY_SCHEMA, NightTruth, NightlyOptions,
    NightlyStats, generate_nightly, night_file,
};
pub use rnoise::{NoiseStats, rnoise};
pub use shapes::{Shape, ShapeOptions, ShapeStats, generate_shape};
pub use table::TableFormat;
pub use tax::{GenerateStats, TAX_COLUMNS, TAX_CONSTRAINTS, TaxOptions, generate_tax};

use dpincon_constraints::{Operand, TupleVar};
use table::Header;

/// Write a constraint file whole, as the tables are ([`OutputFile`]), so a
/// failed write never leaves a truncated one.
pub fn write_constraint_file(path: &Path, text: &str) -> Result<(), GenerateError> {
    use std::io::Write as _;
    let write_err = |source| GenerateError::Write { path: path.into(), source };
    let mut out = OutputFile::create(path).map_err(write_err)?;
    out.write_all(text.as_bytes()).map_err(write_err)?;
    out.commit().map_err(write_err)
}

/// Read and parse a constraint file (any of the syntaxes of SPEC §1).
pub fn read_constraints(path: &Path) -> Result<Vec<DenialConstraint>, GenerateError> {
    let text = std::fs::read_to_string(path)
        .map_err(|source| GenerateError::Read { path: path.into(), source })?;
    dpincon_constraints::parse_constraints(&text)
        .map_err(|e| GenerateError::Constraints { path: path.into(), message: e.to_string() })
}

/// How a constraint is named in messages: its line when it came from a file.
fn describe(dc: &DenialConstraint) -> String {
    if dc.origin.line > 0 { format!("line {} ({dc})", dc.origin.line) } else { dc.to_string() }
}

/// An attribute reference of a predicate, resolved to a column index.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Side<'a> {
    /// `t1.A` / `t2.A`.
    Cell(TupleVar, usize),
    /// A constant, as its text.
    Const(&'a dpincon_constraints::Literal),
}

fn resolve_operand<'a>(
    operand: &'a Operand,
    dc: &DenialConstraint,
    header: &Header,
    path: &Path,
) -> Result<Side<'a>, GenerateError> {
    match operand {
        Operand::Attr { tuple, column } => match header.position(column) {
            Some(c) => Ok(Side::Cell(*tuple, c)),
            None => Err(GenerateError::UnknownAttribute {
                attribute: column.clone(),
                constraint: describe(dc),
                path: path.into(),
                columns: header.names.join(", "),
            }),
        },
        Operand::Const(l) => Ok(Side::Const(l)),
    }
}

/// A predicate with both operands resolved.
pub(crate) struct Resolved<'a> {
    pub left: Side<'a>,
    pub op: dpincon_constraints::Operator,
    pub right: Side<'a>,
}

/// Resolve every attribute of `constraints` against the table's columns;
/// an attribute the table lacks is an error naming it and its constraint.
pub(crate) fn resolve<'a>(
    constraints: &'a [DenialConstraint],
    header: &Header,
    path: &Path,
) -> Result<Vec<Vec<Resolved<'a>>>, GenerateError> {
    constraints
        .iter()
        .map(|dc| {
            dc.predicates
                .iter()
                .map(|p| {
                    Ok(Resolved {
                        left: resolve_operand(&p.left, dc, header, path)?,
                        op: p.op,
                        right: resolve_operand(&p.right, dc, header, path)?,
                    })
                })
                .collect()
        })
        .collect()
}

/// The columns some constraint uses, in table order.
pub(crate) fn constrained_columns(resolved: &[Vec<Resolved<'_>>], width: usize) -> Vec<usize> {
    let mut used = vec![false; width];
    for p in resolved.iter().flatten() {
        for side in [p.left, p.right] {
            if let Side::Cell(_, c) = side {
                used[c] = true;
            }
        }
    }
    (0..width).filter(|&c| used[c]).collect()
}

/// A literal as the text a cell would hold.
pub(crate) fn literal_text(l: &dpincon_constraints::Literal) -> String {
    match l {
        dpincon_constraints::Literal::Int(v) => v.to_string(),
        dpincon_constraints::Literal::Float(v) => format!("{v:?}"),
        dpincon_constraints::Literal::Str(s) => s.clone(),
    }
}
