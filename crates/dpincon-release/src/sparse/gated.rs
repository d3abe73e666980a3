//! What an epoch reads for one released measure, and what its pass says
//! about the measure (README, "Gated verdicts", the night's statistics).
//!
//! The release that opens an epoch fixes every public parameter the
//! night's statistics need: θ (or τ), which parts of I_R were released,
//! and the high-confidence bounds its interval rests on. The epoch then
//! gates, each night:
//!
//! - the statistic the release noised, in the band around its released
//!   value (the moved gate: the release noise's half-width plus `moved`),
//!   cut at the checks' thresholds when that statistic is the measure or
//!   a lower bound of it (a crossing then calls for a fresh verdict);
//! - every private statistic a bound of the interval came from, at or
//!   below that bound plus `moved`: the degree sum under d̃'s bound, the
//!   largest class, the NULL rows and the excess under theirs. A bound
//!   drawn on the opening night says nothing of a later table; gated, it
//!   does.
//!
//! A pass puts every statistic within α of its band at once (the night's
//! query is their largest distance), with probability ≥ 1 − β over the
//! whole epoch. [`MeasureGate::interval`] then applies the release's own
//! interval lemmas to the widened bands: the gated night's interval holds
//! the measure itself with probability ≥ 1 − β.

use dpincon_mechanisms::DiscreteLaplace;
use serde::{Deserialize, Serialize};

use super::{Band, Direction};
use crate::classes::{ClassBounds, ExcessBound};
use crate::interval::{IntervalBounds, statistic_upper_end};
use crate::miss::NOISE_MISS;
use crate::repair::{EXACT_COVER_SENSITIVITY, TWICE_LP_SENSITIVITY};
use crate::{
    COVER_SENSITIVITY, ProjectedMeasure, ProjectedRelease, ProjectionTable, ReleaseError,
    RepairRelease, RepairValues, Strategy, TableFacts,
};

/// A private statistic an epoch reads each night, named by its public
/// parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Statistic {
    /// f(G_θ) of I_MI or I_P at the epoch's θ.
    Projected {
        /// I_MI or I_P.
        measure: ProjectedMeasure,
        /// θ, fixed for the epoch.
        theta: u32,
    },
    /// I_P's class count at τ, max(f_P(G_τ), capped(τ)).
    ClassCount {
        /// τ, fixed for the epoch.
        tau: u32,
    },
    /// Σ_X (maxfreq_X − 1) over the minimal equality sets (`ub-direct`,
    /// `ub-gem`) or every set (`ub-hem`): what d̃ noised.
    DegreeSum {
        /// Over the minimal sets.
        minimal: bool,
        /// k, the sets summed: the sum's sensitivity.
        sets: u64,
    },
    /// The largest class of the class count's X.
    MaxClass,
    /// X's rows with a NULL B.
    NullRows,
    /// The excess over τ₀ = `from`.
    Excess {
        /// τ₀.
        from: u32,
    },
    /// c, the stable-order greedy cover.
    GreedyCover,
    /// 2·L, L = max(LP, the largest set's cover, the keys' partition bounds).
    TwiceLower,
    /// U, the sets' covers summed.
    CoverSum {
        /// k, the sets: U's sensitivity.
        sets: u64,
    },
    /// min(U, D), D the union cover of overlapping sets.
    UnionCover {
        /// max(k, D's sensitivity).
        sensitivity: u64,
    },
    /// I_R itself, one set's exact cover.
    ExactCover,
}

/// A night's private inputs, from one pass over its edges.
pub struct NightFacts<'a> {
    /// f(G_θ) at every θ the gates read ([`MeasureGate::thetas`]).
    pub table: &'a ProjectionTable,
    /// The night's table facts.
    pub facts: &'a TableFacts,
    /// I_R's statistics, when a gate reads them (2·L only when
    /// [`MeasureGate::needs_repair`]).
    pub repair: Option<RepairValues>,
}

impl Statistic {
    /// Its node sensitivity on neighbouring tables, at the epoch's fixed
    /// parameters (SPEC §6.1; the class facts' and covers' own lemmas).
    pub fn sensitivity(self) -> u64 {
        match self {
            Statistic::Projected { measure, theta } => measure.sensitivity(theta),
            Statistic::ClassCount { tau } => u64::from(tau) + 1,
            Statistic::DegreeSum { sets, .. } | Statistic::CoverSum { sets } => sets.max(1),
            Statistic::UnionCover { sensitivity } => sensitivity.max(1),
            Statistic::MaxClass | Statistic::NullRows | Statistic::Excess { .. } => 1,
            Statistic::GreedyCover => COVER_SENSITIVITY,
            Statistic::TwiceLower => TWICE_LP_SENSITIVITY,
            Statistic::ExactCover => EXACT_COVER_SENSITIVITY,
        }
    }

