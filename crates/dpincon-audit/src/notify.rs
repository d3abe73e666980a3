//! Alerts: a Slack-compatible webhook told about a run's failed checks,
//! failed `warn` checks and low budgets.
//!
//! A message is built from the [`AuditRun`] alone, field by field from
//! typed values, never from a report's text: it can hold only what the
//! reports may (DP releases and public settings), and of those only the
//! check's 95% interval, its threshold and a dataset's ε left. The engine's
//! messages ([`crate::Detail`]) are not in an `AuditRun`, the table's path
//! is never read here, and the webhook's URL (Slack's holds a secret
//! token) is never printed: not in the message, not in an error.
//!
//! Sending is best effort. The caller sends after the run is in the
//! history and its reports are written, and a webhook that refuses, fails
//! or times out is one line on standard error: alerts never change an
//! audit's result.

use std::time::Duration;

use dpincon_api::{Figure, Measure};
use reqwest::Url;
use serde::{Deserialize, Serialize};

use crate::outcome::{AuditRun, DatasetResult};
use crate::reason::Reason;
use crate::verdict::Verdict;

/// `budget-low` fires when a dataset has fewer nights left than this
/// (default of `budget-low-nights`): two weeks to raise a cap or plan.
pub const DEFAULT_BUDGET_LOW_NIGHTS: f64 = 14.0;
/// Default `timeout`, seconds: a webhook that has not answered by then
/// will not, and a nightly job should not hang on it.
pub const DEFAULT_TIMEOUT_SECS: f64 = 5.0;
/// Largest `timeout`, seconds.
pub const MAX_TIMEOUT_SECS: f64 = 300.0;

/// What may raise an alert.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    /// A check failed (its whole interval is above the threshold): exit 2.
    Fail,
    /// A `warn` check failed: exit 1.
    Warn,
    /// A dataset has fewer nights of budget left than `budget-low-nights`.
    BudgetLow,
}

impl EventKind {
    /// Every kind, the default of `on`.
    pub const ALL: [EventKind; 3] = [EventKind::Fail, EventKind::Warn, EventKind::BudgetLow];

    /// The suite's name of the kind.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Fail => "fail",
            EventKind::Warn => "warn",
            EventKind::BudgetLow => "budget-low",
        }
    }
}

/// The suite's `[notify]` table. Its `Debug` leaves the URL out (a
/// suite may be debug-printed; a Slack URL is a secret).
#[derive(Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Notify {
    /// The webhook's URL (http or https). Not serialised: a Slack URL is
    /// a secret, and nothing that writes a suite out should carry it.
    #[serde(default, skip_serializing)]
    pub webhook: Option<String>,
    /// The environment variable holding the URL instead, so the secret
    /// stays out of the suite file.
    #[serde(default)]
    pub webhook_env: Option<String>,
    /// The events to send (default: all three).
    #[serde(default)]
    pub on: Option<Vec<EventKind>>,
    /// `budget-low` fires below this many nights left.
    #[serde(default)]
    pub budget_low_nights: Option<f64>,
    /// Seconds to wait for the webhook (connect and answer).
    #[serde(default)]
    pub timeout: Option<f64>,
}

impl std::fmt::Debug for Notify {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notify")
            .field("webhook", &self.webhook.as_ref().map(|_| "(set, not shown)"))
            .field("webhook_env", &self.webhook_env)
            .field("on", &self.on)
            .field("budget_low_nights", &self.budget_low_nights)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl Notify {
    /// Whether `kind` is sent.
    pub fn fires(&self, kind: EventKind) -> bool {
        self.on.as_deref().unwrap_or(&EventKind::ALL).contains(&kind)
    }

    /// The `budget-low` threshold in nights.
    pub fn budget_low_nights(&self) -> f64 {
        self.budget_low_nights.unwrap_or(DEFAULT_BUDGET_LOW_NIGHTS)
    }

    /// How long to wait for the webhook.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.timeout.unwrap_or(DEFAULT_TIMEOUT_SECS))
    }

