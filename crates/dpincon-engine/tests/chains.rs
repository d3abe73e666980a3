//! An order pair's chain cover, end to end: a table read from CSV with
//! string, float (NaN, -0.0) and integer columns and NULLs, the constraint
//! bound and encoded as a job does, its cover against the exact minimum
//! cover of the detected graph (`repair::exact_repair`, branch and bound).
//! `dpincon-detect` proves the chain cover on integer keys; this checks
//! what the encoding adds (string order, floats, NULLs, t2 written first).

use dpincon_engine::repair::{EXACT_COVER_WORK, exact_repair};
use dpincon_engine::{JobConfig, NoProgress, load};

/// 90 rows of small domains from a seeded stream (ties are common).
fn table(dir: &std::path::Path) -> std::path::PathBuf {
    let mut state = 0x853c_49e6_748f_ea9bu64;
    let mut next = move |m: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % m
    };
    let names = ["ann", "bob", "Cat", "dan", "eve", ""];
    let ratios = ["-1.5", "0.0", "-0.0", "2.25", "NaN", "", "7"];
    let mut csv = String::from("name,score,ratio,grp\n");
    for _ in 0..90 {
        let name = names[next(names.len() as u64) as usize];
        let score = match next(12) {
            0 => String::new(),
            v => v.to_string(),
        };
        let ratio = ratios[next(ratios.len() as u64) as usize];
        let grp = ["A", "B", "C"][next(3) as usize];
        csv += &format!("{name},{score},{ratio},{grp}\n");
    }
    let path = dir.join("t.csv");
    std::fs::write(&path, csv).unwrap();
    path
}

#[tokio::test]
async fn the_chain_cover_is_the_minimum_cover_of_the_detected_graph() {
    let dir = tempfile::tempdir().unwrap();
    let data = table(dir.path());
    let pairs = [
        "not(t1.name<t2.name & t1.score>t2.score)",
        "not(t1.grp=t2.grp & t1.score<=t2.score & t1.ratio>=t2.ratio)",
        "not(t2.ratio<t1.ratio & t1.name>=t2.name)",
        "not(t1.grp=t2.grp & t1.name<t2.name & t1.ratio>t2.ratio)",
        "not(t1.ratio<=t2.ratio & t1.score>t2.score)",
        "not(t1.score<t2.score & t1.ratio<t2.ratio)",
        "not(t1.grp=t2.grp & t1.name>t2.name & t1.score>=t2.score)",
    ];
    let mut covered = 0;
    for (i, dc) in pairs.iter().enumerate() {
        let constraints = dir.path().join(format!("{i}.dcs"));
        std::fs::write(&constraints, dc).unwrap();
        let mut job = JobConfig::new(&data, &constraints);
        job.table.schema = Some("name:string,score:int,ratio:float,grp:string".parse().unwrap());
        job.test.non_private = true;
        let loaded = load(&job, &NoProgress).await.unwrap();
        let sum = loaded.facts.covers.sum.expect("one order pair is a cover set");
        assert!(sum.exact && sum.sets == 1 && sum.union.is_none(), "{dc}: {sum:?}");
        let exact = exact_repair(&loaded.graph, 0, EXACT_COVER_WORK, 1);
        assert_eq!(Some(sum.sum), exact.min_cover, "{dc}");
        assert_eq!(loaded.facts.covers.largest, sum.sum, "{dc}");
        covered += sum.sum;
    }
    assert!(covered > 100, "the table has conflicts under every pair");
}
