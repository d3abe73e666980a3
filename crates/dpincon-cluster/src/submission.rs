//! What a client may ask of the coordinator, checked before a job exists.
//!
//! A client job names a registered dataset and brings its constraints as
//! inline text; everything that protects the table (paths, the ledger,
//! the cap, the seed, exact values) is the operator's and refused here
//! with a clear message, before anything is queued or charged. Every check
//! reads only the request and the operator's configuration, never a row,
//! so a refusal tells the client nothing about the data (SPEC §8).
//!
//! Failures get one of a fixed set of public reasons
//! ([`FailureReason`]); a private job's client learns nothing else.

use std::path::Path;
use std::sync::Arc;

use dpincon_client::ClientJob;
use dpincon_engine::validate::short;
use dpincon_engine::{Constraints, DataPolicy, JobConfig, Measure, TestOptions};
use dpincon_proto::v1::{ConfigFormat, FailureReason};

use crate::gated::{GateError, GateRegistration};
use crate::registry::{Dataset, Limits};

pub use crate::refusal::{QUOTA_CHARGE, Refusal};

/// A submission that passed every check.
#[derive(Debug, Clone)]
pub struct Accepted {
    /// The dataset it runs on.
    pub dataset: Arc<Dataset>,
    /// The request as canonical JSON (what the job store keeps).
    pub request: String,
    /// ε the job will charge (0 for a job without releases).
    pub total_epsilon: f64,
    /// The job asks for exact values (test datasets only).
    pub non_private: bool,
    job: ClientJob,
}

impl Accepted {
    /// The engine's job: the dataset's registration, the constraint text
    /// and the client's options (a gated night's: the operator's).
    pub fn job_config(&self) -> JobConfig {
        let release = match self.gate() {
            Some(gate) => gate.release.clone(),
            None => self.job.release.clone(),
        };
        JobConfig {
            release,
            test: self.job.test,
            data: self.dataset.policy.clone(),
            ..JobConfig::with(self.dataset.table.clone(), self.inline_constraints())
        }
    }

    /// The constraints, carried as text to the job's process.
    fn inline_constraints(&self) -> Constraints {
        Constraints::Inline { inline: self.constraints().to_string() }
    }

    /// The constraint text: the client's inline text, or a gated night's
    /// registered constraints.
    pub fn constraints(&self) -> &str {
        match self.gate() {
            Some(gate) => &gate.constraints,
            None => &self.job.constraints,
        }
    }

    /// The registered gated audit this job is a night of, if it is one.
    pub fn gate(&self) -> Option<&Arc<GateRegistration>> {
        self.dataset.gate.as_ref().filter(|_| self.job.gated)
    }

    /// The ledger records the job's acceptance charges: ε per measure, in
    /// the engine's release order (mi, p, r), then the `over quota`
    /// verdict's ε where the dataset has `max-edges`. Empty for a job that
    /// releases nothing (exact values only, test datasets).
    /// A gated night's charges are its hold ([`crate::gated`]).
    pub fn charges(&self) -> Vec<(&'static str, f64)> {
        if let Some(gate) = self.gate() {
            return gate.hold(self.quota_epsilon());
        }
        let release = &self.job.release;
        let Some(epsilon) = release.epsilon else { return Vec::new() };
        let measures = release.measures();
        let mut charges: Vec<(&'static str, f64)> = Measure::ALL
            .into_iter()
            .filter(|m| measures.contains(m))
            .map(|m| (m.name(), epsilon))
            .collect();
        if let Some(quota) = self.quota_epsilon() {
            charges.push((QUOTA_CHARGE, quota));
        }
        charges
    }

    /// ε of the job's `over quota` verdict: on a dataset with `max-edges`,
    /// for a job that releases (an exact job reads test data only).
    pub fn quota_epsilon(&self) -> Option<f64> {
        match self.gate() {
            Some(_) => self.dataset.quota_epsilon,
            None => self.job.release.epsilon.and(self.dataset.quota_epsilon),
        }
    }
}

/// What the checks need from the coordinator.
#[derive(Debug, Clone, Copy)]
pub struct Rules<'a> {
    /// The registered datasets.
    pub datasets: &'a std::collections::BTreeMap<String, Arc<Dataset>>,
    /// Request limits.
    pub limits: &'a Limits,
}

