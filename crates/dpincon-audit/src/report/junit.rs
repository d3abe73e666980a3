//! `junit.xml`: one testsuite per dataset, one testcase per check, for CI
//! systems. Inconclusive checks are `<skipped>` (with the interval), failed
//! checks `<failure>`, datasets with no release `<error>`. A test clock,
//! a declared version and a re-served release are `<properties>`. The XML
//! is quick-junit's (nextest's JUnit model): escaping and the suites'
//! counts are its, not ours.

use quick_junit::{
    NonSuccessKind, Property, Report, SerializeError, TestCase, TestCaseStatus, TestSuite,
};

use crate::{AuditRun, Verdict};

/// The JUnit XML report.
pub fn render(run: &AuditRun) -> Result<String, SerializeError> {
    let mut report = Report::new(run.suite.as_str());
    for d in &run.datasets {
        let mut suite = TestSuite::new(d.name.as_str());
        // Test mode and re-serving, where CI tools show a suite's settings.
        let properties = [
            ("dpincon.test_clock", run.test_clock.as_deref()),
            ("dpincon.version", d.version.as_deref()),
            ("dpincon.reserved_from", d.reserved_from.as_ref().map(|f| f.job_id.as_str())),
        ];
        for (name, value) in properties {
            if let Some(value) = value {
                suite.add_property(Property::new(name, value));
            }
        }
        for c in &d.checks {
            let mut status = match c.verdict {
                Verdict::Pass => TestCaseStatus::success(),
                Verdict::Inconclusive => TestCaseStatus::skipped(),
                Verdict::Fail => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    s.set_type("threshold");
                    s
                }
                Verdict::Error => TestCaseStatus::non_success(NonSuccessKind::Error),
            };
            if c.verdict != Verdict::Pass {
                status.set_message(c.message.as_str());
            }
            let mut case = TestCase::new(c.name.as_str(), status);
            case.set_classname(format!("{}.{}", run.suite, d.name));
            suite.add_test_case(case);
        }
        report.add_test_suite(suite);
    }
    report.to_string()
}
