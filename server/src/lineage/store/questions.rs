//! Around an impact answer: the teams it reaches and nodes' owners, the
//! questions sent and their inbox lines, search, live flags and topics
//! missing from their cluster.

use super::reads::{NODE_COLUMNS, NodeRow};
use super::writes::node_kind;
use crate::platform::errors::Db;
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::{FromRow, PgConnection, PgPool};
use std::collections::{HashMap, HashSet};
use streamkeeper::lineage::graph::NodeKey;
use streamkeeper_app::lineage::model::SentView;

/// A team an impact reaches, as "notify owners" tells it.
#[derive(Clone, Debug, FromRow)]
pub struct NoticeTeam {
    pub id: i64,
    pub name: String,
    pub webhook_url: Option<String>,
    /// Its members' user ids.
    pub members: Vec<i64>,
}

/// The teams named `names` (names not in the catalog are left out).
pub async fn teams_named(pool: &PgPool, names: &[&str]) -> Result<Vec<NoticeTeam>, Db> {
    Ok(sqlx::query_as(
        "SELECT t.id, t.name, t.webhook_url,
                ARRAY(SELECT m.user_id FROM memberships m WHERE m.team_id = t.id ORDER BY 1) AS members
         FROM teams t WHERE t.name = ANY($1) ORDER BY t.name",
    )
    .bind(names)
    .fetch_all(pool)
    .await?)
}

/// The team a name says, if it is in the catalog.
pub async fn team_named(pool: &PgPool, name: &str) -> Result<Option<i64>, Db> {
    Ok(sqlx::query_scalar("SELECT id FROM teams WHERE name = $1")
        .bind(name)
        .fetch_optional(pool)
        .await?)
}

/// Gives the node `key` to `team_id` (set by `by`, now), or clears the
/// owner set on it.
pub async fn set_node_owner(
    conn: &mut PgConnection,
    key: &NodeKey,
    team_id: Option<i64>,
    by: &str,
) -> Result<(), Db> {
    sqlx::query(
        "WITH gone AS (
             DELETE FROM lineage_owners
             WHERE kind = $1 AND namespace = $2 AND name = $3 AND $4::bigint IS NULL
         )
         INSERT INTO lineage_owners (kind, namespace, name, team_id, set_by, set_at)
         SELECT $1, $2, $3, $4, $5, streamkeeper_now() WHERE $4::bigint IS NOT NULL
         ON CONFLICT (kind, namespace, name) DO UPDATE SET
             team_id = EXCLUDED.team_id, set_by = EXCLUDED.set_by, set_at = EXCLUDED.set_at",
    )
    .bind(node_kind(key))
    .bind(key.namespace())
    .bind(key.name())
    .bind(team_id)
    .bind(by)
    .execute(conn)
    .await?;
    Ok(())
}

/// A lineage question as asked, answered and sent.
pub struct NewQuestion<'a> {
    pub node: &'a str,
    pub direction: &'a str,
    pub asked_by: &'a str,
    pub asked_at: DateTime<Utc>,
    pub answered_at: DateTime<Utc>,
    pub reached: i32,
    pub partial: bool,
    pub teams: Vec<&'a str>,
    pub answer: Value,
    /// Some owner team is told by webhook: the question is notified when
    /// the last webhook gets its 2xx (stamped by the flags' deliveries),
    /// not now.
    pub by_webhook: bool,
}

/// Records a question, its answer sent now; returns its id and when its
/// owners were notified (now, by their inboxes alone; `None` while a
/// webhook is to be delivered).
pub async fn insert_question(
    conn: &mut PgConnection,
    q: &NewQuestion<'_>,
) -> Result<(i64, Option<DateTime<Utc>>), Db> {
    Ok(sqlx::query_as(
        "INSERT INTO lineage_questions (node, direction, asked_by, asked_at, answered_at,
             notified_at, reached, partial, teams, answer)
         VALUES ($1, $2, $3, $4, $5, CASE WHEN NOT $10 THEN streamkeeper_now() END, $6, $7, $8, $9)
         RETURNING id, notified_at",
    )
    .bind(q.node)
    .bind(q.direction)
    .bind(q.asked_by)
    .bind(q.asked_at)
    .bind(q.answered_at)
    .bind(q.reached)
    .bind(q.partial)
    .bind(&q.teams)
    .bind(&q.answer)
    .bind(q.by_webhook)
    .fetch_one(conn)
    .await?)
}

