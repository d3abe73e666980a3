//! The NON-PRIVATE experiments end to end: each refuses without
//! `--non-private` and writes nothing, refuses bad input, and writes its
//! CSV, JSON and charts.

use dpincon_engine::Measure;
use dpincon_engine::experiment::{CoverageReport, SweepReport, UtilityReport};

mod common;
use common::{Dir, PEOPLE, cli, s};

#[test]
fn utility_experiment_is_gated_and_scores_every_strategy() {
    let dir = Dir::new();
    let data = dir.file("people.csv", PEOPLE);
    let dcs = dir.file("dcs.txt", "FD: Zip -> City\nFD: Zip -> State\n");
    let base =
        ["experiment", "utility", "--data", s(&data), "--constraints", s(&dcs), "--epsilon", "1"];
    let out = cli(&base);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("NON-PRIVATE"));
    let mut args = base.to_vec();
    args.extend(["--non-private", "--runs", "3", "--format", "json"]);
    let out = cli(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: UtilityReport = serde_json::from_slice(&out.stdout).unwrap();
    let rows = &report.rows;
    // Every strategy for mi and p, plus each I_R method against the exact
    // minimum cover and against the paper's 2·LP.
    let strategies = dpincon_release::Strategy::ALL.len();
    assert_eq!(rows.len(), 2 * strategies + 6);
    assert!(rows.iter().all(|r| r.mean_relative_error >= 0.0));
    let r: Vec<(&str, u64)> =
        rows[2 * strategies..].iter().map(|r| (r.strategy.as_str(), r.exact)).collect();
    // Conflicts: paths 0-2-1 and 3-4-5, so I_R = 2 = LP, 2·LP = 4.
    assert_eq!(
        r,
        [
            ("greedy", 2),
            ("greedy vs 2lp", 4),
            ("lp", 2),
            ("lp vs 2lp", 4),
            ("combined", 2),
            ("combined vs 2lp", 4)
        ]
    );
    assert!(rows[2 * strategies..].iter().all(|r| r.measure == Measure::R));
    assert_eq!(report.repair.and_then(|r| r.min_cover), Some(2));
}

#[test]
fn sweep_writes_csv_json_and_a_chart_per_measure_with_the_oracle() {
    let dir = Dir::new();
    let data = dir.file("people.csv", PEOPLE);
    let dcs = dir.file(
        "dcs.txt",
        "FD: Zip -> City
FD: Zip -> State
",
    );
    let out_dir = dir.0.path().join("sweep");
    let base = ["experiment", "sweep", "--data", s(&data), "--constraints", s(&dcs)];
    let mut args = base.to_vec();
    args.extend(["--epsilons", "0.5,2", "--runs", "2", "--out", s(&out_dir)]);
    args.extend(["--strategies", "ub-direct,gem"]);
    let gated = cli(&args);
    assert_eq!(gated.status.code(), Some(1), "the sweep is NON-PRIVATE: it needs the flag");
    assert!(!out_dir.exists(), "nothing is written when refused");
    args.push("--non-private");
    let out = cli(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = std::fs::read_to_string(out_dir.join("sweep.csv")).unwrap();
    // 2 ε × (2 strategies + oracle) × {mi, p} + 2 ε × 3 I_R methods × 2
    // yardsticks, plus the header.
    assert_eq!(csv.lines().count(), 1 + 2 * 3 * 2 + 2 * 6, "{csv}");
    assert!(csv.lines().any(|l| l.starts_with("0.5,mi,oracle,")), "{csv}");
    let json: SweepReport =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("sweep.json")).unwrap())
            .unwrap();
    assert_eq!(json.runs, 2);
    for measure in ["mi", "p", "r"] {
        let svg = std::fs::read_to_string(out_dir.join(format!("sweep-{measure}.svg"))).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("</svg>"));
        assert!(svg.contains("relative error"), "axis label in {measure}'s chart");
        if measure != "r" {
            for name in ["ub-direct", "gem", "oracle"] {
                assert!(svg.contains(name), "{name} missing from the {measure} chart");
            }
        }
    }
}