    /// Its value on the night (private).
    ///
    /// # Errors
    /// [`ReleaseError::Invalid`] when the night lacks an input (a driver
    /// bug: [`MeasureGate::thetas`] and [`MeasureGate::needs_repair`] say what
    /// to compute), or its sets differ from the epoch's.
    pub fn value(self, night: &NightFacts) -> Result<u64, ReleaseError> {
        let missing = |what: &str| ReleaseError::Invalid(format!("the night lacks {what}"));
        let classes = || night.facts.classes.as_ref().ok_or(ReleaseError::MissingClasses);
        let repair = || night.repair.ok_or_else(|| missing("I_R's statistics"));
        Ok(match self {
            Statistic::Projected { measure, theta } => measure.value(&night.table.get(theta)?),
            Statistic::ClassCount { tau } => ProjectedMeasure::P
                .value(&night.table.get(tau)?)
                .max(night.table.capped_classes(tau)?),
            Statistic::DegreeSum { minimal, sets } => {
                let terms = night.facts.degree_terms(minimal);
                if terms.count as u64 != sets {
                    return Err(missing("the epoch's equality sets"));
                }
                terms.sum.max(0) as u64
            }
            Statistic::MaxClass => classes()?.max_class,
            Statistic::NullRows => classes()?.null_rows,
            Statistic::Excess { from } => {
                let c = classes()?;
                if c.excess_from.max(1) != from {
                    return Err(missing("the epoch's excess threshold"));
                }
                c.excess
            }
            Statistic::GreedyCover => repair()?.greedy_cover,
            Statistic::TwiceLower => repair()?.twice_lower.ok_or_else(|| missing("2·LP"))?,
            Statistic::CoverSum { .. } => repair()?.upper.ok_or_else(|| missing("U"))?.sum,
            Statistic::UnionCover { sensitivity } => {
                let upper = repair()?.upper.ok_or_else(|| missing("U"))?;
                let released = upper.release();
                // The epoch froze the union's sensitivity: a table whose
                // shapes give another (other constraints) is not its statistic.
                if upper.union.is_none() || released.sensitivity != sensitivity {
                    return Err(missing("the epoch's union cover"));
                }
                released.value
            }
            Statistic::ExactCover => repair()?.exact.ok_or_else(|| missing("the exact cover"))?,
        })
    }
}

/// One statistic and its band.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GatedStatistic {
    /// What is read.
    pub statistic: Statistic,
    /// Where a night passes, in the statistic's units.
    pub band: Band,
    /// w = ⌊Δ / Δ_s⌋: the epoch reads w·s against w·band, so every
    /// statistic moves the night's query by at most Δ while one of small
    /// sensitivity is held to α/w of its band, not α.
    pub weight: u64,
}

/// Which measure a gate serves, and what its interval needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "measure")]
enum GateKind {
    /// I_MI or I_P.
    Projected {
        projected: ProjectedMeasure,
        theta: u32,
        /// The declared n_max (public, holds every night).
        rows: u64,
        /// A class count under a key: bounds 1 and 0, exact and public.
        key_classes: bool,
    },
    /// I_R.
    Repair,
}

/// An epoch's public question for one released measure: its statistics
/// and their bands (module docs). Public: it may be reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasureGate {
    kind: GateKind,
    statistics: Vec<GatedStatistic>,
}

/// Where a statistic's band comes from, before the moved gate widens it.
enum Shape {
    /// Around a released value, at its noise's half-width, cut at the
    /// checks' region when given.
    Around { value: i64, halfwidth: u64, region: Option<Band> },
    /// At most a released high-confidence bound. A bound drawn only a
    /// unit or two above its statistic would sit at the band's edge,
    /// where the nightly noise ends the epoch on nights nothing moved:
    /// the moved gate widens it too, at the cost of a looser upper end.
    Below(u64),
}

fn scale(value: i64, weight: u64) -> i64 {
    value.saturating_mul(i64::try_from(weight).unwrap_or(i64::MAX))
}

impl MeasureGate {
    /// The gate from its statistics' shapes: Δ is their largest
    /// sensitivity, and each band widens by `moved` in the query's units
    /// (⌈moved / w⌉ in the statistic's).
    fn build(kind: GateKind, shapes: Vec<(Statistic, Shape)>, moved: u64) -> MeasureGate {
        let delta = shapes.iter().map(|(s, _)| s.sensitivity()).max().unwrap_or(1);
        let statistics = shapes
            .into_iter()
            .map(|(statistic, shape)| {
                let weight = (delta / statistic.sensitivity()).max(1);
                let slack = moved.div_ceil(weight);
                let band = match shape {
                    Shape::Around { value, halfwidth, region } => {
                        let around = Band::around(value, halfwidth.saturating_add(slack));
                        // The value lies in both: never empty.
                        region.and_then(|r| around.intersect(r)).unwrap_or(around)
                    }
                    Shape::Below(bound) => Band::at_most(
                        i64::try_from(bound.saturating_add(slack)).unwrap_or(i64::MAX),
                    ),
                };
                GatedStatistic { statistic, band, weight }
            })
            .collect();
        MeasureGate { kind, statistics }
    }

