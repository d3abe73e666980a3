//! S3 as a source, against a real S3-compatible server (moto, see
//! `../support/s3_server.rs`): a CSV object, one Parquet object and a
//! prefix of Parquet objects give the local file's exact counts, edge
//! stream and seeded releases; and the errors (missing bucket or key,
//! wrong credentials, unreachable endpoint, an object that is not
//! Parquet, parts that disagree) name the URL, never the secret.

#[path = "../support/s3_server.rs"]
mod s3_server;

use std::path::Path;
use std::sync::Arc;

use arrow::record_batch::RecordBatch;
use dpincon_engine::JobConfig;
use dpincon_source::object::read_object;
use dpincon_source::{ObjectUrl, ReadOptions, S3Settings, read_table};
use dpincon_tests::exact;
use s3_server::{S3Server, free_port};

/// `batches` as Parquet, `group_rows` rows per row group.
fn parquet(batches: &[RecordBatch], group_rows: usize) -> Vec<u8> {
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(group_rows))
        .build();
    let mut out = Vec::new();
    let mut writer =
        parquet::arrow::ArrowWriter::try_new(&mut out, batches[0].schema(), Some(props)).unwrap();
    for b in batches {
        writer.write(b).unwrap();
    }
    writer.close().unwrap();
    out
}

/// Rows `range` of the table, as one batch.
fn rows(all: &RecordBatch, range: std::ops::Range<usize>) -> RecordBatch {
    all.slice(range.start, range.len())
}

// One test in this binary: it sets the process's AWS_* variables (the
// engine reads the store with the standard environment) before any other
// thread of its own runs.
#[test]
#[allow(unsafe_code)] // set_var: see SAFETY below
fn s3_objects_and_prefixes_read_as_the_local_file() {
    let Some(server) = S3Server::start(&["tables"]) else {
        return;
    };
    for (key, value) in server.env() {
        // SAFETY: the only test of this binary, before its runtime starts.
        unsafe { std::env::set_var(key, value) };
    }
    tokio::runtime::Runtime::new().unwrap().block_on(same_as_local(&server));
}

async fn same_as_local(server: &S3Server) {
    let dir = tempfile::tempdir().unwrap();
    let clean = dir.path().join("clean.csv");
    let dirty = dir.path().join("tax.csv");
    let dcs = dir.path().join("dcs.txt");
    let options = dpincon_generate::TaxOptions { rows: 3000, seed: 4, format: None };
    dpincon_generate::generate_tax(&options, &clean).unwrap();
    std::fs::write(&dcs, dpincon_generate::TAX_CONSTRAINTS).unwrap();
    let constraints = dpincon_generate::read_constraints(&dcs).unwrap();
    dpincon_generate::rnoise(&clean, &constraints, 0.01, 5, &dirty).unwrap();

    let table = read_table(&dirty, &ReadOptions::default()).await.unwrap();
    let all = arrow::compute::concat_batches(&table.arrow_schema, &table.batches).unwrap();
    let local_parquet = dir.path().join("tax.parquet");
    std::fs::write(&local_parquet, parquet(std::slice::from_ref(&all), 700)).unwrap();

    server.put("tables", "tax.csv", std::fs::read(&dirty).unwrap()).await;
    server.put("tables", "one/tax.parquet", parquet(std::slice::from_ref(&all), 700)).await;
    // Three parts of unequal sizes and row groups, written out of key
    // order, beside a marker file and a sibling prefix that are not the table.
    server.put("tables", "parts/part-2.parquet", parquet(&[rows(&all, 2100..3000)], 400)).await;
    server.put("tables", "parts/part-0.parquet", parquet(&[rows(&all, 0..1000)], 300)).await;
    server.put("tables", "parts/part-1.parquet", parquet(&[rows(&all, 1000..2100)], 1100)).await;
    server.put("tables", "parts/_SUCCESS", Vec::new()).await;
    server.put("tables", "parts-old/part-0.parquet", parquet(&[rows(&all, 0..10)], 10)).await;

    let want = exact(JobConfig::new(&dirty, &dcs)).await;
    assert_eq!(want.0, 3000);
    assert!(want.1.edges > 100, "the noise made conflicts: {:?}", want.1);
    assert_eq!(exact(JobConfig::new(&local_parquet, &dcs)).await, want, "local Parquet");
    for url in ["s3://tables/tax.csv", "s3://tables/one/tax.parquet", "s3://tables/parts/"] {
        assert_eq!(exact(JobConfig::new(url, &dcs)).await, want, "{url}");
    }
    let read = read_table(Path::new("s3://tables/parts/"), &ReadOptions::default()).await.unwrap();
    assert_eq!(read.path, Path::new("s3://tables/parts/"));

    errors(server, &all).await;
}

