//! What watch shows: clusters, groups and their lag, topics, the streams catalog
//! and lag series.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
pub use streamkeeper::watch::health::LastMessage;

/// A watched cluster, with how fresh its data is. Credentials appear only
/// as whether they are set: references are never echoed back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ClusterView {
    pub id: i64,
    pub name: String,
    pub bootstrap: String,
    pub security_protocol: String,
    pub sasl_mechanism: Option<String>,
    pub credentials_set: bool,
    pub interval_s: i32,
    pub state: streamkeeper::watch::cluster::ClusterState,
    /// When the last pass that read anything finished.
    pub last_good_pass_at: Option<DateTime<Utc>>,
    /// Seconds since then: how old every lag figure of this cluster is.
    pub data_age_s: Option<i64>,
    /// What the latest pass could not read.
    pub problems: Vec<String>,
    /// While the latest pass's sign-in was refused: when the first refused
    /// pass since the cluster last read started.
    #[serde(default)]
    pub sign_in_refused_since: Option<DateTime<Utc>>,
    /// Set while the cluster is paused: nothing is read, so its figures
    /// are as of its last pass, not current.
    #[serde(default)]
    pub paused: Option<Paused>,
}

/// When a cluster was paused, and by whom.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Paused {
    pub at: DateTime<Utc>,
    pub by: String,
}

impl Paused {
    /// "paused since 2026-12-05 07:50:00 UTC (3 min ago), by ada".
    pub fn text(&self) -> String {
        format!(
            "paused since {}, by {}",
            crate::ui::time::stamp_ago(self.at),
            self.by
        )
    }
}

/// A removed cluster: no longer watched, and gone from every list and
/// page, its history kept until `purged_on`; an admin may restore it
/// until then.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct RemovedCluster {
    pub id: i64,
    pub name: String,
    pub bootstrap: String,
    pub removed_at: DateTime<Utc>,
    pub removed_by: String,
    /// When housekeeping deletes it with everything recorded of it.
    pub purged_on: DateTime<Utc>,
}

/// What removing a cluster does, said before and after: "Its history is
/// kept until 2027-03-05, then deleted; you can restore it until then."
pub fn kept_until(purged_on: DateTime<Utc>) -> String {
    format!(
        "Its history is kept until {}, then deleted; you can restore it until then.",
        purged_on.format("%Y-%m-%d")
    )
}

/// A cluster as an admin adds it. Credentials are references such as
/// `env:STREAMKEEPER_CRED_KAFKA_API_SECRET` or `file:/run/secrets/kafka`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct NewCluster {
    pub name: String,
    pub bootstrap: String,
    #[serde(default = "plaintext")]
    pub security_protocol: String,
    pub sasl_mechanism: Option<String>,
    pub username_ref: Option<String>,
    pub password_ref: Option<String>,
    /// The CA bundle (PEM) the brokers' certificates are checked against,
    /// by reference like the credentials; absent: the system's.
    #[serde(default)]
    pub ca_ref: Option<String>,
    /// Mutual TLS: the certificate (PEM) this console shows brokers that
    /// ask for one, and its private key (PEM), by reference; both or
    /// neither.
    #[serde(default)]
    pub client_cert_ref: Option<String>,
    #[serde(default)]
    pub client_key_ref: Option<String>,
    /// Credentials may go without TLS (SASL_PLAINTEXT, an http registry):
    /// for a local cluster only.
    #[serde(default)]
    pub insecure_credentials: bool,
    #[serde(default = "default_interval")]
    pub interval_s: i32,
}

fn plaintext() -> String {
    "PLAINTEXT".into()
}

fn default_interval() -> i32 {
    15
}

/// One partition of a group's lag, with the evaluation of its window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct PartitionLagView {
    pub topic: String,
    pub partition: i32,
    pub committed: Option<i64>,
    pub log_start: Option<i64>,
    pub log_end: Option<i64>,
    /// Messages behind; absent when there is no commit or no log offset.
    pub lag: Option<u64>,
    /// Seconds behind, estimated from the log-end history; absent when too
    /// little history.
    pub time_lag_s: Option<f64>,
    pub status: String,
    pub reason: String,
    /// Where its lag is heading (`streamkeeper::watch::lag::trend`).
    #[serde(default)]
    pub trend: TrendView,
}

