//! The pilot's SQL: its settings, and its figures' events read from the
//! records each flow keeps (flags, compatibility checks, review items,
//! lineage questions, connector restarts), within the pilot's scope ([`SCOPE`]).

use crate::platform::errors::Db;
use chrono::{DateTime, NaiveDate, Utc};
use sqlx::{FromRow, PgConnection, PgPool};
use std::collections::BTreeMap;
use streamkeeper::pilot::stats::{Count, Timed};
use streamkeeper::pilot::{Baseline, Dismissal, DomainRecord, Metric, ScopeKind};

#[derive(Debug, Clone, FromRow)]
pub struct PilotRow {
    pub scope_kind: String,
    pub scope: Vec<String>,
    pub started_on: NaiveDate,
    pub updated_by: String,
    pub updated_at: DateTime<Utc>,
}

pub async fn pilot(pool: &PgPool) -> Result<Option<PilotRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT scope_kind, scope, started_on, updated_by, updated_at FROM pilot WHERE id = 1",
    )
    .fetch_optional(pool)
    .await?)
}

/// The baselines entered (metrics without one have their default).
pub async fn baselines(pool: &PgPool) -> Result<Vec<Baseline>, Db> {
    let rows: Vec<(String, i64, String)> =
        sqlx::query_as("SELECT metric, ms, note FROM pilot_baselines ORDER BY metric")
            .fetch_all(pool)
            .await?;
    Ok(rows
        .into_iter()
        .filter_map(|(m, ms, note)| {
            Some(Baseline {
                metric: m.parse().ok()?,
                ms,
                note,
            })
        })
        .collect())
}

/// Replaces the pilot and its entered baselines.
pub async fn set(
    conn: &mut PgConnection,
    kind: ScopeKind,
    scope: &[String],
    started_on: NaiveDate,
    entered: &[Baseline],
    by: &str,
) -> Result<(), Db> {
    sqlx::query(
        "INSERT INTO pilot (id, scope_kind, scope, started_on, updated_by) VALUES (1, $1, $2, $3, $4)
         ON CONFLICT (id) DO UPDATE SET scope_kind = EXCLUDED.scope_kind, scope = EXCLUDED.scope,
             started_on = EXCLUDED.started_on, updated_by = EXCLUDED.updated_by, updated_at = now()",
    )
    .bind(kind.as_str())
    .bind(scope)
    .bind(started_on)
    .bind(by)
    .execute(&mut *conn)
    .await?;
    sqlx::query("DELETE FROM pilot_baselines")
        .execute(&mut *conn)
        .await?;
    for b in entered {
        sqlx::query(
            "INSERT INTO pilot_baselines (metric, ms, note, updated_by) VALUES ($1, $2, $3, $4)",
        )
        .bind(b.metric.as_str())
        .bind(b.ms)
        .bind(&b.note)
        .bind(by)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// What every query of the pilot's records is bound to: its scope and
/// the start of its day 1.
pub struct Within<'a> {
    pub kind: ScopeKind,
    pub scope: &'a [String],
    pub from: DateTime<Utc>,
}

/// The pilot's scope as tables, once per query ($1 the kind, $2 the
/// entries): `sc` the clusters it names; `st` the streams it covers with
/// their domains (every stream of those clusters; those of its domains; the
/// `cluster/topic` it names, with or without a stream row); `subjects`
/// every group, topic and connector about one of those streams, with its
/// domain. Joined by hash, not asked row by row: a year of records reads
/// in one pass.
const SCOPE: &str = "WITH sc AS (SELECT id FROM clusters WHERE $1 = 'clusters' AND name = ANY ($2)),
    st AS (
        SELECT s.cluster_id, s.topic, s.domain FROM streams s JOIN clusters c ON c.id = s.cluster_id
         WHERE s.cluster_id IN (SELECT id FROM sc)
            OR ($1 = 'domains' AND s.domain = ANY ($2))
            OR ($1 = 'streams' AND c.name || '/' || s.topic = ANY ($2))
        UNION
        SELECT c.id, substr(x, length(c.name) + 2), '' FROM clusters c, unnest($2::text[]) x
         WHERE $1 = 'streams' AND left(x, length(c.name) + 1) = c.name || '/'),
    subjects AS (
        SELECT cluster_id, 'topic' AS kind, topic AS subject,
               COALESCE(min(NULLIF(domain, '')), '') AS domain
          FROM st GROUP BY 1, 2, 3
        UNION ALL
        SELECT g.cluster_id, 'group', g.name, COALESCE(min(NULLIF(st.domain, '')), '')
          FROM consumer_groups g JOIN st ON st.cluster_id = g.cluster_id AND st.topic = ANY (g.topics)
         GROUP BY 1, 2, 3
        UNION ALL
        SELECT cc.cluster_id, 'connector', cc.name || '/' || cn.name, COALESCE(min(NULLIF(st.domain, '')), '')
          FROM connectors cn JOIN connect_clusters cc ON cc.id = cn.connect_id
          JOIN st ON st.cluster_id = cc.cluster_id AND st.topic = ANY (cn.topics)
         GROUP BY 1, 2, 3)";

/// `fl`: the flags in scope, each with its subject's domain (`''` for a
/// flag of a named cluster about no stream). A cluster scope takes every
/// flag of its clusters; the others the flags about their subjects, by an
/// inner join on those few subjects, so a year of flags is probed against
/// them rather than hashed itself.
const FLAGS: &str = "fl AS (
    SELECT f.*, COALESCE(x.domain, '') AS domain
      FROM flags f LEFT JOIN subjects x ON x.cluster_id = f.cluster_id
           AND x.kind = f.subject_kind AND x.subject = f.subject
     WHERE $1 = 'clusters' AND f.cluster_id IN (SELECT id FROM sc)
    UNION ALL
    SELECT f.*, x.domain
      FROM flags f JOIN subjects x ON x.cluster_id = f.cluster_id
           AND x.kind = f.subject_kind AND x.subject = f.subject
     WHERE $1 <> 'clusters')";

