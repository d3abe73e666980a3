//! `ub-direct`, the default, end to end over a real pass: each round's
//! rule (README of this crate) where it applies, its budget adding up to
//! ε, and every θ it looks up one the pass computed.

mod common;

use std::collections::HashMap;

use common::{fd_graph, graph_facts, no_equality_facts, run};
use dpincon_graph::{ConflictGraph, Edge};
use dpincon_release::{Budget, NoiseRng, ProjectedMeasure, ProjectedSpec, Strategy, TableFacts};

#[test]
fn ub_direct_releases_at_the_minimal_set_bound_plus_its_margin() {
    let graph = fd_graph(20, 30); // max degree 24, maxfreq 30, 600 rows
    let spec = ProjectedSpec::new(ProjectedMeasure::Mi, Budget::new(1e6).unwrap());
    let (prepared, r) =
        run(&graph, &spec, &graph_facts(&graph, 30, false), &mut NoiseRng::seeded(1)).unwrap();
    let bound = r.degree_bound.unwrap();
    assert_eq!((bound.value, bound.sets), (29, 1), "a huge ε releases maxfreq − 1 exactly");
    assert_eq!(r.theta, (bound.value + bound.margin) as u32);
    assert!(r.selection.is_empty(), "no selection step");
    assert!(r.max_rows.unwrap().estimated, "ñ caps θ* when no row bound is declared");
    assert_eq!(prepared.thetas().len(), 1);
    // θ* ≥ the max degree truncates nothing; 10% before the release (5% of
    // it on ñ, the rest on d̃), 90% on the release.
    let u = r.budget;
    assert!((u.max_rows - 5e3).abs() < 1.0 && (u.degree_bound - 9.5e4).abs() < 1.0);
    assert!((u.release - 9e5).abs() < 1.0);
    // A declared row bound caps θ*; below d̃ it puts the hubs' floor under
    // it, whose ñ (0.01 ε) is drawn beside the declared bound.
    let capped = ProjectedSpec { max_rows: Some(12), ..spec.clone() };
    let (_, r) =
        run(&graph, &capped, &graph_facts(&graph, 30, false), &mut NoiseRng::seeded(1)).unwrap();
    assert!(r.theta <= 12 && r.selection[0].mechanism == "floor-look");
    assert!((r.budget.max_rows - 1e4).abs() < 1.0, "{:?}", r.budget);
    // So does an estimated one, below d̃: no degree exceeds n − 1.
    let small = TableFacts { rows: 20, ..graph_facts(&graph, 30, false) };
    let (_, r) = run(&graph, &spec, &small, &mut NoiseRng::seeded(1)).unwrap();
    assert_eq!(u64::from(r.theta), r.max_rows.unwrap().value);
    assert!(r.theta < 29);
}

/// Where d̃ bounds the degrees, `ub-direct` projects at θ ≥ 2 however far
/// d̃'s noise falls: duplicated pairs (degree 1) beside triples (degree 2)
/// would lose a third of the triples' edges at θ = 1. Only the fourteenth
/// round's GEM step, which sees f(G_1) fall short, may still choose 1.
#[test]
fn ub_direct_projects_at_two_or_more_when_d_tilde_falls_below() {
    // 100 pairs and 100 triples of one key: degrees 1 and 2.
    let mut edges = Vec::new();
    for g in 0..100u32 {
        edges.push(Edge::new(2 * g, 2 * g + 1));
        let t = 200 + 3 * g;
        edges.extend([Edge::new(t, t + 1), Edge::new(t, t + 2), Edge::new(t + 1, t + 2)]);
    }
    let graph = ConflictGraph::from_edges(500, edges);
    let spec = ProjectedSpec::new(ProjectedMeasure::Mi, Budget::new(0.5).unwrap());
    let (mut below, mut by_gem) = (0, 0);
    let mut ones = Vec::new();
    for seed in 0..300 {
        let (_, r) =
            run(&graph, &spec, &graph_facts(&graph, 3, false), &mut NoiseRng::seeded(seed))
                .unwrap();
        let bound = r.degree_bound.unwrap();
        let gem = r.selection.iter().any(|s| s.mechanism == "gem");
        // The first draw, whose margin is the larger: a second one is
        // averaged in where the first is mostly noise.
        if !gem && r.budget.degree_bound < 0.07 {
            below += usize::from(bound.value + bound.margin < 2);
        }
        by_gem += usize::from(gem);
        if r.theta < 2 {
            assert!(gem, "seed {seed}: θ* = 1 without a GEM step");
            ones.push(seed);
        }
    }
    // Both bounds below 2 happen, and GEM runs in most runs here, but
    // f(G_1) is half of f(G_2), so it rarely keeps θ = 1.
    assert!(below + by_gem > 200, "below 2: {below}, by GEM: {by_gem}");
    assert!(ones.len() < by_gem / 5, "θ* = 1 in {} of {by_gem} GEM runs", ones.len());
}

