//! Silences: a cluster, a stream (its topic, and the consumer groups that
//! read only muted streams) or a group muted until a time, with a reason. Flags are still raised and recorded; their
//! deliveries are held until the silence ends, then sent if the trouble
//! is still there (a resolution inside the silence is never sent: the
//! team never heard of the raise).

use super::FlagNotice;
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

    /// Whether it mutes the flags of `subject` (a `group`, a `topic`, or
    /// the `cluster` itself).
    pub fn covers(&self, subject_kind: &str, subject: &str) -> bool {
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
    /// A stream's silence: the stream's owner team as the pass reads it.
    /// It holds a group's flags only when that team owns the group's flag
    /// too — no team mutes another's on-call by muting a stream its groups
    /// happen to read.
    pub owner: Option<String>,
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

/// Until when a flag's deliveries are held: by the silences of its own
/// subject and cluster, and for a consumer group by its streams' — a
/// stream muted for a deploy mutes the lag of the groups reading it. Only
/// when every topic the group reads is muted (a group that also reads a
/// stream nobody muted may be in trouble there), and until the first of
/// those streams' silences ends. A stream's silence holds only the groups
/// its owner owns too (see [`Silence::owner`]).
pub fn flag_held_until(silences: &[Silence], f: &FlagNotice, now_ms: i64) -> Option<i64> {
    let own = held_until(silences, &f.cluster, &f.subject_kind, &f.subject, now_ms);
    let same_owner: Vec<Silence> = silences
        .iter()
        .filter(|s| s.owner.is_some() && s.owner == f.team)
        .cloned()
        .collect();
    let by_streams = if f.subject_kind == "group" && !f.topics.is_empty() {
        f.topics
            .iter()
            .map(|t| held_until(&same_owner, &f.cluster, "topic", t, now_ms))
            .collect::<Option<Vec<i64>>>()
            .and_then(|ends| ends.into_iter().min())
    } else {
        None
    };
    own.max(by_streams)
}

/// The silence [`flag_held_until`] holds a flag by: one covering it (its
/// own subject or cluster, or one of its streams under the same owner)
/// that ends when the hold does — what a page names as muting it, so the
/// page says what delivery does.
pub fn flag_held_by<'a>(
    silences: &'a [Silence],
    f: &FlagNotice,
    now_ms: i64,
) -> Option<&'a Silence> {
    let until = flag_held_until(silences, f, now_ms)?;
    silences
        .iter()
        .filter(|s| s.until_ms == until && s.cluster == f.cluster)
        .find(|s| {
            s.scope.covers(&f.subject_kind, &f.subject)
                || (f.subject_kind == "group"
                    && s.owner.is_some()
                    && s.owner == f.team
                    && f.topics.iter().any(|t| s.scope.covers("topic", t)))
        })
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
    #[error("Give the end as a date and time in UTC, as 2026-12-31T18:00.")]
    UnreadableUntil,
}

/// The end of a silence as a form gives it: a browser's `datetime-local`
/// (`2026-12-31T18:00`, with or without seconds), read as UTC, or a full
/// RFC 3339 time with its offset.
pub fn parse_until(input: &str) -> Result<chrono::DateTime<chrono::Utc>, SilenceError> {
    let input = input.trim();
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(input) {
        return Ok(t.with_timezone(&chrono::Utc));
    }
    ["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M"]
        .iter()
        .find_map(|f| chrono::NaiveDateTime::parse_from_str(input, f).ok())
        .map(|t| t.and_utc())
        .ok_or(SilenceError::UnreadableUntil)
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
            owner: Some("payments".into()),
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
    fn a_forms_end_reads_as_utc() {
        let at = |s: &str| parse_until(s).map(|t| t.to_rfc3339());
        let six = Ok("2026-12-31T18:00:00+00:00".to_string());
        assert_eq!(at("2026-12-31T18:00"), six);
        assert_eq!(at(" 2026-12-31T18:00:00 "), six);
        assert_eq!(at("2026-12-31T19:00:00+01:00"), six);
        assert_eq!(at("tomorrow"), Err(SilenceError::UnreadableUntil));
        assert_eq!(at(""), Err(SilenceError::UnreadableUntil));
    }

    #[test]
    fn a_stream_silence_holds_the_flags_of_groups_reading_only_muted_streams() {
        use crate::notify::notice::tests::flag;
        let all = [
            s(SilenceScope::Stream("orders".into()), 100),
            s(SilenceScope::Stream("refunds".into()), 60),
        ];
        let mut g = flag(1, "billing", "STOP");
        g.topics = vec!["orders".into()];
        assert_eq!(flag_held_until(&all, &g, 10), Some(100));
        assert_eq!(flag_held_until(&all, &g, 100), None, "ended");
        g.topics = vec!["orders".into(), "refunds".into()];
        assert_eq!(
            flag_held_until(&all, &g, 10),
            Some(60),
            "until the first of its streams is heard again"
        );
        g.topics = vec!["orders".into(), "payments".into()];
        assert_eq!(
            flag_held_until(&all, &g, 10),
            None,
            "it also reads a stream nobody muted"
        );
        g.topics = vec![];
        assert_eq!(flag_held_until(&all, &g, 10), None);
        // Another team's group reading the muted stream is not theirs to mute.
        g.topics = vec!["orders".into()];
        g.team = Some("risk".into());
        assert_eq!(flag_held_until(&all, &g, 10), None, "another team's group");
        g.team = Some("payments".into());
        // Its own silence still holds it, the longer of the two.
        let mut with_own = all.to_vec();
        with_own.push(s(SilenceScope::Group("billing".into()), 500));
        g.topics = vec!["orders".into()];
        assert_eq!(flag_held_until(&with_own, &g, 10), Some(500));
        // A topic's flag is the stream's own; another cluster's is not.
        let mut t = flag(2, "refunds", "QUIET");
        t.subject_kind = "topic".into();
        assert_eq!(flag_held_until(&all, &t, 10), Some(60));
        g.cluster = "dev".into();
        assert_eq!(flag_held_until(&all, &g, 10), None);
    }

    #[test]
    fn the_silence_named_is_the_one_delivery_holds_by() {
        use crate::notify::notice::tests::flag;
        let all = [
            s(SilenceScope::Stream("orders".into()), 100),
            s(SilenceScope::Stream("refunds".into()), 60),
        ];
        let mut g = flag(1, "billing", "STOP");
        g.topics = vec!["orders".into(), "refunds".into()];
        assert_eq!(
            flag_held_by(&all, &g, 10),
            Some(&all[1]),
            "the first to end"
        );
        g.team = Some("risk".into());
        assert_eq!(flag_held_by(&all, &g, 10), None, "another team's group");
        g.team = Some("payments".into());
        g.topics = vec!["orders".into(), "payments".into()];
        assert_eq!(flag_held_by(&all, &g, 10), None, "a stream nobody muted");
        let own = [s(SilenceScope::Group("billing".into()), 30)];
        assert_eq!(flag_held_by(&own, &g, 10), Some(&own[0]));
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