/// Whether a record of cluster `c` about topic `t` with domain `d` is in scope.
fn topic_in(c: &str, t: &str, d: &str) -> String {
    format!(
        "({c} IN (SELECT id FROM sc)
          OR EXISTS (SELECT 1 FROM st WHERE st.cluster_id = {c} AND st.topic = {t})
          OR ($1 = 'domains' AND {d} = ANY ($2)))"
    )
}

/// `lq`: the lineage questions asked since $3 about a topic, with the
/// topic and the registered cluster its dataset resolved to (a question
/// about a job, or a dataset on no registered cluster, is about no stream
/// and so in no scope).
const QUESTIONS: &str = "lq AS (
    SELECT q.id, q.asked_at, q.answered_at, q.notified_at, n.name AS topic,
           CASE WHEN n.cluster ~ '^[0-9]{1,18}$' THEN n.cluster::bigint END AS cluster_id
      FROM lineage_questions q
      JOIN lineage_nodes n ON n.kind = 'dataset' AND 'dataset:' || n.namespace || ':' || n.name = q.node
     WHERE q.asked_at >= $3)";

#[derive(FromRow)]
struct TimedRow {
    metric: String,
    reference: String,
    subject: String,
    started_at: DateTime<Utc>,
    ended_at: DateTime<Utc>,
}

/// `timed`: every timed event of the pilot (`metric`, `reference`,
/// `subject`, `started_at`, `ended_at`), after [`SCOPE`], [`FLAGS`] and
/// [`QUESTIONS`]:
/// - lag flagged: a group's flag routed to a team, onset → the owner
///   notified (its webhook delivered, or the flag in the app list when the
///   team has none) or it acknowledged, whichever came first;
/// - change checked: a compatibility check, submitted → verdict;
/// - change through review: a producer change or schema registration
///   item, proposed → first approved or applied;
/// - lineage question answered, and its owners notified: a question
///   about a topic (`lineage_questions`, recorded by "notify owners"),
///   asked → answer shown, and asked → owners notified.
fn timed_events() -> String {
    format!(
        "timed AS (
         SELECT 'lag_flagged' AS metric, 'flag:' || f.id AS reference, f.subject,
                f.onset_at AS started_at, LEAST(f.notified_at, f.acknowledged_at) AS ended_at
           FROM fl f
          WHERE f.subject_kind = 'group' AND f.team_id IS NOT NULL AND f.onset_at >= $3
            AND (f.notified_at IS NOT NULL OR f.acknowledged_at IS NOT NULL)
         UNION ALL
         SELECT 'change_checked', 'check:' || k.id, k.topic, k.submitted_at, k.decided_at
           FROM compatibility_checks k
          WHERE k.submitted_at >= $3 AND {checks}
         UNION ALL
         SELECT 'change_reviewed', 'review-item:' || i.id, i.topic, i.created_at,
                LEAST(i.approved_at, i.applied_at)
           FROM review_items i
          WHERE i.kind IN ('producer_change', 'schema_registration') AND i.created_at >= $3
            AND (i.approved_at IS NOT NULL OR i.applied_at IS NOT NULL) AND {items}
         UNION ALL
         SELECT 'lineage_answered', 'lineage-question:' || q.id, q.topic, q.asked_at, q.answered_at
           FROM lq q WHERE {questions}
         UNION ALL
         SELECT 'lineage_notified', 'lineage-question:' || q.id, q.topic, q.asked_at, q.notified_at
           FROM lq q WHERE q.notified_at IS NOT NULL AND {questions})",
        checks = topic_in("k.cluster_id", "k.topic", "k.domain"),
        items = topic_in("i.cluster_id", "i.topic", "i.domain"),
        questions = topic_in("q.cluster_id", "q.topic", "NULL::text"),
    )
}

