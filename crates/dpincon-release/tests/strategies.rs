//! Every strategy end to end over a real pass, the budget accounting, and
//! an empirical privacy check on the SPEC §6.1 counterexample.

mod common;

use std::collections::HashMap;

use common::empirical_loss;
use dpincon_graph::{ConflictGraph, Edge};
use dpincon_measures::{DegreeCounts, EdgeAddition, walk};
use dpincon_release::{
    Budget, CoverFacts, NoiseRng, Prepared, ProjectedMeasure, ProjectedRelease, ProjectedSpec,
    ProjectionTable, ReleaseError, Selector, Strategy, TableFacts, default_candidates, prepare,
    release_projected,
};

/// Groups of equal "zip" where one row in five has a different "city":
/// FD-like conflicts, max degree below the group size.
fn fd_graph(groups: u32, size: u32) -> ConflictGraph {
    let mut edges = Vec::new();
    for g in 0..groups {
        let rows: Vec<u32> = (0..size).map(|i| g * size + i).collect();
        for (i, &a) in rows.iter().enumerate() {
            for &b in &rows[i + 1..] {
                if (a % 5 == 0) != (b % 5 == 0) {
                    edges.push(Edge::new(a, b));
                }
            }
        }
    }
    ConflictGraph::from_edges(groups * size, edges)
}

fn run(
    graph: &ConflictGraph,
    spec: &ProjectedSpec,
    facts: &TableFacts,
    rng: &mut NoiseRng,
) -> Result<(Prepared, ProjectedRelease), ReleaseError> {
    let prepared = prepare(spec, facts, rng)?;
    let mut degrees = DegreeCounts::new(graph.nodes());
    let mut projection = EdgeAddition::new(graph.nodes(), &prepared.thetas());
    walk(graph.edges(), &mut [&mut degrees, &mut projection]);
    let table = ProjectionTable::new(degrees.counts(), projection.counts());
    let release = release_projected(&prepared, &table, rng)?;
    Ok((prepared, release))
}

fn facts(graph: &ConflictGraph, group: u64, unbounded: bool) -> TableFacts {
    TableFacts {
        rows: u64::from(graph.nodes()),
        max_frequencies: vec![group],
        minimal_max_frequencies: vec![group],
        unbounded,
        covers: CoverFacts::default(),
        classes: None,
    }
}

/// Facts of a table whose constraints have no equality predicate at all.
fn no_equality(graph: &ConflictGraph) -> TableFacts {
    TableFacts { max_frequencies: vec![], minimal_max_frequencies: vec![], ..facts(graph, 0, true) }
}

#[test]
fn every_strategy_measure_and_selector_releases() {
    let graph = fd_graph(20, 30);
    for measure in [ProjectedMeasure::Mi, ProjectedMeasure::P] {
        for strategy in Strategy::ALL {
            for selector in Selector::ALL {
                for max_rows in [None, Some(1_000)] {
                    let spec = ProjectedSpec {
                        strategy,
                        selector,
                        max_rows,
                        ..ProjectedSpec::new(measure, Budget::new(1.0).unwrap())
                    };
                    let f = facts(&graph, 30, strategy == Strategy::Em);
                    let (_, a) = run(&graph, &spec, &f, &mut NoiseRng::seeded(7)).unwrap();
                    let (_, b) = run(&graph, &spec, &f, &mut NoiseRng::seeded(7)).unwrap();
                    assert_eq!(a, b, "a seed fixes the release");
                    assert!(a.value >= 0 && a.ci95[0] <= a.value && a.value <= a.ci95[1]);
                    assert_eq!(a.sensitivity, measure.sensitivity(a.theta));
                    assert_eq!(a.private, strategy != Strategy::BaselineTruemax);
                    let u = a.budget;
                    let spent = u.max_rows + u.degree_bound + u.selection + u.release;
                    assert!(spent <= u.total && spent > u.total * (1.0 - 1e-12), "{u:?}");
                    assert_eq!(u.total, 1.0);
                    if let Some(step) = a.selection.last() {
                        assert_eq!(step.chosen, a.theta);
                        assert!(step.candidates.contains(&a.theta));
                    }
                    let expected_steps = match strategy {
                        Strategy::BaselineNmax | Strategy::BaselineTruemax => 0,
                        Strategy::Em | Strategy::Gem | Strategy::UbGem => 1,
                        Strategy::Hem | Strategy::UbHem => 2,
                        // d̃ fixes θ*: no selection step (the facts are bounded).
                        Strategy::UbDirect => 0,
                    };
                    assert_eq!(a.selection.len(), expected_steps, "{strategy}");
                }
            }
        }
    }
}

