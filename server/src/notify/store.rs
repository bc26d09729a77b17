//! Notifications' SQL: channels, the transitions' outbox, silences, and
//! the channels' rows of the deliveries table (the webhook rows are the
//! flags' store's).

use crate::platform::errors::Db;
use chrono::{DateTime, Utc};
use sqlx::{FromRow, PgConnection, PgPool};

#[derive(Debug, Clone, FromRow)]
pub struct ChannelRow {
    pub id: i64,
    pub team_id: i64,
    pub name: String,
    pub kind: String,
    pub endpoint: Option<String>,
    pub endpoint_ref: Option<String>,
    pub secret_ref: Option<String>,
    pub kinds: Vec<String>,
    pub min_severity: String,
    pub clusters: Vec<String>,
    pub broken_at: Option<DateTime<Utc>>,
    pub broken_answer: Option<String>,
}

const CHANNEL: &str = "id, team_id, name, kind, endpoint, endpoint_ref, secret_ref, kinds,
    min_severity, clusters, broken_at, broken_answer";

pub async fn channels(pool: &PgPool, team_id: i64) -> Result<Vec<ChannelRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "SELECT {CHANNEL} FROM notify_channels WHERE team_id = $1 ORDER BY name"
    ))
    .bind(team_id)
    .fetch_all(pool)
    .await?)
}

pub async fn channel(pool: &PgPool, team_id: i64, id: i64) -> Result<Option<ChannelRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "SELECT {CHANNEL} FROM notify_channels WHERE team_id = $1 AND id = $2"
    ))
    .bind(team_id)
    .bind(id)
    .fetch_optional(pool)
    .await?)
}

/// The channels of these teams.
pub async fn channels_of(conn: &mut PgConnection, teams: &[i64]) -> Result<Vec<ChannelRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "SELECT {CHANNEL} FROM notify_channels WHERE team_id = ANY($1) ORDER BY id"
    ))
    .bind(teams)
    .fetch_all(conn)
    .await?)
}

/// Adds a channel; `None` when the team has one of that name already.
pub async fn add_channel(conn: &mut PgConnection, c: &ChannelRow) -> Result<Option<i64>, Db> {
    Ok(sqlx::query_scalar(
        "INSERT INTO notify_channels (team_id, name, kind, endpoint, endpoint_ref, secret_ref,
                                      kinds, min_severity, clusters)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (team_id, name) DO NOTHING RETURNING id",
    )
    .bind(c.team_id)
    .bind(&c.name)
    .bind(&c.kind)
    .bind(&c.endpoint)
    .bind(&c.endpoint_ref)
    .bind(&c.secret_ref)
    .bind(&c.kinds)
    .bind(&c.min_severity)
    .bind(&c.clusters)
    .fetch_optional(conn)
    .await?)
}

pub async fn remove_channel(conn: &mut PgConnection, team_id: i64, id: i64) -> Result<bool, Db> {
    Ok(
        sqlx::query("DELETE FROM notify_channels WHERE team_id = $1 AND id = $2")
            .bind(team_id)
            .bind(id)
            .execute(conn)
            .await?
            .rows_affected()
            > 0,
    )
}

/// Marks a channel broken with the receiver's answer, or mends it.
pub async fn set_broken(pool: &PgPool, id: i64, answer: Option<&str>) -> Result<(), Db> {
    Ok(sqlx::query(
        "UPDATE notify_channels
            SET broken_at = CASE WHEN $2::text IS NULL THEN NULL ELSE streamkeeper_now() END,
                broken_answer = $2
          WHERE id = $1 AND (broken_answer IS DISTINCT FROM $2)",
    )
    .bind(id)
    .bind(answer)
    .execute(pool)
    .await
    .map(drop)?)
}

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

