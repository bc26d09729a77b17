//! The pilot's SQL: its settings, and its figures' events read from the
//! records each flow keeps (flags, compatibility checks, review items,
//! lineage questions, connector restarts), within the pilot's scope ([`SCOPE`]).

use crate::platform::errors::Db;
use chrono::{DateTime, NaiveDate, Utc};
use sqlx::{FromRow, PgConnection, PgPool};
use streamkeeper::pilot::stats::{Count, Tally, Timed};
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
/// flag of a named cluster about no stream) and when its owner had it
/// (`reached_at`, the migration's `pilot_flag_reached`: its webhook's 2xx,
/// or a member seeing it in the app when the team has no webhook, or its
/// acknowledgment). A flag raised again for the trouble of one dismissed
/// before it is left out: one trouble counts once (`pilot_flag_repeat`).
/// A cluster scope takes every flag of its clusters; the others the flags
/// about their subjects, by an inner join on those few subjects, so a year
/// of flags is probed against them rather than hashed itself.
const FLAGS: &str = "fl AS (
    SELECT f.*, COALESCE(x.domain, '') AS domain, pilot_flag_reached(f) AS reached_at
      FROM flags f LEFT JOIN subjects x ON x.cluster_id = f.cluster_id
           AND x.kind = f.subject_kind AND x.subject = f.subject
     WHERE $1 = 'clusters' AND f.cluster_id IN (SELECT id FROM sc) AND NOT pilot_flag_repeat(f)
    UNION ALL
    SELECT f.*, x.domain, pilot_flag_reached(f)
      FROM flags f JOIN subjects x ON x.cluster_id = f.cluster_id
           AND x.kind = f.subject_kind AND x.subject = f.subject
     WHERE $1 <> 'clusters' AND NOT pilot_flag_repeat(f))";

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
/// and so in no scope). `reached_at`: when the last owner team had it (its
/// inbox lines when written, each webhook at its 2xx), `NULL` while a
/// webhook is not delivered (or was given up) and for a question that
/// reached no team (`no_owner`), which is no owner notified.
const QUESTIONS: &str = "lq AS (
    SELECT q.id, q.asked_at, q.answered_at, n.name AS topic,
           CASE WHEN n.cluster ~ '^[0-9]{1,18}$' THEN n.cluster::bigint END AS cluster_id,
           cardinality(q.teams) = 0 AS no_owner,
           CASE WHEN cardinality(q.teams) > 0 AND NOT EXISTS (
                    SELECT 1 FROM deliveries d
                     WHERE d.lineage_question_id = q.id AND d.delivered_at IS NULL)
                THEN GREATEST(q.notified_at, (SELECT max(d.delivered_at) FROM deliveries d
                                               WHERE d.lineage_question_id = q.id))
           END AS reached_at
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
/// `subject`, `domain`, `started_at`, `ended_at`), after [`SCOPE`], [`FLAGS`] and
/// [`QUESTIONS`]:
/// - lag flagged: a group's flag routed to a team, onset (when the trouble
///   began) → the owner had it (`reached_at` of [`FLAGS`]);
/// - change checked: a compatibility check, submitted → verdict;
/// - change through review: a producer change or schema registration
///   item, proposed → first approved or applied;
/// - lineage question answered, and its owners notified: a question
///   about a topic (`lineage_questions`, recorded by "notify owners"),
///   asked → answer shown, and asked → the last owner team had it
///   (`reached_at` of [`QUESTIONS`]).
fn timed_events() -> String {
    format!(
        "timed AS (
         SELECT 'lag_flagged' AS metric, 'flag:' || f.id AS reference, f.subject, f.domain,
                f.onset_at AS started_at, f.reached_at AS ended_at
           FROM fl f
          WHERE f.subject_kind = 'group' AND f.team_id IS NOT NULL AND f.onset_at >= $3
            AND f.reached_at IS NOT NULL
         UNION ALL
         SELECT 'change_checked', 'check:' || k.id, k.topic, k.domain, k.submitted_at, k.decided_at
           FROM compatibility_checks k
          WHERE k.submitted_at >= $3 AND {checks}
         UNION ALL
         SELECT 'change_reviewed', 'review-item:' || i.id, i.topic, i.domain, i.created_at,
                LEAST(i.approved_at, i.applied_at)
           FROM review_items i
          WHERE i.kind IN ('producer_change', 'schema_registration') AND i.created_at >= $3
            AND (i.approved_at IS NOT NULL OR i.applied_at IS NOT NULL) AND {items}
         UNION ALL
         SELECT 'lineage_answered', 'lineage-question:' || q.id, q.topic, '', q.asked_at, q.answered_at
           FROM lq q WHERE {questions}
         UNION ALL
         SELECT 'lineage_notified', 'lineage-question:' || q.id, q.topic, '', q.asked_at, q.reached_at
           FROM lq q WHERE q.reached_at IS NOT NULL AND {questions})",
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

/// `counted (what, domain, at)`: every counted event of the pilot's flags,
/// checks and items since $3 (flags raised, acknowledged and dismissed;
/// checks that found a breaking change; items applied), after [`SCOPE`]
/// and [`FLAGS`]. Connector restarts are read from their records
/// ([`tally`]).
fn counted_events() -> String {
    format!(
        "f AS (
            SELECT domain, raised_at, acknowledged_at, dismissed_at FROM fl
             WHERE raised_at >= $3 OR acknowledged_at >= $3 OR dismissed_at >= $3),
         counted (what, domain, at) AS (
         SELECT 'flags_raised', domain, raised_at FROM f WHERE raised_at >= $3
         UNION ALL SELECT 'flags_acknowledged', domain, acknowledged_at FROM f WHERE acknowledged_at >= $3
         UNION ALL SELECT 'flags_dismissed', domain, dismissed_at FROM f WHERE dismissed_at >= $3
         UNION ALL
         SELECT 'checks_breaking', k.domain, k.decided_at FROM compatibility_checks k
          WHERE k.verdict = 'INCOMPATIBLE' AND k.decided_at >= $3 AND {checks}
         UNION ALL
         SELECT 'changes_applied', i.domain, i.applied_at FROM review_items i
          WHERE i.applied_at >= $3 AND {items})",
        checks = topic_in("k.cluster_id", "k.topic", "k.domain"),
        items = topic_in("i.cluster_id", "i.topic", "i.domain"),
    )
}

