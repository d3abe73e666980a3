//! Test harness: real coordinator, scheduler and executor processes on
//! 127.0.0.1, a generated table, and the embedded run to compare with.
//!
//! - [`process`]: the processes (a coordinator, a Ballista cluster);
//! - [`config`]: the coordinator's configuration, tokens and ledgers;
//! - [`table`]: the generated table, client jobs, the embedded run and
//!   reports read as typed ones;
//! - [`observe`]: what a client sees (bounded waits, watches, HTTP).

#![allow(dead_code)] // Each test file uses part of the harness.

pub mod config;
pub mod observe;
pub mod pki;
pub mod process;
pub mod table;

// One name space for the test files, whichever part each uses.
#[allow(unused_imports)]
pub use {config::*, observe::*, process::*, table::*};
