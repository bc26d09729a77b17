//! The runner's SQL: routines as registered, leases, runs and the listing.

use chrono::{DateTime, Utc};
use sqlx::{FromRow, PgPool};
use std::time::Duration;
use streamkeeper::platform::page::{Page, PageRequest};

pub mod replicas;

use super::RoutineStatus;
use std::collections::{HashMap, HashSet};
use streamkeeper::platform::schedule::Schedule;

/// A stored schedule as its row holds it.
fn schedule_of(kind: Option<&str>, every_ms: Option<i64>, cron: Option<String>) -> Schedule {
    match (kind, every_ms, cron) {
        (Some("paused"), _, _) => Schedule::Paused,
        (Some("every"), Some(ms), _) => Schedule::Every {
            every_ms: ms.unsigned_abs(),
        },
        (Some("cron"), _, Some(expression)) => Schedule::Cron { expression },
        _ => Schedule::Default,
    }
}

/// The schedules admins set, by routine, and the (routine, cluster)
/// targets with a run-now request nobody has claimed yet.
pub type Stored = (HashMap<String, Schedule>, HashSet<(String, Option<i64>)>);

/// What every runner polls: [`Stored`].
pub async fn stored(pool: &PgPool) -> Result<Stored, sqlx::Error> {
    let schedules: Vec<(String, String, Option<i64>, Option<String>)> =
        sqlx::query_as("SELECT routine, kind, every_ms, cron FROM routine_schedules")
            .fetch_all(pool)
            .await?;
    let requests: Vec<(String, Option<i64>)> = sqlx::query_as(
        "SELECT DISTINCT routine, cluster_id FROM routine_run_requests WHERE claimed_at IS NULL",
    )
    .fetch_all(pool)
    .await?;
    Ok((
        schedules
            .into_iter()
            .map(|(r, kind, ms, cron)| (r, schedule_of(Some(&kind), ms, cron)))
            .collect(),
        requests.into_iter().collect(),
    ))
}

/// Claims the oldest unclaimed run-now request of a routine and target for
/// `holder`, in one statement: of two replicas that try at once, one gets
/// it. Requests made meanwhile for the same target are answered by the
/// same run.
pub async fn claim_request(
    pool: &PgPool,
    routine: &str,
    cluster_id: Option<i64>,
    holder: &str,
) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar(
        "WITH mine AS (
            SELECT id FROM routine_run_requests
             WHERE routine = $1 AND COALESCE(cluster_id, 0) = COALESCE($2, 0) AND claimed_at IS NULL
             ORDER BY id FOR UPDATE SKIP LOCKED)
         UPDATE routine_run_requests r SET claimed_by = $3, claimed_at = now()
           FROM mine WHERE r.id = mine.id
         RETURNING r.id",
    )
    .bind(routine)
    .bind(cluster_id)
    .bind(holder)
    .fetch_all(pool)
    .await
    .map(|ids: Vec<i64>| ids.into_iter().min())
}

/// A registered routine's scope (`global` or `cluster`), if it exists.
pub async fn scope_of(pool: &PgPool, routine: &str) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar("SELECT scope FROM routines WHERE name = $1")
        .bind(routine)
        .fetch_optional(pool)
        .await
}

/// A watched cluster's id by its name (a removed one is gone).
pub async fn cluster_id(pool: &PgPool, name: &str) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar("SELECT id FROM clusters WHERE name = $1 AND removed_at IS NULL")
        .bind(name)
        .fetch_optional(pool)
        .await
}

