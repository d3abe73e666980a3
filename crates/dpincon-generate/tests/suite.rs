//! The θ-selection training suite: the small suite has every family and a
//! manifest that reads back as written; every table parses with its
//! constraints; and each family holds what it promises, checked from the
//! written CSV or with the engine's own detection.

mod common;

use std::collections::HashMap;
use std::path::Path;

use common::{Table, dcs, read_csv};
use dpincon_engine::{JobConfig, NoProgress, NonPrivateReport, run_job};
use dpincon_generate::suite::{
    Family, FamilyParams, MANIFEST, PlannedTable, Scale, SuiteManifest, SuiteOptions, SuiteTable,
    generate_suite, generate_table, plan,
};

const SEED: u64 = 7;

/// The small suite's tables of `family`, written into `dir`.
fn family(family: Family, dir: &Path) -> Vec<(PlannedTable, SuiteTable, Table)> {
    plan(Scale::Small)
        .into_iter()
        .filter(|p| p.params.family() == family)
        .map(|p| {
            let t = generate_table(&p, SEED, dir).unwrap();
            let table = read_csv(&dir.join(&t.data));
            assert_eq!(table.rows.len() as u64, t.rows, "{}", t.name);
            (p, t, table)
        })
        .collect()
}

/// The exact graph of `data` under `constraints` (the engine's detection).
fn exact(data: &Path, constraints: &str, dir: &Path) -> NonPrivateReport {
    let file = dir.join(format!("{}.only.dcs", data.file_stem().unwrap().to_string_lossy()));
    std::fs::write(&file, constraints).unwrap();
    let mut job = JobConfig::new(data, &file);
    job.test.non_private = true;
    job.data.threads = Some(2);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let report = runtime.block_on(run_job(&job, &NoProgress)).unwrap();
    report.non_private.unwrap()
}

/// Rows per value of `column`.
fn groups<'t>(t: &'t Table, column: &str) -> HashMap<&'t str, usize> {
    let mut out = HashMap::new();
    for r in 0..t.rows.len() {
        *out.entry(t.get(r, column).unwrap()).or_default() += 1;
    }
    out
}

/// Rows whose `rhs` differs from the most frequent `rhs` of their `lhs`.
fn off_majority(t: &Table, lhs: &str, rhs: &str) -> usize {
    let mut counts: HashMap<&str, HashMap<&str, usize>> = HashMap::new();
    for r in 0..t.rows.len() {
        *counts
            .entry(t.get(r, lhs).unwrap())
            .or_default()
            .entry(t.get(r, rhs).unwrap())
            .or_default() += 1;
    }
    counts.values().map(|c| c.values().sum::<usize>() - c.values().max().unwrap()).sum()
}

fn num(t: &Table, r: usize, column: &str) -> u64 {
    t.get(r, column).unwrap().parse().unwrap()
}

#[test]
fn the_small_suite_has_every_family_and_its_manifest_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let options = SuiteOptions { out: dir.path().to_path_buf(), seed: SEED, scale: Scale::Small };
    let mut written = 0;
    let manifest = generate_suite(&options, &mut |_| written += 1).unwrap();
    assert!(manifest.tables.len() >= 40, "{} tables", manifest.tables.len());
    assert_eq!(written, manifest.tables.len());
    let mut families: Vec<Family> = manifest.tables.iter().map(|t| t.family).collect();
    families.dedup();
    assert!(families.len() >= 7, "{families:?}");
    assert_eq!(families, Family::ALL);

    // The manifest reads back as written, and as JSON round-trips.
    let path = dir.path().join(MANIFEST);
    assert_eq!(SuiteManifest::read(&path).unwrap(), manifest);
    let json = serde_json::to_string(&manifest).unwrap();
    assert_eq!(serde_json::from_str::<SuiteManifest>(&json).unwrap(), manifest);

    // Every table parses with its constraints, which name only its columns.
    for t in &manifest.tables {
        assert_eq!(t.params.family(), t.family);
        assert!(t.rows >= 1_000 && t.rows <= Scale::SMALL_ROWS, "{}: {}", t.name, t.rows);
        let parsed = dcs(&std::fs::read_to_string(dir.path().join(&t.constraints)).unwrap());
        assert!(!parsed.is_empty(), "{}", t.name);
        let header = read_csv(&dir.path().join(&t.data)).header;
        for dc in &parsed {
            for p in &dc.predicates {
                for o in [&p.left, &p.right] {
                    if let dpincon_constraints::Operand::Attr { column, .. } = o {
                        assert!(header.contains(column), "{}: {column}", t.name);
                    }
                }
            }
        }
    }

    // A mismatched family, or a stale version, is refused.
    let mut bad = manifest.clone();
    bad.tables[0].family = Family::Order;
    bad.write(&path).unwrap();
    assert!(SuiteManifest::read(&path).unwrap_err().to_string().contains("parameters of"));
    let mut stale = manifest.clone();
    stale.version += 1;
    stale.write(&path).unwrap();
    assert!(SuiteManifest::read(&path).unwrap_err().to_string().contains("regenerate"));

    // The same seed gives the same bytes; another seed, others.
    let first = &manifest.tables[0];
    let planned = plan(Scale::Small).remove(0);
    let again = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    generate_table(&planned, SEED, again.path()).unwrap();
    generate_table(&planned, SEED + 1, other.path()).unwrap();
    let bytes = |d: &Path| std::fs::read(d.join(&first.data)).unwrap();
    assert_eq!(bytes(dir.path()), bytes(again.path()));
    assert_ne!(bytes(dir.path()), bytes(other.path()));
}

