//! The suite's keys: an unknown key, a malformed or out-of-range value and
//! a missing `ledger` are refused with a message naming the suite and the
//! key; a declared `schema` is checked against the table's header (or its
//! Parquet footer) when the suite loads.

use std::path::Path;

use dpincon_audit::Suite;

/// One CSV dataset, every key that matters set; each case edits one line.
const OK: &str = r#"name = "s"
[[dataset]]
name = "t"
data = "t.csv"
format = "csv"
schema = "Zip:int, City:string"
constraints = "t.dcs"
epsilon = 1
max-rows = 10
ledger = "t.ledger"
budget-cap = 5
runs-per-day = 1
[[dataset.check]]
name = "pairs"
measure = "mi"
max-fraction = 0.5
"#;

fn parse_error(text: &str) -> String {
    let message = Suite::parse(text, Path::new("suite.toml")).unwrap_err().to_string();
    assert!(message.starts_with("suite.toml: "), "{message}");
    message
}

fn edit(from: &str, to: &str) -> String {
    assert!(OK.contains(from), "{from}");
    OK.replace(from, to)
}

fn assert_refused(cases: &[(String, &str)]) {
    for (text, expected) in cases {
        let message = parse_error(text);
        assert!(message.contains(expected), "expected {expected:?} in {message:?}");
    }
}

#[test]
fn the_reference_suite_parses() {
    let suite = Suite::parse(OK, Path::new("/x/suite.toml")).unwrap();
    let d = &suite.datasets[0];
    assert_eq!(d.table.schema.as_ref().map(|s| s.to_string()), Some("Zip:int, City:string".into()));
    assert_eq!(d.ledger().map(|l| l.as_path()), Some(Path::new("/x/t.ledger")));
}

#[test]
fn unknown_keys_are_named() {
    assert_refused(&[
        (edit("format = \"csv\"", "formats = \"csv\""), "line 5: unknown field `formats`"),
        (
            edit("measure = \"mi\"", "measure = \"mi\"\nseverity2 = \"warn\""),
            "unknown field `severity2`",
        ),
        (format!("{OK}ledgers = \"x\"\n"), "unknown field `ledgers`"),
    ]);
}

#[test]
fn malformed_values_are_named() {
    let schema = "schema = \"Zip:int, City:string\"";
    assert_refused(&[
        (
            edit(schema, "schema = \"Zip\""),
            "line 6: `schema`: 'Zip' is not of the form Column:type",
        ),
        (
            edit(schema, "schema = \"Zip:integer64\""),
            "`schema`: column 'Zip': unknown type 'integer64'",
        ),
        (edit(schema, "schema = \" , \""), "`schema`: no column declared"),
        (edit(schema, "schema = \"Zip:int, Zip:string\""), "`schema`: column 'Zip' declared twice"),
        (
            edit(schema, "schema = 5"),
            "line 6: `schema`: invalid type: integer `5`, expected a string",
        ),
        (edit("format = \"csv\"", "format = \"xlsx\""), "line 5: `format`: unknown variant `xlsx`"),
        (
            edit("epsilon = 1", "epsilon = \"one\""),
            "line 8: `epsilon`: invalid type: string \"one\"",
        ),
        (edit("ledger = \"t.ledger\"", "ledger = \"\""), "dataset 't': `ledger` is empty"),
        (
            edit("measure = \"mi\"", "measure = \"x\""),
            "`measure`: unknown measure 'x' (use mi, p, r)",
        ),
        (
            edit("max-fraction = 0.5", "max-fraction = 0.5\nseverity = \"fatal\""),
            "line 17: `severity`: unknown variant `fatal`, expected `fail` or `warn`",
        ),
    ]);
}

