//! Fuzz targets (issue 14), run as property tests on stable Rust: the
//! constraint file (all three syntaxes), the TOML job file, the
//! coordinator's client-job decoding (JSON and TOML) and the budget
//! ledger reader. Each must answer every input with a value or a typed
//! error, never a panic or a hang, and errors name where they are.
//!
//! CI runs 1000 cases per target (about a second each in a debug build);
//! the long run is `DPINCON_FUZZ_CASES=200000 cargo test -p dpincon-tests
//! --release --test fuzz`. A failure proptest finds is written to
//! `fuzz.proptest-regressions` beside this file: commit it, and it is
//! replayed first on every run.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

use dpincon_cluster::datasets::CoordinatorConfig;
use dpincon_cluster::submission::{Rules, check};
use dpincon_constraints::{ColumnKind, ConstraintError, TableSchema, bind, parse_constraints};
use dpincon_engine::{JobConfig, ledger, validate};
use dpincon_proto::v1::{ConfigFormat, FailureReason};
use dpincon_tests::fuzz_cases;
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig { cases: fuzz_cases(1000), ..ProptestConfig::default() }
}

/// Pieces of the three constraint syntaxes, and of what goes wrong in them.
const CONSTRAINT_TOKENS: &[&str] = &[
    "FD:",
    "DC:",
    "not(",
    "t1&t2&",
    "t1.",
    "t2.",
    "t3.",
    "Zip",
    "City",
    "Age",
    "Name",
    "\"Zip Code\"",
    "->",
    ",",
    "&",
    " and ",
    ")",
    "(",
    "=",
    "!=",
    "<>",
    "<",
    ">",
    "<=",
    ">=",
    "==",
    "EQ(",
    "IQ(",
    "LT(",
    "GT(",
    "LTE(",
    "GTE(",
    "NEQ(",
    "'a'",
    "'it''s'",
    "'",
    "\"",
    "42",
    "-7",
    "1e309",
    "3.5",
    "NaN",
    "#",
    "\n",
    "\r\n",
    " ",
    "\t",
    "é",
    "\u{feff}",
    "\0",
    "🙂",
];

fn token_soup(tokens: &'static [&'static str], max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(tokens), 0..max).prop_map(|t| t.concat())
}

const SCHEMA: [(&str, ColumnKind); 5] = [
    ("Zip", ColumnKind::Int),
    ("City", ColumnKind::Str),
    ("Age", ColumnKind::Float),
    ("Name", ColumnKind::Other),
    ("Zip Code", ColumnKind::Str),
];

