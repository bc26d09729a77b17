//! Where a partition's lag is heading, from the window already kept: how
//! fast it grows or shrinks (velocity), when the group will have caught up
//! at the pace it reads now, and when the log start (retention deleting
//! old segments) will pass its committed offset.
//!
//! Rates are least-squares slopes over the window's samples, not the first
//! and last sample's difference: consumers commit in batches and the
//! sampler reads commits before log ends, so any one sample is a few
//! messages off; a slope through all ten passes is not thrown by one odd
//! end point, and costs the same handful of additions.
//!
//! Retention's pace is the observed advance of the log start over the
//! window. Topic configurations (`retention.ms`, `retention.bytes`) are
//! not read by the sampler, so a log start that did not move in the window
//! is "not known", never a figure guessed from a default.

use super::offset::OffsetLag;
use super::status::Sample;
use crate::platform::durations::human;

/// A retention risk this close is flagged to the group's owner: far enough
/// ahead to act (scale the consumer, pause retention), near enough that
/// the rates of a window of passes still say something about it.
pub const AT_RISK_WITHIN_S: f64 = 2.0 * 3600.0;

/// A raised retention flag resolves only on a known risk further off than
/// this (or none at all): a figure hovering about [`AT_RISK_WITHIN_S`]
/// would otherwise raise and resolve it pass after pass.
pub const CLEAR_BEYOND_S: f64 = 3.0 * 3600.0;

/// When the group will have caught up on a partition.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CatchUp {
    /// Nothing (or no more than the allowed lag) to read.
    CaughtUp,
    /// At the current consume and produce rates, in this many seconds.
    In {
        seconds: f64,
    },
    /// It reads no faster than producers write: the lag does not shrink.
    NotCatchingUp,
    NotKnown(Unknown),
}

/// When the log start will pass a partition's committed offset.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RetentionRisk {
    /// It already has: these unread messages were deleted.
    Lost {
        messages: u64,
    },
    /// At the log start's observed pace and the group's, in this many seconds.
    In {
        seconds: f64,
    },
    /// The group reads at least as fast as retention deletes, or has
    /// nothing left to read.
    Safe,
    NotKnown(Unknown),
}

/// Why a figure is not known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unknown {
    /// The group has no committed offset here: it has no lag to trend.
    NoCommit,
    /// Fewer than two samples with a commit and log offsets, apart in time.
    TooFewSamples,
    /// The log start did not move over the window, and the topic's
    /// retention settings are not read.
    LogStartStill,
}

impl Unknown {
    pub fn why(self) -> &'static str {
        match self {
            Unknown::NoCommit => "no committed offset",
            Unknown::TooFewSamples => "too few samples in the window",
            Unknown::LogStartStill => {
                "the log start did not move in the window (retention settings are not read)"
            }
        }
    }
}

/// A partition's trend over its window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trend {
    /// Messages per second the lag grows (positive) or shrinks (negative).
    pub velocity: Option<f64>,
    pub catch_up: CatchUp,
    pub retention: RetentionRisk,
}

/// The least-squares slope of `points` (seconds, value): `None` with fewer
/// than two points or all at one time.
fn slope(points: impl Iterator<Item = (f64, f64)> + Clone) -> Option<f64> {
    let n = points.clone().count() as f64;
    if n < 2.0 {
        return None;
    }
    let (sx, sy) = points
        .clone()
        .fold((0.0, 0.0), |(sx, sy), (x, y)| (sx + x, sy + y));
    let (mx, my) = (sx / n, sy / n);
    let (num, den) = points.fold((0.0, 0.0), |(num, den), (x, y)| {
        (num + (x - mx) * (y - my), den + (x - mx) * (x - mx))
    });
    (den > 0.0).then(|| num / den)
}