/// The DCs without equality carry the asked share of the edges: within a
/// factor of 2 by the engine's count (exactly the constructed edges for
/// one DC, whose nests never overlap), and the FD's edges are as counted.
#[test]
fn fd_plus_nodc_edge_shares_land_near_the_asked_share() {
    let dir = tempfile::tempdir().unwrap();
    for (_, t, _) in family(Family::FdPlusNodc, dir.path()) {
        let FamilyParams::FdPlusNodc(p) = &t.params else { unreachable!() };
        let data = dir.path().join(&t.data);
        let text = std::fs::read_to_string(dir.path().join(&t.constraints)).unwrap();
        let (fd, nodc): (Vec<&str>, Vec<&str>) = text.lines().partition(|l| l.contains("->"));
        let all = exact(&data, &text, dir.path()).edges;
        let fd_edges = exact(&data, &fd.join("\n"), dir.path()).edges;
        let nodc_edges = exact(&data, &nodc.join("\n"), dir.path()).edges;
        assert_eq!(Some(fd_edges), t.known.fd_edges, "{}", t.name);
        if p.dcs == 1 {
            assert_eq!(Some(nodc_edges), t.known.nodc_edges, "{}", t.name);
        }
        let share = nodc_edges as f64 / all as f64;
        assert!(
            share >= p.nodc_share / 2.0 && share <= p.nodc_share * 2.0,
            "{}: share {share} asked {}",
            t.name,
            p.nodc_share
        );
    }
}

/// Exactly `duplicates` rows repeat an id, at most `max_group` rows an id;
/// with the key alone, no row conflicts with more than `max_group − 1`.
#[test]
fn dup_keys_have_exactly_the_asked_duplicates_in_tiny_groups() {
    let dir = tempfile::tempdir().unwrap();
    for (_, t, table) in family(Family::DupKeys, dir.path()) {
        let FamilyParams::DupKeys(p) = &t.params else { unreachable!() };
        let ids = groups(&table, "id");
        assert_eq!((table.rows.len() - ids.len()) as u64, p.duplicates, "{}", t.name);
        assert!(ids.values().all(|&k| k <= usize::from(p.max_group)), "{}", t.name);
        if !p.extra_fds {
            let graph = exact(&dir.path().join(&t.data), "id -> name, email", dir.path());
            assert!(graph.max_degree < u32::from(p.max_group), "{}", t.name);
            assert!(graph.edges >= p.duplicates, "every copy differs: {}", t.name);
        }
    }
}

