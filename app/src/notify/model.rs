//! A team's notification channels and a flag's deliveries, as the screens
//! and the REST API show them. Secrets are references, and never shown
//! back: a channel says only whether its endpoint and secret are set.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A channel as listed on its team's page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ChannelView {
    pub id: i64,
    pub team_id: i64,
    pub name: String,
    /// slack, teams, pagerduty, alertmanager, webhook or email.
    pub kind: String,
    /// The endpoint's host, when it is a plain URL (Alertmanager, a
    /// webhook, PagerDuty); an email channel's recipients; `None` when
    /// the URL is itself a secret.
    pub host: Option<String>,
    /// Whether a secret (routing key, signing key) is referenced.
    pub secret_set: bool,
    /// Flag kinds heard of; empty for all.
    pub kinds: Vec<String>,
    pub min_severity: String,
    /// Cluster names; empty for all.
    pub clusters: Vec<String>,
    /// When the receiver answered a 4xx, and what it answered.
    pub broken_at: Option<DateTime<Utc>>,
    pub broken_answer: Option<String>,
}

/// A channel to add.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct NewChannel {
    pub name: String,
    /// slack, teams, pagerduty, alertmanager, webhook or email.
    pub kind: String,
    /// Slack and Teams: a credential reference (`env:NAME` or
    /// `file:/path`) whose value is the webhook URL. Alertmanager, a
    /// webhook: its URL. PagerDuty: empty for the Events API v2 endpoint.
    /// Email: the address, or up to 10 separated by commas.
    #[serde(default)]
    pub endpoint: String,
    /// PagerDuty: a reference to the routing key (required). A webhook: a
    /// reference to the signing key (optional).
    #[serde(default)]
    pub secret: String,
    /// Comma-separated flag kinds; empty for all.
    #[serde(default)]
    pub kinds: String,
    /// info (the default), warning, error or critical.
    #[serde(default)]
    pub min_severity: String,
    /// Comma-separated cluster names; empty for all.
    #[serde(default)]
    pub clusters: String,
}

/// What a receiver answered a test message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct TestAnswer {
    /// The channel tested, as stored.
    #[serde(default)]
    pub channel: String,
    /// The HTTP status, when the receiver answered over HTTP.
    pub status: Option<u16>,
    /// Its answer (the start of its body; a mail server's reply), or why
    /// there was none.
    pub answer: String,
    pub ok: bool,
    /// Whether the answer marks the channel broken (its settings wrong).
    #[serde(default)]
    pub broken: bool,
}

/// One delivery of a flag to a channel, with what its receiver answered.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct DeliveryView {
    pub channel: String,
    pub kind: String,
    pub transition: String,
    pub attempts: i32,
    pub answer: Option<String>,
    pub delivered_at: Option<DateTime<Utc>>,
    pub failed_at: Option<DateTime<Utc>>,
    /// When it is tried again, while neither delivered nor given up.
    #[serde(default)]
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// A transition a silence holds (no channel yet): what holds it.
    #[serde(default)]
    pub held_by: Option<String>,
}

/// A team's delivery settings: how often a flag left unacknowledged is
/// told again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct NotifySettings {
    /// The team's name (read only: ignored when set).
    #[serde(default)]
    pub team: String,
    /// Seconds, 300 (5 minutes) to 604800 (7 days); 14400 (4 h) by default.
    pub repeat_s: i64,
}

/// A broken channel, as the home page of its team's owners and the
/// platform team tells of it until it is mended or removed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BrokenChannel {
    pub team_id: i64,
    pub team: String,
    pub channel_id: i64,
    pub name: String,
    pub kind: String,
    pub broken_at: DateTime<Utc>,
    pub answer: String,
}

/// A team's notifications screen: its channels and settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TeamNotify {
    pub team_id: i64,
    pub settings: NotifySettings,
    pub channels: Vec<ChannelView>,
}

/// A silence: a cluster, a stream (its topic) or a group muted until a
/// time, with its reason, shown on its pages and kept in the audit log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct SilenceView {
    pub id: i64,
    pub cluster_id: i64,
    /// cluster, stream or group.
    pub scope: String,
    /// The topic or group; empty for the whole cluster.
    pub name: String,
    pub until: DateTime<Utc>,
    pub reason: String,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
}

/// A silence to make.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct NewSilence {
    /// cluster, stream or group.
    pub scope: String,
    /// The stream's topic or the group; empty for the cluster.
    #[serde(default)]
    pub name: String,
    /// Until when (at most 30 days ahead).
    pub until: DateTime<Utc>,
    pub reason: String,
}