/// Where d̃ is still mostly noise after its second draw, I_MI's θ* comes
/// from a GEM step with 0.2 ε over the halvings of d̃ + margin (the
/// fourteenth round): on duplicated pairs, whose f(G_1) is all of I_MI, it
/// chooses 1 most often; everywhere the budget adds up to ε.
#[test]
fn ub_direct_chooses_theta_by_gem_where_both_draws_are_mostly_noise() {
    let graph = ConflictGraph::from_edges(2000, (0..100).map(|g| Edge::new(2 * g, 2 * g + 1)));
    let epsilon = 0.5;
    let spec = ProjectedSpec::new(ProjectedMeasure::Mi, Budget::new(epsilon).unwrap());
    let (mut by_gem, mut chosen, mut tops) = (0, HashMap::new(), 0u32);
    for seed in 0..300 {
        let (_, r) =
            run(&graph, &spec, &graph_facts(&graph, 2, false), &mut NoiseRng::seeded(seed))
                .unwrap();
        let u = r.budget;
        assert!((u.max_rows + u.degree_bound + u.selection + u.release - epsilon).abs() < 1e-9);
        let Some(step) = r.selection.iter().find(|s| s.mechanism == "gem") else {
            continue;
        };
        by_gem += 1;
        assert!((u.selection - 0.2 * epsilon).abs() < 1e-9, "{u:?}");
        assert!(step.candidates.iter().all(|&t| t <= step.theta_max));
        *chosen.entry(r.theta).or_insert(0) += 1;
        tops += step.theta_max;
    }
    // d = 1, and the average's sd is about 11.7 at ε = 0.5: d̃ + margin is
    // within 2 sd in about nine runs of ten.
    assert!(by_gem > 220, "GEM ran in {by_gem} of 300 runs");
    let mode = chosen.iter().max_by_key(|(_, n)| **n).map(|(t, _)| *t);
    assert_eq!(mode, Some(1), "{chosen:?}");
    let mean: f64 = chosen.iter().map(|(t, n)| f64::from(*t * n)).sum::<f64>() / by_gem as f64;
    let mean_top = f64::from(tops) / by_gem as f64;
    assert!(mean < 0.6 * mean_top, "mean θ* {mean:.1} against d̃ + margin {mean_top:.1}");
}

/// Where d̃ + margin is within three of its noise's standard deviations,
/// d̃ is drawn again with 0.2 ε from the release and averaged: the budget
/// says so, and the average's spread is √2/√(ε0² + ε_s²), not √2/ε0.
#[test]
fn ub_direct_draws_a_noise_dominated_d_tilde_again() {
    let graph = fd_graph(20, 30); // maxfreq 30: d = 29
    let epsilon = 0.5;
    let spec = ProjectedSpec::new(ProjectedMeasure::Mi, Budget::new(epsilon).unwrap());
    // ε0 = 0.1/√ε of ε, less ñ's 5%.
    let eps0 = 0.1 / epsilon.sqrt() * epsilon * 0.95;
    let (mut again, mut values) = (0, Vec::new());
    for seed in 0..400 {
        let facts = graph_facts(&graph, 30, false);
        let (_, r) = run(&graph, &spec, &facts, &mut NoiseRng::seeded(seed)).unwrap();
        let u = r.budget;
        if u.degree_bound > eps0 * 1.01 {
            again += 1;
            assert!((u.degree_bound - (eps0 + 0.2 * epsilon)).abs() < 1e-9, "{u:?}");
            values.push(r.degree_bound.unwrap().value as f64);
        } else {
            assert!((u.degree_bound - eps0).abs() < 1e-9, "{u:?}");
        }
        assert!((u.max_rows + u.degree_bound + u.selection + u.release - epsilon).abs() < 1e-9);
    }
    // d + margin (11) ≤ 3 sd (63) unless the first noise exceeds +23: most runs.
    assert!(again > 300, "drawn again in {again} of 400 runs");
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let sd = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / values.len() as f64).sqrt();
    let expected = 2f64.sqrt() / (eps0.powi(2) + (0.2 * epsilon).powi(2)).sqrt();
    // Kept only when low, the average is a little narrower than `expected`;
    // one draw alone would spread 2f64.sqrt() / eps0 ≈ 21.
    assert!(sd > 0.6 * expected && sd < 1.15 * expected, "sd {sd:.1}, expected {expected:.1}");
}

