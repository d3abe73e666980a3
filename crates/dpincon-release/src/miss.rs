//! How an interval's 5% miss is shared (README, "Intervals"): the
//! release noise's two-sided range and the high-confidence bounds the
//! upper end rests on, by a union bound. Every module that draws such a
//! bound reads its share here.

/// The probability that an interval holds the measure.
pub const COVERAGE: f64 = 0.95;
/// The release noise's share of the miss (two-sided).
pub(crate) const NOISE_MISS: f64 = 0.04;
/// Each high-confidence bound's share (row count, degree bound).
pub(crate) const BOUND_MISS: f64 = 0.005;
