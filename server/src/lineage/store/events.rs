//! Raw events and the fold's queue: appending a batch (deduplicated by hash),
//! replaying what is stored, the fold's turn, what still waits for it and
//! what it could not write.

use crate::platform::errors::Db;
use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::{FromRow, PgConnection, PgPool};
use std::ops::RangeInclusive;
use streamkeeper::lineage::graph::Provenance;

/// One event as it is appended.
pub struct NewEvent<'a> {
    pub hash: &'a [u8; 32],
    pub body: &'a str,
    pub provenance: Provenance,
    pub kind: &'static str,
    pub event_time: DateTime<Utc>,
    pub sender: &'a str,
    pub source: &'a str,
}

pub fn provenance_str(p: Provenance) -> &'static str {
    match p {
        Provenance::Observed => "observed",
        Provenance::Derived => "derived",
    }
}

fn provenance_of(s: &str) -> Provenance {
    if s == "derived" {
        Provenance::Derived
    } else {
        Provenance::Observed
    }
}

/// A stored event for a replay.
#[derive(FromRow)]
pub struct StoredEvent {
    pub id: i64,
    pub body: String,
    pub provenance: String,
    /// Who sent it (a username, or the routine that read it): what an
    /// `ownership` facet it sets may speak for.
    pub sender: String,
}

impl StoredEvent {
    pub fn provenance(&self) -> Provenance {
        provenance_of(&self.provenance)
    }
}

/// Stored events after `after` (an id), oldest first.
pub async fn events_after(
    conn: &mut PgConnection,
    after: i64,
    limit: i64,
) -> Result<Vec<StoredEvent>, Db> {
    Ok(sqlx::query_as(
        "SELECT id, body, provenance, sender FROM lineage_events WHERE id > $1 ORDER BY id LIMIT $2",
    )
    .bind(after)
    .bind(limit)
    .fetch_all(conn)
    .await?)
}

pub async fn event_count(pool: &PgPool) -> Result<i64, Db> {
    Ok(sqlx::query_scalar("SELECT count(*) FROM lineage_events")
        .fetch_one(pool)
        .await?)
}

/// Empties the graph (not the events) for a rebuild, in the caller's
/// transaction: folds wait on the lock until it commits. The fold's
/// failures go too: the rebuild tries every event again. Events still
/// waiting for the fold stay queued (folding one twice changes nothing).
pub async fn clear_graph(conn: &mut PgConnection) -> Result<(), Db> {
    sqlx::query("TRUNCATE lineage_aliases, lineage_run_facets, lineage_runs, lineage_edges, lineage_facets, lineage_nodes, lineage_fold_failures, lineage_column_versions, lineage_column_edges")
        .execute(&mut *conn)
        .await?;
    // Node ids change: every in-memory adjacency must read the edges again.
    sqlx::query("UPDATE lineage_state SET generation = generation + 1")
        .execute(conn)
        .await?;
    Ok(())
}

/// Appends `events` (those not stored yet) and queues the new ones for
/// the fold, and the new derived ones for forwarding, in one statement:
/// what a 201 means. Rows go in hash order, so two writers lock in one
/// order. Returns the hashes appended (an event already stored is not).
pub async fn append(conn: &mut PgConnection, events: &[NewEvent<'_>]) -> Result<Vec<Vec<u8>>, Db> {
    let mut events: Vec<&NewEvent> = events.iter().collect();
    events.sort_by_key(|e| e.hash);
    let hashes: Vec<Vec<u8>> = events.iter().map(|e| e.hash.to_vec()).collect();
    let bodies: Vec<&str> = events.iter().map(|e| e.body).collect();
    let provenance: Vec<&str> = events
        .iter()
        .map(|e| provenance_str(e.provenance))
        .collect();
    let kinds: Vec<&str> = events.iter().map(|e| e.kind).collect();
    let times: Vec<DateTime<Utc>> = events.iter().map(|e| e.event_time).collect();
    let senders: Vec<&str> = events.iter().map(|e| e.sender).collect();
    let sources: Vec<&str> = events.iter().map(|e| e.source).collect();
    Ok(sqlx::query_scalar(
        "WITH appended AS (
             INSERT INTO lineage_events (hash, body, provenance, kind, event_time, sender, source)
             SELECT * FROM UNNEST($1::bytea[], $2::text[], $3::text[], $4::text[],
                                  $5::timestamptz[], $6::text[], $7::text[])
             ORDER BY 1
             ON CONFLICT (hash) DO NOTHING
             RETURNING id, hash, provenance
         ), unfolded AS (
             INSERT INTO lineage_unfolded (event_id) SELECT id FROM appended ORDER BY id
         ), queued AS (
             -- A new derived event also waits to be forwarded: stored and
             -- queued together or not at all.
             INSERT INTO lineage_forward (event_id)
             SELECT id FROM appended WHERE provenance = 'derived' ORDER BY id
         )
         SELECT hash FROM appended",
    )
    .bind(hashes)
    .bind(bodies)
    .bind(provenance)
    .bind(kinds)
    .bind(times)
    .bind(senders)
    .bind(sources)
    .fetch_all(conn)
    .await?)
}

