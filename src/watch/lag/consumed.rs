//! Topics a group stopped consuming but still has offsets on: its members
//! are assigned other topics, and the broker keeps the old commits until
//! they expire (`offsets.retention.minutes`). Judged as lag, such a topic
//! would grow a lag and raise STALL until then; it is "not consumed since
//! …" instead, and left out of the group's status, lag, trend and flags.
//!
//! The members' assignments are the only evidence: a group without
//! members (STOP while behind, as any stopped group) or whose assignments
//! could not be read (rebalancing, another protocol) keeps what was known.

use super::status::Status;
use chrono::DateTime;
use std::collections::{BTreeMap, BTreeSet};

/// Topics not consumed, each with when the sampler first saw it so (ms).
pub type NotConsumed = BTreeMap<String, i64>;

/// What a pass makes of a group's topics: `before` is what the last pass
/// knew, `committed_on` the topics it has a committed offset on, `assigned`
/// the topics its `members` are assigned now, `now_ms` the pass's time.
pub fn not_consumed(
    before: &NotConsumed,
    committed_on: &BTreeSet<String>,
    assigned: &BTreeSet<String>,
    members: usize,
    now_ms: i64,
) -> NotConsumed {
    let unknown = members == 0 || assigned.is_empty();
    committed_on
        .iter()
        .filter_map(|t| {
            let since = before.get(t).copied();
            if unknown {
                return Some((t.clone(), since?));
            }
            (!assigned.contains(t)).then(|| (t.clone(), since.unwrap_or(now_ms)))
        })
        .collect()
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

    #[test]
    fn a_committed_topic_no_member_is_assigned_is_not_consumed_since_first_seen_so() {
        let committed = set(&["orders", "refunds"]);
        let first = not_consumed(&NotConsumed::new(), &committed, &set(&["orders"]), 2, 1_000);
        assert_eq!(first, NotConsumed::from([("refunds".into(), 1_000)]));
        // Later passes keep the first time.
        let later = not_consumed(&first, &committed, &set(&["orders"]), 2, 9_000);
        assert_eq!(later, first);
        // Assigned again: consumed.
        let back = not_consumed(&later, &committed, &set(&["orders", "refunds"]), 2, 10_000);
        assert!(back.is_empty());
    }

    #[test]
    fn without_members_or_assignments_what_was_known_stays() {
        let committed = set(&["orders", "refunds"]);
        let before = NotConsumed::from([("refunds".into(), 1_000)]);
        // An empty group: "orders" is judged (STOP while behind), "refunds"
        // stays not consumed.
        assert_eq!(
            not_consumed(&before, &committed, &set(&[]), 0, 5_000),
            before
        );
        // Members whose assignment could not be read: nothing new is said.
        assert_eq!(
            not_consumed(&before, &committed, &set(&[]), 3, 5_000),
            before
        );
        assert!(not_consumed(&NotConsumed::new(), &committed, &set(&[]), 0, 5_000).is_empty());
        // Offsets expired: the topic is gone from it.
        assert!(not_consumed(&before, &set(&["orders"]), &set(&["orders"]), 1, 5_000).is_empty());
    }

    #[test]
    fn the_reason_says_since_when() {
        assert_eq!(
            reason(1_796_670_000_000),
            "not consumed since 2026-12-07 19:00 UTC: no member is assigned this topic (its offsets stay until they expire)"
        );
    }
}
