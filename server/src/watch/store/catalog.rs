//! Consumer groups, topics and streams as the lists and pages read them:
//! a group and its page of groups, the judgements a pass records, a
//! stream's catalog entry and its page of streams, and who reads a topic.

use chrono::{DateTime, Utc};
use sqlx::types::Json;
use sqlx::{FromRow, PgConnection, PgPool};
use std::collections::HashMap;

use crate::platform::errors::Db;
use crate::platform::ownership::{GROUP_OWNER, STREAM_OWNER};
use streamkeeper::platform::page::{Page, PageRequest};
use streamkeeper::platform::sort::Sorted;
use streamkeeper::watch::lag::consumed::NotConsumed;
use streamkeeper::watch::list::{GroupColumn, StreamColumn};

#[derive(Debug, Clone, FromRow)]
pub struct GroupRow {
    pub name: String,
    pub state: String,
    pub members: i32,
    pub last_seen: DateTime<Utc>,
    pub gone_since: Option<DateTime<Utc>>,
    pub status: Option<String>,
    pub total_lag: Option<i64>,
    pub max_time_lag_s: Option<f64>,
    pub evaluated_at: Option<DateTime<Utc>>,
    /// Topics it has offsets on that no member is assigned, since when.
    pub not_consumed: Json<NotConsumed>,
}

const GROUP_COLUMNS: &str = "g.name, g.state, g.members, g.last_seen, g.gone_since,
    g.status, g.total_lag, g.max_time_lag_s, g.evaluated_at, g.not_consumed";

pub async fn group(pool: &PgPool, cluster_id: i64, name: &str) -> Result<Option<GroupRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "SELECT {GROUP_COLUMNS} FROM consumer_groups g
         WHERE g.cluster_id = $1 AND g.name = $2"
    ))
    .bind(cluster_id)
    .bind(name)
    .fetch_optional(pool)
    .await?)
}

/// Which groups a list shows.
#[derive(Debug, Default)]
pub struct GroupQuery<'a> {
    /// A substring of the name.
    pub q: Option<&'a str>,
    /// One status (`STOP`, …), `trouble` for any trouble, or `gone`.
    pub status: Option<&'a str>,
    pub order: Sorted<GroupColumn>,
}

/// `ORDER BY` of a group list: each column's keys, then the name (unique
/// in a cluster). By status, the most troubled rank highest and a group
/// the cluster no longer lists lowest; rows not judged yet go last.
fn group_order(order: Sorted<GroupColumn>) -> String {
    let keys: &[&'static str] = match order.column {
        GroupColumn::Name => &["g.name"],
        // The rule's owner (claimed, else by the streams it reads), as
        // the list shows it: not the claim alone.
        GroupColumn::Owner => &[GROUP_OWNER],
        GroupColumn::Status => &["CASE WHEN g.gone_since IS NOT NULL THEN 0
                  WHEN g.status = 'STOP' THEN 6 WHEN g.status = 'REWIND' THEN 5
                  WHEN g.status = 'LOST' THEN 4 WHEN g.status = 'STALL' THEN 3
                  WHEN g.status = 'WARN' THEN 2 ELSE 1 END"],
        GroupColumn::Members => &["g.members"],
        GroupColumn::Lag => &["g.total_lag"],
        GroupColumn::TimeLag => &["g.max_time_lag_s"],
    };
    crate::store::order_by(keys, order.descending, "g.name")
}

/// A page of a cluster's groups in `query.order`.
pub async fn group_list(
    pool: &PgPool,
    cluster_id: i64,
    query: &GroupQuery<'_>,
    page: PageRequest,
) -> Result<Page<GroupRow>, Db> {
    let pattern = crate::store::contains_pattern(query.q);
    let (status, trouble, gone) = match query.status {
        Some("trouble") => (None, true, false),
        Some("gone") => (None, false, true),
        Some(s) => (Some(s), false, false),
        None => (None, false, false),
    };
    let filter = "g.cluster_id = $1 AND ($2::text IS NULL OR g.name ILIKE $2)
        AND ($3::text IS NULL OR g.status = $3)
        AND (NOT $4 OR g.status IN ('WARN', 'STALL', 'STOP', 'REWIND', 'LOST'))
        AND (NOT $5 OR g.gone_since IS NOT NULL)";
    let total: i64 = sqlx::query_scalar(&format!(
        "SELECT count(*) FROM consumer_groups g WHERE {filter}"
    ))
    .bind(cluster_id)
    .bind(&pattern)
    .bind(status)
    .bind(trouble)
    .bind(gone)
    .fetch_one(pool)
    .await?;
    let items = sqlx::query_as(&format!(
        "SELECT {GROUP_COLUMNS} FROM consumer_groups g
         WHERE {filter}
         ORDER BY {}
         LIMIT $6 OFFSET $7",
        group_order(query.order)
    ))
    .bind(cluster_id)
    .bind(&pattern)
    .bind(status)
    .bind(trouble)
    .bind(gone)
    .bind(page.limit())
    .bind(page.offset())
    .fetch_all(pool)
    .await?;
    Ok(Page::new(items, page, total.unsigned_abs()))
}

/// What each group of a cluster was last judged not to consume, for the
/// next evaluation (one read a pass; most groups have none).
pub async fn not_consumed(
    pool: &PgPool,
    cluster_id: i64,
) -> Result<HashMap<String, NotConsumed>, Db> {
    let rows: Vec<(String, Json<NotConsumed>)> = sqlx::query_as(
        "SELECT name, not_consumed FROM consumer_groups
         WHERE cluster_id = $1 AND not_consumed <> '{}'",
    )
    .bind(cluster_id)
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|(g, Json(n))| (g, n)).collect())
}

