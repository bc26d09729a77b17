//! When an open flag's receipts are written again. A lag flag's receipts
//! hold every troubled partition's last ten samples: tens of kilobytes a
//! flag, which change every pass as the window slides. Rewriting them each
//! pass cost most of the evaluation at a thousand troubled groups
//! (BENCHMARKS.md), so they are rewritten when the trouble they show
//! changes — its kind, which partitions, their statuses, how long they have
//! stood — and otherwise every [`REFRESH_EVALUATIONS`] evaluations, each
//! flag at its own turn so the rewrites spread over the passes. The flag's
//! sentence and kind are written every pass.

use serde_json::Value;
use std::hash::{DefaultHasher, Hash, Hasher};

/// The most evaluations a flag's receipts may go unwritten while the
/// trouble stays the same (20 passes: 5 minutes at the default interval).
pub const REFRESH_EVALUATIONS: u64 = 20;

/// What makes receipts different: the evidence without each partition's
/// samples and sentence (both move every pass). Comparable only within one
/// process (it is a hash kept in memory, never stored).
pub fn gist(evidence: &Value) -> u64 {
    let mut hasher = DefaultHasher::new();
    match evidence {
        Value::Object(fields) => {
            for (name, value) in fields {
                name.hash(&mut hasher);
                match (name.as_str(), value) {
                    ("partitions", Value::Array(parts)) => {
                        for part in parts {
                            hash_part(part, &mut hasher);
                        }
                    }
                    _ => value.to_string().hash(&mut hasher),
                }
            }
        }
        other => other.to_string().hash(&mut hasher),
    }
    hasher.finish()
}

fn hash_part(part: &Value, hasher: &mut DefaultHasher) {
    match part {
        Value::Object(fields) => {
            for (name, value) in fields {
                if name != "samples" && name != "reason" {
                    name.hash(hasher);
                    value.to_string().hash(hasher);
                }
            }
        }
        other => other.to_string().hash(hasher),
    }
}

/// Whether flag `flag_id`'s receipts are written at evaluation number
/// `evaluation`: when nothing is known of what was written last, when the
/// gist changed, or at the flag's turn to be refreshed.
pub fn rewrite(written: Option<u64>, gist: u64, flag_id: i64, evaluation: u64) -> bool {
    written != Some(gist)
        || evaluation
            .wrapping_add(flag_id.unsigned_abs())
            .is_multiple_of(REFRESH_EVALUATIONS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn evidence(status: &str, since: i64, committed: i64, reason: &str) -> Value {
        json!({
            "rule": "windowed lag status",
            "group_status": status,
            "partitions": [{
                "topic": "orders", "partition": 0, "status": status, "reason": reason,
                "standing": {"committed": 5, "since_ms": since},
                "samples": [{"at": "2026-12-05T07:00:00Z", "committed": committed, "log_end": 90}],
            }],
        })
    }

    #[test]
    fn samples_and_sentences_that_move_each_pass_leave_the_gist_alone() {
        let a = evidence("STOP", 1_000, 5, "no progress for 45 s");
        let b = evidence("STOP", 1_000, 6, "no progress for 60 s");
        assert_eq!(gist(&a), gist(&b));
    }

    #[test]
    fn a_new_status_standing_or_partition_changes_the_gist() {
        let a = evidence("STOP", 1_000, 5, "r");
        assert_ne!(gist(&a), gist(&evidence("STALL", 1_000, 5, "r")));
        assert_ne!(gist(&a), gist(&evidence("STOP", 2_000, 5, "r")));
        let mut more = a.clone();
        if let Some(parts) = more["partitions"].as_array_mut() {
            let mut second = parts[0].clone();
            second["partition"] = json!(1);
            parts.push(second);
        }
        assert_ne!(gist(&a), gist(&more));
        let mut members = a.clone();
        members["group_members"] = json!(2);
        assert_ne!(gist(&a), gist(&members));
    }

    #[test]
    fn unchanged_receipts_are_refreshed_once_every_period_at_each_flags_turn() {
        let g = 42;
        assert!(rewrite(None, g, 7, 3), "nothing known: written");
        assert!(rewrite(Some(41), g, 7, 3), "changed: written");
        let turns: Vec<u64> = (0..3 * REFRESH_EVALUATIONS)
            .filter(|e| rewrite(Some(g), g, 7, *e))
            .collect();
        assert_eq!(turns.len(), 3, "once a period: {turns:?}");
        assert!(turns.windows(2).all(|w| w[1] - w[0] == REFRESH_EVALUATIONS));
        // Another flag has another turn, so a thousand flags raised at once
        // are not all rewritten by the same pass.
        let other: Vec<u64> = (0..REFRESH_EVALUATIONS)
            .filter(|e| rewrite(Some(g), g, 8, *e))
            .collect();
        assert_eq!(other.len(), 1);
        assert_ne!(other[0], turns[0]);
    }
}
