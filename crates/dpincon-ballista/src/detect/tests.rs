//! The operators run by plain DataFusion (no cluster): the plan's edges,
//! merged, are the embedded graph; its facts are the embedded facts.

use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::physical_plan::collect_partitioned;
use datafusion::prelude::SessionContext;
use dpincon_detect::{EqualityFrequencies, KeyConstraint, ListedRows};
use dpincon_graph::{SpillConfig, edge_stream_fingerprint};

use crate::BallistaError;
use crate::assemble::{PartitionPieces, assemble};
use crate::detect::wire::Summary;
use crate::plan::{JobPlan, PairTally, PlanRequest, build_plan};
use crate::scan::ScanFormat;

const SCHEMA: &str = "Zip:int,City:string,State:string,Salary:int,Rate:float";

fn table(dir: &Path) -> std::path::PathBuf {
    // Zip → City broken in zips 1 and 3; State with Salary/Rate order
    // broken by rows 4 and 6; Rate -0.0 and 0.0 equal (rows 2, 5).
    let csv = "Zip,City,State,Salary,Rate\n\
               1,A,NY,10,1.0\n\
               1,B,NY,20,2.0\n\
               2,C,CA,30,-0.0\n\
               3,D,CA,40,4.0\n\
               3,,CA,50,0.5\n\
               3,E,TX,60,0.0\n\
               1,A,NY,70,0.1\n";
    let path = dir.join("t.csv");
    std::fs::write(&path, csv).unwrap();
    path
}

const DCS: &str = "FD: Zip -> City\n\
                   not(t1.State=t2.State & t1.Salary>t2.Salary & t1.Rate<t2.Rate)\n\
                   not(t1.Rate=t2.Rate & t1.Zip!=t2.Zip)\n\
                   not(t1.Salary<t2.Salary & t1.Zip>t2.Zip)\n";

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("Zip", DataType::Int64, true),
        Field::new("City", DataType::Utf8, true),
        Field::new("State", DataType::Utf8, true),
        Field::new("Salary", DataType::Int64, true),
        Field::new("Rate", DataType::Float64, true),
    ]))
}

/// The table at `data` cut into `parts` ranges of records however small.
fn ranges(data: &Path, parts: usize) -> Vec<dpincon_source::CsvRange> {
    let bytes = std::fs::read(data).unwrap();
    let mut splitter = dpincon_source::CsvSplitter::new(bytes.len() as u64, parts, 1);
    splitter.feed(&bytes);
    let split = splitter.finish(data).unwrap();
    assert_eq!(split.ranges.len(), parts, "the scan reads the table in {parts} ranges");
    split.ranges
}

/// The plan request of [`DCS`] on the table at `data`.
fn request(data: &Path, partitions: usize) -> PlanRequest<'_> {
    request_of(data, DCS, partitions)
}

/// The plan request of `constraints` on the table at `data`.
fn request_of<'a>(data: &'a Path, constraints: &'a str, partitions: usize) -> PlanRequest<'a> {
    let ranges = ranges(data, partitions);
    PlanRequest {
        path: data,
        unit_rows: ranges.iter().map(|r| r.rows).collect(),
        format: ScanFormat::Csv { schema: SCHEMA.parse().unwrap(), ranges },
        table: schema(),
        constraints,
        brute_force: false,
        partitions,
        max_edges: None,
    }
}

/// The plan run by plain DataFusion: each partition's summary, read as the
/// coordinator reads it (through its own channel), in partition order.
async fn summaries(plan: &JobPlan) -> Vec<Summary> {
    let ctx = SessionContext::new();
    let partitions = collect_partitioned(plan.plan.clone(), ctx.task_ctx()).await.unwrap();
    let mut out = Vec::new();
    for partition in &partitions {
        out.push(pieces(partition).summary().await.unwrap());
    }
    out
}

/// One partition's batches as the coordinator receives them.
fn pieces(partition: &[RecordBatch]) -> PartitionPieces {
    let (tx, rx) = tokio::sync::mpsc::channel(partition.len() + 1);
    for batch in partition {
        tx.try_send(Ok(batch.clone())).unwrap();
    }
    PartitionPieces::new(rx)
}

/// The embedded detection's constraints and facts of the table at `data`
/// under `constraints` (with the rows the release lists).
async fn embedded_facts(
    data: &Path,
    constraints: &str,
) -> (Vec<KeyConstraint>, EqualityFrequencies) {
    let mut job = dpincon_engine::JobConfig::new(data, data.with_extension("unused.dcs"));
    job.table.schema = Some(SCHEMA.parse().unwrap());
    let table = job.table.read(1).await.unwrap();
    let parsed = dpincon_constraints::parse_constraints(constraints).unwrap();
    let prepared =
        dpincon_source::prepare_detection(&parsed, &table, |_| true, 1, BallistaError::Constraint)
            .unwrap();
    let listed = ListedRows::of(&prepared.compiled);
    let f = dpincon_detect::equality_frequencies(&prepared.relation, &prepared.compiled, listed);
    (prepared.compiled, f)
}

