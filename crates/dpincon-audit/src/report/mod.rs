//! The reports of one run, all written by [`write_all`] into one folder:
//! `report.json`, `junit.xml`, `report.html`; and [`text`], its lines for
//! a console.

pub mod html;
pub mod json;
pub mod junit;
pub mod text;

use std::io::Write;
use std::path::Path;

use dpincon_source::OutputFile;

use crate::history::Trend;
use crate::{AuditError, AuditRun};

/// Writes the three reports into `dir` (created if needed), each whole or
/// not at all (`dpincon_source::OutputFile`, as every dpincon report).
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
    // Reports hold DP releases only (never an exact value): an ordinary file.
    let mut out = OutputFile::create(path).map_err(err)?;
    out.write_all(text.as_bytes()).map_err(err)?;
    out.commit().map_err(err)
}

/// Escapes text for HTML.
pub(crate) fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}