/// Stores a routine's schedule (the default removes the row).
pub async fn set_schedule(
    conn: &mut sqlx::PgConnection,
    routine: &str,
    schedule: &Schedule,
    by: &str,
) -> Result<(), sqlx::Error> {
    let (every_ms, cron) = match schedule {
        Schedule::Every { every_ms } => (Some(i64::try_from(*every_ms).unwrap_or(i64::MAX)), None),
        Schedule::Cron { expression } => (None, Some(expression.as_str())),
        Schedule::Default | Schedule::Paused => (None, None),
    };
    if *schedule == Schedule::Default {
        sqlx::query("DELETE FROM routine_schedules WHERE routine = $1")
            .bind(routine)
            .execute(conn)
            .await?;
        return Ok(());
    }
    sqlx::query(
        "INSERT INTO routine_schedules (routine, kind, every_ms, cron, updated_by) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (routine) DO UPDATE SET kind = EXCLUDED.kind, every_ms = EXCLUDED.every_ms,
             cron = EXCLUDED.cron, updated_by = EXCLUDED.updated_by, updated_at = now()",
    )
    .bind(routine)
    .bind(schedule.kind())
    .bind(every_ms)
    .bind(cron)
    .bind(by)
    .execute(conn)
    .await
    .map(drop)
}

/// A routine's stored schedule.
pub async fn schedule(pool: &PgPool, routine: &str) -> Result<Schedule, sqlx::Error> {
    let row: Option<(String, Option<i64>, Option<String>)> =
        sqlx::query_as("SELECT kind, every_ms, cron FROM routine_schedules WHERE routine = $1")
            .bind(routine)
            .fetch_optional(pool)
            .await?;
    Ok(row.map_or(Schedule::Default, |(k, ms, cron)| {
        schedule_of(Some(&k), ms, cron)
    }))
}

/// Asks for a run now of a routine on one cluster, or on none (global),
/// or on every cluster (`all_clusters`); returns how many targets.
pub async fn request_run(
    conn: &mut sqlx::PgConnection,
    routine: &str,
    cluster_id: Option<i64>,
    all_clusters: bool,
    by: &str,
) -> Result<u64, sqlx::Error> {
    let r = if all_clusters {
        sqlx::query(
            "INSERT INTO routine_run_requests (routine, cluster_id, requested_by)
             SELECT $1, id, $2 FROM clusters WHERE removed_at IS NULL",
        )
        .bind(routine)
        .bind(by)
        .execute(conn)
        .await?
    } else {
        sqlx::query(
            "INSERT INTO routine_run_requests (routine, cluster_id, requested_by) VALUES ($1, $2, $3)",
        )
        .bind(routine)
        .bind(cluster_id)
        .bind(by)
        .execute(conn)
        .await?
    };
    Ok(r.rows_affected())
}

/// Records what a routine is, so the listing shows it before its first run.
pub async fn register(
    pool: &PgPool,
    name: &str,
    scope: &str,
    lease: &str,
    record: &str,
    every: Duration,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO routines (name, scope, lease, record, every_ms) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (name) DO UPDATE
            SET scope = EXCLUDED.scope, lease = EXCLUDED.lease, record = EXCLUDED.record,
                every_ms = EXCLUDED.every_ms, registered_at = now()",
    )
    .bind(name)
    .bind(scope)
    .bind(lease)
    .bind(record)
    .bind(millis(every))
    .execute(pool)
    .await
    .map(drop)
}

/// The outcome of trying to take or renew a lease.
#[derive(Debug, Clone, PartialEq)]
pub enum Claim {
    /// This holder has it now, until the TTL passes.
    Ours,
    /// Another holder has it, for this much longer (unknown when two
    /// replicas raced for a new lease).
    Theirs { left: Option<Duration> },
}