/// I_P's noise scale is kept at 7% of ñ: θ* = min(d̃ + margin,
/// ⌊0.07·ε2·ñ⌋ − 1). I_MI is not capped that way.
#[test]
fn ub_direct_caps_problematic_noise_at_seven_percent_of_the_rows() {
    let graph = fd_graph(20, 30);
    for seed in 0..20 {
        let spec = ProjectedSpec {
            max_rows: Some(200),
            ..ProjectedSpec::new(ProjectedMeasure::P, Budget::new(1.0).unwrap())
        };
        let (_, r) =
            run(&graph, &spec, &graph_facts(&graph, 30, false), &mut NoiseRng::seeded(seed))
                .unwrap();
        let bound = r.degree_bound.unwrap();
        let top = (bound.value + bound.margin).clamp(1, 200) as u32;
        // ε2 = 0.9, or 0.7 after a second d̃: ⌊0.07 · ε2 · 200⌋ − 1 = 11 or 8.
        let cap = (0.07 * r.budget.release * 200.0).floor() as u32 - 1;
        assert!([11, 8].contains(&cap), "cap {cap}");
        assert_eq!(r.theta, top.min(cap), "seed {seed}, d̃ {bound:?}");
        assert!(r.noise_scale <= 0.07 * 200.0 + 1e-9);
        let mi = ProjectedSpec { measure: ProjectedMeasure::Mi, ..spec };
        let (_, r) =
            run(&graph, &mi, &graph_facts(&graph, 30, false), &mut NoiseRng::seeded(seed)).unwrap();
        let bound = r.degree_bound.unwrap();
        assert_eq!(r.theta, (bound.value + bound.margin).clamp(1, 200) as u32);
    }
    // No degree bound (no DC has an equality): I_P is released at the cap
    // straight away, I_MI looks first.
    let spec = ProjectedSpec::new(ProjectedMeasure::P, Budget::new(1.0).unwrap());
    let (_, r) = run(&graph, &spec, &no_equality_facts(&graph), &mut NoiseRng::seeded(3)).unwrap();
    assert!(r.selection.is_empty() && r.degree_bound.is_none());
    assert!(r.budget.max_rows > 0.0 && (r.budget.max_rows + r.budget.release - 1.0).abs() < 1e-9);
    assert!(r.noise_scale <= 0.07 * r.max_rows.unwrap().value as f64);
}

/// A generous declared row bound (ten times the 600 rows) no longer sets
/// I_P's noise cap or its interval's row bound: `ub-direct` draws ñ beside
/// it and reads min(declared, ñ + its 99.5% quantile), which holds n with
/// probability ≥ 99.5%. I_MI below the floor draws nothing on rows.
#[test]
fn ub_direct_problematic_reads_the_row_count_beside_a_generous_declared_bound() {
    let graph = fd_graph(20, 30);
    let spec = ProjectedSpec {
        max_rows: Some(6_000),
        ..ProjectedSpec::new(ProjectedMeasure::P, Budget::new(1.0).unwrap())
    };
    let mut held = 0;
    for seed in 0..50 {
        let (_, r) =
            run(&graph, &spec, &graph_facts(&graph, 30, false), &mut NoiseRng::seeded(seed))
                .unwrap();
        let rows = r.bounds.unwrap().rows.unwrap();
        // ε_n = 5% of ε1 = 0.1 ε: a 99.5% quantile of ln(100)/0.005 ≈ 921.
        assert!(rows < 3_000, "seed {seed}: rows bound {rows}");
        held += usize::from(rows >= 600);
        assert!((r.budget.max_rows - 0.005).abs() < 1e-9, "{:?}", r.budget);
        assert_eq!(r.max_rows.unwrap().value, 6_000, "n_max stays the declared bound");
        assert!(r.noise_scale <= 0.07 * rows as f64 + 1e-9);
    }
    assert!(held >= 48, "the bound held n in {held} of 50");
    let mi = ProjectedSpec { measure: ProjectedMeasure::Mi, ..spec };
    let (_, r) =
        run(&graph, &mi, &graph_facts(&graph, 30, false), &mut NoiseRng::seeded(1)).unwrap();
    assert_eq!((r.budget.max_rows, r.bounds.unwrap().rows), (0.0, Some(6_000)));
}

