//! Review items, their approvals, editors and comments, and in-app
//! notifications; the domains' settings and approvers are in `domains.rs`.

mod domains;

pub use domains::{
    DomainListRow, DomainRow, domain, domains, effective_approvers, set_domain, stream_domain,
    stream_domain_locked,
};

use crate::platform::errors::Db;
use chrono::{DateTime, Utc};
use sqlx::{FromRow, PgConnection, PgPool};
use streamkeeper::platform::page::{Page, PageRequest};
use streamkeeper_app::audit::model::AuditRow;
use streamkeeper_app::review::model::{InboxScope, ReviewFilter};

/// What changes with each revision.
#[derive(Debug, Clone)]
pub struct Revision {
    pub content: serde_json::Value,
    pub content_hash: String,
    pub base_version: Option<i32>,
    pub base_schema_id: Option<i32>,
    pub base_schema: Option<String>,
    pub check_id: Option<i64>,
    pub verdict: String,
    pub required_approvals: i16,
    pub approver_ids: Vec<i64>,
    /// A connector item's validation: the rules' findings beside the
    /// worker's answer (no values echoed).
    pub connector_check: Option<serde_json::Value>,
}

pub struct NewItem<'a> {
    pub kind: &'a str,
    pub cluster_id: i64,
    pub topic: &'a str,
    pub subject: &'a str,
    pub domain: &'a str,
    /// The stream's owner team when proposed: its members read the item.
    pub owner_team_id: Option<i64>,
    pub title: &'a str,
    pub author_id: i64,
    pub revision: &'a Revision,
}

pub async fn insert_item(conn: &mut PgConnection, n: &NewItem<'_>) -> Result<i64, Db> {
    let r = n.revision;
    Ok(sqlx::query_scalar(
        "INSERT INTO review_items (kind, cluster_id, topic, subject, domain, title, author_id,
             content, content_hash, base_version, base_schema_id, base_schema, check_id, verdict,
             required_approvals, approver_ids, owner_team_id, connector_check)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
         RETURNING id",
    )
    .bind(n.kind)
    .bind(n.cluster_id)
    .bind(n.topic)
    .bind(n.subject)
    .bind(n.domain)
    .bind(n.title)
    .bind(n.author_id)
    .bind(&r.content)
    .bind(&r.content_hash)
    .bind(r.base_version)
    .bind(r.base_schema_id)
    .bind(&r.base_schema)
    .bind(r.check_id)
    .bind(&r.verdict)
    .bind(r.required_approvals)
    .bind(&r.approver_ids)
    .bind(n.owner_team_id)
    .bind(&r.connector_check)
    .fetch_one(conn)
    .await?)
}

/// Replaces the content with a new revision, back in review: approvals of
/// earlier revisions no longer count.
pub async fn new_revision(
    conn: &mut PgConnection,
    id: i64,
    r: &Revision,
    reason: &str,
) -> Result<i32, Db> {
    Ok(sqlx::query_scalar(
        "UPDATE review_items SET revision = revision + 1, state = 'in_review', state_reason = $2,
             content = $3, content_hash = $4, base_version = $5, base_schema_id = $6,
             base_schema = $7, check_id = $8, verdict = $9, required_approvals = $10,
             approver_ids = $11, connector_check = $12, updated_at = now()
         WHERE id = $1 RETURNING revision",
    )
    .bind(id)
    .bind(reason)
    .bind(&r.content)
    .bind(&r.content_hash)
    .bind(r.base_version)
    .bind(r.base_schema_id)
    .bind(&r.base_schema)
    .bind(r.check_id)
    .bind(&r.verdict)
    .bind(r.required_approvals)
    .bind(&r.approver_ids)
    .bind(&r.connector_check)
    .fetch_one(conn)
    .await?)
}