/// Takes or renews the lease of `routine` (on a cluster, or global) for
/// `holder`: it succeeds when this holder has it already, nobody has, or
/// the other holder's has lapsed.
pub async fn claim(
    pool: &PgPool,
    routine: &str,
    cluster_id: Option<i64>,
    holder: &str,
    ttl: Duration,
) -> Result<Claim, sqlx::Error> {
    // The SELECT sees the table as it was before the upsert, so when the
    // upsert changed nothing it reads the other holder's lease.
    let row: Option<(String, f64)> = sqlx::query_as(
        "WITH taken AS (
            INSERT INTO routine_leases (routine, cluster_id, holder, expires_at)
            VALUES ($1, $2, $3, now() + make_interval(secs => $4))
            ON CONFLICT (routine, (COALESCE(cluster_id, 0))) DO UPDATE
               SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
               WHERE routine_leases.holder = EXCLUDED.holder OR routine_leases.expires_at < now()
            RETURNING holder, expires_at)
         SELECT holder, EXTRACT(EPOCH FROM expires_at - now())::float8 FROM taken
         UNION ALL
         SELECT holder, EXTRACT(EPOCH FROM expires_at - now())::float8 FROM routine_leases
          WHERE routine = $1 AND COALESCE(cluster_id, 0) = COALESCE($2, 0)
            AND NOT EXISTS (SELECT 1 FROM taken)",
    )
    .bind(routine)
    .bind(cluster_id)
    .bind(holder)
    .bind(ttl.as_secs_f64())
    .fetch_optional(pool)
    .await?;
    Ok(match row {
        Some((h, _)) if h == holder => Claim::Ours,
        Some((_, left)) => Claim::Theirs {
            left: Some(Duration::from_secs_f64(left.max(0.0))),
        },
        None => Claim::Theirs { left: None },
    })
}

/// Gives up every lease of `holder`, so another replica (or the next start)
/// takes them at once instead of after their TTL.
pub async fn release(pool: &PgPool, holder: &str) -> Result<u64, sqlx::Error> {
    sqlx::query("DELETE FROM routine_leases WHERE holder = $1")
        .bind(holder)
        .execute(pool)
        .await
        .map(|r| r.rows_affected())
}

/// Opens a run's row. Under an exclusive lease no other run of this routine
/// and cluster can be going on, so a row another holder left open (it died
/// mid-run) is closed as abandoned first.
pub async fn start_run(
    pool: &PgPool,
    routine: &str,
    cluster_id: Option<i64>,
    holder: &str,
    exclusive: bool,
) -> Result<i64, sqlx::Error> {
    let mut tx = pool.begin().await?;
    if exclusive {
        sqlx::query(
            "UPDATE routine_runs
                SET finished_at = now(), outcome = 'abandoned',
                    error = 'the replica running it stopped before it finished'
              WHERE routine = $1 AND COALESCE(cluster_id, 0) = COALESCE($2, 0)
                AND finished_at IS NULL AND holder <> $3",
        )
        .bind(routine)
        .bind(cluster_id)
        .bind(holder)
        .execute(&mut *tx)
        .await?;
    }
    let id = sqlx::query_scalar(
        "INSERT INTO routine_runs (routine, cluster_id, holder) VALUES ($1, $2, $3) RETURNING id",
    )
    .bind(routine)
    .bind(cluster_id)
    .bind(holder)
    .fetch_one(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(id)
}

/// How a run ended, as stored.
pub struct Finished<'a> {
    pub outcome: &'a str,
    pub error: Option<&'a str>,
    pub detail: &'a serde_json::Value,
    /// The next run is due that long after its start (none: paused).
    pub next_in: Option<Duration>,
}

/// Closes an open run.
pub async fn finish_run(pool: &PgPool, id: i64, f: &Finished<'_>) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE routine_runs SET finished_at = now(), outcome = $2, error = $3, detail = $4,
                next_at = started_at + make_interval(secs => $5)
          WHERE id = $1",
    )
    .bind(id)
    .bind(f.outcome)
    .bind(f.error)
    .bind(f.detail)
    .bind(f.next_in.map(|d| d.as_secs_f64()))
    .execute(pool)
    .await
    .map(drop)
}

/// Stores a finished run in one go (routines that record only the runs
/// that did something).
pub async fn record_run(
    pool: &PgPool,
    routine: &str,
    cluster_id: Option<i64>,
    holder: &str,
    started: DateTime<Utc>,
    f: &Finished<'_>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO routine_runs (routine, cluster_id, holder, started_at, finished_at, outcome, error, detail, next_at)
         VALUES ($1, $2, $3, $4, now(), $5, $6, $7, $4 + make_interval(secs => $8))",
    )
    .bind(routine)
    .bind(cluster_id)
    .bind(holder)
    .bind(started)
    .bind(f.outcome)
    .bind(f.error)
    .bind(f.detail)
    .bind(f.next_in.map(|d| d.as_secs_f64()))
    .execute(pool)
    .await
    .map(drop)
}