/// Where lag is heading, over the window of passes: velocity, time to
/// catch up and retention risk, as figures and in words.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct TrendView {
    /// Messages per second the lag grows (negative: shrinks); absent
    /// without a commit or with too few samples.
    pub velocity_per_s: Option<f64>,
    /// Seconds until caught up at the current pace: 0 when caught up;
    /// absent when not catching up or not known (`catch_up` says which).
    pub catch_up_s: Option<f64>,
    /// "caught up in ~6 min", "not catching up", "not known: …".
    pub catch_up: String,
    /// Seconds until the log start passes the committed offset at the
    /// observed pace: 0 once it has; absent when safe or not known.
    pub retention_risk_s: Option<f64>,
    /// "loses data in ~40 min at this rate", "not at risk", "not known: …".
    pub retention: String,
}

impl TrendView {
    /// "lag shrinking 12.5 msg/s", "lag steady"; `–` without a figure.
    pub fn velocity_words(&self) -> String {
        match self.velocity_per_s {
            None => "–".into(),
            // Within a tenth of a message a second: noise of batched commits.
            Some(v) if v.abs() < 0.1 => "lag steady".into(),
            Some(v) if v > 0.0 => format!("lag growing {v:.1} msg/s"),
            Some(v) => format!("lag shrinking {:.1} msg/s", -v),
        }
    }

    /// The group page's line: "Catch-up: caught up in ~6 min · lag
    /// shrinking 12.5 msg/s · Retention: not at risk".
    pub fn line(&self) -> String {
        if self.catch_up.is_empty() {
            return "Catch-up: – (not listed: no current figures)".into();
        }
        format!(
            "Catch-up: {} · {} · Retention: {}",
            self.catch_up,
            self.velocity_words(),
            self.retention
        )
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct GroupLagView {
    pub cluster: String,
    pub group: String,
    pub state: String,
    pub members: i32,
    /// The worst partition's status; `NOT_LISTED` once the cluster stopped
    /// listing the group (`streamkeeper::watch::listing`), when `state`
    /// says "not listed since …" and no lag is given.
    pub status: String,
    /// The time of the newest sample shown.
    pub as_of: Option<DateTime<Utc>>,
    pub cluster_state: streamkeeper::watch::cluster::ClusterState,
    /// Set while the cluster is paused: the figures are not current.
    #[serde(default)]
    pub cluster_paused: Option<Paused>,
    /// When the cluster stopped listing the group (deleted, or expired
    /// with its offsets); `None` while it is listed.
    pub gone_since: Option<DateTime<Utc>>,
    /// Its slowest partition's catch-up and soonest retention risk, its
    /// partitions' velocities summed.
    #[serde(default)]
    pub trend: TrendView,
    pub partitions: Vec<PartitionLagView>,
}

/// A consumer group in a cluster's list, with its current status.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct GroupSummary {
    pub name: String,
    pub owner: Option<String>,
    /// Why the owner owns it, as the ownership rule says ("by stream
    /// orders", "claimed on 2026-12-01"); `None` when unowned.
    #[serde(default)]
    pub owner_reason: Option<String>,
    pub state: String,
    pub members: i32,
    /// The status of the last evaluation; `PENDING` before the first;
    /// `NOT_LISTED` once the cluster stopped listing the group, when
    /// `state` says "not listed since …" and no lag is given.
    pub status: String,
    /// Messages behind over all partitions with a commit and log offsets.
    pub total_lag: Option<u64>,
    /// The largest time lag of its partitions, in seconds.
    pub max_time_lag_s: Option<f64>,
    pub last_seen: DateTime<Utc>,
    /// When the cluster stopped listing the group; `None` while listed.
    pub gone_since: Option<DateTime<Utc>>,
    /// When the status and lags above were computed.
    pub evaluated_at: Option<DateTime<Utc>>,
}

/// Which consumer groups a cluster's list shows.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GroupFilter {
    /// A substring of the group's name.
    pub q: Option<String>,
    /// A status (`OK`, `WARN`, `STALL`, `STOP`, `REWIND`, `LOST`, …),
    /// `trouble` for any trouble, or `gone` for groups no longer listed.
    pub status: Option<String>,
    /// The order: a column (`name`, `owner`, `status`, `members`, `lag`,
    /// `time_lag`), descending with a `-` before it; `-status` (the
    /// default) is the most troubled first.
    #[serde(default)]
    pub sort: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ClusterDetail {
    pub cluster: ClusterView,
    pub topics: Vec<TopicView>,
}

/// A topic's health as the last good pass saw it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct TopicView {
    pub name: String,
    pub partitions: i32,
    pub under_replicated: Vec<i32>,
    pub offline: Vec<i32>,
    /// Sum of log-end offsets, when every partition's could be read.
    pub log_end_total: Option<i64>,
    pub last_seen: DateTime<Utc>,
    /// When its last message came, when known (see `last_message`).
    pub last_message_at: Option<DateTime<Utc>>,
    /// Its last message: none, at a time (the record's own, or the pass
    /// that saw the log end move), or unknown since first seen.
    pub last_message: LastMessage,
    /// The stream's catalog entry; all empty for an undescribed topic.
    pub owner: Option<String>,
    pub domain: Option<String>,
    pub tier: Option<i16>,
    pub freshness_budget_s: Option<i32>,
    pub expected_interval_s: Option<i32>,
    pub description: Option<String>,
    pub compatibility: Option<String>,
    /// Its freshness SLO this month, when it has a freshness budget.
    #[serde(default)]
    pub slo: Option<streamkeeper::watch::slo::StreamSlo>,
}

