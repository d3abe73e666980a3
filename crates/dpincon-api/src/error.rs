//! [`ParseError`]: why a value of the vocabulary was refused, naming the
//! value and what is accepted.

use thiserror::Error;

/// A value the vocabulary does not accept. Each message names the value
/// and the accepted spellings; the caller (serde, clap or a config loader)
/// adds the key or flag.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ParseError {
    /// Not a θ-selection strategy.
    #[error("unknown strategy '{0}' (use one of {names})", names = crate::Strategy::names())]
    Strategy(String),
    /// Not a selection mechanism.
    #[error("unknown selection mechanism '{0}': expected 'em' or 'permute-and-flip'")]
    Selector(String),
    /// Not an I_R release method.
    #[error("unknown I_R method '{0}' (use greedy, lp or combined)")]
    RepairMethod(String),
    /// A measure that exists but is never released under DP.
    #[error(
        "measure '{0}' is not released under DP (SPEC §3: I_D has sensitivity 1 on a 0/1 \
         value; I_MC is #P-complete): use mi, p or r"
    )]
    NotReleased(String),
    /// Not a measure.
    #[error("unknown measure '{0}' (use mi, p, r)")]
    Measure(String),
    /// Not a table format.
    #[error("unknown data format '{0}' (use csv or parquet)")]
    DataFormat(String),
    /// Not a byte size.
    #[error("'{0}' is not a memory size (use e.g. 1GiB, 512MiB, 800M)")]
    ByteSize(String),
    /// Not a duration.
    #[error("'{0}' is not a duration (use e.g. 90s, 10m, 2h, 1d, 52w)")]
    Duration(String),
    /// `--epsilon-split` of another number of shares than two.
    #[error("takes two shares, ε1,ε2 (e.g. 0.4,0.6), got {0} value(s)")]
    SplitShares(usize),
    /// A share of `--epsilon-split` that is not a number.
    #[error("share '{text}': {source}")]
    SplitShare {
        /// The share as given.
        text: String,
        /// Why it is not a number.
        #[source]
        source: std::num::ParseFloatError,
    },
}
