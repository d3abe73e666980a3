//! Ballista's standalone mode (scheduler and two executors in this
//! process, loopback gRPC) against the embedded run: the same edge stream
//! Λ (fingerprint) and, seeded, the same releases.

use std::path::{Path, PathBuf};

use dpincon_cluster::detection::BallistaLoader;
use dpincon_engine::{JobConfig, NoProgress, Prepaid, Report, run_job, run_prepaid_job};
use dpincon_graph::{EdgeFingerprint, edge_stream_fingerprint};
use dpincon_source::{ReadOptions, read_table};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;

/// A deterministic generator (tests take no entropy).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

const MIXED_SCHEMA: &str = "ID:int,SSN:string,Zip:int,City:string,State:string,Salary:int,\
                            Rate:float,Age:int,Tenure:int";

/// A holdout-style table: FD, key, two inequalities under an equality,
/// two inequalities alone, a float equality with -0.0/0.0, NULLs.
fn mixed_table(dir: &Path, rows: usize) -> (PathBuf, PathBuf) {
    let mut rng = Lcg(20240611);
    let states = ["AL", "AK", "AZ", "CA", "CO", "NY", "TX", "WA"];
    let mut csv = String::from("ID,SSN,Zip,City,State,Salary,Rate,Age,Tenure\n");
    for id in 0..rows {
        let zip = rng.below(60);
        let city = match rng.below(100) {
            0 => String::new(),
            1..=4 => format!("City{zip}x"),
            _ => format!("City{zip}"),
        };
        let ssn = if rng.below(100) < 3 { rng.below(20) } else { 1000 + id as u64 };
        let state = states[(zip % 8) as usize];
        let salary = 20_000 + rng.below(100_000);
        let rate = match rng.below(100) {
            0 => "-0.0".to_string(),
            1 => "0.0".to_string(),
            2..=4 => {
                format!("{:.2}", salary as f64 / 10_000.0 - 1.0 - rng.below(300) as f64 / 100.0)
            }
            _ => format!("{:.2}", salary as f64 / 10_000.0),
        };
        let salary = if rng.below(100) == 0 { String::new() } else { salary.to_string() };
        let age = 18 + rng.below(50);
        let tenure = if rng.below(100) == 0 { age + rng.below(20) } else { age / 3 };
        csv += &format!("{id},S{ssn},{zip},{city},{state},{salary},{rate},{age},{tenure}\n");
    }
    let data = dir.join("mixed.csv");
    std::fs::write(&data, csv).unwrap();
    let constraints = dir.join("mixed.dcs");
    std::fs::write(
        &constraints,
        "FD: Zip -> City\n\
         not(t1.SSN=t2.SSN)\n\
         not(t1.State=t2.State & t1.Salary>t2.Salary & t1.Rate<t2.Rate)\n\
         not(t1.Age<t2.Age & t1.Tenure>t2.Tenure)\n\
         not(t1.Rate=t2.Rate & t1.State!=t2.State)\n",
    )
    .unwrap();
    (data, constraints)
}

/// `csv` rewritten as Parquet in row groups of `group_rows` rows (so the
/// scan's partitions and the row ids' offsets are exercised).
async fn to_parquet(csv: &Path, schema: Option<&str>, group_rows: usize) -> PathBuf {
    let options = ReadOptions {
        schema: schema
            .map(|s| dpincon_source::parse_schema_override(s).unwrap())
            .unwrap_or_default(),
        ..ReadOptions::default()
    };
    let table = read_table(csv, &options).await.unwrap();
    let out = csv.with_extension("parquet");
    let props = WriterProperties::builder().set_max_row_group_row_count(Some(group_rows)).build();
    let mut writer = ArrowWriter::try_new(
        std::fs::File::create(&out).unwrap(),
        table.arrow_schema.clone(),
        Some(props),
    )
    .unwrap();
    for b in &table.batches {
        writer.write(b).unwrap();
    }
    writer.close().unwrap();
    out
}

fn job(data: &Path, constraints: &Path, schema: Option<&str>) -> JobConfig {
    let mut job = JobConfig::new(data, constraints);
    job.table.schema = schema.map(|s| s.parse().unwrap());
    job.data.max_rows = Some(100_000);
    job.release.epsilon = Some(1.0);
    job.test.non_private = true;
    job.test.seed = Some(11);
    job
}

/// The parts of a report that must agree (not ids, paths or timings).
fn comparable(report: &Report) -> impl PartialEq + std::fmt::Debug + '_ {
    (
        &report.measures,
        &report.non_private,
        &report.detection.plans,
        report.constraint_count,
        report.seeded,
    )
}

async fn embedded_fingerprint(job: &JobConfig) -> EdgeFingerprint {
    let loaded = dpincon_engine::load(job, &NoProgress).await.unwrap();
    edge_stream_fingerprint(loaded.graph.edges())
}

