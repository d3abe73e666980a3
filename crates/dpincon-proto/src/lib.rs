//! dpincon's gRPC service: the coordinator's job API.
//!
//! The service is defined in `proto/dpincon.proto` and compiled at build
//! time with protox (no system `protoc`): [`v1`] holds the generated
//! messages, client and server. Detection on executors travels as
//! Ballista plans (`dpincon-ballista`), not through this crate.

#![warn(missing_docs)]

/// The generated gRPC code of `proto/dpincon.proto` (package `dpincon.v1`).
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod v1 {
    tonic::include_proto!("dpincon.v1");
}

/// Largest message either side accepts or sends (tonic's default is
/// 4 MiB); still bounds what one bad peer can make a process allocate.
pub const MAX_MESSAGE_BYTES: usize = 512 << 20;
