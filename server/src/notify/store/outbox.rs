//! The transitions' outbox (`notify_transitions`): what is pending,
//! fanned out, held by a silence; the messages queued from it, the
//! reminders and the Alertmanager re-posts.

use crate::platform::errors::Db;
use chrono::{DateTime, Utc};
use sqlx::{FromRow, PgConnection};

/// For a group's flag `f`, the topics the group reads now, as `topics`
/// (a stream's silence holds its groups' flags by these, as the group's
/// page tells: one rule), and those it read at the flag's raise, as
/// `label_topics`, kept for the Alertmanager label alone (an alert's
/// labels never change while it is open; NULL for a flag raised before
/// they were kept or whose group was not seen then).
const GROUP_TOPICS: &str = "COALESCE((SELECT g.topics FROM consumer_groups g
       WHERE f.subject_kind = 'group' AND g.cluster_id = f.cluster_id AND g.name = f.subject),
     '{}') AS topics,
     (SELECT k.topics FROM notify_flag_topics k WHERE k.flag_id = f.id) AS label_topics";

/// A transition waiting to be told, with what the message needs.
#[derive(Debug, Clone, FromRow)]
pub struct PendingRow {
    pub id: i64,
    pub flag_id: i64,
    pub transition: String,
    pub was: Option<String>,
    pub by_user: Option<String>,
    pub held: bool,
    pub cluster_id: i64,
    pub cluster: String,
    pub subject_kind: String,
    pub subject: String,
    pub kind: String,
    pub reason: String,
    pub team_id: Option<i64>,
    pub team: Option<String>,
    pub onset_at: DateTime<Utc>,
    pub live: bool,
    pub told_before: bool,
    /// For a group, the topics it reads.
    pub topics: Vec<String>,
    /// For a group's flag, the topics of its label (kept at its raise).
    pub label_topics: Option<Vec<String>>,
}

/// Locks up to `n` pending transitions, oldest first (rows another
/// replica is fanning out are skipped, and rows a silence holds until
/// it ends). The transaction marks them.
pub async fn pending(conn: &mut PgConnection, n: i64) -> Result<Vec<PendingRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "WITH p AS (SELECT * FROM notify_transitions
                     WHERE fanned_out_at IS NULL
                       AND (held_until IS NULL OR held_until <= streamkeeper_now())
                    ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
         SELECT p.id, p.flag_id, p.transition, p.was, p.by_user, p.held,
                f.cluster_id, c.name AS cluster, f.subject_kind, f.subject, f.kind, f.reason,
                f.team_id, t.name AS team, f.onset_at,
                f.state IN ('open', 'acknowledged') AS live,
                EXISTS (SELECT 1 FROM notify_transitions o
                         WHERE o.flag_id = p.flag_id AND o.id < p.id AND o.told) AS told_before,
                {GROUP_TOPICS}
           FROM p JOIN flags f ON f.id = p.flag_id JOIN clusters c ON c.id = f.cluster_id
           LEFT JOIN teams t ON t.id = f.team_id
          ORDER BY p.id"
    ))
    .bind(n)
    .fetch_all(conn)
    .await?)
}

/// Marks transitions fanned out (`told`: they became deliveries).
pub async fn fanned_out(conn: &mut PgConnection, ids: &[i64], told: bool) -> Result<(), Db> {
    Ok(sqlx::query(
        "UPDATE notify_transitions SET fanned_out_at = streamkeeper_now(), told = $2
          WHERE id = ANY($1)",
    )
    .bind(ids)
    .bind(told)
    .execute(conn)
    .await
    .map(drop)?)
}

/// Marks transitions held by a silence until `until` (each its own):
/// they stay pending, unlooked at until then.
pub async fn held(conn: &mut PgConnection, ids: &[i64], until: &[DateTime<Utc>]) -> Result<(), Db> {
    Ok(sqlx::query(
        "UPDATE notify_transitions t SET held = true, held_until = h.until
           FROM UNNEST($1::bigint[], $2::timestamptz[]) AS h (id, until)
          WHERE t.id = h.id",
    )
    .bind(ids)
    .bind(until)
    .execute(conn)
    .await
    .map(drop)?)
}

/// Lets every held transition be judged again at the next pass: a
/// silence ended early, or another one added, changes how long each is
/// held.
pub async fn release_holds(conn: &mut PgConnection) -> Result<(), Db> {
    Ok(sqlx::query(
        "UPDATE notify_transitions SET held_until = NULL
          WHERE fanned_out_at IS NULL AND held_until IS NOT NULL",
    )
    .execute(conn)
    .await
    .map(drop)?)
}

