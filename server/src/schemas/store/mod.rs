//! Schema registries, the catalog's schemas and compatibility checks.

mod drift;
pub use drift::{DriftRow, producers_write, record_drift, value_subjects, wire_writes};

use crate::platform::errors::Db;
use chrono::{DateTime, Utc};
use sqlx::types::Json;
use sqlx::{FromRow, PgConnection, PgPool};
use std::collections::BTreeMap;
use streamkeeper::platform::page::PageRequest;
use streamkeeper::platform::sort::Sorted;
use streamkeeper::schemas::list::SubjectColumn;

mod notices;
pub use notices::{insert_owners_notice, owners_notices, teams_named};

#[derive(Debug, Clone, FromRow)]
pub struct RegistryRow {
    pub url: String,
    pub username_ref: Option<String>,
    pub password_ref: Option<String>,
    /// The cluster's flag (read with the registry, never written with it):
    /// credentials may go to this registry without https.
    pub insecure_credentials: bool,
}

pub async fn registry(pool: &PgPool, cluster_id: i64) -> Result<Option<RegistryRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT r.url, r.username_ref, r.password_ref, c.insecure_credentials
         FROM schema_registries r JOIN clusters c ON c.id = r.cluster_id
         WHERE r.cluster_id = $1 AND c.removed_at IS NULL",
    )
    .bind(cluster_id)
    .fetch_optional(pool)
    .await?)
}

pub async fn set_registry(
    conn: &mut PgConnection,
    cluster_id: i64,
    r: &RegistryRow,
) -> Result<(), Db> {
    Ok(sqlx::query(
        "INSERT INTO schema_registries (cluster_id, url, username_ref, password_ref)
         VALUES ($1, $2, $3, $4)
         ON CONFLICT (cluster_id) DO UPDATE SET url = EXCLUDED.url,
            username_ref = EXCLUDED.username_ref, password_ref = EXCLUDED.password_ref,
            updated_at = now()",
    )
    .bind(cluster_id)
    .bind(&r.url)
    .bind(&r.username_ref)
    .bind(&r.password_ref)
    .execute(conn)
    .await
    .map(drop)?)
}

#[derive(Debug, Clone, FromRow)]
pub struct SchemaRow {
    pub id: i64,
    pub topic: String,
    pub group_name: Option<String>,
    pub schema_type: String,
    pub schema: String,
    pub refs: Json<BTreeMap<String, String>>,
    pub source: String,
    pub subject: Option<String>,
    pub version: Option<i32>,
    pub recorded_by: String,
    pub recorded_at: DateTime<Utc>,
}

const SCHEMA_COLUMNS: &str = "id, topic, group_name, schema_type, schema, refs, source, subject, version, recorded_by, recorded_at";

/// A schema to append to the catalog.
pub struct NewSchemaRow<'a> {
    pub topic: &'a str,
    pub group: Option<&'a str>,
    pub schema_type: &'a str,
    pub schema: &'a str,
    pub refs: &'a BTreeMap<String, String>,
    pub pinned: Option<(&'a str, i32)>,
    pub recorded_by: &'a str,
}

pub async fn insert_schema(
    conn: &mut PgConnection,
    cluster_id: i64,
    s: &NewSchemaRow<'_>,
) -> Result<SchemaRow, Db> {
    Ok(sqlx::query_as(&format!(
        "INSERT INTO catalog_schemas (cluster_id, topic, group_name, schema_type, schema, refs, source,
                                      subject, version, recorded_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING {SCHEMA_COLUMNS}"
    ))
    .bind(cluster_id)
    .bind(s.topic)
    .bind(s.group)
    .bind(s.schema_type)
    .bind(s.schema)
    .bind(Json(s.refs))
    .bind(if s.pinned.is_some() { "registry" } else { "text" })
    .bind(s.pinned.map(|p| p.0))
    .bind(s.pinned.map(|p| p.1))
    .bind(s.recorded_by)
    .fetch_one(conn)
    .await?)
}

