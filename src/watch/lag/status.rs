//! The windowed status of a consumer group: Burrow's evaluation, adapted to
//! what a read-only sampler sees (committed offsets and log ends every pass,
//! the group's state), with its known false alarms and blind spots fixed:
//!
//! - lag is computed from the newest sample, at evaluation time, not when
//!   the group last committed (Burrow's stale-lag false alarms);
//! - a group that has read everything is OK however idle the topic is, so
//!   consumers of idle topics are never flagged;
//! - a group that does not move while behind is STOP when it has no members
//!   and STALL when it has, whether or not the topic is still being written
//!   to, so stopped consumers of slow topics are caught (Burrow needs new
//!   commits to compare).

use super::offset::{OffsetLag, offset_lag};
use crate::platform::durations::human;
use serde::{Deserialize, Serialize};

/// One pass's reading of one partition for one group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sample {
    pub at_ms: i64,
    /// `None`: the group has no committed offset here.
    pub committed: Option<i64>,
    pub log_start: i64,
    pub log_end: i64,
}

impl Sample {
    pub fn lag(&self) -> OffsetLag {
        offset_lag(self.committed, self.log_start, self.log_end)
    }
}

/// Status of a partition or group, worst last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    /// Not enough history to judge yet.
    Incomplete,
    /// The group never committed on this partition.
    NoCommit,
    /// The group keeps offsets on this topic but no member is assigned it
    /// (see `super::consumed`): not judged as lag.
    NotConsumed,
    Ok,
    /// Lag grew over the whole window.
    Warn,
    /// The committed offset moved back and has not recovered.
    Rewind,
    /// Members are present but the committed offset does not move while behind.
    Stall,
    /// No members, not moving, and behind.
    Stop,
    /// The committed offset is below log-start: unread data was deleted.
    Lost,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Incomplete => "INCOMPLETE",
            Status::NoCommit => "NO_COMMIT",
            Status::NotConsumed => "NOT_CONSUMED",
            Status::Ok => "OK",
            Status::Warn => "WARN",
            Status::Rewind => "REWIND",
            Status::Stall => "STALL",
            Status::Stop => "STOP",
            Status::Lost => "LOST",
        }
    }

    pub const ALL: [Status; 9] = [
        Status::Incomplete,
        Status::NoCommit,
        Status::NotConsumed,
        Status::Ok,
        Status::Warn,
        Status::Rewind,
        Status::Stall,
        Status::Stop,
        Status::Lost,
    ];

    /// The status named by [`Status::as_str`].
    pub fn parse(s: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|x| x.as_str() == s)
    }

    /// Whether this status is trouble to flag to the owner.
    pub fn is_trouble(self) -> bool {
        self >= Status::Warn
    }
}

/// Thresholds of the evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rules {
    /// Samples needed before anything but OK is said (Burrow's
    /// `minimum-complete` × `intervals`).
    pub min_samples: usize,
    /// Lag at or below this counts as caught up.
    pub allowed_lag: u64,
    /// Samples in a row, without members, without a commit and behind,
    /// that make a partition STOP at once instead of after a whole window.
    pub stop_samples: usize,
}

impl Default for Rules {
    fn default() -> Self {
        Self {
            min_samples: 4,
            allowed_lag: 0,
            stop_samples: 2,
        }
    }
}

/// The committed offset has stood at `committed` since `since_ms`: kept
/// with a STOP or STALL flag, so the next pass can say how long a
/// partition has not moved even once its whole window stands still (the
/// window alone would say "for 45 s" for ever).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Standing {
    pub committed: i64,
    pub since_ms: i64,
    /// Since when the group has had members while it stood: `None` for a
    /// STOP. A STOP whose members come back is not a STALL until they have
    /// stood still for a window of their own: a consumer that returns
    /// commits only after it has joined and read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub members_since_ms: Option<i64>,
}

/// A status with the sentence that explains it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub status: Status,
    pub lag: OffsetLag,
    pub reason: String,
    /// For STOP and STALL: since when the committed offset has not moved.
    pub standing: Option<Standing>,
}

