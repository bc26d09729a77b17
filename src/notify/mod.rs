//! Notifications: where a team hears of its flags (channels, each with
//! its own filter), what each receiver is sent (Slack Block Kit, a Teams
//! Adaptive Card, PagerDuty Events v2, Alertmanager v2 alerts, a signed
//! generic webhook, an email per flag threaded by the flag, a digest for a
//! burst), and the delivery rules (transitions only, grouping of a burst,
//! silences, the repeat of a flag left unacknowledged). Pure
//! rules; `server/src/notify` carries them out.

use crate::platform::page::Choice;
use serde::{Deserialize, Serialize};

pub mod alertmanager;
pub mod digest;
pub mod email;
mod filter;
mod notice;
pub mod pagerduty;
pub mod plan;
mod silence;
pub mod slack;
pub mod teams;
pub mod webhook;

pub use filter::{Filter, FilterError};
pub use notice::{FlagNotice, Notice, group};
pub use silence::{
    Silence, SilenceError, SilenceScope, check_silence, flag_held_by, flag_held_until, held_until,
    parse_until,
};

/// What kind of receiver a channel is. A new kind is one more variant:
/// the payload it takes is chosen by [`ChannelKind::payload`]'s match, so
/// the compiler lists every place that must learn it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChannelKind {
    /// A Slack incoming webhook: Block Kit messages.
    Slack,
    /// A Microsoft Teams Workflows (or incoming-webhook) URL: an Adaptive Card.
    Teams,
    /// PagerDuty's Events API v2: one event per flag, deduplicated by it.
    PagerDuty,
    /// Prometheus Alertmanager's v2 API: one alert per flag.
    Alertmanager,
    /// Today's JSON, signed with HMAC-SHA-256.
    Webhook,
    /// Email through the operator's mail server: one message per flag and
    /// transition, threaded by the flag; the endpoint is the recipients.
    Email,
}

impl Choice for ChannelKind {
    const NAME: &'static str = "kind";
    fn all() -> &'static [Self] {
        &[
            ChannelKind::Slack,
            ChannelKind::Teams,
            ChannelKind::PagerDuty,
            ChannelKind::Alertmanager,
            ChannelKind::Webhook,
            ChannelKind::Email,
        ]
    }
    fn as_str(self) -> &'static str {
        match self {
            ChannelKind::Slack => "slack",
            ChannelKind::Teams => "teams",
            ChannelKind::PagerDuty => "pagerduty",
            ChannelKind::Alertmanager => "alertmanager",
            ChannelKind::Webhook => "webhook",
            ChannelKind::Email => "email",
        }
    }
}

/// What a channel's settings hold besides its filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Needs {
    /// The endpoint is itself a secret (a Slack or Teams webhook URL holds
    /// its token), so it is given by reference, like a password.
    pub endpoint_is_secret: bool,
    /// A secret besides the endpoint: PagerDuty's routing key (required),
    /// a webhook's signing key (optional).
    pub secret: Option<bool>,
    /// An endpoint the kind has by default (PagerDuty's).
    pub default_endpoint: Option<&'static str>,
}

/// PagerDuty's Events API v2 endpoint.
pub const PAGERDUTY_EVENTS: &str = "https://events.pagerduty.com/v2/enqueue";

impl ChannelKind {
    pub fn parse(s: &str) -> Option<Self> {
        Self::all().iter().copied().find(|k| k.as_str() == s)
    }

    pub fn needs(self) -> Needs {
        let n = |endpoint_is_secret, secret, default_endpoint| Needs {
            endpoint_is_secret,
            secret,
            default_endpoint,
        };
        match self {
            ChannelKind::Slack | ChannelKind::Teams => n(true, None, None),
            ChannelKind::PagerDuty => n(false, Some(true), Some(PAGERDUTY_EVENTS)),
            ChannelKind::Alertmanager | ChannelKind::Email => n(false, None, None),
            ChannelKind::Webhook => n(false, Some(false), None),
        }
    }

    /// Whether each body of [`ChannelKind::payload`] tells one flag (in
    /// the notice's order) rather than the whole notice.
    pub fn per_flag(self) -> bool {
        matches!(self, ChannelKind::PagerDuty | ChannelKind::Email)
    }

    /// The bodies a notice becomes for this kind (the secrets are added
    /// when sent, never stored): one message for chat and webhooks, one
    /// event per flag for PagerDuty (it deduplicates by flag), one array
    /// of alerts for Alertmanager, one email per flag (a thread per flag).
    pub fn payload(self, n: &Notice, now_ms: i64) -> Vec<serde_json::Value> {
        match self {
            ChannelKind::Slack => vec![slack::message(n)],
            ChannelKind::Teams => vec![teams::message(n)],
            ChannelKind::PagerDuty => pagerduty::events(n),
            ChannelKind::Alertmanager => vec![alertmanager::alerts(n, now_ms)],
            ChannelKind::Webhook => vec![webhook::body(n)],
            ChannelKind::Email => email::messages(n, now_ms)
                .iter()
                // Strings only: serializing cannot fail.
                .filter_map(|m| serde_json::to_value(m).ok())
                .collect(),
        }
    }
}