/// Without a degree bound (no DC has an equality) `ub-direct`'s I_MI starts at the floor
/// θ_c = ⌊0.1·ñ⌋ below n_max, and one noisy look at f(G_θc) raises θ*
/// while the release's noise stays under an eighth of the count.
#[test]
fn ub_direct_floors_imi_without_a_degree_bound() {
    let graph = fd_graph(20, 30); // 1,920 edges on 600 rows
    let spec = ProjectedSpec {
        max_rows: Some(600),
        ..ProjectedSpec::new(ProjectedMeasure::Mi, Budget::new(50.0).unwrap())
    };
    let (_, r) = run(&graph, &spec, &no_equality_facts(&graph), &mut NoiseRng::seeded(1)).unwrap();
    // ε_t = 4.75 (the selection's tenth, less the 5% on ñ, drawn beside the
    // declared bound; its 99.5% bound is above 600, so θ_c = 60): the
    // look's scale is 13, the count 1,920 absorbs any θ up to n_max.
    assert_eq!(r.selection.len(), 1);
    assert_eq!((r.selection[0].mechanism.as_str(), r.selection[0].sensitivity), ("floor-look", 60));
    assert_eq!(r.theta, 600);
    let u = r.budget;
    assert!((u.selection - 4.75).abs() < 1e-9 && (u.max_rows - 0.25).abs() < 1e-9, "{u:?}");
    assert!((u.release - 45.0).abs() < 1e-9);
    // At ε = 1/8 the count absorbs little more than the floor: over seeds,
    // θ* is mostly the floor and always on the grid from it.
    let low = ProjectedSpec { epsilon: Budget::new(0.125).unwrap(), ..spec };
    let mut floored = 0;
    for seed in 0..50 {
        let f = no_equality_facts(&graph);
        let (_, r) = run(&graph, &low, &f, &mut NoiseRng::seeded(seed)).unwrap();
        assert_eq!(
            r.selection.iter().map(|s| s.mechanism.as_str()).collect::<Vec<_>>(),
            ["floor-look"]
        );
        assert!(r.selection[0].candidates.contains(&r.theta) && r.theta >= 60);
        floored += usize::from(r.theta == 60);
    }
    assert!(floored >= 25, "θ* at the floor in {floored} of 50");
}

/// Every θ a release looks up is one the pass computed, whatever the
/// client's candidates and the row bound: a lookup that failed only when
/// the maximum degree exceeds n_max would end a charged job iff a private
/// fact holds (issue 26). A star of degree 60 with `max-rows` 10 (below
/// the true n) and candidates that omit n_max: `ub-direct`'s look reads
/// f(G_{n_max}), so the pass must have evaluated it.
#[test]
fn every_lookup_is_a_computed_theta_even_past_a_low_row_bound() {
    let star =
        ConflictGraph::from_edges(61, (1..61).map(|leaf| Edge::new(0, leaf)).collect::<Vec<_>>());
    for strategy in Strategy::ALL.into_iter().filter(|s| s.is_private()) {
        for measure in [ProjectedMeasure::Mi, ProjectedMeasure::P] {
            for (candidates, max_rows) in
                [(Some(vec![1, 2]), Some(10)), (Some(vec![3]), None), (None, Some(10))]
            {
                for unbounded in [true, false] {
                    let spec = ProjectedSpec {
                        strategy,
                        candidates: candidates.clone(),
                        max_rows,
                        ..ProjectedSpec::new(measure, Budget::new(1.0).unwrap())
                    };
                    let f = graph_facts(&star, 61, unbounded);
                    for seed in 0..5 {
                        let what = format!("{strategy:?} {measure:?} {candidates:?} {max_rows:?}");
                        let (prepared, r) = run(&star, &spec, &f, &mut NoiseRng::seeded(seed))
                            .unwrap_or_else(|e| panic!("{what}: {e}"));
                        let thetas: Vec<u32> = prepared.thetas().iter().map(|t| t.get()).collect();
                        assert!(thetas.contains(&r.theta), "{what}: θ* {} ∉ {thetas:?}", r.theta);
                    }
                }
            }
        }
    }
}