fn verdict(status: Status, lag: OffsetLag, reason: String) -> Verdict {
    Verdict {
        status,
        lag,
        reason,
        standing: None,
    }
}

/// Since when the committed offset has stood at the newest sample's value:
/// the first sample of the run of equal commits that ends the window, or
/// what an earlier pass `known` when that run is the whole window and
/// stands at the same offset (a commit that went elsewhere and came back
/// would have shown in the window).
fn stood_since(window: &[Sample], known: Option<Standing>) -> Option<Standing> {
    let newest = window.last()?;
    let committed = newest.committed?;
    let run_start = window
        .iter()
        .rposition(|s| s.committed != newest.committed)
        .map_or(0, |i| i + 1);
    let from_window = window.get(run_start)?.at_ms;
    let since_ms = match known {
        Some(k) if run_start == 0 && k.committed == committed => k.since_ms.min(from_window),
        _ => from_window,
    };
    Some(Standing {
        committed,
        since_ms,
        members_since_ms: None,
    })
}

/// When the members of a group standing at `known` came back, if they did
/// while it stood (the newest sample for a STOP whose members are back
/// now), and the standing to keep until they have stood a window.
fn back_since(window: &[Sample], known: Option<Standing>) -> Option<Standing> {
    let newest = window.last()?;
    let k = known.filter(|k| Some(k.committed) == newest.committed)?;
    Some(Standing {
        members_since_ms: Some(k.members_since_ms.unwrap_or(newest.at_ms)),
        ..k
    })
}

/// Evaluates one partition's window (oldest sample first). `has_members`
/// says whether the group had active members at the newest sample; `known`
/// is what an earlier pass knew of how long it has stood still.
pub fn partition_status(
    window: &[Sample],
    has_members: bool,
    rules: &Rules,
    known: Option<Standing>,
) -> Verdict {
    let Some(newest) = window.last() else {
        return verdict(
            Status::Incomplete,
            OffsetLag::NoCommit,
            "no samples yet".into(),
        );
    };
    let lag = newest.lag();
    let behind = match lag {
        OffsetLag::NoCommit => {
            return verdict(
                Status::NoCommit,
                lag,
                "the group has never committed here".into(),
            );
        }
        OffsetLag::BeyondRetention { lost, .. } => {
            return verdict(
                Status::Lost,
                lag,
                format!(
                    "{lost} unread messages were deleted by retention before the group read them"
                ),
            );
        }
        OffsetLag::Behind { messages } => messages,
    };
    if behind <= rules.allowed_lag {
        return verdict(Status::Ok, lag, "caught up".into());
    }
    if let Some(v) = stopped_now(window, has_members, rules, known) {
        return v;
    }
    let back = if has_members {
        back_since(window, known)
    } else {
        None
    };
    if let Some(b) = back
        && let Some(since) = b.members_since_ms
        && window.iter().filter(|s| s.at_ms >= since).count() < rules.min_samples
    {
        // Back from a STOP: the flag resolves now, and the standing is kept
        // so a slow first commit is not taken for a STALL.
        let at = b.committed;
        return Verdict {
            standing: Some(b),
            ..verdict(
                Status::Ok,
                lag,
                format!(
                    "members are back {} ago; no commit yet since it stood at {at} ({behind} behind)",
                    human(newest.at_ms - since)
                ),
            )
        };
    }
    if window.len() < rules.min_samples {
        return verdict(
            Status::Incomplete,
            lag,
            format!(
                "{behind} behind; {} of {} samples needed to judge",
                window.len(),
                rules.min_samples
            ),
        );
    }
    let committed: Vec<i64> = window.iter().filter_map(|s| s.committed).collect();
    if let Some((at, from, to)) = unrecovered_rewind(&committed) {
        return verdict(
            Status::Rewind,
            lag,
            format!(
                "committed offset moved back from {from} to {to} (sample {at}) and has not caught up since"
            ),
        );
    }
    let lags: Vec<u64> = window.iter().filter_map(|s| s.lag().messages()).collect();
    // Caught up at some point in the window: it keeps up, just not this instant.
    if lags.iter().any(|l| *l <= rules.allowed_lag) {
        return verdict(
            Status::Ok,
            lag,
            format!("{behind} behind, but caught up within the window"),
        );
    }
    let span = human(newest.at_ms - window[0].at_ms);
    let not_moving = committed.len() == window.len() && committed.windows(2).all(|w| w[0] == w[1]);
    if not_moving && let Some(standing) = stood_since(window, known) {
        let at = standing.committed;
        let stood = human(newest.at_ms - standing.since_ms);
        let v = if has_members {
            let since = back.and_then(|b| b.members_since_ms);
            let standing = Standing {
                members_since_ms: Some(since.unwrap_or(standing.since_ms)),
                ..standing
            };
            let v = verdict(
                Status::Stall,
                lag,
                format!(
                    "members are connected but the committed offset has stayed at {at} for {stood} while {behind} behind"
                ),
            );
            Verdict {
                standing: Some(standing),
                ..v
            }
        } else {
            Verdict {
                standing: Some(standing),
                ..verdict(
                    Status::Stop,
                    lag,
                    format!("no members and no progress for {stood} while {behind} behind"),
                )
            }
        };
        return v;
    }
    let growing = lags.windows(2).all(|w| w[1] >= w[0]) && lags.last() > lags.first();
    if growing && !keeps_up(window) {
        let first = lags.first().copied().unwrap_or_default();
        return verdict(
            Status::Warn,
            lag,
            format!("lag grew from {first} to {behind} over {span}"),
        );
    }
    verdict(Status::Ok, lag, format!("{behind} behind and keeping pace"))
}

