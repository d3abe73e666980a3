//! What a `DetectExec` runs, as it travels to an executor: the operator
//! (`exec`) and its stream (`stream`) both read it, so it sits below them.

use dpincon_detect::ListedRows;
use serde::{Deserialize, Serialize};

use super::Blocks;

/// How a key column of X is compared (the predicate's domain).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum KeyDomain {
    /// Integers, booleans, dates: equal keys are equal raw values.
    Int,
    /// Strings: equal keys are equal values.
    Str,
    /// Floats: `-0.0 = 0.0` and every NaN is one key, which raw hashing
    /// would split; the shuffle hashes `TRY_CAST(x AS BIGINT)` instead, a
    /// function of the value that keeps equal keys together.
    Float,
}

/// Which side of a cross equality `t1.L = t2.R` a group counts
/// (`dpincon_detect::CrossEquality`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CrossSide {
    /// L, the t1 side.
    Left,
    /// R, the t2 side.
    Right,
}

/// What a `DetectExec` runs: everything it is rebuilt from on an executor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DetectSpec {
    /// The group's number (the order of the facts' equality sets).
    pub group: u32,
    /// The job's constraint text (parsed and bound on the executor as on
    /// the coordinator: the same bound list, the same ids).
    pub constraints: String,
    /// Ids of the bound constraints this group detects.
    pub members: Vec<usize>,
    /// X: the columns the input is hash-partitioned on (empty for the
    /// unbounded group: one partition, or a pair task per partition).
    pub keys: Vec<(String, KeyDomain)>,
    /// The unbounded group's pair tasks (input partition `t` reads task
    /// `t`'s blocks); `None`: one partition reads the table.
    pub blocks: Option<Blocks>,
    /// Test every pair (the reference oracle; non-private test jobs).
    pub brute_force: bool,
    /// Detect nothing: only the chain covers of the members (order pairs
    /// without equality, whose detection runs as pair tasks that each see
    /// part of the table; `dpincon_detect::chain_cover`), from one
    /// partition that reads every row.
    #[serde(default)]
    pub covers_only: bool,
    /// Detect nothing: only maxfreq of this side of the members' one cross
    /// equality, the input hash-partitioned by that side (`keys`), so the
    /// maximum over partitions is the table's.
    #[serde(default)]
    pub cross_side: Option<CrossSide>,
    /// Pairs the task's drivers may emit before it stops and reports the
    /// job over its edge cap (`dpincon_detect::DetectOptions::max_pairs`).
    #[serde(default)]
    pub max_pairs: Option<u64>,
    /// The row lists the classes carry, in global ids
    /// (`dpincon_detect::ListedRows::of` the job's constraints: the
    /// coordinator's union over X is I_P's leading count; a key's rows
    /// are I_R's key partition bound's, the margin covers' rows its union
    /// cover's).
    #[serde(default)]
    pub listed: ListedRows,
}
