//! The frozen graph (`dpincon-graph`) against the `roaring` crate, one
//! `RoaringBitmap` per row holding the row's neighbours above it, on the
//! same seeded edge sets (issue 50; the figures are in
//! `crates/dpincon-graph/README.md`, "Against the roaring crate"):
//!
//! - build, from pairs (and, for the FD shape, from its groups, as
//!   detection hands them over), on one thread each;
//! - walking every edge in Λ, `(u, v)` ascending: the edge stream and rows
//!   by chunks, against roaring's iterator and its `next_many`;
//! - the degree pass the measures make (`DegreeCounts::visit_row`);
//! - bytes held and serialized, printed once per shape before the timings.
//!
//! Run with `cargo bench -p dpincon-benches --bench adjacency`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::{AtomicIsize, Ordering};

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use dpincon_benches::{fd_groups, group_pairs, scattered_pairs};
use dpincon_graph::{ConflictGraph, Edge, EdgeSink, GraphBuilder, Multipartite, SpillConfig};
use dpincon_measures::DegreeCounts;
use roaring::RoaringBitmap;

/// The system allocator, counting the bytes live: what a graph or a vector
/// of bitmaps holds is the difference across building it.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

#[allow(unsafe_code)]
// SAFETY: every call goes to the system allocator unchanged, with the
// caller's own arguments; the counter only adds and subtracts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_add(new_size as isize - layout.size() as isize, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// What `build` returns and the heap bytes it still holds.
fn held<T>(build: impl FnOnce() -> T) -> (T, u64) {
    let before = LIVE.load(Ordering::Relaxed);
    let built = build();
    (built, (LIVE.load(Ordering::Relaxed) - before) as u64)
}

/// One `RoaringBitmap` per row: node `u`'s neighbours above it, as the
/// graph stores them (and as an earlier version of it did, in roaring).
struct RoaringRows(Vec<RoaringBitmap>);

impl RoaringRows {
    fn new(nodes: u32) -> Self {
        RoaringRows((0..nodes).map(|_| RoaringBitmap::new()).collect())
    }

    /// Built from `pairs` sorted and deduplicated, each row appended at
    /// once: roaring's fastest way in.
    fn from_sorted(nodes: u32, pairs: &mut [(u32, u32)]) -> Self {
        pairs.iter_mut().for_each(|p| *p = (p.0.min(p.1), p.0.max(p.1)));
        pairs.sort_unstable();
        let mut rows = Self::new(nodes);
        for run in pairs.chunk_by(|a, b| a.0 == b.0) {
            let mut values = run.iter().map(|p| p.1).collect::<Vec<_>>();
            values.dedup();
            rows.0[run[0].0 as usize].append(values).expect("a run ascends");
        }
        rows
    }
}

impl EdgeSink for RoaringRows {
    fn add(&mut self, a: u32, b: u32) {
        let e = Edge::new(a, b);
        self.0[e.u as usize].insert(e.v);
    }

    // Groups reach it row by row (`Multipartite::emit_rows`, the trait's
    // default), each row appended whole where it is new.
    fn add_upper(&mut self, a: u32, upper: &[u32]) {
        let row = &mut self.0[a as usize];
        let values = upper.iter().copied();
        if row.max().is_none_or(|m| upper.first().is_none_or(|&v| v > m)) {
            row.append(values).expect("an upper row ascends");
        } else {
            *row |= RoaringBitmap::from_sorted_iter(values).expect("an upper row ascends");
        }
    }
}

/// One generated edge set, as pairs and (FD shape) as groups.
struct Shape {
    name: &'static str,
    nodes: u32,
    pairs: Vec<(u32, u32)>,
    groups: Option<Vec<Arc<Multipartite>>>,
}

impl Shape {
    fn fd(name: &'static str, nodes: u32, groups: u32, dirty: u64, seed: u64) -> Self {
        let groups: Vec<Multipartite> = fd_groups(nodes, groups, dirty, seed)
            .iter()
            .map(|classes| Multipartite::new(classes.iter().map(Vec::as_slice)))
            .collect();
        let pairs = group_pairs(&groups);
        Shape { name, nodes, pairs, groups: Some(groups.into_iter().map(Arc::new).collect()) }
    }

    fn scattered(name: &'static str, nodes: u32, pairs: usize, seed: u64) -> Self {
        Shape { name, nodes, pairs: scattered_pairs(nodes, pairs, seed), groups: None }
    }

