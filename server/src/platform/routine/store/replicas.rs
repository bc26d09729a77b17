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

/// Gives up one lease of `holder`, after its run, so a replica with less
/// work takes the cluster at its next look.
pub async fn release_one(
    pool: &PgPool,
    routine: &str,
    cluster_id: i64,
    holder: &str,
) -> Result<bool, sqlx::Error> {
    sqlx::query("DELETE FROM routine_leases WHERE routine = $1 AND cluster_id = $2 AND holder = $3")
        .bind(routine)
        .bind(cluster_id)
        .bind(holder)
        .execute(pool)
        .await
        .map(|r| r.rows_affected() == 1)
}
