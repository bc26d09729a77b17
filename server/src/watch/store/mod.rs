//! Clusters, their passes and what a pass records; groups, topics and
//! streams as lists read them are in `catalog`, lag samples in `samples`.

mod catalog;
pub mod samples;
pub mod slo;
mod wire;

pub use catalog::*;

use chrono::{DateTime, Utc};
use sqlx::{FromRow, PgConnection, PgPool};
use std::collections::{BTreeMap, BTreeSet};

use crate::clients::kafka::reader::Reading;
use crate::platform::errors::Db;
use samples::SampleColumns;
use streamkeeper::watch::observe::metadata_health;

#[derive(Debug, Clone, FromRow)]
pub struct ClusterRow {
    pub id: i64,
    pub name: String,
    pub bootstrap: String,
    pub security_protocol: String,
    pub sasl_mechanism: Option<String>,
    pub username_ref: Option<String>,
    pub password_ref: Option<String>,
    /// The CA bundle TLS is checked against, by reference; `None`: the system's.
    pub ca_ref: Option<String>,
    /// Mutual TLS: the certificate this console shows the brokers and its
    /// private key, by reference; both or neither.
    pub client_cert_ref: Option<String>,
    pub client_key_ref: Option<String>,
    /// Credentials may go without TLS (a local cluster and its registry).
    pub insecure_credentials: bool,
    pub interval_s: i32,
    pub created_at: DateTime<Utc>,
    /// Since when its routines skip it, and who paused it.
    pub paused_at: Option<DateTime<Utc>>,
    pub paused_by: Option<String>,
}

const COLUMNS: &str = "id, name, bootstrap, security_protocol, sasl_mechanism, username_ref, password_ref, ca_ref, client_cert_ref, client_key_ref, insecure_credentials, interval_s, created_at, paused_at, paused_by";

/// The watched clusters: every one not removed.
pub async fn all(pool: &PgPool) -> Result<Vec<ClusterRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM clusters WHERE removed_at IS NULL ORDER BY name"
    ))
    .fetch_all(pool)
    .await?)
}

/// A watched cluster; a removed one is gone, as an unknown id is.
pub async fn by_id(pool: &PgPool, id: i64) -> Result<Option<ClusterRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM clusters WHERE id = $1 AND removed_at IS NULL"
    ))
    .bind(id)
    .fetch_optional(pool)
    .await?)
}

/// A removed cluster, kept until housekeeping purges it.
#[derive(Debug, Clone, FromRow)]
pub struct RemovedRow {
    pub id: i64,
    pub name: String,
    pub bootstrap: String,
    pub removed_at: DateTime<Utc>,
    pub removed_by: String,
}

const REMOVED: &str = "SELECT id, name, bootstrap, removed_at, removed_by FROM clusters
     WHERE removed_at IS NOT NULL";

/// The removed clusters not purged yet, the most recently removed first.
pub async fn removed(pool: &PgPool) -> Result<Vec<RemovedRow>, Db> {
    Ok(
        sqlx::query_as(&format!("{REMOVED} ORDER BY removed_at DESC, id"))
            .fetch_all(pool)
            .await?,
    )
}

pub async fn removed_by_id(pool: &PgPool, id: i64) -> Result<Option<RemovedRow>, Db> {
    Ok(sqlx::query_as(&format!("{REMOVED} AND id = $1"))
        .bind(id)
        .fetch_optional(pool)
        .await?)
}

pub struct NewCluster<'a> {
    pub name: &'a str,
    pub bootstrap: &'a str,
    pub security_protocol: &'a str,
    pub sasl_mechanism: Option<&'a str>,
    pub username_ref: Option<&'a str>,
    pub password_ref: Option<&'a str>,
    pub ca_ref: Option<&'a str>,
    pub client_cert_ref: Option<&'a str>,
    pub client_key_ref: Option<&'a str>,
    pub insecure_credentials: bool,
    pub interval_s: i32,
}

