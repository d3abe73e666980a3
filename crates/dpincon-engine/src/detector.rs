//! Where a job read in this process detects its conflicts
//! ([`LocalDetector`], the default). The cluster replaces the whole load,
//! reading included, through [`crate::JobLoader`] (`dpincon-ballista`);
//! everything after (the edge stream, measures, releases) is the same code.

use std::future::Future;

use dpincon_detect::{DetectOptions, Detection, KeyConstraint, Relation, detect};

use crate::EngineError;

/// Finds the conflict graph of an encoded relation.
pub trait ConflictDetector: Sync {
    /// Detects every violation of `constraints` in `relation`.
    fn detect(
        &self,
        relation: &Relation,
        constraints: &[KeyConstraint],
        options: DetectOptions,
    ) -> impl Future<Output = Result<Detection, EngineError>> + Send;
}

/// Detection on this process's threads.
#[derive(Debug, Default, Clone, Copy)]
pub struct LocalDetector;

impl ConflictDetector for LocalDetector {
    async fn detect(
        &self,
        relation: &Relation,
        constraints: &[KeyConstraint],
        options: DetectOptions,
    ) -> Result<Detection, EngineError> {
        Ok(detect(relation, constraints, options)?)
    }
}