#[derive(Debug, Clone, FromRow)]
pub struct ItemRow {
    pub id: i64,
    pub kind: String,
    pub cluster_id: i64,
    pub cluster: String,
    pub topic: String,
    pub subject: String,
    pub domain: String,
    pub title: String,
    pub author_id: i64,
    pub author: String,
    pub state: String,
    pub revision: i32,
    pub content: serde_json::Value,
    pub content_hash: String,
    pub base_version: Option<i32>,
    pub base_schema_id: Option<i32>,
    pub base_schema: Option<String>,
    pub check_id: Option<i64>,
    pub verdict: String,
    pub required_approvals: i16,
    pub approver_ids: Vec<i64>,
    pub state_reason: String,
    pub applied_version: Option<i32>,
    pub applied_schema_id: Option<i32>,
    pub connector_check: Option<serde_json::Value>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// When it was last applied.
    pub applied_at: Option<DateTime<Utc>>,
    /// Who edited it (not the author).
    pub editor_ids: Vec<i64>,
    /// Who approved the current revision.
    pub approved_by: Vec<i64>,
}

const ITEM: &str = "SELECT i.id, i.kind, i.cluster_id, c.name AS cluster, i.topic, i.subject,
        i.domain, i.title, i.author_id, u.username AS author, i.state, i.revision, i.content,
        i.content_hash, i.base_version, i.base_schema_id, i.base_schema, i.check_id, i.verdict,
        i.required_approvals, i.approver_ids, i.state_reason, i.applied_version,
        i.applied_schema_id, i.connector_check, i.created_at, i.updated_at, i.applied_at,
        ARRAY(SELECT e.user_id FROM review_editors e WHERE e.item_id = i.id AND e.user_id <> i.author_id) AS editor_ids,
        ARRAY(SELECT a.approver_id FROM review_approvals a
              WHERE a.item_id = i.id AND a.revision = i.revision) AS approved_by
    FROM review_items i JOIN clusters c ON c.id = i.cluster_id AND c.removed_at IS NULL
    JOIN users u ON u.id = i.author_id";

/// Items of watched clusters: a removed cluster's are kept (the pilot and
/// the audit trail read them) but gone from the inbox until it is restored.
const LIVE: &str = "i.cluster_id IN (SELECT id FROM clusters WHERE removed_at IS NULL)";

pub async fn item(pool: &PgPool, id: i64) -> Result<Option<ItemRow>, Db> {
    Ok(sqlx::query_as(&format!("{ITEM} WHERE i.id = $1"))
        .bind(id)
        .fetch_optional(pool)
        .await?)
}

/// Locks the item for the rest of the transaction, so approvals, edits,
/// rejections and applies of one item happen one after another, each
/// seeing what the one before did.
pub async fn lock_item(conn: &mut PgConnection, id: i64) -> Result<Option<ItemRow>, Db> {
    sqlx::query("SELECT 1 FROM review_items WHERE id = $1 FOR UPDATE")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(sqlx::query_as(&format!("{ITEM} WHERE i.id = $1"))
        .bind(id)
        .fetch_optional(conn)
        .await?)
}

/// Whether `user_id` may read the item: they wrote, edited or may approve
/// it, are named for its domain, or belong to the team that owned the
/// stream when it was proposed. Nothing an owner can edit now widens it.
/// (Admins read everything; the caller checks that.)
const READABLE: &str = "(i.author_id = $1 OR $1 = ANY (i.approver_ids)
    OR EXISTS (SELECT 1 FROM review_editors e WHERE e.item_id = i.id AND e.user_id = $1)
    OR i.owner_team_id IN (SELECT m.team_id FROM memberships m WHERE m.user_id = $1)
    OR i.domain IN (SELECT a.domain FROM domain_approvers a WHERE a.user_id = $1
                    UNION SELECT a.domain FROM domain_approvers a
                          JOIN memberships m ON m.team_id = a.team_id WHERE m.user_id = $1))";

