//! A group's retention risk as a flag: raised while the log start is
//! about to pass a committed offset ("billing will lose data in ~40 min at
//! this rate"), before the loss, so the owner can act; kept open, saying
//! what was lost, once it has passed (the group's lag flag is LOST then),
//! and resolved when no partition is at risk any more.
//!
//! Kafka deletes whole segments (every `log.retention.check.interval.ms`,
//! 5 min by default), so the log start moves in steps: a step inside the
//! window makes its slope steep, and once the step has left the window
//! the log start looks still ("not known"). So the flag is raised at a
//! risk within [`AT_RISK_WITHIN_S`] but resolved only when every partition
//! is known clear ([`RetentionRisk::is_clear`]: beyond [`CLEAR_BEYOND_S`],
//! safe, or nothing committed); otherwise the group's retention is
//! [`RetentionCall::Held`], not evaluated, which keeps an open flag as it
//! is and raises none, as for a cluster that could not be read.

use super::lag::trend::{AT_RISK_WITHIN_S, CLEAR_BEYOND_S, RetentionRisk, Trend};
use super::observe::key;
use crate::flags::{FlagKey, Observation};
use crate::platform::durations::human;
use serde_json::json;

/// A group's retention risk.
pub fn retention_key(group: &str) -> FlagKey {
    key("group", group, "retention")
}

/// The kind of the retention flag.
pub const KIND: &str = "RETENTION";

/// A partition's trend, with where it is.
#[derive(Clone, Debug, PartialEq)]
pub struct PartitionTrend {
    pub topic: String,
    pub partition: i32,
    pub trend: Trend,
}

/// What a pass says of a group's retention flag.
#[derive(Clone, Debug, PartialEq)]
pub enum RetentionCall {
    /// A partition is lost or at risk within [`AT_RISK_WITHIN_S`].
    Flag(Observation),
    /// Every partition is known clear: an open flag resolves.
    Clear,
    /// Not known, or between the thresholds: the flag stays as it stands
    /// (its key is not evaluated).
    Held,
}

impl RetentionCall {
    /// The flag raised or kept, when there is one.
    pub fn flag(self) -> Option<Observation> {
        match self {
            RetentionCall::Flag(o) => Some(o),
            RetentionCall::Clear | RetentionCall::Held => None,
        }
    }

    /// Whether the group's retention was judged this pass: only then may
    /// its flag resolve.
    pub fn judged(&self) -> bool {
        !matches!(self, RetentionCall::Held)
    }
}

/// The retention call of `group` over its partitions' trends. A flag's
/// reason names the worst partition (a loss, else the soonest).
pub fn observe_retention(group: &str, partitions: &[PartitionTrend], now_ms: i64) -> RetentionCall {
    match flag(group, partitions, now_ms) {
        Some(o) => RetentionCall::Flag(o),
        None if partitions.iter().all(|p| p.trend.retention.is_clear()) => RetentionCall::Clear,
        None => RetentionCall::Held,
    }
}

