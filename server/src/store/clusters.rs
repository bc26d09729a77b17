//! Clusters, their passes, consumer groups and lag samples.

use chrono::{DateTime, Utc};
use sqlx::{FromRow, PgConnection, PgPool};
use std::collections::{BTreeMap, BTreeSet};

use crate::kafka::reader::{Reading, TopicReading};
use streamkeeper::health::{PartitionMeta, TopicHealth};

/// Replication and leadership of a topic from its metadata. (Quiet topics
/// need the stream's expected interval, which the catalog will hold.)
pub fn topic_health(t: &TopicReading, at: DateTime<Utc>) -> TopicHealth {
    let meta: Vec<PartitionMeta> = t
        .partitions
        .iter()
        .map(|p| PartitionMeta {
            partition: p.partition,
            leader: p.leader,
            replicas: p.replicas.clone(),
            isr: p.isr.clone(),
        })
        .collect();
    streamkeeper::health::topic_health(&meta, None, at.timestamp_millis(), None)
}

#[derive(Debug, Clone, FromRow)]
pub struct ClusterRow {
    pub id: i64,
    pub name: String,
    pub bootstrap: String,
    pub security_protocol: String,
    pub sasl_mechanism: Option<String>,
    pub username_ref: Option<String>,
    pub password_ref: Option<String>,
    pub interval_s: i32,
    pub created_at: DateTime<Utc>,
}

const COLUMNS: &str = "id, name, bootstrap, security_protocol, sasl_mechanism, username_ref, password_ref, interval_s, created_at";

pub async fn all(pool: &PgPool) -> Result<Vec<ClusterRow>, sqlx::Error> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM clusters ORDER BY name"))
        .fetch_all(pool)
        .await
}

pub async fn by_id(pool: &PgPool, id: i64) -> Result<Option<ClusterRow>, sqlx::Error> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM clusters WHERE id = $1"))
        .bind(id)
        .fetch_optional(pool)
        .await
}

pub struct NewCluster<'a> {
    pub name: &'a str,
    pub bootstrap: &'a str,
    pub security_protocol: &'a str,
    pub sasl_mechanism: Option<&'a str>,
    pub username_ref: Option<&'a str>,
    pub password_ref: Option<&'a str>,
    pub interval_s: i32,
}

pub async fn insert(
    conn: &mut PgConnection,
    c: &NewCluster<'_>,
) -> Result<ClusterRow, sqlx::Error> {
    sqlx::query_as(&format!(
        "INSERT INTO clusters (name, bootstrap, security_protocol, sasl_mechanism, username_ref, password_ref, interval_s)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING {COLUMNS}"
    ))
    .bind(c.name)
    .bind(c.bootstrap)
    .bind(c.security_protocol)
    .bind(c.sasl_mechanism)
    .bind(c.username_ref)
    .bind(c.password_ref)
    .bind(c.interval_s)
    .fetch_one(conn)
    .await
}

/// Takes or renews the lease of `routine` on a cluster for `holder`; true
/// when this holder has it now.
pub async fn lease(
    pool: &PgPool,
    routine: &str,
    cluster_id: i64,
    holder: &str,
    seconds: i64,
) -> Result<bool, sqlx::Error> {
    let got: Option<String> = sqlx::query_scalar(
        "INSERT INTO routine_leases (routine, cluster_id, holder, expires_at)
         VALUES ($1, $2, $3, now() + make_interval(secs => $4))
         ON CONFLICT (routine, cluster_id) DO UPDATE
            SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
            WHERE routine_leases.holder = EXCLUDED.holder OR routine_leases.expires_at < now()
         RETURNING holder",
    )
    .bind(routine)
    .bind(cluster_id)
    .bind(holder)
    .bind(seconds as f64)
    .fetch_optional(pool)
    .await?;
    Ok(got.is_some())
}

/// Topics each group of a cluster was seen reading.
pub async fn known_topics(
    pool: &PgPool,
    cluster_id: i64,
) -> Result<BTreeMap<String, BTreeSet<String>>, sqlx::Error> {
    let rows: Vec<(String, Vec<String>)> =
        sqlx::query_as("SELECT name, topics FROM consumer_groups WHERE cluster_id = $1")
            .bind(cluster_id)
            .fetch_all(pool)
            .await?;
    Ok(rows
        .into_iter()
        .map(|(g, t)| (g, t.into_iter().collect()))
        .collect())
}