/// I_P is exactly the rows of copied quotes plus the rows of the FD's
/// collision groups (disjoint by construction), the copies are the asked
/// ones, and the DCs on the key itself add no edge.
#[test]
fn key_copies_have_the_asked_copies_and_collisions() {
    let dir = tempfile::tempdir().unwrap();
    let tables = family(Family::KeyCopies, dir.path());
    assert!(tables.len() >= 4);
    for (_, t, table) in tables {
        let FamilyParams::KeyCopies(p) = &t.params else { unreachable!() };
        let mut quotes: HashMap<(&str, &str), usize> = HashMap::new();
        let mut fd: HashMap<(&str, &str), HashMap<&str, usize>> = HashMap::new();
        for r in 0..table.rows.len() {
            let cell = |c| table.get(r, c).unwrap();
            *quotes.entry((cell("day"), cell("ticker"))).or_default() += 1;
            *fd.entry((cell("volume"), cell("open")))
                .or_default()
                .entry(cell("ticker"))
                .or_default() += 1;
        }
        let mut copied: Vec<usize> = quotes.values().copied().filter(|&k| k > 1).collect();
        copied.sort_unstable();
        let mut asked: Vec<usize> = std::iter::repeat_n(2, p.pairs as usize)
            .chain(p.groups.iter().map(|&g| g as usize))
            .collect();
        asked.sort_unstable();
        assert_eq!(copied, asked, "{}", t.name);
        let impure: Vec<&HashMap<&str, usize>> = fd.values().filter(|c| c.len() > 1).collect();
        assert_eq!(impure.len() as u64, p.collisions, "{}", t.name);
        assert!(impure.iter().all(|c| c.len() == 2), "{}", t.name);
        assert!(impure.iter().flat_map(|c| c.values()).all(|&k| k <= usize::from(p.class_max)));
        let fd_rows: usize = impure.iter().flat_map(|c| c.values()).sum();

        let data = dir.path().join(&t.data);
        let text = std::fs::read_to_string(dir.path().join(&t.constraints)).unwrap();
        let all = exact(&data, &text, dir.path());
        assert_eq!(all.problematic as usize, asked.iter().sum::<usize>() + fd_rows, "{}", t.name);
        let copies = asked.iter().map(|k| k - 1).sum::<usize>();
        assert_eq!(t.known.violating_rows, Some((copies + fd_rows - impure.len()) as u64));
        let on_key: String =
            text.lines().filter(|l| !l.contains("volume")).map(|l| format!("{l}\n")).collect();
        let key = exact(&data, "not(t1.day=t2.day&t1.ticker=t2.ticker)", dir.path());
        let on_key = exact(&data, &on_key, dir.path());
        assert_eq!(on_key.edges, key.edges, "the key's own DCs add no edge: {}", t.name);
    }
}

/// Any two measurements determine the third on clean rows; the corrupted
/// rows are exactly those where total ≠ price × qty, and they conflict.
#[test]
fn overlap_fds_corrupt_exactly_the_asked_rows() {
    let dir = tempfile::tempdir().unwrap();
    for (_, t, table) in family(Family::OverlapFds, dir.path()) {
        let FamilyParams::OverlapFds(p) = &t.params else { unreachable!() };
        let wrong = (0..table.rows.len())
            .filter(|&r| num(&table, r, "total") != num(&table, r, "price") * num(&table, r, "qty"))
            .count() as u64;
        assert_eq!(wrong, (p.error_rate * t.rows as f64).round() as u64, "{}", t.name);
        assert_eq!(Some(wrong), t.known.violating_rows);
        let text = std::fs::read_to_string(dir.path().join(&t.constraints)).unwrap();
        assert!(exact(&dir.path().join(&t.data), &text, dir.path()).problematic >= wrong);
    }
}