/// A group's status and lag after the evaluation of a pass.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    pub group: String,
    pub status: String,
    pub total_lag: Option<i64>,
    pub max_time_lag_s: Option<f64>,
    /// Its trend (`streamkeeper::watch::lag::trend`): messages/s the lag
    /// grows, seconds to catch up, seconds until data is lost.
    pub lag_velocity: Option<f64>,
    pub catch_up_s: Option<f64>,
    pub retention_risk_s: Option<f64>,
    pub not_consumed: NotConsumed,
}

/// Stores the judgements of one pass in one statement.
pub async fn set_judgements(
    pool: &PgPool,
    cluster_id: i64,
    at: DateTime<Utc>,
    judgements: &[Judgement],
) -> Result<(), Db> {
    let names: Vec<&str> = judgements.iter().map(|j| j.group.as_str()).collect();
    let statuses: Vec<&str> = judgements.iter().map(|j| j.status.as_str()).collect();
    let lags: Vec<Option<i64>> = judgements.iter().map(|j| j.total_lag).collect();
    let times: Vec<Option<f64>> = judgements.iter().map(|j| j.max_time_lag_s).collect();
    let velocities: Vec<Option<f64>> = judgements.iter().map(|j| j.lag_velocity).collect();
    let catch_ups: Vec<Option<f64>> = judgements.iter().map(|j| j.catch_up_s).collect();
    let risks: Vec<Option<f64>> = judgements.iter().map(|j| j.retention_risk_s).collect();
    let unconsumed: Vec<Json<&NotConsumed>> =
        judgements.iter().map(|j| Json(&j.not_consumed)).collect();
    Ok(sqlx::query(
        "UPDATE consumer_groups g SET status = u.status, total_lag = u.lag,
            max_time_lag_s = u.time_lag, lag_velocity = u.velocity, catch_up_s = u.catch_up,
            retention_risk_s = u.risk, not_consumed = u.unconsumed, evaluated_at = $2
         FROM UNNEST($3::text[], $4::text[], $5::bigint[], $6::float8[], $7::float8[],
                     $8::float8[], $9::float8[], $10::jsonb[])
              AS u(name, status, lag, time_lag, velocity, catch_up, risk, unconsumed)
         WHERE g.cluster_id = $1 AND g.name = u.name",
    )
    .bind(cluster_id)
    .bind(at)
    .bind(&names)
    .bind(&statuses)
    .bind(&lags)
    .bind(&times)
    .bind(&velocities)
    .bind(&catch_ups)
    .bind(&risks)
    .bind(&unconsumed)
    .execute(pool)
    .await
    .map(drop)?)
}