/// Records a pass that read nothing: a gap, with the reason.
pub async fn record_failure(
    pool: &PgPool,
    cluster_id: i64,
    started: DateTime<Utc>,
    error: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO cluster_passes (cluster_id, started_at, finished_at, outcome, problems)
         VALUES ($1, $2, now(), 'UNREACHABLE', ARRAY[$3])",
    )
    .bind(cluster_id)
    .bind(started)
    .bind(error)
    .execute(pool)
    .await
    .map(drop)
}

/// Log-start and log-end of a partition, when they could be read.
type LogOffsets = (Option<i64>, Option<i64>);

/// Stores a pass in one transaction: the pass, the groups and every sample
/// (one multi-row insert through UNNEST). Returns the samples written.
pub async fn record_reading(
    pool: &PgPool,
    cluster_id: i64,
    r: &Reading,
) -> Result<usize, sqlx::Error> {
    let outcome = if r.problems.is_empty() {
        "UP"
    } else {
        "DEGRADED"
    };
    let mut tx = pool.begin().await?;
    let pass_id: i64 = sqlx::query_scalar(
        "INSERT INTO cluster_passes (cluster_id, started_at, finished_at, outcome, problems)
         VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(cluster_id)
    .bind(r.started)
    .bind(r.finished)
    .bind(outcome)
    .bind(&r.problems)
    .fetch_one(&mut *tx)
    .await?;

    let ends: BTreeMap<(&str, i32), LogOffsets> = r
        .topics
        .iter()
        .flat_map(|t| {
            t.partitions
                .iter()
                .map(move |p| ((t.name.as_str(), p.partition), (p.log_start, p.log_end)))
        })
        .collect();
    let (mut groups, mut topics, mut parts, mut committed, mut starts, mut lasts) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    for g in &r.groups {
        // A group whose offsets could not be read gets no samples: a gap.
        if g.error.is_some() {
            continue;
        }
        for ((topic, partition), c) in &g.offsets {
            let (s, e) = ends
                .get(&(topic.as_str(), *partition))
                .copied()
                .unwrap_or((None, None));
            groups.push(g.name.clone());
            topics.push(topic.clone());
            parts.push(*partition);
            committed.push(*c);
            starts.push(s);
            lasts.push(e);
        }
        let seen: Vec<String> = g
            .offsets
            .keys()
            .map(|(t, _)| t.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        sqlx::query(
            "INSERT INTO consumer_groups (cluster_id, name, state, members, topics, first_seen, last_seen)
             VALUES ($1, $2, $3, $4, $5, $6, $6)
             ON CONFLICT (cluster_id, name) DO UPDATE SET state = EXCLUDED.state,
                members = EXCLUDED.members, last_seen = EXCLUDED.last_seen,
                topics = ARRAY(SELECT DISTINCT unnest(consumer_groups.topics || EXCLUDED.topics) ORDER BY 1)",
        )
        .bind(cluster_id)
        .bind(&g.name)
        .bind(&g.state)
        .bind(i32::try_from(g.members).unwrap_or(i32::MAX))
        .bind(&seen)
        .bind(r.finished)
        .execute(&mut *tx)
        .await?;
    }
    for t in &r.topics {
        let health = topic_health(t, r.finished);
        let ends: Option<i64> = t.partitions.iter().map(|p| p.log_end).sum();
        sqlx::query(
            "INSERT INTO topics (cluster_id, name, partitions, under_replicated, offline, log_end_total,
                                 first_seen, last_seen, last_advanced_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $7)
             ON CONFLICT (cluster_id, name) DO UPDATE SET partitions = EXCLUDED.partitions,
                under_replicated = EXCLUDED.under_replicated, offline = EXCLUDED.offline,
                log_end_total = EXCLUDED.log_end_total, last_seen = EXCLUDED.last_seen,
                last_advanced_at = CASE
                    WHEN EXCLUDED.log_end_total > topics.log_end_total
                    THEN EXCLUDED.last_seen ELSE topics.last_advanced_at END",
        )
        .bind(cluster_id)
        .bind(&t.name)
        .bind(i32::try_from(t.partitions.len()).unwrap_or(i32::MAX))
        .bind(&health.under_replicated)
        .bind(&health.offline)
        .bind(ends)
        .bind(r.finished)
        .execute(&mut *tx)
        .await?;
    }
    let written = groups.len();
    sqlx::query(
        "INSERT INTO lag_samples (cluster_id, pass_id, at, group_name, topic, partition, committed, log_start, log_end)
         SELECT $1, $2, $3, * FROM UNNEST($4::text[], $5::text[], $6::int[], $7::bigint[], $8::bigint[], $9::bigint[])",
    )
    .bind(cluster_id)
    .bind(pass_id)
    .bind(r.finished)
    .bind(&groups)
    .bind(&topics)
    .bind(&parts)
    .bind(&committed)
    .bind(&starts)
    .bind(&lasts)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(written)
}

#[derive(Debug, Clone, FromRow)]
pub struct PassRow {
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
    pub outcome: String,
    pub problems: Vec<String>,
}

pub async fn last_pass(pool: &PgPool, cluster_id: i64) -> Result<Option<PassRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT started_at, finished_at, outcome, problems FROM cluster_passes
         WHERE cluster_id = $1 ORDER BY started_at DESC LIMIT 1",
    )
    .bind(cluster_id)
    .fetch_optional(pool)
    .await
}

