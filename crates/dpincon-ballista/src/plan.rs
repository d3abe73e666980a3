//! The physical plan of a job's detection, built on the coordinator from
//! the constraint text and the table's schema alone (no row is read).
//!
//! One branch per constraint group (see [`crate::detect`]):
//! `TableScanExec → RepartitionExec(hash of X, k) → DetectExec` for each
//! distinct equality attribute set X, `TableScanExec (pair tasks of row
//! blocks, or 1 partition) → DetectExec` for the constraints without one
//! ([`crate::detect::blocks`]); with pair tasks, one more
//! `TableScanExec (1 partition) → DetectExec` that detects nothing and
//! counts the chain covers of the order pairs among them (each pair task
//! sees part of the table); for each side of each cross equality
//! `t1.L = t2.R` (`dpincon_detect::cross_equalities`), `TableScanExec →
//! RepartitionExec(hash of the side, k) → DetectExec` that detects nothing
//! and counts the side's maxfreq; a `UnionExec` on top.
//! Ballista cuts the plan at each `RepartitionExec` into a scan stage and a
//! shuffle (hash-partitioned files on the executors' disks) read by the
//! detection stage; retries and lost executors are its business.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::physical_plan::repartition::RepartitionExec;
use datafusion::physical_plan::union::UnionExec;
use datafusion::physical_plan::{ExecutionPlan, Partitioning};
use dpincon_constraints::{BoundConstraint, Domain};
use dpincon_detect::{
    CoverSets, DetectionPlan, EqualityFrequencies, ListedRows, brute_force_plans, cover_sets,
    cross_equalities, degrees_unbounded, describe_plans, equality_attributes, order_pair,
    required_columns,
};
use dpincon_source::{Prepared, TableData, prepare_detection};

use crate::BallistaError;
use crate::detect::wire::Summary;
use crate::detect::{Blocks, CrossSide, DetectExec, DetectSpec, KeyDomain};
use crate::scan::{ScanFormat, ScanSpec, TableScanExec};

/// What the plan is built from.
#[derive(Debug, Clone)]
pub struct PlanRequest<'a> {
    /// The table, at a path every executor can read.
    pub path: &'a Path,
    /// How executors read it.
    pub format: ScanFormat,
    /// The whole table's Arrow schema (Parquet footer, or declared types).
    pub table: SchemaRef,
    /// The job's constraint text.
    pub constraints: &'a str,
    /// Test every pair (non-private test jobs).
    pub brute_force: bool,
    /// Hash partitions per group, scan partitions, and at most as many
    /// pair tasks for the constraints without equality.
    pub partitions: usize,
    /// Rows of each scan unit (Parquet row groups, CSV ranges), in row
    /// order: the blocks of the pair tasks.
    pub unit_rows: Vec<u64>,
    /// The job's edge cap H (`max-edges`): each detection task stops past
    /// 2·k·H pairs ([`DetectSpec::max_pairs`]).
    pub max_edges: Option<u64>,
}

/// A job's plan and what the coordinator needs to read its result.
#[derive(Debug)]
pub struct JobPlan {
    /// The plan to submit.
    pub plan: Arc<dyn ExecutionPlan>,
    /// The constraints after FD expansion, bound to the schema.
    pub bound: Vec<BoundConstraint>,
    /// How each constraint is detected inside a partition (for reports).
    pub detection_plans: Vec<DetectionPlan>,
    /// The equality attribute sets, as slot lists, in group order (group
    /// `g < sets.len()` is `sets[g]`; group `sets.len()` is the unbounded
    /// one, if any).
    pub sets: Vec<Vec<usize>>,
    /// Some constraint has no equality attribute set (the unbounded group
    /// detects it).
    pub unbounded: bool,
    /// The groups that count each cross equality's sides, in
    /// `dpincon_detect::cross_equalities` order, left side then right
    /// (after every other group).
    pub cross_groups: Vec<usize>,
    /// Some constraint has neither an equality attribute set nor a cross
    /// equality: no degree bound but n.
    pub unbounded_degrees: bool,
    /// The last group is the covers-only one (after the unbounded group).
    pub covers_group: bool,
    /// The constraints' cover sets (`dpincon_detect::cover_sets`; public).
    pub cover_sets: CoverSets,
    /// 2·k·H for the job's edge cap H: past this many pairs in the
    /// partitions' records and groups (each group's pairs counted twice),
    /// the graph surely has more than H edges (detect README, "The pair
    /// cap").
    pub max_pairs: Option<u64>,
}