/// Makes the day tally (`pilot_tally`) and the scope it was taken over
/// (`pilot_scope_*`) what the records say, when a change marked them stale
/// (the migration's triggers keep them current otherwise, in the
/// transaction of each record). Computed from the records with the same
/// queries as the events CSV. The record tables are locked (shared) while
/// it reads them, so no write falls between its read and its marking the
/// tally fresh.
pub async fn fresh(pool: &PgPool) -> Result<(), Db> {
    let fresh: bool = sqlx::query_scalar("SELECT fresh FROM pilot_tally_state")
        .fetch_one(pool)
        .await?;
    if fresh {
        return Ok(());
    }
    let mut tx = pool.begin().await?;
    sqlx::query("LOCK TABLE flags, compatibility_checks, review_items IN SHARE MODE")
        .execute(&mut *tx)
        .await?;
    // Another request may have rebuilt it while this one waited.
    let fresh: bool = sqlx::query_scalar("SELECT fresh FROM pilot_tally_state FOR UPDATE")
        .fetch_one(&mut *tx)
        .await?;
    if fresh {
        tx.commit().await?;
        return Ok(());
    }
    for table in [
        "pilot_tally",
        "pilot_scope_clusters",
        "pilot_scope_topics",
        "pilot_scope_subjects",
    ] {
        sqlx::query(&format!("DELETE FROM {table}"))
            .execute(&mut *tx)
            .await?;
    }
    if let Some(p) = sqlx::query_as::<_, (String, Vec<String>, NaiveDate)>(
        "SELECT scope_kind, scope, started_on FROM pilot WHERE id = 1",
    )
    .fetch_optional(&mut *tx)
    .await?
    {
        let from = p.2.and_time(chrono::NaiveTime::MIN).and_utc();
        let fill = [
            format!("{SCOPE} INSERT INTO pilot_scope_clusters SELECT id FROM sc"),
            format!(
                "{SCOPE} INSERT INTO pilot_scope_topics SELECT DISTINCT cluster_id, topic FROM st"
            ),
            format!(
                "{SCOPE} INSERT INTO pilot_scope_subjects SELECT cluster_id, kind, subject, domain
                 FROM subjects"
            ),
            format!(
                "{SCOPE}, {FLAGS}, {QUESTIONS}, {timed}
                 INSERT INTO pilot_tally (what, day, domain, ms, n)
                 SELECT metric, pilot_day(started_at), domain,
                        array_agg(pilot_ms(started_at, ended_at)), count(*)
                   FROM timed WHERE metric IN ('lag_flagged', 'change_checked', 'change_reviewed')
                  GROUP BY 1, 2, 3",
                timed = timed_events(),
            ),
            format!(
                "{SCOPE}, {FLAGS}, {counted}
                 INSERT INTO pilot_tally (what, day, domain, n)
                 SELECT what, pilot_day(at), domain, count(*) FROM counted GROUP BY 1, 2, 3",
                counted = counted_events(),
            ),
        ];
        for sql in &fill {
            sqlx::query(sql)
                .bind(&p.0)
                .bind(&p.1)
                .bind(from)
                .execute(&mut *tx)
                .await?;
        }
    }
    // The receipts' plans probe these by their statistics: a scope table
    // just refilled and never analysed reads as empty, and the planner
    // would hash a year of flags against it.
    sqlx::query("ANALYZE pilot_scope_clusters, pilot_scope_topics, pilot_scope_subjects")
        .execute(&mut *tx)
        .await?;
    sqlx::query("UPDATE pilot_tally_state SET fresh = true, rebuilt_at = now()")
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

/// Marks the tally stale and rebuilds it from the records (`streamkeeper
/// pilot rebuild`; the triggers keep it without this).
pub async fn rebuild(pool: &PgPool) -> Result<(), Db> {
    sqlx::query("UPDATE pilot_tally_state SET fresh = false")
        .execute(pool)
        .await?;
    fresh(pool).await
}

/// Whether a record of cluster `c` about topic `t` with domain `d` is in
/// the scope the tally was taken over (as [`topic_in`], on its tables).
fn topic_covered(c: &str, t: &str, d: &str) -> String {
    format!(
        "(EXISTS (SELECT 1 FROM pilot_scope_clusters s WHERE s.cluster_id = {c})
          OR EXISTS (SELECT 1 FROM pilot_scope_topics s WHERE s.cluster_id = {c} AND s.topic = {t})
          OR ($1 = 'domains' AND {d} = ANY ($2)))"
    )
}