/// Each row's parent is another row, a level above it, but for the
/// corrupted ones: the reference DC has exactly one edge per corrupted row
/// (with its parent), and a parent's children are the branching.
#[test]
fn references_have_one_edge_per_wrong_level() {
    let dir = tempfile::tempdir().unwrap();
    for (_, t, table) in family(Family::References, dir.path()) {
        let FamilyParams::References(p) = &t.params else { unreachable!() };
        let n = table.rows.len();
        let level: Vec<u64> = (0..n).map(|r| num(&table, r, "level")).collect();
        let wrong = (1..n)
            .filter(|&r| {
                let parent = num(&table, r, "parent") as usize;
                assert!(parent < r, "{}: a parent precedes its children", t.name);
                level[r] <= level[parent]
            })
            .count() as u64;
        assert_eq!(wrong, (p.error_rate * (n - 1) as f64).round() as u64, "{}", t.name);
        assert_eq!(table.get(0, "parent"), None, "the root has no parent");
        let mut children: HashMap<u64, u64> = HashMap::new();
        (1..n).for_each(|r| *children.entry(num(&table, r, "parent")).or_default() += 1);
        let most = children.values().max().copied();
        assert_eq!(most, Some(u64::from(p.branching).min(n as u64 - 1)), "{}", t.name);
        let reference = "not(t1.parent=t2.id&t1.level<=t2.level)\n";
        let graph = exact(&dir.path().join(&t.data), reference, dir.path());
        assert_eq!(graph.edges, wrong, "{}", t.name);
        let text = std::fs::read_to_string(dir.path().join(&t.constraints)).unwrap();
        assert_eq!(text.contains("dept -> dept_name"), p.with_fd);
    }
}

/// Each `b_i` names its `a_i` but for the typos: the rows with one are
/// the known wrong rows, each FD breaks only at its own (rows off its
/// majority are at most its typos), corrupt rows are wrong under every FD,
/// and the groups are about the asked size. The graph is the union of the
/// FDs' graphs, more than any one.
#[test]
fn wide_tables_break_each_fd_only_at_their_typos() {
    let dir = tempfile::tempdir().unwrap();
    for (_, t, table) in family(Family::Wide, dir.path()) {
        let FamilyParams::Wide(p) = &t.params else { unreachable!() };
        let n = table.rows.len();
        let fds = p.fds as usize;
        // "A{i}-{a}" and "name {i}-{b}": a typo is b ≠ a.
        let typo = |r: usize, i: usize| {
            let a = table.get(r, &format!("a{i}")).unwrap().rsplit('-').next().unwrap();
            let b = table.get(r, &format!("b{i}")).unwrap().rsplit('-').next().unwrap();
            a != b
        };
        let wrong_rows = (0..n).filter(|&r| (0..fds).any(|i| typo(r, i))).count() as u64;
        assert_eq!(Some(wrong_rows), t.known.violating_rows, "{}", t.name);
        // Corrupt rows are wrong under every FD: about garbage_rate·n of
        // them (within four standard deviations), next to none without.
        let everywhere = (0..n).filter(|&r| (0..fds).all(|i| typo(r, i))).count() as f64;
        let expected = p.garbage_rate * n as f64 + p.error_rate.powi(p.fds as i32) * n as f64;
        assert!(
            (everywhere - expected).abs() <= 4.0 * expected.sqrt() + 1.0,
            "{}: {everywhere} rows wrong under every FD, {expected} expected",
            t.name
        );
        for i in 0..fds {
            let typos = (0..n).filter(|&r| typo(r, i)).count();
            let off = off_majority(&table, &format!("a{i}"), &format!("b{i}"));
            assert!(off <= typos, "{}: FD {i} off {off} > typos {typos}", t.name);
            // n uniform draws over V values: n/V = λ rows per value, λ/(1 −
            // e^−λ) per value seen.
            let lambda = n as f64 / (n as u64 / p.group_of(i)).max(2) as f64;
            let expected = lambda / (1.0 - (-lambda).exp());
            let mean = n as f64 / groups(&table, &format!("a{i}")).len() as f64;
            assert!((mean / expected - 1.0).abs() < 0.1, "{}: a{i} {mean} per value", t.name);
        }
        let text = std::fs::read_to_string(dir.path().join(&t.constraints)).unwrap();
        assert_eq!(text.lines().count(), fds, "{}", t.name);
        let graph = exact(&dir.path().join(&t.data), &text, dir.path());
        let first = exact(&dir.path().join(&t.data), "a0 -> b0\n", dir.path());
        assert!(graph.edges > first.edges, "{}: the FDs add up", t.name);
    }
}