/// The rows of a pilot query bound to its scope (`$1`–`$3`) and `now` (`$4`).
async fn until<T>(
    pool: &PgPool,
    w: &Within<'_>,
    now: DateTime<Utc>,
    sql: &str,
) -> Result<Vec<T>, sqlx::Error>
where
    T: for<'r> FromRow<'r, sqlx::postgres::PgRow> + Send + Unpin,
{
    sqlx::query_as(sql)
        .bind(w.kind.as_str())
        .bind(w.scope)
        .bind(w.from)
        .bind(now)
        .fetch_all(pool)
        .await
}

/// Every timed event of the pilot up to `now`, by start, with the record
/// each comes from (the events CSV).
pub async fn timed(pool: &PgPool, w: &Within<'_>, now: DateTime<Utc>) -> Result<Vec<Timed>, Db> {
    let rows: Vec<TimedRow> = until(
        pool,
        w,
        now,
        &format!(
            "{SCOPE}, {FLAGS}, {QUESTIONS}, {timed}
         SELECT metric, reference, subject, started_at, ended_at FROM timed
          WHERE started_at <= $4 ORDER BY started_at, reference",
            timed = timed_events(),
        ),
    )
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|r| {
            Some(Timed {
                metric: r.metric.parse::<Metric>().ok()?,
                reference: r.reference,
                subject: r.subject,
                started_at: r.started_at,
                ended_at: r.ended_at,
            })
        })
        .collect())
}

/// The durations of the timed events up to `now`, per metric and UTC day
/// (what the figures need, without the strings the CSV carries). Each in
/// whole milliseconds rounded down and never below 0, as [`Timed::ms`].
pub async fn durations(
    pool: &PgPool,
    w: &Within<'_>,
    now: DateTime<Utc>,
) -> Result<BTreeMap<(NaiveDate, Metric), Vec<i64>>, Db> {
    let rows: Vec<(String, NaiveDate, Vec<i64>)> = until(pool, w, now, &format!(
        "{SCOPE}, {FLAGS}, {QUESTIONS}, {timed}
         SELECT metric, (started_at AT TIME ZONE 'UTC')::date,
                array_agg(GREATEST(floor(extract(epoch FROM ended_at - started_at) * 1000), 0)::bigint)
           FROM timed WHERE started_at <= $4 GROUP BY 1, 2",
        timed = timed_events(),
    ))
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|(m, day, ms)| Some(((day, m.parse::<Metric>().ok()?), ms)))
        .collect())
}

/// How many counted events the pilot has up to `now`, per UTC day: flags
/// raised, acknowledged and dismissed; checks that found a breaking
/// change; items applied; connector restarts Streamkeeper made.
pub async fn counts(
    pool: &PgPool,
    w: &Within<'_>,
    now: DateTime<Utc>,
) -> Result<BTreeMap<(NaiveDate, Count), u64>, Db> {
    let rows: Vec<(String, NaiveDate, i64)> = until(pool, w, now, &format!(
        "{SCOPE}, {FLAGS}, f AS (
            SELECT raised_at, acknowledged_at, dismissed_at FROM fl
             WHERE raised_at >= $3 OR acknowledged_at >= $3 OR dismissed_at >= $3),
         counted (what, at) AS (
         SELECT 'flags_raised', raised_at FROM f WHERE raised_at >= $3
         UNION ALL SELECT 'flags_acknowledged', acknowledged_at FROM f WHERE acknowledged_at >= $3
         UNION ALL SELECT 'flags_dismissed', dismissed_at FROM f WHERE dismissed_at >= $3
         UNION ALL
         SELECT 'checks_breaking', k.decided_at FROM compatibility_checks k
          WHERE k.verdict = 'INCOMPATIBLE' AND k.decided_at >= $3 AND {checks}
         UNION ALL
         SELECT 'changes_applied', i.applied_at FROM review_items i
          WHERE i.applied_at >= $3 AND {items}
         UNION ALL
         SELECT 'connector_restarts', r.at FROM connector_restarts r
           JOIN connectors cn ON cn.id = r.connector_id
           JOIN connect_clusters cc ON cc.id = cn.connect_id
          WHERE r.at >= $3
            AND (cc.cluster_id IN (SELECT id FROM sc)
                 OR EXISTS (SELECT 1 FROM subjects x WHERE x.cluster_id = cc.cluster_id
                               AND x.kind = 'connector' AND x.subject = cc.name || '/' || cn.name)))
         SELECT what, (at AT TIME ZONE 'UTC')::date, count(*) FROM counted WHERE at <= $4 GROUP BY 1, 2",
        checks = topic_in("k.cluster_id", "k.topic", "k.domain"),
        items = topic_in("i.cluster_id", "i.topic", "i.domain"),
    ))
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|(c, day, n)| {
            let count = Count::ALL.into_iter().find(|k| k.as_str() == c)?;
            Some(((day, count), u64::try_from(n).unwrap_or(0)))
        })
        .collect())
}

