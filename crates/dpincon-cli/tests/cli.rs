//! The command line end to end: results, formats, and bad input giving a
//! clear message, a non-zero exit code and no output file.

use std::path::Path;
use std::process::Command;

use dpincon_engine::Report;
use dpincon_release::{RepairMethod, RepairRelease, Strategy};

mod common;
use common::{Dir, PEOPLE, cli, s};

/// Runs a job that must fail; checks the message names what is at fault,
/// the exit code is non-zero and the output file was not written.
fn assert_refused(data: &Path, constraints: &Path, expect: &[&str]) {
    let out_file = data.with_file_name("report.json");
    let out = cli(&[
        "run",
        "--data",
        s(data),
        "--constraints",
        s(constraints),
        "--non-private",
        "--output",
        s(&out_file),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "should fail: {stderr}");
    assert_eq!(out.status.code(), Some(1));
    for needle in expect {
        assert!(stderr.contains(needle), "stderr lacks {needle:?}: {stderr}");
    }
    assert!(out.stdout.is_empty(), "nothing on stdout for a failed job");
    assert!(!out_file.exists(), "a failed job must not write its output file");
}

#[test]
fn exact_measures_as_json() {
    let dir = Dir::new();
    let data = dir.file("people.csv", PEOPLE);
    let dcs = dir.file(
        "dcs.txt",
        "# zip determines city\nFD: Zip -> City\nnot(t1.Zip=t2.Zip&t1.State!=t2.State)\n",
    );
    let out = cli(&["run", "--data", s(&data), "--constraints", s(&dcs), "--non-private"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Report = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report.measures.is_none(), "no release without --epsilon");
    let np = report.non_private.as_ref().expect("the exact values");
    // Zip 10001: rows 0,1 (NYC) vs 2 (Boston) -> (0,2),(1,2); Zip 02110:
    // City all Boston or NULL; State MA,NY,MA -> (3,4),(4,5). Every row conflicts.
    assert_eq!(np.rows, 6);
    assert_eq!(np.edges, 4);
    assert_eq!(np.problematic, 6);
    assert_eq!(np.max_degree, 2);
    assert_eq!(np.greedy_cover, 4);
    // The conflict graph is two paths 0-2-1 and 3-4-5: the minimum cover is
    // {2, 4}; bipartite, so the LP relaxation is tight.
    let repair = np.repair.as_ref().expect("no --memory-limit: the LP and the exact cover");
    assert_eq!(repair.min_cover, Some(2));
    assert_eq!(repair.lp_relaxation, 2.0);
    assert_eq!(np.drastic, 1);
    assert!(np.label.starts_with("NON-PRIVATE"));
    assert_eq!(report.detection.plans[0].driver, "complement");
    assert_eq!(report.detection.plans[0].line, 2);
}

#[test]
fn dp_release_by_default_hides_exact_values() {
    let dir = Dir::new();
    let data = dir.file("people.csv", PEOPLE);
    // FDs of two X that read City: I_R from 2·L and an upper bound, the
    // smaller of the sum of the X's covers and NULL-B rows and the union of
    // their margin covers (one X of one B: its classes' count, below).
    let dcs = dir.file("dcs.txt", "FD: Zip -> City\nFD: City -> State\n");
    let out = cli(&["run", "--data", s(&data), "--constraints", s(&dcs), "--epsilon", "1"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Read as the typed report: a release missing its value, ε,
    // sensitivity, noise scale or interval does not parse.
    let report: Report = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report.non_private.is_none());
    assert!(report.timings.is_none(), "timings grow with the graph: non-private only");
    assert!(!report.seeded);
    let budget = report.budget.as_ref().expect("a budget");
    assert_eq!((budget.per_measure, budget.total), (1.0, 3.0));
    let measures = report.measures.as_ref().expect("the releases");
    let (mi, p) = (measures.mi.as_ref().expect("I_MI"), measures.p.as_ref().expect("I_P"));
    // I_R: a point estimate and an interval for I_R itself, from two parts.
    let r = measures.r.as_ref().expect("I_R");
    assert_eq!(r.method, RepairMethod::Combined);
    assert_eq!(statistics(r), ["twice-lower-bound", "union-cover"]);
    let spent: f64 = r.parts.iter().map(|p| p.epsilon).sum();
    assert!(spent <= 1.0 && spent > 0.999, "the parts sum to the measure's ε: {spent}");
    assert_eq!(mi.strategy, Strategy::UbDirect);
    assert_eq!(mi.selector, "permute-and-flip");
    assert!(p.theta >= 1);
    assert_eq!(r.sensitivity, 5, "the union cover's: 1 + 2 per FD set");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("NON-PRIVATE"));

    // One FD of one right-hand side: I_R is its classes' cover exactly,
    // released alone with the whole ε at sensitivity 1.
    let one = dir.file("one.txt", "FD: Zip -> City\n");
    let out = cli(&["run", "--data", s(&data), "--constraints", s(&one), "--epsilon", "1"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r = repair_release(&out.stdout);
    assert_eq!((r.parts.len(), r.sensitivity), (1, 1));
    assert_eq!((r.parts[0].statistic.as_str(), r.parts[0].epsilon), ("exact-cover", 1.0));

    // Two right-hand sides of one X: 2·L and the cover plus the NULL-B rows
    // (02110's NULL City), which bound I_R from above; no greedy part.
    let two = dir.file("two.txt", "FD: Zip -> City\nFD: Zip -> State\n");
    let out = cli(&["run", "--data", s(&data), "--constraints", s(&two), "--epsilon", "1"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r = repair_release(&out.stdout);
    assert_eq!((statistics(&r), r.sensitivity), (vec!["twice-lower-bound", "cover-sum"], 2));
}

/// The statistics I_R's release is made of, in order.
fn statistics(r: &RepairRelease) -> Vec<&str> {
    r.parts.iter().map(|p| p.statistic.as_str()).collect()
}

/// I_R's release in the report `stdout`.
fn repair_release(stdout: &[u8]) -> RepairRelease {
    let report: Report = serde_json::from_slice(stdout).unwrap();
    report.measures.and_then(|m| m.r).expect("I_R released")
}

#[test]
fn the_lp_methods_are_refused_under_a_memory_limit_where_the_constraints_need_it() {
    let dir = Dir::new();
    let data = dir.file("people.csv", PEOPLE);
    let ledger = dir.path("ledger.json");
    // FDs of two X: I_R's release needs the LP, whose memory no public
    // input bounds. Refused before detection, with nothing charged.
    let two = dir.file("two.txt", "FD: Zip -> City\nFD: City -> Zip\n");
    let base = ["run", "--data", s(&data), "--constraints", s(&two), "--epsilon", "1"];
    let limited = ["--memory-limit", "1GiB", "--ledger", s(&ledger)];
    for method in [&[][..], &["--ir-method", "lp"], &["--ir-method", "combined"]] {
        let out = cli(&[&base[..], &limited, method].concat());
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--ir-method greedy") && err.contains("--memory-limit"), "{err}");
        assert!(!ledger.exists(), "no budget is spent");
    }
    // An unknown method is a bad flag value (clap's usage error, status 2).
    let out = cli(&[&base[..], &["--ir-method", "exact"]].concat());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--ir-method") && err.contains("use greedy, lp or combined"), "{err}");
    // The greedy cover keeps to the limit.
    let out = cli(&[&base[..], &limited, &["--ir-method", "greedy"]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // One FD of one right-hand side: its cover is I_R, released with no
    // LP, so the default method keeps to the limit too.
    let one = dir.file("one.txt", "FD: Zip -> City\n");
    let args = ["--data", s(&data), "--constraints", s(&one), "--epsilon", "1"];
    let out = cli(&[&["run"][..], &args, &["--memory-limit", "1GiB"]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(statistics(&repair_release(&out.stdout)), ["exact-cover"]);
}

#[test]
fn a_budget_or_the_non_private_flag_is_required() {
    let dir = Dir::new();
    let data = dir.file("people.csv", PEOPLE);
    let dcs = dir.file("dcs.txt", "FD: Zip -> City\n");
    let out = cli(&["run", "--data", s(&data), "--constraints", s(&dcs)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--epsilon"));
}

#[test]
fn seeded_runs_repeat_and_say_so() {
    let dir = Dir::new();
    let data = dir.file("people.csv", PEOPLE);
    let dcs = dir.file("dcs.txt", "FD: Zip -> City\nFD: Zip -> State\n");
    let run = || {
        let out = cli(&[
            "run",
            "--data",
            s(&data),
            "--constraints",
            s(&dcs),
            "--epsilon",
            "0.5",
            "--seed",
            "42",
            "--measures",
            "mi,r",
            "--strategy",
            "hem",
            "--selector",
            "permute-and-flip",
        ]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<Report>(&out.stdout).unwrap()
    };
    let (a, b) = (run(), run());
    assert!(a.seeded);
    assert_eq!(a.measures, b.measures);
    let measures = a.measures.as_ref().expect("the releases");
    assert!(measures.p.is_none());
    assert_eq!(a.budget.as_ref().map(|b| b.total), Some(1.0));
    assert_eq!(measures.mi.as_ref().expect("I_MI").selector, "permute-and-flip");
}

#[test]
fn bad_budgets_are_refused_before_any_release() {
    let dir = Dir::new();
    let data = dir.file("people.csv", PEOPLE);
    let dcs = dir.file("dcs.txt", "FD: Zip -> City\n");
    // Values no job may have are bad flags (clap's usage error, status 2);
    // the others are the job's (status 1).
    let cases: [(&[&str], &str, i32); 8] = [
        (&["--epsilon", "0"], "epsilon", 1),
        (&["--epsilon", "-1"], "epsilon", 1),
        (&["--epsilon", "NaN"], "NaN", 1),
        (&["--epsilon", "1", "--epsilon-split", "0.5,0.6"], "ε1 + ε2 = 1", 1),
        (&["--epsilon", "1", "--strategy", "baseline-truemax"], "NOT private", 1),
        (&["--epsilon", "1", "--measures", "mc"], "not released under DP", 2),
        (&["--epsilon", "1", "--measures", "mi,mi"], "listed twice", 1),
        (&["--epsilon", "1", "--budget-cap", "3"], "--ledger", 1),
    ];
    for (extra, needle, code) in cases {
        let mut args = vec!["run", "--data", s(&data), "--constraints", s(&dcs)];
        args.extend_from_slice(extra);
        let out = cli(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{extra:?}: {stderr}");
        assert!(stderr.contains(needle), "{extra:?}: {stderr}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn the_ledger_refuses_a_job_past_the_cap() {
    let dir = Dir::new();
    let data = dir.file("people.csv", PEOPLE);
    let dcs = dir.file("dcs.txt", "FD: Zip -> City\n");
    let ledger = dir.path("ledger.jsonl");
    let job = |eps: &str| {
        cli(&[
            "run",
            "--data",
            s(&data),
            "--constraints",
            s(&dcs),
            "--epsilon",
            eps,
            "--ledger",
            s(&ledger),
            "--budget-cap",
            "2",
        ])
    };
    let first = job("0.5");
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let report: Report = serde_json::from_slice(&first.stdout).unwrap();
    let ledger_state = report.budget.and_then(|b| b.ledger).expect("the ledger's state");
    assert_eq!(ledger_state.spent_after, 1.5);
    let before = std::fs::read_to_string(&ledger).unwrap();
    assert_eq!(before.lines().count(), 4, "a header and one record per measure");
    let second = job("0.5");
    assert_eq!(second.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(stderr.contains("cap exceeded") && stderr.contains("Nothing was released"), "{stderr}");
    assert!(second.stdout.is_empty());
    assert_eq!(std::fs::read_to_string(&ledger).unwrap(), before, "a refused job is not recorded");
}

#[test]
fn table_format_and_output_file() {
    let dir = Dir::new();
    let data = dir.file("people.csv", PEOPLE);
    let dcs = dir.file("dcs.txt", "t1&t2&EQ(t1.Zip,t2.Zip)&IQ(t1.City,t2.City)\n");
    let target = dir.path("out.txt");
    let out = cli(&[
        "run",
        "--data",
        s(&data),
        "--constraints",
        s(&dcs),
        "--non-private",
        "--format",
        "table",
        "--output",
        s(&target),
    ]);
    assert!(out.status.success());
    let text = std::fs::read_to_string(&target).unwrap();
    assert!(text.contains("NON-PRIVATE"));
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("edges (I_MI)") && l.trim_end().ends_with(" 2"))
    );
}

/// `--output /dev/null` or a FIFO is written in place: the atomic rename
/// that protects a regular file would replace the device with a file.
#[test]
fn an_output_that_is_no_regular_file_is_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let dir = Dir::new();
    let data = dir.file("people.csv", PEOPLE);
    let dcs = dir.file("dcs.txt", "t1&t2&EQ(t1.Zip,t2.Zip)&IQ(t1.City,t2.City)\n");
    let fifo = dir.path("report.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let out = cli(&[
        "run",
        "--data",
        s(&data),
        "--constraints",
        s(&dcs),
        "--non-private",
        "--output",
        s(&fifo),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Checked before joining: a replaced FIFO leaves its reader waiting.
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(kind.is_fifo(), "the FIFO is still one, not replaced by a file");
    let report = reader.join().unwrap();
    assert!(report.contains("\"non_private\""), "the reader got the report: {report}");
}

#[test]
fn unknown_column_is_named() {
    let dir = Dir::new();
    let data = dir.file("people.csv", PEOPLE);
    let dcs = dir.file("dcs.txt", "FD: Zip -> City\nFD: Zip -> Cty\n");
    assert_refused(&data, &dcs, &["line 2", "unknown column 'Cty'", "did you mean 'City'"]);
}

#[test]
fn malformed_constraint_points_at_line_and_column() {
    let dir = Dir::new();
    let data = dir.file("people.csv", PEOPLE);
    let dcs = dir.file("dcs.txt", "\n\nnot(t1.Zip=t2.Zip & t1.City=<t2.City)\n");
    assert_refused(&data, &dcs, &["line 3, column", "operator"]);
}

#[test]
fn string_compared_with_number_is_a_type_error() {
    let dir = Dir::new();
    let data = dir.file("people.csv", PEOPLE);
    let dcs = dir.file("dcs.txt", "not(t1.Zip=t2.Zip & t1.City<t2.Age)\n");
    assert_refused(&data, &dcs, &["line 1", "City", "Age", "string"]);
}

#[test]
fn unary_constraint_is_refused() {
    let dir = Dir::new();
    let data = dir.file("people.csv", PEOPLE);
    let dcs = dir.file("dcs.txt", "not(t1.Age > 50)\n");
    assert_refused(&data, &dcs, &["line 1", "only t1", "single tuple"]);
}

#[test]
fn missing_files_are_named() {
    let dir = Dir::new();
    let data = dir.file("people.csv", PEOPLE);
    let dcs = dir.file("dcs.txt", "FD: Zip -> City\n");
    assert_refused(&dir.path("absent.csv"), &dcs, &["absent.csv", "No such file"]);
    assert_refused(&data, &dir.path("absent.txt"), &["constraint file", "absent.txt"]);
}

#[test]
fn ragged_csv_names_the_line() {
    let dir = Dir::new();
    let data = dir.file("ragged.csv", "Zip,City\n1,a\n2,b\n3,c,extra\n");
    let dcs = dir.file("dcs.txt", "FD: Zip -> City\n");
    assert_refused(&data, &dcs, &["ragged.csv", "line 4"]);
}

#[test]
fn empty_constraint_file_is_refused() {
    let dir = Dir::new();
    let data = dir.file("people.csv", PEOPLE);
    let dcs = dir.file("dcs.txt", "# nothing here\n\n");
    assert_refused(&data, &dcs, &["no constraint"]);
}

#[test]
fn schema_override_changes_comparison_order() {
    let dir = Dir::new();
    // As integers 9 < 10; as strings "10" < "9".
    let data = dir.file("n.csv", "K,V\n1,9\n1,10\n");
    let dcs = dir.file("dcs.txt", "not(t1.K=t2.K & t1.V<t2.V & t1.V>5)\n");
    let run = |schema: Option<&str>| {
        let mut args = vec!["run", "--data", s(&data), "--constraints", s(&dcs), "--non-private"];
        if let Some(schema) = schema {
            args.extend(["--schema", schema]);
        }
        let out = cli(&args);
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        (out.status.success(), serde_json::from_slice::<Report>(&out.stdout).ok(), stderr)
    };
    let (ok, report, _) = run(None);
    assert!(ok);
    assert_eq!(report.and_then(|r| r.non_private).map(|np| np.edges), Some(1));
    // As strings, `t1.V>5` compares a string with a number: refused.
    let (ok, _, stderr) = run(Some("V:string"));
    assert!(!ok && stderr.contains("V"), "{stderr}");
    let (ok, _, stderr) = run(Some("W:string"));
    assert!(!ok && stderr.contains("unknown column 'W'"), "{stderr}");
}

/// The table says when a release is mostly noise (the noise's 95%
/// half-width at least its value), from the report's public figures
/// alone: checked both ways on seeded runs at ε = 0.05, where six rows'
/// releases are mostly noise in some runs at least, and at ε = 1000, where
/// none is.
#[test]
fn a_release_that_is_mostly_noise_says_so_in_the_table() {
    let dir = Dir::new();
    let data = dir.file("people.csv", PEOPLE);
    let dcs = dir.file("dcs.txt", "FD: Zip -> City\nFD: Zip -> State\n");
    let run = |epsilon: &str, seed: &str, format: &str| {
        let args = ["run", "--data", s(&data), "--constraints", s(&dcs), "--epsilon", epsilon];
        let out =
            cli(&[&args[..], &["--seed", seed, "--measures", "mi,p", "--format", format]].concat());
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    for epsilon in ["0.05", "1000"] {
        let mut noisy_runs = 0;
        for seed in ["1", "2", "3", "4", "5"] {
            let report: Report = serde_json::from_str(&run(epsilon, seed, "json")).unwrap();
            let table = run(epsilon, seed, "table");
            let measures = report.measures.expect("the releases");
            for (name, release) in [("I_MI", &measures.mi), ("I_P", &measures.p)] {
                let r = release.as_ref().expect("released");
                let noisy = r.noise().unwrap().ci95_halfwidth() >= r.value.max(1).unsigned_abs();
                noisy_runs += usize::from(noisy);
                let note = format!("note: {name} is mostly noise here");
                assert_eq!(table.contains(&note), noisy, "ε = {epsilon}, seed {seed}:\n{table}");
            }
        }
        assert_eq!(noisy_runs > 0, epsilon == "0.05", "ε = {epsilon}: {noisy_runs} noisy releases");
    }
}

/// Where a loose degree bound swamps I_MI and I_P (one clean group of
/// 1,000 rows beside 25 conflicting pairs: θ* sits on the hubs' floor),
/// the table points to I_R, whose sensitivity is 1 whatever the degrees,
/// exactly when its interval is at most 1% of the swamped release's row
/// bound wide; at ε = 1000 nothing is swamped and the note stays away.
#[test]
fn a_swamped_release_points_to_a_decisive_i_r() {
    let dir = Dir::new();
    let mut csv = String::from("Zip,City\n");
    (0..1000).for_each(|_| csv.push_str("10000,Big\n"));
    (0..25).for_each(|i| csv.push_str(&format!("2{i:04},A\n2{i:04},B\n")));
    (0..450).for_each(|i| csv.push_str(&format!("3{i:04},C\n3{i:04},C\n")));
    let data = dir.file("loose.csv", &csv);
    let dcs = dir.file("dcs.txt", "FD: Zip -> City\n");
    let note = "note: I_R, whose node sensitivity is 1";
    for (epsilon, seeds) in [("1", 1..=8), ("1000", 1..=3)] {
        let mut pointed = 0;
        for seed in seeds {
            let run = |format: &str| {
                let args = ["run", "--data", s(&data), "--constraints", s(&dcs)];
                let rest = ["--epsilon", epsilon, "--seed", &seed.to_string(), "--format", format];
                let out = cli(&[&args[..], &rest[..]].concat());
                assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
                String::from_utf8(out.stdout).unwrap()
            };
            let report: Report = serde_json::from_str(&run("json")).unwrap();
            let m = report.measures.expect("the releases");
            // The swamped releases' public row bounds.
            let swamped: Vec<u64> = [&m.mi, &m.p]
                .into_iter()
                .flatten()
                .filter(|r| r.noise().unwrap().ci95_halfwidth() >= r.value.max(1).unsigned_abs())
                .map(|r| r.bounds.and_then(|b| b.rows).unwrap())
                .collect();
            let r = m.r.expect("I_R released");
            let width = (r.ci95[1] - r.ci95[0]) as u64;
            let expected = swamped.iter().min().is_some_and(|&rows| 100 * width <= rows);
            let table = run("table");
            assert_eq!(table.contains(note), expected, "ε = {epsilon}, seed {seed}:\n{table}");
            pointed += usize::from(expected);
        }
        // The loose bound swamps I_MI at ε = 1 while I_R (25 rows) decides.
        assert_eq!(pointed >= 6, epsilon == "1", "ε = {epsilon}: pointed {pointed} times");
    }
}