#[test]
fn hem_second_step_keeps_candidates_up_to_the_first_choice() {
    let graph = fd_graph(20, 30);
    let spec = ProjectedSpec {
        strategy: Strategy::Hem,
        max_rows: Some(600),
        ..ProjectedSpec::new(ProjectedMeasure::Mi, Budget::new(2.0).unwrap())
    };
    for seed in 0..20 {
        let (_, r) =
            run(&graph, &spec, &facts(&graph, 30, false), &mut NoiseRng::seeded(seed)).unwrap();
        let (first, second) = (&r.selection[0], &r.selection[1]);
        assert_eq!(first.candidates, default_candidates(600));
        assert_eq!(first.theta_max, 600);
        assert_eq!(second.theta_max, first.chosen);
        assert!(second.candidates.iter().all(|&t| t <= first.chosen));
        assert!(second.candidates.contains(&first.chosen));
        assert_eq!(second.sensitivity, u64::from(first.chosen));
    }
}

#[test]
fn ub_hem_prunes_with_the_noisy_degree_bound() {
    let graph = fd_graph(20, 30); // max degree 24 (a city-6 row sees 24 others)
    let spec = ProjectedSpec {
        strategy: Strategy::UbHem,
        selector: Selector::Exponential,
        max_rows: Some(100_000),
        ..ProjectedSpec::new(ProjectedMeasure::P, Budget::new(1e6).unwrap())
    };
    // With a huge ε the noisy bound is the true maxfreq − 1 = 29.
    let (prepared, r) =
        run(&graph, &spec, &facts(&graph, 30, false), &mut NoiseRng::seeded(1)).unwrap();
    assert_eq!(r.degree_bound.unwrap().value, 29);
    let first = &r.selection[0];
    assert_eq!(first.candidates, vec![1, 2, 5, 10, 20, 29]);
    assert_eq!(first.sensitivity, 2 * 29, "I_P's quality sensitivity is 2·θmax");
    assert!(prepared.thetas().iter().all(|t| t.get() <= 29));
    assert!(r.theta >= 20, "a huge budget picks a θ that truncates little, got {}", r.theta);
    // A DC without equality predicate adds n_max, judged by its noise only.
    let (_, r) = run(&graph, &spec, &facts(&graph, 30, true), &mut NoiseRng::seeded(1)).unwrap();
    assert_eq!(r.selection[0].candidates, vec![1, 2, 5, 10, 20, 29, 100_000]);
    assert_eq!(r.selection[0].theta_max, 29);
}

#[test]
fn ub_direct_releases_at_the_minimal_set_bound_plus_its_margin() {
    let graph = fd_graph(20, 30); // max degree 24, maxfreq 30, 600 rows
    let spec = ProjectedSpec::new(ProjectedMeasure::Mi, Budget::new(1e6).unwrap());
    let (prepared, r) =
        run(&graph, &spec, &facts(&graph, 30, false), &mut NoiseRng::seeded(1)).unwrap();
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
    let (_, r) = run(&graph, &capped, &facts(&graph, 30, false), &mut NoiseRng::seeded(1)).unwrap();
    assert!(r.theta <= 12 && r.selection[0].mechanism == "floor-look");
    assert!((r.budget.max_rows - 1e4).abs() < 1.0, "{:?}", r.budget);
    // So does an estimated one, below d̃: no degree exceeds n − 1.
    let small = TableFacts { rows: 20, ..facts(&graph, 30, false) };
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
            run(&graph, &spec, &facts(&graph, 3, false), &mut NoiseRng::seeded(seed)).unwrap();
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
            run(&graph, &spec, &facts(&graph, 2, false), &mut NoiseRng::seeded(seed)).unwrap();
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
        let facts = facts(&graph, 30, false);
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
            run(&graph, &spec, &facts(&graph, 30, false), &mut NoiseRng::seeded(seed)).unwrap();
        let bound = r.degree_bound.unwrap();
        let top = (bound.value + bound.margin).clamp(1, 200) as u32;
        // ε2 = 0.9, or 0.7 after a second d̃: ⌊0.07 · ε2 · 200⌋ − 1 = 11 or 8.
        let cap = (0.07 * r.budget.release * 200.0).floor() as u32 - 1;
        assert!([11, 8].contains(&cap), "cap {cap}");
        assert_eq!(r.theta, top.min(cap), "seed {seed}, d̃ {bound:?}");
        assert!(r.noise_scale <= 0.07 * 200.0 + 1e-9);
        let mi = ProjectedSpec { measure: ProjectedMeasure::Mi, ..spec };
        let (_, r) =
            run(&graph, &mi, &facts(&graph, 30, false), &mut NoiseRng::seeded(seed)).unwrap();
        let bound = r.degree_bound.unwrap();
        assert_eq!(r.theta, (bound.value + bound.margin).clamp(1, 200) as u32);
    }
    // No degree bound (no DC has an equality): I_P is released at the cap
    // straight away, I_MI looks first.
    let spec = ProjectedSpec::new(ProjectedMeasure::P, Budget::new(1.0).unwrap());
    let (_, r) = run(&graph, &spec, &no_equality(&graph), &mut NoiseRng::seeded(3)).unwrap();
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
            run(&graph, &spec, &facts(&graph, 30, false), &mut NoiseRng::seeded(seed)).unwrap();
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
    let (_, r) = run(&graph, &mi, &facts(&graph, 30, false), &mut NoiseRng::seeded(1)).unwrap();
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
    let (_, r) = run(&graph, &spec, &no_equality(&graph), &mut NoiseRng::seeded(1)).unwrap();
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
        let f = no_equality(&graph);
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
                    let f = facts(&star, 61, unbounded);
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
                run(&graph, &spec, &facts(&graph, 30, true), &mut NoiseRng::seeded(seed)).unwrap();
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

