//! `fd-plus-nodc`: an FD beside one or two DCs without any equality
//! predicate, the DCs contributing a chosen share of the edges.
//!
//! Why: a release's degree bound d̃ comes from the equality predicates
//! (the FD's group sizes); a DC with no equality has no public bound, so a
//! release must fall back to a selector over the whole row range for it
//! (`ub-direct` does when some DC has no equality). How much that costs
//! depends on how much of the count the unbounded DC carries: a sanity rule
//! that adds 0.1% of the edges should cost almost nothing, one that carries
//! half of them decides the release. The grid asks for 0.1% to 50%.
//!
//! Columns: `id`, `dept`, `manager` (`dept -> manager`, wrong managers in
//! 1% of the rows of departments of 5–60 rows), `start`, `end` (DC 1:
//! `not(t1.start>t2.start&t1.end<t2.end)`, a booking strictly inside
//! another), and `weight`, `shipping` (DC 2, with `dcs = 2`:
//! `not(t1.weight>t2.weight&t1.shipping<t2.shipping)`, a heavier parcel
//! shipped for less).
//!
//! The DC edges are exact by construction. In clean rows `end` rises
//! strictly with `start` (gaps of at least 2), so nothing nests. A
//! violating row at rank r with shift d takes `end` of rank r − d minus 1:
//! it then nests inside exactly the d rows of ranks r − d … r − 1 and in no
//! other, as long as the rank ranges [r − d, r] of violating rows are
//! disjoint, which the placement guarantees. The DC edges are therefore the
//! sum of the shifts, chosen to hit share / (1 − share) × the FD's edges
//! (counted exactly from its groups). Shifts are log-uniform in
//! 1..=`max_shift`: short nests make many low-degree rows, long ones stars.

use std::path::Path;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{FamilyParams, Known, PlannedTable, Scale, log_uniform, permille};
use crate::GenerateError;
use crate::table::{Kind, TableFormat, TableWriter};
use crate::tax::states::SURNAMES;

/// Parameters of an `fd-plus-nodc` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodcParams {
    /// The share of all edges asked of the DCs without equality.
    pub nodc_share: f64,
    /// How many such DCs (1 or 2); their edges are split evenly.
    pub dcs: u8,
    /// The share of rows given a wrong manager (the FD's violations).
    pub fd_error_rate: f64,
    /// The longest nest, in ranks: a violating row's degree.
    pub max_shift: u64,
}

const COLUMNS: [&str; 7] = ["id", "dept", "manager", "start", "end", "weight", "shipping"];
const KINDS: [Kind; 7] =
    [Kind::Int, Kind::Str, Kind::Str, Kind::Int, Kind::Int, Kind::Int, Kind::Int];
const FD: &str = "dept -> manager\n";
const DC_NEST: &str = "not(t1.start>t2.start&t1.end<t2.end)\n";
const DC_PARCEL: &str = "not(t1.weight>t2.weight&t1.shipping<t2.shipping)\n";
/// Departments of 5–60 rows.
const DEPT_MIN: usize = 5;
const DEPT_MAX: usize = 60;
/// Every booking lasts the same (so clean bookings never nest).
const DURATION: u64 = 480;

/// The grid: five shares × one or two DCs, sizes from 10^3 to 10^5 (the
/// smallest share on the largest table, so its few DC edges are not zero).
pub(super) fn grid(scale: Scale) -> Vec<PlannedTable> {
    let shares = [0.001, 0.01, 0.05, 0.2, 0.5];
    let rows = [[100_000, 20_000, 10_000, 5_000, 1_000], [10_000, 1_000, 50_000, 20_000, 2_000]];
    let mut out = Vec::new();
    for (k, dcs) in [1u8, 2].into_iter().enumerate() {
        for (i, &share) in shares.iter().enumerate() {
            let n = scale.rows(rows[k][i]);
            // One DC: short nests (degrees ≤ 50); two: long ones, stars
            // of up to n / 20.
            let max_shift = if dcs == 1 { 50 } else { (n / 20).max(1) };
            let params = NodcParams { nodc_share: share, dcs, fd_error_rate: 0.01, max_shift };
            out.push(PlannedTable::new(
                format!("nodc{dcs}-s{}-n{}k", permille(share), n / 1000),
                FamilyParams::FdPlusNodc(params),
                n,
            ));
        }
    }
    out
}