/// The pilot's figures' events up to `now`'s UTC day, per day: the day
/// tally (call [`fresh`] first), and the lineage questions (with those
/// that reached no owner) and connector restarts, summed from their
/// records. The tally's grain is the day: an
/// event later on `now`'s day than `now` counts (only a `now` in the past
/// can see one).
pub async fn tally(pool: &PgPool, w: &Within<'_>, now: DateTime<Utc>) -> Result<Tally, Db> {
    let rows: Vec<(String, NaiveDate, Vec<i64>, i64)> = until(
        pool,
        w,
        now,
        &format!(
            "WITH {QUESTIONS}
         SELECT what, day, ms, n FROM pilot_tally WHERE day >= pilot_day($3) AND day <= pilot_day($4)
         UNION ALL
         SELECT metric, pilot_day(asked_at), array_agg(pilot_ms(asked_at, ended_at)), count(*)
           FROM (SELECT 'lineage_answered' AS metric, q.asked_at, q.answered_at AS ended_at, q.cluster_id, q.topic
                   FROM lq q
                 UNION ALL
                 SELECT 'lineage_notified', q.asked_at, q.reached_at, q.cluster_id, q.topic
                   FROM lq q WHERE q.reached_at IS NOT NULL) q
          WHERE q.asked_at <= $4 AND {questions}
          GROUP BY 1, 2
         UNION ALL
         SELECT 'questions_reached_no_owner', pilot_day(q.asked_at), '{{}}', count(*) FROM lq q
          WHERE q.no_owner AND q.asked_at <= $4 AND {questions}
          GROUP BY 2
         UNION ALL
         SELECT 'connector_restarts', pilot_day(r.at), '{{}}', count(*) FROM connector_restarts r
           JOIN connectors cn ON cn.id = r.connector_id
           JOIN connect_clusters cc ON cc.id = cn.connect_id
          WHERE r.at >= $3 AND r.at <= $4
            AND (EXISTS (SELECT 1 FROM pilot_scope_clusters s WHERE s.cluster_id = cc.cluster_id)
                 OR EXISTS (SELECT 1 FROM pilot_scope_subjects x WHERE x.cluster_id = cc.cluster_id
                               AND x.kind = 'connector' AND x.subject = cc.name || '/' || cn.name))
          GROUP BY 2",
            questions = topic_covered("q.cluster_id", "q.topic", "NULL::text"),
        ),
    )
    .await?;
    let mut t = Tally::default();
    for (what, day, ms, n) in rows {
        if let Ok(metric) = what.parse::<Metric>() {
            t.durations.entry((day, metric)).or_default().extend(ms);
        } else if let Some(count) = Count::ALL.into_iter().find(|c| c.as_str() == what) {
            *t.counts.entry((day, count)).or_default() += n.unsigned_abs();
        }
    }
    Ok(t)
}