/// The stream's own schemas, newest first.
pub async fn stream_history(
    pool: &PgPool,
    cluster_id: i64,
    topic: &str,
) -> Result<Vec<SchemaRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "SELECT {SCHEMA_COLUMNS} FROM catalog_schemas
         WHERE cluster_id = $1 AND topic = $2 AND group_name IS NULL ORDER BY id DESC"
    ))
    .bind(cluster_id)
    .bind(topic)
    .fetch_all(pool)
    .await?)
}

/// Each group's newest reader schema for a topic.
pub async fn readers(pool: &PgPool, cluster_id: i64, topic: &str) -> Result<Vec<SchemaRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "SELECT DISTINCT ON (group_name) {SCHEMA_COLUMNS} FROM catalog_schemas
         WHERE cluster_id = $1 AND topic = $2 AND group_name IS NOT NULL
         ORDER BY group_name, id DESC"
    ))
    .bind(cluster_id)
    .bind(topic)
    .fetch_all(pool)
    .await?)
}

/// A group that reads a topic, with when it was first seen (its owner is
/// the ownership rule's: `platform::ownership::groups`).
#[derive(Debug, Clone, FromRow)]
pub struct ConsumerRow {
    pub name: String,
    pub first_seen: DateTime<Utc>,
}

pub async fn consumers(
    pool: &PgPool,
    cluster_id: i64,
    topic: &str,
) -> Result<Vec<ConsumerRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT g.name, g.first_seen
         FROM consumer_groups g
         WHERE g.cluster_id = $1 AND $2 = ANY(g.topics) AND g.gone_since IS NULL
         ORDER BY g.name",
    )
    .bind(cluster_id)
    .bind(topic)
    .fetch_all(pool)
    .await?)
}

/// A check to record.
pub struct NewCheck<'a> {
    pub topic: &'a str,
    pub schema_type: &'a str,
    pub schema: &'a str,
    pub verdict: &'a str,
    pub report: serde_json::Value,
    /// Registered references (`SubjectReference`s, as JSON).
    pub subject_references: serde_json::Value,
    /// The names of references pasted as text.
    pub pasted_references: Vec<String>,
    pub submitted_by: &'a str,
    pub submitted_at: DateTime<Utc>,
    pub decided_at: DateTime<Utc>,
}

pub async fn insert_check(pool: &PgPool, cluster_id: i64, c: &NewCheck<'_>) -> Result<i64, Db> {
    Ok(sqlx::query_scalar(
        // The stream's owner team and domain are frozen with the check:
        // they decide who reads it later (CHECK_READABLE).
        "INSERT INTO compatibility_checks (cluster_id, topic, schema_type, schema, verdict, report,
                                           submitted_by, submitted_at, decided_at, owner_team_id, domain,
                                           subject_references, pasted_references)
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, s.owner_team_id, coalesce(s.domain, ''), $10, $11
         FROM (SELECT 1) one LEFT JOIN streams s ON s.cluster_id = $1 AND s.topic = $2
         RETURNING id",
    )
    .bind(cluster_id)
    .bind(c.topic)
    .bind(c.schema_type)
    .bind(c.schema)
    .bind(c.verdict)
    .bind(&c.report)
    .bind(c.submitted_by)
    .bind(c.submitted_at)
    .bind(c.decided_at)
    .bind(&c.subject_references)
    .bind(&c.pasted_references)
    .fetch_one(pool)
    .await?)
}

/// Whether `$1` (a user id, `$2` their name) may read check `c`: admins
/// aside (the caller's), they submitted it, belong to the team that owned
/// the stream when it was checked, are named approvers of its domain then,
/// or may read a review item made of it — the review items' read rule.
///
/// COALESCEd: a check of a stream that had no owner (or no catalog entry)
/// then froze a NULL team, and `NULL IN (…)` is NULL, not false.
const CHECK_READABLE: &str = "COALESCE(c.submitted_by = $2
    OR c.owner_team_id IN (SELECT m.team_id FROM memberships m WHERE m.user_id = $1)
    OR (c.domain <> '' AND c.domain IN (
            SELECT a.domain FROM domain_approvers a WHERE a.user_id = $1
            UNION SELECT a.domain FROM domain_approvers a
                  JOIN memberships m ON m.team_id = a.team_id WHERE m.user_id = $1))
    OR EXISTS (SELECT 1 FROM review_items i WHERE i.check_id = c.id
               AND (i.author_id = $1 OR $1 = ANY (i.approver_ids)
                    OR EXISTS (SELECT 1 FROM review_editors e WHERE e.item_id = i.id AND e.user_id = $1))), false)";

