//! What the lineage routines read and record: the Kafka transport's topic
//! and the records it skipped, the groups and connectors the emitter
//! discovers, and the forwarding queue of derived events.

use crate::platform::errors::Db;
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::{FromRow, PgPool};

/// The cluster's lineage topic, when its Kafka transport is on.
pub async fn lineage_topic(pool: &PgPool, cluster_id: i64) -> Result<Option<String>, Db> {
    Ok(sqlx::query_scalar(
        "SELECT lineage_topic FROM clusters WHERE id = $1 AND removed_at IS NULL",
    )
    .bind(cluster_id)
    .fetch_optional(pool)
    .await?
    .flatten())
}

/// A record of the lineage topic that was skipped, and why.
pub struct RejectedRecord<'a> {
    pub partition: i32,
    pub offset: i64,
    pub bytes: i32,
    pub reason: &'a str,
}

/// Notes skipped records (a record noted before, as after a replay, once).
pub async fn reject_records(
    pool: &PgPool,
    cluster_id: i64,
    topic: &str,
    rows: &[RejectedRecord<'_>],
) -> Result<(), Db> {
    if rows.is_empty() {
        return Ok(());
    }
    sqlx::query(
        "INSERT INTO lineage_rejected (cluster_id, topic, partition, \"offset\", bytes, reason)
         SELECT $1, $2, * FROM UNNEST($3::int[], $4::bigint[], $5::int[], $6::text[])
         ON CONFLICT DO NOTHING",
    )
    .bind(cluster_id)
    .bind(topic)
    .bind(rows.iter().map(|r| r.partition).collect::<Vec<_>>())
    .bind(rows.iter().map(|r| r.offset).collect::<Vec<_>>())
    .bind(rows.iter().map(|r| r.bytes).collect::<Vec<_>>())
    .bind(rows.iter().map(|r| r.reason).collect::<Vec<_>>())
    .execute(pool)
    .await?;
    Ok(())
}

/// A consumer group as the sampler last saw it, with its cluster's
/// bootstrap list.
#[derive(FromRow)]
pub struct SeenGroup {
    pub bootstrap: String,
    pub name: String,
    pub topics: Vec<String>,
    pub last_seen: DateTime<Utc>,
}

/// Every group seen reading a topic.
pub async fn seen_groups(pool: &PgPool) -> Result<Vec<SeenGroup>, Db> {
    Ok(sqlx::query_as(
        "SELECT c.bootstrap, g.name, g.topics, g.last_seen
         FROM consumer_groups g JOIN clusters c ON c.id = g.cluster_id AND c.removed_at IS NULL
         WHERE cardinality(g.topics) > 0 ORDER BY g.cluster_id, g.name",
    )
    .fetch_all(pool)
    .await?)
}

/// A connector as the status routine last read it (its config masked),
/// with its Connect cluster's name and its Kafka cluster's bootstrap list.
#[derive(FromRow)]
pub struct SeenConnector {
    pub bootstrap: String,
    pub connect: String,
    pub name: String,
    pub config: Value,
    pub seen_at: DateTime<Utc>,
}

/// Every connector its worker still lists.
pub async fn seen_connectors(pool: &PgPool) -> Result<Vec<SeenConnector>, Db> {
    Ok(sqlx::query_as(
        "SELECT c.bootstrap, cc.name AS connect, k.name, k.config, k.seen_at
         FROM connectors k JOIN connect_clusters cc ON cc.id = k.connect_id
         JOIN clusters c ON c.id = cc.cluster_id AND c.removed_at IS NULL
         WHERE k.gone_at IS NULL ORDER BY k.id",
    )
    .fetch_all(pool)
    .await?)
}

/// A derived event due to be forwarded.
#[derive(FromRow)]
pub struct DueForward {
    pub event_id: i64,
    pub body: String,
    pub attempts: i32,
}

/// Up to `limit` derived events due to be forwarded, oldest first.
pub async fn forward_due(pool: &PgPool, limit: i64) -> Result<Vec<DueForward>, Db> {
    Ok(sqlx::query_as(
        "SELECT f.event_id, e.body, f.attempts FROM lineage_forward f
         JOIN lineage_events e ON e.id = f.event_id
         WHERE f.sent_at IS NULL AND f.next_at <= now()
         ORDER BY f.event_id LIMIT $1",
    )
    .bind(limit)
    .fetch_all(pool)
    .await?)
}

/// Records one attempt: sent, or failed and due again after `retry_in_s`.
pub async fn forward_attempted(
    pool: &PgPool,
    event_id: i64,
    error: Option<&str>,
    retry_in_s: f64,
) -> Result<(), Db> {
    sqlx::query(
        "UPDATE lineage_forward SET attempts = attempts + 1, last_error = $2,
             sent_at = CASE WHEN $2::text IS NULL THEN now() END,
             next_at = now() + make_interval(secs => $3)
         WHERE event_id = $1",
    )
    .bind(event_id)
    .bind(error)
    .bind(retry_in_s)
    .execute(pool)
    .await?;
    Ok(())
}