#[test]
fn out_of_range_values_are_named() {
    assert_refused(&[
        (edit("epsilon = 1", "epsilon = 1e9"), "dataset 't': epsilon = 1000000000 must be finite"),
        (edit("max-rows = 10", "max-rows = -1"), "line 9: `max-rows`: invalid value: integer `-1`"),
        (edit("max-rows = 10", "max-rows = 0"), "dataset 't': max-rows must be at least 1"),
        (edit("budget-cap = 5", "budget-cap = -1"), "dataset 't': budget-cap = -1 must be"),
        (edit("runs-per-day = 1", "runs-per-day = 0"), "dataset 't': runs-per-day = 0 must be"),
        (
            edit("max-fraction = 0.5", "max-fraction = -0.5"),
            "check 'pairs': max-fraction = -0.5 must be",
        ),
        (edit("max-fraction = 0.5", "max = inf"), "check 'pairs': max = inf must be"),
    ]);
}

#[test]
fn a_dataset_with_a_table_names_its_ledger() {
    let message = parse_error(&edit("ledger = \"t.ledger\"\n", ""));
    assert!(message.contains("dataset 't': `ledger` is required"), "{message}");
    let postgres = edit(
        "data = \"t.csv\"\nformat = \"csv\"\nschema = \"Zip:int, City:string\"",
        "postgres = { url = \"postgres://u@h/db\", table = \"t\" }",
    );
    let message = parse_error(&postgres.replace("ledger = \"t.ledger\"\n", ""));
    assert!(message.contains("dataset 't': `ledger` is required"), "{message}");
    // Without a table only a coordinator can run it, and its ledger governs.
    let remote =
        edit("data = \"t.csv\"\nformat = \"csv\"\nschema = \"Zip:int, City:string\"\n", "")
            .replace("ledger = \"t.ledger\"\n", "");
    assert!(Suite::parse(&remote, Path::new("suite.toml")).is_ok());
}

#[test]
fn format_and_schema_describe_a_data_file_only() {
    let to_postgres = |text: String| {
        text.replace(
            "data = \"t.csv\"",
            "postgres = { url = \"postgres://u@h/db\", table = \"t\" }",
        )
    };
    let schema_only = edit("format = \"csv\"\n", "");
    let format_only = edit("schema = \"Zip:int, City:string\"\n", "");
    assert_refused(&[
        (to_postgres(schema_only.clone()), "dataset 't': `schema` describes a `data` file"),
        (to_postgres(format_only), "dataset 't': `format` describes a `data` file"),
        (
            schema_only.replace("data = \"t.csv\"\n", ""),
            "`schema` describes `data`, which this dataset does not give",
        ),
    ]);
}

#[test]
fn a_declared_schema_must_match_the_csv_header_when_the_suite_loads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("suite.toml");
    std::fs::write(&path, OK).unwrap();
    // No table yet: that is the run's error (the other datasets still run).
    Suite::load(&path).unwrap();
    std::fs::write(dir.path().join("t.csv"), "Zip,City\n10001,NYC\n").unwrap();
    Suite::load(&path).unwrap();
    std::fs::write(dir.path().join("t.csv"), "Zip,Town\n10001,NYC\n").unwrap();
    let message = Suite::load(&path).unwrap_err().to_string();
    assert!(message.starts_with(&path.display().to_string()), "{message}");
    assert!(message.contains("dataset 't': `schema` must declare every column of"), "{message}");
    assert!(message.contains("the header has [Zip, Town], the schema [Zip, City]"), "{message}");
    // Names only: a typo cell is not the suite's business (no row is read).
    std::fs::write(dir.path().join("t.csv"), "Zip,City\n9x12,NYC\n").unwrap();
    Suite::load(&path).unwrap();
}

/// The generated Tax table's columns (as in examples/audit/nightly.toml).
const TAX_SCHEMA: &str = "FName:string, LName:string, Gender:string, AreaCode:int, Phone:int, \
    City:string, State:string, Zip:int, MaritalStatus:string, HasChild:string, Salary:int, \
    Rate:float, SingleExemp:int, MarriedExemp:int, ChildExemp:int";

