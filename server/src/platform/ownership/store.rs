//! The ownership rule's facts: claims, the streams a thing reads or
//! writes and their catalog owners, in one query per kind.

use chrono::{DateTime, Utc};
use sqlx::{FromRow, PgConnection, PgPool};

use crate::platform::errors::Db;

/// The rule's owner of the stream `s` (a `streams` row) as SQL, its
/// team's name: the catalog entry's team (`rule::of_stream`). For lists
/// that filter or sort by owner in the database; what they show comes
/// from `ownership::streams`.
pub const STREAM_OWNER: &str = "(SELECT ot.name FROM teams ot WHERE ot.id = s.owner_team_id)";

/// The rule's owner of the consumer group `g` (a `consumer_groups` row)
/// as SQL, its team's name: its claim, else the owner of the first owned
/// stream it reads by topic, byte order as in Rust (`rule::of_group`). For
/// lists that sort by owner in the database; what they show comes from
/// `ownership::groups`.
pub const GROUP_OWNER: &str = "COALESCE(
    (SELECT ot.name FROM teams ot WHERE ot.id = g.owner_team_id),
    (SELECT ot.name FROM streams os JOIN teams ot ON ot.id = os.owner_team_id
     WHERE os.cluster_id = g.cluster_id AND os.topic = ANY(g.topics)
     ORDER BY os.topic COLLATE \"C\" LIMIT 1))";

/// A stream's catalog owner.
#[derive(Debug, FromRow)]
pub struct StreamRow {
    pub topic: String,
    pub team_id: Option<i64>,
    pub team: Option<String>,
}

pub async fn streams(
    pool: &PgPool,
    cluster_id: i64,
    topics: &[String],
) -> Result<Vec<StreamRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT s.topic, t.id AS team_id, t.name AS team FROM streams s
         LEFT JOIN teams t ON t.id = s.owner_team_id
         WHERE s.cluster_id = $1 AND s.topic = ANY($2)",
    )
    .bind(cluster_id)
    .bind(topics)
    .fetch_all(pool)
    .await?)
}

/// A group or connector with its claim, and one of the streams it reads
/// or writes with that stream's owner (one row per owned stream; one row
/// with no stream when none is owned).
#[derive(Debug, FromRow)]
pub struct ClaimRow {
    pub name: String,
    pub claim_team_id: Option<i64>,
    pub claim_team: Option<String>,
    pub claimed_at: Option<DateTime<Utc>>,
    pub topic: Option<String>,
    pub stream_team_id: Option<i64>,
    pub stream_team: Option<String>,
}

/// The groups of `names` in a cluster.
pub async fn groups(pool: &PgPool, cluster_id: i64, names: &[String]) -> Result<Vec<ClaimRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT g.name, ct.id AS claim_team_id, ct.name AS claim_team, g.owner_claimed_at AS claimed_at,
                s.topic, st.id AS stream_team_id, st.name AS stream_team
         FROM consumer_groups g
         LEFT JOIN teams ct ON ct.id = g.owner_team_id
         LEFT JOIN streams s ON s.cluster_id = g.cluster_id AND s.topic = ANY(g.topics)
             AND s.owner_team_id IS NOT NULL
         LEFT JOIN teams st ON st.id = s.owner_team_id
         WHERE g.cluster_id = $1 AND g.name = ANY($2)",
    )
    .bind(cluster_id)
    .bind(names)
    .fetch_all(pool)
    .await?)
}

/// The connectors of `names` on a Connect cluster.
pub async fn connectors(
    pool: &PgPool,
    connect_id: i64,
    names: &[String],
) -> Result<Vec<ClaimRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT c.name, ct.id AS claim_team_id, ct.name AS claim_team, c.owner_claimed_at AS claimed_at,
                s.topic, st.id AS stream_team_id, st.name AS stream_team
         FROM connectors c
         JOIN connect_clusters cc ON cc.id = c.connect_id
         LEFT JOIN teams ct ON ct.id = c.owner_team_id
         LEFT JOIN streams s ON s.cluster_id = cc.cluster_id AND s.topic = ANY(c.topics)
             AND s.owner_team_id IS NOT NULL
         LEFT JOIN teams st ON st.id = s.owner_team_id
         WHERE c.connect_id = $1 AND c.name = ANY($2)",
    )
    .bind(connect_id)
    .bind(names)
    .fetch_all(pool)
    .await?)
}

/// A lineage node with what its owner depends on: a Kafka dataset's
/// cluster and stream owner, a derived consumer-group job's cluster, a
/// derived connector job's Connect cluster, the team set on it, and its
/// live `ownership` facet's first named team, sender and the sender's
/// standing.
#[derive(Debug, FromRow)]
pub struct NodeRow {
    pub id: i64,
    pub name: String,
    /// Set for a topic of a registered cluster.
    pub dataset_cluster: Option<i64>,
    pub stream_team_id: Option<i64>,
    pub stream_team: Option<String>,
    /// Set for a job Streamkeeper derived from a consumer group.
    pub group_cluster: Option<i64>,
    /// Set for a job Streamkeeper derived from a connector.
    pub connector_connect: Option<i64>,
    pub set_team_id: Option<i64>,
    pub set_team: Option<String>,
    pub set_by: Option<String>,
    pub set_at: Option<DateTime<Utc>>,
    pub facet_team_id: Option<i64>,
    pub facet_team: Option<String>,
    pub facet_sender: Option<String>,
    pub sender_admin: Option<bool>,
    pub sender_teams: Vec<i64>,
}

