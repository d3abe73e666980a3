//! The engine's failpoints for the crash tests (issue 14): the names of
//! the points a job passes. Arming and stopping are `dpincon_failpoint`'s,
//! compiled in only with its `failpoints` feature (test builds): with
//! `DPINCON_FAILPOINT=<name>`, the process stops for good at the point of
//! that name, after saying so on stderr, so a test can SIGKILL it exactly
//! there. Release builds have no points.

pub use dpincon_failpoint::{ENV, armed, hit};

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
