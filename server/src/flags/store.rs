//! Flags, ownership and webhook deliveries.

use crate::platform::errors::Db;
use chrono::{DateTime, Utc};
use sqlx::{FromRow, PgConnection, PgPool};
use std::collections::{BTreeMap, HashMap};
use streamkeeper::flags::FlagColumn;
use streamkeeper::flags::{FlagKey, Observation};
use streamkeeper::platform::page::{Page, PageRequest};
use streamkeeper::platform::sort::Sorted;

/// A flag that stands for its key on a cluster: live (open or
/// acknowledged) or dismissed and still holding its trouble back.
#[derive(Debug, Clone, FromRow)]
pub struct StandingRow {
    pub id: i64,
    pub subject_kind: String,
    pub subject: String,
    pub rule: String,
    pub kind: String,
    pub state: String,
    pub snoozed_until: Option<DateTime<Utc>>,
}

/// The flags that stand on a cluster (see [`StandingRow`]).
pub async fn standing(pool: &PgPool, cluster_id: i64) -> Result<Vec<StandingRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT id, subject_kind, subject, rule, kind, state, snoozed_until FROM flags
         WHERE cluster_id = $1
           AND (state IN ('open', 'acknowledged') OR (state = 'dismissed' AND released_at IS NULL))",
    )
    .bind(cluster_id)
    .fetch_all(pool)
    .await?)
}

/// Live (open or acknowledged) flags of a cluster: key → (id, kind).
pub async fn live(pool: &PgPool, cluster_id: i64) -> Result<BTreeMap<FlagKey, (i64, String)>, Db> {
    let rows: Vec<(i64, String, String, String, String)> = sqlx::query_as(
        "SELECT id, subject_kind, subject, rule, kind FROM flags
         WHERE cluster_id = $1 AND state IN ('open', 'acknowledged')",
    )
    .bind(cluster_id)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, subject_kind, subject, rule, kind)| {
            (
                FlagKey {
                    subject_kind,
                    subject,
                    rule,
                },
                (id, kind),
            )
        })
        .collect())
}

/// A dismissal stops holding its trouble back.
pub async fn release(pool: &PgPool, id: i64) -> Result<(), Db> {
    Ok(sqlx::query(
        "UPDATE flags SET released_at = streamkeeper_now(), updated_at = streamkeeper_now()
         WHERE id = $1 AND state = 'dismissed' AND released_at IS NULL",
    )
    .bind(id)
    .execute(pool)
    .await
    .map(drop)?)
}

/// The evidence of the live lag flags of a cluster's groups (of one group
/// when named), by group: it keeps how long their partitions stood still.
pub async fn lag_evidence(
    pool: &PgPool,
    cluster_id: i64,
    group: Option<&str>,
) -> Result<HashMap<String, serde_json::Value>, Db> {
    let rows: Vec<(String, serde_json::Value)> = sqlx::query_as(
        "SELECT subject, evidence FROM flags
         WHERE cluster_id = $1 AND state IN ('open', 'acknowledged')
           AND subject_kind = 'group' AND rule = 'lag' AND ($2::text IS NULL OR subject = $2)",
    )
    .bind(cluster_id)
    .bind(group)
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().collect())
}

pub async fn raise(
    conn: &mut PgConnection,
    cluster_id: i64,
    o: &Observation,
    team_id: Option<i64>,
) -> Result<i64, Db> {
    Ok(sqlx::query_scalar(
        "INSERT INTO flags (cluster_id, subject_kind, subject, rule, kind, team_id, reason, evidence, onset_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id",
    )
    .bind(cluster_id)
    .bind(&o.key.subject_kind)
    .bind(&o.key.subject)
    .bind(&o.key.rule)
    .bind(&o.kind)
    .bind(team_id)
    .bind(&o.reason)
    .bind(&o.evidence)
    .bind(DateTime::from_timestamp_millis(o.onset_ms).unwrap_or_else(crate::platform::clock::now))
    .fetch_one(conn)
    .await?)
}