/// Whether the newest sample's committed offset has reached the log end
/// of the sample before: the consumer reads in less than an interval what
/// is written. Its lag is then what was written between the sampler's
/// reads (committed offsets first, log ends after) and whatever arrived
/// since its last commit, which may well be more at one pass than the
/// last without it falling behind.
fn keeps_up(window: &[Sample]) -> bool {
    match window {
        [.., before, newest] => newest.committed.is_some_and(|c| c >= before.log_end),
        _ => false,
    }
}

/// A group with no members whose committed offset has not moved for
/// `stop_samples` samples, behind in each, has stopped: said at once, so
/// the owner hears one interval after the onset rather than after a whole
/// window as with Burrow. (With members, standing still may be a slow
/// batch, so STALL waits for the window.) A rewind is left to the window
/// rules, which name it.
fn stopped_now(
    window: &[Sample],
    has_members: bool,
    rules: &Rules,
    known: Option<Standing>,
) -> Option<Verdict> {
    let newest = window.last()?;
    let n = rules.stop_samples.max(2);
    if has_members || window.len() < n {
        return None;
    }
    let committed: Vec<i64> = window.iter().filter_map(|s| s.committed).collect();
    if committed.len() != window.len() || unrecovered_rewind(&committed).is_some() {
        return None;
    }
    let behind = |s: &Sample| s.lag().messages().is_some_and(|l| l > rules.allowed_lag);
    let recent = &window[window.len() - n..];
    if !recent
        .iter()
        .all(|s| s.committed == newest.committed && behind(s))
    {
        return None;
    }
    let standing = stood_since(window, known)?;
    let stood = human(newest.at_ms - standing.since_ms);
    let at_lag = newest.lag();
    let messages = at_lag.messages().unwrap_or_default();
    Some(Verdict {
        standing: Some(standing),
        ..verdict(
            Status::Stop,
            at_lag,
            format!("no members and no progress for {stood} while {messages} behind"),
        )
    })
}

