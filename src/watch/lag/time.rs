//! Time lag: how long ago the log end was where the group's committed
//! offset is now. Kafka does not say when an offset was written (ListOffsets
//! by timestamp is not universal), so it is estimated from the history of
//! log-end offsets the sampler sees: kafka-lag-exporter's lookup table, with
//! its failure modes made explicit instead of NaN or huge numbers.

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// A log-end offset and when it was read (milliseconds since the epoch).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Point {
    pub offset: i64,
    pub at_ms: i64,
}

/// Why a point was not added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AddError {
    #[error("point at {at_ms} ms is not after the newest point")]
    OutOfOrder { at_ms: i64 },
}

/// What adding a point did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Added {
    Appended,
    /// A flat stretch: the newest point moved forward in time.
    Extended,
    /// The log end went backwards: the topic was deleted and recreated (or
    /// truncated). The history restarts from this point.
    Reset,
}

/// The recent history of one partition's log-end offset, oldest first.
/// A flat stretch keeps only its first and latest point, so an idle topic
/// does not push useful history out of the window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndOffsets {
    points: VecDeque<Point>,
    capacity: usize,
}

/// The estimate for one committed offset.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TimeLag {
    /// The group has read everything: zero, also on an idle topic.
    CaughtUp,
    /// Seconds since the log end was at the committed offset.
    Seconds {
        seconds: f64,
        /// The committed offset is older than the history: the estimate
        /// extends the oldest slope and is a lower bound.
        extrapolated: bool,
    },
    /// Fewer than two points of history: no estimate yet.
    TooFewPoints,
}

impl TimeLag {
    pub fn seconds(&self) -> Option<f64> {
        match self {
            TimeLag::CaughtUp => Some(0.0),
            TimeLag::Seconds { seconds, .. } => Some(*seconds),
            TimeLag::TooFewPoints => None,
        }
    }
}

impl EndOffsets {
    /// A history of at most `capacity` points (at least 2).
    pub fn new(capacity: usize) -> Self {
        Self {
            points: VecDeque::with_capacity(capacity.max(2)),
            capacity: capacity.max(2),
        }
    }

    pub fn points(&self) -> impl Iterator<Item = &Point> {
        self.points.iter()
    }

    pub fn newest(&self) -> Option<Point> {
        self.points.back().copied()
    }

    pub fn add(&mut self, p: Point) -> Result<Added, AddError> {
        let n = self.points.len();
        if let Some(last) = self.points.back().copied() {
            if p.at_ms <= last.at_ms {
                return Err(AddError::OutOfOrder { at_ms: p.at_ms });
            }
            if p.offset < last.offset {
                self.points.clear();
                self.points.push_back(p);
                return Ok(Added::Reset);
            }
            let flat =
                n >= 2 && self.points[n - 2].offset == last.offset && last.offset == p.offset;
            if flat {
                if let Some(back) = self.points.back_mut() {
                    *back = p;
                }
                return Ok(Added::Extended);
            }
        }
        if self.points.len() == self.capacity {
            self.points.pop_front();
        }
        self.points.push_back(p);
        Ok(Added::Appended)
    }

    /// When the log end last moved forward (the time of the first point of
    /// the newest flat stretch), for "time since the last message".
    pub fn last_advance_ms(&self) -> Option<i64> {
        let newest = self.newest()?;
        let first_at_offset = self
            .points
            .iter()
            .find(|p| p.offset == newest.offset)
            .map(|p| p.at_ms);
        first_at_offset.filter(|_| self.points.len() >= 2 || newest.offset > 0)
    }

    /// Time lag of a group whose committed offset is `committed`, as of
    /// `now_ms`.
    pub fn time_lag(&self, committed: i64, now_ms: i64) -> TimeLag {
        let Some(newest) = self.newest() else {
            return TimeLag::TooFewPoints;
        };
        if committed >= newest.offset {
            return TimeLag::CaughtUp;
        }
        if self.points.len() < 2 {
            return TimeLag::TooFewPoints;
        }
        let oldest = self.points[0];
        let (at, extrapolated) = if committed < oldest.offset {
            (interpolate(oldest, newest, committed), true)
        } else {
            // The first point at or past `committed`, and the one before it.
            let right = self
                .points
                .iter()
                .position(|p| p.offset >= committed)
                .unwrap_or(self.points.len() - 1);
            let r = self.points[right];
            if r.offset == committed || right == 0 {
                (r.at_ms as f64, false)
            } else {
                (interpolate(self.points[right - 1], r, committed), false)
            }
        };
        TimeLag::Seconds {
            seconds: ((now_ms as f64 - at) / 1000.0).max(0.0),
            extrapolated,
        }
    }
}