/// Updates many flags in one statement (flag id, what was observed now,
/// whether its receipts are written too; else they stay as they were):
/// after a pass of a large cluster most of its live flags are still there,
/// and a statement each costs a round trip each (BENCHMARKS.md). The
/// evidence travels as JSON text, cast to jsonb in the statement.
pub async fn update_many(pool: &PgPool, flags: &[(i64, &Observation, bool)]) -> Result<(), Db> {
    if flags.is_empty() {
        return Ok(());
    }
    let ids: Vec<i64> = flags.iter().map(|(id, _, _)| *id).collect();
    let kinds: Vec<&str> = flags.iter().map(|(_, o, _)| o.kind.as_str()).collect();
    let reasons: Vec<&str> = flags.iter().map(|(_, o, _)| o.reason.as_str()).collect();
    let evidence: Vec<Option<String>> = flags
        .iter()
        .map(|(_, o, write)| write.then(|| o.evidence.to_string()))
        .collect();
    Ok(sqlx::query(
        "UPDATE flags f SET kind = u.kind, reason = u.reason,
            evidence = COALESCE(u.evidence::jsonb, f.evidence), updated_at = streamkeeper_now()
         FROM UNNEST($1::bigint[], $2::text[], $3::text[], $4::text[]) AS u(id, kind, reason, evidence)
         WHERE f.id = u.id",
    )
    .bind(&ids)
    .bind(&kinds)
    .bind(&reasons)
    .bind(&evidence)
    .execute(pool)
    .await
    .map(drop)?)
}

pub async fn resolve(conn: &mut PgConnection, id: i64) -> Result<(), Db> {
    Ok(sqlx::query("UPDATE flags SET state = 'resolved', resolved_at = streamkeeper_now(), updated_at = streamkeeper_now() WHERE id = $1")
        .bind(id)
        .execute(conn)
        .await
        .map(drop)?)
}

/// Marks a flag notified (first notification only).
pub async fn mark_notified(conn: &mut PgConnection, id: i64) -> Result<(), Db> {
    Ok(sqlx::query(
        "UPDATE flags SET notified_at = COALESCE(notified_at, streamkeeper_now()) WHERE id = $1",
    )
    .bind(id)
    .execute(conn)
    .await
    .map(drop)?)
}

/// Queues the webhook that tells one transition of a flag (`raise`,
/// `worsen`, `resolve`, `restart`), in the transaction that makes it.
pub async fn enqueue(
    conn: &mut PgConnection,
    flag_id: i64,
    transition: &str,
    url: &str,
    body: &serde_json::Value,
) -> Result<(), Db> {
    Ok(sqlx::query(
        "INSERT INTO deliveries (flag_id, transition, url, body) VALUES ($1, $2, $3, $4)",
    )
    .bind(flag_id)
    .bind(transition)
    .bind(url)
    .bind(body)
    .execute(conn)
    .await
    .map(drop)?)
}

/// The given owner team, else the platform team, with its webhook.
pub async fn route_owner(
    pool: &PgPool,
    owner: Option<i64>,
) -> Result<Option<(i64, String, Option<String>)>, Db> {
    Ok(sqlx::query_as(
        "SELECT t.id, t.name, t.webhook_url FROM teams t
         WHERE t.id = COALESCE($1, (SELECT value::bigint FROM settings WHERE key = 'platform_team_id'))",
    )
    .bind(owner)
    .fetch_optional(pool)
    .await?)
}

