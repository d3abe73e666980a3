//! dpincon-api: the vocabulary of a dpincon job, declared once and parsed
//! once. Every entry point (the CLI's flags and job files, client jobs,
//! coordinator datasets, audit suites) reads its options into these
//! types at the edge; nothing further in parses a name, a size or a span
//! of time again.
//!
//! The crate depends on no other dpincon crate and links no table,
//! DataFusion, algorithm or network code: the light client
//! (`dpincon-client`) shares these types with the engine, and
//! `dpincon-release` builds on them, not the reverse. serde reads every
//! type with the kebab-case keys and names the CLI takes; with the `clap`
//! feature, clap derives the flags from the same structs.
//!
//! - [`options`]: [`ReleaseOptions`] and [`TestOptions`].
//! - [`measure`]: [`Measure`], the released measures.
//! - [`choice`]: [`Strategy`], [`Selector`], [`RepairMethod`].
//! - [`size`]: [`ByteSize`] and [`Duration`].
//! - [`keys`](mod@keys): the keys a type accepts, so a split between two key
//!   sets is a type, never a hand-kept list.
//! - [`ParseError`]: a refused value, with what is accepted.
//! - [`Figure`]: a number as a person reads it (`0.8`, not
//!   `0.7999999999999999`).
//! - `toml_file` (feature `toml`): files of keys read into these types,
//!   each refusal naming its line and key.

#![warn(missing_docs)]

pub mod choice;
mod error;
mod figure;
pub mod keys;
pub mod measure;
mod named;
pub mod options;
pub mod size;
#[cfg(feature = "toml")]
pub mod toml_file;

pub use choice::{RepairMethod, Selector, Strategy};
pub use error::ParseError;
pub use figure::Figure;
pub use keys::keys;
pub use measure::Measure;
pub use options::{ReleaseOptions, TestOptions};
pub use size::{ByteSize, Duration};
