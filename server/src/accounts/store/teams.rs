//! Teams and their memberships.

use chrono::{DateTime, Utc};
use sqlx::{FromRow, PgConnection, PgPool};
use streamkeeper::platform::page::{Page, PageRequest};
use streamkeeper_app::accounts::model::{TeamSummary, UserSummary};

use super::users::UserRow;
use crate::platform::errors::Db;

#[derive(Debug, Clone, FromRow)]
struct TeamRow {
    id: i64,
    name: String,
    description: String,
    members: i64,
    created_at: DateTime<Utc>,
    webhook_url: Option<String>,
    platform: bool,
}

impl From<TeamRow> for TeamSummary {
    fn from(t: TeamRow) -> Self {
        TeamSummary {
            id: t.id,
            name: t.name,
            description: t.description,
            members: t.members,
            created_at: t.created_at,
            webhook_host: t
                .webhook_url
                .as_deref()
                .and_then(|u| url::Url::parse(u).ok())
                .and_then(|u| u.host_str().map(str::to_owned)),
            platform: t.platform,
        }
    }
}

const SELECT: &str = "SELECT t.id, t.name, t.description, t.created_at, t.webhook_url,
        (SELECT count(*) FROM memberships m WHERE m.team_id = t.id) AS members,
        COALESCE(t.id = (SELECT value::bigint FROM settings WHERE key = 'platform_team_id'), false)
            AS platform
    FROM teams t";

pub async fn by_id(pool: &PgPool, id: i64) -> Result<Option<TeamSummary>, Db> {
    let row: Option<TeamRow> = sqlx::query_as(&format!("{SELECT} WHERE t.id = $1"))
        .bind(id)
        .fetch_optional(pool)
        .await?;
    Ok(row.map(Into::into))
}

pub async fn list(pool: &PgPool, page: PageRequest) -> Result<Page<TeamSummary>, Db> {
    let total: i64 = sqlx::query_scalar("SELECT count(*) FROM teams")
        .fetch_one(pool)
        .await?;
    let rows: Vec<TeamRow> =
        sqlx::query_as(&format!("{SELECT} ORDER BY t.name LIMIT $1 OFFSET $2"))
            .bind(page.limit())
            .bind(page.offset())
            .fetch_all(pool)
            .await?;
    Ok(Page::new(
        rows.into_iter().map(Into::into).collect(),
        page,
        total.unsigned_abs(),
    ))
}

pub async fn insert(
    conn: &mut PgConnection,
    name: &str,
    description: &str,
) -> Result<TeamSummary, Db> {
    let row: TeamRow = sqlx::query_as(
        "INSERT INTO teams (name, description) VALUES ($1, $2)
         RETURNING id, name, description, created_at, 0::bigint AS members,
                   webhook_url, false AS platform",
    )
    .bind(name)
    .bind(description)
    .fetch_one(conn)
    .await?;
    Ok(row.into())
}

pub async fn members(pool: &PgPool, team_id: i64) -> Result<Vec<UserSummary>, Db> {
    let rows: Vec<UserRow> = sqlx::query_as(
        "SELECT u.id, u.username, u.display_name, u.password_hash, u.roles, u.disabled,
                u.session_epoch, u.created_at, u.must_change_password, u.totp_secret, u.totp_sealed,
                u.totp_last_step, u.totp_pending_seed, u.oidc_subject, u.time_zone
         FROM users u JOIN memberships m ON m.user_id = u.id
         WHERE m.team_id = $1 ORDER BY u.username",
    )
    .bind(team_id)
    .fetch_all(pool)
    .await?;
    Ok(rows.iter().map(UserRow::summary).collect())
}

/// Adds a membership; `false` when it already existed.
pub async fn add_member(conn: &mut PgConnection, team_id: i64, user_id: i64) -> Result<bool, Db> {
    let r = sqlx::query(
        "INSERT INTO memberships (team_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
    )
    .bind(team_id)
    .bind(user_id)
    .execute(conn)
    .await?;
    Ok(r.rows_affected() == 1)
}

/// Removes a membership; `false` when there was none.
pub async fn remove_member(
    conn: &mut PgConnection,
    team_id: i64,
    user_id: i64,
) -> Result<bool, Db> {
    let r = sqlx::query("DELETE FROM memberships WHERE team_id = $1 AND user_id = $2")
        .bind(team_id)
        .bind(user_id)
        .execute(conn)
        .await?;
    Ok(r.rows_affected() == 1)
}

pub async fn id_by_name(pool: &PgPool, name: &str) -> Result<Option<i64>, Db> {
    Ok(sqlx::query_scalar("SELECT id FROM teams WHERE name = $1")
        .bind(name.trim())
        .fetch_optional(pool)
        .await?)
}

pub async fn set_webhook(
    conn: &mut PgConnection,
    team_id: i64,
    url: Option<&str>,
) -> Result<bool, Db> {
    let r = sqlx::query("UPDATE teams SET webhook_url = $2 WHERE id = $1")
        .bind(team_id)
        .bind(url)
        .execute(conn)
        .await?;
    Ok(r.rows_affected() == 1)
}

pub async fn set_setting(conn: &mut PgConnection, key: &str, value: &str) -> Result<(), Db> {
    Ok(sqlx::query("INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value")
        .bind(key)
        .bind(value)
        .execute(conn)
        .await
        .map(drop)?)
}

/// The platform team's name, if one is set.
pub async fn platform_team(pool: &PgPool) -> Result<Option<String>, Db> {
    Ok(sqlx::query_scalar(
        "SELECT t.name FROM teams t
         WHERE t.id = (SELECT value::bigint FROM settings WHERE key = 'platform_team_id')",
    )
    .fetch_optional(pool)
    .await?)
}