    /// Checks the table at suite load; the message names the key. An
    /// unset `webhook-env` variable is not an error here: it is read when
    /// sending, and then only warned about (the audit still counts).
    pub(crate) fn validate(&self) -> Result<(), NotifyKeyError> {
        match (&self.webhook, &self.webhook_env) {
            (Some(_), Some(_)) => return Err(NotifyKeyError::Both),
            (None, None) => return Err(NotifyKeyError::Neither),
            (Some(url), None) => {
                webhook_url(url).map_err(NotifyKeyError::Webhook)?;
            }
            (None, Some(name)) => {
                if name.is_empty() || name.contains(['=', '\0']) {
                    return Err(NotifyKeyError::EnvName(name.clone()));
                }
            }
        }
        if self.on.as_ref().is_some_and(Vec::is_empty) {
            return Err(NotifyKeyError::NoEvents);
        }
        if let Some(n) = self.budget_low_nights
            && !(n.is_finite() && n >= 0.0)
        {
            return Err(NotifyKeyError::BudgetLowNights(n));
        }
        if let Some(t) = self.timeout
            && !(t.is_finite() && t > 0.0 && t <= MAX_TIMEOUT_SECS)
        {
            return Err(NotifyKeyError::Timeout(t));
        }
        Ok(())
    }

    /// The webhook's URL: `webhook`, or `$webhook-env`. Errors never quote
    /// the URL (it may hold a token).
    pub fn url(&self) -> Result<Url, NotifyError> {
        match (&self.webhook, &self.webhook_env) {
            (Some(url), _) => Ok(webhook_url(url)?),
            (None, Some(name)) => match std::env::var(name) {
                Ok(url) => webhook_url(&url)
                    .map_err(|source| NotifyError::EnvUrl { name: name.clone(), source }),
                Err(_) => Err(NotifyError::EnvUnset(name.clone())),
            },
            (None, None) => Err(NotifyError::NoWebhook),
        }
    }
}

/// The URL parser's error (the `url` crate's, which reqwest does not
/// re-export by name).
pub type UrlParseError = <Url as std::str::FromStr>::Err;

/// Why a webhook URL is refused; no message quotes the URL (it may hold a
/// token).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// Not a URL at all.
    #[error("not a URL ({0})")]
    NotAUrl(#[source] UrlParseError),
    /// Neither http nor https.
    #[error("must be an http or https URL, not {0}:")]
    Scheme(String),
    /// No host to send to.
    #[error("the URL has no host")]
    NoHost,
}

/// Why `[notify]` is refused at suite load, naming the key; no message
/// quotes the URL (it may hold a token).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NotifyKeyError {
    /// Both `webhook` and `webhook-env`.
    #[error("give `webhook` or `webhook-env`, not both")]
    Both,
    /// Neither.
    #[error(
        "needs `webhook` (the URL) or `webhook-env` (the name of the environment variable \
         holding it)"
    )]
    Neither,
    /// `webhook` is no usable URL.
    #[error("`webhook`: {0}")]
    Webhook(#[source] UrlError),
    /// `webhook-env` is no variable's name.
    #[error("`webhook-env` = {0:?} is not an environment variable's name")]
    EnvName(String),
    /// `on = []`.
    #[error("`on` is empty (remove [notify] to send nothing)")]
    NoEvents,
    /// `budget-low-nights` negative or not finite.
    #[error("`budget-low-nights` = {0} must be a finite number ≥ 0")]
    BudgetLowNights(f64),
    /// `timeout` outside (0, MAX_TIMEOUT_SECS].
    #[error("`timeout` = {0} must be a number of seconds above 0 and at most {MAX_TIMEOUT_SECS}")]
    Timeout(f64),
}

