//! Silences: a cluster, a stream (its topic) or a group muted until a
//! time, with a reason. Flags are still raised and recorded; their
//! deliveries are held until the silence ends, then sent if the trouble
//! is still there (a resolution inside the silence is never sent: the
//! team never heard of the raise).

use serde::{Deserialize, Serialize};

/// What a silence mutes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "scope", content = "name", rename_all = "lowercase")]
pub enum SilenceScope {
    /// Every flag of the cluster.
    Cluster,
    /// The flags of a stream's topic.
    Stream(String),
    /// The flags of a consumer group.
    Group(String),
}

impl SilenceScope {
    /// A scope from its stored or typed parts.
    pub fn parse(scope: &str, name: &str) -> Option<Self> {
        let name = name.trim();
        match (scope, name.is_empty()) {
            ("cluster", _) => Some(SilenceScope::Cluster),
            ("stream", false) => Some(SilenceScope::Stream(name.to_owned())),
            ("group", false) => Some(SilenceScope::Group(name.to_owned())),
            _ => None,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            SilenceScope::Cluster => "cluster",
            SilenceScope::Stream(_) => "stream",
            SilenceScope::Group(_) => "group",
        }
    }

    pub fn name(&self) -> &str {
        match self {
            SilenceScope::Cluster => "",
            SilenceScope::Stream(n) | SilenceScope::Group(n) => n,
        }
    }

    fn covers(&self, subject_kind: &str, subject: &str) -> bool {
        match self {
            SilenceScope::Cluster => true,
            SilenceScope::Stream(t) => subject_kind == "topic" && subject == t,
            SilenceScope::Group(g) => subject_kind == "group" && subject == g,
        }
    }
}

/// A silence as the rules read it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Silence {
    pub cluster: String,
    pub scope: SilenceScope,
    pub until_ms: i64,
}

/// Until when a flag's deliveries are held at `now_ms`: the latest end of
/// the silences covering it that have not ended.
pub fn held_until(
    silences: &[Silence],
    cluster: &str,
    subject_kind: &str,
    subject: &str,
    now_ms: i64,
) -> Option<i64> {
    silences
        .iter()
        .filter(|s| s.until_ms > now_ms && s.cluster == cluster)
        .filter(|s| s.scope.covers(subject_kind, subject))
        .map(|s| s.until_ms)
        .max()
}

/// The longest silence: a longer quiet is a change of the channel's filter.
pub const MAX_SILENCE_DAYS: i64 = 30;

#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SilenceError {
    #[error("Say why it is muted; the reason is shown on its page and kept in the audit log.")]
    NoReason,
    #[error("A silence ends in the future; that time has passed.")]
    Past,
    #[error("A silence lasts at most {MAX_SILENCE_DAYS} days.")]
    TooLong,
    #[error("Say what is muted: a cluster, a stream (its topic) or a group by name.")]
    NoScope,
}

/// Checks a silence as entered at `now_ms`.
pub fn check_silence(until_ms: i64, reason: &str, now_ms: i64) -> Result<(), SilenceError> {
    if reason.trim().is_empty() {
        Err(SilenceError::NoReason)
    } else if until_ms <= now_ms {
        Err(SilenceError::Past)
    } else if until_ms - now_ms > MAX_SILENCE_DAYS * 86_400_000 {
        Err(SilenceError::TooLong)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(scope: SilenceScope, until_ms: i64) -> Silence {
        Silence {
            cluster: "prod".into(),
            scope,
            until_ms,
        }
    }

    #[test]
    fn a_silence_holds_what_it_covers_until_it_ends() {
        let all = [
            s(SilenceScope::Group("billing".into()), 100),
            s(SilenceScope::Stream("orders".into()), 50),
            s(SilenceScope::Cluster, 20),
        ];
        assert_eq!(held_until(&all, "prod", "group", "billing", 10), Some(100));
        assert_eq!(held_until(&all, "prod", "topic", "orders", 30), Some(50));
        assert_eq!(held_until(&all, "prod", "topic", "other", 10), Some(20));
        assert_eq!(
            held_until(&all, "prod", "topic", "other", 20),
            None,
            "ended"
        );
        assert_eq!(held_until(&all, "dev", "group", "billing", 10), None);
        assert_eq!(
            held_until(&all, "prod", "topic", "billing", 30),
            None,
            "a group, not a topic"
        );
    }

    #[test]
    fn silences_need_a_reason_and_a_near_future_end() {
        assert_eq!(check_silence(10, " ", 0), Err(SilenceError::NoReason));
        assert_eq!(check_silence(0, "deploy", 0), Err(SilenceError::Past));
        assert_eq!(
            check_silence(31 * 86_400_000, "x", 0),
            Err(SilenceError::TooLong)
        );
        assert_eq!(check_silence(3_600_000, "deploy", 0), Ok(()));
        assert_eq!(
            SilenceScope::parse("group", " g "),
            Some(SilenceScope::Group("g".into()))
        );
        assert_eq!(SilenceScope::parse("group", ""), None);
        assert_eq!(
            SilenceScope::parse("cluster", ""),
            Some(SilenceScope::Cluster)
        );
    }
}
