//! The shape generators: deterministic, parseable constraints, and the
//! promised graph structure, checked from the written CSV alone.

mod common;

use std::collections::HashMap;
use std::path::Path;

use common::{Checker, Table, dcs, read_csv};
use dpincon_generate::{Shape, ShapeOptions, ShapeStats, generate_shape};

fn options(
    shape: Shape,
    rows: Option<u64>,
    violations: Option<u64>,
    seed: u64,
    dir: &Path,
) -> ShapeOptions {
    ShapeOptions {
        shape,
        rows,
        violations,
        seed,
        out: dir.join(format!("{shape}-{seed}.csv")),
        format: None,
        constraints_out: Some(dir.join(format!("{shape}-{seed}.dcs"))),
    }
}

fn generate(
    shape: Shape,
    rows: Option<u64>,
    violations: Option<u64>,
    seed: u64,
    dir: &Path,
) -> (ShapeStats, Table) {
    let stats = generate_shape(&options(shape, rows, violations, seed, dir)).unwrap();
    let table = read_csv(&stats.out);
    assert_eq!(table.rows.len() as u64, stats.rows);
    assert_eq!(table.header.len(), stats.columns);
    (stats, table)
}

/// For each row whose `rhs` differs from the most frequent `rhs` of its
/// `lhs` group, the size of that group (its degree, give or take the other
/// wrong rows of the group).
fn off_majority_groups(t: &Table, lhs: &str, rhs: &str) -> Vec<usize> {
    let mut counts: HashMap<&str, HashMap<&str, usize>> = HashMap::new();
    for r in 0..t.rows.len() {
        let group = counts.entry(t.get(r, lhs).unwrap()).or_default();
        *group.entry(t.get(r, rhs).unwrap()).or_default() += 1;
    }
    let mut out = Vec::new();
    for c in counts.values() {
        let size: usize = c.values().sum();
        let wrong = size - c.values().max().unwrap();
        out.extend(std::iter::repeat_n(size, wrong));
    }
    out
}

/// Whether, in every `lhs` group, one `rhs` value holds a strict majority
/// (the generators' promise, so the correct value can be read back).
fn strict_majorities(t: &Table, lhs: &str, rhs: &str) -> bool {
    let mut counts: HashMap<&str, HashMap<&str, usize>> = HashMap::new();
    for r in 0..t.rows.len() {
        let group = counts.entry(t.get(r, lhs).unwrap()).or_default();
        *group.entry(t.get(r, rhs).unwrap()).or_default() += 1;
    }
    counts.values().all(|c| 2 * c.values().max().unwrap() > c.values().sum::<usize>())
}

fn off_majority(t: &Table, lhs: &str, rhs: &str) -> usize {
    off_majority_groups(t, lhs, rhs).len()
}

/// Sizes of the groups of column `lhs`.
fn group_sizes<'t>(t: &'t Table, lhs: &str) -> HashMap<&'t str, usize> {
    let mut sizes = HashMap::new();
    for r in 0..t.rows.len() {
        *sizes.entry(t.get(r, lhs).unwrap()).or_default() += 1;
    }
    sizes
}

/// Vertex degrees of an edge set over `n` rows.
fn degrees(n: usize, edges: &std::collections::BTreeSet<(usize, usize)>) -> Vec<usize> {
    let mut d = vec![0; n];
    for &(i, j) in edges {
        d[i] += 1;
        d[j] += 1;
    }
    d
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let dir = tempfile::tempdir().unwrap();
    for shape in Shape::ALL {
        let rows = Some(1_500);
        let read = |stats: &ShapeStats| std::fs::read(&stats.out).unwrap();
        let a = generate_shape(&options(shape, rows, None, 1, dir.path())).unwrap();
        let mut again = options(shape, rows, None, 1, dir.path());
        again.out = dir.path().join(format!("{shape}-again.csv"));
        let b = generate_shape(&again).unwrap();
        let c = generate_shape(&options(shape, rows, None, 2, dir.path())).unwrap();
        assert_eq!(read(&a), read(&b), "{shape}");
        assert_ne!(read(&a), read(&c), "{shape}");
        assert_eq!(
            (a.violating_rows, a.largest_group),
            (b.violating_rows, b.largest_group),
            "{shape}"
        );
        // The constraint file parses and names only columns of the table.
        let constraints = a.constraints_out.as_ref().unwrap();
        let parsed = dcs(&std::fs::read_to_string(constraints).unwrap());
        assert!(!parsed.is_empty());
        let table = read_csv(&a.out);
        let edges = Checker::new(&table).edges(&parsed);
        // Default violations always make some conflict.
        assert!(!edges.is_empty(), "{shape}: no conflicts");
    }
    // No temporary file is left behind.
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let name = entry.unwrap().file_name();
        assert!(!name.to_string_lossy().ends_with(".tmp"), "{name:?}");
    }
}