/// Why an alert was not sent: one line, without the webhook's URL. The
/// cause's words are in the message (as the audit prints it) and the
/// cause itself is kept as the source.
#[derive(Debug, thiserror::Error)]
pub enum NotifyError {
    /// `[notify]` names no webhook.
    #[error("no webhook")]
    NoWebhook,
    /// `webhook-env` names a variable that is not set.
    #[error("the environment variable {0} is not set")]
    EnvUnset(String),
    /// `webhook-env`'s variable holds no usable URL.
    #[error("${name}: {source}")]
    EnvUrl {
        /// The variable.
        name: String,
        /// Why its URL is refused.
        #[source]
        source: UrlError,
    },
    /// `webhook` is no usable URL.
    #[error(transparent)]
    Url(#[from] UrlError),
    /// The message cannot be encoded.
    #[error(transparent)]
    Encode(#[from] serde_json::Error),
    /// The request failed: refused, timed out, or another transport error.
    #[error("{message}")]
    Http {
        /// What happened and its causes, on one line, without the URL.
        message: String,
        /// The client's error, its URL removed.
        #[source]
        source: reqwest::Error,
    },
    /// The webhook answered, with a status other than 2xx.
    #[error("the webhook answered {0}")]
    Status(reqwest::StatusCode),
}

/// `url` as an http or https URL with a host; the error does not quote it.
fn webhook_url(url: &str) -> Result<Url, UrlError> {
    let parsed = Url::parse(url).map_err(UrlError::NotAUrl)?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(UrlError::Scheme(parsed.scheme().into()));
    }
    if parsed.host().is_none() {
        return Err(UrlError::NoHost);
    }
    Ok(parsed)
}

/// A failed check, as an alert tells it: public values only (the check's
/// public settings and the release's 95% interval).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckAlert {
    /// The dataset's name in the suite.
    pub dataset: String,
    /// The check's name.
    pub check: String,
    /// `mi`, `p` or `r`.
    pub measure: Measure,
    /// The release's 95% interval (wholly above the threshold).
    pub ci95: [i64; 2],
    /// The threshold, in the measure's units.
    pub threshold: f64,
    /// The threshold is a minimum (the interval lies below it).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub at_least: bool,
}

/// A dataset whose budget runs low: public ε figures (SPEC §8).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetAlert {
    /// The dataset's name in the suite.
    pub dataset: String,
    /// The cap in force.
    pub cap: f64,
    /// ε left after this run.
    pub remaining: f64,
    /// Nights left at this rate.
    pub nights_left: f64,
    /// The suite's `budget-low-nights`.
    pub below: f64,
}

/// One thing worth an alert.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Event {
    /// A check with severity `fail` failed.
    Fail(CheckAlert),
    /// A check with severity `warn` failed.
    Warn(CheckAlert),
    /// A dataset's budget is low.
    BudgetLow(BudgetAlert),
}

impl Event {
    /// Its kind, as `on` names it.
    pub fn kind(&self) -> EventKind {
        match self {
            Event::Fail(_) => EventKind::Fail,
            Event::Warn(_) => EventKind::Warn,
            Event::BudgetLow(_) => EventKind::BudgetLow,
        }
    }

    /// One line of the message.
    fn line(&self, suite: &str) -> String {
        match self {
            Event::Fail(c) | Event::Warn(c) => format!(
                "[{suite}] {} dataset {}, check {} ({}): 95% interval [{}, {}] {} the \
                 threshold {}",
                self.kind().name().to_uppercase(),
                c.dataset,
                c.check,
                c.measure,
                c.ci95[0],
                c.ci95[1],
                if c.at_least { "below" } else { "above" },
                Figure(c.threshold)
            ),
            Event::BudgetLow(b) => format!(
                "[{suite}] BUDGET-LOW dataset {}: ε {} left of {}, {} nights left (alert below {})",
                b.dataset,
                Figure(b.remaining),
                Figure(b.cap),
                Figure(b.nights_left),
                Figure(b.below)
            ),
        }
    }
}

