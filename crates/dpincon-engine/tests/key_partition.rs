//! I_R's key partition bound, end to end: a key's duplicates beside an FD
//! of other rows. LP is k/2 on each k-clique of copies, each set's cover
//! sees its own conflicts only, so L was below I_R; the key's cover plus
//! the greedy matching of the rows outside its cliques is I_R here, and
//! the released 2·L (at an ε that leaves it unmoved) reads it.

use dpincon_engine::{JobConfig, Measure, NoProgress, run_job};

#[tokio::test]
async fn a_key_beside_an_fd_lifts_the_lower_bound_to_i_r() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("day,ticker,close,volume,open\n");
    let mut row = |day: u32, ticker: &str, volume: u32| {
        csv += &format!("{day},{ticker},{},{volume},{}\n", day * 7 % 13, volume % 5);
    };
    // Copies: cliques of 3, 2 and 4 rows under the key (cover 2 + 1 + 3).
    for (day, ticker, copies) in [(1, "A", 3), (2, "B", 2), (3, "C", 4)] {
        for i in 0..copies {
            row(day, ticker, 100 + 10 * day + i);
        }
    }
    // `volume, open -> ticker` broken on other rows only: an edge and two
    // stars of two leaves (cover 1 each).
    for (day, ticker, volume) in [(10, "X", 500), (11, "Y", 500), (12, "X", 505), (13, "Y", 505)] {
        row(day, ticker, volume);
    }
    row(14, "Y", 505);
    for (day, ticker) in [(15, "X"), (16, "Y"), (17, "Y")] {
        row(day, ticker, 510);
    }
    for day in 20..60 {
        row(day, "Z", 1000 + day);
    }
    let data = dir.path().join("t.csv");
    std::fs::write(&data, csv).unwrap();
    let dcs = dir.path().join("t.dcs");
    std::fs::write(
        &dcs,
        "not(t1.day=t2.day & t1.ticker=t2.ticker)\nday, ticker -> close\nvolume, open -> ticker\n",
    )
    .unwrap();
    let mut job = JobConfig::new(&data, &dcs);
    job.release.epsilon = Some(10_000.0);
    job.release.measures = Some(vec![Measure::R]);
    job.test.seed = Some(3);
    job.test.non_private = true;
    let report = run_job(&job, &NoProgress).await.unwrap();
    let exact = report.non_private.as_ref().unwrap().repair.unwrap();
    assert_eq!(exact.min_cover, Some(9), "{exact:?}");
    assert_eq!(exact.lp_relaxation, 7.5, "LP: 1.5 + 1 + 2 on the cliques, 3 on the FD");
    let released = report.measures.as_ref().and_then(|m| m.r.as_ref()).unwrap();
    let twice_lower = released.parts.iter().find(|p| p.statistic == "twice-lower-bound");
    assert_eq!(twice_lower.map(|p| p.value), Some(18), "{released:?}");
    // The sets share `ticker`: the upper bound is min(U, the union cover),
    // both 9 here, at the union's sensitivity 1 + 1 (the key) + 2 (the FD).
    let upper = released.parts.iter().find(|p| p.statistic == "union-cover");
    assert_eq!(upper.map(|p| (p.value, p.sensitivity)), Some((9, 4)), "{released:?}");
    assert_eq!(released.sensitivity, 4, "{released:?}");
}