pub async fn last_good_pass(
    pool: &PgPool,
    cluster_id: i64,
) -> Result<Option<DateTime<Utc>>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT max(finished_at) FROM cluster_passes WHERE cluster_id = $1 AND outcome <> 'UNREACHABLE'",
    )
    .bind(cluster_id)
    .fetch_one(pool)
    .await
}

#[derive(Debug, Clone, FromRow)]
pub struct GroupRow {
    pub name: String,
    pub state: String,
    pub members: i32,
    pub last_seen: DateTime<Utc>,
}

pub async fn groups(pool: &PgPool, cluster_id: i64) -> Result<Vec<GroupRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT name, state, members, last_seen FROM consumer_groups WHERE cluster_id = $1 ORDER BY name",
    )
    .bind(cluster_id)
    .fetch_all(pool)
    .await
}

#[derive(Debug, Clone, FromRow)]
pub struct SampleRow {
    pub at: DateTime<Utc>,
    pub topic: String,
    pub partition: i32,
    pub committed: Option<i64>,
    pub log_start: Option<i64>,
    pub log_end: Option<i64>,
}

/// A group's samples over the last `window` passes of its cluster, oldest
/// first.
pub async fn group_window(
    pool: &PgPool,
    cluster_id: i64,
    group: &str,
    passes: i64,
) -> Result<Vec<SampleRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT s.at, s.topic, s.partition, s.committed, s.log_start, s.log_end
         FROM lag_samples s
         WHERE s.cluster_id = $1 AND s.group_name = $2
           AND s.pass_id IN (SELECT id FROM cluster_passes WHERE cluster_id = $1
                             ORDER BY started_at DESC LIMIT $3)
         ORDER BY s.topic, s.partition, s.at",
    )
    .bind(cluster_id)
    .bind(group)
    .bind(passes)
    .fetch_all(pool)
    .await
}

/// Per pass since `since`: when it finished, whether it read the cluster,
/// and the group's total lag in it (NULL when the pass had no samples for
/// the group).
pub async fn lag_series(
    pool: &PgPool,
    cluster_id: i64,
    group: &str,
    since: DateTime<Utc>,
) -> Result<Vec<(DateTime<Utc>, String, Option<i64>)>, sqlx::Error> {
    sqlx::query_as(
        "SELECT p.finished_at, p.outcome, s.total
         FROM cluster_passes p
         LEFT JOIN (
             SELECT pass_id, sum(GREATEST(log_end - GREATEST(committed, log_start), 0))::bigint AS total
             FROM lag_samples
             WHERE cluster_id = $1 AND group_name = $2 AND at >= $3
               AND committed IS NOT NULL AND log_end IS NOT NULL AND log_start IS NOT NULL
             GROUP BY pass_id
         ) s ON s.pass_id = p.id
         WHERE p.cluster_id = $1 AND p.started_at >= $3
         ORDER BY p.started_at",
    )
    .bind(cluster_id)
    .bind(group)
    .bind(since)
    .fetch_all(pool)
    .await
}

