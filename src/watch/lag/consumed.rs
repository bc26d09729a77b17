//! Topics a group stopped consuming but still has offsets on: its members
//! are assigned other topics, and the broker keeps the old commits until
//! they expire (`offsets.retention.minutes`). Judged as lag, such a topic
//! would grow a lag and raise STALL until then; it is "not consumed since
//! …" instead, and left out of the group's status, lag, trend and flags.
//!
//! The members' assignments are the only evidence, and they are trusted
//! only when whole: the group Stable, with members, and every member's
//! assignment there and parsed. Otherwise (no members — STOP while behind,
//! as any stopped group —, rebalancing, a member's assignment missing or
//! of another protocol) what was known stays: a member skipped would leave
//! its topics looking unassigned while they are read. Even a whole reading
//! may catch a topic between two owners, so a topic is left out only once
//! two trusted passes in a row saw it unassigned.

use super::status::Status;
use chrono::DateTime;
use std::collections::{BTreeMap, BTreeSet};

/// Topics not consumed, each with when the sampler first saw it so (ms).
pub type NotConsumed = BTreeMap<String, i64>;

/// What a pass read of a group's members' assignments.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Assignments {
    /// The topics its members are assigned.
    pub topics: BTreeSet<String>,
    /// Whether every member's assignment was there and parsed.
    pub whole: bool,
}

impl Assignments {
    /// From each member's assigned topics, `None` for a member whose
    /// assignment was missing or could not be parsed.
    pub fn of(members: impl IntoIterator<Item = Option<BTreeSet<String>>>) -> Self {
        let mut read = Assignments {
            topics: BTreeSet::new(),
            whole: true,
        };
        for m in members {
            match m {
                Some(topics) => read.topics.extend(topics),
                None => read.whole = false,
            }
        }
        read
    }

    /// The topics assigned, when they say what is not consumed: the group
    /// (in broker `state`) Stable, and every member's assignment read.
    pub fn trusted(&self, state: &str) -> Option<&BTreeSet<String>> {
        (state == "Stable" && self.whole && !self.topics.is_empty()).then_some(&self.topics)
    }
}

/// What a pass makes of a group's topics.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Consumption {
    /// Left out of the group's judgement.
    pub not_consumed: NotConsumed,
    /// Seen unassigned by this pass only, since when: left out if the next
    /// trusted pass sees them so too.
    pub unassigned_once: NotConsumed,
}

/// What a pass makes of a group's topics: `before` is what the last pass
/// left out, `once` what it saw unassigned for the first time,
/// `committed_on` the topics the group has a committed offset on,
/// `assigned` the topics its members are assigned now when trusted
/// ([`Assignments::trusted`]), `now_ms` the pass's time.
pub fn not_consumed(
    before: &NotConsumed,
    once: &NotConsumed,
    committed_on: &BTreeSet<String>,
    assigned: Option<&BTreeSet<String>>,
    now_ms: i64,
) -> Consumption {
    let mut pass = Consumption::default();
    for t in committed_on {
        let known = before.get(t).copied();
        match assigned {
            // Not known: what was left out stays; a first sighting does not
            // carry over a pass that could not see.
            None => {
                if let Some(since) = known {
                    pass.not_consumed.insert(t.clone(), since);
                }
            }
            Some(a) if a.contains(t) => {}
            Some(_) => match known.or_else(|| once.get(t).copied()) {
                Some(since) => {
                    pass.not_consumed.insert(t.clone(), since);
                }
                None => {
                    pass.unassigned_once.insert(t.clone(), now_ms);
                }
            },
        }
    }
    pass
}

/// A group's status when topics were left out: [`Status::NotConsumed`]
/// when nothing else was judged (`judged` is false), else the status of
/// what was.
pub fn status_of(judged_status: Status, judged: bool, left_out: bool) -> Status {
    if left_out && !judged {
        Status::NotConsumed
    } else {
        judged_status
    }
}

