//! Connect clusters, connectors, tasks and their state history. Configs
//! and traces arrive here masked and scrubbed; nothing here sees a secret.

use crate::platform::errors::Db;
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::{FromRow, PgConnection, PgPool};

#[derive(Debug, Clone, FromRow)]
pub struct ConnectRow {
    pub id: i64,
    pub cluster_id: i64,
    pub name: String,
    pub url: String,
    pub username_ref: Option<String>,
    pub password_ref: Option<String>,
    pub token_ref: Option<String>,
    pub interval_s: i32,
    pub read_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    pub last_error_at: Option<DateTime<Utc>>,
    pub failed_passes: i32,
    /// The Kafka cluster's: credentials may go without TLS.
    pub insecure_credentials: bool,
    pub connectors: i64,
    pub failing: i64,
}

const CONNECT: &str = "SELECT cc.id, cc.cluster_id, cc.name, cc.url, cc.username_ref, cc.password_ref,
        cc.token_ref, cc.interval_s, cc.read_at, cc.last_error, cc.last_error_at, cc.failed_passes,
        k.insecure_credentials,
        (SELECT count(*) FROM connectors c WHERE c.connect_id = cc.id AND c.gone_at IS NULL) AS connectors,
        (SELECT count(*) FROM connectors c WHERE c.connect_id = cc.id AND c.gone_at IS NULL
           AND (c.state = 'FAILED' OR EXISTS (SELECT 1 FROM connector_tasks t
                WHERE t.connector_id = c.id AND t.state = 'FAILED'))) AS failing
     FROM connect_clusters cc JOIN clusters k ON k.id = cc.cluster_id";

pub async fn of_cluster(pool: &PgPool, cluster_id: i64) -> Result<Vec<ConnectRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "{CONNECT} WHERE cc.cluster_id = $1 ORDER BY cc.name"
    ))
    .bind(cluster_id)
    .fetch_all(pool)
    .await?)
}

pub async fn by_name(pool: &PgPool, cluster_id: i64, name: &str) -> Result<Option<ConnectRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "{CONNECT} WHERE cc.cluster_id = $1 AND cc.name = $2"
    ))
    .bind(cluster_id)
    .bind(name)
    .fetch_optional(pool)
    .await?)
}

/// Connect clusters of the Kafka cluster whose next pass is due: never
/// read, or last tried (read or failed) an interval ago.
pub async fn due(pool: &PgPool, cluster_id: i64) -> Result<Vec<ConnectRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "{CONNECT} WHERE cc.cluster_id = $1
           AND (GREATEST(cc.read_at, cc.last_error_at) IS NULL
                OR GREATEST(cc.read_at, cc.last_error_at) <= now() - make_interval(secs => cc.interval_s))
         ORDER BY cc.name"
    ))
    .bind(cluster_id)
    .fetch_all(pool)
    .await?)
}

pub struct ConnectSet<'a> {
    pub name: &'a str,
    pub url: &'a str,
    pub username_ref: Option<&'a str>,
    pub password_ref: Option<&'a str>,
    pub token_ref: Option<&'a str>,
    pub interval_s: i32,
}

/// Creates or updates by name; true when it created it.
pub async fn upsert(
    conn: &mut PgConnection,
    cluster_id: i64,
    c: &ConnectSet<'_>,
) -> Result<(i64, bool), Db> {
    Ok(sqlx::query_as(
        "INSERT INTO connect_clusters (cluster_id, name, url, username_ref, password_ref, token_ref, interval_s)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (cluster_id, name) DO UPDATE SET url = $3, username_ref = $4, password_ref = $5,
             token_ref = $6, interval_s = $7, updated_at = now()
         RETURNING id, (xmax = 0) AS created",
    )
    .bind(cluster_id)
    .bind(c.name)
    .bind(c.url)
    .bind(c.username_ref)
    .bind(c.password_ref)
    .bind(c.token_ref)
    .bind(c.interval_s)
    .fetch_one(conn)
    .await?)
}

