//! The events a run raises, the message's lines, the `[notify]` keys, and
//! that neither an exact (non-private) count nor an engine's message nor
//! the table's path can reach a message.

use std::path::Path;

use dpincon_engine::{NoProgress, run_job};

use super::*;
use crate::outcome::{CheckResult, DatasetBudget, DatasetStatus};
use crate::verdict::ExitStatus;
use crate::{Failure, RunContext, Suite, run_suite};

fn notify(keys: &str) -> Notify {
    let text = format!("webhook = \"http://127.0.0.1:9/hook\"\n{keys}");
    let n: Notify = toml::from_str(&text).unwrap();
    n.validate().unwrap();
    n
}

fn check(name: &str, verdict: Verdict, warn_only: bool) -> CheckResult {
    let ci95 = (verdict != Verdict::Error).then_some([40, 60]);
    CheckResult {
        name: name.into(),
        dataset: "t".into(),
        measure: Measure::Mi,
        threshold: 30.0,
        at_least: false,
        value: ci95.map(|_| 50),
        ci95,
        epsilon: Some(1.0),
        verdict,
        warn_only,
        message: "the run's sentence".into(),
        gate: None,
    }
}

fn dataset(
    name: &str,
    nights_left: f64,
    refused: Option<Reason>,
    checks: Vec<CheckResult>,
) -> DatasetResult {
    DatasetResult {
        name: name.into(),
        data: "/private/warehouse/t.csv".into(),
        status: if refused.is_some() { DatasetStatus::Refused } else { DatasetStatus::Ran },
        budget: DatasetBudget {
            ledger: "/private/t.ledger".into(),
            cap: 30.0,
            spent: 27.0,
            per_run: 1.5,
            remaining: 1.5,
            nights_left,
            refused,
            plan: None,
        },
        job_id: None,
        seeded: false,
        error: refused,
        checks,
        version: None,
        settings: None,
        reserved_from: None,
    }
}

fn run(datasets: Vec<DatasetResult>) -> AuditRun {
    AuditRun {
        schema_version: 1,
        suite: "nightly".into(),
        started_unix: 0,
        test_clock: None,
        datasets,
        status: ExitStatus::Fail,
        exit_code: 2,
    }
}

fn alert(check: &str) -> CheckAlert {
    CheckAlert {
        dataset: "t".into(),
        check: check.into(),
        measure: Measure::Mi,
        ci95: [40, 60],
        threshold: 30.0,
        at_least: false,
    }
}

fn low(dataset: &str, nights_left: f64, remaining: f64) -> Event {
    Event::BudgetLow(BudgetAlert {
        dataset: dataset.into(),
        cap: 30.0,
        remaining,
        nights_left,
        below: 14.0,
    })
}

#[test]
fn failed_checks_and_low_budgets_are_the_events() {
    let run = run(vec![
        dataset(
            "t",
            1.0,
            None,
            vec![
                check("ok", Verdict::Pass, false),
                check("bad", Verdict::Fail, false),
                check("unsure", Verdict::Inconclusive, false),
                check("soft", Verdict::Fail, true),
                check("soft-unsure", Verdict::Inconclusive, true),
            ],
        ),
        // Plenty of budget, no release: neither is an alert.
        dataset("u", 14.0, None, vec![check("gone", Verdict::Error, false)]),
        // Refused for its cap: 0 nights left is the lowest budget.
        dataset("v", 0.0, Some(Reason::BudgetExhausted), vec![check("v", Verdict::Error, false)]),
        // An unreadable ledger's figures are not the ledger's: no alert.
        dataset("w", 0.0, Some(Reason::LedgerRefused), vec![check("w", Verdict::Error, false)]),
    ]);
    let all = events(&run, &notify(""));
    assert_eq!(
        all,
        vec![
            Event::Fail(alert("bad")),
            Event::Warn(alert("soft")),
            low("t", 1.0, 1.5),
            low("v", 0.0, 1.5),
        ]
    );
    // `on` keeps only the kinds it names.
    assert_eq!(events(&run, &notify("on = [\"warn\"]\n")), vec![Event::Warn(alert("soft"))]);
    let checks = events(&run, &notify("on = [\"fail\", \"warn\"]\n"));
    assert_eq!(checks, all[..2]);
    // `budget-low-nights`: strictly below it.
    let n = notify("on = [\"budget-low\"]\nbudget-low-nights = 1\n");
    let mut expected = low("v", 0.0, 1.5);
    if let Event::BudgetLow(b) = &mut expected {
        b.below = 1.0;
    }
    assert_eq!(events(&run, &n), vec![expected]);
}