#[derive(Debug, Clone, FromRow)]
pub struct FlagRow {
    pub id: i64,
    pub cluster_id: i64,
    pub cluster: String,
    pub subject_kind: String,
    pub subject: String,
    pub kind: String,
    pub state: String,
    pub team_id: Option<i64>,
    pub team: Option<String>,
    pub reason: String,
    pub evidence: serde_json::Value,
    pub onset_at: DateTime<Utc>,
    pub raised_at: DateTime<Utc>,
    pub notified_at: Option<DateTime<Utc>>,
    pub acknowledged_at: Option<DateTime<Utc>>,
    pub acknowledged_by: Option<String>,
    pub dismissed_at: Option<DateTime<Utc>>,
    pub dismissed_by: Option<String>,
    pub dismissed_reason: Option<String>,
    pub dismissal: Option<String>,
    pub snoozed_until: Option<DateTime<Utc>>,
    pub released_at: Option<DateTime<Utc>>,
    pub resolved_at: Option<DateTime<Utc>>,
}

const SELECT: &str =
    "SELECT f.id, f.cluster_id, c.name AS cluster, f.subject_kind, f.subject, f.kind, f.state,
        f.team_id, t.name AS team, f.reason, f.evidence, f.onset_at, f.raised_at, f.notified_at,
        f.acknowledged_at, f.acknowledged_by, f.dismissed_at, f.dismissed_by, f.dismissed_reason,
        f.dismissal, f.snoozed_until, f.released_at, f.resolved_at
    FROM flags f JOIN clusters c ON c.id = f.cluster_id AND c.removed_at IS NULL
    LEFT JOIN teams t ON t.id = f.team_id";

pub async fn by_id(pool: &PgPool, id: i64) -> Result<Option<FlagRow>, Db> {
    Ok(sqlx::query_as(&format!("{SELECT} WHERE f.id = $1"))
        .bind(id)
        .fetch_optional(pool)
        .await?)
}

pub async fn lock(conn: &mut PgConnection, id: i64) -> Result<Option<(String, Option<i64>)>, Db> {
    Ok(
        sqlx::query_as("SELECT state, team_id FROM flags WHERE id = $1 FOR UPDATE")
            .bind(id)
            .fetch_optional(conn)
            .await?,
    )
}

/// `ORDER BY` of a list of flags: each column's keys, then the id.
fn flag_order(order: Sorted<FlagColumn>) -> String {
    let keys: &[&'static str] = match order.column {
        FlagColumn::Kind => &["f.kind"],
        FlagColumn::Subject => &["f.subject_kind", "f.subject"],
        FlagColumn::Cluster => &["c.name"],
        FlagColumn::Team => &["t.name"],
        FlagColumn::State => &["f.state"],
        FlagColumn::Since => &["f.onset_at"],
        FlagColumn::Raised => &["f.raised_at", "f.id"],
    };
    crate::store::order_by(keys, order.descending, "f.id")
}

/// Flags of the given teams (all teams when `teams` is `None`) in `order`
/// (the latest raised first by default); `live_only` keeps open and
/// acknowledged ones.
pub async fn list(
    pool: &PgPool,
    teams: Option<&[i64]>,
    live_only: bool,
    order: Sorted<FlagColumn>,
    page: PageRequest,
) -> Result<Page<FlagRow>, Db> {
    // A removed cluster's flags are kept (the pilot reads them) but listed
    // only once it is restored.
    const WHERE: &str = "($1::bigint[] IS NULL OR f.team_id = ANY($1))
        AND (NOT $2 OR f.state IN ('open', 'acknowledged'))
        AND f.cluster_id IN (SELECT id FROM clusters WHERE removed_at IS NULL)";
    let total: i64 = sqlx::query_scalar(&format!("SELECT count(*) FROM flags f WHERE {WHERE}"))
        .bind(teams)
        .bind(live_only)
        .fetch_one(pool)
        .await?;
    let rows: Vec<FlagRow> = sqlx::query_as(&format!(
        "{SELECT} WHERE {WHERE} ORDER BY {} LIMIT $3 OFFSET $4",
        flag_order(order)
    ))
    .bind(teams)
    .bind(live_only)
    .bind(page.limit())
    .bind(page.offset())
    .fetch_all(pool)
    .await?;
    Ok(Page::new(rows, page, total.unsigned_abs()))
}