/// Who asks for checks: admins read every check.
#[derive(Clone, Copy, Debug)]
pub struct Reader<'a> {
    pub user_id: i64,
    pub username: &'a str,
    pub admin: bool,
}

/// A recorded check's report, with whether `reader` may read it.
pub async fn check(
    pool: &PgPool,
    id: i64,
    reader: Reader<'_>,
) -> Result<Option<(bool, serde_json::Value)>, Db> {
    Ok(sqlx::query_as(&format!(
        "SELECT ($3 OR {CHECK_READABLE}), report FROM compatibility_checks c WHERE c.id = $4"
    ))
    .bind(reader.user_id)
    .bind(reader.username)
    .bind(reader.admin)
    .bind(id)
    .fetch_optional(pool)
    .await?)
}

/// What a check was made of: its stream, format and schema text, and its
/// report (for the subject it was checked under).
#[derive(Debug, Clone, FromRow)]
pub struct CheckedRow {
    pub readable: bool,
    pub cluster_id: i64,
    pub topic: String,
    pub schema_type: String,
    pub schema: String,
    pub report: serde_json::Value,
    pub subject_references: serde_json::Value,
    pub pasted_references: Vec<String>,
    /// The stream's owner team when it was checked.
    pub owner_team_id: Option<i64>,
}

/// A check's content, with whether `reader` may read it (`None`: no such
/// check).
pub async fn checked(pool: &PgPool, id: i64, reader: Reader<'_>) -> Result<Option<CheckedRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "SELECT ($3 OR {CHECK_READABLE}) AS readable, cluster_id, topic, schema_type, schema, report,
                subject_references, pasted_references, owner_team_id
         FROM compatibility_checks c WHERE c.id = $4"
    ))
    .bind(reader.user_id)
    .bind(reader.username)
    .bind(reader.admin)
    .bind(id)
    .fetch_optional(pool)
    .await?)
}

/// A check's report, unconditionally: for a review item's reader, whom
/// the item's read rule already admitted.
pub async fn check_of_item(pool: &PgPool, id: i64) -> Result<Option<serde_json::Value>, Db> {
    Ok(
        sqlx::query_scalar("SELECT report FROM compatibility_checks WHERE id = $1")
            .bind(id)
            .fetch_optional(pool)
            .await?,
    )
}

/// The last checks of a topic that `reader` may read, newest first.
pub async fn recent_checks(
    pool: &PgPool,
    cluster_id: i64,
    topic: &str,
    limit: i64,
    reader: Reader<'_>,
) -> Result<Vec<(i64, String, serde_json::Value, String, DateTime<Utc>)>, Db> {
    Ok(sqlx::query_as(&format!(
        "SELECT c.id, c.verdict, c.report->'summary', c.submitted_by, c.submitted_at
         FROM compatibility_checks c
         WHERE c.cluster_id = $4 AND c.topic = $5 AND ($3 OR {CHECK_READABLE})
         ORDER BY c.id DESC LIMIT $6"
    ))
    .bind(reader.user_id)
    .bind(reader.username)
    .bind(reader.admin)
    .bind(cluster_id)
    .bind(topic)
    .bind(limit)
    .fetch_all(pool)
    .await?)
}

/// A consumer group that a pending change's check found cannot read it.
#[derive(Debug, FromRow)]
pub struct PendingBreakRow {
    pub cluster_id: i64,
    pub topic: String,
    pub item_id: i64,
    pub title: String,
    /// Whether the reader may read the item's check (its id, title and
    /// reasons are shown only then).
    pub readable: bool,
    pub group_name: String,
    /// The check's reasons, as the report holds them.
    pub reasons: serde_json::Value,
}