pub async fn insert(conn: &mut PgConnection, c: &NewCluster<'_>) -> Result<ClusterRow, Db> {
    Ok(sqlx::query_as(&format!(
        "INSERT INTO clusters (name, bootstrap, security_protocol, sasl_mechanism, username_ref, password_ref, interval_s, insecure_credentials, ca_ref, client_cert_ref, client_key_ref)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING {COLUMNS}"
    ))
    .bind(c.name)
    .bind(c.bootstrap)
    .bind(c.security_protocol)
    .bind(c.sasl_mechanism)
    .bind(c.username_ref)
    .bind(c.password_ref)
    .bind(c.interval_s)
    .bind(c.insecure_credentials)
    .bind(c.ca_ref)
    .bind(c.client_cert_ref)
    .bind(c.client_key_ref)
    .fetch_one(conn)
    .await?)
}

/// Stops watching a cluster (`by` names who) and keeps everything recorded
/// of it until [`purge_removed`]; the removal time, or `None` when there
/// was no such cluster or it was already removed.
pub async fn remove(
    conn: &mut PgConnection,
    id: i64,
    by: &str,
) -> Result<Option<DateTime<Utc>>, Db> {
    Ok(sqlx::query_scalar(
        "UPDATE clusters SET removed_at = now(), removed_by = $2
         WHERE id = $1 AND removed_at IS NULL RETURNING removed_at",
    )
    .bind(id)
    .bind(by)
    .fetch_optional(conn)
    .await?)
}

/// Watches a removed cluster again; its lag windows start now, so passes
/// from before the removal are not judged as the recent past. `false`
/// when it was not removed. A live cluster holding its name is a unique
/// violation (`clusters_live_name`).
pub async fn restore(conn: &mut PgConnection, id: i64) -> Result<bool, Db> {
    Ok(sqlx::query(
        "UPDATE clusters SET removed_at = NULL, removed_by = NULL, window_from = now()
         WHERE id = $1 AND removed_at IS NOT NULL",
    )
    .bind(id)
    .execute(conn)
    .await?
    .rows_affected()
        == 1)
}

/// Deletes the clusters removed at or before `cutoff` and, by the foreign keys'
/// cascade, everything recorded of them (passes, samples, groups, topics,
/// flags, streams, schemas, review items, Connect clusters). Returns what
/// went, for the audit log.
pub async fn purge_removed(
    conn: &mut PgConnection,
    cutoff: DateTime<Utc>,
) -> Result<Vec<RemovedRow>, Db> {
    Ok(sqlx::query_as(
        "DELETE FROM clusters WHERE removed_at <= $1
         RETURNING id, name, bootstrap, removed_at, removed_by",
    )
    .bind(cutoff)
    .fetch_all(conn)
    .await?)
}

/// Pauses a cluster (`by` names who) or resumes it (`None`); false when it
/// already was so. A resumed cluster's lag windows start at the resume:
/// the passes from before the pause are history, not the recent past (a
/// group that moved on while nobody read it is not judged on them).
pub async fn set_paused(conn: &mut PgConnection, id: i64, by: Option<&str>) -> Result<bool, Db> {
    let changed = match by {
        Some(by) => sqlx::query(
            "UPDATE clusters SET paused_at = now(), paused_by = $2
             WHERE id = $1 AND paused_at IS NULL",
        )
        .bind(id)
        .bind(by),
        None => sqlx::query(
            "UPDATE clusters SET paused_at = NULL, paused_by = NULL, window_from = now()
             WHERE id = $1 AND paused_at IS NOT NULL",
        )
        .bind(id),
    }
    .execute(conn)
    .await?
    .rows_affected();
    Ok(changed == 1)
}

/// Changes a cluster's connection settings and interval.
pub async fn update(
    conn: &mut PgConnection,
    id: i64,
    c: &NewCluster<'_>,
) -> Result<ClusterRow, Db> {
    Ok(sqlx::query_as(&format!(
        "UPDATE clusters SET bootstrap = $2, security_protocol = $3, sasl_mechanism = $4,
            username_ref = $5, password_ref = $6, interval_s = $7, insecure_credentials = $8,
            ca_ref = $9, client_cert_ref = $10, client_key_ref = $11
         WHERE id = $1 RETURNING {COLUMNS}"
    ))
    .bind(id)
    .bind(c.bootstrap)
    .bind(c.security_protocol)
    .bind(c.sasl_mechanism)
    .bind(c.username_ref)
    .bind(c.password_ref)
    .bind(c.interval_s)
    .bind(c.insecure_credentials)
    .bind(c.ca_ref)
    .bind(c.client_cert_ref)
    .bind(c.client_key_ref)
    .fetch_one(conn)
    .await?)
}