fn refuse<T>(reason: FailureReason, detail: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal::new(reason, detail))
}

/// Parses and checks a submission.
pub fn check(text: &str, format: ConfigFormat, rules: Rules<'_>) -> Result<Accepted, Refusal> {
    use FailureReason::*;
    let value: serde_json::Value = match format {
        ConfigFormat::Json => serde_json::from_str(text)
            .map_err(|e| Refusal::new(InvalidJob, format!("job (JSON): {e}")))?,
        ConfigFormat::Toml => {
            let table: toml::Table = toml::from_str(text)
                .map_err(|e| Refusal::new(InvalidJob, format!("job (TOML): {e}")))?;
            serde_json::to_value(table).map_err(|e| Refusal::new(InvalidJob, e.to_string()))?
        }
    };
    let Some(map) = value.as_object() else {
        return refuse(InvalidJob, "a job is a table of keys");
    };
    for key in map.keys() {
        if DataPolicy::keys().contains(&key.as_str()) {
            return refuse(
                NotAllowed,
                format!(
                    "`{key}` is set by the operator for each registered dataset; a client job \
                     names a `dataset` and sends its constraints inline"
                ),
            );
        }
    }
    let job: ClientJob = serde_json::from_value(value.clone())
        .map_err(|e| Refusal::new(InvalidJob, format!("job: {e}")))?;
    // The registered names are the operator's to hand out: a client that
    // guesses wrong learns only that its guess is not one.
    let Some(dataset) = rules.datasets.get(&job.dataset) else {
        return refuse(UnknownDataset, format!("no dataset '{}' (ask the operator)", job.dataset));
    };
    if !dataset.allow_non_private {
        let test_only = dpincon_api::keys::<TestOptions>();
        if let Some(key) = map.keys().find(|k| test_only.contains(&k.as_str())) {
            return refuse(
                NotAllowed,
                format!(
                    "`{key}` would let a client see or reconstruct exact values; only datasets \
                     the operator marks allow-non-private (test data) accept it"
                ),
            );
        }
        if job.release.strategy.is_some_and(|s| !s.is_private()) {
            return refuse(
                NotAllowed,
                "strategy baseline-truemax reads the true maximum degree and is not private",
            );
        }
    }
    if job.gated {
        return check_gated(job, value, dataset);
    }
    if let Some(c) = &job.release.candidates
        && c.len() > rules.limits.max_candidates
    {
        return refuse(
            OverLimits,
            format!(
                "{} candidates; the limit is {} (each costs a pass over the graph's nodes)",
                c.len(),
                rules.limits.max_candidates
            ),
        );
    }
    let exact_repair = check_constraints(&job.constraints, dataset, rules.limits)?;
    let total_epsilon = check_budget(&job, dataset)?;
    let accepted = Accepted {
        dataset: dataset.clone(),
        request: value.to_string(),
        total_epsilon,
        non_private: job.test.non_private,
        job,
    };
    // The engine's one validation step (ε limits, strategy, selector,
    // split, candidates), and whether I_R's LP fits the dataset's memory
    // limit, on public options and the constraints' shapes only: refused
    // before queueing.
    let config = accepted.job_config();
    dpincon_engine::validate(&config)
        .and_then(|()| dpincon_engine::check_repair_memory(&config, exact_repair))
        .map_err(|e| Refusal::new(InvalidJob, e.to_string()))?;
    Ok(accepted)
}

