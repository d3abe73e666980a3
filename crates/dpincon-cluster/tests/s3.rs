//! The cluster on S3 tables (moto, `tests/support/s3_server.rs`): the
//! coordinator registers a CSV object and a prefix of Parquet objects, the
//! executors read them from the store themselves (allowed only under
//! `--allow-tables s3://tables/`), and the exact counts, the edge stream
//! and the seeded releases equal the embedded run's on the local file. A
//! registered object that is missing stops the coordinator at start with
//! a message naming the URL, never the secret.

mod common;
#[path = "../../../tests/support/s3_server.rs"]
mod s3_server;

use std::path::Path;

use common::{Cluster, SCHEMA, TEST_DATASET, comparable, embedded, embedded_job, job, within};
use s3_server::S3Server;
use serde_json::json;

// One test in this binary: it sets the process's AWS_* variables, which
// the coordinator, its job processes and the executors inherit, before
// any other thread of its own runs.
#[test]
#[allow(unsafe_code)] // set_var: see SAFETY below
fn the_cluster_reads_s3_tables_as_the_embedded_run_reads_the_local_file() {
    let Some(server) = S3Server::start(&["tables"]) else {
        return;
    };
    for (key, value) in server.env() {
        // SAFETY: the only test of this binary, before its runtime starts.
        unsafe { std::env::set_var(key, value) };
    }
    tokio::runtime::Runtime::new().unwrap().block_on(cluster_on_s3(&server));
}

/// `csv` as Parquet objects cut before rows `cuts`, row groups of `group`
/// rows.
async fn parquet_parts(csv: &Path, cuts: &[usize], group: usize) -> Vec<Vec<u8>> {
    let schema = dpincon_source::parse_schema_override(SCHEMA).unwrap();
    let options = dpincon_source::ReadOptions { schema, ..Default::default() };
    let table = dpincon_source::read_table(csv, &options).await.unwrap();
    let all = arrow::compute::concat_batches(&table.arrow_schema, &table.batches).unwrap();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(group))
        .build();
    let mut starts = vec![0];
    starts.extend_from_slice(cuts);
    starts.push(all.num_rows());
    starts
        .windows(2)
        .map(|w| {
            let mut out = Vec::new();
            let mut writer =
                parquet::arrow::ArrowWriter::try_new(&mut out, all.schema(), Some(props.clone()))
                    .unwrap();
            writer.write(&all.slice(w[0], w[1] - w[0])).unwrap();
            writer.close().unwrap();
            out
        })
        .collect()
}

async fn cluster_on_s3(server: &S3Server) {
    let dir = tempfile::tempdir().unwrap();
    let (data, constraints) = common::write_table(dir.path(), 3000);
    server.put("tables", "table.csv", std::fs::read(&data).unwrap()).await;
    let parts = parquet_parts(&data, &[1000, 1700], 256).await;
    for (i, part) in parts.into_iter().enumerate().rev() {
        server.put("tables", &format!("parts/part-{i}.parquet"), part).await;
    }
    let local = dir.path().join("table.parquet");
    std::fs::write(&local, parquet_parts(&data, &[], 256).await.remove(0)).unwrap();

    // A registered object that is missing: the coordinator does not start.
    let missing = write_config(dir.path(), "missing", "s3://tables/none.parquet");
    let scheduler = ["--scheduler", "http://127.0.0.1:9"];
    let err =
        common::try_coordinator(dir.path(), &scheduler, &["--config", missing.to_str().unwrap()])
            .err()
            .expect("the coordinator refuses a missing table");
    let log = &err.log;
    assert!(log.contains("'s3://tables/none.parquet'") && log.contains("no such object"), "{err}");
    assert!(!err.to_string().contains(&server.secret_key), "{err}");

    let config = write_config(dir.path(), "main", "s3://tables/parts/");
    let allow = ["--allow-tables", "s3://tables/"];
    // The CSV object is cut into ranges of at least 4 KiB (a few here).
    let ranges = ["--csv-range-bytes", "4KiB"];
    let cluster = Cluster::start_with(dir.path(), &config, 2, &allow, &ranges);

    // The CSV object, as the harness's dataset (declared schema), its
    // ranges fetched by the executors.
    let remote = job(&constraints, json!({"non-private": true, "epsilon": 0.5, "seed": 3}));
    let (want, want_fp) = embedded(&embedded_job(&data, &constraints, &remote)).await;
    assert!(common::exact(&want).edges > 1000, "a graph worth testing");
    same_as_embedded(&cluster, &remote, &want, &want_fp).await;

    // The prefix of three Parquet objects, split by row groups.
    let mut remote = remote.clone();
    remote["dataset"] = json!("parts");
    let mut local_job = dpincon_engine::JobConfig::new(&local, &constraints);
    local_job.release.epsilon = Some(0.5);
    (local_job.test.seed, local_job.test.non_private) = (Some(3), true);
    let (want, want_fp) = embedded(&local_job).await;
    same_as_embedded(&cluster, &remote, &want, &want_fp).await;
    assert!(!cluster.logs().contains(&server.secret_key));
}

/// Submits `remote` and checks its report and edge stream against the
/// embedded run's (`want`, `want_fp`).
async fn same_as_embedded(
    cluster: &Cluster,
    remote: &serde_json::Value,
    want: &dpincon_engine::Report,
    want_fp: &str,
) {
    let client = cluster.client();
    let id = client.submit(remote).await.unwrap();
    let got = within(client.wait(&id, |_| {}))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", cluster.logs()));
    assert_eq!(comparable(&common::report(&got)), comparable(want));
    assert_eq!(client.status(&id).await.unwrap().edge_fingerprint, want_fp);
}

/// A configuration registering `s3://tables/table.csv` as the harness's
/// dataset and `parts` at `parts_url`, state and ledgers under `dir/tag`.
fn write_config(dir: &Path, tag: &str, parts_url: &str) -> std::path::PathBuf {
    let ledgers = dir.join(tag).join("ledgers");
    std::fs::create_dir_all(&ledgers).unwrap();
    let dataset = |name: &str, data: &str, schema: &str| {
        format!(
            "[datasets.{name}]\ndata = {data:?}\n{schema}ledger = {:?}\nbudget-cap = 100.0\n\
             max-job-epsilon = 10.0\n{TEST_DATASET}",
            ledgers.join(format!("{name}.jsonl")).to_str().unwrap()
        )
    };
    let text = format!(
        "state-dir = {:?}\n{}{}",
        dir.join(tag).join("state").to_str().unwrap(),
        dataset(common::DATASET, "s3://tables/table.csv", &format!("schema = {SCHEMA:?}\n")),
        dataset("parts", parts_url, "")
    );
    let path = dir.join(tag).join("coordinator.toml");
    std::fs::write(&path, text).unwrap();
    path
}
