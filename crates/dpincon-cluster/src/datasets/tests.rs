//! The operator's configuration: what loads, and what is refused with
//! the key at fault.

use dpincon_source::DataFormat;

use super::*;

fn config(dir: &Path, dataset: &str) -> String {
    format!(
        "state-dir = {:?}\n[limits]\nmax-queued = 3\n[datasets.t]\ndata = {:?}\n{dataset}",
        dir.join("state").display().to_string(),
        dir.join("t.csv").display().to_string()
    )
}

#[test]
fn a_dataset_declares_every_column_and_its_budget() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.csv"), "Zip,City\n1,a\n").unwrap();
    let ledger = dir.path().join("t.ledger").display().to_string();
    let good = format!(
        "schema = \"Zip:int, City:string\"\nledger = {ledger:?}\nbudget-cap = 5.0\n\
         max-job-epsilon = 1.5\nmin-epsilon = 0.05\naccept-deadline-channel = true\n"
    );
    let c = CoordinatorConfig::parse(&config(dir.path(), &good), "c.toml").unwrap();
    let t = &c.datasets["t"];
    assert_eq!(c.limits.max_queued, 3);
    assert_eq!((t.budget_cap(), t.max_job_epsilon, t.min_epsilon), (5.0, 1.5, 0.05));
    assert_eq!(t.table.schema.as_ref().unwrap().to_string(), "Zip:int, City:string");
    assert_eq!((t.table.infer_rows, t.table.file_format()), (Some(1), Some(DataFormat::Csv)));
    // The jobs' policy carries the dataset's ledger and cap.
    assert_eq!(
        (t.policy.ledger.as_deref(), t.policy.budget_cap),
        (Some(Path::new(&ledger)), Some(5.0))
    );
    assert_eq!(t.schema.columns.len(), 2);
    assert_eq!(c.owned_dirs().len(), 2);

    for (change, why) in [
        (good.replace("Zip:int, City:string", "Zip:int"), "every column"),
        (good.replace("Zip:int, City:string", "City:string, Zip:int"), "in order"),
        (good.replace("budget-cap = 5.0", "budget-cap = 1.0"), "exceeds budget-cap"),
        (good.replace("budget-cap = 5.0", "budget-cap = -1.0"), "budget-cap must be > 0"),
        (good.replace("t.ledger", "no/such/dir/t.ledger"), "does not exist"),
        (good.replace("min-epsilon", "seed = 1\nmin-epsilon"), "unknown field"),
        (good.replace("ledger =", "# ledger ="), "missing field `ledger`"),
    ] {
        let err = CoordinatorConfig::parse(&config(dir.path(), &change), "c.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains(why), "{why}: {err}");
    }
}