/// Waiting for `user_id`: in review, they may approve it, did not write or
/// edit it, and have not approved this revision.
const WAITING: &str = "(i.state = 'in_review' AND $1 = ANY (i.approver_ids) AND i.author_id <> $1
    AND NOT EXISTS (SELECT 1 FROM review_editors e WHERE e.item_id = i.id AND e.user_id = $1)
    AND NOT EXISTS (SELECT 1 FROM review_approvals a
                    WHERE a.item_id = i.id AND a.revision = i.revision AND a.approver_id = $1))";

pub async fn readable(pool: &PgPool, id: i64, user_id: i64) -> Result<bool, Db> {
    Ok(sqlx::query_scalar(&format!(
        "SELECT EXISTS (SELECT 1 FROM review_items i WHERE i.id = $2 AND {READABLE})"
    ))
    .bind(user_id)
    .bind(id)
    .fetch_one(pool)
    .await?)
}

pub async fn list(
    pool: &PgPool,
    user_id: i64,
    admin: bool,
    f: &ReviewFilter,
    page: PageRequest,
) -> Result<Page<ItemRow>, Db> {
    let scope = match f.scope {
        InboxScope::Waiting => WAITING.to_owned(),
        InboxScope::Mine => "(i.author_id = $1 OR EXISTS (SELECT 1 FROM review_editors e
            WHERE e.item_id = i.id AND e.user_id = $1))"
            .to_owned(),
        InboxScope::All => format!("($2 OR {READABLE})"),
    };
    let filter = format!(
        "{scope} AND {LIVE} AND ($3::text IS NULL OR i.state = $3) AND ($4::text IS NULL OR i.kind = $4)
         AND ($5::text IS NULL OR i.domain = $5)"
    );
    let state = f.state.map(|s| s.as_str());
    let kind = f.kind.map(|k| k.as_str());
    let domain = f.domain.as_deref().map(str::trim).filter(|d| !d.is_empty());
    let total: i64 = sqlx::query_scalar(&format!(
        "SELECT count(*) FROM review_items i WHERE {filter}"
    ))
    .bind(user_id)
    .bind(admin)
    .bind(state)
    .bind(kind)
    .bind(domain)
    .fetch_one(pool)
    .await?;
    let rows = sqlx::query_as(&format!(
        "{ITEM} WHERE {filter} ORDER BY i.updated_at DESC, i.id DESC LIMIT $6 OFFSET $7"
    ))
    .bind(user_id)
    .bind(admin)
    .bind(state)
    .bind(kind)
    .bind(domain)
    .bind(page.limit())
    .bind(page.offset())
    .fetch_all(pool)
    .await?;
    Ok(Page::new(rows, page, total.unsigned_abs()))
}

pub async fn waiting_count(pool: &PgPool, user_id: i64) -> Result<i64, Db> {
    Ok(sqlx::query_scalar(&format!(
        "SELECT count(*) FROM review_items i WHERE {WAITING} AND {LIVE}"
    ))
    .bind(user_id)
    .fetch_one(pool)
    .await?)
}

pub async fn add_editor(conn: &mut PgConnection, id: i64, user_id: i64) -> Result<(), Db> {
    Ok(sqlx::query(
        "INSERT INTO review_editors (item_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
    )
    .bind(id)
    .bind(user_id)
    .execute(conn)
    .await
    .map(drop)?)
}

pub async fn insert_approval(
    conn: &mut PgConnection,
    id: i64,
    revision: i32,
    approver_id: i64,
    hash: &str,
) -> Result<(), Db> {
    Ok(sqlx::query(
        "INSERT INTO review_approvals (item_id, revision, approver_id, content_hash)
         VALUES ($1, $2, $3, $4)",
    )
    .bind(id)
    .bind(revision)
    .bind(approver_id)
    .bind(hash)
    .execute(conn)
    .await
    .map(drop)?)
}

#[derive(Debug, Clone, FromRow)]
pub struct ApprovalRow {
    pub approver: String,
    pub revision: i32,
    pub content_hash: String,
    pub approved_at: DateTime<Utc>,
}