/// Takes the fold's turn for the caller's transaction: one fold at a time
/// on every replica (a rebuild takes it too). `wait`: until the fold
/// holding it commits (a read, which must see what that fold writes);
/// else `false` at once when another holds it (the routine, which looks
/// again later). A lock for the batch, not a row lock for each event:
/// locking a thousand rows writes each of them.
///
/// The transaction commits without waiting for its WAL to reach the disk:
/// a fold lost in a crash loses its deletions from `lineage_unfolded`
/// with it, so its events are folded again (the events themselves were
/// committed durably when they were appended).
pub async fn fold_turn(conn: &mut PgConnection, wait: bool) -> Result<bool, Db> {
    let sql = if wait {
        // The waiting lock returns void: its column says nothing.
        "SELECT set_config('synchronous_commit', 'off', true) IS NOT NULL,
                pg_advisory_xact_lock(hashtext('streamkeeper.lineage.fold')) IS NULL"
    } else {
        "SELECT set_config('synchronous_commit', 'off', true) IS NOT NULL,
                pg_try_advisory_xact_lock(hashtext('streamkeeper.lineage.fold'))"
    };
    let (_, taken): (bool, bool) = sqlx::query_as(sql).fetch_one(conn).await?;
    Ok(wait || taken)
}

/// Stored events waiting for the fold whose ids are in `ids`, oldest
/// first, at most `limit`; the caller holds the fold's turn
/// ([`fold_turn`]).
pub async fn unfolded(
    conn: &mut PgConnection,
    ids: RangeInclusive<i64>,
    limit: i64,
) -> Result<Vec<StoredEvent>, Db> {
    Ok(sqlx::query_as(
        "SELECT e.id, e.body, e.provenance, e.sender
         FROM lineage_unfolded u JOIN lineage_events e ON e.id = u.event_id
         WHERE u.event_id BETWEEN $1 AND $2
         ORDER BY u.event_id LIMIT $3",
    )
    .bind(ids.start())
    .bind(ids.end())
    .bind(limit)
    .fetch_all(conn)
    .await?)
}

/// The newest event waiting for the fold, if any.
pub async fn last_unfolded(pool: &PgPool) -> Result<Option<i64>, Db> {
    Ok(
        sqlx::query_scalar("SELECT max(event_id) FROM lineage_unfolded")
            .fetch_one(pool)
            .await?,
    )
}

/// About how many events wait for the fold: the span of their ids (two
/// index look-ups, where a count would read them all; gaps left by
/// duplicates only make it larger).
pub async fn unfolded_span(pool: &PgPool) -> Result<i64, Db> {
    Ok(sqlx::query_scalar(
        "SELECT COALESCE(max(event_id) - min(event_id) + 1, 0) FROM lineage_unfolded",
    )
    .fetch_one(pool)
    .await?)
}

/// `events` are in the graph, or recorded as failed: no longer waiting.
pub async fn folded(conn: &mut PgConnection, events: &[i64]) -> Result<(), Db> {
    sqlx::query("DELETE FROM lineage_unfolded WHERE event_id = ANY($1)")
        .bind(events)
        .execute(conn)
        .await?;
    Ok(())
}

/// Records that the fold could not write `event` (why, in words that hold
/// no event content) and stops it waiting.
pub async fn fold_failed(conn: &mut PgConnection, event: i64, error: &str) -> Result<(), Db> {
    sqlx::query(
        "INSERT INTO lineage_fold_failures (event_id, error) VALUES ($1, $2)
         ON CONFLICT (event_id) DO UPDATE SET error = EXCLUDED.error, failed_at = now()",
    )
    .bind(event)
    .bind(error)
    .execute(&mut *conn)
    .await?;
    folded(conn, &[event]).await
}

/// A stored event the fold could not write.
#[derive(Clone, Debug, FromRow, Serialize)]
pub struct FoldFailure {
    pub event_id: i64,
    pub error: String,
    pub failed_at: DateTime<Utc>,
}

/// Events waiting for the fold (a queue kept short by the 429 beyond
/// `IngestLimits::max_unfolded`, so counting it is cheap).
pub async fn waiting(pool: &PgPool) -> Result<i64, Db> {
    Ok(sqlx::query_scalar("SELECT count(*) FROM lineage_unfolded")
        .fetch_one(pool)
        .await?)
}

/// The fold's failures, newest first, and how many there are.
pub async fn fold_failures_counted(
    pool: &PgPool,
    limit: i64,
) -> Result<(i64, Vec<FoldFailure>), Db> {
    let total = sqlx::query_scalar("SELECT count(*) FROM lineage_fold_failures")
        .fetch_one(pool)
        .await?;
    Ok((total, fold_failures(pool, limit).await?))
}

/// The fold's failures, newest first.
pub async fn fold_failures(pool: &PgPool, limit: i64) -> Result<Vec<FoldFailure>, Db> {
    Ok(sqlx::query_as(
        "SELECT event_id, error, failed_at FROM lineage_fold_failures
         ORDER BY failed_at DESC, event_id DESC LIMIT $1",
    )
    .bind(limit)
    .fetch_all(pool)
    .await?)
}