/// "not consumed since 2026-12-07 18:20 UTC: no member is assigned it".
pub fn reason(since_ms: i64) -> String {
    let at = DateTime::from_timestamp_millis(since_ms).map_or_else(
        || since_ms.to_string(),
        |t| t.format("%Y-%m-%d %H:%M UTC").to_string(),
    );
    format!(
        "not consumed since {at}: no member is assigned this topic (its offsets stay until they expire)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(topics: &[&str]) -> BTreeSet<String> {
        topics.iter().map(|t| (*t).to_owned()).collect()
    }

    /// Two trusted passes in a row.
    fn twice(committed: &BTreeSet<String>, assigned: &BTreeSet<String>, at: i64) -> NotConsumed {
        let first = not_consumed(
            &NotConsumed::new(),
            &NotConsumed::new(),
            committed,
            Some(assigned),
            at,
        );
        not_consumed(
            &first.not_consumed,
            &first.unassigned_once,
            committed,
            Some(assigned),
            at + 15_000,
        )
        .not_consumed
    }

    #[test]
    fn a_committed_topic_no_member_is_assigned_is_not_consumed_since_first_seen_so() {
        let committed = set(&["orders", "refunds"]);
        let first = twice(&committed, &set(&["orders"]), 1_000);
        assert_eq!(first, NotConsumed::from([("refunds".into(), 1_000)]));
        // Later passes keep the first time.
        let later = not_consumed(
            &first,
            &NotConsumed::new(),
            &committed,
            Some(&set(&["orders"])),
            90_000,
        );
        assert_eq!(later.not_consumed, first);
        // Assigned again: consumed.
        let back = not_consumed(
            &first,
            &NotConsumed::new(),
            &committed,
            Some(&set(&["orders", "refunds"])),
            99_000,
        );
        assert_eq!(back, Consumption::default());
    }

    #[test]
    fn a_topic_unassigned_for_one_pass_only_is_still_consumed() {
        // A rebalance moves "refunds" between members: one pass sees it
        // unassigned, the next assigned again.
        let committed = set(&["orders", "refunds"]);
        let none = NotConsumed::new();
        let gap = not_consumed(&none, &none, &committed, Some(&set(&["orders"])), 1_000);
        assert!(gap.not_consumed.is_empty(), "{gap:?}");
        assert_eq!(
            gap.unassigned_once,
            NotConsumed::from([("refunds".into(), 1_000)])
        );
        let next = not_consumed(
            &none,
            &gap.unassigned_once,
            &committed,
            Some(&committed),
            16_000,
        );
        assert_eq!(next, Consumption::default());
        // A pass that cannot tell does not count as the second sighting.
        let blind = not_consumed(&none, &gap.unassigned_once, &committed, None, 16_000);
        assert_eq!(blind, Consumption::default());
    }

    #[test]
    fn assignments_are_trusted_only_whole_and_stable() {
        // Two members read; the third's assignment did not parse: its
        // topic ("refunds") must not look unassigned.
        let partly = Assignments::of([Some(set(&["orders"])), None, Some(set(&["orders"]))]);
        assert_eq!(partly.topics, set(&["orders"]));
        assert_eq!(partly.trusted("Stable"), None);
        let whole = Assignments::of([Some(set(&["orders"])), Some(set(&["refunds"]))]);
        assert_eq!(whole.trusted("Stable"), Some(&set(&["orders", "refunds"])));
        assert_eq!(whole.trusted("CompletingRebalance"), None);
        assert_eq!(whole.trusted("PreparingRebalance"), None);
        assert_eq!(Assignments::of([]).trusted("Stable"), None);
        assert_eq!(Assignments::default().trusted("Stable"), None);
    }

    #[test]
    fn without_trusted_assignments_what_was_known_stays() {
        let committed = set(&["orders", "refunds"]);
        let before = NotConsumed::from([("refunds".into(), 1_000)]);
        let none = NotConsumed::new();
        // An empty group, or assignments that could not be read: "orders"
        // is judged (STOP while behind), "refunds" stays not consumed.
        assert_eq!(
            not_consumed(&before, &none, &committed, None, 5_000).not_consumed,
            before
        );
        assert_eq!(
            not_consumed(&none, &none, &committed, None, 5_000),
            Consumption::default()
        );
        // Offsets expired: the topic is gone from it.
        let gone = not_consumed(
            &before,
            &none,
            &set(&["orders"]),
            Some(&set(&["orders"])),
            5_000,
        );
        assert_eq!(gone, Consumption::default());
    }

    #[test]
    fn the_reason_says_since_when() {
        assert_eq!(
            reason(1_796_670_000_000),
            "not consumed since 2026-12-07 19:00 UTC: no member is assigned this topic (its offsets stay until they expire)"
        );
    }
}