/// The consumer groups that pending changes on `topics` (cluster id and
/// topic pairs) break: review items of schemas not yet applied, rejected
/// or withdrawn, whose check found a group that cannot read them. What
/// lineage's impact marks (issue 14, item 4).
pub async fn pending_breaks(
    pool: &PgPool,
    topics: &[(i64, String)],
    reader: Reader<'_>,
) -> Result<Vec<PendingBreakRow>, Db> {
    let (clusters, names): (Vec<i64>, Vec<&str>) =
        topics.iter().map(|(c, t)| (*c, t.as_str())).unzip();
    Ok(sqlx::query_as(&format!(
        "SELECT i.cluster_id, i.topic, i.id AS item_id, i.title, ($3 OR {CHECK_READABLE}) AS readable,
                x->>'group' AS group_name, coalesce(x->'reasons', '[]') AS reasons
         FROM review_items i
         JOIN compatibility_checks c ON c.id = i.check_id
         CROSS JOIN LATERAL jsonb_array_elements(c.report->'consumers') x
         WHERE (i.cluster_id, i.topic) IN (SELECT * FROM unnest($4::bigint[], $5::text[]))
           AND i.kind IN ('producer_change', 'schema_registration')
           AND i.state IN ('in_review', 'approved', 'apply_failed')
           AND x->>'verdict' = 'INCOMPATIBLE'
         ORDER BY i.id, x->>'group'"
    ))
    .bind(reader.user_id)
    .bind(reader.username)
    .bind(reader.admin)
    .bind(&clusters)
    .bind(&names)
    .fetch_all(pool)
    .await?)
}

/// The stream's declared compatibility level, if any.
pub async fn declared_compatibility(
    pool: &PgPool,
    cluster_id: i64,
    topic: &str,
) -> Result<Option<String>, Db> {
    Ok(
        sqlx::query_scalar(
            "SELECT compatibility FROM streams WHERE cluster_id = $1 AND topic = $2",
        )
        .bind(cluster_id)
        .bind(topic)
        .fetch_optional(pool)
        .await
        .map(Option::flatten)?,
    )
}

/// Makes a cluster's registry due a reading at the hygiene routine's next
/// look (within its 15 s tick), in the caller's transaction: Streamkeeper
/// just wrote to it, so the subjects screen should not wait five minutes
/// to show the new version. `updated_at` past `checked_at` is what makes
/// a registry due (as a changed setting does); the last reading's time
/// stays on the status until the new one lands.
pub async fn registry_written(conn: &mut PgConnection, cluster_id: i64) -> Result<(), Db> {
    sqlx::query("UPDATE schema_registries SET updated_at = now() WHERE cluster_id = $1")
        .bind(cluster_id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Clusters with a registry.
/// Registries due a reading: never read, last read `every_s` seconds ago
/// or more, or set anew since.
pub async fn due_registries(pool: &PgPool, every_s: i64) -> Result<Vec<i64>, Db> {
    Ok(sqlx::query_scalar(
        "SELECT cluster_id FROM schema_registries
         WHERE checked_at IS NULL OR checked_at <= now() - make_interval(secs => $1)
            OR updated_at > checked_at
         ORDER BY cluster_id",
    )
    .bind(every_s as f64)
    .fetch_all(pool)
    .await?)
}

/// The watched clusters with a registry (a removed cluster's is not listed).
pub async fn registries(pool: &PgPool) -> Result<Vec<i64>, Db> {
    Ok(sqlx::query_scalar(
        "SELECT r.cluster_id FROM schema_registries r
         JOIN clusters c ON c.id = r.cluster_id AND c.removed_at IS NULL
         ORDER BY r.cluster_id",
    )
    .fetch_all(pool)
    .await?)
}

/// Each stream's declared level, by topic.
pub async fn declared_levels(
    pool: &PgPool,
    cluster_id: i64,
) -> Result<BTreeMap<String, String>, Db> {
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT topic, compatibility FROM streams WHERE cluster_id = $1 AND compatibility IS NOT NULL",
    )
    .bind(cluster_id)
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().collect())
}

/// A finding as stored.
#[derive(Debug, Clone, FromRow)]
pub struct FindingRow {
    pub kind: String,
    pub subject: Option<String>,
    pub topic: Option<String>,
    pub detail: String,
    pub found_at: DateTime<Utc>,
}

/// A finding with the owner of the stream it is about, for listing per owner.
#[derive(Debug, Clone, FromRow)]
pub struct OwnedFinding {
    #[sqlx(flatten)]
    pub finding: FindingRow,
    pub owner: Option<String>,
}

