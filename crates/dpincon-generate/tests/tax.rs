//! The Tax generator: consistent, deterministic, realistic, both formats.

mod common;

use std::collections::{HashMap, HashSet};

use common::{Checker, TAX_DCS, dcs, read_csv};
use dpincon_generate::{TAX_COLUMNS, TAX_CONSTRAINTS, TableFormat, TaxOptions, generate_tax};

fn tax(rows: u64, seed: u64, out: &std::path::Path) {
    let stats = generate_tax(&TaxOptions { rows, seed, format: None }, out).unwrap();
    assert_eq!(stats.rows, rows);
}

#[test]
fn tax_tables_have_zero_conflicts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tax.csv");
    tax(20_000, 42, &path);
    let table = read_csv(&path);
    assert_eq!(table.header, TAX_COLUMNS);
    assert_eq!(table.rows.len(), 20_000);
    let edges = Checker::new(&table).edges(&dcs(TAX_DCS));
    assert!(edges.is_empty(), "{} conflicts, e.g. {:?}", edges.len(), edges.iter().next());
    // The exported constraints are the paper's.
    assert_eq!(dcs(TAX_CONSTRAINTS), dcs(TAX_DCS));
}

#[test]
fn tax_values_look_like_the_tax_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tax.csv");
    tax(20_000, 7, &path);
    let t = read_csv(&path);
    let mut per_state: HashMap<&str, usize> = HashMap::new();
    for r in 0..t.rows.len() {
        *per_state.entry(t.get(r, "State").unwrap()).or_default() += 1;
        for c in ["AreaCode", "Phone", "Zip", "Salary", "SingleExemp", "MarriedExemp", "ChildExemp"]
        {
            let v = t.get(r, c).unwrap();
            assert!(v.parse::<u64>().is_ok(), "{c} = {v:?}");
        }
        let rate: f64 = t.get(r, "Rate").unwrap().parse().unwrap();
        assert!((0.0..40.0).contains(&rate));
        assert!(t.get(r, "Rate").unwrap().contains('.'), "rates are written as decimals");
        assert!(["M", "F"].contains(&t.get(r, "Gender").unwrap()));
        assert!(["M", "S"].contains(&t.get(r, "MaritalStatus").unwrap()));
        assert!(["Y", "N"].contains(&t.get(r, "HasChild").unwrap()));
        assert_eq!(t.get(r, "Phone").unwrap().len(), 7);
        // Exemptions follow marital status and children, as in the Tax file.
        if t.get(r, "MaritalStatus") == Some("M") {
            assert_eq!(t.get(r, "SingleExemp"), Some("0"));
        } else {
            assert_eq!(t.get(r, "MarriedExemp"), Some("0"));
        }
        if t.get(r, "HasChild") == Some("N") {
            assert_eq!(t.get(r, "ChildExemp"), Some("0"));
        }
    }
    // About 50 states with population-like (skewed) sizes.
    assert!(per_state.len() >= 48, "{} states", per_state.len());
    let largest = *per_state.values().max().unwrap();
    let smallest = *per_state.values().min().unwrap();
    // population^0.7: California 7.6 %, Wyoming 0.4 %.
    assert!(largest > 1_200 && largest > 10 * smallest, "sizes {smallest}..{largest}");
    // Several area codes and many ZIP codes and cities inside a big state.
    let in_state = |s: &str, c: &str| -> HashSet<&str> {
        (0..t.rows.len())
            .filter(|&r| t.get(r, "State") == Some(s))
            .map(|r| t.get(r, c).unwrap())
            .collect()
    };
    let state = per_state.iter().max_by_key(|(_, n)| **n).unwrap().0;
    assert!(in_state(state, "AreaCode").len() >= 10);
    assert!(in_state(state, "Zip").len() >= 500);
    assert!(in_state(state, "City").len() >= 200);
    // Some progressive states: rates vary inside a state.
    let varying = per_state.keys().filter(|s| in_state(s, "Rate").len() > 20).count();
    assert!(varying >= 20, "{varying} states with progressive rates");
}

#[test]
fn same_seed_same_bytes_different_seed_different_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let [a, b, c] = ["a.csv", "b.csv", "c.csv"].map(|n| dir.path().join(n));
    tax(3_000, 1, &a);
    tax(3_000, 1, &b);
    tax(3_000, 2, &c);
    let [a, b, c] = [a, b, c].map(|p| std::fs::read(p).unwrap());
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn a_longer_table_extends_a_shorter_one() {
    let dir = tempfile::tempdir().unwrap();
    let (short, long) = (dir.path().join("s.csv"), dir.path().join("l.csv"));
    tax(500, 9, &short);
    tax(1_000, 9, &long);
    let (short, long) = (read_csv(&short), read_csv(&long));
    assert_eq!(short.rows[..], long.rows[..500]);
}

#[test]
fn parquet_holds_the_same_table() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("t.csv");
    let parquet = dir.path().join("t.data");
    tax(2_000, 3, &csv);
    let stats = generate_tax(
        &TaxOptions { rows: 2_000, seed: 3, format: Some(TableFormat::Parquet) },
        &parquet,
    )
    .unwrap();
    assert_eq!(stats.format, TableFormat::Parquet);
    assert_eq!(&std::fs::read(&parquet).unwrap()[..4], b"PAR1");
    // Copy it back to CSV through rnoise with α = 0 (reads Parquet, changes
    // nothing): the same bytes as the CSV generation.
    let named = dir.path().join("t.parquet");
    std::fs::rename(&parquet, &named).unwrap();
    let back = dir.path().join("back.csv");
    let s = dpincon_generate::rnoise(&named, &dcs(TAX_DCS), 0.0, 0, &back).unwrap();
    assert_eq!(s.picks, 0);
    assert_eq!(std::fs::read(&back).unwrap(), std::fs::read(&csv).unwrap());
}

#[test]
fn unwritable_output_is_an_error_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/dir/t.csv");
    let err = generate_tax(&TaxOptions { rows: 10, seed: 0, format: None }, &missing).unwrap_err();
    assert!(err.to_string().contains("no/such/dir"), "{err}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
