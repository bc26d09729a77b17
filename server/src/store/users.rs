//! The users table.

use chrono::{DateTime, Utc};
use sqlx::{FromRow, PgConnection, PgPool};
use streamkeeper::page::{Page, PageRequest};
use streamkeeper::role::Role;
use streamkeeper_app::model::{TeamRef, UserSummary};

/// A user row, with what only the server may see.
#[derive(Debug, Clone, FromRow)]
pub struct UserRow {
    pub id: i64,
    pub username: String,
    pub display_name: String,
    pub password_hash: String,
    pub roles: Vec<String>,
    pub disabled: bool,
    pub session_epoch: i32,
    pub created_at: DateTime<Utc>,
}

impl UserRow {
    /// Roles as stored; unknown strings cannot be stored (a CHECK constraint
    /// holds them to the five roles), so none are dropped in practice.
    pub fn roles(&self) -> Vec<Role> {
        streamkeeper::role::normalize(self.roles.iter().filter_map(|r| r.parse().ok()))
    }

    pub fn summary(&self) -> UserSummary {
        UserSummary {
            id: self.id,
            username: self.username.clone(),
            display_name: self.display_name.clone(),
            roles: self.roles(),
            disabled: self.disabled,
            created_at: self.created_at,
        }
    }
}

const COLUMNS: &str =
    "id, username, display_name, password_hash, roles, disabled, session_epoch, created_at";

pub fn role_strings(roles: &[Role]) -> Vec<String> {
    roles.iter().map(|r| r.as_str().to_string()).collect()
}

pub async fn by_id(pool: &PgPool, id: i64) -> Result<Option<UserRow>, sqlx::Error> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM users WHERE id = $1"))
        .bind(id)
        .fetch_optional(pool)
        .await
}

pub async fn by_username(pool: &PgPool, username: &str) -> Result<Option<UserRow>, sqlx::Error> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM users WHERE username = $1"))
        .bind(username)
        .fetch_optional(pool)
        .await
}

/// Locks the row for a read-modify-write in a transaction.
pub async fn lock(conn: &mut PgConnection, id: i64) -> Result<Option<UserRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM users WHERE id = $1 FOR UPDATE"
    ))
    .bind(id)
    .fetch_optional(conn)
    .await
}

pub async fn insert(
    conn: &mut PgConnection,
    username: &str,
    display_name: &str,
    password_hash: &str,
    roles: &[Role],
) -> Result<UserRow, sqlx::Error> {
    sqlx::query_as(&format!(
        "INSERT INTO users (username, display_name, password_hash, roles)
         VALUES ($1, $2, $3, $4) RETURNING {COLUMNS}"
    ))
    .bind(username)
    .bind(display_name)
    .bind(password_hash)
    .bind(role_strings(roles))
    .fetch_one(conn)
    .await
}

/// Writes the changeable fields; bumps the session epoch when `end_sessions`.
pub async fn update(
    conn: &mut PgConnection,
    u: &UserRow,
    end_sessions: bool,
) -> Result<UserRow, sqlx::Error> {
    sqlx::query_as(&format!(
        "UPDATE users SET display_name = $2, roles = $3, disabled = $4, password_hash = $5,
             session_epoch = session_epoch + CASE WHEN $6 THEN 1 ELSE 0 END, updated_at = now()
         WHERE id = $1 RETURNING {COLUMNS}"
    ))
    .bind(u.id)
    .bind(&u.display_name)
    .bind(&u.roles)
    .bind(u.disabled)
    .bind(&u.password_hash)
    .bind(end_sessions)
    .fetch_one(conn)
    .await
}

/// Users whose username or display name contains `query`, by username.
pub async fn list(
    pool: &PgPool,
    query: Option<&str>,
    page: PageRequest,
) -> Result<Page<UserSummary>, sqlx::Error> {
    let pattern = super::contains_pattern(query);
    let total: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM users WHERE $1::text IS NULL OR username ILIKE $1 OR display_name ILIKE $1",
    )
    .bind(&pattern)
    .fetch_one(pool)
    .await?;
    let rows: Vec<UserRow> = sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM users
         WHERE $1::text IS NULL OR username ILIKE $1 OR display_name ILIKE $1
         ORDER BY username LIMIT $2 OFFSET $3"
    ))
    .bind(&pattern)
    .bind(page.limit())
    .bind(page.offset())
    .fetch_all(pool)
    .await?;
    Ok(Page::new(
        rows.iter().map(UserRow::summary).collect(),
        page,
        total.unsigned_abs(),
    ))
}

pub async fn teams_of(pool: &PgPool, user_id: i64) -> Result<Vec<TeamRef>, sqlx::Error> {
    let rows: Vec<(i64, String)> = sqlx::query_as(
        "SELECT t.id, t.name FROM teams t JOIN memberships m ON m.team_id = t.id
         WHERE m.user_id = $1 ORDER BY t.name",
    )
    .bind(user_id)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, name)| TeamRef { id, name })
        .collect())
}
