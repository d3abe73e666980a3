//! The pair cap: detection stops once its drivers have emitted more than
//! [`DetectOptions::max_pairs`](crate::DetectOptions::max_pairs) pairs.
//!
//! Every emitted pair violates its constraint (the residual predicates are
//! checked before a pair is emitted), and a driver emits each ordered pair
//! of a constraint at most once. So a detection of k constraints that
//! emits more than 2·k·H pairs has a constraint with more than H conflicts,
//! and its graph more than H edges: a caller holding a cap of H edges
//! knows the answer without the rest of the work, which is then bounded by
//! the cap rather than by the rows (README, "The pair cap").

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use dpincon_graph::{EdgeSink, Multipartite};

use crate::DetectError;

/// Pairs a driver counts locally before it adds them to the shared total:
/// one atomic add per batch keeps the count off the hot loop, and a stop
/// comes at most this many pairs per thread late.
const BATCH: u64 = 1 << 12;

/// The shared count of emitted pairs and its cap.
#[derive(Debug)]
pub(crate) struct PairCap {
    cap: u64,
    emitted: AtomicU64,
    over: AtomicBool,
}

impl PairCap {
    /// A cap of `cap` pairs (`None`: never stops).
    pub(crate) fn new(cap: Option<u64>) -> Self {
        PairCap {
            cap: cap.unwrap_or(u64::MAX),
            emitted: AtomicU64::new(0),
            over: AtomicBool::new(false),
        }
    }

    /// Adds `n` emitted pairs; false once the total is past the cap.
    fn add(&self, n: u64) -> bool {
        let total = self.emitted.fetch_add(n, Ordering::Relaxed).saturating_add(n);
        if total > self.cap {
            self.over.store(true, Ordering::Relaxed);
        }
        !self.over.load(Ordering::Relaxed)
    }

    /// Whether the total passed the cap (every driver then stops).
    pub(crate) fn over(&self) -> bool {
        self.over.load(Ordering::Relaxed)
    }

    /// [`DetectError::PairCap`] if the total passed the cap.
    pub(crate) fn check(&self) -> Result<(), DetectError> {
        if self.over() { Err(DetectError::PairCap { cap: self.cap }) } else { Ok(()) }
    }

    /// A driver's own counter on this cap.
    pub(crate) fn counter(&self) -> PairCounter<'_> {
        PairCounter { cap: self, local: 0 }
    }
}

/// One driver's count, added to its [`PairCap`] in batches.
#[derive(Debug)]
pub(crate) struct PairCounter<'a> {
    cap: &'a PairCap,
    local: u64,
}

impl PairCounter<'_> {
    /// Counts one emitted pair; false when detection must stop.
    #[inline]
    pub(crate) fn count(&mut self) -> bool {
        self.local += 1;
        if self.local < BATCH {
            return true;
        }
        let n = std::mem::take(&mut self.local);
        self.cap.add(n)
    }
}

impl Drop for PairCounter<'_> {
    fn drop(&mut self) {
        if self.local > 0 {
            self.cap.add(self.local);
        }
    }
}

/// A sink whose pairs count on a [`PairCap`]: what the drivers write to.
pub(crate) struct Capped<'a, S> {
    sink: &'a mut S,
    counter: PairCounter<'a>,
}

impl<'a, S: EdgeSink> Capped<'a, S> {
    /// `sink`, counting on `cap`.
    pub(crate) fn new(sink: &'a mut S, cap: &'a PairCap) -> Self {
        Capped { sink, counter: cap.counter() }
    }

    /// Adds a violating pair; false once detection must stop.
    #[inline]
    pub(crate) fn add(&mut self, a: u32, b: u32) -> bool {
        self.sink.add(a, b);
        self.counter.count()
    }

