//! Flags: trouble raised to a stream's owner once, kept up to date while it
//! lasts, and resolved when it is gone. The evaluation says what is wrong
//! now; [`lifecycle::reconcile`] says what to do with the flags that stand.

use serde::{Deserialize, Serialize};

pub mod lifecycle;
mod list;
pub mod receipts;
pub use lifecycle::{DismissalKind, Release, Standing, Step};
pub use list::{FlagColumn, FlagScope, FlagState};

/// What a flag is about, and its identity: one open flag per key, so the
/// same trouble is never raised twice.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct FlagKey {
    /// `group`, `topic` or `cluster`.
    pub subject_kind: String,
    pub subject: String,
    /// For groups the key is the group alone (a WARN that becomes a STOP is
    /// the same trouble, escalated); for topics each health rule is its own.
    pub rule: String,
}

/// How long a failed webhook delivery waits before its next attempt, after
/// `attempts` attempts: 2, 4, 8 … seconds, at most five minutes.
pub fn backoff_s(attempts: i32) -> i64 {
    2_i64
        .saturating_pow(u32::try_from(attempts.clamp(0, 20)).unwrap_or(20) + 1)
        .min(300)
}

/// Trouble seen by the latest evaluation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    pub key: FlagKey,
    /// e.g. STOP, WARN, UNDER_REPLICATED, UNREACHABLE.
    pub kind: String,
    pub reason: String,
    /// When the trouble started (first bad sample), ms since the epoch.
    pub onset_ms: i64,
    /// The receipts: the samples, rule, threshold and window behind it.
    pub evidence: serde_json::Value,
}

/// The text of a Slack-compatible message for a raised flag.
pub fn message(cluster: &str, o: &Observation, owner: Option<&str>) -> String {
    let owner = owner.map_or("unowned (platform team)".to_string(), |t| {
        format!("team {t}")
    });
    format!(
        "[{}] {} {} on cluster {}: {} — owner: {}",
        o.kind, o.key.subject_kind, o.key.subject, cluster, o.reason, owner
    )
}

/// The text of a message for a flag that got worse while open.
pub fn worsened_message(cluster: &str, o: &Observation, was: &str, owner: Option<&str>) -> String {
    format!("{} (was {was})", message(cluster, o, owner))
}

/// The text of a message for a resolved flag.
pub fn resolved_message(cluster: &str, key: &FlagKey, kind: &str, owner: Option<&str>) -> String {
    let owner = owner.map_or("unowned (platform team)".to_string(), |t| {
        format!("team {t}")
    });
    format!(
        "[RESOLVED] {} {} on cluster {} is no longer {kind} — owner: {owner}",
        key.subject_kind, key.subject, cluster
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_caps() {
        assert_eq!(backoff_s(0), 2);
        assert_eq!(backoff_s(1), 4);
        assert_eq!(backoff_s(4), 32);
        assert_eq!(backoff_s(10), 300);
    }

    fn key(s: &str) -> FlagKey {
        FlagKey {
            subject_kind: "group".into(),
            subject: s.into(),
            rule: "lag".into(),
        }
    }

    fn obs(s: &str, kind: &str) -> Observation {
        Observation {
            key: key(s),
            kind: kind.into(),
            reason: "r".into(),
            onset_ms: 0,
            evidence: serde_json::json!({}),
        }
    }

    #[test]
    fn message_names_kind_subject_and_owner() {
        let m = message("prod", &obs("billing", "STOP"), Some("payments"));
        assert!(m.starts_with("[STOP] group billing on cluster prod"), "{m}");
        assert!(m.ends_with("owner: team payments"));
        assert!(message("prod", &obs("x", "WARN"), None).contains("unowned"));
    }
}