/// Each domain of the pilot's streams (and each the scope names), its
/// level now and its review record since the start, within the pilot's
/// scope and by the time of each decision: approvals given, items
/// rejected, flags dismissed as wrong (a flag raised again for a dismissed
/// one's trouble counts once, as in [`FLAGS`]).
pub async fn domains(pool: &PgPool, w: &Within<'_>) -> Result<Vec<DomainRecord>, Db> {
    let rows: Vec<(String, String, i64, i64, i64)> = sqlx::query_as(&format!(
        "{SCOPE}, {FLAGS}, d AS (
            SELECT domain FROM st WHERE domain <> ''
            UNION SELECT x FROM unnest($2::text[]) x WHERE $1 = 'domains'),
         approvals AS (
            SELECT i.domain, count(*) AS n FROM review_approvals a JOIN review_items i ON i.id = a.item_id
             WHERE a.approved_at >= $3 AND {items} GROUP BY 1),
         rejections AS (
            SELECT i.domain, count(*) AS n FROM review_items i
             WHERE i.rejected_at >= $3 AND {items} GROUP BY 1),
         dismissals AS (
            SELECT domain, count(*) AS n FROM fl WHERE dismissed_at >= $3 GROUP BY 1)
         -- Each count once over its table, joined by domain (not asked per domain).
         SELECT d.domain, COALESCE(rd.autonomy, 'suggest'), COALESCE(a.n, 0), COALESCE(r.n, 0),
                COALESCE(x.n, 0)
           FROM d LEFT JOIN review_domains rd ON rd.domain = d.domain
           LEFT JOIN approvals a ON a.domain = d.domain
           LEFT JOIN rejections r ON r.domain = d.domain
           LEFT JOIN dismissals x ON x.domain = d.domain
          ORDER BY d.domain",
        items = topic_in("i.cluster_id", "i.topic", "i.domain"),
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
    // A flag's domain is its subject's; one outside every stream has none
    // and so is in no domain's receipts. On the scope the tally was taken
    // over (call [`fresh`] first): the flags newest first, each probed
    // against the scope's subjects, stop at the page.
    const FLAGS_IN: &str = "FROM flags f
         JOIN pilot_scope_subjects x ON x.cluster_id = f.cluster_id
              AND x.kind = f.subject_kind AND x.subject = f.subject
         JOIN clusters c ON c.id = f.cluster_id
         LEFT JOIN review_domains rd ON rd.domain = x.domain
        WHERE f.raised_at >= $3 AND x.domain <> ''
          AND COALESCE(rd.autonomy, 'suggest') IN ('watch', 'suggest')";
    const FLAG_ROW: &str = "f.id, x.domain, COALESCE(rd.autonomy, 'suggest') AS autonomy,
                c.name AS cluster, f.subject_kind, f.subject, f.kind, f.reason AS what, f.evidence,
                f.raised_at AS at";
    const RESTARTS: &str = "AND f.subject_kind = 'connector' AND f.kind = 'FAILED' AND NOT (f.evidence ? 'auto_restart')";
    let checks = format!(
        "FROM compatibility_checks k JOIN clusters c ON c.id = k.cluster_id
         LEFT JOIN review_domains rd ON rd.domain = k.domain
        WHERE k.decided_at >= $3 AND k.verdict = 'INCOMPATIBLE' AND COALESCE(k.domain, '') <> ''
          AND COALESCE(rd.autonomy, 'suggest') IN ('watch', 'suggest') AND {}",
        topic_covered("k.cluster_id", "k.topic", "k.domain")
    );
    // The few restarts and breaking checks come with how many there are in
    // all (counted in the same pass); the flags' count is the day tally's
    // flags raised in those domains. Each on its own connection, at once.
    let flags = format!(
        "SELECT 'flag' AS source, {FLAG_ROW}, 0::bigint AS total {FLAGS_IN}
          ORDER BY f.raised_at DESC, f.id DESC LIMIT $4"
    );
    let restarts = format!(
        "SELECT 'restart' AS source, {FLAG_ROW}, count(*) OVER () AS total
         {FLAGS_IN} {RESTARTS} ORDER BY f.raised_at DESC, f.id DESC LIMIT $4"
    );
    let breaking = format!(
        "SELECT 'check' AS source, k.id, k.domain, COALESCE(rd.autonomy, 'suggest') AS autonomy,
                c.name AS cluster, 'topic' AS subject_kind, k.topic AS subject, k.verdict AS kind,
                'check ' || k.id || ' of a ' || k.schema_type || ' schema by ' || k.submitted_by
                    || ' found it breaks a consumer' AS what,
                k.report AS evidence, k.decided_at AS at, count(*) OVER () AS total
         {checks} ORDER BY k.decided_at DESC, k.id DESC LIMIT $4"
    );
    let flag_total = sqlx::query_scalar::<_, i64>(
        "SELECT COALESCE(sum(t.n), 0)::bigint FROM pilot_tally t
           LEFT JOIN review_domains rd ON rd.domain = t.domain
          WHERE t.what = 'flags_raised' AND t.day >= pilot_day($1) AND t.domain <> ''
            AND COALESCE(rd.autonomy, 'suggest') IN ('watch', 'suggest')",
    )
    .bind(w.from)
    .fetch_one(pool);
    let (p0, p1, p2, flag_total) = tokio::try_join!(
        receipt_rows(pool, w, limit, &flags),
        receipt_rows(pool, w, limit, &restarts),
        receipt_rows(pool, w, limit, &breaking),
        flag_total,
    )?;
    // An empty page is a source with none: the count rides on each row.
    let total = flag_total
        + [&p1, &p2]
            .iter()
            .map(|p| p.first().map_or(0, |r| r.total))
            .sum::<i64>();
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