/// The time the line through `l` and `r` reaches `offset`. Equal offsets
/// cannot happen between distinct adjacent points of the lookup; if they
/// did, the left time is the honest answer (the end sat there since then).
fn interpolate(l: Point, r: Point, offset: i64) -> f64 {
    if r.offset == l.offset {
        return l.at_ms as f64;
    }
    let slope = (r.at_ms - l.at_ms) as f64 / (r.offset - l.offset) as f64;
    r.at_ms as f64 - (r.offset - offset) as f64 * slope
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(points: &[(i64, i64)]) -> EndOffsets {
        let mut h = EndOffsets::new(60);
        for &(offset, at_s) in points {
            h.add(Point {
                offset,
                at_ms: at_s * 1000,
            })
            .expect("in order");
        }
        h
    }

    fn secs(t: TimeLag) -> f64 {
        t.seconds().expect("an estimate")
    }

    #[test]
    fn interpolates_between_points() {
        // 100 messages every 10 s; at t=40 s the end is 400.
        let h = hist(&[(0, 0), (100, 10), (200, 20), (300, 30), (400, 40)]);
        // Committed 250: the end was there at t=25 s, 15 s before now.
        assert_eq!(
            h.time_lag(250, 40_000),
            TimeLag::Seconds {
                seconds: 15.0,
                extrapolated: false
            }
        );
        assert_eq!(secs(h.time_lag(200, 45_000)), 25.0);
        assert_eq!(h.time_lag(400, 40_000), TimeLag::CaughtUp);
        assert_eq!(h.time_lag(450, 40_000), TimeLag::CaughtUp);
    }

    #[test]
    fn idle_topic_is_zero_not_nan() {
        let h = hist(&[(500, 0), (500, 15), (500, 30), (500, 45)]);
        assert_eq!(h.time_lag(500, 3_600_000), TimeLag::CaughtUp);
        // The flat stretch kept only its ends.
        assert_eq!(h.points().count(), 2);
    }

    #[test]
    fn a_consumer_stuck_behind_an_idle_topic_ages() {
        // Writes stopped at t=20 s (end 200); the group sits at 100, written
        // at t=10 s. An hour later it is an hour behind, not zero.
        let h = hist(&[(0, 0), (100, 10), (200, 20), (200, 30), (200, 40)]);
        assert_eq!(secs(h.time_lag(100, 3_610_000)), 3600.0);
    }

    #[test]
    fn too_few_points_says_so() {
        assert_eq!(EndOffsets::new(10).time_lag(0, 0), TimeLag::TooFewPoints);
        let h = hist(&[(100, 0)]);
        assert_eq!(h.time_lag(50, 1000), TimeLag::TooFewPoints);
        assert_eq!(h.time_lag(100, 1000), TimeLag::CaughtUp);
    }

    #[test]
    fn older_than_history_extrapolates_and_says_so() {
        let h = hist(&[(1000, 100), (1100, 110), (1200, 120)]);
        let t = h.time_lag(900, 120_000);
        assert_eq!(
            t,
            TimeLag::Seconds {
                seconds: 30.0,
                extrapolated: true
            }
        );
    }

    #[test]
    fn recreated_topic_resets_history() {
        let mut h = hist(&[(0, 0), (1000, 10), (2000, 20)]);
        assert_eq!(
            h.add(Point {
                offset: 5,
                at_ms: 30_000
            }),
            Ok(Added::Reset)
        );
        assert_eq!(h.points().count(), 1);
        assert_eq!(h.time_lag(0, 31_000), TimeLag::TooFewPoints);
    }

    #[test]
    fn out_of_order_points_are_refused() {
        let mut h = hist(&[(0, 10)]);
        assert!(
            h.add(Point {
                offset: 5,
                at_ms: 10_000
            })
            .is_err()
        );
        assert!(
            h.add(Point {
                offset: 5,
                at_ms: 9_000
            })
            .is_err()
        );
    }

    #[test]
    fn window_keeps_the_newest_points() {
        let mut h = EndOffsets::new(3);
        for i in 0..10 {
            h.add(Point {
                offset: i * 10,
                at_ms: i * 1000,
            })
            .expect("ok");
        }
        let offsets: Vec<i64> = h.points().map(|p| p.offset).collect();
        assert_eq!(offsets, vec![70, 80, 90]);
    }

    #[test]
    fn last_advance_is_the_start_of_the_flat_stretch() {
        let h = hist(&[(0, 0), (100, 10), (100, 20), (100, 30)]);
        assert_eq!(h.last_advance_ms(), Some(10_000));
    }
}