pub async fn delete(conn: &mut PgConnection, cluster_id: i64, name: &str) -> Result<bool, Db> {
    Ok(
        sqlx::query("DELETE FROM connect_clusters WHERE cluster_id = $1 AND name = $2")
            .bind(cluster_id)
            .bind(name)
            .execute(conn)
            .await
            .map(|r| r.rows_affected() > 0)?,
    )
}

/// A pass that could not read the worker: a gap, no state written.
pub async fn pass_failed(pool: &PgPool, id: i64, error: &str) -> Result<(), Db> {
    Ok(sqlx::query(
        "UPDATE connect_clusters SET last_error = $2, last_error_at = now(),
             failed_passes = failed_passes + 1 WHERE id = $1",
    )
    .bind(id)
    .bind(error)
    .execute(pool)
    .await
    .map(drop)?)
}

/// A connector as stored, with its owner.
#[derive(Debug, Clone, FromRow)]
pub struct ConnectorRow {
    pub id: i64,
    pub name: String,
    pub class: Option<String>,
    pub kind: String,
    pub state: String,
    pub worker_id: Option<String>,
    pub trace: Option<String>,
    pub config: Value,
    pub config_hash: String,
    pub topics: Vec<String>,
    pub owner_team_id: Option<i64>,
    pub unassigned_passes: i32,
    pub seen_at: DateTime<Utc>,
    pub gone_at: Option<DateTime<Utc>>,
    pub tasks: i64,
    pub tasks_failed: i64,
    pub tasks_running: i64,
    pub trouble: i32,
    /// The connector's trace when it FAILED, else its first failed task's.
    pub failed_trace: Option<String>,
}

impl ConnectorRow {
    /// The state lists show (`streamkeeper::connect::status::shown_state`):
    /// FAILED when all its tasks failed, though Connect says RUNNING.
    pub fn shown_state(&self) -> String {
        streamkeeper::connect::status::shown_state(&self.state, self.tasks, self.tasks_failed)
            .to_owned()
    }
}

/// 0 failed, 1 unassigned or restarting, 2 paused or stopped, 3 running;
/// 4 gone from the worker.
const CONNECTOR: &str =
    "SELECT c.id, c.name, c.class, c.kind, c.state, c.worker_id, c.trace, c.config,
        c.config_hash, c.topics, c.owner_team_id,
        c.unassigned_passes, c.seen_at, c.gone_at,
        COALESCE(t.total, 0) AS tasks, COALESCE(t.failed, 0) AS tasks_failed,
        COALESCE(t.running, 0) AS tasks_running,
        CASE WHEN c.gone_at IS NOT NULL THEN 4
             WHEN c.state = 'FAILED' OR COALESCE(t.failed, 0) > 0 THEN 0
             WHEN c.state IN ('UNASSIGNED', 'RESTARTING') OR COALESCE(t.stuck, 0) > 0 THEN 1
             WHEN c.state IN ('PAUSED', 'STOPPED') THEN 2 ELSE 3 END AS trouble,
        COALESCE(CASE WHEN c.state = 'FAILED' THEN c.trace END,
                 (SELECT ft.trace FROM connector_tasks ft WHERE ft.connector_id = c.id
                    AND ft.state = 'FAILED' ORDER BY ft.task LIMIT 1)) AS failed_trace
     FROM connectors c
     JOIN connect_clusters cc ON cc.id = c.connect_id
     LEFT JOIN LATERAL (
        SELECT count(*) AS total,
               count(*) FILTER (WHERE state = 'FAILED') AS failed,
               count(*) FILTER (WHERE state = 'RUNNING') AS running,
               count(*) FILTER (WHERE state IN ('UNASSIGNED', 'RESTARTING')) AS stuck
        FROM connector_tasks WHERE connector_id = c.id) t ON true";

