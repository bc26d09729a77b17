//! The transitions' outbox turned into the channels' deliveries: the
//! pending transitions are locked, each is sent, held by a silence or
//! dropped (`streamkeeper::notify::plan`), and each channel gets one
//! message per cluster and transition listing its flags — a burst of a
//! thousand flags is one message per channel, not a thousand (an email
//! channel's burst is one digest). All in one short transaction, so a
//! transition is told once, whichever replica fans it out.

use crate::notify::silences::silence_rule;
use crate::notify::store::{self, ChannelRow, PendingRow};
use crate::platform::errors::Db;
use chrono::DateTime;
use sqlx::{PgConnection, PgPool};
use std::collections::HashSet;
use streamkeeper::notify::plan::{self, Fate, Pending};
use streamkeeper::notify::{ChannelKind, Filter, FlagNotice, Notice, Severity, Transition};

/// Transitions fanned out at a time: a burst of a thousand flags is one pass.
const BATCH: i64 = 5000;

fn pending(r: PendingRow, base_url: &str) -> Option<Pending> {
    Some(Pending {
        id: r.id,
        transition: Transition::parse(&r.transition)?,
        flag: FlagNotice {
            id: r.flag_id,
            url: format!("{}/flags/{}", base_url.trim_end_matches('/'), r.flag_id),
            cluster: r.cluster,
            subject_kind: r.subject_kind,
            subject: r.subject,
            kind: r.kind,
            was: r.was,
            reason: r.reason,
            team: r.team,
            onset_ms: r.onset_at.timestamp_millis(),
            topics: r.topics,
            label_topics: r.label_topics,
        },
        team_id: r.team_id,
        by: r.by_user,
        live: r.live,
        told_before: r.told_before,
        was_held: r.held,
    })
}

/// A channel's filter as stored; a stored severity is one the check
/// allowed, read as `info` if ever not.
pub fn filter_of(c: &ChannelRow) -> Filter {
    Filter {
        kinds: c.kinds.clone(),
        min_severity: Severity::parse(&c.min_severity).unwrap_or(Severity::Info),
        clusters: c.clusters.clone(),
    }
}

/// Each channel as the plan routes to it: its team and its filter.
pub fn routes(channels: &[ChannelRow]) -> Vec<plan::Route> {
    channels
        .iter()
        .map(|c| plan::Route {
            channel_id: c.id,
            team_id: c.team_id,
            filter: filter_of(c),
        })
        .collect()
}

/// Queues one round's `notices` on channel `channel_id` of `kind` as the
/// messages the kind makes of them (one per flag for PagerDuty and email,
/// a burst to an email channel as one digest), each listing the flags it
/// tells; returns how many.
pub async fn queue(
    conn: &mut PgConnection,
    channel_id: i64,
    kind: ChannelKind,
    notices: &[Notice],
    now_ms: i64,
) -> Result<usize, Db> {
    let queued = kind.queue(channel_id, notices, now_ms);
    for q in &queued {
        store::enqueue(conn, channel_id, q.transition, &q.flag_ids, &q.body).await?;
    }
    Ok(queued.len())
}

/// Fans out what is pending; returns how many messages were queued.
pub async fn fan_out(pool: &PgPool, base_url: &str) -> Result<usize, Db> {
    let mut tx = pool.begin().await?;
    let rows = store::pending(&mut tx, BATCH).await?;
    if rows.is_empty() {
        return Ok(0);
    }
    let mut teams: Vec<i64> = rows.iter().filter_map(|r| r.team_id).collect();
    teams.sort_unstable();
    teams.dedup();
    let mut clusters: Vec<i64> = rows.iter().map(|r| r.cluster_id).collect();
    clusters.sort_unstable();
    clusters.dedup();
    let channels = store::channels_of(&mut tx, &teams).await?;
    let mut silences = Vec::new();
    for (cluster_id, cluster, scope, name, until) in store::silences_of(&mut tx, &clusters).await? {
        silences.extend(silence_rule(pool, cluster_id, &cluster, &scope, &name, until).await?);
    }
    let now_ms = crate::platform::clock::now().timestamp_millis();
    let (mut send, mut done) = (Vec::new(), Vec::new());
    let (mut hold, mut hold_until) = (Vec::new(), Vec::new());
    for r in rows {
        let id = r.id;
        let Some(p) = pending(r, base_url) else {
            done.push(id);
            continue;
        };
        match plan::fate(&p, &silences, now_ms) {
            Fate::Send => send.push(p),
            Fate::Hold(until_ms) => {
                hold.push(p.id);
                hold_until.push(DateTime::from_timestamp_millis(until_ms).unwrap_or_default());
            }
            Fate::Drop => done.push(p.id),
        }
    }
    let mut queued = 0;
    let mut reached: HashSet<i64> = HashSet::new();
    for (channel_id, notices) in plan::messages(&send, &routes(&channels)) {
        let Some(kind) = channels
            .iter()
            .find(|c| c.id == channel_id)
            .and_then(|c| ChannelKind::parse(&c.kind))
        else {
            continue;
        };
        reached.extend(notices.iter().flat_map(|n| n.flags.iter().map(|f| f.id)));
        queued += queue(&mut tx, channel_id, kind, &notices, now_ms).await?;
    }
    let with_channels: HashSet<i64> = send
        .iter()
        .filter(|p| {
            p.team_id
                .is_some_and(|t| channels.iter().any(|c| c.team_id == t))
        })
        .map(|p| p.id)
        .collect();
    done.extend(
        send.iter()
            .map(|p| p.id)
            .filter(|id| !with_channels.contains(id)),
    );
    // A raise every channel's filter turned away reached the team only in
    // the app, as if it had no channels: that is when it was notified.
    let in_app: Vec<i64> = send
        .iter()
        .filter(|p| p.transition == Transition::Raise && with_channels.contains(&p.id))
        .map(|p| p.flag.id)
        .filter(|id| !reached.contains(id))
        .collect();
    store::notified_in_app(&mut tx, &in_app).await?;
    // Told: it became a message on at least one channel.
    let (told, untold): (Vec<&Pending>, Vec<&Pending>) = send
        .iter()
        .filter(|p| with_channels.contains(&p.id))
        .partition(|p| reached.contains(&p.flag.id));
    let told: Vec<i64> = told.iter().map(|p| p.id).collect();
    done.extend(untold.iter().map(|p| p.id));
    store::fanned_out(&mut tx, &told, true).await?;
    store::fanned_out(&mut tx, &done, false).await?;
    store::held(&mut tx, &hold, &hold_until).await?;
    tx.commit().await?;
    Ok(queued)
}
