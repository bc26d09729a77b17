//! The channels' rows of the deliveries table: claimed, recorded as
//! delivered, waiting or failed, and a flag's delivery log.

use crate::platform::errors::Db;
use chrono::{DateTime, Utc};
use sqlx::{FromRow, PgPool};
use streamkeeper::notify::digest;

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

/// Records a 2xx: a raise's first (or a digest's, for the flags it told
/// raised) is when its flags were notified.
pub async fn delivered(pool: &PgPool, d: &ChannelDelivery, answer: &str) -> Result<(), Db> {
    let raised = match d.transition.as_str() {
        "raise" => d.flag_ids.clone(),
        digest::DIGEST => digest::raised(&d.body),
        _ => Vec::new(),
    };
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
    if !raised.is_empty() {
        sqlx::query(
            "UPDATE flags SET notified_at = COALESCE(notified_at, streamkeeper_now())
              WHERE id = ANY($1)",
        )
        .bind(&raised)
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
    /// The `Message-ID` of the digest that told it, if one did.
    pub digest: Option<String>,
}

pub async fn deliveries_of(pool: &PgPool, flag_id: i64) -> Result<Vec<DeliveryRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT c.name AS channel, c.kind,
                -- A digest tells each flag's own transition.
                COALESCE((SELECT t->>'transition' FROM jsonb_array_elements(
                                CASE WHEN d.transition = 'digest' THEN d.body->'flags' END) t
                           WHERE (t->>'id')::bigint = $1 LIMIT 1),
                         d.transition) AS transition,
                d.attempts, d.answer, d.delivered_at, d.failed_at,
                CASE WHEN d.delivered_at IS NULL AND d.failed_at IS NULL
                     THEN d.next_attempt_at END AS next_attempt_at,
                CASE WHEN d.transition = 'digest' THEN d.body->>'message_id' END AS digest
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
