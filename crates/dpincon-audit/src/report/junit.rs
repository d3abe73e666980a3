//! `junit.xml`: one testsuite per dataset, one testcase per check, for CI
//! systems. Inconclusive checks are `<skipped>` (with the interval), failed
//! checks `<failure>`, datasets with no release `<error>`. A test clock,
//! a declared version and a re-served release are `<properties>`.

use std::fmt::Write;

use super::escape;
use crate::{AuditRun, Verdict};

/// The JUnit XML report.
pub fn render(run: &AuditRun) -> String {
    let count = |v: Verdict| run.checks().filter(|c| c.verdict == v).count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\">",
        escape(&run.suite),
        run.checks().count(),
        count(Verdict::Fail),
        count(Verdict::Error),
        count(Verdict::Inconclusive)
    );
    for d in &run.datasets {
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\">",
            escape(&d.name),
            d.checks.len()
        );
        // Test mode and re-serving, where CI tools show a suite's settings.
        let properties = [
            ("dpincon.test_clock", run.test_clock.as_deref()),
            ("dpincon.version", d.version.as_deref()),
            ("dpincon.reserved_from", d.reserved_from.as_ref().map(|f| f.job_id.as_str())),
        ];
        if properties.iter().any(|(_, v)| v.is_some()) {
            out.push_str("    <properties>\n");
            for (name, value) in properties {
                if let Some(value) = value {
                    let _ = writeln!(
                        out,
                        "      <property name=\"{name}\" value=\"{}\"/>",
                        escape(value)
                    );
                }
            }
            out.push_str("    </properties>\n");
        }
        for c in &d.checks {
            let _ = write!(
                out,
                "    <testcase classname=\"{}.{}\" name=\"{}\">",
                escape(&run.suite),
                escape(&d.name),
                escape(&c.name)
            );
            let message = escape(&c.message);
            match c.verdict {
                Verdict::Pass => {}
                Verdict::Inconclusive => {
                    let _ = write!(out, "<skipped message=\"{message}\"/>");
                }
                Verdict::Fail => {
                    let _ = write!(out, "<failure type=\"threshold\" message=\"{message}\"/>");
                }
                Verdict::Error => {
                    let _ = write!(out, "<error message=\"{message}\"/>");
                }
            }
            out.push_str("</testcase>\n");
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}