#[tokio::test]
async fn the_plan_run_locally_gives_the_embedded_graph_and_facts() {
    let dir = tempfile::tempdir().unwrap();
    let data = table(dir.path());
    let dcs = dir.path().join("t.dcs");
    std::fs::write(&dcs, DCS).unwrap();
    let plan = build_plan(&request(&data, 3)).unwrap();
    // Groups: {Zip}, {State}, {Rate} by slot order, the unbounded one,
    // and the covers-only task of its order pair (run as pair tasks).
    assert_eq!(plan.groups(), 5);
    assert!(plan.unbounded && plan.covers_group && plan.cover_sets.all);
    let ctx = SessionContext::new();
    let partitions = collect_partitioned(plan.plan.clone(), ctx.task_ctx()).await.unwrap();
    // Three hash partitions per group with X; the group without equality
    // in pair tasks of two blocks (the table's three ranges dealt
    // round-robin): (0, 1), (0, 0), (1, 1); one covers-only task.
    assert_eq!(partitions.len(), 3 * 3 + 3 + 1);

    // Each partition through its own channel, as the coordinator reads
    // them: summaries first, then every partition's pieces assembled.
    let mut rows = vec![0u64; plan.groups()];
    let mut maxima = vec![0u64; plan.groups()];
    let mut classes = vec![None::<dpincon_detect::ConflictClasses>; plan.groups()];
    let mut chains = vec![Vec::<u64>::new(); plan.groups()];
    let mut tally = PairTally::default();
    let mut sources = Vec::new();
    for partition in &partitions {
        let mut source = pieces(partition);
        let s = source.summary().await.unwrap();
        let g = s.group as usize;
        rows[g] += u64::from(s.rows);
        tally.add(&s);
        match s.max_frequency {
            Some(max) => maxima[g] = maxima[g].max(u64::from(max)),
            None => assert!(g >= plan.sets.len(), "only groups without X have none"),
        }
        // Each X's classes and chains add up over its hash partitions.
        match (&mut classes[g], s.classes) {
            (Some(total), Some((c, _))) => total.absorb(&c),
            (total, some) => *total = total.take().or(some.map(|(c, _)| c)),
        }
        if !s.chains.is_empty() {
            chains[g].resize(s.chains.len(), 0);
            chains[g].iter_mut().zip(&s.chains).for_each(|(t, c)| *t += c);
        }
        sources.push(source);
    }
    assert_eq!(rows, vec![7; 5], "every group sees every row once");
    assert!(chains[3].is_empty() && chains[4].len() == 1, "pair tasks send no chain");
    let spill = SpillConfig { dir: dir.path().to_path_buf(), memory_limit: 1 << 20 };
    let assembled = tokio::task::spawn_blocking(move || assemble(sources, 7, &spill, 2))
        .await
        .unwrap()
        .unwrap();
    let graph = assembled.graph;
    assert!(assembled.received > 0);
    // The partitions' pairs (a group's twice) hold every edge, each at
    // most twice per constraint: the bound the coordinator's early verdict
    // rests on (`JobPlan::max_pairs`).
    let (edges, k) = (graph.edge_count(), plan.bound.len() as u64);
    let pairs = tally.pairs().expect("no cap, no stop");
    assert!(pairs >= edges && pairs <= 2 * k * edges, "{pairs} pairs, {edges} edges");

    let mut job = dpincon_engine::JobConfig::new(&data, &dcs);
    job.table.schema = Some(SCHEMA.parse().unwrap());
    let want = dpincon_engine::load(&job, &dpincon_engine::NoProgress).await.unwrap();
    assert_eq!(graph.edges().collect::<Vec<_>>(), want.graph.edges().collect::<Vec<_>>());
    assert_eq!(edge_stream_fingerprint(graph.edges()), edge_stream_fingerprint(want.graph.edges()));
    let f = plan.frequencies(&maxima);
    assert_eq!(f.max_frequencies, want.facts.max_frequencies);
    assert_eq!(f.minimal_max_frequencies, want.facts.minimal_max_frequencies);
    assert_eq!(f.unbounded, want.facts.unbounded);
    // The classes of the keys and FDs and the chain covers, added up over
    // the partitions group by group, are the embedded detection's, from
    // which the engine's load derives I_R's covers and I_P's classes.
    let (compiled, embedded) = embedded_facts(&data, DCS).await;
    assert_eq!(classes.into_iter().flatten().collect::<Vec<_>>(), embedded.fd_classes);
    // The chain covers in another order (only their largest and their sum
    // are facts).
    let sorted = |mut v: Vec<u64>| {
        v.sort_unstable();
        v
    };
    assert_eq!(sorted(chains.concat()), sorted(embedded.chain_covers.clone()));
    assert!(!embedded.fd_classes.is_empty() && !embedded.chain_covers.is_empty());
    assert_eq!(dpincon_detect::cover_sets(&compiled), plan.cover_sets);
    // Four sets, two of them reading Zip: U or the union cover, with the
    // larger sensitivity, max(4, 1 + 2·2 FD sets + 2 order pairs).
    assert!(embedded.fd_classes.iter().any(|c| !c.deleted.is_empty()), "the rows were listed");
    let upper = want.facts.covers.sum.map(|u| (u.sets, u.release().sensitivity));
    assert_eq!(upper, Some((4, 7)), "{:?}", want.facts.covers);
    // Hand-derived: zip 1 has rows 0, 1, 6 (City A, B, A): edges 0-1, 1-6;
    // zip 3 has rows 3, 4 (4's City NULL: no edge), 5 (E): 3-5.
    // Rate -0.0 = 0.0 across zips 2 and 3: 2-5.
    for e in [(0, 1), (1, 6), (3, 5), (2, 5)] {
        assert!(graph.edges().any(|x| (x.u, x.v) == e), "{e:?}");
    }
}