/// What an owner declares about a stream. `owner_team: null` leaves it unowned.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct StreamSpec {
    pub owner_team: Option<String>,
    #[serde(default)]
    pub domain: String,
    /// 1 (99.9 %), 2 (99.5 %) or 3 (99.0 %).
    pub tier: Option<i16>,
    /// Time lag tolerated for its consumers, in seconds.
    pub freshness_budget_s: Option<i32>,
    /// How often a message is expected, in seconds.
    pub expected_interval_s: Option<i32>,
    #[serde(default)]
    pub description: String,
    /// The compatibility level the stream's value subject should have;
    /// the registry hygiene routine reports a subject at another level.
    #[serde(default)]
    pub compatibility: Option<streamkeeper::schemas::Mode>,
}

/// A group's total lag per pass: `None` where the pass read nothing (a gap,
/// drawn as a gap).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct LagPoint {
    pub at: DateTime<Utc>,
    pub lag: Option<i64>,
}

/// What a connection test could and could not read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ConnectionReport {
    pub reachable: bool,
    pub brokers: usize,
    pub topics: usize,
    pub partitions: usize,
    pub partitions_with_offsets: usize,
    pub groups: usize,
    pub groups_with_offsets: usize,
    pub took_ms: i64,
    /// Why it could not be reached, when it could not.
    pub unreachable: Option<streamkeeper::watch::reach::Unreachable>,
    /// What could not be read, in words.
    pub problems: Vec<String>,
}

/// A stream in the list: its topic, owner, health and worst open flag.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct StreamSummary {
    pub cluster_id: i64,
    pub cluster: String,
    pub topic: String,
    pub owner: Option<String>,
    pub tier: Option<i16>,
    pub partitions: i32,
    /// OK, or the kind of an open flag on the topic or a group reading it.
    pub status: String,
    pub last_message_at: Option<DateTime<Utc>>,
    pub last_message: LastMessage,
}

/// Filters of the streams list; empty fields do not filter.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamFilter {
    pub q: Option<String>,
    /// A team name, or `unowned`.
    pub owner: Option<String>,
    /// `trouble` or `ok`.
    pub status: Option<String>,
    /// A column (`stream`, `cluster`, `owner`, `tier`, `partitions`,
    /// `status`, `last_message`), descending with a `-` before it; by
    /// cluster by default.
    #[serde(default)]
    pub sort: Option<String>,
}

