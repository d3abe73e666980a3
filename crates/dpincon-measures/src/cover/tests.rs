//! The covers against brute force on small graphs.

use dpincon_graph::{ConflictGraph, Edge, EdgeSink, GraphBuilder};
use proptest::prelude::*;

use super::*;
use crate::walk;

/// I_R by trying every subset (n ≤ 16).
fn brute_force_cover(nodes: u32, edges: &[Edge]) -> u64 {
    (0u32..1 << nodes)
        .filter(|set| edges.iter().all(|e| set >> e.u & 1 == 1 || set >> e.v & 1 == 1))
        .map(|set| u64::from(set.count_ones()))
        .min()
        .unwrap_or(0)
}

/// 2·LP by trying every x in {0, ½, 1}^n (an optimum is half-integral).
fn brute_force_twice_lp(nodes: u32, edges: &[Edge]) -> u64 {
    let mut best = u64::MAX;
    let mut x = vec![0u8; nodes as usize];
    loop {
        if edges.iter().all(|e| x[e.u as usize] + x[e.v as usize] >= 2) {
            best = best.min(x.iter().map(|&t| u64::from(t)).sum());
        }
        let Some(i) = x.iter().position(|&t| t < 2) else { return best };
        x[i] += 1;
        x[..i].fill(0);
    }
}

/// `count` pseudo-random pairs on `n` nodes (loops dropped), from `seed`.
fn random_edges(n: u32, count: usize, seed: u64) -> Vec<Edge> {
    let mut state = seed;
    (0..count)
        .filter_map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let (a, b) = ((state >> 33) as u32 % n, (state >> 13) as u32 % n);
            (a != b).then(|| Edge::new(a, b))
        })
        .collect()
}

fn edges_strategy(max_nodes: u32) -> impl Strategy<Value = (u32, Vec<Edge>)> {
    (1..=max_nodes).prop_flat_map(|n| {
        let pairs = proptest::collection::vec((0..n, 0..n), 0..(n * n) as usize);
        (Just(n), pairs).prop_map(|(n, pairs)| {
            let edges = pairs.into_iter().filter(|(a, b)| a != b).map(|(a, b)| Edge::new(a, b));
            (n, edges.collect())
        })
    })
}

/// k disjoint cliques of the given sizes, then stars, in one graph.
fn cliques_and_stars(cliques: &[u32], stars: &[u32]) -> (u32, Vec<Edge>) {
    let mut edges = Vec::new();
    let mut next = 0;
    for &k in cliques {
        for a in next..next + k {
            edges.extend((a + 1..next + k).map(|b| Edge::new(a, b)));
        }
        next += k;
    }
    for &leaves in stars {
        edges.extend((next + 1..=next + leaves).map(|b| Edge::new(next, b)));
        next += leaves + 1;
    }
    (next, edges)
}

#[test]
fn cliques_and_stars_have_the_textbook_values() {
    // A k-clique: LP = k/2, I_R = k − 1; a star: LP = I_R = 1.
    let (n, edges) = cliques_and_stars(&[2, 3, 4, 7], &[1, 5, 9]);
    let adjacency = Adjacency::from_edges(n, &edges);
    let lp = fractional_cover(&adjacency);
    assert_eq!(lp.twice_value(), 2 + 3 + 4 + 7 + 3 * 2);
    assert_eq!(minimum_cover(&adjacency, &lp, 1_000), MinimumCover::Exact(1 + 2 + 3 + 6 + 3));
    // Nodes: cliques 0-1, 2-4, 5-8, 9-15; stars 16(17), 18(19..=23), 24(25..=33).
    // A star with ≥ 2 leaves has the unique optimum centre 1, leaves 0; a
    // clique with k ≥ 3 the unique optimum ½ everywhere (a lone edge may
    // be ½ + ½ or 1 + 0).
    for (centre, leaves) in [(18, 19..=23), (24, 25..=33)] {
        assert_eq!(lp.twice_weight(centre), 2);
        assert!(leaves.into_iter().all(|v| lp.twice_weight(v) == 0));
    }
    assert!((2..16).all(|v| lp.twice_weight(v) == 1));
    // Zero: the 14 leaves, and one end of each lone edge or none.
    let nonzero = lp.ones().chain(lp.halves()).count();
    assert!((34 - 14 - 2..=34 - 14).contains(&nonzero), "{nonzero}");
}