/// Queues a channel's message: `flag_ids` the flags it lists.
pub async fn enqueue(
    conn: &mut PgConnection,
    channel_id: i64,
    transition: &str,
    flag_ids: &[i64],
    body: &serde_json::Value,
) -> Result<(), Db> {
    Ok(sqlx::query(
        "INSERT INTO deliveries (channel_id, transition, flag_ids, url, body)
         VALUES ($1, $2, $3, '', $4)",
    )
    .bind(channel_id)
    .bind(transition)
    .bind(flag_ids)
    .bind(body)
    .execute(conn)
    .await
    .map(drop)?)
}

/// Flags raised whose team has channels none of which takes them (every
/// filter said no): the flag list in the app is their notification, as for
/// a team without channels.
pub async fn notified_in_app(conn: &mut PgConnection, flag_ids: &[i64]) -> Result<(), Db> {
    Ok(sqlx::query(
        "UPDATE flags SET notified_at = COALESCE(notified_at, streamkeeper_now())
          WHERE id = ANY($1)",
    )
    .bind(flag_ids)
    .execute(conn)
    .await
    .map(drop)?)
}

/// Takes the lock of the steps that queue reminders and re-posts, for
/// this transaction; `false` when another replica holds it (it queues
/// them: two would queue each twice).
pub async fn lock_reminders(conn: &mut PgConnection) -> Result<bool, Db> {
    Ok(sqlx::query_scalar(
        "SELECT pg_try_advisory_xact_lock(hashtext('streamkeeper.notify.reminders'))",
    )
    .fetch_one(conn)
    .await?)
}

/// Queues a `repeat` for each open (unacknowledged) flag of a team with
/// channels that nobody was told of for the team's repeat interval.
pub async fn queue_repeats(conn: &mut PgConnection) -> Result<u64, Db> {
    Ok(sqlx::query(
        "INSERT INTO notify_transitions (flag_id, transition)
         SELECT f.id, 'repeat' FROM flags f JOIN teams t ON t.id = f.team_id
          WHERE f.state = 'open'
            AND EXISTS (SELECT 1 FROM notify_channels c WHERE c.team_id = t.id)
            -- Told once, and nothing about it still waiting (held by a
            -- silence, or not yet fanned out): a reminder, not a pile.
            AND EXISTS (SELECT 1 FROM notify_transitions n WHERE n.flag_id = f.id AND n.told)
            AND NOT EXISTS (SELECT 1 FROM notify_transitions n
                             WHERE n.flag_id = f.id AND n.fanned_out_at IS NULL)
            AND (SELECT max(n.at) FROM notify_transitions n WHERE n.flag_id = f.id)
                < streamkeeper_now() - make_interval(secs => t.repeat_s)",
    )
    .execute(conn)
    .await?
    .rows_affected())
}

/// An open flag an Alertmanager channel has not been posted for lately.
#[derive(Debug, Clone, FromRow)]
pub struct RepostRow {
    pub channel_id: i64,
    pub flag_id: i64,
    pub cluster: String,
    pub subject_kind: String,
    pub subject: String,
    pub kind: String,
    pub reason: String,
    pub team: Option<String>,
    pub onset_at: DateTime<Utc>,
    pub topics: Vec<String>,
    pub label_topics: Option<Vec<String>>,
}

/// The open flags' alerts to post again to their team's Alertmanager
/// channels, not posted to for `every_s` (an alert ends unless posted
/// again). Only flags the channel was told of (posted before).
pub async fn alerts_to_repost(conn: &mut PgConnection, every_s: i64) -> Result<Vec<RepostRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "SELECT c.id AS channel_id, f.id AS flag_id, k.name AS cluster, f.subject_kind,
                f.subject, f.kind, f.reason, t.name AS team, f.onset_at, {GROUP_TOPICS}
           FROM flags f JOIN notify_channels c ON c.team_id = f.team_id
           JOIN clusters k ON k.id = f.cluster_id JOIN teams t ON t.id = f.team_id
          WHERE c.kind = 'alertmanager' AND f.state IN ('open', 'acknowledged')
            AND c.broken_at IS NULL
            AND EXISTS (SELECT 1 FROM deliveries d
                         WHERE d.channel_id = c.id AND d.flag_ids @> ARRAY[f.id])
            AND NOT EXISTS (SELECT 1 FROM deliveries d
                             WHERE d.channel_id = c.id AND d.flag_ids @> ARRAY[f.id]
                               AND d.created_at > streamkeeper_now() - make_interval(secs => $1))
          ORDER BY c.id, k.name"
    ))
    .bind(every_s as f64)
    .fetch_all(conn)
    .await?)
}