/// A page of a Connect cluster's connectors, trouble first, then by name;
/// `q` matches the name or class, any case.
pub async fn page(
    pool: &PgPool,
    connect_id: i64,
    q: Option<&str>,
    limit: i64,
    offset: i64,
) -> Result<(Vec<ConnectorRow>, i64), Db> {
    let rows = sqlx::query_as(&format!(
        "{CONNECTOR} WHERE c.connect_id = $1
           AND ($2::text IS NULL OR strpos(lower(c.name), lower($2)) > 0
                OR strpos(lower(COALESCE(c.class, '')), lower($2)) > 0)
         ORDER BY trouble, c.name LIMIT $3 OFFSET $4"
    ))
    .bind(connect_id)
    .bind(q)
    .bind(limit)
    .bind(offset)
    .fetch_all(pool)
    .await?;
    let total: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM connectors c WHERE c.connect_id = $1
           AND ($2::text IS NULL OR strpos(lower(c.name), lower($2)) > 0
                OR strpos(lower(COALESCE(c.class, '')), lower($2)) > 0)",
    )
    .bind(connect_id)
    .bind(q)
    .fetch_one(pool)
    .await?;
    Ok((rows, total))
}

pub async fn connector(
    pool: &PgPool,
    connect_id: i64,
    name: &str,
) -> Result<Option<ConnectorRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "{CONNECTOR} WHERE c.connect_id = $1 AND c.name = $2"
    ))
    .bind(connect_id)
    .bind(name)
    .fetch_optional(pool)
    .await?)
}

/// Every connector the Connect cluster still lists, for a pass to compare.
pub async fn current(pool: &PgPool, connect_id: i64) -> Result<Vec<ConnectorRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "{CONNECTOR} WHERE c.connect_id = $1 AND c.gone_at IS NULL"
    ))
    .bind(connect_id)
    .fetch_all(pool)
    .await?)
}

#[derive(Debug, Clone, FromRow)]
pub struct TaskRow {
    pub connector_id: i64,
    pub task: i32,
    pub state: String,
    pub worker_id: Option<String>,
    pub trace: Option<String>,
    pub unassigned_passes: i32,
}

pub async fn tasks(pool: &PgPool, connector_ids: &[i64]) -> Result<Vec<TaskRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT connector_id, task, state, worker_id, trace, unassigned_passes
         FROM connector_tasks WHERE connector_id = ANY($1) ORDER BY connector_id, task",
    )
    .bind(connector_ids)
    .fetch_all(pool)
    .await?)
}

#[derive(Debug, Clone, FromRow)]
pub struct StateRow {
    pub task: Option<i32>,
    pub state: String,
    pub trace: Option<String>,
    pub at: DateTime<Utc>,
}

pub async fn history(pool: &PgPool, connector_id: i64, limit: i64) -> Result<Vec<StateRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT task, state, trace, at FROM connector_states WHERE connector_id = $1
         ORDER BY at DESC, id DESC LIMIT $2",
    )
    .bind(connector_id)
    .bind(limit)
    .fetch_all(pool)
    .await?)
}

/// One connector as a pass read it (masked config, scrubbed traces).
pub struct SeenConnector {
    pub name: String,
    pub class: Option<String>,
    pub kind: String,
    pub state: String,
    pub worker_id: String,
    pub trace: Option<String>,
    pub config: Value,
    pub config_hash: String,
    pub topics: Vec<String>,
    pub unassigned_passes: i32,
    pub tasks: Vec<SeenTask>,
    /// Whether the connector's own state or trace changed (a history row).
    pub changed: bool,
}

pub struct SeenTask {
    pub task: i32,
    pub state: String,
    pub worker_id: String,
    pub trace: Option<String>,
    pub unassigned_passes: i32,
    pub changed: bool,
}