#[test]
fn the_message_is_one_line_per_event() {
    let events = [Event::Fail(alert("bad")), Event::Warn(alert("soft")), low("t", 1.0, 1.5)];
    let m = message("nightly", &events).unwrap();
    assert_eq!(
        m.text,
        "[nightly] FAIL dataset t, check bad (mi): 95% interval [40, 60] above the threshold 30\n\
         [nightly] WARN dataset t, check soft (mi): 95% interval [40, 60] above the threshold 30\n\
         [nightly] BUDGET-LOW dataset t: ε 1.5 left of 30, 1 nights left (alert below 14)"
    );
    // Slack's incoming-webhook shape: `text` and nothing else.
    let json = serde_json::to_value(&m).unwrap();
    assert_eq!(json.as_object().unwrap().keys().collect::<Vec<_>>(), ["text"]);
    assert_eq!(message("nightly", &[]), None);
    // Figures as the messages show them.
    let shown = |x: f64| Figure(x).to_string();
    assert_eq!(
        (shown(0.1 + 0.2), shown(0.3 - (0.1 + 0.2)), shown(1e6), shown(1e-5)),
        ("0.3".into(), "0".into(), "1000000".into(), "0.00001".into())
    );
}

/// Sentinels no release can produce (ε = 1e4 on a 4-row table).
const EXACT: [u64; 3] = [987_654_321, 987_654_322, 987_654_323];
const CELL: &str = "9x12-secret-cell";

/// A real run of two datasets: one released, whose report also carries
/// (sentinel) exact values under `non_private`; one failed with an
/// engine-like message quoting a cell and the table's path. No message
/// holds either.
#[tokio::test]
async fn neither_exact_values_nor_engine_messages_reach_a_message() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.csv"), "A,B\na,1\na,2\na,3\nb,1\n").unwrap();
    std::fs::write(dir.path().join("t.dcs"), "FD: A -> B\n").unwrap();
    let text = |name: &str| {
        format!(
            "[[dataset]]\nname = \"{name}\"\ndata = \"t.csv\"\nconstraints = \"t.dcs\"\n\
             measures = [\"mi\", \"p\"]\nepsilon = 10000\nmax-rows = 10\nledger = \"{name}.ledger\"\n\
             budget-cap = 100000\n[[dataset.check]]\nname = \"{name}-pairs\"\nmeasure = \"mi\"\nmax = 1\n\
             [[dataset.check]]\nname = \"{name}-rows\"\nmeasure = \"p\"\nmax = 1\nseverity = \"warn\"\n"
        )
    };
    let suite = format!(
        "name = \"s\"\n[notify]\nwebhook-env = \"DPINCON_TEST_HOOK\"\n{}{}",
        text("t"),
        text("u")
    );
    let path = dir.path().join("suite.toml");
    std::fs::write(&path, suite).unwrap();
    let suite = Suite::load(&path).unwrap();
    let exact_sent = std::cell::Cell::new(false);
    let outcome = run_suite(&suite, &RunContext::now(Some(1)), async |mut config, name: &str| {
        if name == "u" {
            let table = config.config().table.name().display().to_string();
            return Err(Failure::new(Reason::UnreadableData, format!("{table}: cell '{CELL}'")));
        }
        config.config_mut().test.non_private = true;
        let mut report = run_job(config.config(), &NoProgress).await.map_err(Failure::from)?;
        let exact = report.non_private.as_mut().expect("asked for exact values");
        [exact.edges, exact.problematic, exact.rows] = EXACT;
        exact_sent.set(true);
        Ok(report)
    })
    .await;
    assert!(exact_sent.get());
    assert!(outcome.details[0].message.contains(CELL));
    let events = events(&outcome.run, suite.notify.as_ref().unwrap());
    // t: I_MI = I_P = 3 > 1 (ε = 1e4 leaves no doubt); u has no release.
    // Both spend 2e4 of 1e5 a run: 4 nights left after this one.
    let kinds: Vec<_> = events.iter().map(|e| (e.kind(), dataset_of(e))).collect();
    use EventKind::*;
    assert_eq!(kinds, [(Fail, "t"), (Warn, "t"), (BudgetLow, "t"), (BudgetLow, "u")]);
    let json = serde_json::to_string(&message("s", &events).unwrap()).unwrap();
    for secret in EXACT.map(|x| x.to_string()).iter().map(String::as_str).chain([
        CELL,
        "t.csv",
        &dir.path().display().to_string(),
        "ledger",
        "unreadable",
        "DPINCON_TEST_HOOK",
    ]) {
        assert!(!json.contains(secret), "{secret} in {json}");
    }
}