    /// The gate of an I_MI or I_P release at the checks (`<=`/`>=`,
    /// threshold in the measure's units), with the moved gate `moved`
    /// wider than the release noise's half-width.
    ///
    /// # Errors
    /// [`ReleaseError::Invalid`] for a release that is not private, has no
    /// interval bounds, or estimated n_max instead of reading the
    /// declared one (a gated night's bounds must hold on every night).
    pub fn projected(
        release: &ProjectedRelease,
        checks: &[(Direction, i64)],
        moved: u64,
    ) -> Result<MeasureGate, ReleaseError> {
        let invalid = |m: &str| ReleaseError::Invalid(format!("a gated {}: {m}", release.measure));
        let (rows, bounds) = match (release.private, release.max_rows, release.bounds) {
            (true, Some(m), Some(bounds)) if !m.estimated => (m.value, bounds),
            (false, ..) => return Err(invalid("the release is not private")),
            _ => return Err(invalid("the release must read the declared max-rows")),
        };
        let noise = DiscreteLaplace::new(release.sensitivity, release.budget.release)?;
        let main = match release.class_bound {
            Some(_) => Statistic::ClassCount { tau: release.theta },
            None => Statistic::Projected { measure: release.measure, theta: release.theta },
        };
        // f(G_θ) and the class count are at most the measure: above a
        // threshold, the measure is too.
        let region = Band::region(checks, release.value);
        let halfwidth = noise.halfwidth(NOISE_MISS);
        let mut shapes = vec![(main, Shape::Around { value: release.value, halfwidth, region })];
        if let Some(d) = release.degree_bound
            && bounds.max_degree < rows.saturating_sub(1)
        {
            let minimal = release.strategy != Strategy::UbHem;
            let statistic = Statistic::DegreeSum { minimal, sets: d.sets as u64 };
            shapes.push((statistic, Shape::Below(bounds.max_degree)));
        }
        let key_classes = release.class_bound.is_some_and(|b| b.excess.is_none());
        if let (Some(c), false) = (bounds.classes, key_classes) {
            shapes.push((Statistic::MaxClass, Shape::Below(c.max_class)));
            shapes.push((Statistic::NullRows, Shape::Below(c.null_rows)));
            if let Some(e) = c.excess {
                shapes.push((Statistic::Excess { from: e.from }, Shape::Below(e.high)));
            }
        }
        let kind = GateKind::Projected {
            projected: release.measure,
            theta: release.theta,
            rows,
            key_classes,
        };
        Ok(MeasureGate::build(kind, shapes, moved))
    }

    /// The gate of an I_R release: each released part in the band around
    /// its noisy value; the exact cover (I_R itself) also cut at the
    /// checks.
    ///
    /// # Errors
    /// [`ReleaseError::Invalid`] for a part this gate does not know.
    pub fn repair(
        release: &RepairRelease,
        checks: &[(Direction, i64)],
        moved: u64,
    ) -> Result<MeasureGate, ReleaseError> {
        let mut shapes = Vec::new();
        for part in &release.parts {
            let statistic = match part.statistic.as_str() {
                "greedy-cover" => Statistic::GreedyCover,
                "twice-lower-bound" => Statistic::TwiceLower,
                "cover-sum" => Statistic::CoverSum { sets: part.sensitivity },
                "union-cover" => Statistic::UnionCover { sensitivity: part.sensitivity },
                "exact-cover" => Statistic::ExactCover,
                other => {
                    let message = format!("an I_R part '{other}' cannot be gated");
                    return Err(ReleaseError::Invalid(message));
                }
            };
            let region =
                Band::region(checks, part.value).filter(|_| statistic == Statistic::ExactCover);
            let shape = Shape::Around { value: part.value, halfwidth: part.halfwidth, region };
            shapes.push((statistic, shape));
        }
        if shapes.is_empty() {
            return Err(ReleaseError::Invalid("an I_R release without parts".into()));
        }
        Ok(MeasureGate::build(GateKind::Repair, shapes, moved))
    }

    /// The statistics and their bands, in the order the night reads them.
    pub fn statistics(&self) -> &[GatedStatistic] {
        &self.statistics
    }