#[test]
fn sweep_and_curve_refuse_bad_input_and_write_nothing() {
    let dir = Dir::new();
    let data = dir.file("people.csv", PEOPLE);
    let dcs = dir.file("dcs.txt", "FD: Zip -> City\n");
    let out_dir = dir.0.path().join("sweep");
    let base =
        ["experiment", "sweep", "--data", s(&data), "--constraints", s(&dcs), "--non-private"];
    for (flags, message) in [
        (["--epsilons", "0,1"], "--epsilons: every ε must be a number from 0.00001 to 10000"),
        (["--epsilons", "1,inf"], "(ε per measure), got inf"),
        (["--epsilons", "1,1e-300"], "(ε per measure), got 1e-300"),
        (["--runs", "0"], "--runs must be at least 1"),
    ] {
        let mut args = base.to_vec();
        args.extend(flags);
        args.extend(["--out", s(&out_dir)]);
        let out = cli(&args);
        assert_eq!(out.status.code(), Some(1), "{flags:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(message), "{flags:?}");
        assert!(out.stdout.is_empty() && !out_dir.exists(), "{flags:?} wrote something");
    }
    let curve = dir.0.path().join("curve.csv");
    let out = cli(&[
        "experiment",
        "curve",
        "--data",
        s(&data),
        "--constraints",
        s(&dcs),
        "--out",
        s(&curve),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("NON-PRIVATE"));
    assert!(!curve.exists(), "the exact curve must not be written without --non-private");
}

#[test]
fn coverage_is_gated_refuses_bad_input_and_writes_csv_json_and_a_chart() {
    let dir = Dir::new();
    let data = dir.file("people.csv", PEOPLE);
    let dcs = dir.file("dcs.txt", "FD: Zip -> City\nFD: Zip -> State\n");
    let out_dir = dir.0.path().join("coverage");
    let base = ["experiment", "coverage", "--data", s(&data), "--constraints", s(&dcs)];
    let mut args = base.to_vec();
    args.extend(["--epsilons", "1", "--runs", "20", "--out", s(&out_dir)]);
    let gated = cli(&args);
    assert_eq!(gated.status.code(), Some(1), "the experiment is NON-PRIVATE: it needs the flag");
    assert!(String::from_utf8_lossy(&gated.stderr).contains("NON-PRIVATE"));
    assert!(!out_dir.exists(), "nothing is written when refused");
    for (flags, message) in [
        (["--runs", "0"], "--runs must be at least 1"),
        (["--epsilons", "0"], "--epsilons: every ε must be a number from 0.00001 to 10000"),
    ] {
        let mut bad = base.to_vec();
        bad.extend(["--non-private", "--out", s(&out_dir)]);
        bad.extend(flags);
        let out = cli(&bad);
        assert_eq!(out.status.code(), Some(1), "{flags:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(message), "{flags:?}");
        assert!(!out_dir.exists(), "{flags:?} wrote something");
    }
    args.push("--non-private");
    let out = cli(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = std::fs::read_to_string(out_dir.join("coverage.csv")).unwrap();
    // One ε × {mi, p, r}, plus the header.
    assert_eq!(csv.lines().count(), 4, "{csv}");
    let json: CoverageReport =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("coverage.json")).unwrap())
            .unwrap();
    assert_eq!(json.stated, 0.95);
    assert_eq!(json.rows.len(), 3, "one ε × {{mi, p, r}}");
    for row in &json.rows {
        assert_eq!(row.runs, 20);
        assert_eq!(row.point_outside, 0, "{row:?}");
    }
    let svg = std::fs::read_to_string(out_dir.join("coverage.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("I_MI") && svg.contains("stated 0.95"));
}

#[test]
fn the_suite_scores_a_list_of_ones_own_tables_with_no_manifest() {
    let dir = Dir::new();
    dir.file("people.csv", PEOPLE);
    dir.file("people.dcs", "FD: Zip -> City\nFD: Zip -> State\n");
    let list = dir.file(
        "tables.toml",
        "[[table]]\nname = \"people\"\nfamily = \"mine\"\n\
         data = \"people.csv\"\nconstraints = \"people.dcs\"\n",
    );
    let out_dir = dir.path("results");
    let args = ["experiment", "suite", "--tables", s(&list), "--runs", "2"];
    let args = [&args[..], &["--epsilons", "1", "--strategies", "ub-direct,gem"]].concat();
    let args = [&args[..], &["--out", s(&out_dir)]].concat();
    let gated = cli(&args);
    assert_eq!(gated.status.code(), Some(1), "the suite is NON-PRIVATE: it needs the flag");
    assert!(!out_dir.exists(), "nothing is written when refused");
    let out = cli(&[&args[..], &["--non-private"]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = std::fs::read_to_string(out_dir.join("cells.csv")).unwrap();
    // One ε × {mi, p} × (2 strategies + oracle) + I_R, all of table "people".
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert!(rows.len() >= 6, "{csv}");
    assert!(rows.iter().all(|r| r.starts_with("people,mine,")), "{csv}");
    assert!(rows.iter().any(|r| r.contains(",mi,oracle,")), "{csv}");
    let summary = std::fs::read_to_string(out_dir.join("summary.json")).unwrap();
    assert!(summary.contains("tables.toml"), "the summary names the list");

    // A list naming a missing file is refused before anything is scored.
    let bad = dir.file(
        "bad.toml",
        "[[table]]\nname = \"x\"\nfamily = \"mine\"\ndata = \"nope.csv\"\nconstraints = \"people.dcs\"\n",
    );
    let bad_out = dir.path("bad-results");
    let out =
        cli(&["experiment", "suite", "--tables", s(&bad), "--non-private", "--out", s(&bad_out)]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bad.toml") && stderr.contains("nope.csv"), "{stderr}");
    assert!(!bad_out.join("cells.csv").exists());
}