/// Records that a member of their team saw these flags in the app (the
/// first time only): for a team without a webhook that is when its owner
/// had the flag (the pilot's "lag flagged" ends there). `teams` are the
/// viewer's teams; flags of other teams are left as they are.
pub async fn mark_seen(pool: &PgPool, ids: &[i64], teams: &[i64]) -> Result<(), Db> {
    if ids.is_empty() || teams.is_empty() {
        return Ok(());
    }
    Ok(sqlx::query(
        "UPDATE flags SET seen_at = streamkeeper_now()
         WHERE id = ANY($1) AND team_id = ANY($2) AND seen_at IS NULL",
    )
    .bind(ids)
    .bind(teams)
    .execute(pool)
    .await
    .map(drop)?)
}

pub async fn acknowledge(conn: &mut PgConnection, id: i64, by: &str) -> Result<(), Db> {
    Ok(sqlx::query(
        "UPDATE flags SET state = 'acknowledged', acknowledged_at = streamkeeper_now(), acknowledged_by = $2, updated_at = streamkeeper_now()
         WHERE id = $1",
    )
    .bind(id)
    .bind(by)
    .execute(conn)
    .await
    .map(drop)?)
}

/// A dismissal: why (`wrong` or `expected`), the reason in words, and
/// the snooze's end if any.
pub struct Dismissal<'a> {
    pub by: &'a str,
    pub kind: &'a str,
    pub reason: &'a str,
    pub snoozed_until: Option<DateTime<Utc>>,
}

pub async fn dismiss(conn: &mut PgConnection, id: i64, d: &Dismissal<'_>) -> Result<(), Db> {
    // One dismissal holds a trouble back at a time (`flags_one_held`): a
    // newer flag of the same trouble dismissed takes the hold over from an
    // older one, which is released first (a second statement: a unique
    // index is checked row by row, not at the end of one statement).
    sqlx::query(
        "UPDATE flags o SET released_at = streamkeeper_now()
         FROM flags f
         WHERE f.id = $1 AND o.id <> f.id AND o.cluster_id = f.cluster_id
           AND o.subject_kind = f.subject_kind AND o.subject = f.subject AND o.rule = f.rule
           AND o.state = 'dismissed' AND o.released_at IS NULL",
    )
    .bind(id)
    .execute(&mut *conn)
    .await?;
    Ok(sqlx::query(
        "UPDATE flags SET state = 'dismissed', dismissed_at = streamkeeper_now(), dismissed_by = $2,
             dismissal = $3, dismissed_reason = $4, snoozed_until = $5, updated_at = streamkeeper_now()
         WHERE id = $1",
    )
    .bind(id)
    .bind(d.by)
    .bind(d.kind)
    .bind(d.reason)
    .bind(d.snoozed_until)
    .execute(conn)
    .await
    .map(drop)?)
}

#[derive(Debug, Clone, FromRow)]
pub struct Delivery {
    pub id: i64,
    /// `None` for a review item's notice or a question's.
    pub flag_id: Option<i64>,
    pub transition: String,
    pub idempotency_key: String,
    pub url: String,
    pub body: serde_json::Value,
    pub attempts: i32,
}

