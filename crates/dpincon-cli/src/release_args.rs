//! The release options shared by `run` (and the experiments) and `submit`:
//! one definition, so the flags mean the same locally and on a coordinator.

/// ε, measures and how θ* is chosen.
#[derive(Debug, Clone, clap::Args)]
pub struct ReleaseArgs {
    /// Privacy budget ε of EACH released measure; the job spends the sum.
    /// From 1e-5 to 1e4 (the exact samplers' limits, with the job's splits).
    #[arg(long, allow_negative_numbers = true)]
    pub epsilon: Option<f64>,
    /// Measures to release (default mi,p,r).
    #[arg(long, value_delimiter = ',')]
    pub measures: Option<Vec<String>>,
    /// How θ* is chosen for I_MI and I_P: ub-direct (default), gem, ub-gem,
    /// ub-hem, hem, em, baseline-nmax, baseline-truemax (non-private,
    /// experiments only).
    #[arg(long)]
    pub strategy: Option<String>,
    /// Selection mechanism: permute-and-flip (default) or em.
    #[arg(long)]
    pub selector: Option<String>,
    /// How I_R is released: combined (default: LP relaxation and greedy
    /// cover, ε split 3:1), lp, or greedy (the only one under --memory-limit).
    #[arg(long)]
    pub ir_method: Option<String>,
    /// Shares of ε spent before the release and on it, e.g. 0.4,0.6
    /// (default: 0.1/√ε within [0.1, 0.3] for ub-direct, 0.4 otherwise).
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    epsilon_split: Option<Vec<f64>>,
    /// Candidate degree bounds θ (default 1,2,5,10,20,50,... up to n_max).
    #[arg(long, value_delimiter = ',')]
    pub candidates: Option<Vec<u32>>,
}

impl ReleaseArgs {
    /// `--epsilon-split` as the pair (ε1, ε2), if given.
    pub fn epsilon_split(&self) -> Result<Option<[f64; 2]>, String> {
        match self.epsilon_split.as_deref() {
            None => Ok(None),
            Some(&[e1, e2]) => Ok(Some([e1, e2])),
            Some(other) => Err(format!(
                "--epsilon-split takes two shares, ε1,ε2 (e.g. 0.4,0.6), got {} value(s)",
                other.len()
            )),
        }
    }
}