/// Deletes samples and passes older than `days`; returns the samples removed.
pub async fn expire(pool: &PgPool, days: i32) -> Result<u64, sqlx::Error> {
    let samples =
        sqlx::query("DELETE FROM lag_samples WHERE at < now() - make_interval(days => $1)")
            .bind(days)
            .execute(pool)
            .await?
            .rows_affected();
    sqlx::query(
        "DELETE FROM cluster_passes p WHERE p.started_at < now() - make_interval(days => $1)
         AND NOT EXISTS (SELECT 1 FROM lag_samples s WHERE s.pass_id = p.id)",
    )
    .bind(days)
    .execute(pool)
    .await?;
    Ok(samples)
}

/// A topic with its health and its catalog entry (if any).
#[derive(Debug, Clone, FromRow)]
pub struct TopicRow {
    pub name: String,
    pub partitions: i32,
    pub under_replicated: Vec<i32>,
    pub offline: Vec<i32>,
    pub log_end_total: Option<i64>,
    pub last_seen: DateTime<Utc>,
    pub last_advanced_at: Option<DateTime<Utc>>,
    pub owner_team_id: Option<i64>,
    pub owner: Option<String>,
    pub domain: Option<String>,
    pub tier: Option<i16>,
    pub freshness_budget_s: Option<i32>,
    pub expected_interval_s: Option<i32>,
    pub description: Option<String>,
}

pub async fn topics(pool: &PgPool, cluster_id: i64) -> Result<Vec<TopicRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT t.name, t.partitions, t.under_replicated, t.offline, t.log_end_total, t.last_seen,
                t.last_advanced_at, s.owner_team_id, tm.name AS owner, s.domain, s.tier,
                s.freshness_budget_s, s.expected_interval_s, s.description
         FROM topics t
         LEFT JOIN streams s ON s.cluster_id = t.cluster_id AND s.topic = t.name
         LEFT JOIN teams tm ON tm.id = s.owner_team_id
         WHERE t.cluster_id = $1 ORDER BY t.name",
    )
    .bind(cluster_id)
    .fetch_all(pool)
    .await
}

/// What a stream's owner declares about it.
pub struct StreamSpec<'a> {
    pub owner_team_id: Option<i64>,
    pub domain: &'a str,
    pub tier: Option<i16>,
    pub freshness_budget_s: Option<i32>,
    pub expected_interval_s: Option<i32>,
    pub description: &'a str,
}

pub async fn upsert_stream(
    conn: &mut PgConnection,
    cluster_id: i64,
    topic: &str,
    s: &StreamSpec<'_>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO streams (cluster_id, topic, owner_team_id, domain, tier, freshness_budget_s,
                              expected_interval_s, description)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (cluster_id, topic) DO UPDATE SET owner_team_id = EXCLUDED.owner_team_id,
            domain = EXCLUDED.domain, tier = EXCLUDED.tier,
            freshness_budget_s = EXCLUDED.freshness_budget_s,
            expected_interval_s = EXCLUDED.expected_interval_s,
            description = EXCLUDED.description, updated_at = now()",
    )
    .bind(cluster_id)
    .bind(topic)
    .bind(s.owner_team_id)
    .bind(s.domain)
    .bind(s.tier)
    .bind(s.freshness_budget_s)
    .bind(s.expected_interval_s)
    .bind(s.description)
    .execute(conn)
    .await
    .map(drop)
}

#[derive(Debug, Clone, FromRow)]
pub struct StreamListRow {
    pub cluster_id: i64,
    pub cluster: String,
    pub topic: String,
    pub owner: Option<String>,
    pub tier: Option<i16>,
    pub partitions: i32,
    pub flag: Option<String>,
    pub last_advanced_at: Option<DateTime<Utc>>,
}