#[test]
fn hubs_are_stars_on_the_largest_groups() {
    let dir = tempfile::tempdir().unwrap();
    for (violations, seed) in [(None, 3), (Some(30), 4)] {
        let (stats, t) = generate(Shape::Hubs, None, violations, seed, dir.path());
        let n = t.rows.len();
        assert_eq!(n, 20_000);
        let want = violations.unwrap_or(9) as usize;
        assert_eq!(stats.violating_rows as usize, want);
        let codes = group_sizes(&t, "code");
        let precincts = group_sizes(&t, "precinct");
        assert!((60..=80).contains(&codes.len()), "{} codes", codes.len());
        assert!((70..=90).contains(&precincts.len()), "{} precincts", precincts.len());
        let largest = *codes.values().max().unwrap();
        assert!(largest * 20 >= n && largest * 6 <= n, "largest code group {largest}");
        assert_eq!(stats.largest_group as usize, largest.max(*precincts.values().max().unwrap()));
        // Exactly the requested rows disagree with their group's majority.
        let wrong_desc = off_majority(&t, "code", "description");
        let wrong_borough = off_majority(&t, "precinct", "borough");
        assert_eq!(wrong_desc + wrong_borough, want);
        assert_eq!(wrong_borough, want / 3);
        assert!(strict_majorities(&t, "code", "description"));
        assert!(strict_majorities(&t, "precinct", "borough"));
        // ... and each sits in one of the largest groups: a star of degree
        // about its group's size.
        let mut desc_groups = off_majority_groups(&t, "code", "description");
        assert!(desc_groups.iter().all(|&s| s >= 800), "{desc_groups:?}");
        desc_groups.dedup();
        assert_eq!(desc_groups.len(), 3, "three code stars");
        let borough_groups = off_majority_groups(&t, "precinct", "borough");
        assert!(borough_groups.iter().all(|&s| s >= 500), "{borough_groups:?}");
    }
}

#[test]
fn hub_star_degrees_in_the_thousands() {
    let dir = tempfile::tempdir().unwrap();
    let (stats, t) = generate(Shape::Hubs, None, None, 5, dir.path());
    // Only the description FD: its groups are the largest (Checker walks
    // every pair of a group, fine in a test).
    let edges = Checker::new(&t).edges(&dcs("code -> description"));
    let d = degrees(t.rows.len(), &edges);
    let max = *d.iter().max().unwrap();
    assert!(max >= 1_000, "max degree {max}");
    assert!(max < stats.largest_group as usize);
    // Few stars: 6 wrong descriptions, so at most 6 rows have a degree
    // above their count of wrong neighbours (≤ 6).
    assert_eq!(d.iter().filter(|&&x| x > 6).count(), 6);
}

#[test]
fn cliques_are_duplicated_keys() {
    let dir = tempfile::tempdir().unwrap();
    for (rows, violations, seed) in [(None, None, 1), (Some(4_000), Some(150), 2)] {
        let (stats, t) = generate(Shape::Cliques, rows, violations, seed, dir.path());
        let n = t.rows.len();
        let want = violations.unwrap_or(12) as usize;
        let mut copies: HashMap<&str, Vec<usize>> = HashMap::new();
        for r in 0..n {
            copies.entry(t.get(r, "key").unwrap()).or_default().push(r);
        }
        let duplicated: Vec<&Vec<usize>> = copies.values().filter(|c| c.len() > 1).collect();
        assert_eq!(duplicated.len(), want);
        let sizes: Vec<usize> = duplicated.iter().map(|c| c.len()).collect();
        assert!(sizes.iter().all(|s| (2..=30).contains(s)), "{sizes:?}");
        assert!(sizes.iter().filter(|&&s| s <= 12).count() * 10 >= sizes.len() * 8, "{sizes:?}");
        assert_eq!(stats.violating_rows as usize, sizes.iter().sum::<usize>());
        assert_eq!(stats.largest_group as usize, *sizes.iter().max().unwrap());
        // About 5% of the rows at the default (~4 copies a key).
        let share = sizes.iter().sum::<usize>() as f64 / n as f64;
        if rows.is_none() {
            assert!((0.02..0.12).contains(&share), "{share}");
        }
        // Copies disagree somewhere, so every copy is in a conflict.
        let edges = Checker::new(&t)
            .edges(&dcs(&std::fs::read_to_string(stats.constraints_out.unwrap()).unwrap()));
        let d = degrees(n, &edges);
        for c in &duplicated {
            assert!(c.iter().all(|&r| d[r] >= 1));
        }
        assert_eq!(d.iter().filter(|&&x| x > 0).count(), stats.violating_rows as usize);
    }
}