    /// The graph from the pairs, through a writer as detection's threads
    /// write, frozen on one thread.
    fn graph_from_pairs(&self) -> ConflictGraph {
        let builder = GraphBuilder::new(self.nodes);
        {
            let mut writer = builder.writer();
            self.pairs.iter().for_each(|&(a, b)| writer.add(a, b));
        }
        builder.finish_on(1)
    }

    /// The graph from the groups handed over whole, as detection hands an
    /// FD's groups to its writers (`add_multipartite`).
    fn graph_from_groups(&self, builder: GraphBuilder) -> ConflictGraph {
        {
            let mut writer = builder.writer();
            for group in self.groups.as_ref().expect("an FD shape") {
                writer.add_multipartite(group, 0..group.len());
            }
        }
        builder.finish_on(1)
    }

    fn roaring_from_groups(&self) -> RoaringRows {
        let mut rows = RoaringRows::new(self.nodes);
        for group in self.groups.as_ref().expect("an FD shape") {
            rows.add_multipartite(group, 0..group.len());
        }
        rows
    }

    fn roaring_from_pairs(&self) -> RoaringRows {
        let mut rows = RoaringRows::new(self.nodes);
        self.pairs.iter().for_each(|&(a, b)| rows.add(a, b));
        rows
    }
}

/// Λ walked through the edge stream, folded so nothing is skipped.
fn walk_graph_edges(graph: &ConflictGraph) -> u64 {
    graph.edges().fold(0, |s, e| s + u64::from(e.u ^ e.v))
}

/// Λ walked row by row, each row by chunks (`Row::chunks`).
fn walk_graph_rows(graph: &ConflictGraph) -> u64 {
    let mut s = 0;
    graph.for_each_row(0..graph.shard_count(), |u, row| {
        let _ = row.chunks(|chunk| {
            chunk.iter().for_each(|&v| s += u64::from(u ^ v));
            ControlFlow::<()>::Continue(())
        });
    });
    s
}

fn walk_roaring_iter(rows: &RoaringRows) -> u64 {
    let mut s = 0;
    for (u, row) in rows.0.iter().enumerate() {
        row.iter().for_each(|v| s += u64::from(u as u32 ^ v));
    }
    s
}

/// Λ walked row by row, each row by up to 256 values (`Iter::next_many`).
fn walk_roaring_chunks(rows: &RoaringRows) -> u64 {
    let (mut s, mut buffer) = (0, [0u32; 256]);
    for (u, row) in rows.0.iter().enumerate() {
        let mut values = row.iter();
        loop {
            let chunk = values.next_many(&mut buffer);
            if chunk.is_empty() {
                break;
            }
            chunk.iter().for_each(|&v| s += u64::from(u as u32 ^ v));
        }
    }
    s
}

/// Every node's degree, as the measures count it (`DegreeCounts`).
fn degrees_graph(graph: &ConflictGraph) -> u32 {
    let mut counts = DegreeCounts::new(graph.nodes());
    graph.for_each_row(0..graph.shard_count(), |u, row| counts.visit_row(u, row));
    counts.counts().max_degree
}

/// The same count over the bitmaps: a row's length, then its values.
fn degrees_roaring(rows: &RoaringRows) -> u32 {
    let (mut degree, mut buffer) = (vec![0u32; rows.0.len()], [0u32; 256]);
    for (u, row) in rows.0.iter().enumerate() {
        degree[u] += row.len() as u32;
        let mut values = row.iter();
        loop {
            let chunk = values.next_many(&mut buffer);
            if chunk.is_empty() {
                break;
            }
            chunk.iter().for_each(|&v| degree[v as usize] += 1);
        }
    }
    degree.into_iter().max().unwrap_or(0)
}

/// The frozen layout's sizes, read through the public `Row`: per shard
/// 16 bytes a row (+1), 8 a container, 2 a `u16` unit (a value, or 4,096
/// words for a bitmap), as `FrozenShard::heap_bytes` counts them; the
/// spill file's shard (`FrozenShard::to_bytes`) adds a 32-byte header and
/// the record format (`encode_row`, the wire) takes 8 bytes a row with
/// values, 4 a container, 2 a unit.
#[derive(Debug, Default)]
struct Sizes {
    rows: u64,
    shards: u64,
    containers: u64,
    bitmaps: u64,
    units: u64,
    records: u64,
}