    /// Adds a multipartite group's share whole (its pairs cost nothing
    /// until the graph is frozen; the caller counts them from the class
    /// sizes).
    pub(crate) fn add_multipartite(&mut self, group: &Arc<Multipartite>, share: Range<usize>) {
        self.sink.add_multipartite(group, share);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cap_stops_its_counters_once_the_total_passes_it_and_never_before() {
        let cap = PairCap::new(Some(3 * BATCH));
        let (mut a, mut b) = (cap.counter(), cap.counter());
        for _ in 0..BATCH {
            assert!(a.count());
        }
        for _ in 0..BATCH {
            assert!(b.count());
        }
        assert!(!cap.over());
        // The total reaches the cap exactly: not past it yet.
        for _ in 0..BATCH {
            assert!(a.count());
        }
        assert!(!cap.over());
        let stopped = (0..BATCH).map(|_| b.count()).any(|ok| !ok);
        assert!(stopped && cap.over());
        // A counter dropped with pairs in hand still adds them.
        let cap = PairCap::new(Some(5));
        let mut c = cap.counter();
        (0..6).for_each(|_| assert!(c.count()));
        drop(c);
        assert!(cap.over());
        // No cap: never over.
        let none = PairCap::new(None);
        let mut d = none.counter();
        assert!((0..10 * BATCH).all(|_| d.count()));
    }

    /// Detection under a cap: the graph it would build when its pairs fit,
    /// a stop when they do not; and every stop is certain (the graph
    /// surely has more than cap / (2k) edges), whatever the drivers.
    #[test]
    fn detection_stops_only_when_its_graph_is_surely_over() {
        use dpincon_constraints::Operator;

        use crate::compile::{KeyConstraint, KeyPredicate};
        use crate::exec::{DetectOptions, detect};
        use crate::fixtures::xorshift;
        use crate::relation::{KeyColumn, Relation};

        let rows = 600u32;
        let mut next = xorshift(5);
        let mut col = |m: u64| KeyColumn::from_keys((0..rows).map(|_| Some(next(m))));
        let relation = Relation::from_slots(rows, vec![col(40), col(40), col(5), col(600)]);
        let dc = |id, predicates| KeyConstraint { id, display: String::new(), predicates };
        let cross = KeyPredicate::cross;
        let shapes = [
            // IEJoin, a range scan, a residual, a complement (FD-like ≠).
            vec![dc(0, vec![cross(0, Operator::Gt, 0), cross(1, Operator::Lt, 1)])],
            vec![dc(0, vec![cross(3, Operator::Gt, 3)])],
            vec![dc(
                0,
                vec![
                    cross(0, Operator::Gt, 0),
                    cross(1, Operator::Lt, 1),
                    cross(3, Operator::Gt, 3),
                ],
            )],
            vec![
                dc(0, vec![cross(2, Operator::Eq, 2), cross(0, Operator::Ne, 1)]),
                dc(1, vec![cross(1, Operator::Lt, 3)]),
            ],
        ];
        for constraints in shapes {
            let k = constraints.len() as u64;
            let whole = detect(&relation, &constraints, DetectOptions::with_threads(2)).unwrap();
            let edges = whole.graph.edge_count();
            assert!(edges > 3 * BATCH, "a test worth running: {edges} edges");
            // A cap no detection can pass: the same graph.
            let roomy =
                DetectOptions { max_pairs: Some(2 * k * edges), ..DetectOptions::with_threads(2) };
            let capped = detect(&relation, &constraints, roomy).unwrap();
            assert!(capped.graph.edges().eq(whole.graph.edges()));
            // A cap of 2·k·H with H a little under the edges: stopped, or
            // (the stop being certain only) the whole graph.
            for h in [edges / 8, edges / 2] {
                let tight =
                    DetectOptions { max_pairs: Some(2 * k * h), ..DetectOptions::with_threads(2) };
                match detect(&relation, &constraints, tight) {
                    Err(DetectError::PairCap { cap }) => assert_eq!(cap, 2 * k * h),
                    Ok(d) => assert!(d.graph.edges().eq(whole.graph.edges())),
                    Err(e) => panic!("{e}"),
                }
            }
            // A cap far under the pairs always stops.
            let small = DetectOptions { max_pairs: Some(BATCH), ..DetectOptions::with_threads(2) };
            assert!(matches!(
                detect(&relation, &constraints, small),
                Err(DetectError::PairCap { .. })
            ));
        }
    }
}
