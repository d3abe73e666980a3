//! RNoise and CONoise (SPEC §9), checked against an independent evaluator.

mod common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use common::{Checker, TAX_DCS, Table, dcs, diff, read_csv};
use dpincon_constraints::{Operand, Operator};
use dpincon_generate::{GenerateError, TaxOptions, conoise, generate_tax, rnoise};

/// The 11 attributes the Tax constraints use.
const CONSTRAINED: [&str; 11] = [
    "AreaCode",
    "Phone",
    "City",
    "State",
    "Zip",
    "MaritalStatus",
    "HasChild",
    "Salary",
    "Rate",
    "SingleExemp",
    "ChildExemp",
];

fn clean_tax(dir: &Path, rows: u64) -> PathBuf {
    let path = dir.join("clean.csv");
    generate_tax(&TaxOptions { rows, seed: 11, format: None }, &path).unwrap();
    path
}

/// One edit (insert, delete, substitute) or one adjacent transposition.
fn one_slip(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len() == b.len() {
        let d: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
        d.len() == 1
            || (d.len() == 2 && d[1] == d[0] + 1 && a[d[0]] == b[d[1]] && a[d[1]] == b[d[0]])
    } else {
        let (s, l) = if a.len() < b.len() { (&a, &b) } else { (&b, &a) };
        l.len() == s.len() + 1
            && (0..l.len())
                .any(|k| l.iter().enumerate().filter(|&(i, _)| i != k).map(|(_, c)| c).eq(s.iter()))
    }
}

#[test]
fn rnoise_picks_alpha_times_the_constrained_cells_and_touches_only_them() {
    let dir = tempfile::tempdir().unwrap();
    let input = clean_tax(dir.path(), 5_000);
    let before = std::fs::read(&input).unwrap();
    let out = dir.path().join("noisy.csv");
    let stats = rnoise(&input, &dcs(TAX_DCS), 0.01, 5, &out).unwrap();
    assert_eq!(std::fs::read(&input).unwrap(), before, "the input is never modified");

    assert_eq!(stats.rows, 5_000);
    assert_eq!(stats.attributes.len(), 11);
    assert_eq!(stats.constrained_cells, 55_000);
    assert_eq!(stats.picks, 550);
    assert_eq!(stats.domain_picks + stats.typo_picks, 550);
    // Binomial(550, 1/2): mean 275, sd 11.7.
    assert!((215..=335).contains(&stats.domain_picks), "{}", stats.domain_picks);

    let (clean, noisy) = (read_csv(&input), read_csv(&out));
    let changed = diff(&clean, &noisy);
    assert_eq!(changed.len() as u64, stats.cells_modified);
    // Repeated cells (with replacement) and one-value domains lose a few.
    assert!(stats.cells_modified <= 550 && stats.cells_modified >= 520, "{}", stats.cells_modified);
    assert_eq!(stats.modified_per_attribute.values().sum::<u64>(), stats.cells_modified);
    let constrained: HashSet<usize> = CONSTRAINED.iter().map(|c| clean.col(c)).collect();
    let mut domains: Vec<HashSet<&str>> = vec![HashSet::new(); clean.header.len()];
    for row in &clean.rows {
        for (c, v) in row.iter().enumerate() {
            domains[c].extend(v.as_deref());
        }
    }
    let (mut from_domain, mut typos, mut odd) = (0, 0, 0);
    for &(r, c) in &changed {
        assert!(constrained.contains(&c), "column {} changed", clean.header[c]);
        let (old, new) =
            (clean.rows[r][c].as_deref().unwrap(), noisy.rows[r][c].as_deref().unwrap());
        // Each change is another active-domain value or a typo of the old one
        // (a cell picked twice may be both: count it once either way).
        if domains[c].contains(new) {
            from_domain += 1;
        } else if one_slip(old, new) {
            typos += 1;
        } else {
            odd += 1;
        }
        if ["Salary", "Rate", "Zip", "AreaCode", "Phone"].contains(&clean.header[c].as_str()) {
            assert!(new.parse::<f64>().is_ok(), "numbers stay numbers: {old} -> {new}");
        }
    }
    assert!(from_domain > 200 && typos > 200, "{from_domain} domain values, {typos} typos");
    // Neither: only a cell picked twice (a typo of a typo, a typo of a
    // domain value) can be that.
    assert!(odd <= stats.picks - stats.cells_modified, "{odd} changes are neither");

    // The noisy table has conflicts; the clean one had none.
    assert!(Checker::new(&clean).edges(&dcs(TAX_DCS)).is_empty());
    assert!(Checker::new(&noisy).edges(&dcs(TAX_DCS)).len() > 1_000);
}

