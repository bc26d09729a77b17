//! Offset lag of one partition from one sample.

use serde::{Deserialize, Serialize};

/// Lag of a group on one partition. Never a count where there is none:
/// a group that never committed is [`OffsetLag::NoCommit`] (not "the whole
/// log"), and a committed offset below log-start is data lost to retention.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum OffsetLag {
    /// The group has no committed offset on this partition.
    NoCommit,
    /// Messages between the committed offset and the log end.
    Behind { messages: u64 },
    /// Retention deleted messages the group had not read yet: `lost` of them
    /// are gone, `messages` remain to read.
    BeyondRetention { lost: u64, messages: u64 },
}

impl OffsetLag {
    /// Messages still to read, when that is a meaningful number.
    pub fn messages(&self) -> Option<u64> {
        match self {
            OffsetLag::NoCommit => None,
            OffsetLag::Behind { messages } | OffsetLag::BeyondRetention { messages, .. } => {
                Some(*messages)
            }
        }
    }
}

/// The lag given a committed offset (`None`: never committed) and the
/// partition's log-start and log-end offsets. Committed offsets are read
/// before log-end offsets, so a fast consumer can look ahead of the end it
/// was compared with: that is zero lag, not negative.
pub fn offset_lag(committed: Option<i64>, log_start: i64, log_end: i64) -> OffsetLag {
    let Some(committed) = committed.filter(|c| *c >= 0) else {
        return OffsetLag::NoCommit;
    };
    let messages = (log_end - committed.max(log_start)).max(0).unsigned_abs();
    if committed < log_start {
        OffsetLag::BeyondRetention {
            lost: (log_start - committed).unsigned_abs(),
            messages,
        }
    } else {
        OffsetLag::Behind { messages }
    }
}

/// klag's `klag_consumer_lag_retention_percent` of one partition: its lag
/// over the offsets retention keeps (log end − log start), in percent ×
/// 100, at most 10000 (data lost, or about to be); `None` for an empty
/// partition or no commit. Offsets read a moment apart must not give more.
pub fn retention_percent(lag: OffsetLag, log_start: i64, log_end: i64) -> Option<f64> {
    let kept = log_end - log_start;
    match lag {
        OffsetLag::NoCommit => None,
        _ if kept <= 0 => None,
        OffsetLag::BeyondRetention { .. } => Some(10_000.0),
        OffsetLag::Behind { messages } => Some(
            (messages as f64 / kept as f64 * 10_000.0)
                .round()
                .min(10_000.0),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn produced_minus_consumed() {
        assert_eq!(
            offset_lag(Some(40), 0, 100),
            OffsetLag::Behind { messages: 60 }
        );
        assert_eq!(
            offset_lag(Some(100), 0, 100),
            OffsetLag::Behind { messages: 0 }
        );
    }

    #[test]
    fn never_committed_is_not_full_lag() {
        assert_eq!(offset_lag(None, 0, 1_000_000), OffsetLag::NoCommit);
        // librdkafka reports "invalid" as a negative offset.
        assert_eq!(offset_lag(Some(-1001), 0, 10), OffsetLag::NoCommit);
        assert_eq!(OffsetLag::NoCommit.messages(), None);
    }

    #[test]
    fn committed_ahead_of_a_stale_end_is_zero() {
        assert_eq!(
            offset_lag(Some(105), 0, 100),
            OffsetLag::Behind { messages: 0 }
        );
    }

    #[test]
    fn below_log_start_is_data_lost() {
        assert_eq!(
            offset_lag(Some(10), 50, 80),
            OffsetLag::BeyondRetention {
                lost: 40,
                messages: 30
            }
        );
    }

    #[test]
    fn the_retention_percent_is_at_most_ten_thousand() {
        assert_eq!(
            retention_percent(offset_lag(Some(75), 50, 100), 50, 100),
            Some(5_000.0)
        );
        assert_eq!(
            retention_percent(offset_lag(Some(10), 50, 80), 50, 80),
            Some(10_000.0)
        );
        // A lag read against an older log start than the window's.
        let stale = OffsetLag::Behind { messages: 400 };
        assert_eq!(retention_percent(stale, 50, 100), Some(10_000.0));
        assert_eq!(retention_percent(offset_lag(Some(5), 50, 50), 50, 50), None);
        assert_eq!(retention_percent(OffsetLag::NoCommit, 0, 100), None);
    }
}