/// A gated night: the dataset's registered audit decides everything but
/// the test options a test dataset allows.
fn check_gated(
    job: ClientJob,
    value: serde_json::Value,
    dataset: &Arc<Dataset>,
) -> Result<Accepted, Refusal> {
    use FailureReason::*;
    if dataset.gate.is_none() {
        return refuse(
            InvalidJob,
            format!("dataset '{}' has no gated audit (ask the operator)", dataset.name),
        );
    }
    if !job.constraints.is_empty() || job.release != dpincon_api::ReleaseOptions::default() {
        return refuse(
            NotAllowed,
            format!(
                "a gated night runs the audit the operator registered on dataset '{}' (its \
                 constraints, ε, measures and checks): send only `dataset` and `gated`",
                dataset.name
            ),
        );
    }
    if job.test.non_private {
        return refuse(InvalidJob, "a gated night releases DP values only: no `non-private`");
    }
    let mut accepted = Accepted {
        dataset: dataset.clone(),
        request: value.to_string(),
        total_epsilon: 0.0,
        non_private: false,
        job,
    };
    accepted.total_epsilon = accepted.charges().iter().map(|c| c.1).sum();
    Ok(accepted)
}

/// Checks a registered gated audit as a client's job on `dataset` would
/// be checked: its constraints against the limits and the declared
/// schema, ε against the dataset's minimum, the options by the engine.
pub(crate) fn check_registered(
    gate: &GateRegistration,
    dataset: &Dataset,
    limits: &Limits,
) -> Result<(), GateError> {
    let job = ClientJob {
        release: gate.release.clone(),
        ..ClientJob::new(dataset.name.clone(), gate.constraints.clone())
    };
    let exact_repair =
        check_constraints(&gate.constraints, dataset, limits).map_err(GateError::Refused)?;
    check_budget(&job, dataset).map_err(GateError::Refused)?;
    let config = JobConfig {
        release: gate.release.clone(),
        data: dataset.policy.clone(),
        ..JobConfig::with(dataset.table.clone(), Path::new("gate"))
    };
    dpincon_engine::validate(&config)
        .and_then(|()| dpincon_engine::check_repair_memory(&config, exact_repair))
        .map_err(GateError::Engine)
}

/// Checks the constraints against the limits and the dataset's declared
/// schema, and says whether they make I_R one set's exact cover (no LP).
fn check_constraints(text: &str, dataset: &Dataset, limits: &Limits) -> Result<bool, Refusal> {
    use FailureReason::*;
    if text.len() > limits.max_constraint_bytes {
        return refuse(
            OverLimits,
            format!(
                "the constraints have {} bytes; the limit is {}",
                text.len(),
                limits.max_constraint_bytes
            ),
        );
    }
    let parsed = dpincon_constraints::parse_constraints(text).map_err(|e| {
        let single = text.trim().lines().count() == 1;
        let looks_like_path = single && !text.contains('(') && !text.contains("->");
        let hint = if looks_like_path {
            " (constraints are sent as inline text, not as a path on the coordinator)"
        } else {
            ""
        };
        Refusal::new(BadConstraints, format!("{e}{hint}"))
    })?;
    // Binding needs only the declared schema: the same answer for every
    // table with these columns.
    let bound = dpincon_constraints::bind(&parsed, &dataset.schema)
        .map_err(|e| Refusal::new(BadConstraints, e.to_string()))?;
    if bound.len() > limits.max_constraints {
        return refuse(
            OverLimits,
            format!("{} denial constraints; the limit is {}", bound.len(), limits.max_constraints),
        );
    }
    if dataset.bounds_work() {
        // Only a constraint whose every looked-at pair violates has its
        // work bounded by max-edges (`dpincon_detect::residual_predicates`):
        // any other could run past its slot on some tables and not others.
        let shapes = dpincon_detect::compile_shapes(&bound)
            .map_err(|e| Refusal::new(BadConstraints, e.to_string()))?;
        let residual = shapes
            .iter()
            .map(|c| (c, dpincon_detect::residual_predicates(c)))
            .find(|(_, n)| *n > 0);
        if let Some((c, n)) = residual {
            return refuse(
                NotAllowed,
                format!(
                    "constraint `{}`: {n} of its comparisons are checked pair by pair, so its \
                     detection's work does not follow its conflicts and max-edges cannot bound \
                     it; dataset '{}' releases at fixed times and accepts constraints of \
                     equalities with at most two order comparisons, or with one `!=`",
                    c.display, dataset.name
                ),
            );
        }
    }
    dpincon_engine::repair_is_exact(&bound).map_err(|e| Refusal::new(BadConstraints, e.to_string()))
}

