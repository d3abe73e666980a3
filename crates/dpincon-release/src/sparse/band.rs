//! The public question an epoch asks each night: is the statistic still
//! inside its band? (README, "Gated verdicts", severities and the moved
//! gate.)
//!
//! A check `measure <= T` is the band (−∞, T], `>=` is [T, ∞), the moved
//! gate |f − r| ≤ T₀ is [r − T₀, r + T₀], and several checks on one
//! measure cut the line into regions on which every check's answer is
//! constant: the epoch gates on the region the last release fell in,
//! intersected with the moved gate's band. The night's query is the
//! statistic's distance outside the band, which moves by at most as much
//! as the statistic does because the band is public and fixed.

use serde::{Deserialize, Serialize};

use crate::ReleaseError;

/// Which way a check looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Direction {
    /// `measure <= threshold` (the audit's `max`).
    AtMost,
    /// `measure >= threshold`.
    AtLeast,
}

impl Direction {
    /// Whether `value` satisfies `value <op> threshold`.
    pub fn holds(self, value: i64, threshold: i64) -> bool {
        match self {
            Direction::AtMost => value <= threshold,
            Direction::AtLeast => value >= threshold,
        }
    }

    /// The smallest value on the check's upper side: above it for
    /// `<=` (T + 1), at or above it for `>=` (T). Every region boundary is
    /// one of these cuts.
    fn cut(self, threshold: i64) -> i128 {
        match self {
            Direction::AtMost => i128::from(threshold) + 1,
            Direction::AtLeast => i128::from(threshold),
        }
    }
}

/// A closed integer interval with at least one end: the values of the
/// night's statistic for which the epoch's answer is `pass`.
///
/// Integer ends because every statistic is an integer; a fractional
/// threshold T becomes ⌊T⌋ for `<=` and ⌈T⌉ for `>=` (the same checks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Band {
    #[serde(skip_serializing_if = "Option::is_none")]
    lo: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hi: Option<i64>,
}

impl Band {
    /// (−∞, t]: the check `measure <= t`.
    pub fn at_most(t: i64) -> Band {
        Band { lo: None, hi: Some(t) }
    }

    /// [t, ∞): the check `measure >= t`.
    pub fn at_least(t: i64) -> Band {
        Band { lo: Some(t), hi: None }
    }

    /// The band of one check.
    pub fn of(direction: Direction, threshold: i64) -> Band {
        match direction {
            Direction::AtMost => Band::at_most(threshold),
            Direction::AtLeast => Band::at_least(threshold),
        }
    }

    /// [lo, hi].
    ///
    /// # Errors
    /// [`ReleaseError::Invalid`] when lo > hi.
    pub fn between(lo: i64, hi: i64) -> Result<Band, ReleaseError> {
        if lo > hi {
            return Err(ReleaseError::Invalid(format!("a gate's band [{lo}, {hi}] is empty")));
        }
        Ok(Band { lo: Some(lo), hi: Some(hi) })
    }

    /// [r − width, r + width] (saturating): the moved gate around the last
    /// released value r, which is public, so the band is too.
    pub fn around(released: i64, width: u64) -> Band {
        let w = i64::try_from(width).unwrap_or(i64::MAX);
        Band { lo: Some(released.saturating_sub(w)), hi: Some(released.saturating_add(w)) }
    }

    /// The widest band containing `point` on which every check of
    /// `checks` has one answer: the region between the checks' cuts that
    /// `point` (the last release's value) lies in. `None` when there are
    /// no checks (no band: nothing to gate on).
    pub fn region(checks: &[(Direction, i64)], point: i64) -> Option<Band> {
        if checks.is_empty() {
            return None;
        }
        let p = i128::from(point);
        let cuts = checks.iter().map(|&(d, t)| d.cut(t));
        // lo = the largest cut ≤ p; hi = the smallest cut > p, minus one.
        let lo = cuts.clone().filter(|&c| c <= p).max();
        let hi = cuts.filter(|&c| c > p).min().map(|c| c - 1);
        let fit = |v: i128| i64::try_from(v).ok();
        Some(Band { lo: lo.and_then(fit), hi: hi.and_then(fit) })
    }

    /// The intersection, or `None` when it is empty.
    pub fn intersect(self, other: Band) -> Option<Band> {
        let lo = match (self.lo, other.lo) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        let hi = match (self.hi, other.hi) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        match (lo, hi) {
            (Some(l), Some(h)) if l > h => None,
            _ => Some(Band { lo, hi }),
        }
    }

    /// The lower end, if any.
    pub fn lo(&self) -> Option<i64> {
        self.lo
    }

