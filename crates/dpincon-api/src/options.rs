//! [`ReleaseOptions`] and [`TestOptions`]: the options of a job that more
//! than one entry point reads (`run`'s flags and job files, client jobs,
//! audit suites, the coordinator), one type each.

use serde::{Deserialize, Serialize};

use crate::{Measure, RepairMethod, Selector, Strategy};

/// How the measures are released: ε, which measures, how θ* is chosen and
/// how I_R is released. Every key is the client's to set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(rename_all = "kebab-case")]
pub struct ReleaseOptions {
    /// Privacy budget ε of EACH released measure; the job spends the sum.
    /// From 1e-5 to 1e4 (the exact samplers' limits, with the job's splits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "clap", arg(long, allow_negative_numbers = true))]
    pub epsilon: Option<f64>,
    /// Measures to release: mi, p, r (default: all three).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "clap", arg(long, value_delimiter = ','))]
    pub measures: Option<Vec<Measure>>,
    /// How θ* is chosen for I_MI and I_P: ub-direct (default), gem, ub-gem,
    /// ub-hem, hem, em, baseline-nmax, baseline-truemax (non-private,
    /// experiments only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "clap", arg(long))]
    pub strategy: Option<Strategy>,
    /// Selection mechanism: permute-and-flip (default) or em.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "clap", arg(long))]
    pub selector: Option<Selector>,
    /// Shares of ε spent before the release and on it, e.g. 0.4,0.6
    /// (default: 0.1/√ε within [0.1, 0.3] for ub-direct, 0.4 otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "clap", arg(long, value_parser = split, allow_negative_numbers = true))]
    pub epsilon_split: Option<[f64; 2]>,
    /// Candidate degree bounds θ (default 1,2,5,10,20,50,... up to n_max).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "clap", arg(long, value_delimiter = ','))]
    pub candidates: Option<Vec<u32>>,
    /// How I_R is released: combined (default: LP relaxation and greedy
    /// cover, ε split 3:1), lp, or greedy (the only one under --memory-limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "clap", arg(long))]
    pub ir_method: Option<RepairMethod>,
}

impl ReleaseOptions {
    /// The measures to release (all three unless some are named).
    pub fn measures(&self) -> Vec<Measure> {
        self.measures.clone().unwrap_or_else(|| Measure::ALL.to_vec())
    }

    /// `self`, with every option `over` sets taken from `over` (flags over
    /// a job file).
    pub fn overridden_by(self, over: ReleaseOptions) -> ReleaseOptions {
        ReleaseOptions {
            epsilon: over.epsilon.or(self.epsilon),
            measures: over.measures.or(self.measures),
            strategy: over.strategy.or(self.strategy),
            selector: over.selector.or(self.selector),
            epsilon_split: over.epsilon_split.or(self.epsilon_split),
            candidates: over.candidates.or(self.candidates),
            ir_method: over.ir_method.or(self.ir_method),
        }
    }
}

/// Options that seed the noise, show exact values or test detection: any
/// job of `run`; on a coordinator, test datasets only (the operator's
/// `allow-non-private`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(rename_all = "kebab-case")]
pub struct TestOptions {
    /// Seed the noise. Test and experiment mode only: the output says
    /// "seeded": true and must not be published.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "clap", arg(long))]
    pub seed: Option<u64>,
    /// Also report the exact values. NOT differentially private.
    #[serde(default, skip_serializing_if = "is_false")]
    #[cfg_attr(feature = "clap", arg(long))]
    pub non_private: bool,
    /// Test every pair of rows instead of the planned detection (slow).
    #[serde(default, skip_serializing_if = "is_false")]
    #[cfg_attr(feature = "clap", arg(long))]
    pub brute_force: bool,
}

