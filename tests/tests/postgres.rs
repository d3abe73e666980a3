//! PostgreSQL as a source, against a real server (a throwaway cluster of
//! Debian's `postgresql`, see `common`): the exact counts, the edge stream
//! and the seeded releases equal the CSV path's on the same rows; NULLs and
//! the common types; and the errors (unreachable server, missing table,
//! unsupported type, empty table) name what is wrong, never the password,
//! and charge nothing.

mod common;

use std::path::Path;

use common::{PASSWORD, PgServer, free_port};
use dpincon_engine::{JobConfig, NoProgress, PostgresSource, load, run_job};
use dpincon_tests::exact;
use futures_util::SinkExt;

fn table(url: &str, table: &str) -> PostgresSource {
    PostgresSource {
        url: url.into(),
        table: Some(table.into()),
        query: None,
        order_by: None,
        password_env: None,
    }
}

/// Loads `csv` (header row) into a new table `name` with a `row_id bigint
/// PRIMARY KEY` first, in REVERSED row order (so only the primary-key
/// order gives the CSV's tuple ids), through COPY FROM STDIN.
async fn load_csv(client: &tokio_postgres::Client, csv: &Path, name: &str) {
    let data = dpincon_source::read_table(csv, &Default::default()).await.unwrap();
    let columns: Vec<String> = data
        .arrow_schema
        .fields()
        .iter()
        .map(|f| {
            let ty = match f.data_type() {
                arrow::datatypes::DataType::Int64 => "bigint",
                arrow::datatypes::DataType::Float64 => "double precision",
                arrow::datatypes::DataType::Boolean => "boolean",
                _ => "text",
            };
            format!("\"{}\" {ty}", f.name())
        })
        .collect();
    let create = format!("CREATE TABLE {name} (row_id bigint PRIMARY KEY, {})", columns.join(", "));
    client.batch_execute(&create).await.unwrap();
    let mut reader = csv::Reader::from_path(csv).unwrap();
    let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let mut writer = csv::Writer::from_writer(Vec::new());
    for (id, record) in records.iter().enumerate().rev() {
        let mut row = vec![id.to_string()];
        row.extend(record.iter().map(String::from));
        writer.write_record(&row).unwrap();
    }
    let bytes = bytes::Bytes::from(writer.into_inner().unwrap());
    let sink = client.copy_in(&format!("COPY {name} FROM STDIN (FORMAT csv)")).await.unwrap();
    futures_util::pin_mut!(sink);
    sink.send(bytes).await.unwrap();
    assert_eq!(sink.finish().await.unwrap(), records.len() as u64);
}

#[tokio::test(flavor = "multi_thread")]
async fn postgres_and_csv_copies_of_a_noisy_tax_table_give_identical_counts() {
    let Some(server) = PgServer::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let clean = dir.path().join("clean.csv");
    let dirty = dir.path().join("tax.csv");
    let dcs = dir.path().join("dcs.txt");
    let options = dpincon_generate::TaxOptions { rows: 3000, seed: 3, format: None };
    dpincon_generate::generate_tax(&options, &clean).unwrap();
    std::fs::write(&dcs, dpincon_generate::TAX_CONSTRAINTS).unwrap();
    let constraints = dpincon_generate::read_constraints(&dcs).unwrap();
    dpincon_generate::rnoise(&clean, &constraints, 0.01, 5, &dirty).unwrap();
    let client = server.client().await;
    load_csv(&client, &dirty, "tax").await;

    let (rows, fingerprint, view) = exact(JobConfig::new(&dirty, &dcs)).await;
    assert_eq!(rows, 3000);
    assert!(fingerprint.edges > 100, "the noise made conflicts: {fingerprint:?}");
    let from_table = exact(JobConfig::postgres(table(&server.url(), "tax"), &dcs)).await;
    assert_eq!(from_table, (rows, fingerprint, view.clone()), "{}", server.log());
    // A query with its own order gives the same rows in the same order.
    let query = PostgresSource {
        table: None,
        query: Some("SELECT * FROM tax WHERE row_id >= 0;".into()),
        order_by: Some("row_id".into()),
        ..table(&server.url(), "tax")
    };
    assert_eq!(exact(JobConfig::postgres(query, &dcs)).await, (rows, fingerprint, view));
}

/// The same six rows as CSV text and as PostgreSQL types, with NULLs and an
/// empty string (a CSV export writes both as an empty field).
const TYPED_CSV: &str = "\
id,k,g,amount,name,code,flag,day,at,f4,note
1,1,10,10.50,ann,abc,true,2024-01-01,2024-01-01 10:00:00,1.5,x
2,1,10,20.25,bob,abc,false,2024-01-01,2024-01-01 09:00:00,2.5,y
3,2,10,,ann,abd,true,2024-01-02,2024-01-02 08:00:00,,
4,2,20,5.00,,abd,,2024-01-02,2024-01-02 07:00:00,3.5,
5,3,20,7.75,cy,,true,,2024-01-03 00:00:00,4.5,z
6,2,30,1.00,dee,xyz,true,2024-01-05,2024-01-05 00:00:00,5.5,w
";

const TYPED_SQL: &str = "
CREATE TABLE typed (id int4 PRIMARY KEY, k int2, g int4, amount numeric(10, 2),
  name varchar(20), code char(3), flag boolean, day date, at timestamp, f4 real, note text);
