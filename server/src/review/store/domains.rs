//! The review domains: their settings (how many approvals, the autonomy
//! level), their approvers, and which domain a stream belongs to.

use crate::platform::errors::Db;
use chrono::{DateTime, Utc};
use sqlx::{FromRow, PgConnection, PgPool};

#[derive(Debug, Clone, FromRow)]
pub struct DomainRow {
    pub domain: String,
    pub autonomy: String,
    pub required_approvals: i16,
    pub updated_by: String,
    pub updated_at: DateTime<Utc>,
}

pub async fn domain(pool: &PgPool, domain: &str) -> Result<Option<DomainRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT domain, autonomy, required_approvals, updated_by, updated_at
         FROM review_domains WHERE domain = $1",
    )
    .bind(domain)
    .fetch_optional(pool)
    .await?)
}

/// Every domain a stream names or an admin configured, with its settings
/// (absent when never configured) and its number of streams.
#[derive(Debug, Clone, FromRow)]
pub struct DomainListRow {
    pub domain: String,
    pub autonomy: Option<String>,
    pub required_approvals: Option<i16>,
    pub updated_by: Option<String>,
    pub updated_at: Option<DateTime<Utc>>,
    pub streams: i64,
    pub approver_users: Vec<String>,
    pub approver_teams: Vec<String>,
    pub effective: Vec<String>,
}

/// The users who can approve in `domain` now: not disabled, holding the
/// approver role, named themselves or members of a named team.
const EFFECTIVE: &str = "SELECT u.id, u.username FROM users u
    WHERE NOT u.disabled AND 'approver' = ANY (u.roles)
      AND (u.id IN (SELECT user_id FROM domain_approvers WHERE domain = $1 AND user_id IS NOT NULL)
           OR u.id IN (SELECT m.user_id FROM memberships m
                       JOIN domain_approvers d ON d.team_id = m.team_id WHERE d.domain = $1))";

pub async fn domains(pool: &PgPool) -> Result<Vec<DomainListRow>, Db> {
    Ok(sqlx::query_as(
        "WITH names AS (
             SELECT domain FROM review_domains
             UNION SELECT domain FROM streams WHERE domain <> '')
         SELECT n.domain, d.autonomy, d.required_approvals, d.updated_by, d.updated_at,
             (SELECT count(*) FROM streams s WHERE s.domain = n.domain) AS streams,
             ARRAY(SELECT u.username FROM domain_approvers a JOIN users u ON u.id = a.user_id
                   WHERE a.domain = n.domain ORDER BY u.username) AS approver_users,
             ARRAY(SELECT t.name FROM domain_approvers a JOIN teams t ON t.id = a.team_id
                   WHERE a.domain = n.domain ORDER BY t.name) AS approver_teams,
             ARRAY(SELECT u.username FROM users u
                   WHERE NOT u.disabled AND 'approver' = ANY (u.roles)
                     AND (u.id IN (SELECT user_id FROM domain_approvers WHERE domain = n.domain)
                          OR u.id IN (SELECT m.user_id FROM memberships m
                                      JOIN domain_approvers a ON a.team_id = m.team_id
                                      WHERE a.domain = n.domain))
                   ORDER BY u.username) AS effective
         FROM names n LEFT JOIN review_domains d ON d.domain = n.domain
         ORDER BY n.domain",
    )
    .fetch_all(pool)
    .await?)
}

/// The ids of whoever can approve in `domain` now, in id order.
pub async fn effective_approvers(conn: &mut PgConnection, domain: &str) -> Result<Vec<i64>, Db> {
    Ok(
        sqlx::query_scalar(&format!("SELECT id FROM ({EFFECTIVE}) e ORDER BY id"))
            .bind(domain)
            .fetch_all(conn)
            .await?,
    )
}

pub async fn set_domain(
    conn: &mut PgConnection,
    domain: &str,
    autonomy: &str,
    required: i16,
    users: &[i64],
    teams: &[i64],
    by: &str,
) -> Result<(), Db> {
    sqlx::query(
        "INSERT INTO review_domains (domain, autonomy, required_approvals, updated_by)
         VALUES ($1, $2, $3, $4)
         ON CONFLICT (domain) DO UPDATE SET autonomy = EXCLUDED.autonomy,
             required_approvals = EXCLUDED.required_approvals,
             updated_by = EXCLUDED.updated_by, updated_at = now()",
    )
    .bind(domain)
    .bind(autonomy)
    .bind(required)
    .bind(by)
    .execute(&mut *conn)
    .await?;
    sqlx::query("DELETE FROM domain_approvers WHERE domain = $1")
        .bind(domain)
        .execute(&mut *conn)
        .await?;
    sqlx::query(
        "INSERT INTO domain_approvers (domain, user_id)
         SELECT $1, unnest($2::bigint[])",
    )
    .bind(domain)
    .bind(users)
    .execute(&mut *conn)
    .await?;
    Ok(sqlx::query(
        "INSERT INTO domain_approvers (domain, team_id)
         SELECT $1, unnest($2::bigint[])",
    )
    .bind(domain)
    .bind(teams)
    .execute(&mut *conn)
    .await
    .map(drop)?)
}

/// A stream's domain and owner team, if it is in the catalog.
pub async fn stream_domain(
    pool: &PgPool,
    cluster_id: i64,
    topic: &str,
) -> Result<Option<(String, Option<i64>)>, Db> {
    Ok(sqlx::query_as(
        "SELECT domain, owner_team_id FROM streams WHERE cluster_id = $1 AND topic = $2",
    )
    .bind(cluster_id)
    .bind(topic)
    .fetch_optional(pool)
    .await?)
}

/// The stream's domain, read under a share lock held until the caller's
/// transaction ends, so an admin cannot move the stream while a proposal
/// made under its domain is being stored.
pub async fn stream_domain_locked(
    conn: &mut PgConnection,
    cluster_id: i64,
    topic: &str,
) -> Result<Option<String>, Db> {
    Ok(sqlx::query_scalar(
        "SELECT domain FROM streams WHERE cluster_id = $1 AND topic = $2 FOR SHARE",
    )
    .bind(cluster_id)
    .bind(topic)
    .fetch_optional(conn)
    .await?)
}