/// Beside a DC without equality, `ub-direct` still projects at the
/// equality constraints' d̃ (structure first: issue 49), not at a tenth of
/// the rows, rising from there only while its noise stays a thirtieth of
/// the count; d̃ bounds no degree there, so the interval rests on n and
/// still holds the count with the other DC's edges past θ*.
#[test]
fn ub_direct_beside_a_dc_without_equality_projects_at_the_equality_bound() {
    // FD groups of 30 (max degree 24) and a few edges of another DC
    // that make row 0 a hub of 40 more edges.
    let fd = fd_graph(200, 30);
    let mut edges: Vec<Edge> = fd.edges().collect();
    edges.extend((1..41).map(|v| Edge::new(0, v * 13)));
    edges.sort_unstable();
    edges.dedup();
    let graph = ConflictGraph::from_edges(fd.nodes(), edges);
    let total = graph.edge_count() as i64;
    for measure in [ProjectedMeasure::Mi, ProjectedMeasure::P] {
        let spec = ProjectedSpec {
            max_rows: Some(6000),
            ..ProjectedSpec::new(measure, Budget::new(2.0).unwrap())
        };
        let (mut covered, runs) = (0, 100);
        for seed in 0..runs {
            let (prepared, r) =
                run(&graph, &spec, &graph_facts(&graph, 30, true), &mut NoiseRng::seeded(seed))
                    .unwrap();
            let d = r.degree_bound.expect("d̃ of the equality part");
            let floor = (d.value + d.margin).max(1) as u32;
            // θ* starts at d̃'s θ (I_P's noise cap, ⌊0.07·ε2·n⌋ − 1, is far
            // above it here) and rises by octaves only while the release's
            // noise stays within a thirtieth of the count there (the look's
            // own noise, scale Δ(floor)/0.1, allowed for).
            let look = &r.selection[0];
            assert_eq!((look.mechanism.as_str(), look.candidates[0]), ("floor-look", floor));
            assert!(r.theta >= floor && look.candidates.contains(&r.theta), "{measure:?}");
            let slack = 10.0 * measure.sensitivity(floor) as f64 / 0.1;
            let most = (measure.sensitivity(floor) as f64 / r.budget.release)
                .max((total as f64 + slack) / 30.0);
            assert!(r.noise_scale <= most, "{measure:?}: noise {} > {most}", r.noise_scale);
            // No degree bound but n's: the interval's upper end.
            assert_eq!(prepared.bounds().unwrap().max_degree, 5999);
            // Every row of fd_graph is in a conflict.
            let exact = if measure == ProjectedMeasure::Mi { total } else { 6000 };
            covered += i64::from(r.ci95[0] <= exact && exact <= r.ci95[1]);
        }
        assert!(covered >= 90, "{measure:?}: {covered} of {runs}");
    }
}