/// A topic with its health and its catalog entry (if any).
#[derive(Debug, Clone, FromRow)]
pub struct TopicRow {
    pub name: String,
    pub partitions: i32,
    pub under_replicated: Vec<i32>,
    pub offline: Vec<i32>,
    pub log_end_total: Option<i64>,
    pub first_seen: DateTime<Utc>,
    pub last_seen: DateTime<Utc>,
    pub last_advanced_at: Option<DateTime<Utc>>,
    pub last_message_at: Option<DateTime<Utc>>,
    pub domain: Option<String>,
    pub tier: Option<i16>,
    pub freshness_budget_s: Option<i32>,
    pub expected_interval_s: Option<i32>,
    pub description: Option<String>,
    pub compatibility: Option<String>,
}

pub async fn topics(pool: &PgPool, cluster_id: i64) -> Result<Vec<TopicRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT t.name, t.partitions, t.under_replicated, t.offline, t.log_end_total, t.first_seen,
                t.last_seen, t.last_advanced_at, t.last_message_at, s.domain, s.tier,
                s.freshness_budget_s, s.expected_interval_s, s.description, s.compatibility
         FROM topics t
         LEFT JOIN streams s ON s.cluster_id = t.cluster_id AND s.topic = t.name
         WHERE t.cluster_id = $1 ORDER BY t.name",
    )
    .bind(cluster_id)
    .fetch_all(pool)
    .await?)
}

/// What a stream's owner declares about it.
pub struct StreamSpec<'a> {
    pub owner_team_id: Option<i64>,
    pub domain: &'a str,
    pub tier: Option<i16>,
    pub freshness_budget_s: Option<i32>,
    pub expected_interval_s: Option<i32>,
    pub description: &'a str,
    pub compatibility: Option<&'a str>,
}

/// Locks the stream's catalog row (if it has one) for the rest of the
/// transaction.
pub async fn lock_stream(conn: &mut PgConnection, cluster_id: i64, topic: &str) -> Result<(), Db> {
    Ok(
        sqlx::query("SELECT 1 FROM streams WHERE cluster_id = $1 AND topic = $2 FOR UPDATE")
            .bind(cluster_id)
            .bind(topic)
            .execute(conn)
            .await
            .map(drop)?,
    )
}

pub async fn upsert_stream(
    conn: &mut PgConnection,
    cluster_id: i64,
    topic: &str,
    s: &StreamSpec<'_>,
) -> Result<(), Db> {
    Ok(sqlx::query(
        "INSERT INTO streams (cluster_id, topic, owner_team_id, domain, tier, freshness_budget_s,
                              expected_interval_s, description, compatibility)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (cluster_id, topic) DO UPDATE SET owner_team_id = EXCLUDED.owner_team_id,
            domain = EXCLUDED.domain, tier = EXCLUDED.tier,
            freshness_budget_s = EXCLUDED.freshness_budget_s,
            expected_interval_s = EXCLUDED.expected_interval_s,
            description = EXCLUDED.description, compatibility = EXCLUDED.compatibility,
            updated_at = now()",
    )
    .bind(cluster_id)
    .bind(topic)
    .bind(s.owner_team_id)
    .bind(s.domain)
    .bind(s.tier)
    .bind(s.freshness_budget_s)
    .bind(s.expected_interval_s)
    .bind(s.description)
    .bind(s.compatibility)
    .execute(conn)
    .await
    .map(drop)?)
}

#[derive(Debug, Clone, FromRow)]
pub struct StreamListRow {
    pub cluster_id: i64,
    pub cluster: String,
    pub topic: String,
    pub tier: Option<i16>,
    pub partitions: i32,
    pub flag: Option<String>,
    pub log_end_total: Option<i64>,
    pub first_seen: DateTime<Utc>,
    pub last_advanced_at: Option<DateTime<Utc>>,
    pub last_message_at: Option<DateTime<Utc>>,
}

/// `ORDER BY` of the streams list: each column's keys, then the topic and
/// its cluster (unique together).
fn stream_order(order: Sorted<StreamColumn>) -> String {
    let keys: &[&'static str] = match order.column {
        StreamColumn::Stream => &["t.name"],
        StreamColumn::Cluster => &["c.name"],
        StreamColumn::Owner => &[STREAM_OWNER],
        StreamColumn::Tier => &["s.tier"],
        StreamColumn::Partitions => &["t.partitions"],
        StreamColumn::Status => &["(fl.kind IS NOT NULL)"],
        // As the list says it: the newest record's own time, else the
        // pass that saw the log end move.
        StreamColumn::LastMessage => &["COALESCE(t.last_message_at, t.last_advanced_at)"],
    };
    crate::store::order_by(keys, order.descending, "t.name, t.cluster_id")
}

