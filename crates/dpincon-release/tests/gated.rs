//! A gated night's interval (`MeasureGate::interval`): whenever every
//! statistic the gate reads lies within α of its band, the interval holds
//! the night's measure itself. Checked on random opening and night graphs
//! with α the night's own largest distance (the smallest α for which the
//! pass event holds), for both projected measures and every I_R part.

mod common;

use dpincon_graph::{ConflictGraph, Edge};
use dpincon_measures::{DegreeCounts, walk};
use dpincon_release::{
    Budget, Direction, MeasureGate, NightFacts, NoiseRng, ProjectedMeasure, ProjectedSpec,
    ProjectionTable, RepairMethod, RepairValues, Statistic, TableFacts, UnionCover, UpperCover,
    prepare, release_projected, release_repair,
};

fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed | 1;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

/// A random graph on `n` nodes and its facts: one equality set whose
/// largest group bounds every degree (maxfreq = max degree + 1), or with
/// `cross` the two sides of a cross equality whose maxfreqs add up to it.
fn night(next: &mut impl FnMut() -> u64, n: u32, cross: bool) -> (ConflictGraph, TableFacts) {
    let density = 1 + next() % 4;
    let edges: Vec<Edge> = (0..n)
        .flat_map(|u| (u + 1..n).map(move |v| (u, v)))
        .filter(|_| next() % 8 < density)
        .map(|(u, v)| Edge::new(u, v))
        .collect();
    let graph = ConflictGraph::from_edges(n, edges);
    let mut degrees = DegreeCounts::new(n);
    walk(graph.edges(), &mut [&mut degrees]);
    let max_degree = u64::from(degrees.counts().max_degree);
    let mut facts = common::one_set_facts(u64::from(n), max_degree + 1, None);
    if cross {
        let left = max_degree / 2;
        facts = TableFacts {
            max_frequencies: vec![],
            minimal_max_frequencies: vec![],
            cross_max_frequencies: vec![left, max_degree - left],
            ..facts
        };
    }
    (graph, facts)
}

/// The pass over `graph` at a gate's `thetas`.
fn table(graph: &ConflictGraph, thetas: &[u32]) -> ProjectionTable {
    let thetas: Vec<_> =
        thetas.iter().filter_map(|&t| dpincon_measures::DegreeBound::new(t)).collect();
    common::projection_table(graph, &thetas)
}

/// The night's largest distance outside the bands: a pass at α ≥ it.
fn distance(gate: &MeasureGate, values: &[i64]) -> u64 {
    // The epoch's query: the largest weighted distance.
    let bands = gate.bands();
    bands.iter().zip(values).map(|(b, &v)| b.distance(v).max(0)).max().unwrap_or(0) as u64
}