/// Drops the row of a run that found nothing to do.
pub async fn delete_run(pool: &PgPool, id: i64) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM routine_runs WHERE id = $1")
        .bind(id)
        .execute(pool)
        .await
        .map(drop)
}

/// Closes the runs `holder` leaves open when it stops.
pub async fn abandon_open(pool: &PgPool, holder: &str) -> Result<u64, sqlx::Error> {
    sqlx::query(
        "UPDATE routine_runs SET finished_at = now(), outcome = 'abandoned', error = 'the server stopped'
          WHERE holder = $1 AND finished_at IS NULL",
    )
    .bind(holder)
    .execute(pool)
    .await
    .map(|r| r.rows_affected())
}

/// Retention: deletes runs started before `before`.
pub async fn expire_runs(pool: &PgPool, before: DateTime<Utc>) -> Result<u64, sqlx::Error> {
    // Answered run-now requests go with the runs of their week.
    sqlx::query("DELETE FROM routine_run_requests WHERE claimed_at < $1")
        .bind(before)
        .execute(pool)
        .await?;
    sqlx::query("DELETE FROM routine_runs WHERE started_at < $1")
        .bind(before)
        .execute(pool)
        .await
        .map(|r| r.rows_affected())
}

/// The clusters a per-cluster routine runs for: every one neither paused
/// nor removed.
pub async fn cluster_ids(pool: &PgPool) -> Result<Vec<i64>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT id FROM clusters WHERE paused_at IS NULL AND removed_at IS NULL ORDER BY id",
    )
    .fetch_all(pool)
    .await
}

#[derive(FromRow)]
struct StatusRow {
    routine: String,
    cluster_id: Option<i64>,
    cluster: Option<String>,
    lease: String,
    record: String,
    every_ms: i64,
    started_at: Option<DateTime<Utc>>,
    finished_at: Option<DateTime<Utc>>,
    outcome: Option<String>,
    error: Option<String>,
    ran_by: Option<String>,
    next_at: Option<DateTime<Utc>>,
    holder: Option<String>,
    lease_expires_at: Option<DateTime<Utc>>,
    schedule_kind: Option<String>,
    schedule_every_ms: Option<i64>,
    schedule_cron: Option<String>,
    run_requested: bool,
    total: i64,
}