#[test]
fn ub_gem_selects_on_the_halving_grid_below_the_bound() {
    let graph = fd_graph(20, 30);
    let spec = ProjectedSpec {
        strategy: Strategy::UbGem,
        ..ProjectedSpec::new(ProjectedMeasure::Mi, Budget::new(1e4).unwrap())
    };
    let (_, r) = run(&graph, &spec, &facts(&graph, 30, false), &mut NoiseRng::seeded(5)).unwrap();
    let bound = r.degree_bound.unwrap();
    let top = (bound.value + bound.margin) as u32;
    let step = &r.selection[0];
    assert_eq!(step.candidates, dpincon_release::halving_candidates(top));
    assert_eq!(step.sensitivity, dpincon_release::gem::SENSITIVITY);
    // Plenty of budget: the chosen θ truncates nothing (max degree 24).
    assert!(r.theta >= 24, "chose θ = {} of {:?}", r.theta, step.candidates);
}

/// d̃ over k minimal sets: a neighbour moves every maxfreq by one, so their
/// sum by k, and one draw of DLap(k/ε0) on the sum has privacy loss ε0;
/// half the noise doubles it.
#[test]
fn noisy_degree_bound_privacy_loss_is_epsilon0_and_half_noise_is_caught() {
    let spec = ProjectedSpec {
        selection_share: Some(0.5),
        // Declared: nothing of ε0 goes to ñ.
        max_rows: Some(1_000),
        ..ProjectedSpec::new(ProjectedMeasure::Mi, Budget::new(2.0).unwrap())
    };
    let facts_of = |base: u64| TableFacts {
        rows: 10,
        max_frequencies: vec![base, base + 3],
        minimal_max_frequencies: vec![base, base + 3],
        unbounded: false,
        covers: CoverFacts::default(),
        classes: None,
    };
    let samples = 200_000u32;
    let mut rng = NoiseRng::seeded(99);
    let mut histogram = |facts: &TableFacts| {
        let mut counts = HashMap::new();
        for _ in 0..samples {
            let prepared = prepare(&spec, facts, &mut rng).unwrap();
            assert!((prepared.budget().degree_bound - 1.0).abs() < 1e-9);
            *counts.entry(prepared.degree_bound().unwrap().value).or_insert(0u32) += 1;
        }
        counts
    };
    let (on_d, on_neighbour) = (histogram(&facts_of(40)), histogram(&facts_of(41)));
    let loss = empirical_loss(&on_d, &on_neighbour);
    assert!(loss < 1.0 + 0.15, "privacy loss {loss} exceeds ε0 = 1");
    assert!(loss > 0.7, "the test must see the loss it bounds, got {loss}");
    // The mutant: half the scale (k/(2ε0) instead of k/ε0).
    let half = dpincon_mechanisms::DiscreteLaplace::new(1, 1.0).unwrap();
    let mut sample = |base: i64| {
        let mut counts = HashMap::new();
        for _ in 0..samples {
            let v = half.release((base - 1) + (base + 2), &mut rng);
            *counts.entry(v).or_insert(0u32) += 1;
        }
        counts
    };
    let loss = empirical_loss(&sample(40), &sample(41));
    assert!(loss > 1.3, "half the noise should show a loss above ε0, got {loss}");
}

