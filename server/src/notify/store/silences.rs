//! Silences, and the transitions they hold.

use super::release_holds;
use crate::platform::errors::Db;
use chrono::{DateTime, Utc};
use sqlx::{FromRow, PgConnection, PgPool};

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