/// A stream's page: its catalog entry and health, and its consumers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct StreamDetail {
    pub cluster_id: i64,
    pub cluster: String,
    pub cluster_state: streamkeeper::watch::cluster::ClusterState,
    /// Set while the cluster is paused: the figures are not current.
    #[serde(default)]
    pub cluster_paused: Option<Paused>,
    pub data_age_s: Option<i64>,
    pub topic: TopicView,
    pub consumers: Vec<StreamConsumer>,
    /// The consumers' series end here and span `series_hours` before.
    pub series_to: DateTime<Utc>,
    pub series_hours: i64,
    /// Whether the caller may set the stream's domain and declared level
    /// (admins only: the domain decides who approves its changes).
    pub may_set_domain: bool,
}

/// A consumer group reading a stream, judged on that stream's partitions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct StreamConsumer {
    pub group: String,
    pub owner: Option<String>,
    /// Why the owner owns it, as the ownership rule says ("by stream
    /// orders", "claimed on 2026-12-01"); `None` when unowned.
    #[serde(default)]
    pub owner_reason: Option<String>,
    /// `NOT_LISTED` once the cluster stopped listing the group
    /// (`streamkeeper::watch::listing`).
    pub status: String,
    /// When the cluster stopped listing the group; `None` while listed.
    #[serde(default)]
    pub gone_since: Option<DateTime<Utc>>,
    pub lag: Option<u64>,
    pub max_time_lag_s: Option<f64>,
    /// The group's trend on this stream's partitions.
    #[serde(default)]
    pub trend: TrendView,
    pub series: Vec<LagPoint>,
}

/// One partition of a group's topics, for the per-partition chart.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionRef {
    pub topic: String,
    pub partition: i32,
}

/// A group's lag series with the window it was read over, so the chart
/// draws the window asked for (the server's clock, the same on hydration).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LagSeries {
    pub to: DateTime<Utc>,
    pub hours: i64,
    pub points: Vec<LagPoint>,
    /// The partition drawn; `None` for the group's total lag.
    pub partition: Option<PartitionRef>,
}

/// "Last message" as the pages word it, times as every page shows them: "none" for a
/// topic never written, the record's time, "by" the pass that saw the log
/// end move when the record was not read, or "unknown" since first seen.
pub fn last_message_text(last: LastMessage) -> String {
    let at = |ms: i64| {
        DateTime::<Utc>::from_timestamp_millis(ms)
            .map_or_else(|| "?".to_owned(), crate::ui::time::stamp)
    };
    match last {
        LastMessage::None => "none".into(),
        LastMessage::At { at_ms, exact: true } => at(at_ms),
        LastMessage::At {
            at_ms,
            exact: false,
        } => format!("by {}", at(at_ms)),
        LastMessage::Unknown { first_seen_ms } => {
            format!("unknown (first seen {})", at(first_seen_ms))
        }
    }
}

/// A stream's SLO, with where the stream is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct SloStream {
    pub cluster_id: i64,
    pub cluster: String,
    pub topic: String,
    pub domain: String,
    pub slo: streamkeeper::watch::slo::StreamSlo,
}

/// A domain's streams with a freshness budget and their SLOs this month.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct DomainSlo {
    pub domain: String,
    /// Streams within their tier (error budget not spent) …
    pub within_tier: usize,
    /// … of the streams judged against a tier this month.
    pub judged: usize,
    pub streams: Vec<SloStream>,
}

impl DomainSlo {
    /// "streams within their tier: 14 of 15".
    pub fn line(&self) -> String {
        within_line(self.within_tier, self.judged)
    }
}

/// "streams within their tier: 14 of 15", or why there is no figure.
pub fn within_line(within: usize, judged: usize) -> String {
    if judged == 0 {
        "streams within their tier: not known (no stream with a tier and a freshness budget judged this month)".into()
    } else {
        format!("streams within their tier: {within} of {judged}")
    }
}
