//! `hubs`, `cliques`, `sparse`, `mixed` and `order`: the hard shapes of
//! `generate shapes` (module `shapes`), each a grid over the knobs that
//! move its conflict graph.
//!
//! Why a grid and not the one default table per shape: a θ selector tuned on
//! one hubs table learns that table's hub size. The knobs that change what a
//! good θ is are varied: the Zipf skew of the code groups (how large the
//! hubs are against n) and how many stars there are (hubs); the clique
//! sizes and how many keys are duplicated (cliques); the zip group sizes and
//! error rates (sparse); the balance of hubs and small stars (mixed); and
//! whether the order DC has an equality predicate that bounds its degrees
//! (order, the same tables with and without `t1.desk=t2.desk`).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{FamilyParams, Known, PlannedTable, Scale, permille};
use crate::shapes::{ShapeParams, generate_shape_with};
use crate::{GenerateError, Shape, ShapeOptions, TableFormat};

/// Parameters of a `hubs` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HubParams {
    /// Zipf exponent of the offense codes' group sizes (0.7: the largest
    /// holds ~11% of the rows).
    pub zipf: f64,
    /// Rows given a wrong description (2 in 3) or borough.
    pub violations: u64,
    /// They go round-robin over this many of the largest groups.
    pub stars: usize,
}

/// Parameters of a `cliques` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CliqueParams {
    /// Duplicated keys.
    pub duplicated_keys: u64,
    /// Copies beyond two are geometric with this success probability
    /// (0.4: ~3.5 copies a key; smaller means larger cliques).
    pub geometric_p: f64,
    /// Share of the keys with 13–30 copies.
    pub tail_share: f64,
}

/// Parameters of a `sparse` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SparseParams {
    /// Smallest zip group.
    pub zip_min: usize,
    /// Largest zip group.
    pub zip_max: usize,
    /// Rows given a wrong city.
    pub wrong_rows: u64,
}

/// Parameters of a `mixed` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MixedParams {
    /// Hub stars (as in `hubs`, 3 largest groups).
    pub hub_violations: u64,
    /// Rows given a wrong city in the zip groups (5–40 rows).
    pub wrong_rows: u64,
    /// Zipf exponent of the code groups.
    pub zipf: f64,
}

/// Parameters of an `order` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OrderParams {
    /// Rows whose loss undercuts a row `d` ranks lower (`d` log-uniform in
    /// 1..n/5).
    pub out_of_order: u64,
    /// The DC compares rows of the same desk only
    /// (`not(t1.desk=t2.desk&t1.gain>t2.gain&t1.loss<t2.loss)`).
    pub equality: bool,
}

fn per(rows: u64, rate: f64) -> u64 {
    (rows as f64 * rate).round() as u64
}