/// Each cluster's lineage topic (`None`: the Kafka transport is off), by name.
pub async fn lineage_topics(pool: &PgPool) -> Result<BTreeMap<String, (i64, Option<String>)>, Db> {
    let rows: Vec<(String, i64, Option<String>)> =
        sqlx::query_as("SELECT name, id, lineage_topic FROM clusters WHERE removed_at IS NULL")
            .fetch_all(pool)
            .await?;
    Ok(rows.into_iter().map(|(n, id, t)| (n, (id, t))).collect())
}

pub async fn set_lineage_topic(
    conn: &mut PgConnection,
    id: i64,
    topic: Option<&str>,
) -> Result<(), Db> {
    sqlx::query("UPDATE clusters SET lineage_topic = $2 WHERE id = $1")
        .bind(id)
        .bind(topic)
        .execute(conn)
        .await?;
    Ok(())
}

/// Topics each group of a cluster was seen reading.
pub async fn known_topics(
    pool: &PgPool,
    cluster_id: i64,
) -> Result<BTreeMap<String, BTreeSet<String>>, Db> {
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

/// The topics whose newest record's time and wire-format headers a pass
/// reads, with the log-end total it was last read at: streams with an
/// expected interval (their quiet check) and streams whose value subject
/// is registered (the headers say which schemas producers write, see
/// docs/drift.md). Not every stream: on a busy catalog every tail moves
/// every pass, and reading them all costs more than the pass itself.
pub async fn last_message_targets(
    pool: &PgPool,
    cluster_id: i64,
) -> Result<BTreeMap<String, Option<i64>>, Db> {
    let rows: Vec<(String, Option<i64>)> = sqlx::query_as(
        "SELECT s.topic, t.last_message_total FROM streams s
         LEFT JOIN topics t ON t.cluster_id = s.cluster_id AND t.name = s.topic
         WHERE s.cluster_id = $1
           AND (s.expected_interval_s IS NOT NULL
                OR EXISTS (SELECT 1 FROM registry_subjects r
                            WHERE r.cluster_id = s.cluster_id AND r.subject = s.topic || '-value'))",
    )
    .bind(cluster_id)
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().collect())
}

/// Records a pass that read nothing: a gap, with the reason. Returns the
/// pass's id.
pub async fn record_failure(
    pool: &PgPool,
    cluster_id: i64,
    started: DateTime<Utc>,
    error: &str,
) -> Result<i64, Db> {
    Ok(sqlx::query_scalar(
        "INSERT INTO cluster_passes (cluster_id, started_at, finished_at, outcome, problems)
         VALUES ($1, $2, now(), 'UNREACHABLE', ARRAY[$3]) RETURNING id",
    )
    .bind(cluster_id)
    .bind(started)
    .bind(error)
    .fetch_one(pool)
    .await?)
}

/// The ids of a cluster's last `passes` passes, newest first: the passes
/// its window is made of.
pub async fn recent_pass_ids(pool: &PgPool, cluster_id: i64, passes: i64) -> Result<Vec<i64>, Db> {
    Ok(sqlx::query_scalar(
        "SELECT id FROM cluster_passes WHERE cluster_id = $1 AND started_at >= (
             SELECT COALESCE(window_from, '-infinity') FROM clusters WHERE id = $1)
         ORDER BY started_at DESC LIMIT $2",
    )
    .bind(cluster_id)
    .bind(passes)
    .fetch_all(pool)
    .await?)
}

/// Log-start and log-end of a partition, when they could be read.
type LogOffsets = (Option<i64>, Option<i64>);

/// A pass as stored: its id and the samples written.
#[derive(Debug)]
pub struct Stored {
    pub pass_id: i64,
    pub samples: SampleColumns,
}