/// Replaces a registry's findings after a good reading.
pub async fn replace_findings(
    pool: &PgPool,
    cluster_id: i64,
    found: &[FindingRow],
) -> Result<(), Db> {
    let mut tx = pool.begin().await?;
    sqlx::query("DELETE FROM registry_findings WHERE cluster_id = $1")
        .bind(cluster_id)
        .execute(&mut *tx)
        .await?;
    for f in found {
        sqlx::query(
            "INSERT INTO registry_findings (cluster_id, kind, subject, topic, detail, found_at)
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(cluster_id)
        .bind(&f.kind)
        .bind(&f.subject)
        .bind(&f.topic)
        .bind(&f.detail)
        .bind(f.found_at)
        .execute(&mut *tx)
        .await?;
    }
    sqlx::query(
        "UPDATE schema_registries SET checked_at = now(), last_error = NULL WHERE cluster_id = $1",
    )
    .bind(cluster_id)
    .execute(&mut *tx)
    .await?;
    Ok(tx.commit().await?)
}

/// Records that a registry could not be read; its findings stay as they were.
pub async fn record_registry_error(pool: &PgPool, cluster_id: i64, error: &str) -> Result<(), Db> {
    Ok(sqlx::query(
        "UPDATE schema_registries SET checked_at = now(), last_error = $2 WHERE cluster_id = $1",
    )
    .bind(cluster_id)
    .bind(error)
    .execute(pool)
    .await
    .map(drop)?)
}

/// A registry's status: when it was read, what failed, what it found.
pub async fn registry_status(
    pool: &PgPool,
    cluster_id: i64,
) -> Result<
    Option<(
        String,
        Option<DateTime<Utc>>,
        Option<String>,
        Vec<OwnedFinding>,
    )>,
    Db,
> {
    let row: Option<(String, Option<DateTime<Utc>>, Option<String>)> = sqlx::query_as(
        "SELECT url, checked_at, last_error FROM schema_registries WHERE cluster_id = $1",
    )
    .bind(cluster_id)
    .fetch_optional(pool)
    .await?;
    let Some((url, checked, error)) = row else {
        return Ok(None);
    };
    let findings = sqlx::query_as(
        "SELECT f.kind, f.subject, f.topic, f.detail, f.found_at, t.name AS owner
         FROM registry_findings f
         LEFT JOIN streams s ON s.cluster_id = f.cluster_id AND s.topic = f.topic
         LEFT JOIN teams t ON t.id = s.owner_team_id
         WHERE f.cluster_id = $1 ORDER BY t.name NULLS LAST, f.kind, f.topic, f.subject",
    )
    .bind(cluster_id)
    .fetch_all(pool)
    .await?;
    Ok(Some((url, checked, error, findings)))
}

/// A subject as the hygiene routine read it.
#[derive(Debug, Clone, FromRow)]
pub struct SubjectRow {
    pub subject: String,
    pub versions: Vec<i32>,
    pub latest_id: i32,
    pub schema_type: String,
    pub level: Option<String>,
}

/// Replaces a registry's subjects after a good reading, with the global
/// level and the time they were read.
pub async fn replace_subjects(
    pool: &PgPool,
    cluster_id: i64,
    global_level: &str,
    subjects: &[SubjectRow],
) -> Result<(), Db> {
    let mut tx = pool.begin().await?;
    sqlx::query("DELETE FROM registry_subjects WHERE cluster_id = $1")
        .bind(cluster_id)
        .execute(&mut *tx)
        .await?;
    // One statement for any number of subjects; each version list travels
    // as text because Postgres arrays cannot be ragged.
    let versions: Vec<String> = subjects
        .iter()
        .map(|s| {
            s.versions
                .iter()
                .map(i32::to_string)
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    sqlx::query(
        "INSERT INTO registry_subjects (cluster_id, subject, versions, latest_id, schema_type, level)
         SELECT $1, s, string_to_array(v, ',')::integer[], id, t, l
         FROM UNNEST($2::text[], $3::text[], $4::integer[], $5::text[], $6::text[]) AS u(s, v, id, t, l)",
    )
    .bind(cluster_id)
    .bind(subjects.iter().map(|s| s.subject.as_str()).collect::<Vec<_>>())
    .bind(&versions)
    .bind(subjects.iter().map(|s| s.latest_id).collect::<Vec<_>>())
    .bind(
        subjects
            .iter()
            .map(|s| s.schema_type.as_str())
            .collect::<Vec<_>>(),
    )
    .bind(
        subjects
            .iter()
            .map(|s| s.level.as_deref())
            .collect::<Vec<_>>(),
    )
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "UPDATE schema_registries SET subjects_read_at = now(), global_level = $2 WHERE cluster_id = $1",
    )
    .bind(cluster_id)
    .bind(global_level)
    .execute(&mut *tx)
    .await?;
    Ok(tx.commit().await?)
}

/// When a registry's subjects were last read, its global level then, and
/// why the last reading failed, if it did.
#[derive(Debug, Clone, FromRow)]
pub struct SubjectsReading {
    pub url: String,
    pub subjects_read_at: Option<DateTime<Utc>>,
    pub global_level: Option<String>,
    pub last_error: Option<String>,
}

pub async fn subjects_reading(
    pool: &PgPool,
    cluster_id: i64,
) -> Result<Option<SubjectsReading>, Db> {
    Ok(sqlx::query_as(
        "SELECT url, subjects_read_at, global_level, last_error FROM schema_registries WHERE cluster_id = $1",
    )
    .bind(cluster_id)
    .fetch_optional(pool)
    .await?)
}

/// A subject's latest live version and when the registry was read, from
/// the last good reading of the cluster's registry; `None` before one.
/// The inner `None`: the subject had no live versions then.
pub async fn subject_latest(
    pool: &PgPool,
    cluster_id: i64,
    subject: &str,
) -> Result<Option<(DateTime<Utc>, Option<i32>)>, Db> {
    Ok(sqlx::query_as(
        // Versions are stored oldest first: the last one is the latest.
        "SELECT r.subjects_read_at,
                (SELECT s.versions[cardinality(s.versions)] FROM registry_subjects s
                 WHERE s.cluster_id = r.cluster_id AND s.subject = $2)
         FROM schema_registries r
         WHERE r.cluster_id = $1 AND r.subjects_read_at IS NOT NULL",
    )
    .bind(cluster_id)
    .bind(subject)
    .fetch_optional(pool)
    .await?)
}

/// `ORDER BY` of a registry's subjects: each column's keys, then the
/// subject (unique in a registry).
fn subject_order(order: Sorted<SubjectColumn>) -> String {
    let keys: &[&'static str] = match order.column {
        SubjectColumn::Subject => &["subject"],
        SubjectColumn::Versions => &["cardinality(versions)"],
        SubjectColumn::Latest => &["latest_id"],
        SubjectColumn::Level => &["level"],
    };
    crate::store::order_by(keys, order.descending, "subject")
}

/// A page of a registry's stored subjects in `order`, those containing
/// `search` (any case) only when given, with the total.
pub async fn subjects_page(
    pool: &PgPool,
    cluster_id: i64,
    search: Option<&str>,
    order: Sorted<SubjectColumn>,
    page: PageRequest,
) -> Result<(Vec<SubjectRow>, u64), Db> {
    // `%` and `_` in the search are literal characters, not wildcards.
    let pattern = search.map(|s| {
        format!(
            "%{}%",
            s.replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_")
        )
    });
    let rows = sqlx::query_as(&format!(
        "SELECT subject, versions, latest_id, schema_type, level FROM registry_subjects
         WHERE cluster_id = $1 AND ($2::text IS NULL OR subject ILIKE $2)
         ORDER BY {} LIMIT $3 OFFSET $4",
        subject_order(order)
    ))
    .bind(cluster_id)
    .bind(&pattern)
    .bind(page.limit())
    .bind(page.offset())
    .fetch_all(pool)
    .await?;
    let total: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM registry_subjects WHERE cluster_id = $1 AND ($2::text IS NULL OR subject ILIKE $2)",
    )
    .bind(cluster_id)
    .bind(&pattern)
    .fetch_one(pool)
    .await?;
    Ok((rows, u64::try_from(total).unwrap_or_default()))
}