#[test]
fn adjacency_rows_are_sorted_and_complete() {
    let graph = ConflictGraph::from_edges(
        5,
        [(3, 1), (0, 4), (1, 0), (4, 3)].map(|(a, b)| Edge::new(a, b)),
    );
    let adjacency = Adjacency::from_graph(&graph, 2);
    assert_eq!(adjacency.neighbours(0), &[1, 4]);
    assert_eq!(adjacency.neighbours(1), &[0, 3]);
    assert_eq!(adjacency.neighbours(2), &[] as &[u32]);
    assert_eq!(adjacency.neighbours(4), &[0, 3]);
    assert_eq!((adjacency.nodes(), adjacency.edges(), adjacency.degree(3)), (5, 4, 2));
    assert_eq!(Adjacency::from_edges(5, &graph.edges().collect::<Vec<_>>()), adjacency);
}

#[test]
fn adjacency_rows_stay_sorted_across_many_flushes() {
    let n = 3_000u32;
    let mut edges = random_edges(n, 20_000, 11);
    edges.sort_unstable();
    edges.dedup();
    let one_flush = Adjacency::from_stream(n, &edges);
    let graph = ConflictGraph::from_edges(n, edges.iter().copied());
    let degrees = crate::count_degrees(&graph, 1);
    // A flush every 7 edges: rows get their lower entries in many pieces.
    let many = Adjacency::build(&graph, degrees.degrees(), 1, 7);
    assert_eq!(many, one_flush);
    // Split into node ranges, one per thread, with shards smaller than a
    // range and ranges cutting through shards.
    let mut builder = GraphBuilder::with_shard_nodes(n, 100);
    for e in &edges {
        builder.add(e.u, e.v);
    }
    let sharded = builder.finish();
    for threads in [1, 2, 3, 7, 64] {
        let split = Adjacency::from_degrees(&sharded, degrees.degrees(), threads);
        assert_eq!(split, one_flush, "{threads} threads");
        assert_eq!(Adjacency::build(&sharded, degrees.degrees(), threads, 7 * threads), one_flush);
    }
    for u in 0..n {
        let mut expected: Vec<u32> = edges
            .iter()
            .filter_map(|e| (e.u == u).then_some(e.v).or((e.v == u).then_some(e.u)))
            .collect();
        expected.sort_unstable();
        assert_eq!(many.neighbours(u), &expected[..]);
    }
}

/// Several streams on several threads: each row lists its neighbours in
/// stream order, stream after stream, whatever the threads; one stream in
/// Λ's order gives sorted rows.
#[test]
fn adjacency_from_streams_keeps_stream_order_on_any_threads() {
    let n = 2_000u32;
    let mut edges = random_edges(n, 15_000, 5);
    edges.sort_unstable();
    edges.dedup();
    let sorted = Adjacency::from_stream(n, &edges);
    // Λ cut in three, and the same edges dealt out of order.
    let (a, rest) = edges.split_at(4_000);
    let (b, c) = rest.split_at(6_000);
    let shuffled: Vec<Vec<Edge>> =
        (0..4).map(|k| edges.iter().rev().skip(k).step_by(4).copied().collect()).collect();
    for threads in [1, 2, 3, 7] {
        assert_eq!(Adjacency::from_streams(n, &[a, b, c], threads), sorted, "{threads} threads");
        let streams: Vec<&[Edge]> = shuffled.iter().map(Vec::as_slice).collect();
        let got = Adjacency::from_streams(n, &streams, threads);
        for u in 0..n {
            let expected: Vec<u32> = streams
                .iter()
                .flat_map(|s| s.iter())
                .filter_map(|e| (e.u == u).then_some(e.v).or((e.v == u).then_some(e.u)))
                .collect();
            assert_eq!(got.neighbours(u), &expected[..], "row {u}, {threads} threads");
        }
    }
    assert_eq!(Adjacency::from_streams(5, &[], 2).edges(), 0);
}

#[test]
fn a_work_limit_reports_bounds_not_a_value() {
    // A random kernel (no cliques or stars to reduce): many search nodes.
    let n = 40u32;
    let edges = random_edges(n, 300, 3);
    let adjacency = Adjacency::from_edges(n, &edges);
    let lp = fractional_cover(&adjacency);
    let MinimumCover::Exact(opt) = minimum_cover(&adjacency, &lp, u64::MAX) else {
        panic!("no limit: always exact")
    };
    match minimum_cover(&adjacency, &lp, 1) {
        MinimumCover::TooSlow { lower, upper } => {
            assert!(lower <= opt && opt <= upper, "{lower} ≤ {opt} ≤ {upper}");
        }
        MinimumCover::Exact(v) => panic!("one branch node cannot solve this kernel, got {v}"),
    }
}