/// One message queued for a channel: the transition it tells (or
/// [`digest::DIGEST`]), the flags it lists, its body.
#[derive(Clone, Debug, PartialEq)]
pub struct Queued {
    pub transition: &'static str,
    pub flag_ids: Vec<i64>,
    pub body: serde_json::Value,
}

impl ChannelKind {
    /// What channel `channel_id` of this kind is sent for one round's
    /// notices: each notice's bodies ([`ChannelKind::payload`]), listing
    /// the flags each tells; for an email channel a burst is one digest
    /// listing them all ([`digest::is_burst`]).
    pub fn queue(self, channel_id: i64, notices: &[Notice], now_ms: i64) -> Vec<Queued> {
        if self == ChannelKind::Email && digest::is_burst(notices) {
            let d = digest::digest(channel_id, notices, now_ms);
            let flag_ids = d.flags.iter().map(|t| t.id).collect();
            return serde_json::to_value(&d)
                .map(|body| Queued {
                    transition: digest::DIGEST,
                    flag_ids,
                    body,
                })
                .into_iter()
                .collect();
        }
        let mut out = Vec::new();
        for n in notices {
            let ids: Vec<i64> = n.flags.iter().map(|f| f.id).collect();
            for (i, body) in self.payload(n, now_ms).into_iter().enumerate() {
                let flag_ids = match self.per_flag() {
                    true => ids.get(i).copied().into_iter().collect(),
                    false => ids.clone(),
                };
                out.push(Queued {
                    transition: n.transition.as_str(),
                    flag_ids,
                    body,
                });
            }
        }
        out
    }
}

/// How bad a flag is, for filters and receivers that rank (PagerDuty,
/// Alertmanager). Ordered: `Info < Warning < Error < Critical`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
    Critical,
}

impl Choice for Severity {
    const NAME: &'static str = "min_severity";
    fn all() -> &'static [Self] {
        &[
            Severity::Info,
            Severity::Warning,
            Severity::Error,
            Severity::Critical,
        ]
    }
    /// PagerDuty's own words for its four severities, and Alertmanager's
    /// usual `severity` label values.
    fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
            Severity::Critical => "critical",
        }
    }
}

impl Severity {
    pub fn parse(s: &str) -> Option<Self> {
        Self::all().iter().copied().find(|k| k.as_str() == s)
    }

    /// The severity of a flag's kind: data stopped or unreachable is
    /// critical, data late or at risk an error, early signs a warning.
    pub fn of_kind(kind: &str) -> Self {
        match kind {
            // A fast SLO burn pages; a slow one is a ticket.
            "STOP" | "LOST" | "OFFLINE" | "UNREACHABLE" | "FAILED" | "SLO_BURN_FAST" => {
                Severity::Critical
            }
            "STALL" | "REWIND" | "UNDER_REPLICATED" | "FRESHNESS" | "RETENTION" => Severity::Error,
            "WARN" | "QUIET" | "UNASSIGNED" | "SLO_BURN_SLOW" => Severity::Warning,
            _ => Severity::Info,
        }
    }
}

/// Which transition of a flag a message tells: the only moments a team
/// hears of a flag (never every pass), plus the repeat of one left
/// unacknowledged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transition {
    Raise,
    Worsen,
    /// News on an open flag that is not a worsening (a connector restarted).
    Restart,
    Acknowledge,
    Resolve,
    /// Still open and unacknowledged after the team's repeat interval.
    Repeat,
}

impl Transition {
    pub fn as_str(self) -> &'static str {
        match self {
            Transition::Raise => "raise",
            Transition::Worsen => "worsen",
            Transition::Restart => "restart",
            Transition::Acknowledge => "acknowledge",
            Transition::Resolve => "resolve",
            Transition::Repeat => "repeat",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            Transition::Raise,
            Transition::Worsen,
            Transition::Restart,
            Transition::Acknowledge,
            Transition::Resolve,
            Transition::Repeat,
        ]
        .into_iter()
        .find(|t| t.as_str() == s)
    }

    /// How a message's headline says it.
    pub fn words(self) -> &'static str {
        match self {
            Transition::Raise => "raised",
            Transition::Worsen => "worse",
            Transition::Restart => "news",
            Transition::Acknowledge => "acknowledged",
            Transition::Resolve => "resolved",
            Transition::Repeat => "still open, unacknowledged",
        }
    }
}

/// The default repeat interval for unacknowledged flags: 4 hours.
pub const DEFAULT_REPEAT_S: i64 = 4 * 3600;
/// Repeat intervals allowed: 5 minutes to 7 days.
pub const REPEAT_RANGE_S: (i64, i64) = (300, 7 * 86_400);

/// A repeat interval outside [`REPEAT_RANGE_S`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("The repeat interval is between 5 minutes and 7 days (300 to 604800 seconds).")]
pub struct RepeatError;

