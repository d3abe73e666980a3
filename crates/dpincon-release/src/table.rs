//! The private table of f(G_θ) (and the class counts) a release reads.

use std::collections::BTreeMap;

use dpincon_measures::{DegreeBound, ExactCounts, ProjectedCounts};

use crate::ReleaseError;
use crate::classes::ClassFacts;

/// f(G_θ) for the θ a release needs, from one pass over the edge stream.
///
/// Private: it holds exact counts. Only the release functions read it.
#[derive(Debug, Clone)]
pub struct ProjectionTable {
    exact: ExactCounts,
    projected: BTreeMap<u32, ProjectedCounts>,
    classes: Option<ClassFacts>,
}

impl ProjectionTable {
    /// The table from the pass: the exact counts and the projections.
    pub fn new(exact: ExactCounts, projected: impl IntoIterator<Item = ProjectedCounts>) -> Self {
        let projected = projected.into_iter().map(|c| (c.theta.get(), c)).collect();
        ProjectionTable { exact, projected, classes: None }
    }

    /// The table with the classes behind I_P's class count
    /// ([`crate::TableFacts::classes`]).
    pub fn with_classes(mut self, classes: Option<ClassFacts>) -> Self {
        self.classes = classes;
        self
    }

    /// I_P's class count at τ; an error when the table has no classes
    /// (a driver bug: the choice was made from the same facts).
    pub fn capped_classes(&self, tau: u32) -> Result<u64, ReleaseError> {
        let classes = self.classes.as_ref().ok_or(ReleaseError::MissingClasses)?;
        Ok(classes.capped(tau))
    }

    /// I_P's leading count over several X (the fifteenth round); an error
    /// when the table has none (a driver bug, as above).
    pub fn leading_count(&self) -> Result<u64, ReleaseError> {
        let leading = self.classes.as_ref().and_then(|c| c.leading);
        Ok(leading.ok_or(ReleaseError::MissingClasses)?.count)
    }

    /// The exact counts (no projection).
    pub fn exact(&self) -> &ExactCounts {
        &self.exact
    }

    /// f(G_θ)'s counts, for a θ the pass evaluated.
    ///
    /// A θ the pass did not evaluate is an error whatever the graph, even
    /// when θ is at or above the maximum degree (where G_θ = G): a lookup
    /// that failed only below the maximum degree would end a charged job
    /// iff a private fact holds (issue 26). [`Prepared::thetas`] lists
    /// every θ a release may look up.
    ///
    /// [`Prepared::thetas`]: crate::Prepared::thetas
    pub fn get(&self, theta: u32) -> Result<ProjectedCounts, ReleaseError> {
        self.projected.get(&theta).copied().ok_or(ReleaseError::MissingTheta(theta))
    }

    /// The unprojected counts as f(G_θ) at the true maximum degree (at
    /// least 1): `baseline-truemax`, NOT private, needs no pass lookup.
    pub fn at_max_degree(&self) -> ProjectedCounts {
        let theta = self.exact.max_degree.max(1);
        ProjectedCounts {
            theta: DegreeBound::new(theta).expect("θ ≥ 1"),
            edges: self.exact.edges,
            problematic: self.exact.problematic,
        }
    }
}