INSERT INTO typed VALUES
 (6, 2, 30, 1.00, 'dee', 'xyz', true, '2024-01-05', '2024-01-05 00:00:00', 5.5, 'w'),
 (1, 1, 10, 10.50, 'ann', 'abc', true, '2024-01-01', '2024-01-01 10:00:00', 1.5, 'x'),
 (3, 2, 10, NULL, 'ann', 'abd', true, '2024-01-02', '2024-01-02 08:00:00', NULL, NULL),
 (2, 1, 10, 20.25, 'bob', 'abc', false, '2024-01-01', '2024-01-01 09:00:00', 2.5, 'y'),
 (5, 3, 20, 7.75, 'cy', NULL, true, NULL, '2024-01-03 00:00:00', 4.5, 'z'),
 (4, 2, 20, 5.00, NULL, 'abd', NULL, '2024-01-02', '2024-01-02 07:00:00', 3.5, '');
CREATE TABLE with_json (id int4, doc json);
INSERT INTO with_json VALUES (1, '{}');
CREATE TABLE empty (a int4);
";

/// By hand (1-based ids): g → name: {1,2}, {2,3} (4 has no name); the
/// date/amount/timestamp DC: {1,2} (3 has no amount, 5 no day); code →
/// flag: {1,2} (4 has no flag); k → note: {1,2} (3 NULL and 4 '' never
/// conflict with 6's 'w'); f4/k: {5,6}. So |E| = 3, I_P = 5.
const TYPED_DCS: &str = "\
FD: g -> name
not(t1.day=t2.day&t1.amount<t2.amount&t1.at>t2.at)
FD: code -> flag
FD: k -> note
not(t1.f4<t2.f4&t1.k>t2.k)
";

#[tokio::test(flavor = "multi_thread")]
async fn types_nulls_and_errors() {
    let Some(server) = PgServer::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (csv, dcs) = (dir.path().join("typed.csv"), dir.path().join("typed.dcs"));
    std::fs::write(&csv, TYPED_CSV).unwrap();
    std::fs::write(&dcs, TYPED_DCS).unwrap();
    let client = server.client().await;
    client.batch_execute(TYPED_SQL).await.unwrap();

    let from_csv = exact(JobConfig::new(&csv, &dcs)).await;
    let source = table(&server.url(), "typed");
    let from_pg = exact(JobConfig::postgres(source.clone(), &dcs)).await;
    assert_eq!(from_pg, from_csv);
    let (rows, fingerprint, view) = from_pg;
    assert_eq!((rows, fingerprint.edges), (6, 3));
    let exact_values = view.0.expect("a non-private report");
    assert_eq!(exact_values.problematic, 5, "{exact_values:?}");
    let loaded = load(&JobConfig::postgres(source.clone(), &dcs), &NoProgress).await.unwrap();
    let edges: Vec<(u32, u32)> = loaded.graph.edges().map(|e| (e.u, e.v)).collect();
    assert_eq!(edges, [(0, 1), (1, 2), (4, 5)]);

    // The password from an environment variable instead of the URL.
    let var = "DPINCON_TEST_PG_PASSWORD";
    // SAFETY: this test is the only code in this binary that touches this
    // variable, and nothing reads the environment concurrently with it.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var(var, PASSWORD)
    };
    let by_env = PostgresSource {
        password_env: Some(var.into()),
        ..table(&server.url_without_password(), "typed")
    };
    assert_eq!(by_env.read().await.unwrap().rows, 6);

    let error = |source: PostgresSource| {
        let dcs = dcs.clone();
        async move {
            let ledger = tempfile::tempdir().unwrap();
            let mut config = JobConfig::postgres(source, &dcs);
            config.release.epsilon = Some(1.0);
            config.data.ledger = Some(ledger.path().join("l"));
            config.data.budget_cap = Some(10.0);
            let message = run_job(&config, &NoProgress).await.unwrap_err().to_string();
            assert!(!message.contains(PASSWORD), "{message}");
            assert!(!ledger.path().join("l").exists(), "charged: {message}");
            message
        }
    };
    let missing = error(table(&server.url(), "no_such_table")).await;
    assert!(missing.contains("table 'no_such_table' does not exist"), "{missing}");
    let json = error(table(&server.url(), "with_json")).await;
    assert!(json.contains("column 'doc' has type json"), "{json}");
    let empty = error(table(&server.url(), "empty")).await;
    assert!(empty.contains("no rows"), "{empty}");
    let wrong = PostgresSource { password_env: None, ..by_env.clone() };
    let wrong = PostgresSource {
        url: wrong.url.replace("postgres@", &format!("postgres:not-{PASSWORD}@")),
        ..wrong
    };
    let denied = error(wrong).await;
    assert!(denied.contains("cannot connect") && denied.contains("password"), "{denied}");
    let port = free_port();
    let url = format!("postgres://postgres:{PASSWORD}@127.0.0.1:{port}/postgres");
    let unreachable = error(table(&url, "typed")).await;
    assert!(unreachable.contains("cannot connect"), "{unreachable}");
    assert!(unreachable.contains(&format!("127.0.0.1:{port}")), "{unreachable}");
}