/// Edges of an FD group with `counts` rows per right-hand side: all pairs
/// minus those that agree.
fn group_edges(counts: &[u64]) -> u64 {
    let pairs = |k: u64| k * k.saturating_sub(1) / 2;
    pairs(counts.iter().sum()) - counts.iter().map(|&c| pairs(c)).sum::<u64>()
}

/// Shifts summing to `target`, each log-uniform in 1..=`max` (the last cut
/// short), then placed as disjoint rank ranges [r − d, r] in 0..n: the
/// violating ranks and their shifts.
fn nests(
    target: u64,
    max: u64,
    n: usize,
    rng: &mut ChaCha8Rng,
) -> Result<Vec<(usize, usize)>, GenerateError> {
    let mut shifts = Vec::new();
    let mut left = target;
    while left > 0 {
        let d = log_uniform(max, rng).min(left);
        shifts.push(d as usize);
        left -= d;
    }
    let span: usize = shifts.iter().map(|d| d + 1).sum();
    if span > n {
        return Err(GenerateError::Option(format!(
            "{target} nested edges need {span} ranks of the {n} rows: ask for a smaller share \
             or more rows"
        )));
    }
    shifts.shuffle(rng);
    // The free ranks go into the k + 1 gaps around the ranges: sorted cut
    // points of a random composition.
    let mut cuts: Vec<usize> = (0..shifts.len()).map(|_| rng.random_range(0..=n - span)).collect();
    cuts.sort_unstable();
    let mut out = Vec::with_capacity(shifts.len());
    let (mut at, mut used) = (0, 0);
    for (d, cut) in shifts.into_iter().zip(cuts) {
        at += cut - used;
        used = cut;
        out.push((at + d, d));
        at += d + 1;
    }
    Ok(out)
}

/// One ordered pair of columns: values by rank strictly rising with gaps of
/// at least 2, and the second column of each violating rank lowered to
/// its target's value minus 1.
fn ordered_pair(
    n: usize,
    nests: &[(usize, usize)],
    (base, step): (u64, u64),
    second: impl Fn(u64) -> u64,
    rng: &mut ChaCha8Rng,
) -> (Vec<u64>, Vec<u64>) {
    let mut first = Vec::with_capacity(n);
    let mut value = base;
    for _ in 0..n {
        value += rng.random_range(1..=step);
        first.push(value);
    }
    let mut seconds: Vec<u64> = first.iter().map(|&v| second(v)).collect();
    for &(r, d) in nests {
        seconds[r] = second(first[r - d]) - 1;
    }
    (first, seconds)
}

