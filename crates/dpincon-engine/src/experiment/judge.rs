//! Judging the suite's cells (issue 49): pure functions over
//! [`SuiteCell`]s, no I/O, so the figures a report prints can be tested on
//! hand-made cells.
//!
//! - A *case* is one table × ε × measure; each configuration's error there
//!   is compared with the oracle's by the **floored ratio**
//!   max(err, 0.01) / max(oracle, 0.01), so a near-zero oracle does not turn
//!   a harmless 0.004 into a ratio of 40.
//! - The pass criteria per case: I_MI ≤ max(0.10, 3 × oracle),
//!   I_P ≤ max(0.15, 3 × oracle) ([`oracle_limit`]); and the default ≤
//!   max(1.25 × best other, best other + 0.02) ([`others_limit`]).
//! - [`family_summaries`]: per family × ε × measure, the default's and the
//!   oracle's mean error, the best other configuration, the worst ratio,
//!   coverage and width, and how many cases pass.
//! - [`lofo`]: leave one family out. For each family F, the configuration
//!   with the least worst ratio over every other family's cases is chosen,
//!   and its figures on F are what a default chosen that way would score on
//!   a shape it never saw.

use std::collections::BTreeMap;

use dpincon_api::Measure;
use serde::Serialize;

use super::suite::SuiteCell;
use super::sweep::ORACLE;

/// How I_R's cells name their configuration: `ir-` and the `--ir-method`.
pub const REPAIR_PREFIX: &str = "ir-";

/// Errors below this count as this in a ratio.
pub const ERROR_FLOOR: f64 = 0.01;

/// max(error, [`ERROR_FLOOR`]) / max(oracle, [`ERROR_FLOOR`]).
pub fn floored_ratio(error: f64, oracle: f64) -> f64 {
    error.max(ERROR_FLOOR) / oracle.max(ERROR_FLOOR)
}

/// The limit on a measure's error given the oracle's: I_MI
/// max(0.10, 3 × oracle), I_P max(0.15, 3 × oracle); none for I_R.
pub fn oracle_limit(measure: Measure, oracle: f64) -> Option<f64> {
    match measure {
        Measure::Mi => Some(0.10f64.max(3.0 * oracle)),
        Measure::P => Some(0.15f64.max(3.0 * oracle)),
        Measure::R => None,
    }
}

/// The limit on the default's error given the best other
/// configuration's: max(1.25 × best, best + 0.02).
pub fn others_limit(best_other: f64) -> f64 {
    (1.25 * best_other).max(best_other + 0.02)
}

/// One table × ε × measure, with every configuration's cell there.
#[derive(Debug, Clone)]
pub struct Case<'a> {
    /// The table.
    pub table: &'a str,
    /// Its family.
    pub family: &'a str,
    /// ε per measure.
    pub epsilon: f64,
    /// `mi`, `p` or `r`.
    pub measure: Measure,
    /// The cells by configuration (the oracle's included).
    pub cells: BTreeMap<&'a str, &'a SuiteCell>,
}

impl Case<'_> {
    /// A configuration's mean relative error here.
    pub fn error(&self, config: &str) -> Option<f64> {
        self.cells.get(config).map(|c| c.mean_relative_error)
    }

    /// The oracle's error here (none for I_R).
    pub fn oracle(&self) -> Option<f64> {
        self.error(ORACLE)
    }

    /// A configuration's floored ratio to the oracle here.
    pub fn ratio(&self, config: &str) -> Option<f64> {
        Some(floored_ratio(self.error(config)?, self.oracle()?))
    }

    /// The configuration standing for `default` here: `default` itself, or
    /// for I_R, which no θ strategy changes, its one `ir-METHOD`.
    pub fn default_config<'d>(&'d self, default: &'d str) -> Option<&'d str> {
        if self.cells.contains_key(default) {
            return Some(default);
        }
        let mut repair = self.cells.keys().filter(|c| c.starts_with(REPAIR_PREFIX));
        match (self.measure, repair.next(), repair.next()) {
            (Measure::R, Some(only), None) => Some(only),
            _ => None,
        }
    }

    /// The configuration of `others` with the least error here.
    pub fn best_of<'c>(&self, others: &'c [String]) -> Option<(&'c str, f64)> {
        others
            .iter()
            .filter_map(|o| Some((o.as_str(), self.error(o)?)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }
}

/// The cells grouped into cases, in the order the cells first name them.
pub fn cases(cells: &[SuiteCell]) -> Vec<Case<'_>> {
    let mut index: BTreeMap<(&str, u64, Measure), usize> = BTreeMap::new();
    let mut out: Vec<Case<'_>> = Vec::new();
    for c in cells {
        let key = (c.table.as_str(), c.epsilon.to_bits(), c.measure);
        let i = *index.entry(key).or_insert_with(|| {
            out.push(Case {
                table: &c.table,
                family: &c.family,
                epsilon: c.epsilon,
                measure: c.measure,
                cells: BTreeMap::new(),
            });
            out.len() - 1
        });
        out[i].cells.insert(&c.config, c);
    }
    out
}