    /// The bands as the epoch reads them (each scaled by its weight), for
    /// [`EpochParams`](super::EpochParams).
    pub fn bands(&self) -> Vec<Band> {
        self.statistics
            .iter()
            .map(|s| {
                let (w, b) = (s.weight, s.band);
                match (b.lo(), b.hi()) {
                    (Some(lo), Some(hi)) => Band::between(scale(lo, w), scale(hi, w)).unwrap_or(b),
                    (Some(lo), None) => Band::at_least(scale(lo, w)),
                    (None, Some(hi)) => Band::at_most(scale(hi, w)),
                    (None, None) => b,
                }
            })
            .collect()
    }

    /// Δ: the largest sensitivity of the statistics (the night's query,
    /// their largest distance outside the bands, moves by at most it).
    pub fn sensitivity(&self) -> u64 {
        self.statistics.iter().map(|s| s.statistic.sensitivity()).max().unwrap_or(1)
    }

    /// The θ the night's pass must evaluate.
    pub fn thetas(&self) -> Vec<u32> {
        self.statistics
            .iter()
            .filter_map(|s| match s.statistic {
                Statistic::Projected { theta, .. } => Some(theta),
                Statistic::ClassCount { tau } => Some(tau),
                _ => None,
            })
            .collect()
    }

    /// Whether the night must compute I_R's statistics (and 2·LP).
    pub fn needs_repair(&self) -> (bool, bool) {
        let repair = matches!(self.kind, GateKind::Repair);
        let lp = self.statistics.iter().any(|s| s.statistic == Statistic::TwiceLower);
        (repair, lp)
    }

    /// The night's statistics as the epoch reads them, each scaled by its
    /// weight, in the bands' order (private).
    ///
    /// # Errors
    /// As [`Statistic::value`].
    pub fn values(&self, night: &NightFacts) -> Result<Vec<i64>, ReleaseError> {
        self.statistics
            .iter()
            .map(|s| {
                let v = s.statistic.value(night)?;
                Ok(scale(i64::try_from(v).unwrap_or(i64::MAX), s.weight))
            })
            .collect()
    }

    /// The measure's interval on a night that passed an epoch of pass
    /// accuracy `alpha`: every statistic within ⌊α/w⌋ of its band, through the
    /// release's interval lemmas (README, "Intervals"; I_R's parts bound
    /// it as in `repair::estimate`). Public: bands and α only.
    pub fn interval(&self, alpha: u64) -> [i64; 2] {
        let range = |s: &GatedStatistic| {
            // w·distance ≤ α.
            let a = i128::from(alpha / s.weight.max(1));
            let lo = s.band.lo().map_or(0, |l| (i128::from(l) - a).max(0));
            let hi = s.band.hi().map_or(i128::MAX, |h| i128::from(h) + a);
            (lo.min(i128::from(u64::MAX)) as u64, hi.min(i128::from(u64::MAX)) as u64)
        };
        let find = |wanted: fn(&Statistic) -> bool| {
            self.statistics.iter().find(|s| wanted(&s.statistic)).map(range)
        };
        let (lo, hi) = match self.kind {
            GateKind::Projected { projected, theta, rows, key_classes } => {
                let (lo, hi) = range(&self.statistics[0]);
                let n_minus_1 = rows.saturating_sub(1);
                let max_degree = find(|s| matches!(s, Statistic::DegreeSum { .. }))
                    .map_or(n_minus_1, |(_, d)| d.min(n_minus_1));
                let classes = if key_classes {
                    Some(ClassBounds { max_class: 1, null_rows: 0, excess: None })
                } else {
                    find(|s| *s == Statistic::MaxClass).map(|(_, max_class)| ClassBounds {
                        max_class: max_class.max(1),
                        null_rows: find(|s| *s == Statistic::NullRows).map_or(rows, |r| r.1),
                        excess: self.statistics.iter().find_map(|s| match s.statistic {
                            Statistic::Excess { from } => {
                                Some(ExcessBound { from, high: range(s).1 })
                            }
                            _ => None,
                        }),
                    })
                };
                // A gate reads f(G_θ) or the class count, never the leading
                // count: its bound M does not apply, the degree bound does.
                let bounds =
                    IntervalBounds { rows: Some(rows), max_degree, classes, leading: None };
                let hi = statistic_upper_end(projected, hi, theta, bounds);
                (lo.min(hi), hi)
            }
            GateKind::Repair => {
                let (mut lo, mut hi) = (0u64, u64::MAX);
                for s in &self.statistics {
                    let (l, h) = range(s);
                    match s.statistic {
                        // s/2 ≤ I_R ≤ s for c and 2·L.
                        Statistic::GreedyCover | Statistic::TwiceLower => {
                            lo = lo.max(l.div_ceil(2));
                            hi = hi.min(h);
                        }
                        Statistic::CoverSum { .. } | Statistic::UnionCover { .. } => hi = hi.min(h),
                        _ => {
                            lo = lo.max(l);
                            hi = hi.min(h);
                        }
                    }
                }
                (lo.min(hi), hi)
            }
        };
        let int = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        [int(lo), int(hi)]
    }
}