#[test]
fn a_gated_projected_interval_holds_the_nights_measure() {
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
    let mut checked = [0u32; 2];
    for round in 0..1500 {
        let n = 3 + (next() % 7) as u32;
        // Every other pair of rounds, the degrees are bounded by a cross
        // equality's two sides (two terms) instead of one equality set.
        let cross = round % 4 >= 2;
        let (open, open_facts) = night(&mut next, n, cross);
        let measure = if round % 2 == 0 { ProjectedMeasure::Mi } else { ProjectedMeasure::P };
        let spec = ProjectedSpec {
            max_rows: Some(u64::from(n)),
            ..ProjectedSpec::new(measure, Budget::new(0.5 + (next() % 4) as f64).unwrap())
        };
        let mut rng = NoiseRng::seeded(round);
        let prepared = prepare(&spec, &open_facts, &mut rng).unwrap();
        let release = release_projected(
            &prepared,
            &common::projection_table(&open, &prepared.thetas()),
            &mut rng,
        )
        .unwrap();
        let checks = [(Direction::AtMost, (next() % 20) as i64)];
        let gate = MeasureGate::projected(&release, &checks, next() % 4).unwrap();
        assert!(gate.sensitivity() >= measure.sensitivity(release.theta));
        // The night: another graph on the same public row bound.
        let (graph, facts) = night(&mut next, n, cross);
        let t = table(&graph, &gate.thetas());
        let values = gate.values(&NightFacts { table: &t, facts: &facts, repair: None }).unwrap();
        let alpha = distance(&gate, &values);
        let [lo, hi] = gate.interval(alpha);
        let exact = t.exact();
        let truth = match measure {
            ProjectedMeasure::Mi => exact.edges,
            ProjectedMeasure::P => exact.problematic,
        } as i64;
        assert!(
            lo <= truth && truth <= hi,
            "{measure:?} {gate:?} α={alpha}: {truth} ∉ [{lo}, {hi}]"
        );
        checked[round as usize % 2] += 1;
        // The gate reads the degree sum whenever the release's bound came
        // from d̃ (the night's degrees are otherwise unbounded).
        let degree_bound = release.bounds.unwrap().max_degree < u64::from(n) - 1;
        let reads_degrees =
            gate.statistics().iter().any(|s| matches!(s.statistic, Statistic::DegreeSum { .. }));
        assert_eq!(reads_degrees, degree_bound && release.degree_bound.is_some());
        if let Some(d) = release.degree_bound {
            assert_eq!(d.sets, if cross { 2 } else { 1 });
        }
    }
    assert!(checked.iter().all(|&c| c > 500), "{checked:?}");
}

#[test]
fn a_gated_repair_interval_holds_the_nights_ir() {
    let mut next = xorshift(0x2545_f491_4f6c_dd1d);
    for round in 0..3000u64 {
        // Open on one table, gate another: I_R = t, c and 2·L in [t, 2t],
        // U ≥ t (their lemmas), or an exact cover.
        let values = |next: &mut dyn FnMut() -> u64, t: u64| RepairValues {
            greedy_cover: t + next() % (t + 1),
            twice_lower: Some(t + next() % (t + 1)),
            exact: (round % 3 == 0).then_some(t),
            upper: (round % 3 == 1).then_some(UpperCover {
                sum: t + next() % 5,
                sets: 3,
                union: (round % 2 == 0)
                    .then_some(UnionCover { value: t + next() % 3, sensitivity: 5 }),
                exact: false,
            }),
        };
        let t0 = next() % 40;
        let method = RepairMethod::ALL[(round % 3) as usize];
        let mut rng = NoiseRng::seeded(round);
        let opening = values(&mut next, t0);
        let release = release_repair(method, Budget::new(1.0).unwrap(), opening, &mut rng).unwrap();
        let checks = [(Direction::AtMost, 20), (Direction::AtLeast, 5)];
        let gate = MeasureGate::repair(&release, &checks, next() % 3).unwrap();
        let t1 = next() % 60;
        let night_values = values(&mut next, t1);
        let (graph, facts) = night(&mut next, 4, false);
        let table = table(&graph, &[]);
        let night = NightFacts { table: &table, facts: &facts, repair: Some(night_values) };
        let read = gate.values(&night).unwrap();
        let alpha = distance(&gate, &read);
        let [lo, hi] = gate.interval(alpha);
        assert!(
            lo as u64 <= t1 && t1 <= hi as u64,
            "{method:?} {gate:?} α={alpha}: {t1} ∉ [{lo}, {hi}]"
        );
    }
}