#[test]
fn rnoise_is_a_function_of_the_seed() {
    let dir = tempfile::tempdir().unwrap();
    let input = clean_tax(dir.path(), 2_000);
    let [a, b, c] = ["a.csv", "b.csv", "c.csv"].map(|n| dir.path().join(n));
    rnoise(&input, &dcs(TAX_DCS), 0.02, 1, &a).unwrap();
    rnoise(&input, &dcs(TAX_DCS), 0.02, 1, &b).unwrap();
    rnoise(&input, &dcs(TAX_DCS), 0.02, 2, &c).unwrap();
    let [a, b, c] = [a, b, c].map(|p| std::fs::read(p).unwrap());
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn rnoise_with_replacement_can_pick_a_cell_many_times() {
    // α = 3 on a 4-row, 1-attribute table: 12 picks on 4 cells.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("t.csv");
    std::fs::write(&input, "K,V,Note\n1,a,x\n2,b,y\n3,c,z\n4,d,w\n").unwrap();
    let out = dir.path().join("o.csv");
    let s = rnoise(&input, &dcs("FD: K -> V"), 3.0, 0, &out).unwrap();
    assert_eq!(s.picks, 24);
    let t = read_csv(&out);
    assert_eq!(
        t.rows.iter().map(|r| r[2].clone().unwrap()).collect::<Vec<_>>(),
        ["x", "y", "z", "w"]
    );
}

/// The columns of `σ`'s predicates whose operator is `<`, `>` or `!=`: the
/// only ones legacy mode may leave different from the first tuple.
fn forced_columns(dc: &dpincon_constraints::DenialConstraint) -> HashSet<String> {
    dc.predicates
        .iter()
        .filter(|p| matches!(p.op, Operator::Lt | Operator::Gt | Operator::Ne))
        .flat_map(|p| [&p.left, &p.right])
        .filter_map(|o| match o {
            Operand::Attr { column, .. } => Some(column.clone()),
            Operand::Const(_) => None,
        })
        .collect()
}

#[test]
fn conoise_makes_each_pair_violate_its_constraint() {
    let dir = tempfile::tempdir().unwrap();
    let input = clean_tax(dir.path(), 400);
    let constraints = dcs(TAX_DCS);
    for legacy in [false, true] {
        for seed in 0..40 {
            let out = dir.path().join(format!("c-{legacy}-{seed}.csv"));
            let stats = conoise(&input, &constraints, 1, seed, legacy, &out).unwrap();
            let p = stats.pairs[0];
            assert!(p.violated);
            assert_ne!(p.t1, p.t2);
            let (clean, noisy) = (read_csv(&input), read_csv(&out));
            let checker = Checker::new(&noisy);
            let dc = &constraints[p.constraint];
            assert!(
                checker.violates(dc, p.t1 as usize, p.t2 as usize),
                "seed {seed}: rows {} and {} do not violate {dc}",
                p.t1,
                p.t2
            );
            // Only the pair changed.
            for (r, _) in diff(&clean, &noisy) {
                assert!(r as u64 == p.t1 || r as u64 == p.t2);
            }
            if legacy {
                // t2 is a copy of t1 except where a <, >, != had to be forced.
                let forced = forced_columns(dc);
                for (c, name) in clean.header.iter().enumerate() {
                    let (t1, t2) = (p.t1 as usize, p.t2 as usize);
                    if !forced.contains(name) {
                        assert_eq!(noisy.rows[t2][c], clean.rows[t1][c], "seed {seed}: {name}");
                        assert_eq!(noisy.rows[t1][c], clean.rows[t1][c], "seed {seed}: {name}");
                    }
                }
            }
        }
    }
}

#[test]
fn conoise_200_iterations_make_conflicts() {
    let dir = tempfile::tempdir().unwrap();
    let input = clean_tax(dir.path(), 3_000);
    let out = dir.path().join("noisy.csv");
    let stats = conoise(&input, &dcs(TAX_DCS), 200, 3, false, &out).unwrap();
    assert_eq!(stats.pairs.len(), 200);
    assert_eq!(stats.violating_pairs, 200);
    let noisy = read_csv(&out);
    let edges = Checker::new(&noisy).edges(&dcs(TAX_DCS));
    // Each pair is an edge unless a later iteration repaired it.
    let still = stats
        .pairs
        .iter()
        .filter(|p| edges.contains(&(p.t1.min(p.t2) as usize, p.t1.max(p.t2) as usize)))
        .count();
    assert!(still >= 180, "{still} of 200 pairs still conflict");
    assert!(stats.cells_modified > 0 && stats.assignments >= stats.cells_modified);
    let same =
        conoise(&input, &dcs(TAX_DCS), 200, 3, false, &dir.path().join("again.csv")).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(dir.path().join("again.csv")).unwrap());
    assert_eq!(same.pairs, stats.pairs);
}

#[test]
fn conoise_handles_order_predicates_constants_and_nulls() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("t.csv");
    // Age: numbers (9 < 10 numerically, not as text); Name has a NULL.
    std::fs::write(&input, "Name,Age,Family\nann,9,1\n,10,2\nbob,30,3\n").unwrap();
    let constraints = dcs("not(t1.Age > 60 & t2.Age < 18 & t1.Family = t2.Family)\n\
         not(t1.Name = t2.Name & t1.Age > t2.Age)");
    for seed in 0..50 {
        let out = dir.path().join(format!("o{seed}.csv"));
        let stats = conoise(&input, &constraints, 1, seed, false, &out).unwrap();
        let p = stats.pairs[0];
        let t = read_csv(&out);
        assert!(
            Checker::new(&t).violates(&constraints[p.constraint], p.t1 as usize, p.t2 as usize),
            "seed {seed}: {t:?}"
        );
        for r in &t.rows {
            assert!(r[1].as_deref().unwrap().parse::<f64>().is_ok(), "Age stays numeric: {r:?}");
        }
    }
}