impl Sizes {
    fn of(graph: &ConflictGraph) -> Self {
        let mut layout = Sizes::default();
        let mut values = Vec::new();
        let mut record = Vec::new();
        for k in 0..graph.shard_count() {
            layout.shards += 1;
            graph.for_each_row(k..k + 1, |u, row| {
                layout.rows += 1;
                for block in row.blocks() {
                    layout.containers += 1;
                    layout.bitmaps += u64::from(block.len() > 4096);
                    layout.units += u64::from(block.len().min(4096));
                }
                values.clear();
                values.extend(row.iter());
                record.clear();
                dpincon_graph::encode_row(&mut record, u, &values);
                layout.records += record.len() as u64;
            });
        }
        layout
    }

    fn heap(&self) -> u64 {
        16 * (self.rows + self.shards) + 8 * self.containers + 2 * self.units
    }

    fn spill(&self) -> u64 {
        32 * self.shards + self.heap()
    }
}

/// Roaring's portable format, a row at a time: a 4-byte node id and the
/// row's `serialize_into` bytes, for each row with neighbours.
fn roaring_portable(rows: &RoaringRows) -> u64 {
    rows.0.iter().filter(|r| !r.is_empty()).map(|r| 4 + r.serialized_size() as u64).sum()
}

/// The spill file's bytes for `shape` built from groups alone under a
/// one-byte budget: nothing spills while it is built (groups are kept,
/// not written), and every shard is written frozen when it is finished.
fn spilled_frozen_bytes(shape: &Shape) -> u64 {
    let dir = std::env::temp_dir();
    let config = SpillConfig { dir, memory_limit: 1 };
    let builder = GraphBuilder::with_spill(shape.nodes, &config).expect("a spill file");
    let graph = if shape.groups.is_some() {
        shape.graph_from_groups(builder)
    } else {
        // Each row with neighbours as a star: the row, then its uppers.
        let mut uppers = vec![Vec::new(); shape.nodes as usize];
        for &(a, b) in &shape.pairs {
            let e = Edge::new(a, b);
            uppers[e.u as usize].push(e.v);
        }
        {
            let mut writer = builder.writer();
            for (u, upper) in uppers.iter_mut().enumerate().filter(|r| !r.1.is_empty()) {
                upper.sort_unstable();
                upper.dedup();
                let star = Arc::new(Multipartite::new([&[u as u32][..], &upper[..]]));
                writer.add_multipartite(&star, 0..star.len());
            }
        }
        builder.finish_on(1)
    };
    graph.spilled_bytes()
}

fn mib(bytes: u64) -> String {
    format!("{:.2} MiB", bytes as f64 / f64::from(1 << 20))
}

/// Prints the shape's bytes held and serialized, and checks that both
/// sides hold the same edges.
fn report(shape: &Shape, graph: &ConflictGraph, graph_held: u64) {
    let layout = Sizes::of(graph);
    let (inserted, inserted_held) = held(|| shape.roaring_from_pairs());
    let mut pairs = shape.pairs.clone();
    let (sorted, sorted_held) = held(|| RoaringRows::from_sorted(shape.nodes, &mut pairs));
    drop(pairs);
    assert_eq!(walk_graph_edges(graph), walk_roaring_iter(&inserted), "{}", shape.name);
    assert!(inserted.0 == sorted.0, "{}", shape.name);
    let edges: u64 = inserted.0.iter().map(RoaringBitmap::len).sum();
    assert_eq!(edges, graph.edge_count());
    let stats = inserted.0.iter().map(|r| r.statistics()).fold((0, 0), |(c, b), s| {
        (c + u64::from(s.n_containers), b + u64::from(s.n_bitset_containers))
    });
    assert_eq!(stats, (layout.containers, layout.bitmaps), "the same containers");
    let spilled = spilled_frozen_bytes(shape);
    assert_eq!(spilled, layout.spill(), "the spill file holds the layout's bytes");
    let portable = roaring_portable(&inserted);
    let mut optimized = RoaringRows(inserted.0.clone());
    optimized.0.iter_mut().for_each(|r| {
        r.optimize();
    });
    let optimized = roaring_portable(&optimized);
    let e = edges as f64;
    let per_edge = |b: u64| format!("{:.2} B/edge", b as f64 / e);
    eprintln!("\n== adjacency/{}: {} rows, {edges} edges", shape.name, shape.nodes);
    eprintln!(
        "   containers {} ({} bitmaps), values in arrays {}",
        layout.containers,
        layout.bitmaps,
        edges - inserted.0.iter().map(|r| r.statistics().n_values_bitset_containers).sum::<u64>()
    );
    let line = |what: &str, b: u64| eprintln!("   {what:<46} {:>12}  {}", mib(b), per_edge(b));
    line("graph heap, frozen layout (heap_bytes)", layout.heap());
    line("graph heap, measured (ConflictGraph)", graph_held);
    line("roaring heap, measured (insert per pair)", inserted_held);
    line("roaring heap, measured (sorted, append per row)", sorted_held);
    line("graph spill file (to_bytes, as written)", spilled);
    line("roaring portable format (+4 B node id a row)", portable);
    line("roaring portable after optimize() (runs)", optimized);
    line("graph row records (encode_row: the wire)", layout.records);
}

