//! Driving detection: planning each constraint, partitioning it, and
//! spreading the groups over threads that write into one shared builder.

use std::sync::atomic::{AtomicUsize, Ordering};

use dpincon_constraints::TupleVar;
use dpincon_graph::{BuilderParts, ConflictGraph, EdgeSink, GraphBuilder, SpillConfig};

use crate::DetectError;
use crate::algorithms::{Group, Part, partition, run_group, sides};
use crate::cap::{Capped, PairCap};
use crate::compile::{KeyConstraint, KeyOperand};
use crate::plan::{DetectionPlan, Plan, brute_force_plans, distinct_edge_sets};
use crate::relation::Relation;

/// How to run detection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DetectOptions {
    /// Worker threads (≥ 1).
    pub threads: usize,
    /// Test every ordered pair instead of planning (the reference oracle and
    /// the naive baseline of benchmarks; quadratic).
    pub brute_force: bool,
    /// Bytes detection may hold (the relation, its partitioned rows, the
    /// writers' buffers and the graph) before the graph spills to the
    /// temporary directory (`None`: no limit). Never changes the graph.
    pub memory_limit: Option<u64>,
    /// Pairs the drivers may emit before detection stops with
    /// [`DetectError::PairCap`] (`None`: no cap). Every emitted pair
    /// violates, each ordered pair of a constraint at most once, so more
    /// than 2·k·H pairs of k constraints prove more than H edges
    /// (README, "The pair cap"). Multipartite groups (keys and FDs) are not
    /// counted: their pairs cost nothing until the freeze.
    pub max_pairs: Option<u64>,
}

impl DetectOptions {
    /// The default options with `threads` threads.
    pub fn with_threads(threads: usize) -> Self {
        DetectOptions { threads, ..DetectOptions::default() }
    }

    /// The [`DetectOptions::max_pairs`] of `constraints` constraints under
    /// an edge cap of `max_edges`: 2·k·H, past which the graph is surely
    /// over H, so detection's work stops with the cap's verdict known
    /// (README, "The pair cap").
    pub fn pair_cap(max_edges: Option<u64>, constraints: usize) -> Option<u64> {
        max_edges.map(|h| h.saturating_mul(2).saturating_mul(constraints.max(1) as u64))
    }
}

impl Default for DetectOptions {
    fn default() -> Self {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        DetectOptions { threads, brute_force: false, memory_limit: None, max_pairs: None }
    }
}

/// The graph builder: plain, or spilling past the memory limit.
pub(crate) fn new_builder(n: u32, options: &DetectOptions) -> Result<GraphBuilder, DetectError> {
    match options.memory_limit {
        None => Ok(GraphBuilder::new(n)),
        Some(limit) => {
            let config = SpillConfig { dir: std::env::temp_dir(), memory_limit: limit };
            GraphBuilder::with_spill(n, &config).map_err(|e| DetectError::Spill {
                dir: config.dir.display().to_string(),
                message: e.to_string(),
            })
        }
    }
}

/// What is left of `limit` for the graph once `held` bytes are taken, and
/// never under an eighth of it (the graph then spills early, but the job
/// still runs).
fn graph_share(limit: u64, held: u64) -> u64 {
    limit.saturating_sub(held).max(limit / 8)
}

/// The graph and how each constraint was detected.
#[derive(Debug)]
pub struct Detection {
    /// The conflict graph.
    pub graph: ConflictGraph,
    /// One plan per constraint, in constraint order.
    pub plans: Vec<DetectionPlan>,
}

struct Task<'a> {
    plan: &'a Plan,
    left: &'a [u32],
    right: &'a [u32],
    group: Group,
    part: Part,
}

impl Task<'_> {
    /// Candidate pairs the task may look at: its scheduling weight.
    fn weight(&self) -> usize {
        self.group.left.len() * self.group.right.len() / self.part.of
    }
}

/// Builds the conflict graph of `relation` under `constraints` (SPEC §2).
pub fn detect(
    relation: &Relation,
    constraints: &[KeyConstraint],
    options: DetectOptions,
) -> Result<Detection, DetectError> {
    let threads = options.threads;
    let finish = |builder: GraphBuilder| builder.finish_on(threads);
    let (graph, plans) = detect_with(relation, constraints, options, finish)?;
    Ok(Detection { graph, plans })
}

/// As [`detect`], the graph left unfrozen as its builder's parts (row
/// records and multipartite groups): a cluster's executor hands them to
/// the coordinator's builder, which freezes every partition's at once.
pub fn detect_parts(
    relation: &Relation,
    constraints: &[KeyConstraint],
    options: DetectOptions,
) -> Result<(BuilderParts, Vec<DetectionPlan>), DetectError> {
    detect_with(relation, constraints, options, GraphBuilder::into_parts)
}