/// A DC whose one equality is across two columns (`t1.Manager = t2.Id`:
/// no report earns more than their manager) bounds the degrees by both
/// sides' maxfreq (README, "cross equalities"): `ub-direct` projects at
/// that bound, not at the hubs' floor of a DC without equality, and the
/// interval's degree bound is the sum, not n − 1.
#[test]
fn ub_direct_bounds_a_cross_equality_by_both_sides() {
    // 50 managers (rows 0..50) of 20 reports each; 3 of each earn more.
    let edges = (0..50u32).flat_map(|m| (0..3).map(move |i| Edge::new(m, 50 + m * 20 + i)));
    let graph = ConflictGraph::from_edges(1050, edges.collect::<Vec<_>>());
    let facts = TableFacts {
        rows: 1050,
        max_frequencies: vec![],
        minimal_max_frequencies: vec![],
        // Id is unique; a manager's Id is the Manager of 20 rows.
        cross_max_frequencies: vec![1, 20],
        unbounded: false,
        covers: dpincon_release::CoverFacts::default(),
        classes: None,
    };
    let exact = graph.edge_count() as i64;
    let spec = ProjectedSpec::new(ProjectedMeasure::Mi, Budget::new(1e6).unwrap());
    let (prepared, r) = run(&graph, &spec, &facts, &mut NoiseRng::seeded(1)).unwrap();
    let bound = r.degree_bound.unwrap();
    assert_eq!((bound.value, bound.sets), (21, 2), "both sides, no − 1");
    assert_eq!(r.theta, 21 + bound.margin as u32);
    assert!(r.selection.is_empty(), "no floor look");
    assert!(prepared.bounds().unwrap().max_degree <= 22);
    assert_eq!(r.value, exact);
    // At ε = 1 the intervals still hold the count, far below the rows.
    let spec = ProjectedSpec::new(ProjectedMeasure::Mi, Budget::new(1.0).unwrap());
    let (mut covered, runs) = (0, 100);
    for seed in 0..runs {
        let (prepared, r) = run(&graph, &spec, &facts, &mut NoiseRng::seeded(seed)).unwrap();
        assert!(prepared.bounds().unwrap().max_degree < 1049, "a bound below n − 1");
        covered += i64::from(r.ci95[0] <= exact && exact <= r.ci95[1]);
    }
    assert!(covered >= 90, "{covered} of {runs}");
}

/// Facts of a wide table: one FD per set, `sets` sets whose largest groups
/// hold `group` rows each (README, "the seventeenth round").
fn wide_facts(rows: u64, sets: usize, group: u64) -> TableFacts {
    TableFacts {
        max_frequencies: vec![group; sets],
        minimal_max_frequencies: vec![group; sets],
        ..common::one_set_facts(rows, group, None)
    }
}

/// Where d̃ sums many comparable terms (twelve FDs over groups of 101: d =
/// 1,200 against degrees of at most 2), a noisy largest term shows the sum
/// is loose, and I_MI's θ* comes from a GEM step between the two. With
/// three terms of the same sum the step cannot run (the sum is at most
/// three times its largest term) and nothing is spent on the look.
#[test]
fn ub_direct_chooses_theta_above_the_largest_term_where_d_sums_many() {
    // Chains of three rows: 2,000 pairs, degrees 1 and 2.
    let edges =
        (0..1000u32).flat_map(|c| [Edge::new(3 * c, 3 * c + 1), Edge::new(3 * c + 1, 3 * c + 2)]);
    let graph = ConflictGraph::from_edges(20_000, edges.collect::<Vec<_>>());
    let exact = graph.edge_count() as f64;
    let epsilon = 2.0;
    let spec = ProjectedSpec::new(ProjectedMeasure::Mi, Budget::new(epsilon).unwrap());
    let (mut stepped, mut error, mut thetas, mut tops) = (0, 0.0, 0u64, 0u64);
    let mut covered = 0;
    let runs = 200u32;
    for seed in 0..runs {
        let facts = wide_facts(20_000, 12, 101);
        let (_, r) = run(&graph, &spec, &facts, &mut NoiseRng::seeded(u64::from(seed))).unwrap();
        let u = r.budget;
        assert!((u.max_rows + u.degree_bound + u.selection + u.release - epsilon).abs() < 1e-9);
        assert!(r.degree_bound.unwrap().largest_term.is_some(), "the look ran");
        error += (r.value as f64 - exact).abs() / exact;
        let inside = r.ci95[0] as f64 <= exact && exact <= r.ci95[1] as f64;
        covered += i32::from(inside);
        assert!(r.ci95[0] <= r.value && r.value <= r.ci95[1], "{:?} {}", r.ci95, r.value);
        let Some(step) = r.selection.iter().find(|s| s.mechanism == "gem") else {
            assert!(r.interval_release.is_none());
            assert_eq!(r.noise().unwrap().scale_f64(), r.noise_scale);
            continue;
        };
        stepped += 1;
        assert!((u.selection - 0.2 * epsilon).abs() < 1e-9, "{u:?}");
        // The interval's second release, at d̃ + margin, from the release's ε.
        let second = r.interval_release.as_ref().expect("a second release for the interval");
        assert_eq!(second.theta, step.theta_max);
        assert!(second.epsilon > 0.0 && second.epsilon < u.release, "{second:?} {u:?}");
        // The report rebuilds the point's noise, not one with ε_u in it.
        assert_eq!(r.noise().unwrap().scale_f64(), r.noise_scale);
        assert!(step.candidates.iter().all(|&t| t >= 2 && t <= step.theta_max));
        thetas += u64::from(r.theta);
        tops += u64::from(step.theta_max);
    }
    // d + margin ≈ 1,263 against 4·(100 + 10): the step runs in nearly every run.
    assert!(stepped > 190, "GEM ran in {stepped} of {runs} runs");
    assert!(
        thetas * 3 < tops,
        "mean θ* {} against d̃ + margin {}",
        thetas / stepped,
        tops / stepped
    );
    // At θ = d̃ + margin the noise alone would be about 1,263/(0.75·ε)/2,000 ≈ 0.4.
    assert!(error / f64::from(runs) < 0.25, "mean relative error {}", error / f64::from(runs));
    assert!(covered >= 180, "{covered} of {runs} intervals hold the count");

    // ε0 = 0.1/√ε of ε, at least 0.1 of it, less ñ's 5%.
    let eps0 = 0.1 * epsilon * 0.95;
    for seed in 0..50 {
        let facts = wide_facts(20_000, 3, 401);
        let (_, r) = run(&graph, &spec, &facts, &mut NoiseRng::seeded(seed)).unwrap();
        assert_eq!(r.degree_bound.unwrap().largest_term, None);
        assert!(r.interval_release.is_none());
        assert!((r.budget.degree_bound - eps0).abs() < 1e-9, "{:?}", r.budget);
        assert!(r.selection.is_empty());
    }
}