/// Every routine for every target it runs for (each cluster for a
/// per-cluster routine), with its last run and its live lease; by routine,
/// then cluster. `routine` filters by exact name.
pub async fn list(
    pool: &PgPool,
    routine: Option<&str>,
    page: PageRequest,
) -> Result<Page<RoutineStatus>, sqlx::Error> {
    let rows: Vec<StatusRow> = sqlx::query_as(
        "WITH targets AS (
            SELECT r.name, NULL::bigint AS cluster_id, r.lease, r.record, r.every_ms FROM routines r
             WHERE r.scope = 'global'
            UNION ALL
            SELECT r.name, c.id, r.lease, r.record, r.every_ms FROM routines r CROSS JOIN clusters c
             WHERE r.scope = 'cluster' AND c.removed_at IS NULL)
         SELECT t.name AS routine, t.cluster_id, c.name AS cluster, t.lease, t.record,
                COALESCE((EXTRACT(EPOCH FROM last.next_at - last.started_at) * 1000)::bigint, t.every_ms) AS every_ms,
                last.started_at, last.finished_at, last.outcome, last.error, last.holder AS ran_by,
                last.next_at, l.holder, l.expires_at AS lease_expires_at,
                s.kind AS schedule_kind, s.every_ms AS schedule_every_ms, s.cron AS schedule_cron,
                EXISTS (SELECT 1 FROM routine_run_requests q
                         WHERE q.routine = t.name AND COALESCE(q.cluster_id, 0) = COALESCE(t.cluster_id, 0)
                           AND q.claimed_at IS NULL) AS run_requested,
                count(*) OVER () AS total
           FROM targets t
           LEFT JOIN clusters c ON c.id = t.cluster_id
           LEFT JOIN routine_schedules s ON s.routine = t.name
           LEFT JOIN LATERAL (
                SELECT started_at, finished_at, outcome, error, holder, next_at FROM routine_runs r
                 WHERE r.routine = t.name AND COALESCE(r.cluster_id, 0) = COALESCE(t.cluster_id, 0)
                 ORDER BY r.started_at DESC LIMIT 1) last ON true
           LEFT JOIN routine_leases l ON l.routine = t.name
                AND COALESCE(l.cluster_id, 0) = COALESCE(t.cluster_id, 0) AND l.expires_at > now()
          WHERE ($1::text IS NULL OR t.name = $1)
          ORDER BY t.name, c.name NULLS FIRST
          LIMIT $2 OFFSET $3",
    )
    .bind(routine)
    .bind(page.limit())
    .bind(page.offset())
    .fetch_all(pool)
    .await?;
    // Past the last page there is no row to carry the window count.
    let total = match rows.first() {
        Some(r) => r.total,
        None => {
            sqlx::query_scalar(
                "SELECT (SELECT count(*) FROM routines WHERE scope = 'global' AND ($1::text IS NULL OR name = $1))
                      + (SELECT count(*) FROM routines r CROSS JOIN clusters c
                          WHERE r.scope = 'cluster' AND c.removed_at IS NULL
                            AND ($1::text IS NULL OR r.name = $1))",
            )
            .bind(routine)
            .fetch_one(pool)
            .await?
        }
    };
    let items = rows
        .into_iter()
        .map(|r| RoutineStatus {
            running: r.started_at.is_some() && r.finished_at.is_none(),
            routine: r.routine,
            cluster_id: r.cluster_id,
            cluster: r.cluster,
            exclusive: r.lease == "exclusive",
            records_idle_runs: r.record == "every_run",
            every_ms: r.every_ms,
            last_started_at: r.started_at,
            last_finished_at: r.finished_at,
            last_outcome: r.outcome,
            last_error: r.error,
            last_ran_by: r.ran_by,
            next_due_at: r.next_at,
            holder: r.holder,
            lease_expires_at: r.lease_expires_at,
            schedule: schedule_of(
                r.schedule_kind.as_deref(),
                r.schedule_every_ms,
                r.schedule_cron,
            ),
            run_requested: r.run_requested,
        })
        .collect();
    Ok(Page::new(
        items,
        page,
        u64::try_from(total).unwrap_or_default(),
    ))
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Runs of the last hour by routine, cluster and outcome, for `/metrics`.
#[derive(Debug, Clone, FromRow)]
pub struct RunCountRow {
    pub routine: String,
    pub cluster: Option<String>,
    pub outcome: String,
    pub n: i64,
}

pub async fn runs_last_hour(pool: &PgPool) -> Result<Vec<RunCountRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT r.routine, c.name AS cluster, COALESCE(r.outcome, 'running') AS outcome, count(*) AS n
           FROM routine_runs r LEFT JOIN clusters c ON c.id = r.cluster_id
          WHERE r.started_at > now() - interval '1 hour'
          GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
    )
    .fetch_all(pool)
    .await
}

/// The latest finished run of each routine and cluster, for `/metrics`.
#[derive(Debug, Clone, FromRow)]
pub struct LastRunRow {
    pub routine: String,
    pub cluster: Option<String>,
    pub outcome: String,
    pub seconds: f64,
    pub finished_at: DateTime<Utc>,
}

pub async fn last_runs(pool: &PgPool) -> Result<Vec<LastRunRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT DISTINCT ON (r.routine, COALESCE(r.cluster_id, 0))
                r.routine, c.name AS cluster, r.outcome,
                EXTRACT(EPOCH FROM r.finished_at - r.started_at)::float8 AS seconds, r.finished_at
           FROM routine_runs r LEFT JOIN clusters c ON c.id = r.cluster_id
          WHERE r.finished_at IS NOT NULL AND r.outcome IS NOT NULL
          ORDER BY r.routine, COALESCE(r.cluster_id, 0), r.started_at DESC",
    )
    .fetch_all(pool)
    .await
}
