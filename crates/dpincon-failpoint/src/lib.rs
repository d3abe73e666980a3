//! Named failpoints for dpincon's crash and timing tests, and nothing
//! else. They exist only when this crate is built with its `failpoints`
//! feature, which the workspace's test builds turn on (the test crates'
//! dev-dependencies); without it every function here is empty, so a
//! release binary neither reads [`ENV`] nor holds the code.
//!
//! [`ENV`] arms points: `NAME[=ACTION]`, several separated by `;`, where
//! ACTION is
//! - `stop` (the default): print `dpincon failpoint NAME reached` on
//!   standard error and park the thread for good, so that a test can
//!   SIGKILL the process exactly there;
//! - `sleep(MS)`: wait MS milliseconds each time the point is passed.
//!
//! `DPINCON_FAILPOINT=after-check` stops a job after its ledger check;
//! `DPINCON_FAILPOINT='detect-task=sleep(300)'` makes every detection task
//! of an executor wait 300 ms.

use std::time::Duration;

/// The environment variable arming points.
pub const ENV: &str = "DPINCON_FAILPOINT";

/// Whether this build has failpoints (the `failpoints` feature).
pub const ENABLED: bool = cfg!(feature = "failpoints");

/// What an armed point does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Say so on standard error, then stop this thread for good.
    Stop,
    /// Wait this long, then go on.
    Sleep(Duration),
}

/// What the point `name` is armed with (always `None` without the
/// feature). A malformed [`ENV`] panics: it is a test's mistake.
#[cfg(feature = "failpoints")]
pub fn action(name: &str) -> Option<Action> {
    let spec = std::env::var(ENV).ok()?;
    spec.split(';').find_map(|point| {
        let (point, action) = point.split_once('=').unwrap_or((point, "stop"));
        (point.trim() == name).then(|| parse(action.trim(), &spec))
    })
}

#[cfg(feature = "failpoints")]
fn parse(action: &str, spec: &str) -> Action {
    if action == "stop" {
        return Action::Stop;
    }
    let ms = action.strip_prefix("sleep(").and_then(|a| a.strip_suffix(')'));
    match ms.map(str::parse) {
        Some(Ok(ms)) => Action::Sleep(Duration::from_millis(ms)),
        _ => panic!("{ENV}={spec}: `{action}` is neither stop nor sleep(MS)"),
    }
}

/// What the point `name` is armed with (always `None` without the
/// feature).
#[cfg(not(feature = "failpoints"))]
#[inline(always)]
pub fn action(_name: &str) -> Option<Action> {
    None
}

/// Whether [`hit`] stops at `name` (always false without the feature).
pub fn armed(name: &str) -> bool {
    action(name) == Some(Action::Stop)
}

/// The wait armed at `name`, for async code that sleeps on its own timer
/// rather than block a worker in [`hit`].
pub fn delay(name: &str) -> Option<Duration> {
    match action(name) {
        Some(Action::Sleep(wait)) => Some(wait),
        _ => None,
    }
}

/// Says on standard error which points [`ENV`] arms, if any, so that a
/// test can tell a binary with failpoints from one without (which says
/// nothing).
#[cfg(feature = "failpoints")]
pub fn announce() {
    if let Ok(spec) = std::env::var(ENV) {
        eprintln!("dpincon failpoints armed: {spec}");
    }
}

/// Nothing without the feature.
#[cfg(not(feature = "failpoints"))]
#[inline(always)]
pub fn announce() {}

/// Passes the point `name`: stops this thread for good after printing
/// `dpincon failpoint NAME reached` on standard error, or sleeps, as
/// armed; nothing if it is not (or without the feature).
#[cfg(feature = "failpoints")]
pub fn hit(name: &str) {
    match action(name) {
        Some(Action::Stop) => {
            eprintln!("dpincon failpoint {name} reached");
            loop {
                std::thread::park();
            }
        }
        Some(Action::Sleep(wait)) => std::thread::sleep(wait),
        None => {}
    }
}

/// Passes the point `name`: nothing without the feature.
#[cfg(not(feature = "failpoints"))]
#[inline(always)]
pub fn hit(_name: &str) {}

#[cfg(all(test, feature = "failpoints"))]
mod tests {
    use super::*;

    #[test]
    fn points_are_armed_by_name_with_their_action() {
        // SAFETY: this crate's only test that touches the environment.
        #[allow(unsafe_code)]
        unsafe {
            std::env::set_var(ENV, "after-check; detect-task=sleep(300);charge-torn=stop")
        };
        assert_eq!(action("after-check"), Some(Action::Stop));
        assert_eq!(delay("detect-task"), Some(Duration::from_millis(300)));
        assert!(armed("charge-torn") && !armed("detect-task"));
        assert_eq!((action("after-load"), delay("after-check")), (None, None));
        hit("detect-task");
        hit("after-load");
    }
}