#[test]
fn csv_quoting_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("q.csv");
    let text = "City,Zip,Note\n\"WASHINGTON, DC\",20001,\"said \"\"hi\"\"\"\nBOSTON,2108,\"two\nlines\"\nAUSTIN,73301,\n";
    std::fs::write(&input, text).unwrap();
    let original = read_csv(&input);
    assert_eq!(original.rows[0][0].as_deref(), Some("WASHINGTON, DC"));
    assert_eq!(original.rows[2][2], None);
    // α = 0 copies; through Parquet and back as well.
    let copy = dir.path().join("copy.csv");
    rnoise(&input, &dcs("FD: Zip -> City"), 0.0, 0, &copy).unwrap();
    assert_eq!(read_csv(&copy), original);
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), text);
    let pq = dir.path().join("copy.parquet");
    rnoise(&input, &dcs("FD: Zip -> City"), 0.0, 0, &pq).unwrap();
    let back = dir.path().join("back.csv");
    conoise(&pq, &dcs("FD: Zip -> City"), 0, 0, false, &back).unwrap();
    assert_eq!(read_csv(&back), original);
    // CONoise copying a quoted city keeps it whole.
    let noisy = dir.path().join("noisy.csv");
    conoise(&input, &dcs("FD: Zip -> City"), 30, 1, false, &noisy).unwrap();
    let t: Table = read_csv(&noisy);
    assert_eq!(t.rows.len(), 3);
    for r in &t.rows {
        assert_eq!(r.len(), 3);
    }
}

#[test]
fn errors_name_what_is_wrong_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let input = clean_tax(dir.path(), 50);
    let before = std::fs::read(&input).unwrap();
    let out = dir.path().join("out.csv");
    let tax = dcs(TAX_DCS);

    // Unknown attribute: named, with its constraint.
    let bad = dcs("not(t1.State=t2.State&t1.Income>t2.Income)");
    for err in [
        rnoise(&input, &bad, 0.1, 0, &out).unwrap_err(),
        conoise(&input, &bad, 5, 0, false, &out).unwrap_err(),
    ] {
        assert!(
            matches!(err, GenerateError::UnknownAttribute { ref attribute, .. } if attribute == "Income")
        );
        assert!(
            err.to_string().contains("'Income'") && err.to_string().contains("line 1"),
            "{err}"
        );
    }

    // out == input, however it is spelled.
    let dotted = input.parent().unwrap().join(".").join(input.file_name().unwrap());
    for same in [&input, &dotted] {
        for err in [
            rnoise(&input, &tax, 0.1, 0, same).unwrap_err(),
            conoise(&input, &tax, 5, 0, false, same).unwrap_err(),
        ] {
            assert!(matches!(err, GenerateError::SameFile { .. }), "{err}");
        }
    }
    assert_eq!(std::fs::read(&input).unwrap(), before);

    // Missing input.
    let missing = dir.path().join("missing.csv");
    for err in [
        rnoise(&missing, &tax, 0.1, 0, &out).unwrap_err(),
        conoise(&missing, &tax, 5, 0, false, &out).unwrap_err(),
    ] {
        assert!(matches!(err, GenerateError::Read { .. }), "{err}");
        assert!(err.to_string().contains("missing.csv"), "{err}");
    }

    // Bad options and malformed tables.
    assert!(matches!(rnoise(&input, &tax, -0.5, 0, &out), Err(GenerateError::Option(_))));
    assert!(matches!(rnoise(&input, &tax, f64::NAN, 0, &out), Err(GenerateError::Option(_))));
    assert!(matches!(conoise(&input, &[], 5, 0, false, &out), Err(GenerateError::Option(_))));
    let ragged = dir.path().join("ragged.csv");
    std::fs::write(&ragged, "A,B\n1,2\n3\n").unwrap();
    let err = rnoise(&ragged, &dcs("FD: A -> B"), 0.5, 0, &out).unwrap_err();
    assert!(err.to_string().contains("line 3"), "{err}");
    let fake = dir.path().join("fake.parquet");
    std::fs::write(&fake, "not parquet").unwrap();
    assert!(matches!(conoise(&fake, &tax, 5, 0, false, &out), Err(GenerateError::Format { .. })));

    // Nothing was written, not even a temporary file.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["clean.csv", "fake.parquet", "ragged.csv"]);
}

#[test]
fn read_constraints_reports_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.dcs");
    std::fs::write(&path, "not(t1.A=t2.A &&& )\n").unwrap();
    let err = dpincon_generate::read_constraints(&path).unwrap_err();
    assert!(err.to_string().contains("bad.dcs"), "{err}");
    std::fs::write(&path, TAX_DCS).unwrap();
    assert_eq!(dpincon_generate::read_constraints(&path).unwrap().len(), 9);
}