pub fn check_repeat(s: i64) -> Result<i64, RepeatError> {
    (REPEAT_RANGE_S.0..=REPEAT_RANGE_S.1)
        .contains(&s)
        .then_some(s)
        .ok_or(RepeatError)
}

/// Whether an open flag told last at `last_told_ms` is told again at
/// `now_ms`: only while unacknowledged, once a full interval has passed.
pub fn repeat_due(acknowledged: bool, last_told_ms: i64, interval_s: i64, now_ms: i64) -> bool {
    !acknowledged && now_ms - last_told_ms >= interval_s.saturating_mul(1000)
}

/// How a receiver's answer reads as a channel's health: a 4xx (other than
/// 408 and 429, which are "later") means the channel's settings are wrong
/// — a bad routing key, a revoked webhook — and retrying will not help.
pub fn broken_by(status: u16) -> bool {
    (400..500).contains(&status) && status != 408 && status != 429
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severities_rank_and_map_kinds() {
        assert!(Severity::Critical > Severity::Error && Severity::Warning > Severity::Info);
        assert_eq!(Severity::of_kind("STOP"), Severity::Critical);
        // Data deleted unread, and about to be.
        assert_eq!(Severity::of_kind("LOST"), Severity::Critical);
        assert_eq!(Severity::of_kind("RETENTION"), Severity::Error);
        // A fast SLO burn pages; a slow one is a ticket.
        assert_eq!(Severity::of_kind("SLO_BURN_FAST"), Severity::Critical);
        assert_eq!(Severity::of_kind("SLO_BURN_SLOW"), Severity::Warning);
        assert_eq!(Severity::of_kind("STALL"), Severity::Error);
        assert_eq!(Severity::of_kind("WARN"), Severity::Warning);
        assert_eq!(Severity::of_kind("SOMETHING_NEW"), Severity::Info);
        assert_eq!(Severity::parse("error"), Some(Severity::Error));
        assert_eq!(Severity::parse("Error"), None);
    }

    #[test]
    fn kinds_and_transitions_read_back() {
        for k in ChannelKind::all() {
            assert_eq!(ChannelKind::parse(k.as_str()), Some(*k));
        }
        assert_eq!(ChannelKind::parse("email"), Some(ChannelKind::Email));
        assert_eq!(ChannelKind::parse("sms"), None);
        assert!(ChannelKind::Email.per_flag() && !ChannelKind::Slack.per_flag());
        assert_eq!(
            Transition::parse("acknowledge"),
            Some(Transition::Acknowledge)
        );
        assert_eq!(Transition::parse("notice"), None);
        assert!(ChannelKind::Slack.needs().endpoint_is_secret);
        assert_eq!(ChannelKind::PagerDuty.needs().secret, Some(true));
    }

    #[test]
    fn an_email_channel_gets_a_digest_for_a_burst_and_one_message_per_flag_else() {
        use crate::notify::notice::tests::flag;
        let burst = Notice {
            transition: Transition::Raise,
            cluster: "prod".into(),
            flags: (1..=6).map(|i| flag(i, "g", "STOP")).collect(),
            by: None,
        };
        let q = ChannelKind::Email.queue(3, std::slice::from_ref(&burst), 0);
        assert_eq!(q.len(), 1, "one digest");
        assert_eq!(q[0].transition, "digest");
        assert_eq!(q[0].flag_ids, [1, 2, 3, 4, 5, 6]);
        let few = Notice {
            flags: burst.flags[..5].to_vec(),
            ..burst.clone()
        };
        let q = ChannelKind::Email.queue(3, &[few], 0);
        assert_eq!(q.len(), 5, "one per flag, threaded");
        assert_eq!((q[4].transition, &q[4].flag_ids[..]), ("raise", &[5][..]));
        let q = ChannelKind::Slack.queue(3, &[burst], 0);
        assert_eq!(q.len(), 1);
        assert_eq!(q[0].transition, "raise");
        assert_eq!(q[0].flag_ids.len(), 6);
    }

    #[test]
    fn repeats_only_unacknowledged_after_a_full_interval() {
        let h = 3_600_000;
        assert!(!repeat_due(false, 0, DEFAULT_REPEAT_S, 4 * h - 1));
        assert!(repeat_due(false, 0, DEFAULT_REPEAT_S, 4 * h));
        assert!(!repeat_due(true, 0, DEFAULT_REPEAT_S, 40 * h));
        assert_eq!(check_repeat(299), Err(RepeatError));
        assert_eq!(check_repeat(DEFAULT_REPEAT_S), Ok(DEFAULT_REPEAT_S));
        assert_eq!(check_repeat(7 * 86_400 + 1), Err(RepeatError));
    }

    #[test]
    fn a_4xx_breaks_a_channel_but_throttling_and_5xx_do_not() {
        assert!(broken_by(400) && broken_by(403) && broken_by(404));
        assert!(!broken_by(429) && !broken_by(408) && !broken_by(500) && !broken_by(202));
    }
}
