//! The freshness SLOs' tallies: each pass adds the seconds it stands for
//! to its minute and hour buckets, fresh or stale, per stream; the burn
//! windows and the month are sums over them (`streamkeeper::watch::slo`).

use crate::platform::errors::Db;
use chrono::{DateTime, Utc};
use sqlx::{FromRow, PgPool};
use std::collections::HashMap;
use streamkeeper::watch::slo::{BurnWindows, Freshness, Tally};

/// Adds a pass at `at`, standing for `seconds`, judging each stream as
/// `verdicts` say. Streams not known this pass get nothing: their time is
/// not known.
/// When the cluster's last pass before the one that started at `at`
/// started (read or failed: a look at the cluster either way), if any in
/// the last day.
pub async fn previous_pass_at(
    pool: &PgPool,
    cluster_id: i64,
    at: DateTime<Utc>,
) -> Result<Option<DateTime<Utc>>, Db> {
    Ok(sqlx::query_scalar(
        "SELECT max(started_at) FROM cluster_passes
          WHERE cluster_id = $1 AND started_at < $2 AND started_at > $2 - interval '1 day'",
    )
    .bind(cluster_id)
    .bind(at)
    .fetch_one(pool)
    .await?)
}

pub async fn record(
    pool: &PgPool,
    cluster_id: i64,
    at: DateTime<Utc>,
    seconds: i32,
    verdicts: &[(String, Freshness)],
) -> Result<(), Db> {
    let mut topics = Vec::new();
    let mut fresh = Vec::new();
    let mut stale = Vec::new();
    for (topic, f) in verdicts {
        let (fr, st) = match f {
            Freshness::Fresh => (seconds, 0),
            Freshness::Stale => (0, seconds),
            Freshness::NotKnown => continue,
        };
        topics.push(topic.clone());
        fresh.push(fr);
        stale.push(st);
    }
    if topics.is_empty() {
        return Ok(());
    }
    for (table, unit) in [("stream_slo_1m", "minute"), ("stream_slo_1h", "hour")] {
        sqlx::query(&format!(
            "INSERT INTO {table} (cluster_id, topic, bucket, fresh_s, stale_s)
             SELECT $1, t, date_trunc('{unit}', $2::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', f, s
             FROM UNNEST($3::text[], $4::int[], $5::int[]) AS u(t, f, s)
             ON CONFLICT (cluster_id, topic, bucket) DO UPDATE
             SET fresh_s = {table}.fresh_s + EXCLUDED.fresh_s,
                 stale_s = {table}.stale_s + EXCLUDED.stale_s"
        ))
        .bind(cluster_id)
        .bind(at)
        .bind(&topics)
        .bind(&fresh)
        .bind(&stale)
        .execute(pool)
        .await?;
    }
    Ok(())
}

#[derive(FromRow)]
struct WindowRow {
    topic: String,
    f5: i64,
    s5: i64,
    f30: i64,
    s30: i64,
    f60: i64,
    s60: i64,
    f360: i64,
    s360: i64,
}

/// Each stream's tallies over the burn-rate windows ending at `now`.
pub async fn burn_windows(
    pool: &PgPool,
    cluster_id: i64,
    now: DateTime<Utc>,
) -> Result<HashMap<String, BurnWindows>, Db> {
    let rows: Vec<WindowRow> = sqlx::query_as(
        "SELECT topic,
           COALESCE(SUM(fresh_s) FILTER (WHERE bucket > $2 - interval '5 minutes'), 0)::bigint AS f5,
           COALESCE(SUM(stale_s) FILTER (WHERE bucket > $2 - interval '5 minutes'), 0)::bigint AS s5,
           COALESCE(SUM(fresh_s) FILTER (WHERE bucket > $2 - interval '30 minutes'), 0)::bigint AS f30,
           COALESCE(SUM(stale_s) FILTER (WHERE bucket > $2 - interval '30 minutes'), 0)::bigint AS s30,
           COALESCE(SUM(fresh_s) FILTER (WHERE bucket > $2 - interval '1 hour'), 0)::bigint AS f60,
           COALESCE(SUM(stale_s) FILTER (WHERE bucket > $2 - interval '1 hour'), 0)::bigint AS s60,
           COALESCE(SUM(fresh_s), 0)::bigint AS f360, COALESCE(SUM(stale_s), 0)::bigint AS s360
         FROM stream_slo_1m
         WHERE cluster_id = $1 AND bucket > $2 - interval '6 hours'
         GROUP BY topic",
    )
    .bind(cluster_id)
    .bind(now)
    .fetch_all(pool)
    .await?;
    let t = |fresh_s, stale_s| Tally { fresh_s, stale_s };
    Ok(rows
        .into_iter()
        .map(|r| {
            let w = BurnWindows {
                m5: t(r.f5, r.s5),
                m30: t(r.f30, r.s30),
                h1: t(r.f60, r.s60),
                h6: t(r.f360, r.s360),
            };
            (r.topic, w)
        })
        .collect())
}

/// A stream with a freshness budget, its catalog facts and this month's tally.
#[derive(Debug, FromRow)]
pub struct SloRow {
    pub cluster_id: i64,
    pub cluster: String,
    pub topic: String,
    pub domain: String,
    pub tier: Option<i16>,
    pub freshness_budget_s: i32,
    pub interval_s: i32,
    pub fresh_s: i64,
    pub stale_s: i64,
}

/// Which streams' tallies to read.
#[derive(Clone, Copy, Debug)]
pub enum Scope<'a> {
    All,
    Domain(&'a str),
    Cluster(i64),
}

/// Streams with a freshness budget on live clusters, in `scope`, with
/// their tallies since `from`, by domain, cluster and topic.
pub async fn tallies(
    pool: &PgPool,
    scope: Scope<'_>,
    from: DateTime<Utc>,
) -> Result<Vec<SloRow>, Db> {
    let (domain, cluster) = match scope {
        Scope::All => (None, None),
        Scope::Domain(d) => (Some(d), None),
        Scope::Cluster(c) => (None, Some(c)),
    };
    Ok(sqlx::query_as(
        "SELECT s.cluster_id, c.name AS cluster, s.topic, s.domain, s.tier, s.freshness_budget_s,
                c.interval_s,
                COALESCE(SUM(h.fresh_s), 0)::bigint AS fresh_s,
                COALESCE(SUM(h.stale_s), 0)::bigint AS stale_s
         FROM streams s
         JOIN clusters c ON c.id = s.cluster_id AND c.removed_at IS NULL
         LEFT JOIN stream_slo_1h h
           ON h.cluster_id = s.cluster_id AND h.topic = s.topic AND h.bucket >= $1
         WHERE s.freshness_budget_s IS NOT NULL
           AND ($2::text IS NULL OR s.domain = $2)
           AND ($3::bigint IS NULL OR s.cluster_id = $3)
         GROUP BY s.cluster_id, c.name, s.topic, s.domain, s.tier, s.freshness_budget_s, c.interval_s
         ORDER BY s.domain, c.name, s.topic",
    )
    .bind(from)
    .bind(domain)
    .bind(cluster)
    .fetch_all(pool)
    .await?)
}

/// Whether `domain` names a stream's domain (any stream, with a budget or not).
pub async fn domain_exists(pool: &PgPool, domain: &str) -> Result<bool, Db> {
    Ok(
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM streams WHERE domain = $1)")
            .bind(domain)
            .fetch_one(pool)
            .await?,
    )
}