/// Runs `job` embedded and on the cluster; both must agree.
async fn check(url: &str, work: &Path, job: &JobConfig, partitions: usize) -> EdgeFingerprint {
    let want = embedded_fingerprint(job).await;
    let want_report = run_job(job, &NoProgress).await.unwrap();
    let mut loader = BallistaLoader::new(url, work);
    loader.partitions = partitions;
    // A tiny graph budget: the spill really happens.
    loader.graph_memory = 1 << 14;
    // As the job process runs it: charged beforehand (here, no ledger).
    let prepaid = Prepaid { job_id: "standalone".into(), ledger: None, quota_epsilon: None };
    let outcome = run_prepaid_job(job, prepaid, &NoProgress, &loader).await;
    let got_report = outcome.report.unwrap();
    let stats = outcome.stats.expect("detection ended");
    let fingerprint = stats.fingerprint.expect("walked for a non-private job");
    assert_eq!(fingerprint, want.to_string(), "{}", job.table.name().display());
    assert_eq!(stats.edges, want.edges);
    // Row records or groups came for every graph with an edge.
    assert!(stats.received > 0 || stats.edges == 0);
    assert_eq!(comparable(&got_report), comparable(&want_report), "{}", job.table.name().display());
    want
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn standalone_cluster_gives_the_embedded_stream_and_releases() {
    let url = dpincon_ballista::process::standalone(2, 2).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path();

    // The holdout-style table: declared CSV, and the same as Parquet.
    let (csv, dcs) = mixed_table(work, 1500);
    let parquet = to_parquet(&csv, Some(MIXED_SCHEMA), 128).await;
    let from_csv = check(&url, work, &job(&csv, &dcs, Some(MIXED_SCHEMA)), 3).await;
    let from_parquet = check(&url, work, &job(&parquet, &dcs, None), 4).await;
    assert_eq!(from_csv, from_parquet, "Parquet numbers rows as the CSV it came from");
    assert!(from_csv.edges > 0, "the table has conflicts: {from_csv}");
    // Every constraint is a key, an FD or an order pair: I_R's upper bound
    // sums their covers, the Age/Tenure pair's from the covers-only task
    // (its detection runs as pair tasks of the row groups); the State pair
    // and `Rate -> State` read common columns, so the smaller of that sum
    // and the union of the margin covers, listed by the executors.
    let r = |report: &Report| {
        let r = report.measures.as_ref().and_then(|m| m.r.as_ref()).expect("I_R released");
        r.parts.iter().map(|p| p.statistic.clone()).collect::<Vec<_>>()
    };
    let report = run_job(&job(&parquet, &dcs, None), &NoProgress).await.unwrap();
    assert_eq!(r(&report), ["twice-lower-bound", "union-cover"]);
    // That pair alone: its chain cover is I_R, released exactly.
    let pair = work.join("pair.dcs");
    std::fs::write(&pair, "not(t1.Age<t2.Age & t1.Tenure>t2.Tenure)\n").unwrap();
    check(&url, work, &job(&parquet, &pair, None), 4).await;
    let report = run_job(&job(&parquet, &pair, None), &NoProgress).await.unwrap();
    assert_eq!(r(&report), ["exact-cover"]);

    // Tax with RNoise: all nine constraints, then three of them.
    let clean = work.join("tax.csv");
    let noisy = work.join("tax-noisy.csv");
    let options = dpincon_generate::TaxOptions { rows: 3000, seed: 5, format: None };
    dpincon_generate::generate_tax(&options, &clean).unwrap();
    let all = dpincon_constraints::parse_constraints(dpincon_generate::TAX_CONSTRAINTS).unwrap();
    dpincon_generate::rnoise(&clean, &all, 0.01, 5, &noisy).unwrap();
    let tax = to_parquet(&noisy, None, 400).await;
    let nine = work.join("tax.dcs");
    std::fs::write(&nine, dpincon_generate::TAX_CONSTRAINTS).unwrap();
    let three = work.join("tax3.dcs");
    let lines: Vec<&str> = dpincon_generate::TAX_CONSTRAINTS.lines().collect();
    std::fs::write(&three, [lines[1], lines[2], lines[7]].join("\n")).unwrap();
    // One X's FDs (Zip → City, State) and a key (AreaCode, Phone): I_P by
    // class count, from the partitions' classes on the cluster.
    let zip = work.join("zip.dcs");
    std::fs::write(&zip, [lines[1], lines[3]].join("\n")).unwrap();
    let key = work.join("key.dcs");
    std::fs::write(&key, lines[0]).unwrap();
    for dcs in [&nine, &three, &zip, &key] {
        let from_parquet = check(&url, work, &job(&tax, dcs, None), 5).await;
        assert_eq!(from_parquet, embedded_fingerprint(&job(&noisy, dcs, None)).await);
    }
    let report = run_job(&job(&tax, &key, None), &NoProgress).await.unwrap();
    let p = report.measures.and_then(|m| m.p).expect("I_P released");
    assert_eq!(p.selection[0].mechanism, "class-count", "{p:?}");
    assert_eq!(p.theta, 1, "{p:?}");
}