pub async fn lineage_nodes(pool: &PgPool, ids: &[i64]) -> Result<Vec<NodeRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT n.id, n.name, r.dataset_cluster, st.id AS stream_team_id, st.name AS stream_team,
                g.cluster_id AS group_cluster, k.connect_id AS connector_connect,
                lt.id AS set_team_id, lt.name AS set_team, lo.set_by, lo.set_at,
                ft.id AS facet_team_id, ft.name AS facet_team,
                f.sender AS facet_sender, u.roles @> ARRAY['admin'] AS sender_admin,
                COALESCE((SELECT array_agg(m.team_id) FROM memberships m WHERE m.user_id = u.id),
                         '{}') AS sender_teams
         FROM lineage_nodes n
         CROSS JOIN LATERAL (
             SELECT CASE WHEN n.kind = 'dataset' AND n.cluster ~ '^[0-9]{1,18}$'
                 THEN n.cluster::bigint END AS dataset_cluster) r
         LEFT JOIN streams s ON s.cluster_id = r.dataset_cluster AND s.topic = n.name
         LEFT JOIN teams st ON st.id = s.owner_team_id
         -- A derived group's job shares its namespace with its cluster's topics.
         LEFT JOIN LATERAL (
             SELECT d.cluster::bigint AS cluster_id FROM lineage_nodes d
             WHERE n.kind = 'job' AND d.kind = 'dataset' AND d.namespace = n.namespace
               AND d.cluster ~ '^[0-9]{1,18}$'
               AND EXISTS (SELECT 1 FROM lineage_facets j WHERE j.node_id = n.id
                           AND j.key = 'jobType' AND j.value->>'jobType' = 'CONSUMER_GROUP')
             LIMIT 1) g ON true
         -- A derived connector's job is in its Connect cluster's namespace.
         LEFT JOIN LATERAL (
             SELECT cc.id AS connect_id FROM connect_clusters cc
             WHERE n.kind = 'job' AND n.namespace = 'kafka-connect://' || cc.name
               AND EXISTS (SELECT 1 FROM lineage_facets j WHERE j.node_id = n.id
                           AND j.key = 'jobType' AND j.value->>'jobType' = 'CONNECTOR')
             ORDER BY cc.id LIMIT 1) k ON true
         LEFT JOIN lineage_owners lo
             ON lo.kind = n.kind AND lo.namespace = n.namespace AND lo.name = n.name
         LEFT JOIN teams lt ON lt.id = lo.team_id
         LEFT JOIN lineage_facets f ON f.node_id = n.id AND f.key = 'ownership'
         LEFT JOIN teams ft ON ft.name = f.value->'owners'->0->>'name'
         LEFT JOIN users u ON u.username = f.sender
         WHERE n.id = ANY($1)",
    )
    .bind(ids)
    .fetch_all(pool)
    .await?)
}

/// The stored `ownership` facet of a node (by key), with its first named
/// team when that is a team, its sender and the sender's standing.
#[derive(Debug, FromRow)]
pub struct StoredFacetRow {
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub team_id: Option<i64>,
    pub team: Option<String>,
    pub sender: Option<String>,
    pub sender_admin: Option<bool>,
    pub sender_teams: Vec<i64>,
}

pub async fn stored_facets(
    conn: &mut PgConnection,
    kinds: &[&str],
    namespaces: &[&str],
    names: &[&str],
) -> Result<Vec<StoredFacetRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT n.kind, n.namespace, n.name, t.id AS team_id, t.name AS team, f.sender,
                u.roles @> ARRAY['admin'] AS sender_admin,
                COALESCE((SELECT array_agg(m.team_id) FROM memberships m WHERE m.user_id = u.id),
                         '{}') AS sender_teams
         FROM UNNEST($1::text[], $2::text[], $3::text[]) AS k(kind, namespace, name)
         JOIN lineage_nodes n ON n.kind = k.kind AND n.namespace = k.namespace AND n.name = k.name
         JOIN lineage_facets f ON f.node_id = n.id AND f.key = 'ownership'
         LEFT JOIN teams t ON t.name = f.value->'owners'->0->>'name'
         LEFT JOIN users u ON u.username = f.sender",
    )
    .bind(kinds)
    .bind(namespaces)
    .bind(names)
    .fetch_all(conn)
    .await?)
}

/// A user's standing, by username.
#[derive(Debug, FromRow)]
pub struct SenderRow {
    pub username: String,
    pub admin: bool,
    pub teams: Vec<i64>,
}

pub async fn senders(conn: &mut PgConnection, usernames: &[&str]) -> Result<Vec<SenderRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT u.username, u.roles @> ARRAY['admin'] AS admin,
                COALESCE((SELECT array_agg(m.team_id) FROM memberships m WHERE m.user_id = u.id),
                         '{}') AS teams
         FROM users u WHERE u.username = ANY($1)",
    )
    .bind(usernames)
    .fetch_all(conn)
    .await?)
}

/// The teams of `names` that exist: (id, name).
pub async fn teams_named(
    conn: &mut PgConnection,
    names: &[&str],
) -> Result<Vec<(i64, String)>, Db> {
    Ok(
        sqlx::query_as("SELECT id, name FROM teams WHERE name = ANY($1)")
            .bind(names)
            .fetch_all(conn)
            .await?,
    )
}

/// Every team: (id, name), by name.
pub async fn teams(pool: &PgPool) -> Result<Vec<(i64, String)>, Db> {
    Ok(sqlx::query_as("SELECT id, name FROM teams ORDER BY name")
        .fetch_all(pool)
        .await?)
}
