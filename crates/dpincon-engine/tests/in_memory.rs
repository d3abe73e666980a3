//! A table handed over in memory (the Python package's DataFrames and
//! Arrow streams) is measured as the same table read from its file: the
//! same seeded releases, exact values and edge stream, whatever the
//! string encoding the producer chose. Its ledger and report call it by
//! its `dataset` name, which a ledger requires.

use std::path::Path;
use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatchIterator};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use dpincon_engine::{
    EngineError, JobConfig, NoProgress, Report, TableLoader, TableSpec, run_job, run_job_on_table,
    run_job_with,
};
use dpincon_source::{ReadOptions, TableData, read_batches, read_table};

/// A Tax-like table (a key, an FD, order constraints) from a fixed seed.
fn write_table(dir: &Path) -> (std::path::PathBuf, String) {
    let mut state: u64 = 51;
    let mut below = |n: u64| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    let mut csv = String::from("SSN,Zip,City,State,Salary,Rate\n");
    for id in 0..400 {
        let zip = below(40);
        let city = if below(10) == 0 { format!("C{zip}x") } else { format!("C{zip}") };
        let ssn = if below(25) == 0 { below(10) } else { 100 + id };
        let salary = 20 + below(100);
        let rate = if below(15) == 0 { salary.saturating_sub(1 + below(30)) } else { salary };
        csv += &format!("{ssn},{zip},{city},S{},{salary},{rate}\n", zip % 6);
    }
    let path = dir.join("tax.csv");
    std::fs::write(&path, csv).unwrap();
    let constraints = "FD: Zip -> City, State\nnot(t1.SSN=t2.SSN)\n\
                       not(t1.State=t2.State & t1.Salary>t2.Salary & t1.Rate<t2.Rate)\n";
    (path, constraints.into())
}

fn seeded(mut job: JobConfig) -> JobConfig {
    job.release.epsilon = Some(1.0);
    job.test.seed = Some(11);
    job.test.non_private = true;
    job
}

/// `table` with its string columns as `strings` (Polars: Utf8View, its
/// categoricals a dictionary; pandas: LargeUtf8), as the Arrow C stream hands it over.
fn as_stream(table: &TableData, strings: &DataType) -> TableData {
    let fields: Vec<Field> = table
        .arrow_schema
        .fields()
        .iter()
        .map(|f| match f.data_type() {
            DataType::Utf8 => Field::new(f.name(), strings.clone(), true),
            other => Field::new(f.name(), other.clone(), true),
        })
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let batches: Vec<_> = table
        .batches
        .iter()
        .map(|b| {
            let columns: Vec<ArrayRef> = b
                .columns()
                .iter()
                .zip(schema.fields())
                .map(|(c, f)| arrow::compute::cast(c, f.data_type()).unwrap())
                .collect();
            Ok(RecordBatch::try_new(schema.clone(), columns).unwrap())
        })
        .collect();
    read_batches("tax", RecordBatchIterator::new(batches, schema)).unwrap()
}

/// What must not depend on where the rows came from: all but the job's
/// id, the table's name and the timings.
fn comparable(report: &Report) -> Report {
    Report { job_id: String::new(), data: String::new(), timings: None, ..report.clone() }
}

#[tokio::test]
async fn an_in_memory_table_gives_the_files_report() {
    let dir = tempfile::tempdir().unwrap();
    let (path, constraints) = write_table(dir.path());
    let inline = dpincon_engine::Constraints::Inline { inline: constraints };
    let from_file =
        run_job(&seeded(JobConfig::new(&path, inline.clone())), &NoProgress).await.unwrap();
    let exact = from_file.non_private.as_ref().unwrap();
    assert!(exact.edges > 0 && exact.problematic > 0, "the table has conflicts");

    let table = read_table(&path, &ReadOptions::default()).await.unwrap();
    let dataset = TableSpec::in_memory(Some("warehouse.tax".into()));
    let job = seeded(JobConfig::with(dataset, inline));
    let categorical =
        DataType::Dictionary(Box::new(DataType::UInt32), Box::new(DataType::Utf8View));
    let strings = [DataType::Utf8, DataType::LargeUtf8, DataType::Utf8View, categorical];
    for (i, strings) in strings.iter().enumerate() {
        let report = match i {
            0 => run_job_on_table(&job, table.clone(), &NoProgress).await.unwrap(),
            _ => {
                let streamed = as_stream(&table, strings);
                let loader = TableLoader::reading(move || Ok(streamed));
                run_job_with(&job, &NoProgress, &loader).await.unwrap()
            }
        };
        assert_eq!(comparable(&report), comparable(&from_file), "strings as {strings}");
        assert_eq!(report.non_private.as_ref().unwrap().edge_stream, exact.edge_stream);
        assert_eq!(report.data, "warehouse.tax");
    }
}

#[tokio::test]
async fn a_ledger_needs_the_in_memory_tables_dataset_name() {
    let dir = tempfile::tempdir().unwrap();
    let (path, constraints) = write_table(dir.path());
    let table = read_table(&path, &ReadOptions::default()).await.unwrap();
    let inline = dpincon_engine::Constraints::Inline { inline: constraints };
    let ledger = dir.path().join("tax.ledger");

    let mut unnamed = seeded(JobConfig::with(TableSpec::in_memory(None), inline.clone()));
    unnamed.data.ledger = Some(ledger.clone());
    let read = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = read.clone();
    let loader = TableLoader::reading(move || {
        flag.store(true, std::sync::atomic::Ordering::SeqCst);
        Ok(table)
    });
    let err = run_job_with(&unnamed, &NoProgress, &loader).await.unwrap_err();
    assert!(matches!(err, EngineError::Config(ref m) if m.contains("dataset name")), "{err}");
    assert!(!ledger.exists(), "nothing charged");
    assert!(!read.load(std::sync::atomic::Ordering::SeqCst), "a refused job reads no row");

    let table = read_table(&path, &ReadOptions::default()).await.unwrap();
    let mut named = unnamed.clone();
    named.table.dataset = Some("warehouse.tax".into());
    let report = run_job_on_table(&named, table.clone(), &NoProgress).await.unwrap();
    let state = report.budget.unwrap().ledger.unwrap();
    assert_eq!(state.spent_after, 3.0);
    let text = std::fs::read_to_string(&ledger).unwrap();
    assert!(text.contains("warehouse.tax"), "the ledger names the dataset: {text}");

    // Another name is another dataset: this ledger refuses it, uncharged.
    let mut other = named.clone();
    other.table.dataset = Some("warehouse.other".into());
    let err = run_job_on_table(&other, table.clone(), &NoProgress).await.unwrap_err();
    assert!(matches!(err, EngineError::Ledger { .. }), "{err}");
    assert_eq!(std::fs::read_to_string(&ledger).unwrap(), text);

    // A job naming a file too is ambiguous.
    let mut both = named;
    both.table.data = Some(path);
    both.data.ledger = None;
    let err = run_job_on_table(&both, table, &NoProgress).await.unwrap_err();
    assert!(matches!(err, EngineError::Config(ref m) if m.contains("in-memory")), "{err}");
}