#[test]
fn a_declared_schema_must_match_the_parquet_footer() {
    let dir = tempfile::tempdir().unwrap();
    let tax = dir.path().join("t.parquet");
    let options = dpincon_generate::TaxOptions { rows: 5, seed: 1, format: None };
    dpincon_generate::generate_tax(&options, &tax).unwrap();
    let path = dir.path().join("suite.toml");
    let suite = edit("data = \"t.csv\"\nformat = \"csv\"", "data = \"t.parquet\"");
    std::fs::write(&path, suite.replace("Zip:int, City:string", TAX_SCHEMA)).unwrap();
    Suite::load(&path).unwrap();
    std::fs::write(&path, &suite).unwrap();
    let message = Suite::load(&path).unwrap_err().to_string();
    assert!(
        message.contains("dataset 't': `schema` does not match the Parquet footer"),
        "{message}"
    );
}

/// The README demo's suite: every dataset with a table names its ledger
/// and declares its schema.
#[test]
fn the_example_suite_parses() {
    // At run time: `env!` keeps the path of the checkout that compiled it,
    // stale when a shared build cache serves another checkout.
    let path = Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").unwrap())
        .join("../../examples/audit/nightly.toml");
    let suite = Suite::load(&path).unwrap();
    for d in &suite.datasets {
        assert!(d.ledger().is_some() && d.table.schema.is_some(), "{}", d.name);
    }
}

#[test]
fn a_minimum_is_one_threshold_of_three() {
    let suite = Suite::parse(&edit("max-fraction = 0.5", "min = 2"), Path::new("s.toml")).unwrap();
    let check = &suite.datasets[0].checks[0];
    assert!(check.at_least() && check.threshold(10) == 2.0);
    assert_refused(&[
        (
            edit("max-fraction = 0.5", "max-fraction = 0.5\nmin = 2"),
            "give one of max, max-fraction and min",
        ),
        (
            edit("max-fraction = 0.5", "min = -1"),
            "check 'pairs': min = -1 must be a finite number ≥ 0",
        ),
    ]);
}

#[test]
fn a_gated_dataset_needs_a_horizon_and_a_plan_that_lasts_it() {
    let gated = |horizon: &str, gate: &str| {
        format!(
            "{horizon}{}",
            edit("runs-per-day = 1\n", &format!("runs-per-day = 1\n[dataset.gate]\n{gate}\n"))
        )
        .replacen("name = \"s\"\n", "", 1)
    };
    let with = |horizon: &str, gate: &str| format!("name = \"s\"\n{}", gated(horizon, gate));
    // ε 2: α = 5, the check's threshold (0.5 of 10 rows).
    let ok = with("horizon = \"52w\"\n", "epsilon = 2\nrefreshes = 1");
    let suite = Suite::parse(&ok, Path::new("/x/suite.toml")).unwrap();
    assert_eq!(suite.horizon_days(), Some(364));
    let d = &suite.datasets[0];
    assert_eq!(d.epoch_epsilon(), Some(3.0));
    assert_eq!(d.gate_state().as_deref(), Some(Path::new("/x/t.gate")));
    assert_refused(&[
        (with("", "epsilon = 2\nrefreshes = 1"), "needs the suite's `horizon`"),
        (
            with("horizon = \"1y\"\n", "epsilon = 2\nrefreshes = 1"),
            "`horizon`: '1y' is not a duration",
        ),
        // 2 epochs × (1 + 2) = 6 > cap 5.
        (with("horizon = \"365d\"\n", "epsilon = 2\nrefreshes = 2"), "cannot last the horizon"),
        (
            with("horizon = \"365d\"\n", "epsilon = 2\nrefreshes = 0"),
            "refreshes must be at least 1",
        ),
        (with("horizon = \"365d\"\n", "epsilon = 2\nrefreshes = 1\nbeta = 0.9"), "beta = 0.9"),
        (
            with("horizon = \"365d\"\n", "epsilon = 2\nrefreshes = 1\ncolour = 1"),
            "unknown field `colour`",
        ),
    ]);
    // max-fraction 0.5 of 10 rows is 5: α at ε 1 (10) is too wide.
    let wide = with("horizon = \"365d\"\n", "epsilon = 1\nrefreshes = 1");
    let message = parse_error(&wide);
    assert!(
        message.contains("check 'pairs'") && message.contains("a gate epsilon of at least"),
        "{message}"
    );
}