pub async fn approvals(pool: &PgPool, id: i64) -> Result<Vec<ApprovalRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT u.username AS approver, a.revision, a.content_hash, a.approved_at
         FROM review_approvals a JOIN users u ON u.id = a.approver_id
         WHERE a.item_id = $1 ORDER BY a.id",
    )
    .bind(id)
    .fetch_all(pool)
    .await?)
}

pub async fn set_state(
    conn: &mut PgConnection,
    id: i64,
    state: &str,
    reason: &str,
) -> Result<(), Db> {
    Ok(sqlx::query(
        // The first approval's time stays: the pilot measures proposed → approved,
        // and counts a rejection at its decision.
        "UPDATE review_items SET state = $2, state_reason = $3, updated_at = streamkeeper_now(),
             approved_at = CASE WHEN $2 = 'approved' THEN COALESCE(approved_at, streamkeeper_now()) ELSE approved_at END,
             applied_at = CASE WHEN $2 = 'applied' THEN streamkeeper_now() ELSE applied_at END,
             rejected_at = CASE WHEN $2 = 'rejected' THEN streamkeeper_now() ELSE rejected_at END
         WHERE id = $1",
    )
    .bind(id)
    .bind(state)
    .bind(reason)
    .execute(conn)
    .await
    .map(drop)?)
}

pub async fn set_applied(
    conn: &mut PgConnection,
    id: i64,
    version: Option<i32>,
    schema_id: i32,
    reason: &str,
) -> Result<(), Db> {
    Ok(sqlx::query(
        "UPDATE review_items SET state = 'applied', state_reason = $4, applied_version = $2,
             applied_schema_id = $3, updated_at = streamkeeper_now(), applied_at = streamkeeper_now()
         WHERE id = $1",
    )
    .bind(id)
    .bind(version)
    .bind(schema_id)
    .bind(reason)
    .execute(conn)
    .await
    .map(drop)?)
}

#[derive(Debug, Clone, FromRow)]
pub struct CommentRow {
    pub id: i64,
    pub author: String,
    pub body: String,
    pub created_at: DateTime<Utc>,
}

pub async fn comments(pool: &PgPool, id: i64) -> Result<Vec<CommentRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT c.id, u.username AS author, c.body, c.created_at
         FROM review_comments c JOIN users u ON u.id = c.author_id
         WHERE c.item_id = $1 ORDER BY c.id",
    )
    .bind(id)
    .fetch_all(pool)
    .await?)
}

pub async fn insert_comment(
    conn: &mut PgConnection,
    id: i64,
    author_id: i64,
    body: &str,
) -> Result<CommentRow, Db> {
    Ok(sqlx::query_as(
        "WITH c AS (INSERT INTO review_comments (item_id, author_id, body) VALUES ($1, $2, $3)
                    RETURNING id, author_id, body, created_at)
         SELECT c.id, u.username AS author, c.body, c.created_at FROM c JOIN users u ON u.id = c.author_id",
    )
    .bind(id)
    .bind(author_id)
    .bind(body)
    .fetch_one(conn)
    .await?)
}

/// Usernames of the given users, in the given order.
pub async fn usernames(pool: &PgPool, ids: &[i64]) -> Result<Vec<String>, Db> {
    Ok(sqlx::query_scalar(
        "SELECT u.username FROM unnest($1::bigint[]) WITH ORDINALITY AS x (id, n)
         JOIN users u ON u.id = x.id ORDER BY x.n",
    )
    .bind(ids)
    .fetch_all(pool)
    .await?)
}

/// An item's own audit trail, oldest first.
pub async fn trail(pool: &PgPool, id: i64) -> Result<Vec<AuditRow>, Db> {
    type Entry = (i64, DateTime<Utc>, String, String, String, String, String);
    let rows: Vec<Entry> = sqlx::query_as(
        "SELECT id, at, actor, action, target, detail, source FROM audit_log
         WHERE target = $1 ORDER BY id",
    )
    .bind(format!("review:{id}"))
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, at, actor, action, target, detail, source)| AuditRow {
            id,
            at,
            actor,
            action,
            target,
            detail,
            source,
        })
        .collect())
}