/// The silences of these clusters not ended: (cluster name, scope, name, until).
pub async fn silences_of(
    conn: &mut PgConnection,
    clusters: &[i64],
) -> Result<Vec<(i64, String, String, String, DateTime<Utc>)>, Db> {
    Ok(sqlx::query_as(
        "SELECT c.id, c.name, s.scope, s.name, s.until FROM notify_silences s
           JOIN clusters c ON c.id = s.cluster_id
          WHERE s.cluster_id = ANY($1) AND s.until > streamkeeper_now()",
    )
    .bind(clusters)
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

/// A claimed channel delivery, with its channel's settings.
#[derive(Debug, Clone, FromRow)]
pub struct ChannelDelivery {
    pub id: i64,
    pub transition: String,
    pub flag_ids: Vec<i64>,
    pub idempotency_key: String,
    pub body: serde_json::Value,
    pub attempts: i32,
    pub channel_id: i64,
    pub kind: String,
    pub endpoint: Option<String>,
    pub endpoint_ref: Option<String>,
    pub secret_ref: Option<String>,
}

/// Claims up to `n` due channel deliveries for `lease_s` seconds.
pub async fn claim(pool: &PgPool, n: i64, lease_s: i64) -> Result<Vec<ChannelDelivery>, Db> {
    Ok(sqlx::query_as(
        "WITH claimed AS (
            UPDATE deliveries SET claimed_until = streamkeeper_now() + make_interval(secs => $2)
             WHERE id IN (
                SELECT id FROM deliveries
                 WHERE delivered_at IS NULL AND failed_at IS NULL AND channel_id IS NOT NULL
                   AND next_attempt_at <= streamkeeper_now()
                   AND (claimed_until IS NULL OR claimed_until < streamkeeper_now())
                   -- In order per channel and flag: a resolve waits for its
                   -- trigger (being retried) to go or be given up, or the
                   -- retried trigger would open an incident nobody closes.
                   AND NOT EXISTS (
                        SELECT 1 FROM deliveries o
                         WHERE o.channel_id = deliveries.channel_id AND o.id < deliveries.id
                           AND o.delivered_at IS NULL AND o.failed_at IS NULL
                           AND o.flag_ids && deliveries.flag_ids)
                 ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
            RETURNING id, transition, flag_ids, idempotency_key, body, attempts, channel_id)
         SELECT d.id, d.transition, d.flag_ids, d.idempotency_key, d.body, d.attempts,
                d.channel_id, c.kind, c.endpoint, c.endpoint_ref, c.secret_ref
           FROM claimed d JOIN notify_channels c ON c.id = d.channel_id",
    )
    .bind(n)
    .bind(lease_s as f64)
    .fetch_all(pool)
    .await?)
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

/// Records a 2xx: a raise's first is when its flags were notified.
pub async fn delivered(pool: &PgPool, d: &ChannelDelivery, answer: &str) -> Result<(), Db> {
    let mut tx = pool.begin().await?;
    sqlx::query(
        "UPDATE deliveries SET delivered_at = streamkeeper_now(), attempts = attempts + 1,
                claimed_until = NULL, answer = $2
          WHERE id = $1",
    )
    .bind(d.id)
    .bind(answer)
    .execute(&mut *tx)
    .await?;
    if d.transition == "raise" {
        sqlx::query(
            "UPDATE flags SET notified_at = COALESCE(notified_at, streamkeeper_now())
              WHERE id = ANY($1)",
        )
        .bind(&d.flag_ids)
        .execute(&mut *tx)
        .await?;
    }
    Ok(tx.commit().await?)
}

/// Puts a claimed delivery back for `after_s` without counting an attempt
/// (what it waits for is the console's, not the receiver's): `why` shown.
pub async fn wait(pool: &PgPool, d: &ChannelDelivery, why: &str, after_s: i64) -> Result<(), Db> {
    Ok(sqlx::query(
        "UPDATE deliveries SET last_error = $2, claimed_until = NULL,
                next_attempt_at = streamkeeper_now() + make_interval(secs => $3)
          WHERE id = $1",
    )
    .bind(d.id)
    .bind(why)
    .bind(after_s as f64)
    .execute(pool)
    .await
    .map(drop)?)
}

/// Records a failed attempt: retried after `backoff_s`, given up after
/// `max` attempts or at once when `give_up` (the receiver refused it).
pub async fn failed(
    pool: &PgPool,
    d: &ChannelDelivery,
    answer: &str,
    backoff_s: i64,
    max: i32,
    give_up: bool,
) -> Result<(), Db> {
    Ok(sqlx::query(
        "UPDATE deliveries SET attempts = attempts + 1, answer = $2, last_error = $2,
                claimed_until = NULL,
                next_attempt_at = streamkeeper_now() + make_interval(secs => $3),
                failed_at = CASE WHEN $5 OR attempts + 1 >= $4 THEN streamkeeper_now() END
          WHERE id = $1",
    )
    .bind(d.id)
    .bind(answer)
    .bind(backoff_s as f64)
    .bind(max)
    .bind(give_up)
    .execute(pool)
    .await
    .map(drop)?)
}

/// A flag's channel deliveries, the latest first.
#[derive(Debug, Clone, FromRow)]
pub struct DeliveryRow {
    pub channel: String,
    pub kind: String,
    pub transition: String,
    pub attempts: i32,
    pub answer: Option<String>,
    pub delivered_at: Option<DateTime<Utc>>,
    pub failed_at: Option<DateTime<Utc>>,
    pub next_attempt_at: Option<DateTime<Utc>>,
}

pub async fn deliveries_of(pool: &PgPool, flag_id: i64) -> Result<Vec<DeliveryRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT c.name AS channel, c.kind, d.transition, d.attempts, d.answer,
                d.delivered_at, d.failed_at,
                CASE WHEN d.delivered_at IS NULL AND d.failed_at IS NULL
                     THEN d.next_attempt_at END AS next_attempt_at
           FROM deliveries d JOIN notify_channels c ON c.id = d.channel_id
          WHERE d.flag_ids @> ARRAY[$1]::bigint[] AND d.channel_id IS NOT NULL
          ORDER BY d.id DESC LIMIT 200",
    )
    .bind(flag_id)
    .fetch_all(pool)
    .await?)
}