/// The trend of one partition's window (oldest sample first). Lag at or
/// below `allowed_lag` is caught up, as for its status.
pub fn partition_trend(window: &[Sample], allowed_lag: u64) -> Trend {
    let unknown = |why| Trend {
        velocity: None,
        catch_up: CatchUp::NotKnown(why),
        retention: RetentionRisk::NotKnown(why),
    };
    let Some(newest) = window.last() else {
        return unknown(Unknown::TooFewSamples);
    };
    let (lag, committed) = match (newest.lag(), newest.committed) {
        (OffsetLag::NoCommit, _) | (_, None) => return unknown(Unknown::NoCommit),
        (lag, Some(c)) => (lag, c),
    };
    // Only samples with a commit say how fast the group reads; times from
    // the oldest, in seconds, so the sums stay small.
    let t0 = window[0].at_ms;
    let with_commit = window
        .iter()
        .filter_map(|s| Some(((s.at_ms - t0) as f64 / 1000.0, s, s.committed?)));
    let rate = |value: fn(&Sample, i64) -> i64| {
        slope(
            with_commit
                .clone()
                .map(move |(t, s, c)| (t, value(s, c) as f64)),
        )
    };
    let (Some(consume), Some(produce), Some(deletes)) = (
        rate(|_, c| c),
        rate(|s, _| s.log_end),
        rate(|s, _| s.log_start),
    ) else {
        return Trend {
            velocity: None,
            ..unknown(Unknown::TooFewSamples)
        };
    };
    let velocity = Some(produce - consume);
    let behind = lag.messages().unwrap_or_default();
    let catch_up = if behind <= allowed_lag {
        CatchUp::CaughtUp
    } else if consume > produce {
        CatchUp::In {
            seconds: behind as f64 / (consume - produce),
        }
    } else {
        CatchUp::NotCatchingUp
    };
    let retention = match lag {
        OffsetLag::BeyondRetention { lost, .. } => RetentionRisk::Lost { messages: lost },
        _ if behind <= allowed_lag || (deletes > 0.0 && deletes <= consume) => RetentionRisk::Safe,
        _ if deletes <= 0.0 => RetentionRisk::NotKnown(Unknown::LogStartStill),
        _ => RetentionRisk::In {
            seconds: (committed - newest.log_start) as f64 / (deletes - consume),
        },
    };
    Trend {
        velocity,
        catch_up,
        retention,
    }
}

impl CatchUp {
    /// Seconds until caught up: 0 when it is, `None` when it is not catching up
    /// or not known.
    pub fn seconds(&self) -> Option<f64> {
        match self {
            CatchUp::CaughtUp => Some(0.0),
            CatchUp::In { seconds } => Some(*seconds),
            CatchUp::NotCatchingUp | CatchUp::NotKnown(_) => None,
        }
    }

    /// "caught up in ~6 min", as the pages say it.
    pub fn sentence(&self) -> String {
        match self {
            CatchUp::CaughtUp => "caught up".into(),
            CatchUp::In { seconds } => format!("caught up in ~{}", human(ms(*seconds))),
            CatchUp::NotCatchingUp => "not catching up".into(),
            CatchUp::NotKnown(why) => format!("not known: {}", why.why()),
        }
    }

    /// Which of two is the group's: the partition furthest from caught up
    /// (not catching up worst), a known figure before an unknown one.
    fn rank(&self) -> (u8, f64) {
        match self {
            CatchUp::NotKnown(_) => (0, 0.0),
            CatchUp::CaughtUp => (1, 0.0),
            CatchUp::In { seconds } => (2, *seconds),
            CatchUp::NotCatchingUp => (3, 0.0),
        }
    }
}

impl RetentionRisk {
    /// Seconds until data is lost: 0 once lost, `None` when safe or not known.
    pub fn seconds(&self) -> Option<f64> {
        match self {
            RetentionRisk::Lost { .. } => Some(0.0),
            RetentionRisk::In { seconds } => Some(*seconds),
            RetentionRisk::Safe | RetentionRisk::NotKnown(_) => None,
        }
    }

    /// "loses data in ~40 min at this rate", as the pages say it.
    pub fn sentence(&self) -> String {
        match self {
            RetentionRisk::Lost { messages } => {
                format!("lost {messages} unread messages to retention")
            }
            RetentionRisk::In { seconds } => {
                format!("loses data in ~{} at this rate", human(ms(*seconds)))
            }
            RetentionRisk::Safe => "not at risk".into(),
            RetentionRisk::NotKnown(why) => format!("not known: {}", why.why()),
        }
    }

    /// Whether the owner is told: lost, or to be lost within
    /// [`AT_RISK_WITHIN_S`].
    pub fn is_flagged(&self) -> bool {
        match self {
            RetentionRisk::Lost { .. } => true,
            RetentionRisk::In { seconds } => *seconds <= AT_RISK_WITHIN_S,
            RetentionRisk::Safe | RetentionRisk::NotKnown(_) => false,
        }
    }

