//! A client job: what a client may ask of a coordinator. The type is the
//! line between client and operator: a key it does not declare (a path, a
//! ledger, a cap) cannot be sent; the coordinator names the operator's.

use dpincon_api::{ReleaseOptions, TestOptions};
use serde::{Deserialize, Serialize};

/// A job on a registered dataset (kebab-case keys, JSON or TOML).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ClientJob {
    /// The dataset, as the coordinator's operator registered it.
    pub dataset: String,
    /// The constraints, inline (never a path on the coordinator); none
    /// for a gated night, which runs the operator's.
    #[serde(default)]
    pub constraints: String,
    /// A gated night of the audit the operator registered on the dataset
    /// (its constraints, ε, gate and checks): the job then carries no
    /// constraints or release options of its own, and its report holds
    /// each measure's verdict from its epoch (`gated`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gated: bool,
    /// How the measures are released.
    #[serde(flatten)]
    pub release: ReleaseOptions,
    /// Seed, exact values, brute force: test datasets only.
    #[serde(flatten)]
    pub test: TestOptions,
}

impl ClientJob {
    /// A gated night on `dataset` (its operator's registered audit).
    pub fn gated(dataset: impl Into<String>) -> Self {
        ClientJob { gated: true, ..ClientJob::new(dataset, "") }
    }

    /// A job on `dataset` under `constraints`, every option at its default.
    pub fn new(dataset: impl Into<String>, constraints: impl Into<String>) -> Self {
        ClientJob {
            dataset: dataset.into(),
            constraints: constraints.into(),
            gated: false,
            release: ReleaseOptions::default(),
            test: TestOptions::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use dpincon_api::{Measure, Strategy};

    use super::*;

    #[test]
    fn a_client_job_is_a_flat_table_and_nothing_else() {
        let text = "dataset = \"t\"\nconstraints = \"FD: A -> B\"\nepsilon = 1\n\
                    measures = [\"r\"]\nstrategy = \"gem\"\nseed = 3\n";
        let job: ClientJob = toml::from_str(text).unwrap();
        assert_eq!(job.release.measures, Some(vec![Measure::R]));
        assert_eq!(job.release.strategy, Some(Strategy::Gem));
        assert_eq!(job.test.seed, Some(3));
        let json = serde_json::to_value(&job).unwrap();
        assert_eq!(json["epsilon"], 1.0);
        assert_eq!(serde_json::from_value::<ClientJob>(json).unwrap(), job);
        for extra in ["ledger = \"x\"", "data = \"/etc/passwd\"", "whatever = 1"] {
            let message =
                toml::from_str::<ClientJob>(&format!("{text}{extra}\n")).unwrap_err().to_string();
            let key = extra.split(' ').next().unwrap();
            assert!(message.contains(&format!("unknown field `{key}`")), "{message}");
        }
    }
}
