//! A message for teams that is no flag's transition ("Notify owners" of
//! a producer change's downstream breakage), sent the flags' way: routed
//! by the plan through each team's channels and their filters, made into
//! each channel kind's bodies, queued as channel deliveries in the
//! caller's transaction and sent, retried and recorded by the `notify`
//! routine like any flag's message. One delivery path, not a second.

use super::fanout::{queue, routes};
use super::store;
use crate::platform::errors::Db;
use sqlx::PgConnection;
use std::collections::BTreeMap;
use streamkeeper::notify::plan::{self, Pending};
use streamkeeper::notify::{ChannelKind, FlagNotice, Transition};

/// What one team is told.
#[derive(Clone, Debug)]
pub struct TeamMessage {
    pub team_id: i64,
    pub team: String,
    pub cluster: String,
    /// What it is about (`topic`) and its name.
    pub subject_kind: String,
    pub subject: String,
    /// The kind a channel's filter sees (`BREAKING_CHANGE`): a channel
    /// that takes only some kinds takes this one only when it lists it.
    pub kind: String,
    pub reason: String,
    /// Its page in the console.
    pub url: String,
    /// Names the message in the channels' keys (PagerDuty's dedup key,
    /// an email's thread): a negative number, never a flag's id.
    pub key: i64,
}

/// Queues each message on its team's channels that take it; returns the
/// number of channel messages queued per team id (none: the team has no
/// channel that takes it). PagerDuty and Alertmanager channels are left
/// out: they open incidents and alerts that a resolve closes, and a
/// notice has nothing to resolve.
pub async fn tell_teams(
    conn: &mut PgConnection,
    messages: &[TeamMessage],
    now_ms: i64,
) -> Result<BTreeMap<i64, usize>, Db> {
    let teams: Vec<i64> = messages.iter().map(|m| m.team_id).collect();
    let channels: Vec<store::ChannelRow> = store::channels_of(conn, &teams)
        .await?
        .into_iter()
        .filter(|c| {
            ChannelKind::parse(&c.kind)
                .is_some_and(|k| !matches!(k, ChannelKind::PagerDuty | ChannelKind::Alertmanager))
        })
        .collect();
    let pending: Vec<Pending> = messages.iter().map(|m| pending(m, now_ms)).collect();
    let mut told: BTreeMap<i64, usize> = teams.iter().map(|t| (*t, 0)).collect();
    for (channel_id, notices) in plan::messages(&pending, &routes(&channels)) {
        let Some(c) = channels.iter().find(|c| c.id == channel_id) else {
            continue;
        };
        let Some(kind) = ChannelKind::parse(&c.kind) else {
            continue;
        };
        let queued = queue(conn, channel_id, kind, &notices, now_ms).await?;
        *told.entry(c.team_id).or_default() += queued;
    }
    Ok(told)
}

/// The message as the plan and the payloads take a flag's raise.
fn pending(m: &TeamMessage, now_ms: i64) -> Pending {
    Pending {
        id: m.key,
        transition: Transition::Raise,
        flag: FlagNotice {
            id: m.key,
            cluster: m.cluster.clone(),
            subject_kind: m.subject_kind.clone(),
            subject: m.subject.clone(),
            kind: m.kind.clone(),
            was: None,
            reason: m.reason.clone(),
            team: Some(m.team.clone()),
            url: m.url.clone(),
            onset_ms: now_ms,
            topics: Vec::new(),
            label_topics: None,
        },
        team_id: Some(m.team_id),
        by: None,
        live: true,
        told_before: false,
        was_held: false,
    }
}