/// Each domain of the pilot's streams (and each the scope names), its
/// level now and its review record since the start: approvals given,
/// items rejected, flags dismissed as wrong.
pub async fn domains(pool: &PgPool, w: &Within<'_>) -> Result<Vec<DomainRecord>, Db> {
    let rows: Vec<(String, String, i64, i64, i64)> = sqlx::query_as(&format!(
        "{SCOPE}, d AS (
            SELECT domain FROM st WHERE domain <> ''
            UNION SELECT x FROM unnest($2::text[]) x WHERE $1 = 'domains'),
         approvals AS (
            SELECT i.domain, count(*) AS n FROM review_approvals a JOIN review_items i ON i.id = a.item_id
             WHERE a.approved_at >= $3 GROUP BY 1),
         rejections AS (
            SELECT domain, count(*) AS n FROM review_items
             WHERE state = 'rejected' AND updated_at >= $3 GROUP BY 1),
         dismissals AS (
            SELECT x.domain, count(*) AS n FROM flags f JOIN subjects x ON x.cluster_id = f.cluster_id
               AND x.kind = f.subject_kind AND x.subject = f.subject
             WHERE f.dismissed_at >= $3 GROUP BY 1)
         -- Each count once over its table, joined by domain (not asked per domain).
         SELECT d.domain, COALESCE(rd.autonomy, 'suggest'), COALESCE(a.n, 0), COALESCE(r.n, 0),
                COALESCE(x.n, 0)
           FROM d LEFT JOIN review_domains rd ON rd.domain = d.domain
           LEFT JOIN approvals a ON a.domain = d.domain
           LEFT JOIN rejections r ON r.domain = d.domain
           LEFT JOIN dismissals x ON x.domain = d.domain
          ORDER BY d.domain"
    ))
    .bind(w.kind.as_str())
    .bind(w.scope)
    .bind(w.from)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(
            |(domain, autonomy, approvals, rejections, dismissed)| DomainRecord {
                domain,
                autonomy,
                approvals,
                rejections,
                dismissed,
            },
        )
        .collect())
}

#[derive(FromRow)]
struct DismissalRow {
    id: i64,
    cluster: String,
    subject: String,
    kind: String,
    dismissed_reason: Option<String>,
    dismissed_by: Option<String>,
    dismissed_at: DateTime<Utc>,
}

/// Flags dismissed as wrong during the pilot, newest first, with reasons.
pub async fn dismissed(pool: &PgPool, w: &Within<'_>, limit: i64) -> Result<Vec<Dismissal>, Db> {
    let rows: Vec<DismissalRow> = sqlx::query_as(&format!(
        "{SCOPE}, {FLAGS}
         SELECT f.id, c.name AS cluster, f.subject, f.kind, f.dismissed_reason, f.dismissed_by, f.dismissed_at
           FROM fl f JOIN clusters c ON c.id = f.cluster_id
          WHERE f.dismissed_at >= $3
          ORDER BY f.dismissed_at DESC, f.id DESC LIMIT $4"
    ))
    .bind(w.kind.as_str())
    .bind(w.scope)
    .bind(w.from)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| Dismissal {
            flag_id: r.id,
            cluster: r.cluster,
            subject: r.subject,
            kind: r.kind,
            reason: r.dismissed_reason.unwrap_or_default(),
            by: r.dismissed_by.unwrap_or_default(),
            at: r.dismissed_at,
        })
        .collect())
}

