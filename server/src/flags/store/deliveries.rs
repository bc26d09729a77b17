//! Webhook deliveries: queued in the transaction that makes a flag's
//! transition (or a lineage question, a review item), then claimed, sent
//! and recorded one by one (`flags/routine.rs`).

use crate::platform::errors::Db;
use chrono::{DateTime, Utc};
use sqlx::{FromRow, PgConnection, PgPool};

/// Queues the webhook that tells one transition of a flag (`raise`,
/// `worsen`, `resolve`, `restart`), in the transaction that makes it.
pub async fn enqueue(
    conn: &mut PgConnection,
    flag_id: i64,
    transition: &str,
    url: &str,
    body: &serde_json::Value,
) -> Result<(), Db> {
    Ok(sqlx::query(
        "INSERT INTO deliveries (flag_id, transition, url, body) VALUES ($1, $2, $3, $4)",
    )
    .bind(flag_id)
    .bind(transition)
    .bind(url)
    .bind(body)
    .execute(conn)
    .await
    .map(drop)?)
}

/// Queues the webhook that tells an owner team about lineage question
/// `question` ("notify owners"), in the transaction that records it; the
/// question is notified when its last such delivery gets its 2xx
/// ([`delivered`]).
pub async fn enqueue_question(
    conn: &mut PgConnection,
    question: i64,
    url: &str,
    body: &serde_json::Value,
) -> Result<(), Db> {
    Ok(
        sqlx::query("INSERT INTO deliveries (lineage_question_id, url, body) VALUES ($1, $2, $3)")
            .bind(question)
            .bind(url)
            .bind(body)
            .execute(conn)
            .await
            .map(drop)?,
    )
}

/// Queues the webhook telling a team that review item `item_id` waits,
/// in the transaction that makes it wait.
pub async fn enqueue_review(
    conn: &mut PgConnection,
    item_id: i64,
    url: &str,
    body: &serde_json::Value,
) -> Result<(), Db> {
    Ok(
        sqlx::query("INSERT INTO deliveries (review_item_id, url, body) VALUES ($1, $2, $3)")
            .bind(item_id)
            .bind(url)
            .bind(body)
            .execute(conn)
            .await
            .map(drop)?,
    )
}

/// The `url` of an email delivery: `mailto:` and the address. The flags'
/// routine sends these through the mail server, the rest as webhooks.
pub const MAILTO: &str = "mailto:";

/// Queues one email about review item `item_id` (`body` is the message,
/// `clients::smtp::Email` as JSON), in the transaction that makes the
/// transition it tells; `transition` names it (`mail:waiting`…).
pub async fn enqueue_mail(
    conn: &mut PgConnection,
    item_id: i64,
    transition: &str,
    to: &str,
    body: &serde_json::Value,
) -> Result<(), Db> {
    Ok(sqlx::query(
        "INSERT INTO deliveries (review_item_id, transition, url, body) VALUES ($1, $2, $3, $4)",
    )
    .bind(item_id)
    .bind(transition)
    .bind(format!("{MAILTO}{to}"))
    .bind(body)
    .execute(conn)
    .await
    .map(drop)?)
}

#[derive(Debug, Clone, FromRow)]
pub struct Delivery {
    pub id: i64,
    /// `None` for a review item's notice or a question's.
    pub flag_id: Option<i64>,
    /// The lineage question it tells its owners about, if any.
    pub lineage_question_id: Option<i64>,
    pub transition: String,
    pub idempotency_key: String,
    pub url: String,
    pub body: serde_json::Value,
    pub attempts: i32,
}

/// Records a transition of a flag its team's channels hear of, in the
/// transaction that makes it: the notify routine turns it into the
/// channels' (grouped) deliveries (`server/src/notify`). A group's flag
/// keeps, at its first, the topics the group reads then: its messages'
/// labels stay those for the flag's life (`notify_flag_topics`; nothing
/// is kept when the group is not seen then, and the label tells the
/// topics it reads when told). Silences go by the topics it reads now.
pub async fn record_transition(
    conn: &mut PgConnection,
    flag_id: i64,
    transition: &str,
    was: Option<&str>,
    by: Option<&str>,
) -> Result<(), Db> {
    Ok(sqlx::query(
        "WITH t AS (INSERT INTO notify_transitions (flag_id, transition, was, by_user)
                    VALUES ($1, $2, $3, $4) RETURNING flag_id)
         INSERT INTO notify_flag_topics (flag_id, topics)
         SELECT f.id, g.topics FROM t JOIN flags f ON f.id = t.flag_id
           JOIN consumer_groups g ON g.cluster_id = f.cluster_id AND g.name = f.subject
          WHERE f.subject_kind = 'group'
         ON CONFLICT (flag_id) DO NOTHING",
    )
    .bind(flag_id)
    .bind(transition)
    .bind(was)
    .bind(by)
    .execute(conn)
    .await
    .map(drop)?)
}

