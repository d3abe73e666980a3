//! Inputs no one planned for (issue 14), through the real binary: each
//! gives a release that says what happened or a clear refusal naming the
//! file, line or column at fault, with exit code 1, no output file and no
//! ledger charge.

use std::path::{Path, PathBuf};
use std::process::Output;

use dpincon_engine::{NonPrivateReport, Report};

mod common;
use common::{cli, s};

struct Case {
    dir: tempfile::TempDir,
}

impl Case {
    fn new() -> Self {
        let case = Case { dir: tempfile::tempdir().unwrap() };
        std::fs::write(case.path("fd.txt"), "FD: A -> B\n").unwrap();
        case
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn data(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    /// A private run (ε = 1 unless `extra` says otherwise) with a ledger
    /// and an output file.
    fn run(&self, data: &Path, extra: &[&str]) -> Output {
        let (out, ledger, dcs) =
            (self.path("report.json"), self.path("ledger"), self.path("fd.txt"));
        let mut args = vec!["run", "--data", s(data), "--constraints", s(&dcs)];
        args.extend(["--seed", "1", "--non-private", "--output", s(&out), "--ledger", s(&ledger)]);
        if !extra.contains(&"--epsilon") {
            args.extend(["--epsilon", "1"]);
        }
        args.extend(extra);
        cli(&args)
    }

    /// The job failed with exit 1, a message containing every `expect`,
    /// nothing on stdout, no output file and no ledger.
    fn refused(&self, data: &Path, extra: &[&str], expect: &[&str]) {
        let out = self.run(data, extra);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        for needle in expect {
            assert!(stderr.contains(needle), "stderr lacks {needle:?}: {stderr}");
        }
        assert!(stderr.lines().all(|l| l.len() < 400), "short message: {stderr}");
        assert!(out.stdout.is_empty());
        assert!(!self.path("report.json").exists(), "no output file");
        assert!(!self.path("ledger").exists(), "nothing charged");
    }

    /// The job succeeded; its report (with the non-private values).
    fn released(&self, data: &Path, extra: &[&str]) -> Report {
        let out = self.run(data, extra);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = std::fs::read_to_string(self.path("report.json")).unwrap();
        let report: Report = serde_json::from_str(&text).unwrap();
        assert!(report.measures.as_ref().is_some_and(|m| m.mi.is_some()), "{text}");
        assert!(self.path("ledger").exists(), "a release is charged");
        std::fs::remove_file(self.path("report.json")).unwrap();
        std::fs::remove_file(self.path("ledger")).unwrap();
        report
    }
}

/// The report's exact values (the runs ask for them).
fn exact(report: &Report) -> &NonPrivateReport {
    report.non_private.as_ref().expect("a --non-private run")
}

#[test]
fn an_empty_table_is_named_as_such_not_as_a_type_error() {
    let case = Case::new();
    let data = case.data("empty.csv", b"A,B\n");
    case.refused(&data, &[], &["empty.csv", "has a header and no rows", "nothing was released"]);
}

#[test]
fn an_all_null_compared_column_asks_for_its_type_and_then_releases() {
    let case = Case::new();
    let data = case.data("nulls.csv", b"A,B\n,x\n,y\n,y\n");
    case.refused(
        &data,
        &[],
        &["nulls.csv", "column 'A'", "every row is empty (NULL)", "line 1", "--schema A:int"],
    );
    // With its type declared: a NULL never conflicts (SPEC §1), so no edge.
    let report = case.released(&data, &["--schema", "A:int"]);
    assert_eq!(exact(&report).rows, 3);
    assert_eq!(exact(&report).edges, 0);
    // An empty column no constraint compares is no obstacle.
    let data = case.data("unused.csv", b"A,B,C\n1,x,\n1,y,\n");
    let report = case.released(&data, &[]);
    assert_eq!(exact(&report).edges, 1);
}

#[test]
fn one_row_releases_with_no_conflict() {
    let case = Case::new();
    let report = case.released(&case.data("one.csv", b"A,B\n1,2\n"), &[]);
    assert_eq!(exact(&report).rows, 1);
    assert_eq!(exact(&report).edges, 0);
}

#[test]
fn bom_crlf_quoted_newlines_and_huge_fields_read_as_the_plain_table() {
    let case = Case::new();
    // Rows 0 and 1 share A with different B: one edge; row 2 is alone.
    let plain = case.released(&case.data("plain.csv", b"A,B\n1,x y\n1,z\n2,w\n"), &[]);
    let bom = case.data("bom.csv", b"\xef\xbb\xbfA,B\r\n1,x y\r\n1,z\r\n2,w\r\n");
    let quoted = case.data("quoted.csv", b"A,B\n1,\"x\ny\"\n1,z\n2,w\n");
    let mut huge = b"A,B\n1,".to_vec();
    huge.extend(std::iter::repeat_n(b'x', 4 << 20));
    huge.extend(b"\n1,z\n2,w\n");
    let huge = case.data("huge.csv", &huge);
    for data in [bom, quoted, huge] {
        let report = case.released(&data, &[]);
        let counts = |r: &Report| (exact(r).rows, exact(r).edges, exact(r).problematic);
        assert_eq!(counts(&report), counts(&plain), "{data:?}: rows, edges, problematic");
    }
    assert_eq!(exact(&plain).edges, 1);
}

#[test]
fn ragged_rows_invalid_utf8_and_repeated_names_name_the_file_and_line() {
    let case = Case::new();
    let ragged = case.data("ragged.csv", b"A,B\n1,2\n3\n4,5\n");
    case.refused(&ragged, &[], &["ragged.csv", "Expected 2 records, found 1", "line 3"]);
    let bad = case.data("bad.csv", b"A,B\n1,a\n1,\xff\xfe\n");
    case.refused(&bad, &[], &["bad.csv", "invalid UTF-8", "column 'B' (field 1)", "line 3"]);
    let twice = case.data("twice.csv", b"A,B,A\n1,2,3\n1,3,4\n");
    case.refused(&twice, &[], &["twice.csv", "the header names column 'A' twice"]);
}

#[test]
fn a_truncated_parquet_file_is_refused() {
    let case = Case::new();
    let full = case.path("tax.parquet");
    let dcs = case.path("tax.txt");
    let args =
        ["generate", "tax", "--rows", "300", "--out", s(&full), "--constraints-out", s(&dcs)];
    assert!(cli(&args).status.success());
    let bytes = std::fs::read(&full).unwrap();
    std::fs::copy(&dcs, case.path("fd.txt")).unwrap();
    for cut in [bytes.len() / 2, bytes.len() - 9, 3] {
        let data = case.data("cut.parquet", &bytes[..cut]);
        case.refused(&data, &[], &["cut.parquet", "truncated or not Parquet"]);
    }
}

#[test]
fn epsilon_outside_the_public_limits_is_refused_with_a_short_number() {
    let case = Case::new();
    let data = case.data("t.csv", b"A,B\n1,2\n1,3\n");
    for (eps, shown) in [
        ("1e308", "got 1e308"),
        ("1e-300", "got 1e-300"),
        ("NaN", "got NaN"),
        ("inf", "got inf"),
        ("0", "got 0"),
        ("-1", "got -1"),
        ("20000", "got 20000"),
    ] {
        case.refused(
            &data,
            &["--epsilon", eps],
            &["--epsilon must be a number from 0.00001 to 10000", shown],
        );
    }
    case.refused(&data, &["--epsilon-split", "1e-12,1"], &["--epsilon-split", "got 1e-12 + 1"]);
    // At the ceiling the job's total is still a number in the report.
    let report = case.released(&data, &["--epsilon", "10000"]);
    assert_eq!(report.budget.map(|b| b.total), Some(30000.0));
}
