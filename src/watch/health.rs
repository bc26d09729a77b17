//! Topic health: replication and liveness from one metadata read, and how
//! long the topic has been quiet compared with the interval its owner
//! expects.

use serde::{Deserialize, Serialize};

/// One partition as metadata describes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionMeta {
    pub partition: i32,
    /// `None` when the partition has no leader.
    pub leader: Option<i32>,
    pub replicas: Vec<i32>,
    pub isr: Vec<i32>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TopicHealth {
    /// Partitions with fewer in-sync replicas than replicas.
    pub under_replicated: Vec<i32>,
    /// Partitions without a leader: nobody can read or write them.
    pub offline: Vec<i32>,
    /// Milliseconds since the last message, when the topic has been
    /// quieter than 1.5 × its expected interval.
    pub quiet_for_ms: Option<i64>,
}

impl TopicHealth {
    pub fn is_healthy(&self) -> bool {
        self.under_replicated.is_empty() && self.offline.is_empty() && self.quiet_for_ms.is_none()
    }
}

/// When a topic's last message came, as far as a watcher can tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "known", rename_all = "snake_case")]
pub enum LastMessage {
    /// The topic has never had a message.
    None,
    /// At `at_ms`: the newest record's own time when `exact`, else the
    /// first pass that saw the log end move (the message came before it).
    At { at_ms: i64, exact: bool },
    /// Not since watching began at `first_seen_ms`, as far as anyone saw:
    /// the log end has not moved and its newest record was not read.
    Unknown { first_seen_ms: i64 },
}

impl LastMessage {
    /// From the catalog's facts: the log-end total, the newest record's
    /// time (if read), the pass that last saw the end move and when the
    /// topic was first seen. The later of the record and the move wins: a
    /// record read before the log moved again is no longer the newest.
    pub fn of(
        log_end_total: Option<i64>,
        record_ms: Option<i64>,
        advanced_ms: Option<i64>,
        first_seen_ms: i64,
    ) -> LastMessage {
        match (record_ms, advanced_ms) {
            _ if log_end_total == Some(0) => LastMessage::None,
            (Some(r), Some(a)) if a > r => LastMessage::At {
                at_ms: a,
                exact: false,
            },
            (Some(r), _) => LastMessage::At {
                at_ms: r,
                exact: true,
            },
            (None, Some(a)) => LastMessage::At {
                at_ms: a,
                exact: false,
            },
            (None, None) => LastMessage::Unknown { first_seen_ms },
        }
    }

    /// The time to show beside "last message", when there is one.
    pub fn at_ms(self) -> Option<i64> {
        match self {
            LastMessage::At { at_ms, .. } => Some(at_ms),
            LastMessage::None | LastMessage::Unknown { .. } => None,
        }
    }

    /// Since when the topic has been silent: at least since watching began
    /// (`first_seen_ms`) when no message was seen.
    pub fn silent_since_ms(self, first_seen_ms: i64) -> i64 {
        match self {
            LastMessage::At { at_ms, .. } => at_ms,
            LastMessage::Unknown { .. } | LastMessage::None => first_seen_ms,
        }
    }
}

/// Health from metadata, the time of the last message (any partition) and
/// the stream's expected message interval, compared to the millisecond.
pub fn topic_health(
    partitions: &[PartitionMeta],
    last_message_ms: Option<i64>,
    now_ms: i64,
    expected_interval_s: Option<i64>,
) -> TopicHealth {
    let offline = partitions
        .iter()
        .filter(|p| p.leader.is_none_or(|l| l < 0))
        .map(|p| p.partition)
        .collect();
    let under_replicated = partitions
        .iter()
        .filter(|p| p.isr.len() < p.replicas.len())
        .map(|p| p.partition)
        .collect();
    let quiet_for_ms = match (last_message_ms, expected_interval_s) {
        (Some(at), Some(expected)) if expected > 0 => {
            let quiet = now_ms.saturating_sub(at);
            // 1.5 × expected, in integer arithmetic.
            (quiet.saturating_mul(2) > expected * 3000).then_some(quiet)
        }
        _ => None,
    };
    TopicHealth {
        under_replicated,
        offline,
        quiet_for_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(partition: i32, leader: Option<i32>, replicas: &[i32], isr: &[i32]) -> PartitionMeta {
        PartitionMeta {
            partition,
            leader,
            replicas: replicas.to_vec(),
            isr: isr.to_vec(),
        }
    }

    #[test]
    fn replication_and_leaders() {
        let parts = [
            part(0, Some(1), &[1, 2, 3], &[1, 2, 3]),
            part(1, Some(2), &[1, 2, 3], &[2]),
            part(2, None, &[1, 2, 3], &[]),
            part(3, Some(-1), &[1], &[]),
        ];
        let h = topic_health(&parts, None, 0, None);
        assert_eq!(h.under_replicated, vec![1, 2, 3]);
        assert_eq!(h.offline, vec![2, 3]);
        assert!(!h.is_healthy());
    }

    #[test]
    fn quiet_beyond_one_and_a_half_intervals() {
        let parts = [part(0, Some(1), &[1], &[1])];
        // Expected every 60 s: quiet for 90 s is fine, 90.001 s is not
        // (whole seconds would wait for 91).
        assert_eq!(
            topic_health(&parts, Some(0), 90_000, Some(60)).quiet_for_ms,
            None
        );
        assert_eq!(
            topic_health(&parts, Some(0), 90_001, Some(60)).quiet_for_ms,
            Some(90_001)
        );
        // No expectation declared: never "quiet".
        assert!(topic_health(&parts, Some(0), 10_000_000, None).is_healthy());
    }

    #[test]
    fn the_last_message_is_the_newest_known_or_unknown_since_first_seen() {
        use LastMessage::{At, Unknown};
        // Never written.
        assert_eq!(LastMessage::of(Some(0), None, None, 5), LastMessage::None);
        // The record's own time, unless the log moved after it was read.
        assert_eq!(
            LastMessage::of(Some(9), Some(100), Some(90), 5),
            At {
                at_ms: 100,
                exact: true
            }
        );
        assert_eq!(
            LastMessage::of(Some(9), Some(100), Some(200), 5),
            At {
                at_ms: 200,
                exact: false
            }
        );
        // Seen to move, never read.
        assert_eq!(
            LastMessage::of(Some(9), None, Some(200), 5),
            At {
                at_ms: 200,
                exact: false
            }
        );
        // Messages, but since watching began the end never moved: unknown.
        assert_eq!(
            LastMessage::of(Some(9), None, None, 5),
            Unknown { first_seen_ms: 5 }
        );
        assert_eq!(Unknown { first_seen_ms: 5 }.silent_since_ms(5), 5);
        assert_eq!(LastMessage::None.silent_since_ms(5), 5);
        assert_eq!(
            At {
                at_ms: 9,
                exact: false
            }
            .silent_since_ms(5),
            9
        );
    }
}