fn shapes() -> Vec<Shape> {
    vec![
        // Four FD groups of ~25,000 rows, one row in 100 dirty: 24.6 M edges.
        Shape::fd("fd_1e5", 100_000, 4, 100, 1),
        // Three pairs a row, scattered.
        Shape::scattered("scattered_1e5", 100_000, 300_000, 2),
        Shape::scattered("scattered_1e6", 1_000_000, 3_000_000, 3),
    ]
}

fn adjacency(c: &mut Criterion) {
    for shape in shapes() {
        let (graph, graph_held) = held(|| shape.graph_from_pairs());
        report(&shape, &graph, graph_held);
        let rows = shape.roaring_from_pairs();
        let name = shape.name;

        let mut group = c.benchmark_group("adjacency_build");
        group.sample_size(10);
        group.throughput(Throughput::Elements(shape.pairs.len() as u64));
        group.bench_function(BenchmarkId::new("graph_pairs", name), |b| {
            b.iter_with_large_drop(|| shape.graph_from_pairs())
        });
        group.bench_function(BenchmarkId::new("roaring_insert", name), |b| {
            b.iter_with_large_drop(|| shape.roaring_from_pairs())
        });
        group.bench_function(BenchmarkId::new("roaring_sorted", name), |b| {
            b.iter_batched(
                || shape.pairs.clone(),
                |mut pairs| RoaringRows::from_sorted(shape.nodes, &mut pairs),
                BatchSize::PerIteration,
            )
        });
        if shape.groups.is_some() {
            group.bench_function(BenchmarkId::new("graph_groups", name), |b| {
                b.iter_with_large_drop(|| shape.graph_from_groups(GraphBuilder::new(shape.nodes)))
            });
            group.bench_function(BenchmarkId::new("roaring_groups", name), |b| {
                b.iter_with_large_drop(|| shape.roaring_from_groups())
            });
        }
        group.finish();

        let mut group = c.benchmark_group("adjacency_walk");
        group.sample_size(10);
        group.throughput(Throughput::Elements(graph.edge_count()));
        group.bench_function(BenchmarkId::new("graph_edges", name), |b| {
            b.iter(|| walk_graph_edges(black_box(&graph)))
        });
        group.bench_function(BenchmarkId::new("graph_row_chunks", name), |b| {
            b.iter(|| walk_graph_rows(black_box(&graph)))
        });
        group.bench_function(BenchmarkId::new("roaring_iter", name), |b| {
            b.iter(|| walk_roaring_iter(black_box(&rows)))
        });
        group.bench_function(BenchmarkId::new("roaring_next_many", name), |b| {
            b.iter(|| walk_roaring_chunks(black_box(&rows)))
        });
        group.finish();

        let mut group = c.benchmark_group("adjacency_degrees");
        group.sample_size(10);
        group.throughput(Throughput::Elements(graph.edge_count()));
        assert_eq!(degrees_graph(&graph), degrees_roaring(&rows));
        group.bench_function(BenchmarkId::new("graph", name), |b| {
            b.iter(|| degrees_graph(black_box(&graph)))
        });
        group.bench_function(BenchmarkId::new("roaring", name), |b| {
            b.iter(|| degrees_roaring(black_box(&rows)))
        });
        group.finish();
    }
}

criterion_group!(benches, adjacency);
criterion_main!(benches);