    /// Whether the owner may be told the risk is gone: safe, no commit to
    /// lose, or a loss known to be more than [`CLEAR_BEYOND_S`] away. Not
    /// known (the log start still between two segment deletions), or
    /// between the two thresholds, says nothing either way.
    pub fn is_clear(&self) -> bool {
        match self {
            RetentionRisk::Safe | RetentionRisk::NotKnown(Unknown::NoCommit) => true,
            RetentionRisk::In { seconds } => *seconds > CLEAR_BEYOND_S,
            RetentionRisk::Lost { .. } | RetentionRisk::NotKnown(_) => false,
        }
    }

    /// Which of two is the group's: the soonest loss (a loss worst), a
    /// known figure before an unknown one.
    fn rank(&self) -> (u8, f64) {
        match self {
            RetentionRisk::NotKnown(_) => (0, 0.0),
            RetentionRisk::Safe => (1, 0.0),
            RetentionRisk::In { seconds } => (2, -seconds),
            RetentionRisk::Lost { .. } => (3, 0.0),
        }
    }
}

/// Seconds as whole milliseconds, for [`human`] (which rounds down).
fn ms(seconds: f64) -> i64 {
    (seconds * 1000.0).clamp(0.0, i64::MAX as f64) as i64
}

/// A group's trend over its partitions: velocities summed, the slowest
/// catch-up and the soonest retention risk.
pub fn group_trend<'a>(partitions: impl IntoIterator<Item = &'a Trend>) -> Trend {
    let mut group = Trend {
        velocity: None,
        catch_up: CatchUp::NotKnown(Unknown::TooFewSamples),
        retention: RetentionRisk::NotKnown(Unknown::TooFewSamples),
    };
    for t in partitions {
        if let Some(v) = t.velocity {
            group.velocity = Some(group.velocity.unwrap_or(0.0) + v);
        }
        if t.catch_up.rank() > group.catch_up.rank() {
            group.catch_up = t.catch_up;
        }
        if t.retention.rank() > group.retention.rank() {
            group.retention = t.retention;
        }
    }
    group
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A window from (committed, log_start, log_end), one sample every 15 s.
    fn window(points: &[(Option<i64>, i64, i64)]) -> Vec<Sample> {
        points
            .iter()
            .enumerate()
            .map(|(i, &(committed, log_start, log_end))| Sample {
                at_ms: i as i64 * 15_000,
                committed,
                log_start,
                log_end,
            })
            .collect()
    }

    /// Ten passes: producers write `produce` and the group reads `consume`
    /// messages a pass, retention deletes `delete`, from the given start.
    fn steady(start: (i64, i64, i64), consume: i64, delete: i64, produce: i64) -> Vec<Sample> {
        let points: Vec<_> = (0..10)
            .map(|i| {
                (
                    Some(start.0 + i * consume),
                    start.1 + i * delete,
                    start.2 + i * produce,
                )
            })
            .collect();
        window(&points)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn growing_lag_has_a_positive_velocity_and_is_not_catching_up() {
        // Writes 300 a pass (20/s), reads 150 (10/s): lag grows 10/s.
        let t = partition_trend(&steady((1_000, 0, 2_000), 150, 0, 300), 0);
        assert!(close(t.velocity.unwrap_or_default(), 10.0), "{t:?}");
        assert_eq!(t.catch_up, CatchUp::NotCatchingUp);
        assert_eq!(t.catch_up.sentence(), "not catching up");
        assert_eq!(t.catch_up.seconds(), None);
    }

    #[test]
    fn shrinking_lag_says_when_it_is_caught_up() {
        // Reads 300 a pass (20/s), writes 150 (10/s): closes 10/s; the
        // newest lag is (10,000 + 1,350) − (1,000 + 2,700) = 7,650: 765 s.
        let t = partition_trend(&steady((1_000, 0, 10_000), 300, 0, 150), 0);
        assert!(close(t.velocity.unwrap_or_default(), -10.0), "{t:?}");
        assert_eq!(t.catch_up, CatchUp::In { seconds: 765.0 });
        assert_eq!(t.catch_up.sentence(), "caught up in ~12 min 45 s");
    }

    #[test]
    fn flat_lag_keeping_pace_is_not_catching_up_and_caught_up_is_caught_up() {
        let t = partition_trend(&steady((1_000, 0, 1_500), 100, 0, 100), 0);
        assert!(close(t.velocity.unwrap_or_default(), 0.0));
        assert_eq!(t.catch_up, CatchUp::NotCatchingUp);
        let t = partition_trend(&steady((1_000, 0, 1_000), 100, 0, 100), 0);
        assert_eq!(t.catch_up, CatchUp::CaughtUp);
        assert_eq!(t.retention, RetentionRisk::Safe);
    }

    #[test]
    fn a_slope_is_not_thrown_by_one_odd_sample() {
        // A commit read just before a batch lands: one sample 90 low.
        let mut points: Vec<_> = (0..10)
            .map(|i| (Some(i * 100), 0, 5_000 + i * 100))
            .collect();
        points[9].0 = Some(810);
        let t = partition_trend(&window(&points), 0);
        // First/last would say 0.67/s of growth (90 in 135 s); the slope
        // says under half that.
        assert!(t.velocity.unwrap_or_default() < 0.33, "{t:?}");
    }

    #[test]
    fn the_log_start_overtaking_the_commit_is_a_risk_then_a_loss() {
        // Stopped at 1,000; retention deletes 120 a pass (8/s) from 100:
        // the newest log start is 100 + 9 × 120 = 1,180, past the commit.
        let lost = partition_trend(&steady((1_000, 100, 5_000), 0, 120, 50), 0);
        assert_eq!(lost.retention, RetentionRisk::Lost { messages: 180 });
        assert!(lost.retention.is_flagged());
        // Stopped at 2,000, the log start from 500 to 1,580: 420 ahead at 8/s.
        let risk = partition_trend(&steady((2_000, 500, 5_000), 0, 120, 50), 0);
        assert_eq!(risk.retention, RetentionRisk::In { seconds: 52.5 });
        assert_eq!(
            risk.retention.sentence(),
            "loses data in ~52 s at this rate"
        );
        assert!(risk.retention.is_flagged());
        // Reading faster than retention deletes: safe.
        let safe = partition_trend(&steady((1_000, 0, 50_000), 200, 120, 50), 0);
        assert_eq!(safe.retention, RetentionRisk::Safe);
        // Far off: known, not flagged.
        let far = partition_trend(&steady((1_000_000, 0, 2_000_000), 0, 1, 50), 0);
        assert!(!far.retention.is_flagged(), "{far:?}");
    }

    #[test]
    fn a_log_start_that_did_not_move_gives_no_retention_figure() {
        let t = partition_trend(&steady((1_000, 0, 5_000), 0, 0, 50), 0);
        assert_eq!(t.retention, RetentionRisk::NotKnown(Unknown::LogStartStill));
        assert_eq!(t.retention.seconds(), None);
        assert!(!t.retention.is_flagged());
    }

    #[test]
    fn a_partition_without_a_commit_has_no_trend() {
        let t = partition_trend(&window(&[(None, 0, 100), (None, 0, 200)]), 0);
        assert_eq!(t.velocity, None);
        assert_eq!(t.catch_up, CatchUp::NotKnown(Unknown::NoCommit));
        assert_eq!(t.catch_up.sentence(), "not known: no committed offset");
        let one = partition_trend(&window(&[(Some(5), 0, 100)]), 0);
        assert_eq!(one.catch_up, CatchUp::NotKnown(Unknown::TooFewSamples));
        assert_eq!(
            partition_trend(&[], 0).catch_up,
            CatchUp::NotKnown(Unknown::TooFewSamples)
        );
    }

    #[test]
    fn a_group_is_its_slowest_partition_and_its_soonest_loss() {
        let slow = Trend {
            velocity: Some(-2.0),
            catch_up: CatchUp::In { seconds: 600.0 },
            retention: RetentionRisk::In { seconds: 900.0 },
        };
        let fast = Trend {
            velocity: Some(-5.0),
            catch_up: CatchUp::In { seconds: 60.0 },
            retention: RetentionRisk::In { seconds: 300.0 },
        };
        let unknown = partition_trend(&[], 0);
        let g = group_trend([&slow, &unknown, &fast]);
        assert_eq!(g.velocity, Some(-7.0));
        assert_eq!(g.catch_up, CatchUp::In { seconds: 600.0 });
        assert_eq!(g.retention, RetentionRisk::In { seconds: 300.0 });
        let stuck = Trend {
            catch_up: CatchUp::NotCatchingUp,
            ..unknown
        };
        assert_eq!(
            group_trend([&slow, &stuck]).catch_up,
            CatchUp::NotCatchingUp
        );
        assert_eq!(group_trend([&unknown]).velocity, None);
    }
}