/// The team of a flag (`None`: no such flag; `Some(None)`: unowned).
pub async fn team_of_flag(pool: &PgPool, flag_id: i64) -> Result<Option<Option<i64>>, Db> {
    Ok(
        sqlx::query_scalar("SELECT team_id FROM flags WHERE id = $1")
            .bind(flag_id)
            .fetch_optional(pool)
            .await?,
    )
}

/// A team's name, `None` when there is no such team.
pub async fn team_name(pool: &PgPool, team_id: i64) -> Result<Option<String>, Db> {
    Ok(sqlx::query_scalar("SELECT name FROM teams WHERE id = $1")
        .bind(team_id)
        .fetch_optional(pool)
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

#[derive(Debug, Clone, FromRow)]
pub struct SilenceRow {
    pub id: i64,
    pub cluster_id: i64,
    pub scope: String,
    pub name: String,
    pub until: DateTime<Utc>,
    pub reason: String,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
}

const SILENCE: &str = "id, cluster_id, scope, name, until, reason, created_by, created_at";

/// A cluster's silences not ended, the soonest end first.
pub async fn silences(pool: &PgPool, cluster_id: i64) -> Result<Vec<SilenceRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "SELECT {SILENCE} FROM notify_silences
          WHERE cluster_id = $1 AND until > streamkeeper_now() ORDER BY until, id"
    ))
    .bind(cluster_id)
    .fetch_all(pool)
    .await?)
}

/// The topics a consumer group reads (none when it is not there).
pub async fn group_topics(pool: &PgPool, cluster_id: i64, name: &str) -> Result<Vec<String>, Db> {
    Ok(
        sqlx::query_scalar(
            "SELECT topics FROM consumer_groups WHERE cluster_id = $1 AND name = $2",
        )
        .bind(cluster_id)
        .bind(name)
        .fetch_optional(pool)
        .await?
        .unwrap_or_default(),
    )
}

pub async fn silence_by_id(
    pool: &PgPool,
    cluster_id: i64,
    id: i64,
) -> Result<Option<SilenceRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "SELECT {SILENCE} FROM notify_silences WHERE cluster_id = $1 AND id = $2"
    ))
    .bind(cluster_id)
    .bind(id)
    .fetch_optional(pool)
    .await?)
}

pub async fn add_silence(conn: &mut PgConnection, s: &SilenceRow) -> Result<SilenceRow, Db> {
    Ok(sqlx::query_as(&format!(
        "INSERT INTO notify_silences (cluster_id, scope, name, until, reason, created_by)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING {SILENCE}"
    ))
    .bind(s.cluster_id)
    .bind(&s.scope)
    .bind(&s.name)
    .bind(s.until)
    .bind(&s.reason)
    .bind(&s.created_by)
    .fetch_one(conn)
    .await?)
}