/// More Zipf skew makes larger hubs; the wrong rows are the asked ones.
#[test]
fn hubs_grow_with_the_skew() {
    let dir = tempfile::tempdir().unwrap();
    let mut largest_by_skew = Vec::new();
    for (_, t, table) in family(Family::Hubs, dir.path()) {
        let FamilyParams::Hubs(p) = &t.params else { unreachable!() };
        let wrong = off_majority(&table, "code", "description")
            + off_majority(&table, "precinct", "borough");
        assert_eq!(wrong as u64, p.violations, "{}", t.name);
        let largest = *groups(&table, "code").values().max().unwrap() as f64;
        if p.violations == 9 && t.rows == 10_000 {
            largest_by_skew.push((p.zipf, largest / t.rows as f64));
        }
    }
    largest_by_skew.sort_by(|a, b| a.0.total_cmp(&b.0));
    assert_eq!(largest_by_skew.len(), 3);
    assert!(largest_by_skew.windows(2).all(|w| w[0].1 < w[1].1), "{largest_by_skew:?}");
}

/// The duplicated keys are the asked ones, and a smaller p makes larger
/// cliques.
#[test]
fn cliques_grow_as_p_falls() {
    let dir = tempfile::tempdir().unwrap();
    let mut copies_by_p = Vec::new();
    for (_, t, table) in family(Family::Cliques, dir.path()) {
        let FamilyParams::Cliques(p) = &t.params else { unreachable!() };
        let keys = groups(&table, "key");
        let duplicated: Vec<usize> = keys.values().copied().filter(|&k| k > 1).collect();
        assert_eq!(duplicated.len() as u64, p.duplicated_keys, "{}", t.name);
        let mean = duplicated.iter().sum::<usize>() as f64 / duplicated.len() as f64;
        copies_by_p.push((p.geometric_p, mean));
    }
    let mean_at = |p: f64| copies_by_p.iter().find(|c| c.0 == p).unwrap().1;
    assert!(mean_at(0.2) > mean_at(0.7) + 1.0, "{copies_by_p:?}");
}

/// Zip groups stay within the asked sizes; the wrong cities are the asked
/// ones.
#[test]
fn sparse_groups_have_the_asked_sizes() {
    let dir = tempfile::tempdir().unwrap();
    for (_, t, table) in family(Family::Sparse, dir.path()) {
        let FamilyParams::Sparse(p) = &t.params else { unreachable!() };
        let sizes = groups(&table, "zip");
        assert!(sizes.values().all(|&s| (p.zip_min..=p.zip_max).contains(&s)), "{}", t.name);
        assert_eq!(off_majority(&table, "zip", "city") as u64, p.wrong_rows, "{}", t.name);
    }
}

/// Hub stars and scattered wrong cities add up to the asked violations.
#[test]
fn mixed_tables_hold_both_kinds() {
    let dir = tempfile::tempdir().unwrap();
    for (_, t, table) in family(Family::Mixed, dir.path()) {
        let FamilyParams::Mixed(p) = &t.params else { unreachable!() };
        let hubs = off_majority(&table, "code", "description")
            + off_majority(&table, "precinct", "borough");
        assert_eq!(hubs as u64, p.hub_violations, "{}", t.name);
        assert_eq!(off_majority(&table, "zip", "city") as u64, p.wrong_rows, "{}", t.name);
    }
}

/// Twins hold the same rows; the equality keeps a subset of the edges;
/// exactly the asked rows are out of order.
#[test]
fn order_twins_differ_only_by_the_equality() {
    let dir = tempfile::tempdir().unwrap();
    let tables = family(Family::Order, dir.path());
    for pair in tables.chunks(2) {
        let [(_, plain, table), (_, eq, _)] = pair else { panic!("twins come in pairs") };
        assert_eq!(eq.name, format!("{}-eq", plain.name));
        let bytes = |t: &SuiteTable| std::fs::read(dir.path().join(&t.data)).unwrap();
        assert_eq!(bytes(plain), bytes(eq), "{}", plain.name);
        let FamilyParams::Order(p) = &plain.params else { unreachable!() };
        let out_of_order = (0..table.rows.len())
            .filter(|&r| num(table, r, "loss") != 1 + num(table, r, "gain") * 3 / 10)
            .count() as u64;
        assert_eq!(out_of_order, p.out_of_order, "{}", plain.name);
        let edges = |t: &SuiteTable| {
            let text = std::fs::read_to_string(dir.path().join(&t.constraints)).unwrap();
            exact(&dir.path().join(&t.data), &text, dir.path()).edges
        };
        assert!(edges(eq) < edges(plain), "{}", plain.name);
    }
}
