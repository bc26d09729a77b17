//! Marquez's recursive-CTE approach, kept as the benchmarks' yardstick for
//! the in-memory walks.

use crate::platform::errors::Db;
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::PgPool;

/// Marquez's approach, as the benchmark's yardstick: one recursive CTE
/// from `start` downstream to `depth` hops over the same tables, each
/// reached node with its least depth and its topic's owner team.
/// Returns (node id, depth, owner).
pub async fn downstream_by_recursive_cte(
    pool: &PgPool,
    start: i64,
    depth: i32,
) -> Result<Vec<(i64, i32, Option<String>)>, Db> {
    Ok(sqlx::query_as(
        "WITH RECURSIVE walk(id, depth) AS (
             SELECT $1::bigint, 0
             UNION
             SELECT e.dst, w.depth + 1 FROM walk w JOIN lineage_edges e ON e.src = w.id
             WHERE w.depth < $2
         )
         SELECT n.id, min(w.depth)::int, min(t.name)
         FROM walk w JOIN lineage_nodes n ON n.id = w.id
         LEFT JOIN streams s ON n.cluster IS NOT NULL AND s.cluster_id::text = n.cluster
                            AND s.topic = n.name
         LEFT JOIN teams t ON t.id = s.owner_team_id
         WHERE w.id <> $1
         GROUP BY n.id",
    )
    .bind(start)
    .bind(depth)
    .fetch_all(pool)
    .await?)
}

/// Marquez's approach asked the whole question, as the benchmark's
/// second yardstick: the reach of [`downstream_by_recursive_cte`], then
/// for each reached node what an impact answer shows: its least depth, the
/// edge from a node one hop nearer (its path's last step) with that edge's
/// times, the node's times, its topic's owner team and its `ownership`
/// facet. Returns the rows' count.
pub async fn downstream_answer_by_recursive_cte(
    pool: &PgPool,
    start: i64,
    depth: i32,
) -> Result<usize, Db> {
    type Time = Option<DateTime<Utc>>;
    // Decoded whole, as an answer's rows are.
    #[allow(clippy::type_complexity)]
    let rows: Vec<(
        i64,
        i32,
        Option<i64>,
        Time,
        Time,
        Time,
        Time,
        Option<String>,
        Option<Value>,
        Time,
        Time,
        Time,
        Time,
    )> = sqlx::query_as(
        "WITH RECURSIVE walk(id, depth) AS (
             SELECT $1::bigint, 0
             UNION
             SELECT e.dst, w.depth + 1 FROM walk w JOIN lineage_edges e ON e.src = w.id
             WHERE w.depth < $2
         ), reached AS MATERIALIZED (
             SELECT id, min(depth) AS depth FROM walk GROUP BY id
         ), out_edges AS MATERIALIZED (
             -- Materialized: joined to `reached` in one step, the plan
             -- probed the edges once per pair of reached nodes.
             SELECT p.depth, e.* FROM reached p JOIN lineage_edges e ON e.src = p.id
         ), via AS (
             SELECT DISTINCT ON (o.dst) o.*
             FROM out_edges o JOIN reached c ON c.id = o.dst AND c.depth = o.depth + 1
             ORDER BY o.dst, o.src
         )
         SELECT r.id, r.depth, v.src, n.observed_first, n.observed_last, n.derived_first,
                n.derived_last, t.name, f.value, v.observed_first, v.observed_last,
                v.derived_first, v.derived_last
         FROM reached r JOIN lineage_nodes n ON n.id = r.id
         LEFT JOIN streams s ON n.cluster IS NOT NULL AND s.cluster_id::text = n.cluster
                            AND s.topic = n.name
         LEFT JOIN teams t ON t.id = s.owner_team_id
         LEFT JOIN lineage_facets f ON f.node_id = n.id AND f.key = 'ownership'
         LEFT JOIN via v ON v.dst = r.id
         WHERE r.id <> $1",
    )
    .bind(start)
    .bind(depth)
    .fetch_all(pool)
    .await?;
    Ok(rows.len())
}
