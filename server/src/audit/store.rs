//! Appending to and reading the hash-chained audit log.

use crate::platform::errors::Db;
use chrono::Utc;
use sqlx::postgres::PgRow;
use sqlx::{PgConnection, PgPool, Row};
use std::sync::OnceLock;
use streamkeeper::audit::list::AuditColumn;
use streamkeeper::audit::{
    self, AuditKey, ChainBreak, ChainVerifier, EntryContent, GENESIS, Head, StoredEntry,
    clip_target,
};
use streamkeeper::platform::page::{Page, PageRequest};
use streamkeeper::platform::sort::Sorted;
use streamkeeper_app::audit::model::{AuditFilter, AuditRow, RefusalTally};

/// Fixed key of the advisory lock that serialises appends, so each entry
/// chains to the one before it.
const APPEND_LOCK: i64 = 0x5354_524d_4155_4454; // "STRMAUDT"

/// The process's audit key, set once at start ([`use_key`]). A process
/// holds one key for its whole life, and every write path of every feature
/// appends, so the key is kept here rather than threaded through each.
static KEY: OnceLock<Option<AuditKey>> = OnceLock::new();

/// Sets the key new entries are sealed with, once, before anything is
/// appended; later calls change nothing.
pub fn use_key(key: Option<AuditKey>) {
    let _ = KEY.set(key);
}

fn key() -> Option<&'static AuditKey> {
    KEY.get().and_then(Option::as_ref)
}

/// Whether new entries are sealed with a key.
pub fn keyed() -> bool {
    key().is_some()
}

/// Why a process may not write to this log with the key it has.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error(
        "the audit log is keyed from entry {keyed_from} on: set STREAMKEEPER_AUDIT_KEY to the key it was written with"
    )]
    Missing { keyed_from: i64 },
    #[error(
        "STREAMKEEPER_AUDIT_KEY does not match the audit log's newest keyed entry ({id}): it is another key, or the entry was altered (run `streamkeeper audit verify`)"
    )]
    Mismatch { id: i64 },
    #[error("reading the audit log failed: {0}")]
    Db(#[from] Db),
}

/// Checked at start by every command that may append: a keyed log needs
/// the key it was written with, or its next entry would break the chain.
pub async fn check_key(pool: &PgPool) -> Result<(), KeyError> {
    let newest = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM audit_log WHERE keyed ORDER BY id DESC LIMIT 1"
    ))
    .fetch_optional(pool)
    .await
    .map_err(Db)?;
    let Some(row) = newest else {
        return Ok(());
    };
    let entry = stored(&row)?;
    let Some(key) = key() else {
        let keyed_from: i64 = sqlx::query_scalar("SELECT min(id) FROM audit_log WHERE keyed")
            .fetch_one(pool)
            .await
            .map_err(Db)?;
        return Err(KeyError::Missing { keyed_from });
    };
    let prev: audit::Hash = entry.prev_hash.as_slice().try_into().unwrap_or(GENESIS);
    if audit::entry_mac(key, &prev, entry.id, &entry.content).as_slice() != entry.hash.as_slice() {
        return Err(KeyError::Mismatch { id: entry.id });
    }
    Ok(())
}

/// What happened, before it gets its time and chain position.
#[derive(Debug, Clone)]
pub struct Event<'a> {
    pub actor: &'a str,
    pub action: &'a str,
    pub target: String,
    pub detail: serde_json::Value,
    pub source: &'a str,
}

