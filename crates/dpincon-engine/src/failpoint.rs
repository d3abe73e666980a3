//! Env-gated failpoints for the crash tests (issue 14): with
//! `DPINCON_FAILPOINT=<name>`, a debug build stops for good at the point
//! of that name, after saying so on stderr, so a test can SIGKILL it
//! exactly there. Release builds compile every point to nothing.

/// The environment variable naming the point to stop at.
pub const ENV: &str = "DPINCON_FAILPOINT";

/// The points, in the order a private job passes them.
pub const POINTS: [&str; 7] = [
    "after-check",
    "after-load",
    "charge-locked",
    "charge-torn",
    "charge-written",
    "after-charge",
    "after-release",
];

/// A gated night's own points (`dpincon_engine::gate`), in its order:
/// its epochs' answers stored (after `after-load`), the fresh release's
/// pending record written (before `charge-locked`), the new epochs drawn
/// and not yet stored (after `after-release`).
pub const GATE_POINTS: [&str; 3] = ["gate-answered", "gate-pending", "gate-drawn"];

/// Whether the point `name` is armed (always false in release builds).
pub fn armed(name: &str) -> bool {
    cfg!(debug_assertions) && std::env::var_os(ENV).is_some_and(|v| v == name)
}

/// Stops this thread for good if `name` is armed, after printing
/// `dpincon failpoint NAME reached` on stderr.
pub fn hit(name: &str) {
    if armed(name) {
        eprintln!("dpincon failpoint {name} reached");
        loop {
            std::thread::park();
        }
    }
}
