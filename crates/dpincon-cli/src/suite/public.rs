//! The public tables of the paper's experiments as suite families (with
//! `--public-data`): `public-noise`, an RNoise (α = 0.01) and a CONoise
//! (200 iterations) copy of each table's clean file, seed 1, as the paper
//! makes them inconsistent; and `public-dirty`, the dirty files that ship
//! with Tax, Stock and Hospital. The generated suite never needs them.

use std::path::Path;

use super::Entry;

/// RNoise's α and CONoise's iterations, as in the paper's experiments.
const ALPHA: f64 = 0.01;
const ITERATIONS: u64 = 200;
/// Their seed: fixed, so every run scores the same copies.
const SEED: u64 = 1;

/// Folder, clean table, shipped dirty table.
const TABLES: [(&str, &str, Option<&str>); 5] = [
    ("Adult", "inputDB2_sample10k_seed864.csv", None),
    ("Flight", "inputDB_standin1k.csv", None),
    ("Hospital", "inputDB_sample10k.csv", Some("inputDB_sample10k_dirty.csv")),
    ("Stock", "inputDB_sample10k.csv", Some("inputDB_sample10k_dirty.csv")),
    ("Tax", "inputDB_sample10k.csv", Some("inputDB_sample10k_dirty.csv")),
];

pub const NOISE: &str = "public-noise";
pub const DIRTY: &str = "public-dirty";

/// The public tables under `dir` (noisy copies written to `out`), of the
/// families `keep` names (all without a filter). A table missing from `dir`
/// is skipped with a note on standard error.
pub fn entries(dir: &Path, out: &Path, keep: Option<&[String]>) -> anyhow::Result<Vec<Entry>> {
    let wanted = |family: &str| keep.is_none_or(|k| k.iter().any(|f| f == family));
    let mut entries = Vec::new();
    if wanted(NOISE) {
        std::fs::create_dir_all(out)
            .map_err(|e| anyhow::anyhow!("cannot create '{}': {e}", out.display()))?;
    }
    for (folder, clean, dirty) in TABLES {
        let constraints = dir.join(folder).join("dcs.txt");
        let clean = dir.join(folder).join(clean);
        if !clean.is_file() || !constraints.is_file() {
            eprintln!("note: no {} with its dcs.txt: skipped", clean.display());
            continue;
        }
        let name = folder.to_lowercase();
        if wanted(NOISE) {
            let dcs = dpincon_generate::read_constraints(&constraints)?;
            let rnoised = out.join(format!("{name}-rnoise.csv"));
            dpincon_generate::rnoise(&clean, &dcs, ALPHA, SEED, &rnoised)?;
            let conoised = out.join(format!("{name}-conoise.csv"));
            dpincon_generate::conoise(&clean, &dcs, ITERATIONS, SEED, false, &conoised)?;
            for (kind, data) in [("rnoise", rnoised), ("conoise", conoised)] {
                entries.push(Entry {
                    name: format!("{name}-{kind}"),
                    family: NOISE.into(),
                    data,
                    constraints: constraints.clone(),
                });
            }
        }
        if let Some(dirty) = dirty.map(|d| dir.join(folder).join(d)).filter(|d| d.is_file())
            && wanted(DIRTY)
        {
            entries.push(Entry {
                name: format!("{name}-dirty"),
                family: DIRTY.into(),
                data: dirty,
                constraints,
            });
        }
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in `Stock` folder (no /work/shared needed): its clean table
    /// gets an RNoise and a CONoise copy, its dirty one is taken as is;
    /// missing folders are skipped, and a filter keeps one family.
    #[test]
    fn public_tables_become_noisy_copies_and_dirty_tables() {
        let dir = tempfile::tempdir().unwrap();
        let stock = dir.path().join("Stock");
        std::fs::create_dir_all(&stock).unwrap();
        let mut csv = String::from("Date,Ticker,Price\n");
        for i in 0..200 {
            csv += &format!("2020-01-{:02},T{},{}\n", i % 28 + 1, i / 28, 100 + i);
        }
        std::fs::write(stock.join("inputDB_sample10k.csv"), &csv).unwrap();
        std::fs::write(stock.join("inputDB_sample10k_dirty.csv"), &csv).unwrap();
        std::fs::write(
            stock.join("dcs.txt"),
            "not(t1.Date=t2.Date&t1.Ticker=t2.Ticker&t1.Price!=t2.Price)\n",
        )
        .unwrap();
        let out = dir.path().join("out");
        let all = entries(dir.path(), &out, None).unwrap();
        let names: Vec<(&str, &str)> =
            all.iter().map(|e| (e.name.as_str(), e.family.as_str())).collect();
        assert_eq!(
            names,
            [("stock-rnoise", NOISE), ("stock-conoise", NOISE), ("stock-dirty", DIRTY)]
        );
        for e in &all[..2] {
            let noisy = std::fs::read_to_string(&e.data).unwrap();
            assert_eq!(noisy.lines().count(), 201, "{}", e.name);
            assert_ne!(noisy, csv, "{}: noise changed something", e.name);
        }
        let dirty = entries(dir.path(), &out, Some(&[DIRTY.to_string()])).unwrap();
        assert_eq!(dirty.len(), 1);
        assert_eq!(dirty[0].data, stock.join("inputDB_sample10k_dirty.csv"));
    }
}