/// A DC whose only equality is across two columns (`Zip = Salary`, and
/// its mirror, one form) beside an FD: the plan counts each side's maxfreq
/// in a group hash-partitioned by it, and over the partitions they are the
/// embedded ones, so the degree bound is the same in both modes.
#[tokio::test]
async fn the_cross_sides_maxima_over_the_partitions_are_the_embedded_ones() {
    const CROSS: &str = "FD: Zip -> City
                         not(t1.Zip=t2.Salary & t1.Rate>t2.Rate)
                         not(t1.Salary=t2.Zip & t1.Rate<t2.Rate)
";
    let dir = tempfile::tempdir().unwrap();
    let data = table(dir.path());
    // Salary 10 twice more, and a Zip equal to a Salary: both sides count.
    let csv = std::fs::read_to_string(&data).unwrap() + "10,F,NY,10,3.0\n10,G,NY,10,2.5\n";
    std::fs::write(&data, csv).unwrap();
    let plan = build_plan(&request_of(&data, CROSS, 3)).unwrap();
    // {Zip}, the unbounded group (pair tasks), then the form's two sides.
    assert_eq!((plan.sets.len(), plan.cross_groups.len(), plan.groups()), (1, 2, 4));
    assert!(plan.unbounded && !plan.unbounded_degrees);
    let mut maxima = vec![0u64; plan.groups()];
    for s in summaries(&plan).await {
        if let Some(max) = s.max_frequency {
            maxima[s.group as usize] = maxima[s.group as usize].max(u64::from(max));
        }
    }
    let f = plan.frequencies(&maxima);
    let (_, embedded) = embedded_facts(&data, CROSS).await;
    // Zip 1 and 3 three times each; Salary 10 three times.
    assert_eq!(embedded.cross_max_frequencies, vec![3, 3]);
    assert_eq!(f.cross_max_frequencies, embedded.cross_max_frequencies);
    assert_eq!(f.max_frequencies, embedded.max_frequencies);
    assert!(!f.unbounded && !embedded.unbounded);
}

/// Keys and FDs of two X (one X's order DC subsumed by its key): the
/// executors list each X's leading rows in global ids, and added up over
/// the hash partitions they are the embedded ones, so the leading count
/// (I_P's, the fifteenth round) is the same in both modes.
#[tokio::test]
async fn the_leading_rows_over_the_partitions_are_the_embedded_ones() {
    const KEYS: &str = "not(t1.Zip=t2.Zip)\n\
                        not(t1.Zip=t2.Zip & t1.Salary>t2.Salary & t1.Rate<t2.Rate)\n\
                        FD: State -> City\n";
    let dir = tempfile::tempdir().unwrap();
    let data = table(dir.path());
    let plan = build_plan(&request_of(&data, KEYS, 3)).unwrap();
    let mut classes = vec![None::<dpincon_detect::ConflictClasses>; plan.groups()];
    for s in summaries(&plan).await {
        match (&mut classes[s.group as usize], s.classes) {
            (Some(total), Some((c, all))) => {
                assert!(all, "the order DC is the key's");
                total.absorb(&c)
            }
            (total, some) => *total = total.take().or(some.map(|(c, _)| c)),
        }
    }
    let (compiled, embedded) = embedded_facts(&data, KEYS).await;
    let listed = ListedRows::of(&compiled);
    assert!(listed.leading && listed.key_rows);
    let cluster: Vec<_> = classes.into_iter().flatten().collect();
    assert_eq!(cluster, embedded.fd_classes);
    // Zip 1 (rows 0, 1, 6) and 3 (3, 4, 5) under the key; NY, CA with two
    // cities each: rows 0, 1 and 2, 3 (row 4's City is NULL).
    assert_eq!(dpincon_detect::leading_count(&cluster), 7);
    assert_eq!(cluster.iter().map(|c| c.leading.len()).sum::<usize>(), 11);
}

