//! The first weeks' receipts: while a domain is at *watch* or *suggest*,
//! Streamkeeper acts on nothing, so the pilot shows what it would have
//! done there (the flags it raised, the changes it would have blocked, the
//! connector restarts it would have made), each with the record that
//! proves it.

use crate::review::Autonomy;
use serde::{Deserialize, Serialize};

/// What Streamkeeper would have done.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Would {
    /// Raised this flag to its owner (it did: flags are raised at every level).
    Flag,
    /// Blocked this change: its check found it breaks a consumer.
    Block,
    /// Restarted this failed connector (only an autonomous domain does).
    Restart,
}

impl Would {
    pub fn as_str(self) -> &'static str {
        match self {
            Would::Flag => "flag",
            Would::Block => "block",
            Would::Restart => "restart",
        }
    }
}

/// One thing Streamkeeper would have done, with the record behind it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Receipt {
    pub would: Would,
    pub domain: String,
    /// The domain's level (`watch` or `suggest`).
    pub autonomy: String,
    /// The record: `flag:12`, `check:7`.
    pub reference: String,
    pub cluster: String,
    /// The group, topic or connector.
    pub subject: String,
    pub at: chrono::DateTime<chrono::Utc>,
    /// What happened, in words (the flag's reason, the check's verdict).
    pub what: String,
    /// The receipt itself: the flag's evidence, the check's report, the
    /// exact restart request.
    pub evidence: serde_json::Value,
}

/// Whether a domain at `level` is in its first weeks: Streamkeeper watches
/// and suggests there, and acts on nothing.
pub fn first_weeks(level: Autonomy) -> bool {
    level <= Autonomy::Suggest
}

/// Whether a check with this verdict would have blocked the change: it
/// breaks a consumer (an undecided check is for a person to judge).
pub fn would_block(verdict: &str) -> bool {
    verdict == "INCOMPATIBLE"
}

/// The restart Streamkeeper would have made for a connector flag: a
/// FAILED connector it did not restart itself (an autonomous domain's
/// flag carries `auto_restart`), with the exact request from the flag.
pub fn would_restart(
    subject_kind: &str,
    kind: &str,
    evidence: &serde_json::Value,
) -> Option<serde_json::Value> {
    (subject_kind == crate::connect::status::SUBJECT_KIND
        && kind == "FAILED"
        && evidence.get("auto_restart").is_none())
    .then(|| evidence.get("restart").cloned())
    .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn watch_and_suggest_are_the_first_weeks() {
        let first: Vec<bool> = Autonomy::ALL.into_iter().map(first_weeks).collect();
        assert_eq!(first, vec![true, true, false, false]);
    }

    #[test]
    fn only_a_breaking_verdict_would_have_blocked() {
        assert!(would_block("INCOMPATIBLE"));
        assert!(!would_block("COMPATIBLE"));
        assert!(!would_block("UNDECIDED"));
    }

    #[test]
    fn a_failed_connector_not_restarted_is_a_restart_it_would_have_made() {
        let restart = json!({"method": "POST", "url": "http://connect/connectors/s3/restart"});
        let evidence = json!({"restart": restart});
        assert_eq!(
            would_restart("connector", "FAILED", &evidence),
            Some(restart.clone())
        );
        assert_eq!(would_restart("connector", "UNASSIGNED", &evidence), None);
        assert_eq!(would_restart("group", "FAILED", &evidence), None);
        let done = json!({"restart": restart, "auto_restart": {"try": 1}});
        assert_eq!(would_restart("connector", "FAILED", &done), None);
    }
}