/// Writes a pass in one transaction, a few statements whatever the number
/// of connectors: upserts, tasks replaced, history rows for changes, and
/// connectors no longer listed (and not merely missing from this listing,
/// `listed`) marked gone. Returns the connectors' ids by name.
pub async fn write_pass(
    conn: &mut PgConnection,
    connect_id: i64,
    seen: &[SeenConnector],
    listed: &[String],
) -> Result<Vec<(i64, String)>, Db> {
    let col = |f: &dyn Fn(&SeenConnector) -> Option<String>| -> Vec<Option<String>> {
        seen.iter().map(f).collect()
    };
    let names = col(&|c| Some(c.name.clone()));
    let classes = col(&|c| c.class.clone());
    let kinds = col(&|c| Some(c.kind.clone()));
    let states = col(&|c| Some(c.state.clone()));
    let workers = col(&|c| Some(c.worker_id.clone()));
    let traces = col(&|c| c.trace.clone());
    let hashes = col(&|c| Some(c.config_hash.clone()));
    let configs: Vec<Value> = seen.iter().map(|c| c.config.clone()).collect();
    let topics: Vec<Value> = seen.iter().map(|c| Value::from(c.topics.clone())).collect();
    let passes: Vec<i32> = seen.iter().map(|c| c.unassigned_passes).collect();
    let ids: Vec<(i64, String)> = sqlx::query_as(
        "INSERT INTO connectors (connect_id, name, class, kind, state, worker_id, trace, config,
                                 config_hash, topics, unassigned_passes, seen_at, gone_at)
         SELECT $1, u.name, u.class, u.kind, u.state, u.worker, u.trace, u.config, u.hash,
                ARRAY(SELECT jsonb_array_elements_text(u.topics)), u.passes, now(), NULL
         FROM UNNEST($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                     $8::jsonb[], $9::text[], $10::jsonb[], $11::int[])
              AS u(name, class, kind, state, worker, trace, config, hash, topics, passes)
         ON CONFLICT (connect_id, name) DO UPDATE SET class = EXCLUDED.class, kind = EXCLUDED.kind,
             state = EXCLUDED.state, worker_id = EXCLUDED.worker_id, trace = EXCLUDED.trace,
             config = EXCLUDED.config, config_hash = EXCLUDED.config_hash, topics = EXCLUDED.topics,
             unassigned_passes = EXCLUDED.unassigned_passes, seen_at = now(), gone_at = NULL
         RETURNING id, name",
    )
    .bind(connect_id)
    .bind(&names)
    .bind(&classes)
    .bind(&kinds)
    .bind(&states)
    .bind(&workers)
    .bind(&traces)
    .bind(&configs)
    .bind(&hashes)
    .bind(&topics)
    .bind(&passes)
    .fetch_all(&mut *conn)
    .await?;
    let id_of: std::collections::HashMap<&str, i64> =
        ids.iter().map(|(id, n)| (n.as_str(), *id)).collect();
    let mut task_ids = Vec::new();
    let (mut t_task, mut t_state, mut t_worker, mut t_trace, mut t_passes) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut h_id, mut h_task, mut h_state, mut h_trace) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for c in seen {
        let Some(&id) = id_of.get(c.name.as_str()) else {
            continue;
        };
        if c.changed {
            h_id.push(id);
            h_task.push(None::<i32>);
            h_state.push(c.state.clone());
            h_trace.push(c.trace.clone());
        }
        for t in &c.tasks {
            task_ids.push(id);
            t_task.push(t.task);
            t_state.push(t.state.clone());
            t_worker.push(t.worker_id.clone());
            t_trace.push(t.trace.clone());
            t_passes.push(t.unassigned_passes);
            if t.changed {
                h_id.push(id);
                h_task.push(Some(t.task));
                h_state.push(t.state.clone());
                h_trace.push(t.trace.clone());
            }
        }
    }
    let all: Vec<i64> = ids.iter().map(|(id, _)| *id).collect();
    sqlx::query("DELETE FROM connector_tasks WHERE connector_id = ANY($1)")
        .bind(&all)
        .execute(&mut *conn)
        .await?;
    sqlx::query(
        "INSERT INTO connector_tasks (connector_id, task, state, worker_id, trace, unassigned_passes)
         SELECT * FROM UNNEST($1::bigint[], $2::int[], $3::text[], $4::text[], $5::text[], $6::int[])",
    )
    .bind(&task_ids)
    .bind(&t_task)
    .bind(&t_state)
    .bind(&t_worker)
    .bind(&t_trace)
    .bind(&t_passes)
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "INSERT INTO connector_states (connector_id, task, state, trace)
         SELECT * FROM UNNEST($1::bigint[], $2::int[], $3::text[], $4::text[])",
    )
    .bind(&h_id)
    .bind(&h_task)
    .bind(&h_state)
    .bind(&h_trace)
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "UPDATE connectors SET gone_at = now()
         WHERE connect_id = $1 AND gone_at IS NULL AND NOT (name = ANY($2))",
    )
    .bind(connect_id)
    .bind(listed)
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "UPDATE connect_clusters SET read_at = now(), last_error = NULL, failed_passes = 0
         WHERE id = $1",
    )
    .bind(connect_id)
    .execute(&mut *conn)
    .await?;
    Ok(ids)
}