/// What an executor decodes (a shuffle writer over a stage) is checked:
/// a dpincon plan on a table under its roots decodes; the same plan on a
/// table elsewhere, or a plan with one of DataFusion's own file scans, is
/// refused before anything runs (issue 27).
#[tokio::test]
async fn an_executor_decodes_dpincon_plans_on_its_tables_only() {
    use ballista_core::execution_plans::ShuffleWriterExec;
    use datafusion::physical_plan::ExecutionPlan;
    use datafusion_proto::physical_plan::AsExecutionPlan;
    use datafusion_proto::protobuf::PhysicalPlanNode;

    use crate::DpinconCodec;

    let dir = tempfile::tempdir().unwrap();
    let tables = dir.path().join("tables");
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&tables).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    let data = table(&tables);
    let ctx = SessionContext::new();
    let work = dir.path().display().to_string();
    let stage = |plan: Arc<dyn ExecutionPlan>| -> PhysicalPlanNode {
        let writer = ShuffleWriterExec::try_new("job".into(), 1, plan, work.clone()).unwrap();
        PhysicalPlanNode::try_from_physical_plan(Arc::new(writer), DpinconCodec::shared().as_ref())
            .unwrap()
    };
    let dpincon = stage(build_plan(&request(&data, 2)).unwrap().plan);
    let on = |roots: &[std::path::PathBuf], node: &PhysicalPlanNode| {
        let codec = DpinconCodec::for_tables(roots).unwrap();
        node.try_into_physical_plan(&ctx.task_ctx(), codec.as_ref()).map(drop)
    };
    on(std::slice::from_ref(&tables), &dpincon).expect("a dpincon plan on a table under the roots");
    let err = on(std::slice::from_ref(&elsewhere), &dpincon).unwrap_err().to_string();
    assert!(err.contains("outside this executor's tables"), "{err}");
    // A plan of DataFusion's own reading the same table: refused anywhere.
    let csv = ctx.read_csv(data.to_str().unwrap(), Default::default()).await.unwrap();
    let foreign = stage(csv.create_physical_plan().await.unwrap());
    for roots in [vec![tables.clone()], vec![dir.path().to_path_buf()]] {
        let err = on(&roots, &foreign).unwrap_err().to_string();
        assert!(err.contains("is not part of a dpincon plan"), "{err}");
    }
}

/// Under an edge cap H the partitions stop or sum past 2·k·H only when the
/// graph has more than H edges: at H = |E| never, at H = 0 always.
#[tokio::test]
async fn a_cap_at_the_graphs_edges_never_stops_and_a_cap_of_nothing_always_does() {
    let dir = tempfile::tempdir().unwrap();
    let data = table(dir.path());
    // Whether the coordinator would call the job over from the summaries.
    async fn over(plan: JobPlan) -> bool {
        let ctx = SessionContext::new();
        let partitions = collect_partitioned(plan.plan.clone(), ctx.task_ctx()).await.unwrap();
        let mut tally = PairTally::default();
        for partition in &partitions {
            let (tx, rx) = tokio::sync::mpsc::channel(partition.len() + 1);
            partition.iter().for_each(|b| tx.try_send(Ok(b.clone())).unwrap());
            tally.add(&PartitionPieces::new(rx).summary().await.unwrap());
        }
        plan.surely_over(tally)
    }
    let inline = dpincon_engine::Constraints::Inline { inline: DCS.into() };
    let mut job = dpincon_engine::JobConfig::new(&data, inline);
    job.table.schema = Some(SCHEMA.parse().unwrap());
    let edges =
        dpincon_engine::load(&job, &dpincon_engine::NoProgress).await.unwrap().graph.edge_count();
    assert!(edges > 0);
    for (cap, want) in [(edges, false), (0, true)] {
        let plan = build_plan(&PlanRequest { max_edges: Some(cap), ..request(&data, 3) }).unwrap();
        assert_eq!(over(plan).await, want, "cap {cap} of a graph of {edges} edges");
    }
}
