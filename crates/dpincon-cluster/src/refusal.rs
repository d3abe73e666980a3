//! A refused submission and its public reason: what the checks
//! ([`crate::submission`]) and a gated registration ([`crate::gated`])
//! answer with.

use dpincon_proto::v1::FailureReason;
use tonic::Status;

/// A submission refused, with the public reason and a message that quotes
/// only the request and the operator's configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// The public reason.
    pub reason: FailureReason,
    /// Details for the client.
    pub detail: String,
}

impl Refusal {
    pub(crate) fn new(reason: FailureReason, detail: impl Into<String>) -> Self {
        Refusal { reason, detail: detail.into() }
    }

    /// The gRPC status a refused submission answers with.
    pub fn status(&self) -> Status {
        let message =
            format!("{}: {} (nothing was queued or charged)", self.reason.text(), self.detail);
        match self.reason {
            FailureReason::UnknownDataset => Status::not_found(message),
            FailureReason::NotAllowed => Status::permission_denied(message),
            FailureReason::QueueFull => Status::resource_exhausted(message),
            FailureReason::BudgetExhausted => Status::failed_precondition(message),
            FailureReason::Internal | FailureReason::Interrupted => Status::internal(message),
            _ => Status::invalid_argument(message),
        }
    }
}

/// The ledger's name for the `over quota` verdict's charge.
pub const QUOTA_CHARGE: &str = "quota";