fn dataset_of(e: &Event) -> &str {
    match e {
        Event::Fail(c) | Event::Warn(c) => &c.dataset,
        Event::BudgetLow(b) => &b.dataset,
    }
}

#[test]
fn notify_keys_are_checked_at_load_naming_the_key() {
    let suite = |notify: &str| {
        format!(
            "name = \"s\"\n[notify]\n{notify}\n[[dataset]]\nname = \"t\"\ndata = \"t.csv\"\n\
             constraints = \"t.dcs\"\nepsilon = 1\nmax-rows = 10\nledger = \"t.ledger\"\n\
             budget-cap = 5\n[[dataset.check]]\nname = \"c\"\nmeasure = \"mi\"\nmax = 1\n"
        )
    };
    let parse = |notify: &str| Suite::parse(&suite(notify), Path::new("suite.toml"));
    let ok =
        parse("webhook-env = \"HOOK\"\non = [\"fail\", \"budget-low\"]\ntimeout = 0.5").unwrap();
    let n = ok.notify.unwrap();
    assert!(n.fires(EventKind::Fail) && !n.fires(EventKind::Warn));
    assert_eq!((n.timeout(), n.budget_low_nights()), (Duration::from_millis(500), 14.0));
    let cases = [
        (
            "webhook = \"https://h/x\"\nwebhook-env = \"HOOK\"",
            "give `webhook` or `webhook-env`, not both",
        ),
        ("on = [\"fail\"]", "needs `webhook` (the URL) or `webhook-env`"),
        ("webhook = \"ftp://h/x\"", "[notify]: `webhook`: must be an http or https URL, not ftp:"),
        ("webhook = \"hooks.slack.com/T0/SECRET\"", "[notify]: `webhook`: not a URL"),
        ("webhook-env = \"\"", "`webhook-env` = \"\" is not an environment variable's name"),
        ("webhook-env = \"H\"\non = []", "`on` is empty"),
        ("webhook-env = \"H\"\non = [\"inconclusive\"]", "unknown variant `inconclusive`"),
        ("webhook-env = \"H\"\nbudget-low-nights = -1", "`budget-low-nights` = -1 must be"),
        ("webhook-env = \"H\"\ntimeout = 0", "`timeout` = 0 must be"),
        ("webhook-env = \"H\"\ntimeout = \"5s\"", "line 4: `timeout`: invalid type: string"),
        ("webhook-env = \"H\"\nchannel = \"#x\"", "line 4: unknown field `channel`"),
    ];
    for (keys, expected) in cases {
        let e = parse(keys).unwrap_err().to_string();
        assert!(e.starts_with("suite.toml: ") && e.contains(expected), "{keys}: {e}");
        assert!(!e.contains("SECRET"), "the URL was quoted: {e}");
    }
}

#[test]
fn an_unset_variable_is_an_error_when_sending_not_at_load() {
    let n: Notify = toml::from_str("webhook-env = \"DPINCON_TEST_SURELY_UNSET_HOOK\"").unwrap();
    n.validate().unwrap();
    assert_eq!(
        n.url().unwrap_err().to_string(),
        "the environment variable DPINCON_TEST_SURELY_UNSET_HOOK is not set"
    );
}

/// A suite may be debug-printed: the webhook's URL (a secret in Slack's
/// case) is left out, the rest shown.
#[test]
fn debug_printing_never_shows_the_webhook_url() {
    let n = notify("budget-low-nights = 3");
    let shown = format!("{n:?}");
    assert!(!shown.contains("127.0.0.1") && !shown.contains("/hook"), "{shown}");
    assert!(shown.contains("not shown") && shown.contains("budget_low_nights"), "{shown}");
}