/// Reads `url` with `settings` (the server's, changed by `with`).
async fn read_error(server: &S3Server, url: &str, with: &[(&str, &str)]) -> String {
    let mut settings = server.settings();
    for (k, v) in with {
        settings.retain(|(key, _)| key != k);
        settings.push((k.to_string(), v.to_string()));
    }
    let settings = S3Settings::given(settings.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let url = ObjectUrl::parse(url).unwrap();
    let e = read_object(&url, &ReadOptions::default(), &settings).await.unwrap_err().to_string();
    assert!(!e.contains(&server.secret_key), "{e}");
    e
}

async fn errors(server: &S3Server, all: &RecordBatch) {
    server.put("tables", "bad/table.parquet", b"Zip,City\n1,a\n".to_vec()).await;
    let mut other = rows(all, 0..5);
    let schema = Arc::new(arrow::datatypes::Schema::new(vec![other.schema().field(0).clone()]));
    other = RecordBatch::try_new(schema, vec![other.column(0).clone()]).unwrap();
    server.put("tables", "mixed/a.parquet", parquet(&[rows(all, 0..5)], 5)).await;
    server.put("tables", "mixed/b.parquet", parquet(&[other], 5)).await;

    let e = read_error(server, "s3://no-such-bucket/t.csv", &[]).await;
    assert!(e.contains("'s3://no-such-bucket/t.csv'") && e.contains("does not exist"), "{e}");
    let e = read_error(server, "s3://tables/none.csv", &[]).await;
    assert!(e.contains("'s3://tables/none.csv'") && e.contains("no such object"), "{e}");
    let e = read_error(server, "s3://tables/nothing/", &[]).await;
    assert!(e.contains("no Parquet object"), "{e}");
    let closed = format!("http://127.0.0.1:{}", free_port());
    let e = read_error(server, "s3://tables/tax.csv", &[("aws_endpoint", &closed)]).await;
    assert!(
        e.contains("'s3://tables/tax.csv'") && e.contains(&format!("cannot reach {closed}")),
        "{e}"
    );
    let e = read_error(server, "s3://tables/bad/table.parquet", &[]).await;
    assert!(e.contains("'s3://tables/bad/table.parquet'") && e.contains("not Parquet"), "{e}");
    let e = read_error(server, "s3://tables/bad/", &[]).await;
    assert!(e.contains("'s3://tables/bad/table.parquet'") && e.contains("not Parquet"), "{e}");
    let e = read_error(server, "s3://tables/mixed/", &[]).await;
    assert!(e.contains("'s3://tables/mixed/b.parquet'") && e.contains("differ"), "{e}");
    server.enforce_credentials();
    let settings =
        S3Settings::given(server.settings().iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let url = ObjectUrl::parse("s3://tables/tax.csv").unwrap();
    read_object(&url, &ReadOptions::default(), &settings).await.unwrap();
    let e = read_error(server, "s3://tables/tax.csv", &[("aws_secret_access_key", "wrong")]).await;
    assert!(e.contains("'s3://tables/tax.csv'") && e.contains("access denied"), "{e}");
}
