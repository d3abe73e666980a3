//! The nightly year, checked with the tests' own conflict checker: a burst
//! moves I_MI and I_P by far more than a quiet night's drift does.

mod common;

use std::collections::BTreeSet;

use common::{Checker, dcs, read_csv};
use dpincon_generate::{NIGHTLY_CONSTRAINTS, NightlyOptions, generate_nightly};

#[test]
fn bursts_move_the_measures_and_quiet_nights_barely() {
    let dir = tempfile::tempdir().unwrap();
    let options = NightlyOptions {
        rows: 2_000,
        nights: 6,
        bursts: vec![4],
        burst_rows: Some(40),
        seed: 11,
        ..NightlyOptions::default()
    };
    let stats = generate_nightly(&options, dir.path()).unwrap();
    let constraints = dcs(NIGHTLY_CONSTRAINTS);
    // (I_MI, I_P) of nights 2 to 6.
    let measures: Vec<(usize, usize)> = stats.per_night[1..]
        .iter()
        .map(|t| {
            let table = read_csv(&dir.path().join(&t.file));
            assert_eq!(table.rows.len(), 2_000);
            let edges = Checker::new(&table).edges(&constraints);
            let rows: BTreeSet<usize> = edges.iter().flat_map(|&(i, j)| [i, j]).collect();
            // Every wrong row conflicts with its group, and nothing else does
            // but the rows of its group.
            assert!(rows.len() as u64 >= t.wrong_rows, "night {}: {} rows", t.night, rows.len());
            (edges.len(), rows.len())
        })
        .collect();
    let [quiet_a, _, burst, quiet_b, quiet_c] = measures[..] else { unreachable!() };
    for quiet in [quiet_a, quiet_b, quiet_c] {
        assert!(burst.0 > quiet.0 + 40 * 10, "I_MI: {measures:?}");
        assert!(burst.1 > quiet.1 + 40, "I_P: {measures:?}");
    }
    // The drift and the trend move a quiet night by a few wrong rows' worth.
    let spread = |f: fn(&(usize, usize)) -> usize| {
        let v = [quiet_a, quiet_b, quiet_c].map(|m| f(&m));
        v.iter().max().unwrap() - v.iter().min().unwrap()
    };
    assert!(spread(|m| m.0) < (burst.0 - quiet_b.0) / 3, "I_MI: {measures:?}");
    assert!(spread(|m| m.1) < (burst.1 - quiet_b.1) / 3, "I_P: {measures:?}");
}
