//! The operator's metrics (`--metrics-listen`), encoded by
//! `prometheus-client` in Prometheus's text format (0.0.4). Each scrape reads
//! the job store, the ledgers and the slot-use counts afresh into a new
//! registry: the values are the store's and the ledgers', never a copy
//! that could drift from them.

use std::sync::atomic::AtomicU64;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use dpincon_engine::ledger;

use super::Shared;
use super::active::SlotUse;
use crate::store::now_ms;

/// The content type of the `/metrics` text.
pub use prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct JobLabels {
    state: &'static str,
    reason: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct DatasetLabels {
    dataset: String,
}

/// The metrics now, as OpenMetrics text (see
/// [`super::CoordinatorService::metrics`]).
pub(super) fn render(shared: &Shared) -> String {
    let mut registry = Registry::default();

    let jobs = Family::<JobLabels, Gauge>::default();
    for (state, reason, count) in shared.store.counts(now_ms()).unwrap_or_default() {
        let labels = JobLabels {
            state: dpincon_proto::state_name(state as i32),
            reason: dpincon_proto::reason_name(reason as i32).unwrap_or(""),
        };
        jobs.get_or_create(&labels).set(count as i64);
    }
    registry.register(
        "dpincon_jobs",
        "Jobs by state and public failure reason, as their clients see them (a private job \
         is queued until its release)",
        jobs,
    );

    let queue = Gauge::<i64>::default();
    queue.set(shared.waiting(now_ms()).len() as i64);
    registry.register("dpincon_queue_length", "Jobs accepted and waiting for their slot", queue);

    let [spent, cap, left] =
        std::array::from_fn(|_| Family::<DatasetLabels, Gauge<f64, AtomicU64>>::default());
    for d in shared.options.config.datasets.values() {
        let labels = DatasetLabels { dataset: d.name.clone() };
        let charged = ledger::spent(d.ledger()).map_or(0.0, |(spent, _)| spent);
        spent.get_or_create(&labels).set(charged);
        cap.get_or_create(&labels).set(d.budget_cap());
        left.get_or_create(&labels).set((d.budget_cap() - charged).max(0.0));
    }
    registry.register("dpincon_epsilon_spent", "Budget charged in each dataset's ledger", spent);
    registry.register("dpincon_epsilon_cap", "Each dataset's budget cap", cap);
    registry.register(
        "dpincon_epsilon_left",
        "Budget each dataset may still spend (cap - spent)",
        left,
    );

    let slot_use = shared.slot_use.lock().expect("slot use poisoned");
    let per_dataset: Vec<(String, SlotUse)> = shared
        .options
        .config
        .datasets
        .keys()
        .map(|d| (d.clone(), slot_use.get(d).cloned().unwrap_or_default()))
        .collect();
    drop(slot_use);
    // The encoder adds a counter's `_total`.
    let overruns = Family::<DatasetLabels, Counter>::default();
    for (dataset, u) in &per_dataset {
        overruns.get_or_create(&DatasetLabels { dataset: dataset.clone() }).inc_by(u.overruns);
    }
    registry.register(
        "dpincon_deadline_overruns",
        "Jobs stopped at their slot's end since start",
        overruns,
    );
    registry.register_collector(Box::new(SlotUseHistograms(per_dataset)));

    let mut out = String::new();
    prometheus_client::encoding::prometheus_text::encode(&mut out, &registry)
        .expect("writing to a String cannot fail");
    out
}

/// `dpincon_slot_use`, one histogram per dataset, from the runner's
/// bucket counts ([`SlotUse`]), which are taken as jobs end.
///
/// Its `_sum` counts each job at its bucket's bound, and an overrun as 1
/// (its whole slot): a job's exact share of its slot is a function of its
/// rows, which the operator's aggregate shows no finer than the buckets.
#[derive(Debug)]
struct SlotUseHistograms(Vec<(String, SlotUse)>);

impl Collector for SlotUseHistograms {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let mut family = encoder.encode_descriptor(
            "dpincon_slot_use",
            "Fraction of its slot each ended job used, per dataset (overruns in +Inf): size \
             job-deadline from it.",
            None,
            MetricType::Histogram,
        )?;
        for (dataset, u) in &self.0 {
            let mut buckets: Vec<(f64, u64)> = SlotUse::BOUNDS.into_iter().zip(u.within).collect();
            buckets.push((f64::INFINITY, u.overruns));
            let count = buckets.iter().map(|(_, n)| n).sum();
            let sum = SlotUse::BOUNDS.iter().zip(u.within).map(|(b, n)| b * n as f64).sum::<f64>()
                + u.overruns as f64;
            let labels = DatasetLabels { dataset: dataset.clone() };
            family
                .encode_family(&labels)?
                .encode_histogram::<NoLabelSet>(sum, count, &buckets, None)?;
        }
        Ok(())
    }
}