/// The samples a pass makes: one per group and partition it has an offset
/// (or "no commit") for, with the partition's log offsets when read. A
/// group whose offsets could not be read gets no samples: a gap.
pub fn sample_columns(r: &Reading) -> SampleColumns {
    let ends: BTreeMap<(&str, i32), LogOffsets> = r
        .topics
        .iter()
        .flat_map(|t| {
            t.partitions
                .iter()
                .map(move |p| ((t.name.as_str(), p.partition), (p.log_start, p.log_end)))
        })
        .collect();
    let mut rows = SampleColumns::default();
    for g in r.groups.iter().filter(|g| g.error.is_none()) {
        for ((topic, partition), c) in &g.offsets {
            let (s, e) = ends
                .get(&(topic.as_str(), *partition))
                .copied()
                .unwrap_or((None, None));
            rows.groups.push(g.name.clone());
            rows.topics.push(topic.clone());
            rows.partitions.push(*partition);
            rows.committed.push(*c);
            rows.log_start.push(s);
            rows.log_end.push(e);
        }
    }
    rows
}

/// Stores a pass in one transaction: the pass, the groups, every sample and
/// the rollups.
pub async fn record_reading(pool: &PgPool, cluster_id: i64, r: &Reading) -> Result<Stored, Db> {
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

    let rows = sample_columns(r);
    upsert_groups(&mut tx, cluster_id, r).await?;
    if r.groups_listed {
        let listed: Vec<&str> = r.groups.iter().map(|g| g.name.as_str()).collect();
        sqlx::query(
            "UPDATE consumer_groups SET gone_since = $2
             WHERE cluster_id = $1 AND gone_since IS NULL AND NOT (name = ANY($3))",
        )
        .bind(cluster_id)
        .bind(r.finished)
        .bind(&listed)
        .execute(&mut *tx)
        .await?;
    }
    upsert_topics(&mut tx, cluster_id, r).await?;
    wire::replace_wire(&mut tx, cluster_id, r).await?;
    samples::insert(&mut tx, cluster_id, pass_id, r.finished, &rows).await?;
    tx.commit().await?;
    Ok(Stored {
        pass_id,
        samples: rows,
    })
}