#[test]
fn sparse_groups_are_small() {
    let dir = tempfile::tempdir().unwrap();
    let (stats, t) = generate(Shape::Sparse, None, None, 6, dir.path());
    let n = t.rows.len();
    assert_eq!(n, 2_400);
    let zips = group_sizes(&t, "zip");
    assert!(zips.values().all(|s| (5..=40).contains(s)), "{:?}", zips.values().min());
    assert_eq!(off_majority(&t, "zip", "city"), 48);
    assert_eq!(off_majority(&t, "zip", "state"), 0);
    assert_eq!(stats.violating_rows, 48);
    let edges = Checker::new(&t)
        .edges(&dcs(&std::fs::read_to_string(stats.constraints_out.unwrap()).unwrap()));
    let d = degrees(n, &edges);
    let max = *d.iter().max().unwrap();
    assert!((4..40).contains(&max), "max degree {max}");
    assert!(edges.len() < 48 * 40, "{} edges", edges.len());

    // Many violations: every group still keeps a correct majority, so the
    // count read back is exact even where groups are full.
    let (stats, t) = generate(Shape::Sparse, None, Some(900), 9, dir.path());
    assert_eq!(off_majority(&t, "zip", "city"), 900);
    assert!(strict_majorities(&t, "zip", "city"));
    assert_eq!(stats.violating_rows, 900);
}

#[test]
fn mixed_has_hubs_and_sparse_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (stats, t) = generate(Shape::Mixed, None, None, 7, dir.path());
    let n = t.rows.len();
    let hubs = off_majority(&t, "code", "description") + off_majority(&t, "precinct", "borough");
    let sparse = off_majority(&t, "zip", "city");
    assert_eq!((hubs, sparse), (9, 400));
    assert_eq!(off_majority(&t, "zip", "state"), 0);
    assert_eq!(stats.violating_rows, 409);
    assert!(*group_sizes(&t, "code").values().max().unwrap() * 20 >= n);
    assert!(group_sizes(&t, "zip").values().all(|s| (5..=40).contains(s)));
}

#[test]
fn order_dc_nearly_holds() {
    let dir = tempfile::tempdir().unwrap();
    let (stats, t) = generate(Shape::Order, None, None, 8, dir.path());
    let n = t.rows.len();
    let gain: Vec<i64> = (0..n).map(|r| t.get(r, "gain").unwrap().parse().unwrap()).collect();
    let loss: Vec<i64> = (0..n).map(|r| t.get(r, "loss").unwrap().parse().unwrap()).collect();
    let mut pairs = 0usize;
    let mut out_of_order = vec![false; n];
    for i in 0..n {
        for j in 0..n {
            if gain[i] > gain[j] && loss[i] < loss[j] {
                pairs += 1;
                out_of_order[i] = true;
            }
        }
    }
    assert!(pairs > 0 && pairs * 100 < n * n, "{pairs} violating pairs");
    assert_eq!(out_of_order.iter().filter(|&&x| x).count(), 20);
    assert_eq!(stats.violating_rows, 20);
    // The engine-independent checker agrees on the DC's edges.
    let text = std::fs::read_to_string(stats.constraints_out.unwrap()).unwrap();
    let parsed = dcs(&text);
    assert_eq!(parsed.len(), 2);
    assert_eq!(Checker::new(&t).edges(&parsed[..1]).len(), pairs);
    assert_eq!(off_majority(&t, "desk", "region"), 0);
    assert_eq!(stats.largest_group as usize, *group_sizes(&t, "desk").values().max().unwrap());
}

#[test]
fn impossible_requests_are_errors_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for (shape, rows, violations, message) in [
        (Shape::Hubs, 100, 60, "do not fit"),
        (Shape::Sparse, 100, 60, "do not fit"),
        (Shape::Cliques, 100, 60, "need more than the 100 rows"),
        (Shape::Order, 10, 10, "need more than 10 rows"),
    ] {
        let o = options(shape, Some(rows), Some(violations), 1, dir.path());
        let err = generate_shape(&o).unwrap_err().to_string();
        assert!(err.contains(message), "{shape}: {err}");
        assert!(!o.out.exists() && !o.constraints_out.unwrap().exists());
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    let mut o = options(Shape::Hubs, Some(10), None, 1, dir.path());
    o.constraints_out = Some(o.out.clone());
    assert!(generate_shape(&o).unwrap_err().to_string().contains("both"));
}

#[test]
fn tiny_tables_and_parquet() {
    let dir = tempfile::tempdir().unwrap();
    for shape in Shape::ALL {
        for rows in [0, 1, 7] {
            let mut o = options(shape, Some(rows), Some(0), 1, dir.path());
            o.out = dir.path().join(format!("{shape}-{rows}.parquet"));
            let stats = generate_shape(&o).unwrap();
            assert_eq!(stats.rows, rows);
            assert_eq!(stats.violating_rows, 0);
            let bytes = std::fs::read(&o.out).unwrap();
            assert_eq!(&bytes[..4], b"PAR1", "{shape}");
        }
    }
}
