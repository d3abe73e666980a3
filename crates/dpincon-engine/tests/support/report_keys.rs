//! The report's JSON key paths, as `report_keys.txt` pins them: shared by
//! this crate's `tests/report.rs` and `dpincon-cluster`'s test harness
//! (each includes this file with `#[path]`).

use std::collections::BTreeSet;

/// Every key path of `value`: `a.b` for a key in an object, `a[]` for the
/// elements of an array.
pub fn key_paths(value: &serde_json::Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    walk(value, "", &mut out);
    out
}

fn walk(value: &serde_json::Value, path: &str, out: &mut BTreeSet<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, v) in map {
                let path = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                out.insert(path.clone());
                walk(v, &path, out);
            }
        }
        serde_json::Value::Array(items) => {
            for v in items {
                walk(v, &format!("{path}[]"), out);
            }
        }
        _ => {}
    }
}