/// Writes the table to `out`; returns its constraint file and facts.
pub(super) fn write(
    p: &NodcParams,
    rows: u64,
    seed: u64,
    out: &Path,
) -> Result<(String, Known), GenerateError> {
    let n = rows as usize;
    if !(0.0..1.0).contains(&p.nodc_share) || !(1..=2).contains(&p.dcs) || n < DEPT_MIN {
        return Err(GenerateError::Option(format!("fd-plus-nodc: bad parameters {p:?}")));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);

    // The FD: departments of 5–60 rows, a distinct manager each; wrong
    // managers in random rows, each department keeping a strict majority.
    let mut sizes = Vec::new();
    let mut left = n;
    while left > 0 {
        let s = if left <= DEPT_MAX { left } else { rng.random_range(DEPT_MIN..=DEPT_MAX) };
        let s = if left - s > 0 && left - s < DEPT_MIN { left - DEPT_MIN } else { s };
        sizes.push(s);
        left -= s;
    }
    let mut dept: Vec<u32> =
        sizes.iter().enumerate().flat_map(|(g, &s)| std::iter::repeat_n(g as u32, s)).collect();
    dept.shuffle(&mut rng);
    let mut manager: Vec<u32> = dept.clone();
    let wrong = (p.fd_error_rate * n as f64).round() as usize;
    let mut taken = vec![0usize; sizes.len()];
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(&mut rng);
    let mut placed = 0;
    for row in order {
        let g = dept[row] as usize;
        if placed == wrong {
            break;
        }
        if taken[g] < (sizes[g] - 1) / 2 && sizes.len() > 1 {
            let mut w = rng.random_range(0..sizes.len() as u32 - 1);
            if w >= g as u32 {
                w += 1;
            }
            manager[row] = w;
            taken[g] += 1;
            placed += 1;
        }
    }
    let mut counts: Vec<std::collections::HashMap<u32, u64>> =
        vec![Default::default(); sizes.len()];
    for row in 0..n {
        *counts[dept[row] as usize].entry(manager[row]).or_default() += 1;
    }
    let fd_edges: u64 =
        counts.iter().map(|c| group_edges(&c.values().copied().collect::<Vec<_>>())).sum();

    // The DCs: the asked share of all edges, split evenly between them.
    let target = if p.nodc_share > 0.0 {
        ((p.nodc_share / (1.0 - p.nodc_share)) * fd_edges as f64).round().max(1.0) as u64
    } else {
        0
    };
    let second_target = if p.dcs == 2 { target / 2 } else { 0 };
    let nest = nests(target - second_target, p.max_shift, n, &mut rng)?;
    let parcel = nests(second_target, p.max_shift, n, &mut rng)?;
    let (start, end) = ordered_pair(n, &nest, (1_000_000, 9), |s| s + DURATION, &mut rng);
    let (weight, shipping) = ordered_pair(n, &parcel, (100, 3), |w| 2 * w + 300, &mut rng);
    // Each pair's ranks are a random order of the rows, independent of the
    // departments and of each other.
    let mut nest_rank: Vec<usize> = (0..n).collect();
    nest_rank.shuffle(&mut rng);
    let mut parcel_rank: Vec<usize> = (0..n).collect();
    parcel_rank.shuffle(&mut rng);

    let managers: Vec<String> = (0..sizes.len())
        .map(|g| format!("{} {:04}", SURNAMES[rng.random_range(0..SURNAMES.len())], g + 1))
        .collect();
    let names: Vec<String> = COLUMNS.iter().map(|c| c.to_string()).collect();
    let mut writer = TableWriter::create(out, TableFormat::Csv, &names, &KINDS)?;
    for row in 0..n {
        let (a, b) = (nest_rank[row], parcel_rank[row]);
        let cells = [
            (row + 1).to_string(),
            format!("D{:04}", dept[row] + 1),
            managers[manager[row] as usize].clone(),
            start[a].to_string(),
            end[a].to_string(),
            weight[b].to_string(),
            shipping[b].to_string(),
        ];
        writer.write_cells(&cells)?;
    }
    writer.finish()?;

    let mut text = String::from(FD);
    text += DC_NEST;
    if p.dcs == 2 {
        text += DC_PARCEL;
    }
    let nodc_edges: u64 = nest.iter().chain(&parcel).map(|&(_, d)| d as u64).sum();
    let known = Known {
        violating_rows: Some((placed + nest.len() + parcel.len()) as u64),
        fd_edges: Some(fd_edges),
        nodc_edges: Some(nodc_edges),
        largest_group: sizes.iter().max().map(|&s| s as u64),
    };
    Ok((text, known))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nests_are_disjoint_and_sum_to_the_target() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for (target, max, n) in [(1, 50, 10), (500, 50, 1_000), (900, 300, 1_000), (0, 5, 5)] {
            let placed = nests(target, max, n, &mut rng).unwrap();
            assert_eq!(placed.iter().map(|&(_, d)| d as u64).sum::<u64>(), target);
            let mut ranges: Vec<(usize, usize)> = placed.iter().map(|&(r, d)| (r - d, r)).collect();
            ranges.sort_unstable();
            assert!(ranges.windows(2).all(|w| w[0].1 < w[1].0), "{ranges:?}");
            assert!(ranges.last().is_none_or(|r| r.1 < n));
            assert!(placed.iter().all(|&(_, d)| (1..=max as usize).contains(&d)));
        }
        assert!(nests(2_000, 50, 1_000, &mut rng).is_err());
    }

    #[test]
    fn group_edges_count_disagreeing_pairs() {
        assert_eq!(group_edges(&[5]), 0);
        assert_eq!(group_edges(&[4, 1]), 4);
        assert_eq!(group_edges(&[3, 2, 1]), 3 * 2 + 3 + 2);
    }
}
