//! The reports of one run, all written by [`write_all`] into one folder:
//! `report.json`, `junit.xml`, `report.html`.

pub mod html;
pub mod json;
pub mod junit;

use std::path::Path;

use crate::history::Trend;
use crate::{AuditError, AuditRun};

/// Writes the three reports into `dir` (created if needed). Each file is
/// written to a temporary name and renamed, so none is left half-written.
pub fn write_all(dir: &Path, run: &AuditRun, trends: &[Trend]) -> Result<(), AuditError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| AuditError::Report { path: dir.to_path_buf(), message: e.to_string() })?;
    write(&dir.join("report.json"), &json::render(run))?;
    let junit = junit::render(run)
        .map_err(|e| AuditError::Report { path: dir.join("junit.xml"), message: e.to_string() })?;
    write(&dir.join("junit.xml"), &junit)?;
    write(&dir.join("report.html"), &html::render(run, trends))
}

fn write(path: &Path, text: &str) -> Result<(), AuditError> {
    let err =
        |e: std::io::Error| AuditError::Report { path: path.to_path_buf(), message: e.to_string() };
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).map_err(err)?;
    std::fs::rename(&tmp, path).map_err(err)
}

/// Escapes text for HTML.
pub(crate) fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}