fn detect_with<G>(
    relation: &Relation,
    constraints: &[KeyConstraint],
    options: DetectOptions,
    finish: impl FnOnce(GraphBuilder) -> G,
) -> Result<(G, Vec<DetectionPlan>), DetectError> {
    let n = relation.rows();
    if options.brute_force {
        let mut builder = new_builder(n, &options)?;
        for c in constraints {
            brute_force(relation, c, &mut builder);
        }
        return Ok((finish(builder), brute_force_plans(constraints)));
    }
    let plans: Vec<Plan> = constraints.iter().map(Plan::new).collect();
    // Rows of each role, sorted into partitions, constraints shared out
    // over the threads. A constraint with an earlier one's edges gets no
    // rows, so no task.
    let distinct = distinct_edge_sets(constraints);
    let partitioned = |i: usize| -> (Vec<u32>, Vec<u32>, Vec<Group>) {
        let plan = &plans[i];
        if !distinct[i] {
            return (Vec::new(), Vec::new(), Vec::new());
        }
        let (mut left, mut right) = sides(relation, plan);
        let groups = partition(relation, plan, &mut left, &mut right);
        if plan.symmetric {
            // Both roles are the same rows in the same order: keep one copy.
            right = Vec::new();
        }
        (left, right, groups)
    };
    let rows = in_parallel(plans.len(), options.threads, partitioned);
    let whole: Vec<Task<'_>> = plans
        .iter()
        .zip(&rows)
        .flat_map(|(plan, (left, right, groups))| {
            let right = if plan.symmetric { left } else { right };
            groups.iter().map(move |g| Task {
                plan,
                left,
                right,
                group: g.clone(),
                part: Part::WHOLE,
            })
        })
        .collect();
    // A group heavier than a share of the work is split over its t1 rows,
    // so one big partition (a populous state) does not leave a thread idle.
    let total: usize = whole.iter().map(Task::weight).sum();
    let share = total / (4 * options.threads.max(1)) + 1;
    let mut tasks: Vec<Task<'_>> = Vec::with_capacity(whole.len());
    for task in whole {
        let parts = (task.weight() / share).clamp(1, 4 * options.threads.max(1));
        for index in 0..parts {
            tasks.push(Task { part: Part { index, of: parts }, group: task.group.clone(), ..task });
        }
    }
    // Largest first, so no thread is left with a giant group at the end.
    tasks.sort_by_key(|t| std::cmp::Reverse(t.weight()));
    let next = AtomicUsize::new(0);
    let threads = options.threads.max(1).min(tasks.len().max(1));
    // The limit covers the whole detection: what the relation and the
    // partitioned rows hold is not left for the graph (a 10^7-row build
    // under 6 GiB peaked at 9 GiB when the graph alone had the limit).
    let held = relation.heap_bytes()
        + rows
            .iter()
            .map(|(l, r, g)| 4 * (l.capacity() + r.capacity()) + size_of::<Group>() * g.capacity())
            .sum::<usize>() as u64;
    let options = DetectOptions {
        memory_limit: options.memory_limit.map(|limit| graph_share(limit, held)),
        ..options
    };
    let builder = new_builder(n, &options)?;
    let cap = PairCap::new(options.max_pairs);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let (tasks, next, builder, cap) = (&tasks, &next, &builder, &cap);
            scope.spawn(move || {
                let mut writer = builder.writer();
                let mut sink = Capped::new(&mut writer, cap);
                while !cap.over() {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(task) = tasks.get(i) else { break };
                    let left = &task.left[task.group.left.clone()];
                    let right = &task.right[task.group.right.clone()];
                    let same = task.plan.symmetric;
                    run_group(relation, task.plan, left, right, same, task.part, &mut sink);
                }
            });
        }
    });
    cap.check()?;
    let plans = plans.iter().zip(constraints).map(|(p, c)| p.describe(c)).collect();
    Ok((finish(builder), plans))
}

/// `f(0..n)` on up to `threads` scoped threads, in index order.
fn in_parallel<T: Send>(n: usize, threads: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, T)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.clamp(1, n.max(1)))
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= n {
                            return done;
                        }
                        done.push((i, f(i)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    done.sort_unstable_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, t)| t).collect()
}

/// Tests every ordered pair `(a, b)`, `a != b`, against every predicate,
/// with SQL NULL semantics: the definition the fast paths must match.
pub fn brute_force(relation: &Relation, constraint: &KeyConstraint, sink: &mut impl EdgeSink) {
    let value = |operand: KeyOperand, a: u32, b: u32| match operand {
        KeyOperand::Const(k) => Some(k),
        KeyOperand::Column { tuple, slot } => {
            relation.column(slot).get(if tuple == TupleVar::T1 { a } else { b })
        }
    };
    for a in 0..relation.rows() {
        for b in 0..relation.rows() {
            if a == b {
                continue;
            }
            let violated = constraint.predicates.iter().all(|p| {
                let left = value(KeyOperand::Column { tuple: p.tuple, slot: p.slot }, a, b);
                match (left, value(p.right, a, b)) {
                    (Some(l), Some(r)) => p.op.get().holds(&l, &r),
                    _ => false,
                }
            });
            if violated {
                sink.add(a, b);
            }
        }
    }
}