/// The job's total ε within the dataset's per-job limits.
fn check_budget(job: &ClientJob, dataset: &Dataset) -> Result<f64, Refusal> {
    use FailureReason::*;
    let measures = job.release.measures();
    if measures.is_empty() {
        return refuse(InvalidJob, "no measure to release");
    }
    for (i, m) in measures.iter().enumerate() {
        if measures[..i].contains(m) {
            return refuse(InvalidJob, format!("measure '{m}': use each of mi, p, r at most once"));
        }
    }
    let Some(epsilon) = job.release.epsilon else {
        if job.test.non_private {
            return Ok(0.0); // Exact values only, on a test cluster.
        }
        return refuse(InvalidJob, "give `epsilon` (per measure): a private job releases");
    };
    if !(epsilon.is_finite() && epsilon > 0.0) {
        return refuse(InvalidJob, format!("epsilon {} must be a positive number", short(epsilon)));
    }
    if epsilon < dataset.min_epsilon {
        return refuse(
            OverLimits,
            format!(
                "ε = {} per measure is below dataset '{}''s minimum {}",
                short(epsilon),
                dataset.name,
                short(dataset.min_epsilon)
            ),
        );
    }
    let quota = dataset.quota_epsilon.unwrap_or(0.0);
    let total = epsilon * measures.len() as f64 + quota;
    if total > dataset.max_job_epsilon * (1.0 + 1e-9) {
        let verdict = if quota > 0.0 {
            format!(" + {} for the quota verdict", short(quota))
        } else {
            String::new()
        };
        return refuse(
            OverLimits,
            format!(
                "the job spends ε = {} ({} measures × {}{verdict}); dataset '{}' allows {} per job",
                short(total),
                measures.len(),
                short(epsilon),
                dataset.name,
                short(dataset.max_job_epsilon)
            ),
        );
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    use crate::datasets::CoordinatorConfig;

    /// Dataset `t`, and `test` (the same table and ledger) that allows
    /// non-private jobs.
    fn config(dir: &Path) -> CoordinatorConfig {
        std::fs::write(dir.join("t.csv"), "Zip,City\n1,a\n").unwrap();
        let dataset = format!(
            "data = {:?}\nschema = \"Zip:int,City:string\"\nledger = {:?}\n\
             budget-cap = 10.0\nmax-job-epsilon = 3.0\nmin-epsilon = 0.1\naccept-deadline-channel = true\n",
            dir.join("t.csv").display().to_string(),
            dir.join("t.ledger").display().to_string(),
        );
        let text = format!(
            "state-dir = {:?}\n[limits]\nmax-constraint-bytes = 200\nmax-constraints = 2\n\
             max-candidates = 3\n[datasets.t]\n{dataset}[datasets.test]\n{dataset}\
             allow-non-private = true\n",
            dir.join("state").display().to_string(),
        );
        CoordinatorConfig::parse(&text, "c.toml").unwrap()
    }

    /// The datasets of a configuration with `t` alone, on `config`'s table
    /// and ledger (cap 10) with `keys`.
    fn only_t(dir: &Path, keys: &str) -> BTreeMap<String, Arc<Dataset>> {
        let text = format!(
            "state-dir = {:?}\n[datasets.t]\ndata = {:?}\nschema = \"Zip:int,City:string\"\n\
             ledger = {:?}\nbudget-cap = 10.0\n{keys}\n",
            dir.join("state").display().to_string(),
            dir.join("t.csv").display().to_string(),
            dir.join("t.ledger").display().to_string(),
        );
        CoordinatorConfig::parse(&text, "c.toml").unwrap().datasets
    }

    /// Submits `toml`, on dataset `test` when `allow` (else as written).
    fn submit(c: &CoordinatorConfig, allow: bool, toml: &str) -> Result<Accepted, Refusal> {
        let rules = Rules { datasets: &c.datasets, limits: &c.limits };
        let toml =
            if allow { toml.replace("dataset = \"t\"", "dataset = \"test\"") } else { toml.into() };
        check(&toml, ConfigFormat::Toml, rules)
    }

    const FD: &str = "dataset = \"t\"\nconstraints = \"FD: Zip -> City\"\n";

    #[test]
    fn a_client_job_names_a_dataset_and_gets_the_operators_ledger_and_cap() {
        let dir = tempfile::tempdir().unwrap();
        let c = config(dir.path());
        let ok =
            submit(&c, false, &format!("{FD}epsilon = 0.5\nmeasures = [\"mi\", \"p\"]")).unwrap();
        assert_eq!(ok.total_epsilon, 1.0);
        let job = ok.job_config();
        // The constraints travel as text: no file to write or to read back.
        assert_eq!(job.constraints, Constraints::Inline { inline: ok.constraints().into() });
        assert_eq!(job.data.ledger.as_deref(), Some(dir.path().join("t.ledger").as_path()));
        assert_eq!(job.data.budget_cap, Some(10.0));
        assert_eq!(job.test, TestOptions::default());
        assert_eq!(job.table.data, Some(dir.path().join("t.csv")));
        assert_eq!(job.table.schema.unwrap().to_string(), "Zip:int, City:string");
        assert_eq!(job.release.measures, Some(vec![Measure::Mi, Measure::P]));
        assert_eq!(job.release.epsilon, Some(0.5));
    }

    #[test]
    fn operator_and_test_only_keys_are_refused_with_their_name() {
        let dir = tempfile::tempdir().unwrap();
        let c = config(dir.path());
        for (extra, reason) in [
            ("seed = 7", FailureReason::NotAllowed),
            ("non-private = true", FailureReason::NotAllowed),
            ("ledger = \"/tmp/fresh.ledger\"", FailureReason::NotAllowed),
            ("budget-cap = 1000.0", FailureReason::NotAllowed),
            ("data = \"/etc/passwd\"", FailureReason::NotAllowed),
            ("strategy = \"baseline-truemax\"", FailureReason::NotAllowed),
            ("whatever = 1", FailureReason::InvalidJob),
        ] {
            let err = submit(&c, false, &format!("{FD}epsilon = 1.0\n{extra}")).unwrap_err();
            assert_eq!(err.reason, reason, "{extra}: {err:?}");
            let key = extra.split(' ').next().unwrap();
            let message = err.status().message().to_string();
            assert!(message.contains(key) || message.contains("baseline"), "{message}");
            assert!(message.contains("nothing was queued or charged"), "{message}");
        }
        // A test dataset takes the seed and exact values; never a path.
        assert!(
            submit(&c, true, &format!("{FD}epsilon = 1.0\nseed = 7\nnon-private = true")).is_ok()
        );
        let err = submit(&c, true, &format!("{FD}epsilon = 1.0\nledger = \"x\"")).unwrap_err();
        assert_eq!(err.reason, FailureReason::NotAllowed);
    }

    /// Under the dataset's memory limit I_R's LP does not fit: a job whose
    /// constraints need it is refused before queueing, unless it asks for
    /// the greedy cover; one FD of one right-hand side needs no LP.
    #[test]
    fn the_lp_is_refused_under_a_memory_limit_only_where_it_is_needed() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = config(dir.path());
        c.datasets = only_t(
            dir.path(),
            "max-job-epsilon = 3.0\nmemory-limit = \"1MiB\"\naccept-deadline-channel = true",
        );
        submit(&c, false, &format!("{FD}epsilon = 1.0")).expect("one FD's cover is I_R: no LP");
        let two = "dataset = \"t\"\nconstraints = \"FD: Zip -> City\\nFD: City -> Zip\"\n";
        let err = submit(&c, false, &format!("{two}epsilon = 1.0")).unwrap_err();
        assert_eq!(err.reason, FailureReason::InvalidJob);
        assert!(err.detail.contains("memory-limit") && err.detail.contains("greedy"), "{err:?}");
        submit(&c, false, &format!("{two}epsilon = 1.0\nir-method = \"greedy\""))
            .expect("the greedy cover keeps to the limit");
    }

    /// A fixed-time dataset with max-edges bounds every job's work: a
    /// constraint whose driver looks at pairs that do not violate is
    /// refused before the charge, naming it; without max-edges it runs.
    #[test]
    fn a_bounded_dataset_refuses_constraints_its_cap_does_not_bound() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = config(dir.path());
        let residual = "dataset = \"t\"\nconstraints = \"not(t1.Zip>t2.Zip & t1.City!=t2.City)\"\n";
        submit(&c, false, &format!("{residual}epsilon = 1.0")).expect("no max-edges: no bound");
        c.datasets =
            only_t(dir.path(), "max-job-epsilon = 4.0\nmax-rows = 100\nmax-edges = 1000000");
        assert!(c.datasets["t"].bounds_work());
        let err = submit(&c, false, &format!("{residual}epsilon = 1.0")).unwrap_err();
        assert_eq!(err.reason, FailureReason::NotAllowed);
        assert!(err.detail.contains("t1.City!=t2.City") && err.detail.contains("1 of"), "{err:?}");
        let order = "dataset = \"t\"\nconstraints = \"not(t1.Zip>t2.Zip & t1.City<t2.City)\"\n";
        for ok in [FD, order] {
            submit(&c, false, &format!("{ok}epsilon = 1.0"))
                .expect("every looked-at pair violates");
        }
    }

    #[test]
    fn constraints_datasets_and_epsilon_are_checked_without_the_data() {
        let dir = tempfile::tempdir().unwrap();
        let c = config(dir.path());
        let cases = [
            (
                "dataset = \"nope\"\nconstraints = \"FD: Zip -> City\"\nepsilon = 1.0",
                FailureReason::UnknownDataset,
                "nope",
            ),
            (
                "dataset = \"t\"\nconstraints = \"FD: Zip -> Town\"\nepsilon = 1.0",
                FailureReason::BadConstraints,
                "Town",
            ),
            (
                "dataset = \"t\"\nconstraints = \"not(t1.Zip=\"\nepsilon = 1.0",
                FailureReason::BadConstraints,
                "",
            ),
            (
                "dataset = \"t\"\nconstraints = \"/data/t.dcs\"\nepsilon = 1.0",
                FailureReason::BadConstraints,
                "not as a path",
            ),
            (
                "dataset = \"t\"\nconstraints = \"FD: Zip -> City\\nFD: City -> Zip\\nnot(t1.Zip=t2.Zip)\"\nepsilon = 1.0",
                FailureReason::OverLimits,
                "limit is 2",
            ),
            (
                &format!(
                    "dataset = \"t\"\nconstraints = \"{}\"\nepsilon = 1.0",
                    "FD: Zip -> City\\n".repeat(20)
                ),
                FailureReason::OverLimits,
                "bytes",
            ),
            (&format!("{FD}epsilon = 1.5"), FailureReason::OverLimits, "allows 3"),
            (
                &format!("{FD}epsilon = 1.0\ncandidates = [1, 2, 5, 10]"),
                FailureReason::OverLimits,
                "limit is 3",
            ),
            (&format!("{FD}epsilon = 0.05"), FailureReason::OverLimits, "minimum 0.1"),
            (&format!("{FD}epsilon = -1.0"), FailureReason::InvalidJob, "positive"),
            (FD, FailureReason::InvalidJob, "give `epsilon`"),
            (
                &format!("{FD}epsilon = 1.0\nmeasures = [\"mi\", \"mi\"]"),
                FailureReason::InvalidJob,
                "at most once",
            ),
        ];
        for (job, reason, detail) in cases {
            let err = submit(&c, false, job).unwrap_err();
            assert_eq!(err.reason, reason, "{job}: {err:?}");
            assert!(err.detail.contains(detail), "{job}: {err:?}");
        }
    }
}