/// The keys of issue 26: defaults, and each refused when unknown,
/// malformed or out of range, naming the key.
#[test]
fn slots_quotas_and_test_datasets_are_checked_at_start() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.csv"), "Zip,City\n1,a\n").unwrap();
    std::fs::write(dir.path().join("u.csv"), "Zip,City\n1,a\n").unwrap();
    let ledger = dir.path().join("t.ledger").display().to_string();
    let good = format!(
        "schema = \"Zip:int, City:string\"\nledger = {ledger:?}\nbudget-cap = 5.0\n\
         max-job-epsilon = 1.5\n"
    );
    // A private fixed-time dataset bounds its jobs' work, or accepts
    // the deadline channel in so many words.
    let err = CoordinatorConfig::parse(&config(dir.path(), &good), "c.toml").unwrap_err();
    assert!(err.to_string().contains("accept-deadline-channel = true"), "{err}");
    let good = format!("{good}accept-deadline-channel = true\n");
    let parse = |dataset: &str| CoordinatorConfig::parse(&config(dir.path(), dataset), "c.toml");
    let t = parse(&good).unwrap().datasets["t"].clone();
    assert_eq!(t.job_deadline, Duration::from_secs(600));
    assert_eq!(t.release, ReleaseMode::FixedTime);
    assert!(!t.allow_non_private);
    assert_eq!((t.policy.max_edges, t.max_job_memory, t.max_spill_bytes), (None, None, None));
    let set = parse(&format!(
        "{good}job-deadline = \"90s\"\nrelease = \"when-done\"\naccept-timing-channel = true\n\
         allow-non-private = true\nmax-edges = 100000000\nmax-rows = 1000\n\
         max-job-memory = \"1GiB\"\nmax-spill-bytes = \"2GiB\"\n"
    ))
    .unwrap()
    .datasets["t"]
        .clone();
    assert_eq!(set.job_deadline, Duration::from_secs(90));
    assert_eq!(set.release, ReleaseMode::WhenDone);
    assert!(set.allow_non_private);
    assert_eq!(
        (set.policy.max_edges, set.max_job_memory, set.max_spill_bytes),
        (Some(100_000_000), Some(1 << 30), Some(2 << 30))
    );
    assert_eq!(set.quota_epsilon, Some(0.1));
    for (extra, why) in [
        ("job-deadline = \"soon\"", "'soon' is not a duration"),
        ("job-deadline = \"0s\"", "from 1s to 7d"),
        ("job-deadline = \"8d\"", "from 1s to 7d"),
        ("job-deadline = 90", "job-deadline"),
        ("release = \"eventually\"", "release"),
        ("release = \"when-done\"", "accept-timing-channel = true"),
        ("accept-timing-channel = \"yes\"", "accept-timing-channel"),
        ("allow-non-private = 1", "allow-non-private"),
        ("max-edges = 0", "max-edges must be > 0"),
        ("max-edges = -5", "max-edges"),
        ("max-edges = 1000", "max-edges needs max-rows"),
        ("max-edges = 1000\nmax-rows = 100", "give max-edges of at least"),
        ("max-edges = 100000000\nmax-rows = 1000\nquota-epsilon = 0", "quota-epsilon"),
        ("quota-epsilon = 0.1", "quota-epsilon goes with max-edges"),
        ("max-job-memory = \"lots\"", "'lots' is not a memory size"),
        ("max-job-memory = \"1MiB\"", "at least 64MiB"),
        ("max-spill-bytes = \"-1G\"", "'-1G' is not a memory size"),
        (
            "max-edges = 100000000\nmax-rows = 1000\nmax-job-memory = \"1GiB\"",
            "cannot go with max-edges on a fixed-time",
        ),
        (
            "max-edges = 100000000\nmax-rows = 1000\nmax-spill-bytes = \"1GiB\"",
            "cannot go with max-edges on a fixed-time",
        ),
        ("memory-limit = \"huge\"", "'huge' is not a memory size"),
        ("max-deadline = \"1m\"", "unknown field `max-deadline`"),
    ] {
        let err = parse(&format!("{good}{extra}\n")).unwrap_err().to_string();
        assert!(err.contains(why), "{extra}: {err}");
        assert!(err.contains("[datasets.t]") || err.contains("c.toml"), "{extra}: {err}");
        // The key is named: in the message, or on the line TOML shows.
        let mut keys = extra.lines().filter_map(|line| line.split(" =").next());
        assert!(keys.any(|key| err.contains(key)), "{extra}: {err}");
    }
    // Limits: unknown, malformed, zero.
    for (limits, why) in [
        ("max-queued-per-client = 0", "must be > 0"),
        ("max-candidates = 0", "must be > 0"),
        ("max-candidates = \"many\"", "max-candidates"),
        ("slots = 0", "must be > 0"),
        ("slots = 65", "slots must be at most 64"),
        ("max-jobs = 3", "unknown field `max-jobs`"),
    ] {
        let text = config(dir.path(), &good).replace("max-queued = 3", limits);
        let err = CoordinatorConfig::parse(&text, "c.toml").unwrap_err().to_string();
        assert!(err.contains(why), "{limits}: {err}");
    }
    // Two datasets on one table need one ledger.
    let other = |ledger: &str| {
        format!(
            "{good}[datasets.u]\ndata = {:?}\nschema = \"Zip:int, City:string\"\n\
             ledger = {ledger:?}\nbudget-cap = 5.0\nmax-job-epsilon = 1.5\n\
             accept-deadline-channel = true\n",
            dir.path().join("t.csv").display().to_string(),
        )
    };
    let err =
        parse(&other(&dir.path().join("u.ledger").display().to_string())).unwrap_err().to_string();
    assert!(err.contains("'t' and 'u' read the same table with different ledgers"), "{err}");
    assert!(parse(&other(&ledger)).is_ok(), "one table, one ledger");
    // One release mode per coordinator; K slots.
    let when_done = "release = \"when-done\"\naccept-timing-channel = true\n";
    let mixed = other(&ledger) + when_done;
    let err = parse(&mixed).unwrap_err().to_string();
    assert!(
        err.contains("datasets 't' (fixed-time) and 'u' (when-done) cannot share a coordinator"),
        "{err}"
    );
    let both = format!("{good}{when_done}") + &other(&ledger)[good.len()..] + when_done;
    let c = parse(&both).unwrap();
    assert_eq!((c.release, c.limits.slots), (ReleaseMode::WhenDone, 1));
    let four = config(dir.path(), &good).replace("max-queued = 3", "slots = 4");
    let c = CoordinatorConfig::parse(&four, "c.toml").unwrap();
    assert_eq!((c.release, c.limits.slots), (ReleaseMode::FixedTime, 4));
}

#[test]
fn a_parquet_dataset_is_described_by_its_footer_and_a_csv_one_by_its_declaration() {
    use dpincon_generate::{TAX_COLUMNS, TaxOptions, generate_tax};
    let dir = tempfile::tempdir().unwrap();
    let tax = dir.path().join("t.parquet");
    generate_tax(&TaxOptions { rows: 20, seed: 1, format: None }, &tax).unwrap();
    let dataset = |extra: &str| {
        format!(
            "state-dir = \"s\"\n[datasets.t]\ndata = {:?}\nledger = {:?}\n\
             budget-cap = 5.0\nmax-job-epsilon = 1.0\naccept-deadline-channel = true\n{extra}",
            tax.display().to_string(),
            dir.path().join("t.ledger").display().to_string()
        )
    };
    let c = CoordinatorConfig::parse(&dataset(""), "c.toml").unwrap();
    let t = &c.datasets["t"];
    assert_eq!(t.table.file_format(), Some(DataFormat::Parquet));
    assert_eq!((&t.table.schema, t.table.infer_rows), (&None, None));
    let names: Vec<&str> = t.schema.columns.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(names, TAX_COLUMNS);
    let err = CoordinatorConfig::parse(&dataset("schema = \"FName:int\""), "c.toml")
        .unwrap_err()
        .to_string();
    assert!(err.contains("`schema` does not match the Parquet footer"), "{err}");
    // A CSV dataset must declare its schema.
    std::fs::write(dir.path().join("t.csv"), "a\n1\n").unwrap();
    let csv = dataset("").replace("t.parquet", "t.csv");
    let err = CoordinatorConfig::parse(&csv, "c.toml").unwrap_err().to_string();
    assert!(err.contains("needs `schema`"), "{err}");
}