/// Whether a team has notification channels: then a raise is notified
/// at its first channel's 2xx, not at once.
pub async fn has_channels(conn: &mut PgConnection, team_id: i64) -> Result<bool, Db> {
    Ok(
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM notify_channels WHERE team_id = $1)")
            .bind(team_id)
            .fetch_one(conn)
            .await?,
    )
}

/// Claims up to `n` due webhook deliveries (a team's own webhook, a
/// question's, a review's; a channel's are `notify`'s) for `lease_s` seconds, in a statement
/// of its own: rows another replica is claiming are skipped, rows it
/// claimed are left until its claim runs out.
pub async fn claim(pool: &PgPool, n: i64, lease_s: i64) -> Result<Vec<Delivery>, Db> {
    Ok(sqlx::query_as(
        "UPDATE deliveries SET claimed_until = streamkeeper_now() + make_interval(secs => $2)
         WHERE id IN (
            SELECT id FROM deliveries
             WHERE delivered_at IS NULL AND failed_at IS NULL AND next_attempt_at <= streamkeeper_now()
               AND (claimed_until IS NULL OR claimed_until < streamkeeper_now())
               AND channel_id IS NULL
             ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
         RETURNING id, flag_id, lineage_question_id, transition, idempotency_key, url, body, attempts",
    )
    .bind(n)
    .bind(lease_s as f64)
    .fetch_all(pool)
    .await?)
}

/// Records a delivery's 2xx at `at`, in its own short transaction; a
/// raise's first 2xx is when the owner was notified, and a lineage
/// question's last delivery's 2xx when its owners were.
pub async fn delivered(pool: &PgPool, d: &Delivery, at: DateTime<Utc>) -> Result<(), Db> {
    let mut tx = pool.begin().await?;
    if let Some(q) = d.lineage_question_id {
        // The question's row first: two of its deliveries recorded at once
        // take turns, so the later sees the earlier and stamps the question.
        sqlx::query("SELECT 1 FROM lineage_questions WHERE id = $1 FOR UPDATE")
            .bind(q)
            .execute(&mut *tx)
            .await?;
    }
    sqlx::query(
        "UPDATE deliveries SET delivered_at = $2, attempts = attempts + 1, claimed_until = NULL
         WHERE id = $1",
    )
    .bind(d.id)
    .bind(at)
    .execute(&mut *tx)
    .await?;
    if let (Some(flag), "raise") = (d.flag_id, d.transition.as_str()) {
        sqlx::query("UPDATE flags SET notified_at = COALESCE(notified_at, $2) WHERE id = $1")
            .bind(flag)
            .bind(at)
            .execute(&mut *tx)
            .await?;
    }
    if let Some(q) = d.lineage_question_id {
        sqlx::query(
            "UPDATE lineage_questions q SET notified_at = $2
             WHERE q.id = $1 AND NOT EXISTS (
                 SELECT 1 FROM deliveries d WHERE d.lineage_question_id = q.id AND d.delivered_at IS NULL)",
        )
        .bind(q)
        .bind(at)
        .execute(&mut *tx)
        .await?;
    }
    Ok(tx.commit().await?)
}

/// When the earliest delivery not yet sent or given up is due, if before
/// `until` (the history player waits for it: `demo_history`).
pub async fn next_due_before(
    conn: &mut PgConnection,
    until: DateTime<Utc>,
) -> Result<Option<DateTime<Utc>>, Db> {
    Ok(sqlx::query_scalar(
        "SELECT min(next_attempt_at) FROM deliveries
         WHERE delivered_at IS NULL AND failed_at IS NULL AND next_attempt_at < $1",
    )
    .bind(until)
    .fetch_one(conn)
    .await?)
}

/// Records a failed attempt; after `max` attempts the delivery is given up.
pub async fn retry_later(
    pool: &PgPool,
    d: &Delivery,
    error: &str,
    backoff_s: i64,
    max: i32,
) -> Result<(), Db> {
    Ok(sqlx::query(
        "UPDATE deliveries SET attempts = attempts + 1, last_error = $2, claimed_until = NULL,
             next_attempt_at = streamkeeper_now() + make_interval(secs => $3),
             failed_at = CASE WHEN attempts + 1 >= $4 THEN streamkeeper_now() END
         WHERE id = $1",
    )
    .bind(d.id)
    .bind(error)
    .bind(backoff_s as f64)
    .bind(max)
    .execute(pool)
    .await
    .map(drop)?)
}

/// Webhook deliveries by state, for `/metrics`.
#[derive(Debug, Clone, FromRow)]
pub struct DeliveryCountRow {
    pub state: String,
    pub n: i64,
}

pub async fn delivery_counts(pool: &PgPool) -> Result<Vec<DeliveryCountRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT CASE WHEN delivered_at IS NOT NULL THEN 'delivered'
                     WHEN failed_at IS NOT NULL THEN 'failed'
                     ELSE 'pending' END AS state, count(*) AS n
         FROM deliveries GROUP BY 1 ORDER BY 1",
    )
    .fetch_all(pool)
    .await?)
}