#[test]
fn undeclared_row_bound_is_a_dp_estimate_from_epsilon1() {
    let graph = fd_graph(10, 10);
    let spec = ProjectedSpec {
        strategy: Strategy::UbHem,
        ..ProjectedSpec::new(ProjectedMeasure::Mi, Budget::new(1.0).unwrap())
    };
    let (_, r) = run(&graph, &spec, &facts(&graph, 10, false), &mut NoiseRng::seeded(3)).unwrap();
    let max_rows = r.max_rows.unwrap();
    assert!(max_rows.estimated);
    // ε_n = 5% of ε1 = 0.02; the margin ⌈ln 20 / ε_n⌉ = 150 keeps n_max
    // above n = 100 with probability 0.95; its noise has scale 50.
    assert!((r.budget.max_rows - 0.02).abs() < 1e-9, "{:?}", r.budget);
    assert!(max_rows.value > 0);
    let declared = ProjectedSpec { max_rows: Some(100), ..spec };
    let (_, r) =
        run(&graph, &declared, &facts(&graph, 10, false), &mut NoiseRng::seeded(3)).unwrap();
    assert_eq!(r.max_rows.unwrap(), dpincon_release::MaxRows { value: 100, estimated: false });
    assert_eq!(r.budget.max_rows, 0.0);
}

#[test]
fn invalid_specs_are_refused_before_any_noise() {
    let graph = fd_graph(2, 5);
    let base = ProjectedSpec::new(ProjectedMeasure::Mi, Budget::new(1.0).unwrap());
    let bad = [
        ProjectedSpec { selection_share: Some(0.0), ..base.clone() },
        ProjectedSpec { selection_share: Some(1.0), ..base.clone() },
        ProjectedSpec { selection_share: Some(f64::NAN), ..base.clone() },
        ProjectedSpec { candidates: Some(vec![]), ..base.clone() },
        ProjectedSpec { candidates: Some(vec![0, 3]), ..base.clone() },
        ProjectedSpec { max_rows: Some(0), ..base.clone() },
    ];
    for spec in bad {
        let err = run(&graph, &spec, &facts(&graph, 5, false), &mut NoiseRng::seeded(0));
        assert!(matches!(err, Err(ReleaseError::Invalid(_))), "{spec:?}");
    }
    assert!("ub-hem".parse::<Strategy>().is_ok());
    assert!("paper".parse::<Strategy>().unwrap_err().to_string().contains("baseline-nmax"));
}

/// SPEC §6.1's counterexample: G is one isolated node; G' adds a node
/// joined to it. At θ = 1, I_P goes 0 → 2. The release with Δ = θ + 1
/// keeps the privacy loss at ε; the paper's Δ = θ (half the noise) doubles it.
#[test]
fn neighbouring_graphs_privacy_loss_is_epsilon_and_paper_noise_is_caught() {
    let g = ConflictGraph::from_edges(1, []);
    let h = ConflictGraph::from_edges(2, [Edge::new(0, 1)]);
    let spec = ProjectedSpec {
        strategy: Strategy::BaselineNmax,
        max_rows: Some(1),
        ..ProjectedSpec::new(ProjectedMeasure::P, Budget::new(1.0).unwrap())
    };
    let samples = 100_000u32;
    let mut rng = NoiseRng::seeded(2025);
    let histogram = |graph: &ConflictGraph, rng: &mut NoiseRng| {
        let facts = TableFacts {
            rows: graph.nodes().into(),
            max_frequencies: vec![],
            minimal_max_frequencies: vec![],
            unbounded: true,
            covers: CoverFacts::default(),
            classes: None,
        };
        let mut counts = HashMap::new();
        for _ in 0..samples {
            let (_, r) = run(graph, &spec, &facts, rng).unwrap();
            assert_eq!((r.theta, r.sensitivity), (1, 2));
            *counts.entry(r.value).or_insert(0u32) += 1;
        }
        counts
    };
    let (on_g, on_h) = (histogram(&g, &mut rng), histogram(&h, &mut rng));
    let loss = empirical_loss(&on_g, &on_h);
    assert!(loss < 1.0 + 0.2, "privacy loss {loss} exceeds ε = 1");
    assert!(loss > 0.8, "the test must see the loss it bounds, got {loss}");

    // The paper's Δ_P = θ = 1: scale 1/ε instead of 2/ε.
    let paper = dpincon_mechanisms::DiscreteLaplace::new(1, 1.0).unwrap();
    let mut sample = |value: i64| {
        let mut counts = HashMap::new();
        for _ in 0..samples {
            *counts.entry(paper.release(value, &mut rng).max(0)).or_insert(0u32) += 1;
        }
        counts
    };
    let (on_g, on_h) = (sample(0), sample(2));
    let loss = empirical_loss(&on_g, &on_h);
    assert!(loss > 1.6, "half the noise should show a loss near 2ε, got {loss}");
}