/// An epoch opened before cross equalities had a bound (an FD beside a
/// cross DC read as a DC without equality: `unbounded`, no degree sum
/// frozen) reads a night whose facts now carry the cross terms: its
/// statistics are the ones it froze, so the upgrade breaks no epoch.
#[test]
fn a_gate_opened_without_the_cross_bound_reads_a_night_with_it() {
    let (graph, facts) = night(&mut xorshift(5), 8, false);
    let old = TableFacts { unbounded: true, ..facts.clone() };
    let new = TableFacts { cross_max_frequencies: vec![2, 3], ..facts };
    let spec = ProjectedSpec {
        max_rows: Some(8),
        ..ProjectedSpec::new(ProjectedMeasure::Mi, Budget::new(1.0).unwrap())
    };
    let mut rng = NoiseRng::seeded(1);
    let prepared = prepare(&spec, &old, &mut rng).unwrap();
    let opening = common::projection_table(&graph, &prepared.thetas());
    let release = release_projected(&prepared, &opening, &mut rng).unwrap();
    let gate = MeasureGate::projected(&release, &[(Direction::AtMost, 5)], 0).unwrap();
    assert!(!gate.statistics().iter().any(|s| matches!(s.statistic, Statistic::DegreeSum { .. })));
    let t = table(&graph, &gate.thetas());
    let read = |facts: &TableFacts| gate.values(&NightFacts { table: &t, facts, repair: None });
    assert_eq!(read(&new).unwrap(), read(&old).unwrap());
}

/// An epoch frozen on U keeps reading U (the sum, at its sensitivity k)
/// on nights whose facts also carry the union cover, as after an upgrade
/// that added it; one frozen on the union refuses a night without it.
#[test]
fn a_repair_gate_reads_the_statistic_it_froze() {
    let upper = |union: Option<UnionCover>| RepairValues {
        greedy_cover: 40,
        twice_lower: Some(40),
        exact: None,
        upper: Some(UpperCover { sum: 30, sets: 2, union, exact: false }),
    };
    let union = Some(UnionCover { value: 22, sensitivity: 5 });
    let (graph, facts) = night(&mut xorshift(3), 4, false);
    let table = table(&graph, &[]);
    let read = |gate: &MeasureGate, values: RepairValues| {
        let night = NightFacts { table: &table, facts: &facts, repair: Some(values) };
        gate.values(&night)
    };
    for (opening, statistic, sensitivity) in
        [(upper(None), "cover-sum", 2), (upper(union), "union-cover", 5)]
    {
        let mut rng = NoiseRng::seeded(1);
        let eps = Budget::new(1.0).unwrap();
        let release = release_repair(RepairMethod::Combined, eps, opening, &mut rng).unwrap();
        let part = &release.parts[1];
        assert_eq!((part.statistic.as_str(), part.sensitivity), (statistic, sensitivity));
        let gate = MeasureGate::repair(&release, &[], 0).unwrap();
        if statistic == "cover-sum" {
            let with_union = read(&gate, upper(union)).unwrap();
            assert_eq!(with_union, read(&gate, upper(None)).unwrap(), "U, not min(U, D)");
        } else {
            assert!(read(&gate, upper(None)).is_err(), "no union on that night");
            assert!(read(&gate, upper(union)).is_ok());
        }
    }
}

#[test]
fn a_gate_round_trips_through_json() {
    let mut next = xorshift(7);
    let (graph, facts) = night(&mut next, 8, false);
    let spec = ProjectedSpec {
        max_rows: Some(8),
        ..ProjectedSpec::new(ProjectedMeasure::Mi, Budget::new(1.0).unwrap())
    };
    let mut rng = NoiseRng::seeded(1);
    let prepared = prepare(&spec, &facts, &mut rng).unwrap();
    let thetas: Vec<u32> = prepared.thetas().iter().map(|t| t.get()).collect();
    let release = release_projected(&prepared, &table(&graph, &thetas), &mut rng).unwrap();
    let gate = MeasureGate::projected(&release, &[], 2).unwrap();
    let text = serde_json::to_string(&gate).unwrap();
    assert_eq!(serde_json::from_str::<MeasureGate>(&text).unwrap(), gate);
    // An estimated row bound holds on the opening night only: refused.
    let estimated = ProjectedSpec { max_rows: None, ..spec };
    let prepared = prepare(&estimated, &facts, &mut rng).unwrap();
    let thetas: Vec<u32> = prepared.thetas().iter().map(|t| t.get()).collect();
    let release = release_projected(&prepared, &table(&graph, &thetas), &mut rng).unwrap();
    let err = MeasureGate::projected(&release, &[], 2).unwrap_err();
    assert!(err.to_string().contains("max-rows"), "{err}");
}