impl JobPlan {
    /// The degree bounds' facts from each group's maximum frequency (over
    /// its partitions), in group order (groups without one read 0).
    pub fn frequencies(&self, maxima: &[u64]) -> EqualityFrequencies {
        EqualityFrequencies {
            cross_max_frequencies: self.cross_groups.iter().map(|&g| maxima[g]).collect(),
            ..EqualityFrequencies::from_maxima(
                &self.sets,
                maxima[..self.sets.len()].to_vec(),
                self.unbounded_degrees,
            )
        }
    }

    /// Number of groups (branches of the union).
    pub fn groups(&self) -> usize {
        self.sets.len()
            + usize::from(self.unbounded)
            + usize::from(self.covers_group)
            + self.cross_groups.len()
    }

    /// Whether the partitions' summaries prove the graph over the job's
    /// edge cap: their pairs past [`JobPlan::max_pairs`], or a partition
    /// stopped at its own cap.
    pub fn surely_over(&self, tally: PairTally) -> bool {
        self.max_pairs.is_some_and(|cap| tally.pairs().is_none_or(|p| p > cap))
    }
}

/// The partitions' pairs as their summaries arrive: their row records'
/// pairs and each multipartite group's pairs twice (a driver emits both
/// orientations of a pair where a group holds it once), so the total is
/// at most 2·Σ_c |E_c| ≤ 2k·|E|; none once a partition stopped at its cap.
#[derive(Debug, Clone, Copy)]
pub struct PairTally(Option<u64>);

impl Default for PairTally {
    fn default() -> Self {
        PairTally(Some(0))
    }
}

impl PairTally {
    /// Counts one partition's summary.
    pub fn add(&mut self, s: &Summary) {
        let groups = s.group_pairs.saturating_mul(2);
        self.0 = self.0.zip(s.pairs).map(|(t, p)| t.saturating_add(p).saturating_add(groups));
    }

    /// The total, or none if a partition stopped at its cap.
    pub fn pairs(self) -> Option<u64> {
        self.0
    }
}

fn key_domain(domain: Domain) -> KeyDomain {
    match domain {
        Domain::Int => KeyDomain::Int,
        Domain::Float => KeyDomain::Float,
        Domain::Str => KeyDomain::Str,
    }
}

