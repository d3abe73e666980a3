//! `report.json`: the [`AuditRun`] as serialised (schema in the README,
//! `schema_version` 1).

use crate::AuditRun;

/// The JSON report.
pub fn render(run: &AuditRun) -> String {
    serde_json::to_string_pretty(run).expect("the report serialises") + "\n"
}
