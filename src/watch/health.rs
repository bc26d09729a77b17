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
    /// Seconds since the log end last moved, when the topic has been
    /// quieter than 1.5 × its expected interval.
    pub quiet_for_s: Option<i64>,
}

impl TopicHealth {
    pub fn is_healthy(&self) -> bool {
        self.under_replicated.is_empty() && self.offline.is_empty() && self.quiet_for_s.is_none()
    }
}

/// Health from metadata, the time the log end last advanced (any
/// partition) and the stream's expected message interval.
pub fn topic_health(
    partitions: &[PartitionMeta],
    last_advance_ms: Option<i64>,
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
    let quiet_for_s = match (last_advance_ms, expected_interval_s) {
        (Some(at), Some(expected)) if expected > 0 => {
            let quiet = (now_ms - at) / 1000;
            // 1.5 × expected, in integer arithmetic.
            (quiet * 2 > expected * 3).then_some(quiet)
        }
        _ => None,
    };
    TopicHealth {
        under_replicated,
        offline,
        quiet_for_s,
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
        // Expected every 60 s: quiet for 90 s is fine, 91 s is not.
        assert_eq!(
            topic_health(&parts, Some(0), 90_000, Some(60)).quiet_for_s,
            None
        );
        assert_eq!(
            topic_health(&parts, Some(0), 91_000, Some(60)).quiet_for_s,
            Some(91)
        );
        // No expectation declared: never "quiet".
        assert!(topic_health(&parts, Some(0), 10_000_000, None).is_healthy());
    }
}
