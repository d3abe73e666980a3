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

impl v1::FailureReason {
    /// The fixed public text of each reason: all a private job's client is
    /// told about a failure (refusals add details taken from the request).
    pub fn text(self) -> &'static str {
        use v1::FailureReason as R;
        match self {
            R::BadConstraints => "bad constraint syntax",
            R::UnknownDataset => "unknown dataset",
            R::BudgetExhausted => "budget exhausted",
            R::OverLimits => "over limits",
            R::NotAllowed => "not allowed",
            R::QueueFull => "queue full",
            R::InvalidJob => "invalid job",
            R::Interrupted => "interrupted by a coordinator restart",
            R::DeadlineExceeded => "deadline exceeded",
            R::OverQuota => "over quota",
            R::Internal | R::Unspecified => "internal error",
        }
    }
}

/// A job state's lower-case name (`unknown` for a value this build does
/// not know).
pub fn state_name(state: i32) -> &'static str {
    use v1::JobState as S;
    match S::try_from(state) {
        Ok(S::Queued) => "queued",
        Ok(S::Running) => "running",
        Ok(S::Succeeded) => "succeeded",
        Ok(S::Failed) => "failed",
        Ok(S::Cancelled) => "cancelled",
        _ => "unknown",
    }
}

/// A failure reason's name, `None` when unset.
pub fn reason_name(reason: i32) -> Option<&'static str> {
    Some(match v1::FailureReason::try_from(reason).ok()? {
        v1::FailureReason::Unspecified => return None,
        v1::FailureReason::BadConstraints => "bad-constraints",
        v1::FailureReason::UnknownDataset => "unknown-dataset",
        v1::FailureReason::BudgetExhausted => "budget-exhausted",
        v1::FailureReason::OverLimits => "over-limits",
        v1::FailureReason::NotAllowed => "not-allowed",
        v1::FailureReason::QueueFull => "queue-full",
        v1::FailureReason::Interrupted => "interrupted",
        v1::FailureReason::Internal => "internal",
        v1::FailureReason::InvalidJob => "invalid-job",
        v1::FailureReason::DeadlineExceeded => "deadline-exceeded",
        v1::FailureReason::OverQuota => "over-quota",
    })
}
