use std::collections::BTreeMap;

use dpincon_measures::{DegreeBound, ExactCounts, ProjectedCounts};

use crate::ReleaseError;

/// f(G_θ) for the θ a release needs, from one pass over the edge stream.
///
/// Private: it holds exact counts. Only the release functions read it.
#[derive(Debug, Clone)]
pub struct ProjectionTable {
    exact: ExactCounts,
    projected: BTreeMap<u32, ProjectedCounts>,
}

impl ProjectionTable {
    /// The table from the pass: the exact counts and the projections.
    pub fn new(exact: ExactCounts, projected: impl IntoIterator<Item = ProjectedCounts>) -> Self {
        let projected = projected.into_iter().map(|c| (c.theta.get(), c)).collect();
        ProjectionTable { exact, projected }
    }

    /// The exact counts (no projection).
    pub fn exact(&self) -> &ExactCounts {
        &self.exact
    }

    /// f(G_θ)'s counts. A bound at or above the maximum degree truncates
    /// nothing, so G_θ = G there and the pass need not have evaluated it.
    pub fn get(&self, theta: u32) -> Result<ProjectedCounts, ReleaseError> {
        let bound = DegreeBound::new(theta).ok_or(ReleaseError::MissingTheta(theta))?;
        if theta >= self.exact.max_degree {
            return Ok(ProjectedCounts {
                theta: bound,
                edges: self.exact.edges,
                problematic: self.exact.problematic,
            });
        }
        self.projected.get(&theta).copied().ok_or(ReleaseError::MissingTheta(theta))
    }
}