/// Worst floored ratio of `config` over `cases` with an oracle; infinite
/// when it has no cell in one of them (it failed there).
pub fn worst_ratio(cases: &[&Case<'_>], config: &str) -> f64 {
    cases
        .iter()
        .filter(|c| c.oracle().is_some())
        .map(|c| c.ratio(config).unwrap_or(f64::INFINITY))
        .fold(0.0, f64::max)
}

/// The families, in the order the cells first name them.
pub fn families(cells: &[SuiteCell]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for c in cells {
        if !out.contains(&c.family.as_str()) {
            out.push(&c.family);
        }
    }
    out
}

/// One family × ε × measure, the default against the oracle and the others.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FamilySummary {
    /// The family.
    pub family: String,
    /// ε per measure.
    pub epsilon: f64,
    /// `mi`, `p` or `r`.
    pub measure: Measure,
    /// Cases (tables) the default has a cell in.
    pub cases: usize,
    /// The default's mean error over them.
    pub default_error: f64,
    /// The oracle's mean error over them.
    pub oracle_error: Option<f64>,
    /// The other configuration with the least mean error over them.
    pub best_other: Option<String>,
    /// Its mean error.
    pub best_other_error: Option<f64>,
    /// The default's worst floored ratio to the oracle.
    pub worst_ratio: Option<f64>,
    /// Where it is worst.
    pub worst_table: Option<String>,
    /// The default's least coverage of the truth, as read over the runs.
    pub min_coverage: Option<f64>,
    /// The same with each cell's [`SuiteCell::confirmed_coverage`] in place
    /// of its first reading where it was re-measured.
    pub min_confirmed_coverage: Option<f64>,
    /// The median over tables of the default's median relative width.
    pub median_width: Option<f64>,
    /// Cases within [`oracle_limit`] (I_MI, I_P).
    pub within_oracle_limit: usize,
    /// Cases within [`others_limit`] of the case's best other.
    pub within_others_limit: usize,
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

fn median(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied()
}

/// Per family × ε × measure: the default's figures beside the oracle's and
/// the best of `others` (the configurations it must not lose to).
pub fn family_summaries(
    cells: &[SuiteCell],
    default: &str,
    others: &[String],
) -> Vec<FamilySummary> {
    let all = cases(cells);
    let mut groups: BTreeMap<(usize, u64, Measure), Vec<&Case<'_>>> = BTreeMap::new();
    let families = families(cells);
    for case in all.iter().filter(|c| c.default_config(default).is_some()) {
        let f = families.iter().position(|x| *x == case.family).unwrap_or(0);
        // ε > 0, so its bits sort as the number does.
        let key = (f, case.epsilon.to_bits(), case.measure);
        groups.entry(key).or_default().push(case);
    }
    groups
        .into_values()
        .map(|group| {
            let first = group[0];
            let errors = |config: &str| -> Vec<f64> {
                group.iter().filter_map(|c| c.error(config)).collect()
            };
            let defaults: Vec<f64> =
                group.iter().filter_map(|c| c.error(c.default_config(default)?)).collect();
            let best_other = others
                .iter()
                .filter(|o| group.iter().all(|c| c.error(o).is_some()))
                .filter_map(|o| Some((o.clone(), mean(&errors(o))?)))
                .min_by(|a, b| a.1.total_cmp(&b.1));
            let worst = group
                .iter()
                .filter_map(|c| Some((c.ratio(default)?, c.table)))
                .max_by(|a, b| a.0.total_cmp(&b.0));
            let of_default = |f: fn(&SuiteCell) -> Option<f64>| -> Vec<f64> {
                group.iter().filter_map(|c| f(c.cells.get(c.default_config(default)?)?)).collect()
            };
            let within_oracle_limit = group
                .iter()
                .filter(|c| {
                    let limit = c.oracle().and_then(|o| oracle_limit(c.measure, o));
                    limit.is_some_and(|l| c.error(default).is_some_and(|e| e <= l))
                })
                .count();
            let within_others_limit = group
                .iter()
                .filter(|c| {
                    c.best_of(others).is_none_or(|(_, best)| {
                        let error = c.default_config(default).and_then(|d| c.error(d));
                        error.is_some_and(|e| e <= others_limit(best))
                    })
                })
                .count();
            FamilySummary {
                family: first.family.into(),
                epsilon: first.epsilon,
                measure: first.measure,
                cases: group.len(),
                default_error: mean(&defaults).unwrap_or(f64::NAN),
                oracle_error: mean(&errors(ORACLE)),
                best_other: best_other.as_ref().map(|b| b.0.clone()),
                best_other_error: best_other.map(|b| b.1),
                worst_ratio: worst.map(|w| w.0),
                worst_table: worst.map(|w| w.1.to_string()),
                min_coverage: of_default(|c| c.coverage).into_iter().reduce(f64::min),
                min_confirmed_coverage: of_default(|c| c.confirmed_coverage.or(c.coverage))
                    .into_iter()
                    .reduce(f64::min),
                median_width: median(of_default(|c| c.median_relative_width)),
                within_oracle_limit,
                within_others_limit,
            }
        })
        .collect()
}

/// Each configuration's worst floored ratio per family, over the cases of
/// `measure` at `epsilon`: the suite's chart.
pub fn worst_by_family<'c>(
    cells: &'c [SuiteCell],
    configs: &[String],
    epsilon: f64,
    measure: Measure,
) -> Vec<(&'c str, Vec<f64>)> {
    let all = cases(cells);
    families(cells)
        .into_iter()
        .map(|family| {
            let chosen: Vec<&Case<'_>> = all
                .iter()
                .filter(|c| c.family == family && c.measure == measure && c.epsilon == epsilon)
                .collect();
            (family, configs.iter().map(|config| worst_ratio(&chosen, config)).collect())
        })
        .collect()
}