/// The newest point where the committed offset went down and no later commit
/// reached the pre-rewind offset: (index, from, to).
fn unrecovered_rewind(committed: &[i64]) -> Option<(usize, i64, i64)> {
    (1..committed.len()).rev().find_map(|i| {
        let (before, after) = (committed[i - 1], committed[i]);
        let recovered = committed[i..].iter().any(|c| *c >= before);
        (after < before && !recovered).then_some((i, before, after))
    })
}

/// The time lag, in seconds, of the newest sample's committed offset,
/// estimated from the log-end offsets of the window itself. `None` without
/// a commit or with too little history.
pub fn window_time_lag_s(window: &[Sample]) -> Option<f64> {
    let newest = window.last()?;
    let mut ends = super::time::EndOffsets::new(window.len().max(2));
    for s in window {
        // A window is in time order; a point out of order is only skipped.
        let _ = ends.add(super::time::Point {
            offset: s.log_end,
            at_ms: s.at_ms,
        });
    }
    ends.time_lag(newest.committed?, newest.at_ms).seconds()
}

/// A group's status: its worst partition's.
pub fn group_status<'a>(verdicts: impl IntoIterator<Item = &'a Verdict>) -> Status {
    verdicts
        .into_iter()
        .map(|v| v.status)
        .max()
        .unwrap_or(Status::Incomplete)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A window from (committed, log_end) pairs, one sample every 15 s.
    fn window(points: &[(Option<i64>, i64)]) -> Vec<Sample> {
        points
            .iter()
            .enumerate()
            .map(|(i, &(committed, log_end))| Sample {
                at_ms: i as i64 * 15_000,
                committed,
                log_start: 0,
                log_end,
            })
            .collect()
    }

    fn status(points: &[(Option<i64>, i64)], members: bool) -> Status {
        partition_status(&window(points), members, &Rules::default(), None).status
    }

    #[test]
    fn caught_up_is_ok_even_on_an_idle_topic() {
        let w = [(Some(100), 100); 10];
        assert_eq!(status(&w, false), Status::Ok);
        assert_eq!(status(&w, true), Status::Ok);
    }

    #[test]
    fn lag_is_judged_at_the_newest_sample() {
        // Far behind earlier in the window, caught up now: OK (Burrow would
        // still report the lag of its last commit).
        let w = [
            (Some(0), 900),
            (Some(300), 950),
            (Some(700), 1000),
            (Some(1000), 1000),
        ];
        assert_eq!(status(&w, true), Status::Ok);
    }

    #[test]
    fn a_consumer_that_stops_is_stop() {
        let w = [
            (Some(50), 60),
            (Some(50), 80),
            (Some(50), 100),
            (Some(50), 120),
        ];
        let v = partition_status(&window(&w), false, &Rules::default(), None);
        assert_eq!(v.status, Status::Stop);
        assert_eq!(v.lag, OffsetLag::Behind { messages: 70 });
        assert!(
            v.reason.contains("no progress for 45 s while 70 behind"),
            "{}",
            v.reason
        );
    }

    #[test]
    fn a_stopped_consumer_of_a_slow_topic_is_still_stop() {
        // Nothing new was written in the window; Burrow misses this.
        let w = [(Some(40), 50); 6];
        assert_eq!(status(&w, false), Status::Stop);
    }

    #[test]
    fn connected_but_stuck_is_stall() {
        let w = [
            (Some(40), 50),
            (Some(40), 60),
            (Some(40), 70),
            (Some(40), 80),
        ];
        assert_eq!(status(&w, true), Status::Stall);
    }

    #[test]
    fn falling_behind_is_warn() {
        let w = [
            (Some(10), 20),
            (Some(20), 40),
            (Some(30), 60),
            (Some(40), 80),
        ];
        let v = partition_status(&window(&w), true, &Rules::default(), None);
        assert_eq!(v.status, Status::Warn);
        assert!(v.reason.contains("from 10 to 40"), "{}", v.reason);
    }

    #[test]
    fn a_fast_reader_whose_lag_grows_between_the_reads_is_not_warn() {
        // Committed offsets are read before log ends: a consumer that reads
        // everything each interval shows what came in between, 1, then 1,
        // then 2; it reached every earlier log end, so it keeps up.
        let w = [
            (Some(100), 101),
            (Some(105), 106),
            (Some(106), 107),
            (Some(107), 109),
        ];
        let v = partition_status(&window(&w), true, &Rules::default(), None);
        assert_eq!(v.status, Status::Ok, "{}", v.reason);
        // Behind what was there an interval ago, growing: falling behind.
        let w = [
            (Some(100), 101),
            (Some(101), 106),
            (Some(102), 108),
            (Some(103), 110),
        ];
        assert_eq!(status(&w, true), Status::Warn);
    }

    #[test]
    fn behind_but_keeping_pace_is_ok() {
        let w = [
            (Some(10), 40),
            (Some(40), 70),
            (Some(60), 80),
            (Some(90), 110),
        ];
        assert_eq!(status(&w, true), Status::Ok);
    }

    #[test]
    fn a_commit_moved_back_is_rewind_until_it_recovers() {
        let w = [
            (Some(100), 120),
            (Some(110), 130),
            (Some(20), 140),
            (Some(40), 150),
        ];
        assert_eq!(status(&w, true), Status::Rewind);
        let w = [
            (Some(100), 120),
            (Some(20), 130),
            (Some(80), 140),
            (Some(115), 150),
        ];
        assert_ne!(status(&w, true), Status::Rewind);
    }

    #[test]
    fn never_committed_and_data_loss_are_named() {
        assert_eq!(status(&[(None, 500); 5], false), Status::NoCommit);
        let w = vec![Sample {
            at_ms: 0,
            committed: Some(5),
            log_start: 100,
            log_end: 200,
        }];
        let v = partition_status(&w, true, &Rules::default(), None);
        assert_eq!(v.status, Status::Lost);
        assert!(v.reason.contains("95 unread messages"), "{}", v.reason);
    }

    #[test]
    fn a_stop_says_how_long_it_has_stood_still_beyond_the_window() {
        let w = [
            (Some(50), 60),
            (Some(50), 80),
            (Some(50), 100),
            (Some(50), 120),
        ];
        // An earlier pass saw offset 50 stand since t = -15 min: the
        // sentence counts from there, not from the window's first sample.
        let known = Standing {
            committed: 50,
            since_ms: -900_000,
            members_since_ms: None,
        };
        let v = partition_status(&window(&w), false, &Rules::default(), Some(known));
        assert_eq!(v.status, Status::Stop);
        assert!(
            v.reason
                .contains("no progress for 15 min 45 s while 70 behind"),
            "{}",
            v.reason
        );
        assert_eq!(v.standing, Some(known));
        // What was known of another offset says nothing about this one.
        let other = Standing {
            committed: 40,
            ..known
        };
        let v = partition_status(&window(&w), false, &Rules::default(), Some(other));
        assert!(v.reason.contains("for 45 s"), "{}", v.reason);
        assert_eq!(
            v.standing,
            Some(Standing {
                committed: 50,
                since_ms: 0,
                members_since_ms: None,
            })
        );
        // A move inside the window dates the stand itself.
        let moved = [
            (Some(40), 60),
            (Some(50), 80),
            (Some(50), 100),
            (Some(50), 120),
        ];
        let v = partition_status(&window(&moved), false, &Rules::default(), Some(known));
        assert!(v.reason.contains("for 30 s"), "{}", v.reason);
        // With members all along, STALL says the same.
        let stalled = Standing {
            members_since_ms: Some(-900_000),
            ..known
        };
        let v = partition_status(
            &window(&[(Some(50), 90); 4]),
            true,
            &Rules::default(),
            Some(stalled),
        );
        assert_eq!(v.status, Status::Stall);
        assert!(v.reason.contains("stayed at 50 for 15 min"), "{}", v.reason);
    }

    #[test]
    fn a_stopped_consumer_that_returns_is_ok_at_once_and_not_stall_before_its_first_commit() {
        // Stopped at 50 (STOP); from the pass at t=75 s its members are back
        // and it has not committed yet.
        let samples = window(&[(Some(50), 90); 9]);
        let rules = Rules::default();
        let stop = partition_status(&samples[..5], false, &rules, None);
        assert_eq!(stop.status, Status::Stop);
        let mut known = stop.standing;
        let mut seen = Vec::new();
        for n in 6..=9 {
            let v = partition_status(&samples[..n], true, &rules, known);
            known = v.standing;
            seen.push(v.status);
        }
        // The pass they came back resolves the STOP (never relabelled
        // STALL); after a window of their own without a commit, STALL.
        assert_eq!(
            seen,
            [Status::Ok, Status::Ok, Status::Ok, Status::Stall],
            "{known:?}"
        );
        let back = partition_status(&samples[..6], true, &rules, stop.standing);
        assert!(
            back.reason.contains("members are back 0 s ago"),
            "{}",
            back.reason
        );
        assert_eq!(
            known.and_then(|k| k.members_since_ms),
            Some(75_000),
            "the STALL counts its members from their return"
        );
        // Its first commit ends it: nothing left standing.
        let mut moved = samples[..7].to_vec();
        moved.push(Sample {
            at_ms: 105_000,
            committed: Some(60),
            log_start: 0,
            log_end: 90,
        });
        let v = partition_status(&moved, true, &rules, known);
        assert_eq!((v.status, v.standing), (Status::Ok, None));
    }

    #[test]
    fn a_group_without_members_is_stop_after_one_interval() {
        // Consuming, then the last member leaves: STOP one interval later,
        // though the window still holds samples where it kept up.
        let w = [
            (Some(10), 10),
            (Some(20), 20),
            (Some(30), 35),
            (Some(30), 50),
        ];
        let v = partition_status(&window(&w), false, &Rules::default(), None);
        assert_eq!(v.status, Status::Stop);
        assert!(
            v.reason.contains("no progress for 15 s while 20 behind"),
            "{}",
            v.reason
        );
        // One sample behind is not enough; nor is standing still with members.
        assert_eq!(status(&w[..3], false), Status::Incomplete);
        assert_eq!(status(&w, true), Status::Ok);
        // Behind, without members, but still committing: not stopped.
        let w = [(Some(10), 20), (Some(15), 30)];
        assert_eq!(status(&w, false), Status::Incomplete);
    }

    #[test]
    fn too_little_history_is_incomplete_not_ok() {
        let w = [(Some(10), 50), (Some(10), 60)];
        let v = partition_status(&window(&w), true, &Rules::default(), None);
        assert_eq!(v.status, Status::Incomplete);
        assert!(v.reason.contains("2 of 4 samples"), "{}", v.reason);
        assert_eq!(
            partition_status(&[], true, &Rules::default(), None).status,
            Status::Incomplete
        );
    }

    #[test]
    fn time_lag_of_a_window() {
        // End moves 10 every 15 s; committed 20 was the end at t=15 s; the
        // newest sample is at t=45 s: 30 s behind.
        let w = window(&[
            (Some(0), 10),
            (Some(10), 20),
            (Some(15), 30),
            (Some(20), 40),
        ]);
        assert_eq!(window_time_lag_s(&w), Some(30.0));
        assert_eq!(window_time_lag_s(&window(&[(None, 10), (None, 20)])), None);
        assert_eq!(window_time_lag_s(&[]), None);
    }

    #[test]
    fn group_takes_its_worst_partition() {
        let ok = partition_status(&window(&[(Some(5), 5); 4]), true, &Rules::default(), None);
        let stop = partition_status(&window(&[(Some(5), 9); 4]), false, &Rules::default(), None);
        assert_eq!(group_status([&ok, &stop]), Status::Stop);
        assert_eq!(group_status([&ok]), Status::Ok);
        assert!(
            Status::Warn.is_trouble() && !Status::Ok.is_trouble() && !Status::NoCommit.is_trouble()
        );
    }
}