/// Claims up to `n` due deliveries for `lease_s` seconds, in a statement
/// of its own: rows another replica is claiming are skipped, rows it
/// claimed are left until its claim runs out.
pub async fn claim(pool: &PgPool, n: i64, lease_s: i64) -> Result<Vec<Delivery>, Db> {
    Ok(sqlx::query_as(
        "UPDATE deliveries SET claimed_until = streamkeeper_now() + make_interval(secs => $2)
         WHERE id IN (
            SELECT id FROM deliveries
             WHERE delivered_at IS NULL AND failed_at IS NULL AND next_attempt_at <= streamkeeper_now()
               AND (claimed_until IS NULL OR claimed_until < streamkeeper_now())
             ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
         RETURNING id, flag_id, transition, idempotency_key, url, body, attempts",
    )
    .bind(n)
    .bind(lease_s as f64)
    .fetch_all(pool)
    .await?)
}

/// Records a delivery's 2xx at `at`, in its own short transaction; a
/// raise's first 2xx is when the owner was notified.
pub async fn delivered(pool: &PgPool, d: &Delivery, at: DateTime<Utc>) -> Result<(), Db> {
    let mut tx = pool.begin().await?;
    sqlx::query(
        "UPDATE deliveries SET delivered_at = $2, attempts = attempts + 1, claimed_until = NULL
         WHERE id = $1",
    )
    .bind(d.id)
    .bind(at)
    .execute(&mut *tx)
    .await?;
    if let (Some(flag), "raise") = (d.flag_id, d.transition.as_str()) {
        sqlx::query("UPDATE flags SET notified_at = COALESCE(notified_at, $2) WHERE id = $1")
            .bind(flag)
            .bind(at)
            .execute(&mut *tx)
            .await?;
    }
    Ok(tx.commit().await?)
}

/// When the earliest delivery not yet sent or given up is due, if before
/// `until` (the history player waits for it: `demo_history`).
pub async fn next_due_before(
    conn: &mut PgConnection,
    until: DateTime<Utc>,
) -> Result<Option<DateTime<Utc>>, Db> {
    Ok(sqlx::query_scalar(
        "SELECT min(next_attempt_at) FROM deliveries
         WHERE delivered_at IS NULL AND failed_at IS NULL AND next_attempt_at < $1",
    )
    .bind(until)
    .fetch_one(conn)
    .await?)
}

/// Records a failed attempt; after `max` attempts the delivery is given up.
pub async fn retry_later(
    pool: &PgPool,
    d: &Delivery,
    error: &str,
    backoff_s: i64,
    max: i32,
) -> Result<(), Db> {
    Ok(sqlx::query(
        "UPDATE deliveries SET attempts = attempts + 1, last_error = $2, claimed_until = NULL,
             next_attempt_at = streamkeeper_now() + make_interval(secs => $3),
             failed_at = CASE WHEN attempts + 1 >= $4 THEN streamkeeper_now() END
         WHERE id = $1",
    )
    .bind(d.id)
    .bind(error)
    .bind(backoff_s as f64)
    .bind(max)
    .execute(pool)
    .await
    .map(drop)?)
}

/// Live flags counted by cluster, kind and state, for `/metrics`.
#[derive(Debug, Clone, FromRow)]
pub struct FlagCountRow {
    pub cluster: String,
    pub kind: String,
    pub state: String,
    pub routed: bool,
    pub n: i64,
}

pub async fn live_counts(pool: &PgPool) -> Result<Vec<FlagCountRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT c.name AS cluster, f.kind, f.state, f.team_id IS NOT NULL AS routed, count(*) AS n
         FROM flags f JOIN clusters c ON c.id = f.cluster_id AND c.removed_at IS NULL
         WHERE f.state IN ('open', 'acknowledged')
         GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4",
    )
    .fetch_all(pool)
    .await?)
}

/// Webhook deliveries by state, for `/metrics`.
#[derive(Debug, Clone, FromRow)]
pub struct DeliveryCountRow {
    pub state: String,
    pub n: i64,
}

pub async fn delivery_counts(pool: &PgPool) -> Result<Vec<DeliveryCountRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT CASE WHEN delivered_at IS NOT NULL THEN 'delivered'
                     WHEN failed_at IS NOT NULL THEN 'failed'
                     ELSE 'pending' END AS state, count(*) AS n
         FROM deliveries GROUP BY 1 ORDER BY 1",
    )
    .fetch_all(pool)
    .await?)
}