/// Streams of every cluster in `order`, filtered by a substring of the
/// topic, the owner team (or `unowned`) and trouble; the owner by the
/// ownership rule (shown from `platform::ownership::streams`).
pub async fn stream_list(
    pool: &PgPool,
    q: Option<&str>,
    owner: Option<&str>,
    trouble: Option<bool>,
    order: Sorted<StreamColumn>,
    page: PageRequest,
) -> Result<Page<StreamListRow>, Db> {
    let pattern = crate::store::contains_pattern(q);
    // The flags' own query says which flag a stream shows (no file
    // outside flags/ reads their table).
    let from = format!(
        "FROM topics t
        JOIN clusters c ON c.id = t.cluster_id AND c.removed_at IS NULL
        LEFT JOIN streams s ON s.cluster_id = t.cluster_id AND s.topic = t.name
        LEFT JOIN LATERAL ({}) fl ON TRUE
        WHERE ($1::text IS NULL OR t.name ILIKE $1)
          AND ($2::text IS NULL OR ($2 = 'unowned' AND {STREAM_OWNER} IS NULL) OR {STREAM_OWNER} = $2)
          AND ($3::bool IS NULL OR ($3 = (fl.kind IS NOT NULL)))",
        crate::flags::store::live_flag_on_topic("t")
    );
    let total: i64 = sqlx::query_scalar(&format!("SELECT count(*) {from}"))
        .bind(&pattern)
        .bind(owner)
        .bind(trouble)
        .fetch_one(pool)
        .await?;
    let rows: Vec<StreamListRow> = sqlx::query_as(&format!(
        "SELECT t.cluster_id, c.name AS cluster, t.name AS topic, s.tier,
                t.partitions, fl.kind AS flag, t.log_end_total, t.first_seen, t.last_advanced_at,
                t.last_message_at
         {from} ORDER BY {} LIMIT $4 OFFSET $5",
        stream_order(order)
    ))
    .bind(&pattern)
    .bind(owner)
    .bind(trouble)
    .bind(page.limit())
    .bind(page.offset())
    .fetch_all(pool)
    .await?;
    Ok(Page::new(rows, page, total.unsigned_abs()))
}

/// Groups that read `topic` (their owners are `platform::ownership`'s).
pub async fn readers(pool: &PgPool, cluster_id: i64, topic: &str) -> Result<Vec<GroupRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "SELECT {GROUP_COLUMNS} FROM consumer_groups g
         WHERE g.cluster_id = $1 AND $2 = ANY(g.topics) ORDER BY g.name"
    ))
    .bind(cluster_id)
    .bind(topic)
    .fetch_all(pool)
    .await?)
}

/// Gives the group to `team_id` (claimed `at`), or leaves it unowned.
pub async fn set_group_owner(
    conn: &mut PgConnection,
    cluster_id: i64,
    group: &str,
    team_id: Option<i64>,
    at: DateTime<Utc>,
) -> Result<bool, Db> {
    let r = sqlx::query(
        "UPDATE consumer_groups SET owner_team_id = $3,
                owner_claimed_at = CASE WHEN $3::bigint IS NULL THEN NULL ELSE $4 END
         WHERE cluster_id = $1 AND name = $2",
    )
    .bind(cluster_id)
    .bind(group)
    .bind(team_id)
    .bind(at)
    .execute(conn)
    .await?;
    Ok(r.rows_affected() == 1)
}

/// How many of the stream's review items are still open: in review,
/// approved but not applied, or failed to apply. It reads the review
/// inbox's table directly: a stream's settings may not move under an open
/// item, and watch sits below review, so it does not import review.
pub async fn open_items_of_stream(
    conn: &mut PgConnection,
    cluster_id: i64,
    topic: &str,
) -> Result<u64, Db> {
    let n: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM review_items
         WHERE cluster_id = $1 AND topic = $2 AND state IN ('in_review', 'approved', 'apply_failed')",
    )
    .bind(cluster_id)
    .bind(topic)
    .fetch_one(conn)
    .await?;
    Ok(n.unsigned_abs())
}
