//! The replicas' heartbeats and the leases each holds: what the runner
//! shares per-cluster routines out by, and what Settings → Routines and
//! `/metrics` show of each replica's share.

use chrono::{DateTime, Utc};
use sqlx::{FromRow, PgPool};
use std::time::Duration;

/// Says this replica is alive (and which version it runs) now.
pub async fn beat(pool: &PgPool, holder: &str, version: &str) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO routine_replicas (holder, version) VALUES ($1, $2)
         ON CONFLICT (holder) DO UPDATE SET seen_at = now(), version = EXCLUDED.version",
    )
    .bind(holder)
    .bind(version)
    .execute(pool)
    .await
    .map(drop)
}

/// Forgets this replica at shutdown, and replicas unseen for a day (a
/// `kill -9` leaves its row behind; the listing shows it stale till then).
pub async fn gone(pool: &PgPool, holder: &str) -> Result<u64, sqlx::Error> {
    sqlx::query(
        "DELETE FROM routine_replicas WHERE holder = $1 OR seen_at < now() - interval '1 day'",
    )
    .bind(holder)
    .execute(pool)
    .await
    .map(|r| r.rows_affected())
}

/// A replica as its heartbeat says it.
#[derive(Debug, Clone, FromRow)]
pub struct Replica {
    pub holder: String,
    pub version: String,
    pub started_at: DateTime<Utc>,
    pub seen_at: DateTime<Utc>,
    /// Seen within the liveness window asked for.
    pub alive: bool,
}

/// Every replica that wrote a heartbeat in the last day, the live ones
/// (seen within `alive`, by the database's clock: a replica's own clock
/// may be off) first.
pub async fn replicas(pool: &PgPool, alive: Duration) -> Result<Vec<Replica>, sqlx::Error> {
    sqlx::query_as(
        "SELECT holder, version, started_at, seen_at,
                seen_at > now() - make_interval(secs => $1) AS alive
           FROM routine_replicas ORDER BY alive DESC, holder",
    )
    .bind(alive.as_secs_f64())
    .fetch_all(pool)
    .await
}

/// How many live cluster leases each holder has of each routine.
#[derive(Debug, Clone, FromRow)]
pub struct Held {
    pub routine: String,
    pub holder: String,
    pub held: i64,
}

pub async fn held(pool: &PgPool) -> Result<Vec<Held>, sqlx::Error> {
    sqlx::query_as(
        "SELECT routine, holder, count(*) AS held FROM routine_leases
          WHERE cluster_id IS NOT NULL AND expires_at > now()
          GROUP BY routine, holder",
    )
    .fetch_all(pool)
    .await
}

/// How many clusters the per-cluster routines run for (neither paused nor
/// removed): the targets a share is a part of.
pub async fn targets(pool: &PgPool) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT count(*) FROM clusters WHERE paused_at IS NULL AND removed_at IS NULL",
    )
    .fetch_one(pool)
    .await
}

/// How long the live lease of `routine` on `cluster` has left, whoever
/// holds it; none when it has lapsed or was never taken.
pub async fn lease_left(
    pool: &PgPool,
    routine: &str,
    cluster_id: i64,
) -> Result<Option<Duration>, sqlx::Error> {
    let left: Option<f64> = sqlx::query_scalar(
        "SELECT EXTRACT(EPOCH FROM expires_at - now())::float8 FROM routine_leases
          WHERE routine = $1 AND cluster_id = $2 AND expires_at > now()",
    )
    .bind(routine)
    .bind(cluster_id)
    .fetch_optional(pool)
    .await?;
    Ok(left.map(|s| Duration::from_secs_f64(s.max(0.0))))
}

/// Hands one lease of `holder` over, after its run: it lapses `after` from
/// now (when the holder's next run would be due), so a replica with less
/// work takes the cluster then and runs it an interval after the last run,
/// not at once.
pub async fn hand_over(
    pool: &PgPool,
    routine: &str,
    cluster_id: i64,
    holder: &str,
    after: Duration,
) -> Result<bool, sqlx::Error> {
    sqlx::query(
        "UPDATE routine_leases SET expires_at = now() + make_interval(secs => $4)
          WHERE routine = $1 AND cluster_id = $2 AND holder = $3",
    )
    .bind(routine)
    .bind(cluster_id)
    .bind(holder)
    .bind(after.as_secs_f64())
    .execute(pool)
    .await
    .map(|r| r.rows_affected() == 1)
}