/// Appends an entry inside the caller's transaction, so the change and its
/// record commit or roll back together.
pub async fn append(conn: &mut PgConnection, ev: Event<'_>) -> Result<i64, Db> {
    sqlx::query("SELECT pg_advisory_xact_lock($1)")
        .bind(APPEND_LOCK)
        .execute(&mut *conn)
        .await?;
    let last: Option<(i64, Vec<u8>, bool)> =
        sqlx::query_as("SELECT id, hash, keyed FROM audit_log ORDER BY id DESC LIMIT 1")
            .fetch_optional(&mut *conn)
            .await?;
    let (id, prev) = match last {
        // A plain entry after a keyed one would read as a rewrite; another
        // process keyed the log after this one started without a key.
        Some((last, _, true)) if key().is_none() => {
            return Err(Db(sqlx::Error::Configuration(Box::new(
                KeyError::Missing { keyed_from: last },
            ))));
        }
        Some((id, hash, _)) => (id + 1, hash),
        None => (1, GENESIS.to_vec()),
    };
    let prev_arr: audit::Hash = prev.as_slice().try_into().unwrap_or(GENESIS);
    let content = EntryContent {
        at: audit::to_micros(Utc::now()),
        actor: ev.actor.to_string(),
        action: ev.action.to_string(),
        target: clip_target(&ev.target).to_string(),
        detail: ev.detail.to_string(),
        source: ev.source.to_string(),
    };
    let (hash, keyed) = audit::seal(key(), &prev_arr, id, &content);
    sqlx::query(
        "INSERT INTO audit_log (id, at, actor, action, target, detail, source, prev_hash, hash, keyed)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(id)
    .bind(content.at)
    .bind(&content.actor)
    .bind(&content.action)
    .bind(&content.target)
    .bind(&content.detail)
    .bind(&content.source)
    .bind(&prev)
    .bind(hash.as_slice())
    .bind(keyed)
    .execute(&mut *conn)
    .await?;
    Ok(id)
}

/// Appends an entry in its own transaction (for events that change nothing
/// else, such as a failed login).
pub async fn record(pool: &PgPool, ev: Event<'_>) -> Result<i64, Db> {
    let mut tx = pool.begin().await?;
    let id = append(&mut tx, ev).await?;
    tx.commit().await?;
    Ok(id)
}

/// Counts a refusal by an unauthenticated source in its (source, action,
/// minute) row: one upsert, outside the chain and its lock, so a flood of
/// refusals adds a row a minute per source rather than a chained entry
/// each. The row keeps the latest attempt's actor, target and detail.
pub async fn tally(pool: &PgPool, ev: Event<'_>) -> Result<(), Db> {
    Ok(sqlx::query(
        "INSERT INTO audit_refusals (source, action, minute, actor, target, detail, first_at, last_at)
         VALUES ($1, $2, date_trunc('minute', now()), $3, $4, $5, now(), now())
         ON CONFLICT (source, action, minute) DO UPDATE
         SET count = audit_refusals.count + 1, last_at = now(),
             actor = EXCLUDED.actor, target = EXCLUDED.target, detail = EXCLUDED.detail",
    )
    .bind(ev.source)
    .bind(ev.action)
    .bind(ev.actor)
    .bind(clip_target(&ev.target))
    .bind(ev.detail.to_string())
    .execute(pool)
    .await
    .map(drop)?)
}

/// The filter both the chained entries and the counted refusals take:
/// substrings of actor, action and target, as `$1`, `$2` and `$3`.
const WHERE: &str = "($1::text IS NULL OR actor ILIKE $1)
    AND ($2::text IS NULL OR action ILIKE $2)
    AND ($3::text IS NULL OR target ILIKE $3)";

fn patterns(f: &AuditFilter) -> (Option<String>, Option<String>, Option<String>) {
    (
        crate::store::contains_pattern(f.actor.as_deref()),
        crate::store::contains_pattern(f.action.as_deref()),
        crate::store::contains_pattern(f.target.as_deref()),
    )
}

/// Counted refusals, latest first, filtered like the entries (by actor,
/// action and target substrings).
pub async fn refusals(
    pool: &PgPool,
    f: &AuditFilter,
    page: PageRequest,
) -> Result<Page<RefusalTally>, Db> {
    let (actor, action, target) = patterns(f);
    let total: i64 = sqlx::query_scalar(&format!(
        "SELECT count(*) FROM audit_refusals WHERE {WHERE}"
    ))
    .bind(&actor)
    .bind(&action)
    .bind(&target)
    .fetch_one(pool)
    .await?;
    let rows = sqlx::query(&format!(
        "SELECT source, action, minute, actor, target, detail, count, first_at, last_at
         FROM audit_refusals WHERE {WHERE}
         ORDER BY last_at DESC, source, action LIMIT $4 OFFSET $5"
    ))
    .bind(&actor)
    .bind(&action)
    .bind(&target)
    .bind(page.limit())
    .bind(page.offset())
    .fetch_all(pool)
    .await?;
    let items = rows
        .into_iter()
        .map(|r| {
            Ok(RefusalTally {
                source: r.try_get("source")?,
                action: r.try_get("action")?,
                minute: r.try_get("minute")?,
                actor: r.try_get("actor")?,
                target: r.try_get("target")?,
                detail: r.try_get("detail")?,
                count: r.try_get("count")?,
                first_at: r.try_get("first_at")?,
                last_at: r.try_get("last_at")?,
            })
        })
        .collect::<Result<Vec<_>, sqlx::Error>>()?;
    Ok(Page::new(items, page, total.unsigned_abs()))
}

/// `ORDER BY` of the entries: each column's keys, then the id (the
/// chain's order).
fn entry_order(order: Sorted<AuditColumn>) -> String {
    let keys: &[&'static str] = match order.column {
        AuditColumn::Id => &["id"],
        // Entries of the same moment keep the chain's order, either way.
        AuditColumn::At => &["at", "id"],
        AuditColumn::Actor => &["actor"],
        AuditColumn::Action => &["action"],
        AuditColumn::Target => &["target"],
        AuditColumn::Source => &["source"],
    };
    crate::store::order_by(keys, order.descending, "id")
}

/// Entries in `order` (newest first by default), filtered by substrings of
/// actor, action and target.
pub async fn list(
    pool: &PgPool,
    f: &AuditFilter,
    order: Sorted<AuditColumn>,
    page: PageRequest,
) -> Result<Page<AuditRow>, Db> {
    let (actor, action, target) = patterns(f);
    let total: i64 = sqlx::query_scalar(&format!("SELECT count(*) FROM audit_log WHERE {WHERE}"))
        .bind(&actor)
        .bind(&action)
        .bind(&target)
        .fetch_one(pool)
        .await?;
    let rows = sqlx::query(&format!(
        "SELECT id, at, actor, action, target, detail, source FROM audit_log
         WHERE {WHERE} ORDER BY {} LIMIT $4 OFFSET $5",
        entry_order(order)
    ))
    .bind(&actor)
    .bind(&action)
    .bind(&target)
    .bind(page.limit())
    .bind(page.offset())
    .fetch_all(pool)
    .await?;
    let items = rows
        .into_iter()
        .map(|r| {
            Ok(AuditRow {
                id: r.try_get("id")?,
                at: r.try_get("at")?,
                actor: r.try_get("actor")?,
                action: r.try_get("action")?,
                target: r.try_get("target")?,
                detail: r.try_get("detail")?,
                source: r.try_get("source")?,
            })
        })
        .collect::<Result<Vec<_>, sqlx::Error>>()?;
    Ok(Page::new(items, page, total.unsigned_abs()))
}

#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error(transparent)]
    Broken(#[from] ChainBreak),
    #[error("reading the audit log failed: {0}")]
    Db(#[from] Db),
}

/// The newest entry, to keep outside the database (`audit head`).
pub async fn head(pool: &PgPool) -> Result<Option<Head>, Db> {
    let last: Option<(i64, Vec<u8>)> =
        sqlx::query_as("SELECT id, hash FROM audit_log ORDER BY id DESC LIMIT 1")
            .fetch_optional(pool)
            .await?;
    Ok(last.and_then(|(id, hash)| {
        let hash = hash.as_slice().try_into().ok()?;
        Some(Head { id, hash })
    }))
}

/// What `verify` found: how many entries, and the first keyed one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verified {
    pub entries: u64,
    pub keyed_from: Option<i64>,
}

const COLUMNS: &str = "id, at, actor, action, target, detail, source, prev_hash, hash, keyed";

fn stored(r: &PgRow) -> Result<StoredEntry, Db> {
    Ok(StoredEntry {
        id: r.try_get("id")?,
        content: EntryContent {
            at: r.try_get("at")?,
            actor: r.try_get("actor")?,
            action: r.try_get("action")?,
            target: r.try_get("target")?,
            detail: r.try_get("detail")?,
            source: r.try_get("source")?,
        },
        prev_hash: r.try_get("prev_hash")?,
        hash: r.try_get("hash")?,
        keyed: r.try_get("keyed")?,
    })
}

/// Walks the whole chain in batches, keyed entries with the process's key,
/// and checks that it still holds the `expect`ed head.
pub async fn verify(pool: &PgPool, expect: Option<Head>) -> Result<Verified, VerifyError> {
    const BATCH: i64 = 5_000;
    let mut verifier = ChainVerifier::new(key().cloned());
    let mut after = 0_i64;
    loop {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM audit_log WHERE id > $1 ORDER BY id LIMIT $2"
        ))
        .bind(after)
        .bind(BATCH)
        .fetch_all(pool)
        .await
        .map_err(Db)?;
        if rows.is_empty() {
            let entries = verifier.finish(expect)?;
            return Ok(Verified {
                entries,
                keyed_from: verifier.keyed_from(),
            });
        }
        for r in rows {
            let entry = stored(&r)?;
            verifier.check_towards(&entry, expect)?;
            after = entry.id;
        }
    }
}