/// Ends a silence now: its held deliveries are sent at the next pass if
/// their trouble is still there.
pub async fn end_silence(conn: &mut PgConnection, id: i64) -> Result<(), Db> {
    sqlx::query(
        "UPDATE notify_silences SET until = LEAST(until, streamkeeper_now()) WHERE id = $1",
    )
    .bind(id)
    .execute(&mut *conn)
    .await?;
    release_holds(conn).await
}

pub async fn cluster_exists(pool: &PgPool, cluster_id: i64) -> Result<bool, Db> {
    Ok(
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM clusters WHERE id = $1)")
            .bind(cluster_id)
            .fetch_one(pool)
            .await?,
    )
}

/// A flag's transition a silence holds: until when, as the fan-out
/// decided it (a stream's silence holding a group's flag too), and the
/// reason of the silence of its own subject if one covers it (`until`
/// `None`: it ended, and the next pass decides).
#[derive(Debug, Clone, FromRow)]
pub struct HeldRow {
    pub transition: String,
    pub until: Option<DateTime<Utc>>,
    pub reason: Option<String>,
}

pub async fn held_of(pool: &PgPool, flag_id: i64) -> Result<Vec<HeldRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT n.transition,
                COALESCE(CASE WHEN n.held_until > streamkeeper_now() THEN n.held_until END,
                         s.until) AS until,
                s.reason
           FROM notify_transitions n JOIN flags f ON f.id = n.flag_id
           LEFT JOIN LATERAL (
                SELECT s.until, s.reason FROM notify_silences s
                 WHERE s.cluster_id = f.cluster_id AND s.until > streamkeeper_now()
                   AND (s.scope = 'cluster'
                        OR (s.scope = 'group' AND f.subject_kind = 'group' AND s.name = f.subject)
                        OR (s.scope = 'stream' AND f.subject_kind = 'topic' AND s.name = f.subject))
                 ORDER BY s.until DESC LIMIT 1) s ON true
          WHERE n.flag_id = $1 AND n.held AND n.fanned_out_at IS NULL
          ORDER BY n.id DESC",
    )
    .bind(flag_id)
    .fetch_all(pool)
    .await?)
}

/// A team's name and repeat interval (`None`: no such team).
pub async fn team_repeat(pool: &PgPool, team_id: i64) -> Result<Option<(String, i32)>, Db> {
    Ok(
        sqlx::query_as("SELECT name, repeat_s FROM teams WHERE id = $1")
            .bind(team_id)
            .fetch_optional(pool)
            .await?,
    )
}

pub async fn set_repeat(conn: &mut PgConnection, team_id: i64, repeat_s: i32) -> Result<(), Db> {
    Ok(sqlx::query("UPDATE teams SET repeat_s = $2 WHERE id = $1")
        .bind(team_id)
        .bind(repeat_s)
        .execute(conn)
        .await
        .map(drop)?)
}

/// A broken channel with its team's name.
#[derive(Debug, Clone, FromRow)]
pub struct BrokenRow {
    pub team_id: i64,
    pub team: String,
    pub channel_id: i64,
    pub name: String,
    pub kind: String,
    pub broken_at: DateTime<Utc>,
    pub answer: String,
}

/// The broken channels of every team (`all`), or of the teams `user_id`
/// belongs to as an `owner`; every team's when they belong to the
/// platform team.
pub async fn broken_for(
    pool: &PgPool,
    user_id: i64,
    all: bool,
    owner: bool,
) -> Result<Vec<BrokenRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT c.team_id, t.name AS team, c.id AS channel_id, c.name, c.kind,
                c.broken_at, COALESCE(c.broken_answer, '') AS answer
           FROM notify_channels c JOIN teams t ON t.id = c.team_id
          WHERE c.broken_at IS NOT NULL
            AND ($2 OR EXISTS (
                SELECT 1 FROM memberships m
                 WHERE m.user_id = $1
                   AND ((m.team_id = c.team_id AND $3)
                        OR m.team_id = (SELECT value::bigint FROM settings
                                         WHERE key = 'platform_team_id'))))
          ORDER BY c.broken_at DESC, c.id LIMIT 50",
    )
    .bind(user_id)
    .bind(all)
    .bind(owner)
    .fetch_all(pool)
    .await?)
}