    /// The upper end, if any.
    pub fn hi(&self) -> Option<i64> {
        self.hi
    }

    /// Whether the band has an end (a band with neither asks nothing).
    pub fn is_bounded(&self) -> bool {
        self.lo.is_some() || self.hi.is_some()
    }

    /// Whether `value` lies in the band.
    pub fn contains(&self, value: i64) -> bool {
        self.lo.is_none_or(|l| value >= l) && self.hi.is_none_or(|h| value <= h)
    }

    /// How far `value` lies outside the band: max(value − hi, lo − value)
    /// over the ends it has; ≤ 0 inside. One row moves it by at most as
    /// much as it moves `value` (each term does, and so does their
    /// maximum), which is why the epoch's noise needs only the statistic's
    /// sensitivity.
    pub fn distance(&self, value: i64) -> i128 {
        let v = i128::from(value);
        let above = self.hi.map(|h| v - i128::from(h));
        let below = self.lo.map(|l| i128::from(l) - v);
        match (above, below) {
            (Some(a), Some(b)) => a.max(b),
            (Some(a), None) => a,
            (None, Some(b)) => b,
            // Refused at the epoch's construction; outside any band.
            (None, None) => i128::MAX,
        }
    }

    /// The answer the band gives a check on every value in it: `Some(true)`
    /// when all satisfy it, `Some(false)` when none does, `None` when the
    /// band straddles the threshold (never for a band from
    /// [`Band::region`] over checks that include this one).
    pub fn answers(&self, direction: Direction, threshold: i64) -> Option<bool> {
        let inside = |end: Option<i64>| end.map(|e| direction.holds(e, threshold));
        // A check's satisfying set is a half-line, so the band's two ends
        // decide it; an open end reaches the side the check rejects or
        // accepts depending on its direction.
        let lo = inside(self.lo).unwrap_or(direction == Direction::AtMost);
        let hi = inside(self.hi).unwrap_or(direction == Direction::AtLeast);
        (lo == hi).then_some(lo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_is_zero_or_negative_inside_and_the_overshoot_outside() {
        let b = Band::between(10, 20).unwrap();
        assert_eq!(b.distance(15), -5);
        assert_eq!(b.distance(10), 0);
        assert_eq!(b.distance(23), 3);
        assert_eq!(b.distance(4), 6);
        assert_eq!(Band::at_most(5).distance(i64::MAX), i128::from(i64::MAX) - 5);
        assert_eq!(Band::at_least(-5).distance(i64::MIN), i128::from(i64::MIN).abs() - 5);
        assert!(Band::between(3, 2).is_err());
        // One step of the value moves the distance by at most one step.
        for v in -30..30 {
            assert!((b.distance(v + 1) - b.distance(v)).abs() <= 1);
        }
    }

    #[test]
    fn regions_split_the_line_at_every_check() {
        // warn at 100, fail at 200 (both `<=`), and a `>=` 10 floor.
        let checks = [(Direction::AtMost, 100), (Direction::AtMost, 200), (Direction::AtLeast, 10)];
        assert_eq!(Band::region(&checks, 0), Some(Band { lo: None, hi: Some(9) }));
        assert_eq!(Band::region(&checks, 10), Band::between(10, 100).ok());
        assert_eq!(Band::region(&checks, 100), Band::between(10, 100).ok());
        assert_eq!(Band::region(&checks, 101), Band::between(101, 200).ok());
        assert_eq!(Band::region(&checks, 5000), Some(Band::at_least(201)));
        assert_eq!(Band::region(&[], 5), None);
        // Every check has one answer on every region, and it is the
        // answer at the point the region was chosen from.
        for point in [-7, 0, 9, 10, 55, 100, 101, 150, 200, 201, 9999] {
            let band = Band::region(&checks, point).unwrap();
            assert!(band.contains(point));
            for &(d, t) in &checks {
                assert_eq!(band.answers(d, t), Some(d.holds(point, t)), "{point} {d:?} {t}");
            }
        }
    }

    #[test]
    fn the_moved_gate_intersects_the_region() {
        let region = Band::region(&[(Direction::AtMost, 100)], 95).unwrap();
        let band = region.intersect(Band::around(95, 20)).unwrap();
        assert_eq!(band, Band::between(75, 100).unwrap());
        assert_eq!(band.answers(Direction::AtMost, 100), Some(true));
        assert_eq!(Band::between(0, 5).unwrap().intersect(Band::at_least(6)), None);
        assert_eq!(Band::around(i64::MAX - 1, 10).hi(), Some(i64::MAX));
        assert_eq!(Band::between(0, 10).unwrap().answers(Direction::AtMost, 5), None);
    }
}
