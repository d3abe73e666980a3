//! The operator's coordinator configuration: an unknown or malformed key
//! of a dataset (its own, or one of the table's and policy's, which are
//! flattened into it) is refused at start naming the file and the key.

use dpincon_cluster::datasets::CoordinatorConfig;

fn refusal(dataset: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.csv"), "Zip,City\n1,a\n").unwrap();
    let text = format!(
        "state-dir = {:?}\n[datasets.t]\ndata = {:?}\nschema = \"Zip:int, City:string\"\n\
         ledger = {:?}\nbudget-cap = 5.0\nmax-job-epsilon = 1.5\n{dataset}",
        dir.path().join("state").display().to_string(),
        dir.path().join("t.csv").display().to_string(),
        dir.path().join("t.ledger").display().to_string(),
    );
    CoordinatorConfig::parse(&text, "c.toml").unwrap_err().to_string()
}

#[test]
fn a_datasets_unknown_or_malformed_key_is_named() {
    for (keys, needles) in [
        ("seed = 1\n", &["c.toml", "unknown field `seed`"][..]),
        ("max-rowz = 10\n", &["c.toml", "unknown field `max-rowz`"]),
        ("min-epsilon = \"small\"\n", &["c.toml", "line 8", "`min-epsilon`"]),
        ("max-rows = -3\n", &["c.toml", "`max-rows`"]),
        ("memory-limit = \"lots\"\n", &["c.toml", "`memory-limit`"]),
    ] {
        let err = refusal(keys);
        for needle in needles {
            assert!(err.contains(needle), "{keys}: expected {needle:?} in {err}");
        }
    }
}