/// A flag or a check in a domain at watch or suggest, for the receipts.
#[derive(Debug, Clone, FromRow)]
pub struct ReceiptRow {
    /// `flag` or `check`.
    pub source: String,
    pub id: i64,
    pub domain: String,
    pub autonomy: String,
    pub cluster: String,
    pub subject_kind: String,
    pub subject: String,
    pub kind: String,
    pub what: String,
    pub evidence: serde_json::Value,
    pub at: DateTime<Utc>,
}

/// What Streamkeeper would have done in the pilot's scope since its start,
/// in domains at watch or suggest (a domain nobody configured is at
/// suggest), newest first: the flags it raised, the breaking checks it
/// would have blocked, and the FAILED connectors it did not restart (the
/// restart rule itself is `receipts::would_restart`; the SQL only narrows
/// the rows). The first `limit` of each, and how many there are in all.
pub async fn first_weeks(
    pool: &PgPool,
    w: &Within<'_>,
    limit: i64,
) -> Result<(Vec<ReceiptRow>, i64), Db> {
    // A flag's domain is its subject's; one outside every stream has none.
    let flags = "FROM fl f JOIN clusters c ON c.id = f.cluster_id
         LEFT JOIN review_domains rd ON rd.domain = f.domain
        WHERE f.raised_at >= $3 AND f.domain <> ''
          AND COALESCE(rd.autonomy, 'suggest') IN ('watch', 'suggest')";
    const FLAG_ROW: &str = "f.id, f.domain, COALESCE(rd.autonomy, 'suggest') AS autonomy,
                c.name AS cluster, f.subject_kind, f.subject, f.kind, f.reason AS what, f.evidence,
                f.raised_at AS at";
    const RESTARTS: &str = "AND f.subject_kind = 'connector' AND f.kind = 'FAILED' AND NOT (f.evidence ? 'auto_restart')";
    let checks = format!(
        "FROM compatibility_checks k JOIN clusters c ON c.id = k.cluster_id
         LEFT JOIN review_domains rd ON rd.domain = k.domain
        WHERE k.decided_at >= $3 AND k.verdict = 'INCOMPATIBLE' AND COALESCE(k.domain, '') <> ''
          AND COALESCE(rd.autonomy, 'suggest') IN ('watch', 'suggest') AND {}",
        topic_in("k.cluster_id", "k.topic", "k.domain")
    );
    // Each source's first rows with how many it has in all (counted in
    // the same pass), on their own connections at once.
    let sources = [
        format!(
            "{SCOPE}, {FLAGS} SELECT 'flag' AS source, {FLAG_ROW}, count(*) OVER () AS total
             {flags} ORDER BY f.raised_at DESC, f.id DESC LIMIT $4"
        ),
        format!(
            "{SCOPE}, {FLAGS} SELECT 'restart' AS source, {FLAG_ROW}, count(*) OVER () AS total
             {flags} {RESTARTS} ORDER BY f.raised_at DESC, f.id DESC LIMIT $4"
        ),
        format!(
            "{SCOPE} SELECT 'check' AS source, k.id, k.domain, COALESCE(rd.autonomy, 'suggest') AS autonomy,
                c.name AS cluster, 'topic' AS subject_kind, k.topic AS subject, k.verdict AS kind,
                'check ' || k.id || ' of a ' || k.schema_type || ' schema by ' || k.submitted_by
                    || ' found it breaks a consumer' AS what,
                k.report AS evidence, k.decided_at AS at, count(*) OVER () AS total
             {checks} ORDER BY k.decided_at DESC, k.id DESC LIMIT $4"
        ),
    ];
    let [s0, s1, s2] = &sources;
    let (p0, p1, p2) = tokio::try_join!(
        receipt_rows(pool, w, limit, s0),
        receipt_rows(pool, w, limit, s1),
        receipt_rows(pool, w, limit, s2),
    )?;
    // An empty page is a source with none: the count rides on each row.
    let total = [&p0, &p1, &p2]
        .iter()
        .map(|p| p.first().map_or(0, |r| r.total))
        .sum();
    let rows = [p0, p1, p2].into_iter().flatten().map(|r| r.row).collect();
    Ok((rows, total))
}

/// A receipt with the number of its source's receipts in all.
#[derive(FromRow)]
struct CountedRow {
    #[sqlx(flatten)]
    row: ReceiptRow,
    total: i64,
}

async fn receipt_rows(
    pool: &PgPool,
    w: &Within<'_>,
    limit: i64,
    select: &str,
) -> Result<Vec<CountedRow>, sqlx::Error> {
    sqlx::query_as(select)
        .bind(w.kind.as_str())
        .bind(w.scope)
        .bind(w.from)
        .bind(limit)
        .fetch_all(pool)
        .await
}