proptest! {
    #![proptest_config(config())]

    /// The constraint file: parse, then bind to a table; line numbers in
    /// errors point into the file.
    #[test]
    fn constraint_files_parse_or_fail_typed(
        text in prop_oneof![token_soup(CONSTRAINT_TOKENS, 40), "\\PC{0,80}"],
    ) {
        let lines = text.split('\n').count();
        match parse_constraints(&text) {
            Ok(dcs) => {
                prop_assert!(!dcs.is_empty());
                for dc in &dcs {
                    prop_assert!(dc.origin.line >= 1 && dc.origin.line <= lines);
                    prop_assert!(!dc.predicates.is_empty());
                }
                let schema = TableSchema {
                    columns: SCHEMA.iter().map(|(n, k)| (n.to_string(), *k)).collect(),
                };
                match bind(&dcs, &schema) {
                    Ok(bound) => prop_assert!(bound.len() >= dcs.len()),
                    Err(e) => prop_assert!(!e.to_string().is_empty()),
                }
            }
            Err(ConstraintError::Syntax { line, column, text: shown, .. }) => {
                prop_assert!(line >= 1 && line <= lines, "line {} of {}", line, lines);
                prop_assert!(column >= 1 && column <= shown.chars().count() + 1);
            }
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }
}

/// Keys of a job file (and some that are not), and values of every TOML
/// type, edge cases first.
const JOB_KEYS: &[&str] = &[
    "data",
    "constraints",
    "format",
    "schema",
    "infer-rows",
    "threads",
    "memory-limit",
    "brute-force",
    "non-private",
    "epsilon",
    "measures",
    "strategy",
    "selector",
    "epsilon-split",
    "candidates",
    "max-rows",
    "ir-method",
    "seed",
    "ledger",
    "budget-cap",
    "dataset",
    "nope",
];
const JOB_VALUES: &[&str] = &[
    "1.0",
    "0.5",
    "0",
    "-1",
    "1e308",
    "1e-300",
    "nan",
    "inf",
    "-inf",
    "true",
    "false",
    "\"t.csv\"",
    "\"\"",
    "\"mi\"",
    "[\"mi\", \"p\", \"r\"]",
    "[\"mi\", \"mi\"]",
    "[\"d\"]",
    "[]",
    "[0.4, 0.6]",
    "[1e-12, 1.0]",
    "[0.5]",
    "[1, 2, 5]",
    "[0]",
    "[4294967296]",
    "18446744073709551615",
    "9223372036854775807",
    "\"ub-hem\"",
    "\"baseline-truemax\"",
    "\"gem\"",
    "\"permute-and-flip\"",
    "\"lp\"",
    "\"1GiB\"",
    "\"12 parsecs\"",
    "{ a = 1 }",
    "\"FD: Zip -> City\"",
    "\"t\"",
    "2024-01-01",
];

fn toml_job() -> impl Strategy<Value = String> {
    let line = (prop::sample::select(JOB_KEYS), prop::sample::select(JOB_VALUES))
        .prop_map(|(k, v)| format!("{k} = {v}\n"));
    prop_oneof![
        4 => prop::collection::vec(line, 0..12).prop_map(|l| l.concat()),
        1 => "\\PC{0,60}",
    ]
}

proptest! {
    #![proptest_config(config())]

    /// The TOML job file (`dpincon-cli run --job`): decoding, then the one
    /// validation step, on whatever the file says.
    #[test]
    fn job_files_decode_and_validate_or_fail_typed(text in toml_job()) {
        if let Ok(job) = toml::from_str::<JobConfig>(&text) {
            match validate(&job) {
                Ok(()) => {
                    if let Some(e) = job.release.epsilon {
                        prop_assert!(e.is_finite() && e > 0.0);
                    }
                }
                Err(e) => prop_assert!(e.to_string().starts_with("invalid job: ")),
            }
        }
    }
}

/// One coordinator configuration for every case (its directory lives as
/// long as the test binary).
fn coordinator() -> &'static CoordinatorConfig {
    static CONFIG: OnceLock<(tempfile::TempDir, CoordinatorConfig)> = OnceLock::new();
    let (_, config) = CONFIG.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let config = coordinator_in(dir.path());
        (dir, config)
    });
    config
}

fn coordinator_in(dir: &Path) -> CoordinatorConfig {
    std::fs::write(dir.join("t.csv"), "Zip,City\n1,a\n").unwrap();
    let text = format!(
        "state-dir = {:?}\n[datasets.t]\ndata = {:?}\nschema = \"Zip:int,City:string\"\n\
         ledger = {:?}\nbudget-cap = 10.0\nmax-job-epsilon = 3.0\nallow-non-private = true\n",
        dir.join("state").display().to_string(),
        dir.join("t.csv").display().to_string(),
        dir.join("t.ledger").display().to_string(),
    );
    CoordinatorConfig::parse(&text, "c.toml").unwrap()
}

fn client_job() -> impl Strategy<Value = (String, ConfigFormat)> {
    let toml = toml_job().prop_map(|t| (format!("dataset = \"t\"\n{t}"), ConfigFormat::Toml));
    let json = prop::collection::btree_map(
        prop::sample::select(JOB_KEYS),
        prop::sample::select(JOB_VALUES),
        0..8,
    )
    .prop_map(|m: BTreeMap<&str, &str>| {
        let body: Vec<String> = m.iter().map(|(k, v)| format!("{k:?}: {v}")).collect();
        (format!("{{\"dataset\": \"t\", {}}}", body.join(", ")), ConfigFormat::Json)
    });
    prop_oneof![2 => toml, 2 => json, 1 => "\\PC{0,60}".prop_map(|t| (t, ConfigFormat::Json))]
}