/// Streams of every cluster, by cluster and topic, filtered by a substring
/// of the topic, the owner team (or `unowned`) and trouble.
pub async fn stream_list(
    pool: &PgPool,
    q: Option<&str>,
    owner: Option<&str>,
    trouble: Option<bool>,
    page: streamkeeper::page::PageRequest,
) -> Result<streamkeeper::page::Page<StreamListRow>, sqlx::Error> {
    let pattern = super::contains_pattern(q);
    const FROM: &str = "FROM topics t
        JOIN clusters c ON c.id = t.cluster_id
        LEFT JOIN streams s ON s.cluster_id = t.cluster_id AND s.topic = t.name
        LEFT JOIN teams tm ON tm.id = s.owner_team_id
        LEFT JOIN LATERAL (
            SELECT f.kind FROM flags f
            WHERE f.cluster_id = t.cluster_id AND f.state IN ('open', 'acknowledged')
              AND ((f.subject_kind = 'topic' AND f.subject = t.name)
                OR (f.subject_kind = 'group' AND f.subject IN (
                      SELECT g.name FROM consumer_groups g
                      WHERE g.cluster_id = t.cluster_id AND t.name = ANY(g.topics))))
            ORDER BY f.raised_at LIMIT 1) fl ON TRUE
        WHERE ($1::text IS NULL OR t.name ILIKE $1)
          AND ($2::text IS NULL OR ($2 = 'unowned' AND s.owner_team_id IS NULL) OR tm.name = $2)
          AND ($3::bool IS NULL OR ($3 = (fl.kind IS NOT NULL)))";
    let total: i64 = sqlx::query_scalar(&format!("SELECT count(*) {FROM}"))
        .bind(&pattern)
        .bind(owner)
        .bind(trouble)
        .fetch_one(pool)
        .await?;
    let rows: Vec<StreamListRow> = sqlx::query_as(&format!(
        "SELECT t.cluster_id, c.name AS cluster, t.name AS topic, tm.name AS owner, s.tier,
                t.partitions, fl.kind AS flag, t.last_advanced_at
         {FROM} ORDER BY c.name, t.name LIMIT $4 OFFSET $5"
    ))
    .bind(&pattern)
    .bind(owner)
    .bind(trouble)
    .bind(page.limit())
    .bind(page.offset())
    .fetch_all(pool)
    .await?;
    Ok(streamkeeper::page::Page::new(
        rows,
        page,
        total.unsigned_abs(),
    ))
}

#[derive(Debug, Clone, FromRow)]
struct ReaderRow {
    name: String,
    state: String,
    members: i32,
    last_seen: DateTime<Utc>,
    owner: Option<String>,
}

/// Groups that read `topic`, with their owner team's name.
pub async fn readers(
    pool: &PgPool,
    cluster_id: i64,
    topic: &str,
) -> Result<Vec<(GroupRow, Option<String>)>, sqlx::Error> {
    let rows: Vec<ReaderRow> = sqlx::query_as(
        "SELECT g.name, g.state, g.members, g.last_seen, tm.name AS owner
         FROM consumer_groups g LEFT JOIN teams tm ON tm.id = g.owner_team_id
         WHERE g.cluster_id = $1 AND $2 = ANY(g.topics) ORDER BY g.name",
    )
    .bind(cluster_id)
    .bind(topic)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let group = GroupRow {
                name: r.name,
                state: r.state,
                members: r.members,
                last_seen: r.last_seen,
            };
            (group, r.owner)
        })
        .collect())
}

/// A group's owner team: `None` when there is no such group, `Some(None)`
/// when it is unowned.
pub async fn group_owner(
    pool: &PgPool,
    cluster_id: i64,
    group: &str,
) -> Result<Option<Option<i64>>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT owner_team_id FROM consumer_groups WHERE cluster_id = $1 AND name = $2",
    )
    .bind(cluster_id)
    .bind(group)
    .fetch_optional(pool)
    .await
}

/// A stream's owner team, if it has a catalog entry with one.
pub async fn stream_owner(
    pool: &PgPool,
    cluster_id: i64,
    topic: &str,
) -> Result<Option<i64>, sqlx::Error> {
    let owner: Option<Option<i64>> = sqlx::query_scalar(
        "SELECT owner_team_id FROM streams WHERE cluster_id = $1 AND topic = $2",
    )
    .bind(cluster_id)
    .bind(topic)
    .fetch_optional(pool)
    .await?;
    Ok(owner.flatten())
}
