//! The judge on hand-made cells.

use super::*;

fn cell(
    table: &str,
    family: &str,
    epsilon: f64,
    measure: Measure,
    config: &str,
    error: f64,
) -> SuiteCell {
    SuiteCell {
        table: table.into(),
        family: family.into(),
        rows: 1000,
        epsilon,
        measure,
        config: config.into(),
        exact: 100,
        runs: 10,
        mean_relative_error: error,
        coverage: Some(0.9 + error / 10.0),
        median_relative_width: Some(2.0 * error),
        point_in_interval: Some(1.0),
        mean_theta: None,
        confirmed_coverage: None,
    }
}

/// A table, its family, the oracle's error and each configuration's.
type Row<'a> = (&'a str, &'a str, f64, &'a [(&'a str, f64)]);

/// Cells of `mi` at ε = 1, one [`Row`] a table.
fn suite(rows: &[Row<'_>]) -> Vec<SuiteCell> {
    let mut out = Vec::new();
    for &(table, family, oracle, configs) in rows {
        out.push(cell(table, family, 1.0, Measure::Mi, ORACLE, oracle));
        for &(config, error) in configs {
            out.push(cell(table, family, 1.0, Measure::Mi, config, error));
        }
    }
    out
}

fn names(configs: &[&str]) -> Vec<String> {
    configs.iter().map(|c| c.to_string()).collect()
}

#[test]
fn ratios_are_floored_so_near_zero_oracles_do_not_explode() {
    assert_eq!(floored_ratio(0.004, 0.0001), 1.0);
    assert!((floored_ratio(0.05, 0.0001) - 5.0).abs() < 1e-12);
    assert!((floored_ratio(0.3, 0.1) - 3.0).abs() < 1e-12);
    // Better than the oracle (a class count can be): below 1.
    assert!(floored_ratio(0.02, 0.04) < 1.0);
}

#[test]
fn the_issue_limits() {
    assert_eq!(oracle_limit(Measure::Mi, 0.01), Some(0.10));
    assert_eq!(oracle_limit(Measure::Mi, 0.05), Some(0.15000000000000002));
    assert_eq!(oracle_limit(Measure::P, 0.01), Some(0.15));
    assert_eq!(oracle_limit(Measure::P, 0.2), Some(0.6000000000000001));
    assert_eq!(oracle_limit(Measure::R, 0.2), None);
    // Small errors get the additive slack, large ones the 25%.
    assert!((others_limit(0.04) - 0.06).abs() < 1e-12);
    assert!((others_limit(0.4) - 0.5).abs() < 1e-12);
}

/// A configuration that wins on average but loses 5× on one family is not
/// chosen while that family is in training; with it held out, it is.
#[test]
fn lofo_prefers_the_least_worst_case_over_the_best_average() {
    let cells = suite(&[
        ("a1", "A", 0.1, &[("steady", 0.15), ("spiky", 0.1)]),
        ("a2", "A", 0.1, &[("steady", 0.15), ("spiky", 0.1)]),
        ("b1", "B", 0.1, &[("steady", 0.15), ("spiky", 0.1)]),
        ("c1", "C", 0.1, &[("steady", 0.15), ("spiky", 0.5)]),
    ]);
    let configs = names(&["steady", "spiky"]);
    // Over everything, spiky's mean is lower, its worst case 5×.
    let all = cases(&cells);
    let refs: Vec<&Case<'_>> = all.iter().collect();
    assert!((worst_ratio(&refs, "spiky") - 5.0).abs() < 1e-9);
    assert_eq!(least_worst(&refs, &configs).unwrap().0, "steady");

    let choices = lofo(&cells, &configs, Measure::Mi);
    assert_eq!(choices.len(), 3);
    let by = |f: &str| choices.iter().find(|c| c.held_out == f).unwrap();
    assert_eq!(by("A").chosen, "steady", "C trains: spiky's 5× rules it out");
    assert_eq!(by("B").chosen, "steady");
    let c = by("C");
    assert_eq!(c.chosen, "spiky", "without C, spiky never loses");
    assert!((c.training_worst - 1.0).abs() < 1e-9);
    assert!((c.held_out_worst - 5.0).abs() < 1e-9, "and it pays on C: {c:?}");
    assert_eq!((c.held_out_within_limit, c.held_out_cases), (0, 1));
    assert_eq!(c.hindsight, "steady");
    assert!((c.default_worst - 1.5).abs() < 1e-9, "the first configuration is the default");
}

#[test]
fn a_configuration_missing_a_case_is_never_chosen() {
    let cells = suite(&[
        ("a1", "A", 0.1, &[("whole", 0.3), ("partial", 0.1)]),
        ("b1", "B", 0.1, &[("whole", 0.3)]),
        ("c1", "C", 0.1, &[("whole", 0.3), ("partial", 0.1)]),
    ]);
    let choices = lofo(&cells, &names(&["partial", "whole"]), Measure::Mi);
    let by = |f: &str| choices.iter().find(|c| c.held_out == f).unwrap();
    assert_eq!(by("A").chosen, "whole");
    assert_eq!(by("B").chosen, "partial", "B held out: partial is complete elsewhere");
    assert_eq!(by("B").held_out_worst, f64::INFINITY);
}

#[test]
fn family_summaries_compare_the_default_with_the_oracle_and_the_best_other() {
    let mut cells = suite(&[
        ("a1", "A", 0.02, &[("def", 0.05), ("x", 0.04), ("y", 0.08)]),
        ("a2", "A", 0.10, &[("def", 0.50), ("x", 0.20), ("y", 0.30)]),
        ("b1", "B", 0.001, &[("def", 0.005), ("x", 0.004), ("y", 0.5)]),
    ]);
    // I_R: its one `ir-` configuration stands for the default; no oracle,
    // no ratio, no others.
    cells.push(cell("a1", "A", 1.0, Measure::R, "ir-combined", 0.1));
    let rows = family_summaries(&cells, "def", &names(&["x", "y"]));
    assert_eq!(rows.len(), 3);
    let a = &rows[0];
    assert_eq!((a.family.as_str(), a.measure, a.cases), ("A", Measure::Mi, 2));
    assert!((a.default_error - 0.275).abs() < 1e-12);
    assert!((a.oracle_error.unwrap() - 0.06).abs() < 1e-12);
    assert_eq!(a.best_other.as_deref(), Some("x"));
    assert!((a.best_other_error.unwrap() - 0.12).abs() < 1e-12);
    assert!((a.worst_ratio.unwrap() - 5.0).abs() < 1e-9);
    assert_eq!(a.worst_table.as_deref(), Some("a2"));
    // a1: 0.05 ≤ max(0.10, 0.06); a2: 0.50 > max(0.10, 0.30).
    assert_eq!(a.within_oracle_limit, 1);
    // a1: 0.05 ≤ max(0.05, 0.06); a2: 0.50 > max(0.25, 0.22).
    assert_eq!(a.within_others_limit, 1);
    assert!((a.min_coverage.unwrap() - 0.905).abs() < 1e-12);
    assert_eq!(a.min_confirmed_coverage, a.min_coverage, "nothing re-measured");
    assert!((a.median_width.unwrap() - 1.0).abs() < 1e-12, "the upper median of 0.1 and 1.0");
    let r = &rows[1];
    assert_eq!((r.measure, r.worst_ratio, r.within_oracle_limit), (Measure::R, None, 0));
    assert_eq!((r.default_error, r.min_coverage), (0.1, Some(0.91)));
    assert_eq!(r.within_others_limit, 1, "no other on I_R: nothing to lose to");
    let b = &rows[2];
    assert!((b.worst_ratio.unwrap() - 1.0).abs() < 1e-12, "0.005 vs 0.001: both floored");
    assert_eq!((b.within_oracle_limit, b.within_others_limit), (1, 1));

    let chart = worst_by_family(&cells, &names(&["def", "x"]), 1.0, Measure::Mi);
    assert_eq!(chart[0].0, "A");
    assert!((chart[0].1[0] - 5.0).abs() < 1e-9 && (chart[0].1[1] - 2.0).abs() < 1e-9);
    assert!((chart[1].1[1] - 1.0).abs() < 1e-9);
}

#[test]
fn a_re_measured_coverage_replaces_its_first_reading() {
    let mut cells = suite(&[
        ("a1", "A", 0.02, &[("def", 0.05), ("x", 0.04)]),
        ("a2", "A", 0.10, &[("def", 0.40), ("x", 0.20)]),
    ]);
    // a1's default read 0.905, a2's 0.94: a2's re-measure leaves a1 the least.
    let a2 = cells.iter_mut().find(|c| c.table == "a2" && c.config == "def").unwrap();
    a2.confirmed_coverage = Some(0.97);
    let a1 = cells.iter_mut().find(|c| c.table == "a1" && c.config == "def").unwrap();
    a1.confirmed_coverage = Some(0.96);
    // An other configuration's re-measure is not the default's.
    let x = cells.iter_mut().find(|c| c.table == "a1" && c.config == "x").unwrap();
    x.confirmed_coverage = Some(0.5);
    let a = &family_summaries(&cells, "def", &names(&["x"]))[0];
    assert!((a.min_coverage.unwrap() - 0.905).abs() < 1e-12, "as read");
    assert_eq!(a.min_confirmed_coverage, Some(0.96));
}