pub async fn notify(
    conn: &mut PgConnection,
    users: &[i64],
    item_id: i64,
    message: &str,
) -> Result<(), Db> {
    Ok(sqlx::query(
        "INSERT INTO notifications (user_id, item_id, message)
         SELECT DISTINCT unnest($1::bigint[]), $2, $3",
    )
    .bind(users)
    .bind(item_id)
    .bind(message)
    .execute(conn)
    .await
    .map(drop)?)
}

/// The webhooks of the teams the given users belong to, each once.
pub async fn team_webhooks(conn: &mut PgConnection, users: &[i64]) -> Result<Vec<String>, Db> {
    Ok(sqlx::query_scalar(
        "SELECT DISTINCT t.webhook_url FROM teams t JOIN memberships m ON m.team_id = t.id
         WHERE m.user_id = ANY ($1) AND t.webhook_url IS NOT NULL ORDER BY 1",
    )
    .bind(users)
    .fetch_all(conn)
    .await?)
}

pub async fn enqueue_webhook(
    conn: &mut PgConnection,
    item_id: i64,
    url: &str,
    body: &serde_json::Value,
) -> Result<(), Db> {
    Ok(
        sqlx::query("INSERT INTO deliveries (review_item_id, url, body) VALUES ($1, $2, $3)")
            .bind(item_id)
            .bind(url)
            .bind(body)
            .execute(conn)
            .await
            .map(drop)?,
    )
}

#[derive(Debug, Clone, FromRow)]
pub struct NotificationRow {
    pub id: i64,
    pub item_id: Option<i64>,
    pub message: String,
    pub created_at: DateTime<Utc>,
    pub read_at: Option<DateTime<Utc>>,
}

pub async fn notifications(
    pool: &PgPool,
    user_id: i64,
    page: PageRequest,
) -> Result<Page<NotificationRow>, Db> {
    let total: i64 = sqlx::query_scalar("SELECT count(*) FROM notifications WHERE user_id = $1")
        .bind(user_id)
        .fetch_one(pool)
        .await?;
    let rows = sqlx::query_as(
        "SELECT id, item_id, message, created_at, read_at FROM notifications
         WHERE user_id = $1 ORDER BY read_at IS NOT NULL, id DESC LIMIT $2 OFFSET $3",
    )
    .bind(user_id)
    .bind(page.limit())
    .bind(page.offset())
    .fetch_all(pool)
    .await?;
    Ok(Page::new(rows, page, total.unsigned_abs()))
}

pub async fn unread_count(pool: &PgPool, user_id: i64) -> Result<i64, Db> {
    Ok(sqlx::query_scalar(
        "SELECT count(*) FROM notifications WHERE user_id = $1 AND read_at IS NULL",
    )
    .bind(user_id)
    .fetch_one(pool)
    .await?)
}

/// Marks one user's unread notifications about one item read, in the
/// transaction of what they just did with it: acting on an item answers
/// what they were told about it.
pub async fn mark_item_read(conn: &mut PgConnection, user_id: i64, item_id: i64) -> Result<(), Db> {
    Ok(sqlx::query(
        "UPDATE notifications SET read_at = now()
         WHERE user_id = $1 AND item_id = $2 AND read_at IS NULL",
    )
    .bind(user_id)
    .bind(item_id)
    .execute(conn)
    .await
    .map(drop)?)
}

pub async fn mark_read(pool: &PgPool, user_id: i64) -> Result<(), Db> {
    Ok(sqlx::query(
        "UPDATE notifications SET read_at = now() WHERE user_id = $1 AND read_at IS NULL",
    )
    .bind(user_id)
    .execute(pool)
    .await
    .map(drop)?)
}