/// The look at the largest term is drawn only where it could pass (README,
/// "the eighteenth round"): the largest of k terms is at least their
/// average d̃/k, so with four equal terms d̃ + margin reaches four times
/// the term plus its noise only on d̃'s noise, and in the runs where the
/// look is not drawn nothing is spent on it. Twelve terms draw it always.
#[test]
fn ub_direct_draws_the_largest_term_only_where_the_test_could_pass() {
    let edges =
        (0..1000u32).flat_map(|c| [Edge::new(3 * c, 3 * c + 1), Edge::new(3 * c + 1, 3 * c + 2)]);
    let graph = ConflictGraph::from_edges(20_000, edges.collect::<Vec<_>>());
    let epsilon = 1.0;
    let spec = ProjectedSpec::new(ProjectedMeasure::Mi, Budget::new(epsilon).unwrap());
    // ε0 = 0.1/√ε of ε, less ñ's 5%.
    let eps0 = 0.1 * epsilon * 0.95;
    let (mut drawn, runs) = (0, 200);
    for seed in 0..runs {
        let facts = wide_facts(20_000, 4, 101);
        let (_, r) = run(&graph, &spec, &facts, &mut NoiseRng::seeded(seed)).unwrap();
        let u = r.budget;
        assert!((u.max_rows + u.degree_bound + u.selection + u.release - epsilon).abs() < 1e-9);
        match r.degree_bound.unwrap().largest_term {
            Some(_) => drawn += 1,
            None => {
                assert!((u.degree_bound - eps0).abs() < 1e-9, "{u:?}");
                assert!(r.selection.is_empty() && r.interval_release.is_none());
            }
        }
    }
    // Passing needs d̃'s noise + margin ≥ 4 of the look's scales (80 at
    // 0.05 ε): d̃'s sd is about 60, so well under half of the runs.
    assert!(drawn < runs / 2, "drawn in {drawn} of {runs} runs");
    for seed in 0..50 {
        let facts = wide_facts(20_000, 12, 101);
        let (_, r) = run(&graph, &spec, &facts, &mut NoiseRng::seeded(seed)).unwrap();
        assert!(r.degree_bound.unwrap().largest_term.is_some(), "seed {seed}");
    }
}