/// An inbox line for each of `users` about question `question`.
pub async fn notify_users(
    conn: &mut PgConnection,
    users: &[i64],
    question: i64,
    message: &str,
) -> Result<(), Db> {
    sqlx::query(
        "INSERT INTO notifications (user_id, lineage_question_id, message)
         SELECT DISTINCT unnest($1::bigint[]), $2, $3",
    )
    .bind(users)
    .bind(question)
    .bind(message)
    .execute(conn)
    .await?;
    Ok(())
}

/// Datasets and jobs whose name contains `q` (case-insensitive), exact
/// matches first, then the shorter names, at most `limit`.
pub async fn search(pool: &PgPool, q: &str, limit: i64) -> Result<Vec<NodeRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "SELECT {NODE_COLUMNS} FROM lineage_nodes
         WHERE strpos(lower(name), lower($1)) > 0
         ORDER BY lower(name) <> lower($1), length(name), name, kind, namespace
         LIMIT $2"
    ))
    .bind(q)
    .bind(limit)
    .fetch_all(pool)
    .await?)
}

/// Live (open or acknowledged) flags on each of `ids`: a topic's on its
/// dataset, a consumer group's on its job (named in its cluster's Kafka
/// namespace, the cluster found from a dataset of that namespace).
pub async fn live_flags(pool: &PgPool, ids: &[i64]) -> Result<HashMap<i64, i64>, Db> {
    // The flags' own query counts them (no file outside flags/ reads
    // their table).
    let rows: Vec<(i64, i64)> = sqlx::query_as(&format!(
        "WITH n AS (
             SELECT n.id, n.kind, n.name,
                    CASE WHEN n.kind = 'dataset' THEN
                             CASE WHEN n.cluster ~ '^[0-9]{{1,18}}$' THEN n.cluster::bigint END
                         ELSE (SELECT d.cluster::bigint FROM lineage_nodes d
                               WHERE d.kind = 'dataset' AND d.namespace = n.namespace
                                 AND d.cluster ~ '^[0-9]{{1,18}}$' LIMIT 1)
                    END AS cluster_id,
                    CASE n.kind WHEN 'dataset' THEN 'topic' ELSE 'group' END AS subject_kind
             FROM lineage_nodes n WHERE n.id = ANY($1))
         SELECT n.id, live.n FROM n CROSS JOIN LATERAL ({}) live(n) WHERE live.n > 0",
        crate::flags::store::live_count_on("n")
    ))
    .bind(ids)
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().collect())
}

/// Of these nodes, the topics whose watched cluster's latest UP pass did
/// not list them: named by a connector or an event, not in the cluster. A
/// cluster never read fully says nothing either way.
pub async fn not_in_cluster(pool: &PgPool, ids: &[i64]) -> Result<HashSet<i64>, Db> {
    let rows: Vec<i64> = sqlx::query_scalar(
        "WITH n AS (
             SELECT id, name, CASE WHEN cluster ~ '^[0-9]{1,18}$' THEN cluster::bigint END AS cluster_id
             FROM lineage_nodes WHERE id = ANY($1) AND kind = 'dataset')
         SELECT n.id FROM n
         JOIN LATERAL (SELECT p.finished_at FROM cluster_passes p
                       WHERE p.cluster_id = n.cluster_id AND p.outcome = 'UP'
                       ORDER BY p.started_at DESC LIMIT 1) p ON true
         WHERE NOT EXISTS (SELECT 1 FROM topics t WHERE t.cluster_id = n.cluster_id
                           AND t.name = n.name AND t.last_seen >= p.finished_at)",
    )
    .bind(ids)
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().collect())
}

#[derive(FromRow)]
struct SentRow {
    id: i64,
    asked_by: String,
    notified_at: Option<DateTime<Utc>>,
    teams: Vec<String>,
    reached: i32,
    partial: bool,
}

/// The impacts of `node` in `direction` sent to owners, newest first.
pub async fn sent(
    pool: &PgPool,
    node: &str,
    direction: &str,
    limit: i64,
) -> Result<Vec<SentView>, Db> {
    let rows: Vec<SentRow> = sqlx::query_as(
        "SELECT id, asked_by, notified_at, teams, reached, partial FROM lineage_questions
         WHERE node = $1 AND direction = $2 ORDER BY asked_at DESC, id DESC LIMIT $3",
    )
    .bind(node)
    .bind(direction)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| SentView {
            question: r.id,
            asked_by: r.asked_by,
            notified_at: r.notified_at,
            teams: r.teams,
            reached: r.reached,
            partial: r.partial,
        })
        .collect())
}