/// The flag when a partition is lost or at risk within [`AT_RISK_WITHIN_S`].
fn flag(group: &str, partitions: &[PartitionTrend], now_ms: i64) -> Option<Observation> {
    let mut at_risk: Vec<&PartitionTrend> = partitions
        .iter()
        .filter(|p| p.trend.retention.is_flagged())
        .collect();
    // Soonest first; a loss has 0 s left.
    at_risk.sort_by(|a, b| {
        let s = |p: &PartitionTrend| p.trend.retention.seconds().unwrap_or(f64::MAX);
        s(a).total_cmp(&s(b))
    });
    let worst = at_risk.first()?;
    let (topic, partition) = (&worst.topic, worst.partition);
    let mut reason = match worst.trend.retention {
        RetentionRisk::Lost { messages } => {
            format!("{group} lost {messages} unread messages on {topic}[{partition}] to retention")
        }
        r => {
            // Flagged and not lost: some seconds left.
            let left = r.seconds().unwrap_or_default();
            let left = human((left * 1000.0).min(i64::MAX as f64) as i64);
            format!("{group} will lose data on {topic}[{partition}] in ~{left} at this rate")
        }
    };
    match at_risk.len() - 1 {
        0 => {}
        1 => reason.push_str(" (and 1 more partition at risk)"),
        n => reason.push_str(&format!(" (and {n} more partitions at risk)")),
    }
    let receipts: Vec<_> = at_risk
        .iter()
        .map(|p| {
            json!({
                "topic": p.topic,
                "partition": p.partition,
                "retention": p.trend.retention.sentence(),
                "seconds_left": p.trend.retention.seconds(),
                "lag_velocity_per_s": p.trend.velocity,
            })
        })
        .collect();
    Some(Observation {
        key: retention_key(group),
        kind: KIND.into(),
        reason,
        onset_ms: now_ms,
        evidence: json!({
            "rule": "the log start (advancing at its observed pace over the window) passes the committed offset (advancing at the group's)",
            "flagged_within_s": AT_RISK_WITHIN_S,
            "resolved_beyond_s": CLEAR_BEYOND_S,
            "partitions": receipts,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watch::lag::trend::{CatchUp, Unknown};

    fn at(partition: i32, retention: RetentionRisk) -> PartitionTrend {
        PartitionTrend {
            topic: "orders".into(),
            partition,
            trend: Trend {
                velocity: Some(3.0),
                catch_up: CatchUp::NotCatchingUp,
                retention,
            },
        }
    }

    #[test]
    fn a_risk_within_the_horizon_is_flagged_with_the_soonest_first() {
        let o = observe_retention(
            "billing",
            &[
                at(0, RetentionRisk::In { seconds: 3_000.0 }),
                at(1, RetentionRisk::In { seconds: 2_400.0 }),
                at(2, RetentionRisk::In { seconds: 90_000.0 }),
                at(3, RetentionRisk::NotKnown(Unknown::LogStartStill)),
            ],
            7,
        );
        let RetentionCall::Flag(o) = o else {
            panic!("flagged");
        };
        assert_eq!(o.key, retention_key("billing"));
        assert_eq!(o.kind, "RETENTION");
        assert_eq!(
            o.reason,
            "billing will lose data on orders[1] in ~40 min at this rate (and 1 more partition at risk)"
        );
        assert_eq!(o.evidence["partitions"][0]["partition"], 1);
        assert_eq!(o.evidence["partitions"].as_array().map(Vec::len), Some(2));
        assert_eq!(o.onset_ms, 7);
    }

    #[test]
    fn a_loss_is_named_before_any_risk() {
        let o = observe_retention(
            "billing",
            &[
                at(0, RetentionRisk::In { seconds: 60.0 }),
                at(4, RetentionRisk::Lost { messages: 12 }),
            ],
            0,
        );
        assert_eq!(
            o.flag().map(|o| o.reason),
            Some(
                "billing lost 12 unread messages on orders[4] to retention (and 1 more partition at risk)"
                    .into()
            )
        );
    }

    #[test]
    fn nothing_at_risk_is_no_flag() {
        let safe = [
            at(0, RetentionRisk::Safe),
            at(1, RetentionRisk::In { seconds: 90_000.0 }),
            at(2, RetentionRisk::NotKnown(Unknown::NoCommit)),
        ];
        assert_eq!(observe_retention("billing", &safe, 0), RetentionCall::Clear);
        assert_eq!(observe_retention("billing", &[], 0), RetentionCall::Clear);
    }

    #[test]
    fn not_known_or_between_the_thresholds_is_held() {
        for held in [
            RetentionRisk::NotKnown(Unknown::LogStartStill),
            RetentionRisk::NotKnown(Unknown::TooFewSamples),
            RetentionRisk::In {
                seconds: 2.5 * 3600.0,
            },
        ] {
            let call = observe_retention("billing", &[at(0, RetentionRisk::Safe), at(1, held)], 0);
            assert_eq!(call, RetentionCall::Held, "{held:?}");
            assert!(!call.judged());
        }
    }

    /// A stopped group's partition, its log start deleted a 1,200-message
    /// segment every 20 passes (5 min at 15 s a pass), as a broker does,
    /// judged over the sliding window of 10 passes; the flags' lifecycle
    /// carries the flag from pass to pass.
    #[test]
    fn a_log_start_moving_in_segment_steps_raises_the_flag_once_and_keeps_it() {
        use crate::flags::lifecycle::{Standing, Step, reconcile};
        use crate::watch::lag::status::Sample;
        use crate::watch::lag::trend::partition_trend;
        use std::collections::{BTreeMap, BTreeSet};
        let sample = |pass: i64| Sample {
            at_ms: pass * 15_000,
            committed: Some(20_000),
            log_start: (pass / 20) * 1_200,
            log_end: 30_000 + pass * 50,
        };
        let mut standing: BTreeMap<FlagKey, Standing> = BTreeMap::new();
        let (mut raised, mut resolved) = (0, 0);
        for pass in 9..120 {
            let window: Vec<Sample> = (pass - 9..=pass).map(sample).collect();
            let trend = PartitionTrend {
                topic: "orders".into(),
                partition: 0,
                trend: partition_trend(&window, 0),
            };
            let call = observe_retention("billing", &[trend], pass * 15_000);
            let mut evaluated = BTreeSet::new();
            if call.judged() {
                evaluated.insert(retention_key("billing"));
            }
            let steps = reconcile(
                &standing,
                call.flag().into_iter().collect(),
                &|k| evaluated.contains(k),
                pass * 15_000,
                &|_, _, _| false,
            );
            for step in steps {
                match step {
                    Step::Raise(o) => {
                        raised += 1;
                        standing.insert(o.key, Standing::Live { kind: o.kind });
                    }
                    Step::Resolve(key) => {
                        resolved += 1;
                        standing.remove(&key);
                    }
                    Step::Update { .. } | Step::Release(..) => {}
                }
            }
        }
        assert_eq!((raised, resolved), (1, 0));
    }
}