/// Builds the plan (see the module docs). Constraint errors name the
/// constraint; no row is read.
pub fn build_plan(request: &PlanRequest<'_>) -> Result<JobPlan, BallistaError> {
    let table = &request.table;
    let parsed = dpincon_constraints::parse_constraints(request.constraints)?;
    // An empty relation has the slots (and the constants' codes) the real
    // one will have: enough for planning, sets and reports.
    let empty = TableData::empty(request.path, table.clone());
    let Prepared { bound, relation, compiled } =
        prepare_detection(&parsed, &empty, |_| true, 1, BallistaError::Constraint)?;
    if bound.is_empty() {
        return Err(BallistaError::Plan("the job has no constraint".into()));
    }
    let max_pairs = dpincon_detect::DetectOptions::pair_cap(request.max_edges, bound.len());
    let detection_plans =
        if request.brute_force { brute_force_plans(&compiled) } else { describe_plans(&compiled) };
    let column_of: BTreeMap<usize, (usize, Domain)> = required_columns(&bound)
        .into_iter()
        .filter_map(|(c, d)| relation.slot(c, d).map(|s| (s, (c, d))))
        .collect();
    let mut groups: BTreeMap<Vec<usize>, Vec<usize>> = BTreeMap::new();
    let mut unbounded = Vec::new();
    for c in &compiled {
        let x = equality_attributes(c);
        if x.is_empty() {
            unbounded.push(c.id);
        } else {
            groups.entry(x.into_iter().collect()).or_default().push(c.id);
        }
    }

    let k = request.partitions.max(1);
    let scan = |members: &[usize], partitions: usize| -> ScanSpec {
        let used: BTreeSet<usize> = required_columns(
            &bound.iter().filter(|c| members.contains(&c.id)).cloned().collect::<Vec<_>>(),
        )
        .into_iter()
        .map(|(c, _)| c)
        .collect();
        let columns = used.into_iter().map(|c| table.field(c).name().clone()).collect();
        ScanSpec {
            path: request.path.to_string_lossy().into_owned(),
            format: request.format.clone(),
            columns,
            partitions,
        }
    };
    let mut branches: Vec<Arc<dyn ExecutionPlan>> = Vec::new();
    let mut sets = Vec::new();
    let listed = ListedRows::of(&compiled);
    let key_columns = |slots: &[usize]| -> Vec<(String, KeyDomain)> {
        slots
            .iter()
            .map(|s| {
                let (c, d) = column_of[s];
                (table.field(c).name().clone(), key_domain(d))
            })
            .collect()
    };
    for (group, (x, members)) in groups.into_iter().enumerate() {
        let keys = key_columns(&x);
        let input: Arc<dyn ExecutionPlan> =
            Arc::new(TableScanExec::try_new(scan(&members, k), table)?);
        let exprs = DetectExec::hash_exprs(&keys, &input.schema())?;
        let shuffled = Arc::new(RepartitionExec::try_new(input, Partitioning::Hash(exprs, k))?);
        let spec = DetectSpec {
            group: group as u32,
            constraints: request.constraints.to_string(),
            members,
            keys,
            blocks: None,
            brute_force: request.brute_force,
            covers_only: false,
            cross_side: None,
            max_pairs,
            listed,
        };
        branches.push(Arc::new(DetectExec::try_new(spec, table.clone(), shuffled)?));
        sets.push(x);
    }
    let has_unbounded = !unbounded.is_empty();
    let mut covers_group = false;
    if has_unbounded {
        // No equality to split on: pair tasks of row blocks, or one task
        // that sees every pair (the embedded IEJoin / range scan inside).
        let blocks = Blocks::for_units(&request.unit_rows, k);
        let input = match &blocks {
            None => TableScanExec::try_new(scan(&unbounded, 1), table)?,
            Some(blocks) => {
                let tasks = (0..blocks.tasks())
                    .map(|t| match blocks.pair(t) {
                        (i, j) if i == j => vec![i],
                        (i, j) => vec![i, j],
                    })
                    .collect();
                let spec = scan(&unbounded, blocks.count as usize);
                TableScanExec::for_tasks(spec, table, tasks)?
            }
        };
        let spec = DetectSpec {
            group: sets.len() as u32,
            constraints: request.constraints.to_string(),
            members: unbounded.clone(),
            keys: Vec::new(),
            blocks: blocks.clone(),
            brute_force: request.brute_force,
            covers_only: false,
            cross_side: None,
            max_pairs,
            listed: ListedRows::default(),
        };
        branches.push(Arc::new(DetectExec::try_new(spec, table.clone(), Arc::new(input))?));
        let pairs: Vec<usize> = compiled
            .iter()
            .filter(|c| unbounded.contains(&c.id) && order_pair(c).is_some())
            .map(|c| c.id)
            .collect();
        if blocks.is_some() && !pairs.is_empty() {
            let input = TableScanExec::try_new(scan(&pairs, 1), table)?;
            let spec = DetectSpec {
                group: sets.len() as u32 + 1,
                constraints: request.constraints.to_string(),
                members: pairs,
                keys: Vec::new(),
                blocks: None,
                brute_force: request.brute_force,
                covers_only: true,
                cross_side: None,
                max_pairs,
                listed: ListedRows::default(),
            };
            branches.push(Arc::new(DetectExec::try_new(spec, table.clone(), Arc::new(input))?));
            covers_group = true;
        }
    }
    // Each cross equality's sides: a group per side, hash-partitioned by
    // it, that detects nothing and counts its maxfreq (the maximum over
    // partitions is the table's).
    let mut cross_groups = Vec::new();
    for (form, member) in cross_equalities(&compiled) {
        for (side, slots) in [(CrossSide::Left, form.left()), (CrossSide::Right, form.right())] {
            let keys = key_columns(&slots);
            let input: Arc<dyn ExecutionPlan> =
                Arc::new(TableScanExec::try_new(scan(&[member], k), table)?);
            let exprs = DetectExec::hash_exprs(&keys, &input.schema())?;
            let shuffled = Arc::new(RepartitionExec::try_new(input, Partitioning::Hash(exprs, k))?);
            let spec = DetectSpec {
                group: branches.len() as u32,
                constraints: request.constraints.to_string(),
                members: vec![member],
                keys,
                blocks: None,
                brute_force: request.brute_force,
                covers_only: false,
                cross_side: Some(side),
                max_pairs,
                listed: ListedRows::default(),
            };
            cross_groups.push(branches.len());
            branches.push(Arc::new(DetectExec::try_new(spec, table.clone(), shuffled)?));
        }
    }
    let unbounded_degrees = degrees_unbounded(&compiled);
    let plan = UnionExec::try_new(branches)?;
    let cover_sets = cover_sets(&compiled);
    Ok(JobPlan {
        plan,
        bound,
        detection_plans,
        sets,
        unbounded: has_unbounded,
        cross_groups,
        unbounded_degrees,
        covers_group,
        cover_sets,
        max_pairs,
    })
}