/// Gives the connector to `team_id` (claimed `at`), or leaves it unowned.
pub async fn set_owner(
    conn: &mut PgConnection,
    connect_id: i64,
    name: &str,
    team_id: Option<i64>,
    at: DateTime<Utc>,
) -> Result<bool, Db> {
    Ok(sqlx::query(
        "UPDATE connectors SET owner_team_id = $3,
                owner_claimed_at = CASE WHEN $3::bigint IS NULL THEN NULL ELSE $4 END
         WHERE connect_id = $1 AND name = $2",
    )
    .bind(connect_id)
    .bind(name)
    .bind(team_id)
    .bind(at)
    .execute(conn)
    .await
    .map(|r| r.rows_affected() > 0)?)
}

/// A Kafka cluster by name: its id and whether credentials may go
/// without TLS.
pub async fn cluster_by_name(pool: &PgPool, name: &str) -> Result<Option<(i64, bool)>, Db> {
    Ok(sqlx::query_as(
        "SELECT id, insecure_credentials FROM clusters WHERE name = $1 AND removed_at IS NULL",
    )
    .bind(name)
    .fetch_optional(pool)
    .await?)
}

pub async fn team_id(pool: &PgPool, name: &str) -> Result<Option<i64>, Db> {
    Ok(sqlx::query_scalar("SELECT id FROM teams WHERE name = $1")
        .bind(name)
        .fetch_optional(pool)
        .await?)
}

/// The streams a connector reads or writes that are in the catalog, with
/// their domain and that domain's level (`None`: never configured).
pub async fn stream_domains(
    pool: &PgPool,
    connector_id: i64,
) -> Result<Vec<(String, String, Option<String>)>, Db> {
    Ok(sqlx::query_as(
        "SELECT s.topic, s.domain, d.autonomy FROM connectors c
             JOIN connect_clusters cc ON cc.id = c.connect_id
             JOIN streams s ON s.cluster_id = cc.cluster_id AND s.topic = ANY (c.topics)
             LEFT JOIN review_domains d ON d.domain = s.domain
         WHERE c.id = $1 ORDER BY s.topic",
    )
    .bind(connector_id)
    .fetch_all(pool)
    .await?)
}

/// When the routine restarted the connector on its own since `since`.
pub async fn restarts_since(
    pool: &PgPool,
    connector_id: i64,
    since: DateTime<Utc>,
) -> Result<Vec<DateTime<Utc>>, Db> {
    Ok(sqlx::query_scalar(
        "SELECT at FROM connector_restarts WHERE connector_id = $1 AND at > $2 ORDER BY at",
    )
    .bind(connector_id)
    .bind(since)
    .fetch_all(pool)
    .await?)
}

pub async fn insert_restart(
    conn: &mut PgConnection,
    connector_id: i64,
    tasks: &[i32],
    outcome: &str,
) -> Result<(), Db> {
    sqlx::query(
        "INSERT INTO connector_restarts (connector_id, tasks, outcome) VALUES ($1, $2, $3)",
    )
    .bind(connector_id)
    .bind(tasks)
    .bind(outcome)
    .execute(conn)
    .await?;
    Ok(())
}

