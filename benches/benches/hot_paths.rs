//! Micro-benchmarks of the hot paths: FD pair emission, IEJoin, the
//! projection pass for many θ at once, and discrete Laplace sampling.
//! Run with `cargo bench -p dpincon-benches`.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use dpincon_benches::{fd, relation, two_inequalities};
use dpincon_detect::{DetectOptions, detect};
use dpincon_measures::{DegreeBound, EdgeAddition, walk};
use dpincon_mechanisms::{DiscreteLaplace, NoiseRng};

const ONE_THREAD: DetectOptions =
    DetectOptions { threads: 1, brute_force: false, memory_limit: None, max_pairs: None };

fn fd_pairs(c: &mut Criterion) {
    let mut group = c.benchmark_group("fd_pair_emission");
    for rows in [10_000u32, 100_000] {
        let rel = relation(rows, u64::from(rows / 200), 20);
        let edges = detect(&rel, &[fd()], ONE_THREAD).unwrap().graph.edge_count();
        group.throughput(Throughput::Elements(edges));
        group.bench_with_input(BenchmarkId::from_parameter(rows), &rel, |b, rel| {
            b.iter(|| detect(rel, &[fd()], ONE_THREAD).unwrap().graph.edge_count())
        });
    }
    group.finish();
}

fn iejoin(c: &mut Criterion) {
    let mut group = c.benchmark_group("iejoin");
    group.sample_size(10);
    for rows in [10_000u32, 50_000] {
        let rel = relation(rows, 10, 20);
        let edges = detect(&rel, &[two_inequalities()], ONE_THREAD).unwrap().graph.edge_count();
        group.throughput(Throughput::Elements(edges));
        group.bench_with_input(BenchmarkId::from_parameter(rows), &rel, |b, rel| {
            b.iter(|| detect(rel, &[two_inequalities()], ONE_THREAD).unwrap().graph.edge_count())
        });
    }
    group.finish();
}

fn projection_pass(c: &mut Criterion) {
    let rel = relation(100_000, 500, 10);
    let graph = detect(&rel, &[fd()], ONE_THREAD).unwrap().graph;
    let bounds: Vec<DegreeBound> =
        [1, 2, 5, 10, 20, 50, 100, 200, 500].map(|t| DegreeBound::new(t).unwrap()).to_vec();
    let mut group = c.benchmark_group("projection_pass");
    group.throughput(Throughput::Elements(graph.edge_count()));
    group.bench_function("9_thetas_one_pass", |b| {
        b.iter(|| {
            let mut projection = EdgeAddition::new(graph.nodes(), &bounds);
            walk(graph.edges(), &mut [&mut projection]);
            projection.counts()
        })
    });
    group.finish();
}

fn discrete_laplace(c: &mut Criterion) {
    let mut group = c.benchmark_group("discrete_laplace");
    for (sensitivity, epsilon) in [(1u64, 1.0), (200, 0.6)] {
        let noise = DiscreteLaplace::new(sensitivity, epsilon).unwrap();
        let mut rng = NoiseRng::seeded(1);
        group.bench_function(format!("scale_{:.0}", noise.scale_f64()), |b| {
            b.iter(|| noise.sample(&mut rng))
        });
    }
    group.finish();
}

criterion_group!(benches, fd_pairs, iejoin, projection_pass, discrete_laplace);
criterion_main!(benches);