proptest! {
    #![proptest_config(config())]

    /// The coordinator's decoding of a client job (the gRPC `Submit`
    /// request's text): accepted jobs are valid engine jobs within the
    /// dataset's limits; refusals carry a public reason.
    #[test]
    fn client_jobs_are_accepted_valid_or_refused_with_a_reason((text, format) in client_job()) {
        let c = coordinator();
        let rules = Rules { datasets: &c.datasets, limits: &c.limits };
        match check(&text, format, rules) {
            Ok(accepted) => {
                prop_assert!(validate(&accepted.job_config()).is_ok());
                prop_assert!(accepted.total_epsilon.is_finite());
                prop_assert!(accepted.total_epsilon <= 3.0 * (1.0 + 1e-9));
            }
            Err(refusal) => {
                prop_assert!(refusal.reason != FailureReason::Unspecified);
                prop_assert!(!refusal.detail.is_empty());
            }
        }
    }
}

/// A ledger of `jobs` charges, as `charge` writes it.
fn real_ledger(dir: &Path, jobs: &[(f64, usize)]) -> (std::path::PathBuf, std::path::PathBuf) {
    let (path, data) = (dir.join("ledger"), dir.join("t.csv"));
    std::fs::write(&data, "a\n1\n").unwrap();
    for (i, (epsilon, measures)) in jobs.iter().enumerate() {
        let releases: Vec<(&str, f64)> =
            ["mi", "p", "r"][..*measures].iter().map(|m| (*m, *epsilon)).collect();
        ledger::charge(&path, &data, None, &format!("j{i}"), &releases).unwrap();
    }
    (path, data)
}

/// A real ledger's bytes and the ε it records.
fn ledger_bytes() -> &'static (Vec<u8>, f64) {
    static LEDGER: OnceLock<(Vec<u8>, f64)> = OnceLock::new();
    LEDGER.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let jobs = [(0.1, 3), (0.25, 1), (1.0, 2), (3.0, 3)];
        let (path, _) = real_ledger(dir.path(), &jobs);
        let total = ledger::summary(&path).unwrap().spent;
        let expected: f64 = jobs.iter().map(|(e, m)| e * *m as f64).sum();
        assert!((total - expected).abs() < 1e-9, "{total} {expected}");
        (std::fs::read(&path).unwrap(), total)
    })
}

proptest! {
    #![proptest_config(config())]

    /// The ledger reader on arbitrary bytes: a summary or an error naming
    /// the file and line.
    #[test]
    fn ledger_reader_answers_any_bytes(
        bytes in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..200),
            token_soup(&["{", "}", "\"job\":", "\"measure\":\"mi\",", "\"epsilon\":", "1.5", "-1",
                "1e999", "null", "\"dataset\":\"d\",", "\"cap\":", "\"unix_time\":0",
                "\"created_unix\":0", ",", "\n", " "], 30).prop_map(String::into_bytes),
        ],
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger");
        std::fs::write(&path, &bytes).unwrap();
        match ledger::summary(&path) {
            Ok(s) => prop_assert!(s.spent.is_finite() && s.spent >= 0.0),
            Err(e) => {
                let text = e.to_string();
                prop_assert!(text.contains("ledger") && text.contains("line "), "{}", text);
            }
        }
    }

    /// Every prefix of a real ledger (a crash at any byte of a write)
    /// reads, counts no more than the whole, and at least every record
    /// whose line is complete. (The ledger is written once: charges fsync.)
    #[test]
    fn every_prefix_of_a_ledger_reads_and_never_over_reads(cut in any::<prop::sample::Index>()) {
        let (whole, total) = ledger_bytes();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger");
        let at = cut.index(whole.len() + 1);
        std::fs::write(&path, &whole[..at]).unwrap();
        let spent = ledger::summary(&path).unwrap().spent;
        let complete = String::from_utf8_lossy(&whole[..at]);
        let counted: f64 = complete
            .split_inclusive('\n')
            .filter(|l| l.ends_with('\n'))
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok()?["epsilon"].as_f64())
            .sum();
        prop_assert!(spent <= total + 1e-9 && spent >= counted - 1e-9);
    }
}
