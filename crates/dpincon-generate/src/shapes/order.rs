//! `order`: a DC with no equality predicate,
//! `not(t1.gain>t2.gain&t1.loss<t2.loss)`, plus the FD `desk -> region`
//! for contrast.
//!
//! Nothing groups the rows of the order DC, so no group size bounds a row's
//! degree: a release cannot get a degree bound from the schema and must
//! estimate one. `loss` is a non-decreasing function of `gain` (a 30%
//! haircut), so the DC holds on clean rows. A violating row keeps its gain
//! but gets a loss just below the clean loss of a lower-gain row `d` ranks
//! below it, `d` log-uniform in 1..=n/5: it then conflicts with the clean
//! rows between (about `d` of them, so degrees range from 1 to hundreds at
//! the default size) and with nothing above it. Clean rows are never the
//! `t1` of a violation, so the rows out of order are exactly the violating
//! rows. The FD holds (its groups are desks of Zipf-like sizes): it shows
//! what an equality predicate buys, a public bound, on the same table.

use rand::Rng;
use rand::seq::{SliceRandom, index};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, LogNormal};

use super::Outcome;
use crate::GenerateError;
use crate::table::{Kind, TableWriter};
use crate::tax::{cumulative, pick};

pub(super) const COLUMNS: [&str; 5] = ["id", "desk", "region", "gain", "loss"];
pub(super) const KINDS: [Kind; 5] = [Kind::Int, Kind::Str, Kind::Str, Kind::Int, Kind::Int];
pub(super) const CONSTRAINTS: &str = "not(t1.gain>t2.gain&t1.loss<t2.loss)\ndesk -> region\n";
/// The same order DC inside each desk: an equality predicate partitions the
/// rows, so a desk's size bounds a row's degree (the training suite's
/// `order` family has both forms on the same kind of table).
pub(super) const CONSTRAINTS_BY_DESK: &str =
    "not(t1.desk=t2.desk&t1.gain>t2.gain&t1.loss<t2.loss)\ndesk -> region\n";

const REGIONS: [&str; 6] = ["AMER", "EMEA", "APAC", "LATAM", "NORDICS", "MEA"];
/// Trading desks; desk sizes ∝ 1 / rank^0.6.
const DESKS: usize = 40;
const DESK_ZIPF: f64 = 0.6;
/// Gains are log-normal around 20,000 (σ = 1), whole units.
const GAIN_MEDIAN: f64 = 20_000.0;
const GAIN_SIGMA: f64 = 1.0;

/// The clean loss of a gain: ≥ 1, non-decreasing.
fn clean_loss(gain: u64) -> u64 {
    1 + gain * 3 / 10
}

/// An `order` table, violations placed, ready to write.
pub(super) struct Order {
    /// Per row, in output order.
    desk: Vec<u8>,
    gain: Vec<u64>,
    loss: Vec<u64>,
    desk_region: Vec<u8>,
    violating: u64,
    largest_desk: u64,
}

impl Order {
    pub(super) fn draw(
        n: u32,
        violations: u64,
        rng: &mut ChaCha8Rng,
    ) -> Result<Self, GenerateError> {
        let n = n as usize;
        // Rank 0 (the smallest gain) is never moved, so every violating row
        // has a clean row below it to undercut.
        if violations > n.saturating_sub(1) as u64 {
            return Err(GenerateError::Option(format!(
                "{violations} rows out of order need more than {n} rows (the row with the \
                 smallest gain stays in order)"
            )));
        }
        let dist = LogNormal::new(GAIN_MEDIAN.ln(), GAIN_SIGMA)
            .map_err(|e| GenerateError::Option(format!("gain distribution: {e}")))?;
        // Gains by rank: sorted, then made strictly increasing, so a lower
        // rank always means a strictly smaller gain.
        let mut by_rank: Vec<u64> = (0..n).map(|_| dist.sample(rng).round() as u64).collect();
        by_rank.sort_unstable();
        for r in 1..n {
            by_rank[r] = by_rank[r].max(by_rank[r - 1] + 1);
        }
        let mut loss_by_rank: Vec<u64> = by_rank.iter().map(|&g| clean_loss(g)).collect();

        let mut moved = vec![false; n];
        let chosen: Vec<usize> = index::sample(rng, n.saturating_sub(1), violations as usize)
            .into_iter()
            .map(|i| i + 1)
            .collect();
        for &r in &chosen {
            moved[r] = true;
        }
        let max_shift = (n / 5).max(1) as f64;
        for &r in &chosen {
            // d log-uniform in 1..=n/5: mostly short moves, a few long ones.
            let d = (max_shift + 1.0).powf(rng.random::<f64>()).floor().max(1.0) as usize;
            let mut target = r.saturating_sub(d);
            while moved[target] {
                target -= 1; // rank 0 is never moved
            }
            // Strictly below the target's clean loss (≥ 1): in conflict with
            // the target, and with every clean row between it and `r`.
            loss_by_rank[r] = clean_loss(by_rank[target]) - 1;
        }

        // Rows in random order, so the table is not sorted by gain.
        let mut rank_of_row: Vec<usize> = (0..n).collect();
        rank_of_row.shuffle(rng);
        let gain = rank_of_row.iter().map(|&k| by_rank[k]).collect();
        let loss = rank_of_row.iter().map(|&k| loss_by_rank[k]).collect();

        let mut desk_rank: Vec<usize> = (0..DESKS).collect();
        desk_rank.shuffle(rng);
        let desk_cum =
            cumulative(desk_rank.iter().map(|&r| 1.0 / ((r + 1) as f64).powf(DESK_ZIPF)));
        let desk: Vec<u8> = (0..n).map(|_| pick(&desk_cum, rng) as u8).collect();
        let desk_region = (0..DESKS).map(|_| rng.random_range(0..REGIONS.len()) as u8).collect();
        let mut sizes = [0u64; DESKS];
        for &d in &desk {
            sizes[usize::from(d)] += 1;
        }
        Ok(Order {
            desk,
            gain,
            loss,
            desk_region,
            violating: violations,
            largest_desk: sizes.into_iter().max().unwrap_or(0),
        })
    }

    pub(super) fn outcome(&self) -> Outcome {
        Outcome { violating_rows: self.violating, largest_group: self.largest_desk }
    }

    pub(super) fn write(&self, writer: &mut TableWriter) -> Result<(), GenerateError> {
        for row in 0..self.gain.len() {
            let desk = usize::from(self.desk[row]);
            let id = (row + 1).to_string();
            let name = format!("D{:02}", desk + 1);
            let gain = self.gain[row].to_string();
            let loss = self.loss[row].to_string();
            writer.write_row(&[
                Some(id.as_str()),
                Some(name.as_str()),
                Some(REGIONS[usize::from(self.desk_region[desk])]),
                Some(gain.as_str()),
                Some(loss.as_str()),
            ])?;
        }
        Ok(())
    }
}