/// The events `run` raises, in suite order (a dataset's checks, then its
/// budget), those `notify.on` does not name left out.
///
/// The rule follows the exit codes: a failed check is `fail` (exit 2), a
/// failed `warn` check is `warn` (exit 1). An inconclusive check is not an
/// alert (the noise hid the answer; the reports show it), nor is a dataset
/// without a release (exit 3, its reason in the reports and on standard
/// error). `budget-low` fires when `nights_left` is below
/// `budget-low-nights`, also for a dataset refused for an exhausted budget
/// (0 nights), but not when its ledger could not be read (then its figures
/// are not the ledger's).
pub fn events(run: &AuditRun, notify: &Notify) -> Vec<Event> {
    let mut events = Vec::new();
    for d in &run.datasets {
        for c in &d.checks {
            let (Verdict::Fail, Some(ci95)) = (c.verdict, c.ci95) else { continue };
            let alert = CheckAlert {
                dataset: c.dataset.clone(),
                check: c.name.clone(),
                measure: c.measure,
                ci95,
                threshold: c.threshold,
                at_least: c.at_least,
            };
            events.push(if c.warn_only { Event::Warn(alert) } else { Event::Fail(alert) });
        }
        if let Some(low) = budget_low(d, notify.budget_low_nights()) {
            events.push(low);
        }
    }
    events.retain(|e| notify.fires(e.kind()));
    events
}

fn budget_low(d: &DatasetResult, below: f64) -> Option<Event> {
    let b = &d.budget;
    if b.refused == Some(Reason::LedgerRefused) || b.nights_left >= below {
        return None;
    }
    Some(Event::BudgetLow(BudgetAlert {
        dataset: d.name.clone(),
        cap: b.cap,
        remaining: b.remaining,
        nights_left: b.nights_left,
        below,
    }))
}

/// A Slack-compatible incoming-webhook message (`{"text": ...}`), which
/// other chat tools' webhooks accept as well.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// One line per event.
    pub text: String,
}

/// The message for `events` of suite `suite` (`None`: nothing to send).
pub fn message(suite: &str, events: &[Event]) -> Option<Message> {
    let lines: Vec<String> = events.iter().map(|e| e.line(suite)).collect();
    (!lines.is_empty()).then(|| Message { text: lines.join("\n") })
}

/// POSTs `message` as JSON to `url`; waits at most `timeout`. The error is
/// one line without the URL: a refused connection, a timeout, or a
/// status other than 2xx.
pub async fn send(url: Url, message: &Message, timeout: Duration) -> Result<(), NotifyError> {
    let body = serde_json::to_vec(message)?;
    let client = reqwest::Client::builder()
        .timeout(timeout)
        // A redirect would send the alert where the suite did not say.
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(describe)?;
    let response = client
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body)
        .send()
        .await
        .map_err(describe)?;
    let status = response.status();
    if !status.is_success() {
        return Err(NotifyError::Status(status));
    }
    Ok(())
}

/// The run's alert, if any, sent to the suite's webhook: `Ok(n)` with the
/// number of events sent (0: nothing to send), or why it was not sent.
pub async fn notify(run: &AuditRun, notify: &Notify) -> Result<usize, NotifyError> {
    let events = events(run, notify);
    let Some(message) = message(&run.suite, &events) else { return Ok(0) };
    send(notify.url()?, &message, notify.timeout()).await?;
    Ok(events.len())
}

/// A reqwest error without its URL, with its causes (`connection
/// refused`) on one line as the message; the error itself (its URL
/// removed) as the source.
fn describe(e: reqwest::Error) -> NotifyError {
    let what = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "cannot connect"
    } else {
        "failed"
    };
    let mut message = what.to_string();
    let e = e.without_url();
    let mut source: Option<&dyn std::error::Error> = Some(&e);
    while let Some(s) = source {
        message.push_str(": ");
        message.push_str(&s.to_string());
        source = s.source();
    }
    NotifyError::Http { message, source: e }
}

#[cfg(test)]
#[path = "notify_tests.rs"]
mod tests;
