//! `--tables`: tables of one's own for the suite, beside or instead of a
//! generated manifest. A TOML list, paths relative to its own directory:
//!
//! ```toml
//! [[table]]
//! name = "tax-dups"          # unique; the files' label in every output
//! family = "held-out"        # the per-family table and LOFO group by it
//! data = "tax-dups.csv"
//! constraints = "tax.dcs"
//! ```
//!
//! This is how a table nobody tuned on is judged by the same criteria as
//! the training suite (`benches/heldout.sh`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::Entry;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TableList {
    table: Vec<ListedTable>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListedTable {
    name: String,
    family: String,
    data: PathBuf,
    constraints: PathBuf,
}

/// The tables `path` lists, their files resolved against its directory and
/// checked to exist, so a typo fails before anything is scored.
pub fn entries(path: &Path) -> anyhow::Result<Vec<Entry>> {
    let at = path.display();
    let text =
        std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("cannot read '{at}': {e}"))?;
    let list: TableList =
        toml::from_str(&text).map_err(|e| anyhow::anyhow!("'{at}': not a table list: {e}"))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut names = HashSet::new();
    list.table
        .into_iter()
        .map(|t| {
            let name = &t.name;
            if name.is_empty() || t.family.is_empty() {
                anyhow::bail!("'{at}': table '{name}': name and family must not be empty");
            }
            if !names.insert(name.clone()) {
                anyhow::bail!("'{at}': table '{name}' is listed twice");
            }
            let (data, constraints) = (dir.join(&t.data), dir.join(&t.constraints));
            for file in [&data, &constraints] {
                if !file.is_file() {
                    anyhow::bail!("'{at}': table '{name}': no file '{}'", file.display());
                }
            }
            Ok(Entry { name: t.name, family: t.family, data, constraints })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, list: &str) -> PathBuf {
        std::fs::write(dir.join("t.csv"), "A,B\n1,2\n").unwrap();
        std::fs::write(dir.join("t.dcs"), "A -> B\n").unwrap();
        let path = dir.join("tables.toml");
        std::fs::write(&path, list).unwrap();
        path
    }

    #[test]
    fn listed_tables_resolve_against_the_list() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            "[[table]]\nname = \"a\"\nfamily = \"f\"\ndata = \"t.csv\"\nconstraints = \"t.dcs\"\n\
             [[table]]\nname = \"b\"\nfamily = \"g\"\ndata = \"t.csv\"\nconstraints = \"t.dcs\"\n",
        );
        let got = entries(&path).unwrap();
        let names: Vec<(&str, &str)> =
            got.iter().map(|e| (e.name.as_str(), e.family.as_str())).collect();
        assert_eq!(names, [("a", "f"), ("b", "g")]);
        assert_eq!(got[0].data, dir.path().join("t.csv"));
        assert_eq!(got[1].constraints, dir.path().join("t.dcs"));
    }

    #[test]
    fn bad_lists_name_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let table = |name: &str, data: &str| {
            format!(
                "[[table]]\nname = \"{name}\"\nfamily = \"f\"\ndata = \"{data}\"\nconstraints = \"t.dcs\"\n"
            )
        };
        let cases = [
            (table("a", "t.csv") + &table("a", "t.csv"), "table 'a' is listed twice"),
            (table("a", "missing.csv"), "no file"),
            (table("", "t.csv"), "must not be empty"),
            (table("a", "t.csv").replace("family", "kind"), "not a table list"),
        ];
        for (list, want) in cases {
            let err = entries(&write(dir.path(), &list)).unwrap_err().to_string();
            assert!(err.contains(want) && err.contains("tables.toml"), "{list}: {err}");
        }
    }
}