/// Leave-one-family-out for one held-out family.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LofoChoice {
    /// `mi` or `p`.
    pub measure: Measure,
    /// The family left out.
    pub held_out: String,
    /// The configuration with the least worst ratio over the other families.
    pub chosen: String,
    /// That worst ratio (over the training families).
    pub training_worst: f64,
    /// The chosen configuration's worst ratio on the held-out family.
    pub held_out_worst: f64,
    /// Its mean error there.
    pub held_out_error: f64,
    /// Held-out cases within [`oracle_limit`], of `held_out_cases`.
    pub held_out_within_limit: usize,
    /// The held-out family's cases.
    pub held_out_cases: usize,
    /// The first configuration's (the default's) worst ratio there.
    pub default_worst: f64,
    /// The configuration best on the held-out family in hindsight.
    pub hindsight: String,
    /// Its worst ratio there.
    pub hindsight_worst: f64,
}

/// The configuration of `configs` with the least worst ratio over
/// `cases`, and that ratio; ties go to the earlier configuration.
pub fn least_worst(cases: &[&Case<'_>], configs: &[String]) -> Option<(String, f64)> {
    configs.iter().map(|c| (c.clone(), worst_ratio(cases, c))).fold(None, |best, (c, w)| match best
    {
        Some((_, b)) if b <= w => best,
        _ => Some((c, w)),
    })
}

/// For each family, the configuration of `configs` (the default first)
/// chosen on every other family by least worst ratio over `measure`'s
/// cases at every ε, and how it does on the family left out.
pub fn lofo(cells: &[SuiteCell], configs: &[String], measure: Measure) -> Vec<LofoChoice> {
    let all = cases(cells);
    let of_measure: Vec<&Case<'_>> =
        all.iter().filter(|c| c.measure == measure && c.oracle().is_some()).collect();
    let mut out = Vec::new();
    for family in families(cells) {
        let (held, training): (Vec<&Case<'_>>, Vec<&Case<'_>>) =
            of_measure.iter().partition(|c| c.family == family);
        if held.is_empty() || training.is_empty() {
            continue;
        }
        let Some((chosen, training_worst)) = least_worst(&training, configs) else { continue };
        let Some((hindsight, hindsight_worst)) = least_worst(&held, configs) else { continue };
        let errors: Vec<f64> = held.iter().filter_map(|c| c.error(&chosen)).collect();
        let within = held
            .iter()
            .filter(|c| {
                let limit = c.oracle().and_then(|o| oracle_limit(c.measure, o));
                limit.is_some_and(|l| c.error(&chosen).is_some_and(|e| e <= l))
            })
            .count();
        out.push(LofoChoice {
            measure,
            held_out: family.into(),
            held_out_worst: worst_ratio(&held, &chosen),
            held_out_error: mean(&errors).unwrap_or(f64::NAN),
            held_out_within_limit: within,
            held_out_cases: held.len(),
            default_worst: configs.first().map_or(f64::NAN, |d| worst_ratio(&held, d)),
            chosen,
            training_worst,
            hindsight,
            hindsight_worst,
        });
    }
    out
}

#[cfg(test)]
mod tests;