/// The grids of the five shaped families.
pub(super) fn grid(scale: Scale) -> Vec<PlannedTable> {
    let mut out = Vec::new();
    let mut add = |name: String, params: FamilyParams, rows: u64| {
        out.push(PlannedTable::new(name, params, rows));
    };
    // Hubs: skew, the number of stars, and dense hubs (200 stars: the
    // notes' hub200). The last four are dense at the floor θ_c = n/10:
    // skews 1.5–2.5 put a third to a half of the rows in the largest group,
    // so tens of stars of degree several θ_c keep the count growing past
    // it (Flight's shape: release README, "the nineteenth round").
    for (rows, zipf, violations) in [
        (20_000, 0.5, 9),
        (20_000, 0.7, 9),
        (20_000, 1.0, 9),
        (5_000, 0.7, 3),
        (50_000, 0.7, 30),
        (100_000, 0.7, 200),
        (1_000, 1.5, 40),
        (1_000, 2.0, 40),
        (1_000, 2.5, 30),
        (2_000, 2.0, 100),
    ] {
        let n = scale.rows(rows);
        add(
            format!("hubs-z{zipf}-v{violations}-n{}k", n / 1000),
            FamilyParams::Hubs(HubParams { zipf, violations, stars: 3 }),
            n,
        );
    }
    // Cliques: clique sizes (p) and how many keys are duplicated.
    for (rows, p, per_keys) in [
        (1_000, 0.4, 80),
        (10_000, 0.7, 40),
        (10_000, 0.2, 80),
        (50_000, 0.4, 20),
        (100_000, 0.4, 200),
    ] {
        let n = scale.rows(rows);
        add(
            format!("cliques-p{p}-k{per_keys}-n{}k", n / 1000),
            FamilyParams::Cliques(CliqueParams {
                duplicated_keys: n / per_keys,
                geometric_p: p,
                tail_share: 0.05,
            }),
            n,
        );
    }
    // Sparse: zip group sizes and error rates.
    for (rows, zip_min, zip_max, rate) in [
        (2_400, 5, 40, 0.02),
        (10_000, 3, 10, 0.02),
        (20_000, 20, 200, 0.01),
        (50_000, 5, 40, 0.005),
        (100_000, 5, 40, 0.05),
    ] {
        let n = scale.rows(rows);
        add(
            format!("sparse-g{zip_min}-{zip_max}-e{}-n{}k", permille(rate), n / 1000),
            FamilyParams::Sparse(SparseParams { zip_min, zip_max, wrong_rows: per(n, rate) }),
            n,
        );
    }
    // Mixed: the balance of hub stars and small stars.
    for (rows, hubs, rate, zipf) in [
        (20_000, 9, 0.02, 0.7),
        (20_000, 3, 0.005, 0.7),
        (50_000, 30, 0.02, 1.0),
        (10_000, 9, 0.05, 0.5),
    ] {
        let n = scale.rows(rows);
        add(
            format!("mixed-h{hubs}-e{}-z{zipf}-n{}k", permille(rate), n / 1000),
            FamilyParams::Mixed(MixedParams {
                hub_violations: hubs,
                wrong_rows: per(n, rate),
                zipf,
            }),
            n,
        );
    }
    // Order: rows out of order, with and without the desk equality.
    for (rows, rate) in [(2_000, 0.01), (10_000, 0.002), (50_000, 0.05)] {
        let n = scale.rows(rows);
        let name = format!("order-e{}-n{}k", permille(rate), n / 1000);
        for equality in [false, true] {
            let params = FamilyParams::Order(OrderParams { out_of_order: per(n, rate), equality });
            // Twins: the same rows under either DC.
            let mut table = PlannedTable::new(name.clone(), params, n);
            if equality {
                table.name += "-eq";
            }
            out.push(table);
        }
    }
    out
}

/// Writes a shaped table to `out`; returns its constraint file and facts.
pub(super) fn write(
    params: &FamilyParams,
    rows: u64,
    seed: u64,
    out: &Path,
) -> Result<(String, Known), GenerateError> {
    let mut knobs = ShapeParams::default();
    let (shape, violations) = match params {
        FamilyParams::Hubs(p) => {
            knobs.code_zipf = p.zipf;
            knobs.stars = p.stars;
            (Shape::Hubs, p.violations)
        }
        FamilyParams::Cliques(p) => {
            knobs.clique_p = p.geometric_p;
            knobs.clique_tail = p.tail_share;
            (Shape::Cliques, p.duplicated_keys)
        }
        FamilyParams::Sparse(p) => {
            knobs.zip_min = p.zip_min;
            knobs.zip_max = p.zip_max;
            (Shape::Sparse, p.wrong_rows)
        }
        FamilyParams::Mixed(p) => {
            knobs.code_zipf = p.zipf;
            knobs.hub_violations = p.hub_violations;
            (Shape::Mixed, p.hub_violations + p.wrong_rows)
        }
        FamilyParams::Order(p) => {
            knobs.order_by_desk = p.equality;
            (Shape::Order, p.out_of_order)
        }
        other => {
            return Err(GenerateError::Option(format!(
                "{} is not a shaped family",
                other.family()
            )));
        }
    };
    let options = ShapeOptions {
        shape,
        rows: Some(rows),
        violations: Some(violations),
        seed,
        out: out.to_path_buf(),
        format: Some(TableFormat::Csv),
        constraints_out: None,
    };
    let stats = generate_shape_with(&options, &knobs)?;
    let known = Known {
        violating_rows: Some(stats.violating_rows),
        largest_group: Some(stats.largest_group),
        ..Known::default()
    };
    Ok((knobs.constraints(shape).to_string(), known))
}