/// Joins a list for one UNNEST column: Postgres arrays of arrays must be
/// rectangular, so each row's list travels as text. A comma is safe: Kafka
/// topic names are made of letters, digits, `.`, `_` and `-` only.
fn joined<T: ToString>(items: impl IntoIterator<Item = T>) -> String {
    items
        .into_iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Every listed group in one statement (a statement per group costs more
/// than the samples themselves at a thousand groups).
async fn upsert_groups(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    cluster_id: i64,
    r: &Reading,
) -> Result<(), Db> {
    let names: Vec<&str> = r.groups.iter().map(|g| g.name.as_str()).collect();
    let states: Vec<&str> = r.groups.iter().map(|g| g.state.as_str()).collect();
    let members: Vec<i32> = r
        .groups
        .iter()
        .map(|g| i32::try_from(g.members).unwrap_or(i32::MAX))
        .collect();
    let topics: Vec<String> = r
        .groups
        .iter()
        .map(|g| joined(g.offsets.keys().map(|(t, _)| t).collect::<BTreeSet<_>>()))
        .collect();
    Ok(sqlx::query(
        "INSERT INTO consumer_groups (cluster_id, name, state, members, topics, first_seen, last_seen)
         SELECT $1, u.name, u.state, u.members,
                COALESCE(string_to_array(NULLIF(u.topics, ''), ','), '{}'), $2, $2
         FROM UNNEST($3::text[], $4::text[], $5::int[], $6::text[]) AS u(name, state, members, topics)
         ON CONFLICT (cluster_id, name) DO UPDATE SET state = EXCLUDED.state,
            members = EXCLUDED.members, last_seen = EXCLUDED.last_seen, gone_since = NULL,
            topics = ARRAY(SELECT DISTINCT unnest(consumer_groups.topics || EXCLUDED.topics) ORDER BY 1)",
    )
    .bind(cluster_id)
    .bind(r.finished)
    .bind(&names)
    .bind(&states)
    .bind(&members)
    .bind(&topics)
    .execute(&mut **tx)
    .await
    .map(drop)?)
}

/// Every topic's health in one statement.
async fn upsert_topics(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    cluster_id: i64,
    r: &Reading,
) -> Result<(), Db> {
    let (mut names, mut partitions, mut under, mut offline, mut ends, mut lasts) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    for t in &r.topics {
        let health = metadata_health(&t.meta());
        names.push(t.name.as_str());
        partitions.push(i32::try_from(t.partitions.len()).unwrap_or(i32::MAX));
        under.push(joined(&health.under_replicated));
        offline.push(joined(&health.offline));
        ends.push(t.partitions.iter().map(|p| p.log_end).sum::<Option<i64>>());
        lasts.push(t.last_message_at);
    }
    // A topic first seen has no last advance yet: when its last message
    // came is unknown until the end is seen to move (or its newest record
    // is read).
    Ok(sqlx::query(
        "INSERT INTO topics (cluster_id, name, partitions, under_replicated, offline, log_end_total,
                             first_seen, last_seen, last_message_at, last_message_total)
         SELECT $1, u.name, u.partitions,
                COALESCE(string_to_array(NULLIF(u.under, ''), ',')::int[], '{}'),
                COALESCE(string_to_array(NULLIF(u.offline, ''), ',')::int[], '{}'),
                u.ends, $2, $2, u.last, CASE WHEN u.last IS NOT NULL THEN u.ends END
         FROM UNNEST($3::text[], $4::int[], $5::text[], $6::text[], $7::bigint[], $8::timestamptz[])
              AS u(name, partitions, under, offline, ends, last)
         ON CONFLICT (cluster_id, name) DO UPDATE SET partitions = EXCLUDED.partitions,
            under_replicated = EXCLUDED.under_replicated, offline = EXCLUDED.offline,
            log_end_total = EXCLUDED.log_end_total, last_seen = EXCLUDED.last_seen,
            last_advanced_at = CASE
                WHEN EXCLUDED.log_end_total > topics.log_end_total
                THEN EXCLUDED.last_seen ELSE topics.last_advanced_at END,
            last_message_at = COALESCE(EXCLUDED.last_message_at, topics.last_message_at),
            last_message_total = COALESCE(EXCLUDED.last_message_total, topics.last_message_total)",
    )
    .bind(cluster_id)
    .bind(r.finished)
    .bind(&names)
    .bind(&partitions)
    .bind(&under)
    .bind(&offline)
    .bind(&ends)
    .bind(&lasts)
    .execute(&mut **tx)
    .await
    .map(drop)?)
}

#[derive(Debug, Clone, FromRow)]
pub struct PassRow {
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
    pub outcome: String,
    pub problems: Vec<String>,
}

pub async fn last_pass(pool: &PgPool, cluster_id: i64) -> Result<Option<PassRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT started_at, finished_at, outcome, problems FROM cluster_passes
         WHERE cluster_id = $1 ORDER BY started_at DESC LIMIT 1",
    )
    .bind(cluster_id)
    .fetch_optional(pool)
    .await?)
}

pub async fn last_good_pass(pool: &PgPool, cluster_id: i64) -> Result<Option<DateTime<Utc>>, Db> {
    Ok(sqlx::query_scalar(
        "SELECT max(finished_at) FROM cluster_passes WHERE cluster_id = $1 AND outcome <> 'UNREACHABLE'",
    )
    .bind(cluster_id)
    .fetch_one(pool)
    .await?)
}

/// When the first refused sign-in since the cluster's last read started
/// (`streamkeeper::watch::sign_in`): the failed passes whose problem says
/// so, after the last pass that read anything.
pub async fn first_refused_since_read(
    pool: &PgPool,
    cluster_id: i64,
) -> Result<Option<DateTime<Utc>>, Db> {
    Ok(sqlx::query_scalar(
        "SELECT min(started_at) FROM cluster_passes
         WHERE cluster_id = $1 AND outcome = 'UNREACHABLE' AND starts_with(problems[1], $2)
           AND started_at > COALESCE((SELECT max(started_at) FROM cluster_passes
                                      WHERE cluster_id = $1 AND outcome <> 'UNREACHABLE'), '-infinity')",
    )
    .bind(cluster_id)
    .bind(streamkeeper::watch::sign_in::REFUSED)
    .fetch_one(pool)
    .await?)
}

/// Each cluster with its latest pass, for `/metrics`.
#[derive(Debug, Clone, FromRow)]
pub struct ClusterPassRow {
    pub name: String,
    pub outcome: Option<String>,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    pub last_good_at: Option<DateTime<Utc>>,
}

