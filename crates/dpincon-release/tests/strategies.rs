//! Every strategy end to end over a real pass, the budget accounting, and
//! an empirical privacy check on the SPEC §6.1 counterexample.

mod common;

use std::collections::HashMap;

use common::{empirical_loss, fd_graph, graph_facts, run};
use dpincon_graph::{ConflictGraph, Edge};
use dpincon_release::{
    Budget, CoverFacts, NoiseRng, ProjectedMeasure, ProjectedSpec, ReleaseError, Selector,
    Strategy, TableFacts, default_candidates, prepare,
};

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
                    let f = graph_facts(&graph, 30, strategy == Strategy::Em);
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
            run(&graph, &spec, &graph_facts(&graph, 30, false), &mut NoiseRng::seeded(seed))
                .unwrap();
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
        run(&graph, &spec, &graph_facts(&graph, 30, false), &mut NoiseRng::seeded(1)).unwrap();
    assert_eq!(r.degree_bound.unwrap().value, 29);
    let first = &r.selection[0];
    assert_eq!(first.candidates, vec![1, 2, 5, 10, 20, 29]);
    assert_eq!(first.sensitivity, 2 * 29, "I_P's quality sensitivity is 2·θmax");
    assert!(prepared.thetas().iter().all(|t| t.get() <= 29));
    assert!(r.theta >= 20, "a huge budget picks a θ that truncates little, got {}", r.theta);
    // A DC without equality predicate adds n_max, judged by its noise only.
    let (_, r) =
        run(&graph, &spec, &graph_facts(&graph, 30, true), &mut NoiseRng::seeded(1)).unwrap();
    assert_eq!(r.selection[0].candidates, vec![1, 2, 5, 10, 20, 29, 100_000]);
    assert_eq!(r.selection[0].theta_max, 29);
}

#[test]
fn ub_gem_selects_on_the_halving_grid_below_the_bound() {
    let graph = fd_graph(20, 30);
    let spec = ProjectedSpec {
        strategy: Strategy::UbGem,
        ..ProjectedSpec::new(ProjectedMeasure::Mi, Budget::new(1e4).unwrap())
    };
    let (_, r) =
        run(&graph, &spec, &graph_facts(&graph, 30, false), &mut NoiseRng::seeded(5)).unwrap();
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
        cross_max_frequencies: vec![],
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
    let (_, r) =
        run(&graph, &spec, &graph_facts(&graph, 10, false), &mut NoiseRng::seeded(3)).unwrap();
    let max_rows = r.max_rows.unwrap();
    assert!(max_rows.estimated);
    // ε_n = 5% of ε1 = 0.02; the margin ⌈ln 20 / ε_n⌉ = 150 keeps n_max
    // above n = 100 with probability 0.95; its noise has scale 50.
    assert!((r.budget.max_rows - 0.02).abs() < 1e-9, "{:?}", r.budget);
    assert!(max_rows.value > 0);
    let declared = ProjectedSpec { max_rows: Some(100), ..spec };
    let (_, r) =
        run(&graph, &declared, &graph_facts(&graph, 10, false), &mut NoiseRng::seeded(3)).unwrap();
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
        let err = run(&graph, &spec, &graph_facts(&graph, 5, false), &mut NoiseRng::seeded(0));
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
            cross_max_frequencies: vec![],
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