/// Each live connector's and task's state, for `/metrics`.
#[derive(Debug, Clone, FromRow)]
pub struct StateMetricRow {
    pub connect: String,
    pub connector: String,
    /// `None`: the connector itself.
    pub task: Option<i32>,
    pub state: String,
    /// The connector's Connect cluster, for its owner.
    pub connect_id: i64,
}

pub async fn state_metrics(pool: &PgPool) -> Result<Vec<StateMetricRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT w.name AS connect, k.name AS connector, NULL::INTEGER AS task, k.state,
                k.connect_id
         FROM connectors k JOIN connect_clusters w ON w.id = k.connect_id
         WHERE k.gone_at IS NULL
         UNION ALL
         SELECT w.name, k.name, t.task, t.state, k.connect_id
         FROM connector_tasks t JOIN connectors k ON k.id = t.connector_id
         JOIN connect_clusters w ON w.id = k.connect_id
         WHERE k.gone_at IS NULL
         ORDER BY 1, 2, 3 NULLS FIRST",
    )
    .fetch_all(pool)
    .await?)
}

/// Each Connect cluster and whether its latest pass read the worker.
#[derive(Debug, Clone, FromRow)]
pub struct WorkerMetricRow {
    pub name: String,
    pub up: Option<bool>,
}

pub async fn worker_metrics(pool: &PgPool) -> Result<Vec<WorkerMetricRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT name,
                CASE WHEN read_at IS NULL AND last_error_at IS NULL THEN NULL
                     ELSE last_error_at IS NULL OR read_at > last_error_at END AS up
         FROM connect_clusters cc
         WHERE cc.cluster_id IN (SELECT id FROM clusters WHERE removed_at IS NULL)
         ORDER BY name",
    )
    .fetch_all(pool)
    .await?)
}

/// The PASSWORD-typed keys learned from a Connect cluster's validate
/// answers, by class, with when each was learned.
pub async fn password_keys(
    pool: &PgPool,
    connect_id: i64,
) -> Result<Vec<(String, Vec<String>, DateTime<Utc>)>, Db> {
    Ok(sqlx::query_as(
        "SELECT class, keys, learned_at FROM connect_password_keys WHERE connect_id = $1",
    )
    .bind(connect_id)
    .fetch_all(pool)
    .await?)
}

/// Records what the worker's validate answer typed PASSWORD for `class`.
pub async fn learn_password_keys(
    conn: &mut PgConnection,
    connect_id: i64,
    class: &str,
    keys: &[String],
) -> Result<(), Db> {
    sqlx::query(
        "INSERT INTO connect_password_keys (connect_id, class, keys) VALUES ($1, $2, $3)
         ON CONFLICT (connect_id, class) DO UPDATE SET keys = EXCLUDED.keys, learned_at = now()",
    )
    .bind(connect_id)
    .bind(class)
    .bind(keys)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Every stored config of a class on a Connect cluster, gone connectors'
/// too: what is masked again once the class's PASSWORD keys are learned.
pub async fn configs_of_class(
    conn: &mut PgConnection,
    connect_id: i64,
    class: &str,
) -> Result<Vec<(i64, Value)>, Db> {
    Ok(sqlx::query_as(
        "SELECT id, config FROM connectors WHERE connect_id = $1 AND class = $2 FOR UPDATE",
    )
    .bind(connect_id)
    .bind(class)
    .fetch_all(&mut *conn)
    .await?)
}

/// Replaces a stored config (masked again) and its hash.
pub async fn set_config(
    conn: &mut PgConnection,
    id: i64,
    config: &Value,
    hash: &str,
) -> Result<(), Db> {
    sqlx::query("UPDATE connectors SET config = $2, config_hash = $3 WHERE id = $1")
        .bind(id)
        .bind(config)
        .bind(hash)
        .execute(&mut *conn)
        .await?;
    Ok(())
}