pub async fn clusters_with_last_pass(pool: &PgPool) -> Result<Vec<ClusterPassRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT c.name, p.outcome, p.started_at, p.finished_at,
                (SELECT max(finished_at) FROM cluster_passes g
                  WHERE g.cluster_id = c.id AND g.outcome <> 'UNREACHABLE') AS last_good_at
         FROM clusters c
         LEFT JOIN LATERAL (SELECT outcome, started_at, finished_at FROM cluster_passes
                            WHERE cluster_id = c.id ORDER BY started_at DESC LIMIT 1) p ON true
         WHERE c.removed_at IS NULL
         ORDER BY c.name",
    )
    .fetch_all(pool)
    .await?)
}

/// One partition of one group as the latest pass of its cluster read it.
#[derive(Debug, Clone, FromRow)]
pub struct LatestSampleRow {
    pub cluster: String,
    pub group_name: String,
    pub topic: String,
    pub partition: i32,
    pub committed: Option<i64>,
    pub log_start: Option<i64>,
    pub log_end: Option<i64>,
    /// The group's last evaluation left the topic out as not consumed
    /// (`streamkeeper::watch::lag::consumed`).
    pub not_consumed: bool,
}

/// The samples of each cluster's latest pass (none for a cluster whose
/// latest pass read nothing).
pub async fn latest_samples(pool: &PgPool) -> Result<Vec<LatestSampleRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT c.name AS cluster, s.group_name, s.topic, u.partition, u.committed, u.log_start, u.log_end,
                COALESCE(g.not_consumed ? s.topic, false) AS not_consumed
         FROM clusters c
         JOIN LATERAL (SELECT id, started_at, finished_at FROM cluster_passes
                       WHERE cluster_id = c.id ORDER BY started_at DESC LIMIT 1) p ON true
         -- `at` is the pass's end as COPY wrote it (text, so within a
         -- second); the range lets Postgres skip other days' partitions.
         JOIN lag_samples s ON s.cluster_id = c.id AND s.pass_id = p.id
              AND s.at BETWEEN p.started_at - interval '1 second' AND p.finished_at + interval '1 second'
         CROSS JOIN LATERAL unnest(s.partitions, s.committed, s.log_start, s.log_end)
              AS u(partition, committed, log_start, log_end)
         LEFT JOIN consumer_groups g ON g.cluster_id = c.id AND g.name = s.group_name
         WHERE c.removed_at IS NULL
         ORDER BY c.name, s.group_name, s.topic, u.partition",
    )
    .fetch_all(pool)
    .await?)
}

/// Each group's last judgement, with its cluster's name, for `/metrics`.
#[derive(Debug, Clone, FromRow)]
pub struct GroupMetricRow {
    pub cluster: String,
    pub name: String,
    pub state: String,
    pub members: i32,
    pub status: Option<String>,
    pub max_time_lag_s: Option<f64>,
    pub lag_velocity: Option<f64>,
    pub catch_up_s: Option<f64>,
    pub retention_risk_s: Option<f64>,
    /// The group's cluster, for its owner.
    pub cluster_id: i64,
}

pub async fn group_metrics(pool: &PgPool) -> Result<Vec<GroupMetricRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT c.name AS cluster, g.name, g.state, g.members, g.status, g.max_time_lag_s,
                g.lag_velocity, g.catch_up_s, g.retention_risk_s, g.cluster_id
         FROM consumer_groups g JOIN clusters c ON c.id = g.cluster_id AND c.removed_at IS NULL
         WHERE g.gone_since IS NULL
         ORDER BY c.name, g.name",
    )
    .fetch_all(pool)
    .await?)
}

/// Each topic's health, with its cluster's name, for `/metrics`.
#[derive(Debug, Clone, FromRow)]
pub struct TopicMetricRow {
    pub cluster_id: i64,
    pub cluster: String,
    pub name: String,
    pub partitions: i32,
    pub under_replicated: i32,
    pub offline: i32,
}

pub async fn topic_metrics(pool: &PgPool) -> Result<Vec<TopicMetricRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT t.cluster_id, c.name AS cluster, t.name, t.partitions,
                cardinality(t.under_replicated) AS under_replicated,
                cardinality(t.offline) AS offline
         FROM topics t JOIN clusters c ON c.id = t.cluster_id AND c.removed_at IS NULL
         ORDER BY c.name, t.name",
    )
    .fetch_all(pool)
    .await?)
}