/// The kernel's 2·LP for every first `keep` and thread count, each equal
/// to Hopcroft–Karp on the whole adjacency.
fn assert_kernel_is_exact(n: u32, edges: &[Edge], shard_nodes: u32) -> Result<(), TestCaseError> {
    let mut builder = GraphBuilder::with_shard_nodes(n, shard_nodes);
    for e in edges {
        builder.add(e.u, e.v);
    }
    let graph = builder.finish();
    let mut greedy = GreedyCover::new(n);
    walk(graph.edges(), &mut [&mut greedy]);
    let expected = fractional_cover(&Adjacency::from_edges(n, edges)).twice_value();
    for keep in [1, 2, 3, 32] {
        for threads in [1, 2, 3] {
            let twice = greedy_kernel::kernel_twice_lp(&graph, &greedy, keep, threads);
            prop_assert_eq!(twice, expected, "keep {}, {} threads", keep, threads);
        }
    }
    prop_assert_eq!(twice_fractional_cover(&graph, &greedy, 2), expected);
    Ok(())
}

#[test]
fn the_kernel_lp_equals_the_whole_graphs_on_stars_cliques_and_random_graphs() {
    // Stars are cut (centres at x = 1); cliques and random graphs need the
    // augmenting-path test, and with keep = 1 more passes.
    let (n, edges) = cliques_and_stars(&[2, 3, 4, 7, 12], &[1, 5, 9, 40]);
    assert_kernel_is_exact(n, &edges, 8).unwrap();
    for (seed, count) in [(1, 2_000), (2, 6_000), (3, 20_000)] {
        assert_kernel_is_exact(3_000, &random_edges(3_000, count, seed), 100).unwrap();
    }
    // Stars whose leaves are shared: a centre's cut leaves matter.
    let mut shared = Vec::new();
    for centre in 0..6u32 {
        shared
            .extend((6..30).filter(|leaf| leaf % (centre + 2) != 0).map(|l| Edge::new(centre, l)));
    }
    assert_kernel_is_exact(30, &shared, 4).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn the_kernel_lp_matches_the_whole_graphs((n, edges) in edges_strategy(14)) {
        assert_kernel_is_exact(n, &edges, 3)?;
    }

    #[test]
    fn lp_and_exact_cover_match_brute_force((n, edges) in edges_strategy(9)) {
        let adjacency = Adjacency::from_edges(n, &edges);
        let lp = fractional_cover(&adjacency);
        prop_assert_eq!(lp.twice_value(), brute_force_twice_lp(n, &edges));
        // The weights found are a feasible fractional cover of that value.
        for e in &edges {
            prop_assert!(lp.twice_weight(e.u) + lp.twice_weight(e.v) >= 2);
        }
        let opt = brute_force_cover(n, &edges);
        prop_assert_eq!(minimum_cover(&adjacency, &lp, u64::MAX), MinimumCover::Exact(opt));
        // The chain of bounds: c/2 ≤ LP ≤ I_R ≤ min(c, 2·LP).
        let graph = ConflictGraph::from_edges(n, edges.iter().copied());
        let mut greedy = GreedyCover::new(n);
        walk(graph.edges(), &mut [&mut greedy]);
        let c = greedy.size().cover;
        prop_assert!(c <= lp.twice_value() && lp.twice_value() <= 2 * opt);
        prop_assert!(opt <= c && opt <= lp.twice_value());
    }

    /// The matching outside some rows is the greedy matching of the graph
    /// without them, and a node added to a graph (here: the last one taken
    /// out of the excluded rows, at every id) moves it by 0 or +1: what the
    /// key partition bound's sensitivity rests on (`dpincon-release`).
    #[test]
    fn the_matching_outside_rows_is_the_induced_subgraphs(
        (n, edges) in edges_strategy(10),
        excluded in proptest::collection::vec(any::<bool>(), 10),
    ) {
        let graph = ConflictGraph::from_edges(n, edges.iter().copied());
        let out: Vec<u32> = (0..n).filter(|&u| excluded[u as usize]).collect();
        let matching = |out: &[u32]| {
            let kept: Vec<Edge> = edges
                .iter()
                .copied()
                .filter(|e| !out.contains(&e.u) && !out.contains(&e.v))
                .collect();
            let mut greedy = GreedyCover::new(n);
            walk(ConflictGraph::from_edges(n, kept).edges(), &mut [&mut greedy]);
            greedy.size().lower_bound
        };
        prop_assert_eq!(greedy_matching_outside(&graph, &out), matching(&out));
        for (i, &v) in out.iter().enumerate() {
            let mut fewer = out.clone();
            fewer.remove(i);
            let (with, without) = (matching(&fewer), matching(&out));
            prop_assert!(with == without || with == without + 1, "node {}: {} vs {}", v, with, without);
        }
    }

    #[test]
    fn exact_cover_matches_brute_force_on_larger_graphs((n, edges) in edges_strategy(16)) {
        let adjacency = Adjacency::from_edges(n, &edges);
        let lp = fractional_cover(&adjacency);
        prop_assert_eq!(
            minimum_cover(&adjacency, &lp, u64::MAX),
            MinimumCover::Exact(brute_force_cover(n, &edges))
        );
    }
}