impl TestOptions {
    /// `self`, with what `over` sets taken from `over` (flags over a job file).
    pub fn overridden_by(self, over: TestOptions) -> TestOptions {
        TestOptions {
            seed: over.seed.or(self.seed),
            non_private: self.non_private || over.non_private,
            brute_force: self.brute_force || over.brute_force,
        }
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// `--epsilon-split` as the pair (ε1, ε2).
#[cfg(feature = "clap")]
fn split(text: &str) -> Result<[f64; 2], crate::ParseError> {
    use crate::ParseError::{SplitShare, SplitShares};
    let shares: Vec<&str> = text.split(',').collect();
    let [e1, e2] = shares[..] else {
        return Err(SplitShares(shares.len()));
    };
    let share =
        |s: &str| s.trim().parse::<f64>().map_err(|source| SplitShare { text: s.into(), source });
    Ok([share(e1)?, share(e2)?])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_read_the_names_the_cli_takes_and_write_them_back() {
        let text = r#"
            epsilon = 0.5
            measures = ["mi", "r"]
            strategy = "ub-hem"
            selector = "em"
            epsilon-split = [0.3, 0.7]
            candidates = [1, 2]
            ir-method = "greedy"
        "#;
        let options: ReleaseOptions = toml::from_str(text).unwrap();
        assert_eq!(
            options,
            ReleaseOptions {
                epsilon: Some(0.5),
                measures: Some(vec![Measure::Mi, Measure::R]),
                strategy: Some(Strategy::UbHem),
                selector: Some(Selector::Exponential),
                epsilon_split: Some([0.3, 0.7]),
                candidates: Some(vec![1, 2]),
                ir_method: Some(RepairMethod::Greedy),
            }
        );
        let json = serde_json::to_value(&options).unwrap();
        assert_eq!(json["strategy"], "ub-hem");
        assert_eq!(json["selector"], "em");
        assert_eq!(json["ir-method"], "greedy");
        assert_eq!(json["measures"], serde_json::json!(["mi", "r"]));
        assert_eq!(serde_json::from_value::<ReleaseOptions>(json).unwrap(), options);
        // Unset options are not written: a job states only what it sets.
        assert_eq!(serde_json::to_string(&ReleaseOptions::default()).unwrap(), "{}");
    }

    #[test]
    fn a_bad_value_names_the_option_and_what_it_accepts() {
        for (text, needles) in [
            ("strategy = \"best\"", &["unknown strategy 'best'", "ub-direct", "gem"][..]),
            ("selector = \"gumbel\"", &["'gumbel'", "'em' or 'permute-and-flip'"]),
            ("ir-method = \"exact\"", &["I_R method 'exact'", "greedy, lp or combined"]),
            ("measures = [\"mc\"]", &["measure 'mc' is not released under DP", "mi, p or r"]),
            ("measures = [\"x\"]", &["unknown measure 'x' (use mi, p, r)"]),
        ] {
            let message = toml::from_str::<ReleaseOptions>(text).unwrap_err().to_string();
            for needle in needles {
                assert!(message.contains(needle), "{text}: {message}");
            }
        }
    }

    #[test]
    fn flags_override_a_job_file_option_by_option() {
        let file = ReleaseOptions {
            epsilon: Some(1.0),
            strategy: Some(Strategy::Gem),
            ..Default::default()
        };
        let flags = ReleaseOptions { epsilon: Some(2.0), ..Default::default() };
        let merged = file.overridden_by(flags);
        assert_eq!((merged.epsilon, merged.strategy), (Some(2.0), Some(Strategy::Gem)));
        assert_eq!(merged.measures(), Measure::ALL);
        let test = TestOptions { seed: Some(1), ..Default::default() }
            .overridden_by(TestOptions { non_private: true, ..Default::default() });
        assert_eq!(test, TestOptions { seed: Some(1), non_private: true, brute_force: false });
    }

    #[cfg(feature = "clap")]
    #[test]
    fn the_flags_are_the_same_options() {
        use clap::Parser;

        #[derive(Parser)]
        struct Flags {
            #[command(flatten)]
            release: ReleaseOptions,
        }
        let flags = Flags::try_parse_from([
            "x",
            "--epsilon",
            "0.5",
            "--measures",
            "mi,p",
            "--strategy",
            "gem",
            "--epsilon-split",
            "0.2,0.8",
            "--ir-method",
            "lp",
        ])
        .unwrap();
        let file: ReleaseOptions = toml::from_str(
            "epsilon = 0.5\nmeasures = [\"mi\", \"p\"]\nstrategy = \"gem\"\n\
             epsilon-split = [0.2, 0.8]\nir-method = \"lp\"",
        )
        .unwrap();
        assert_eq!(flags.release, file);
        for (flag, value, needle) in [
            ("--strategy", "best", "unknown strategy 'best'"),
            ("--measures", "mi,mc", "not released under DP"),
            ("--epsilon-split", "0.5", "two shares"),
        ] {
            let message = Flags::try_parse_from(["x", flag, value]).err().unwrap().to_string();
            assert!(message.contains(flag) && message.contains(needle), "{message}");
        }
    }
}
