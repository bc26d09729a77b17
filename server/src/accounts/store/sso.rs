//! Single sign-on's rows: the sign-ins sent to the provider and not back
//! yet, users by their provider identity, and fresh sign-ins for approvals.

use super::users::{COLUMNS, UserRow, role_strings};
use crate::platform::errors::Db;
use sqlx::{PgConnection, PgPool};
use streamkeeper::accounts::role::Role;

/// A sign-in sent to the provider, as the callback takes it back.
#[derive(Debug, sqlx::FromRow)]
pub struct Attempt {
    pub browser_hash: Vec<u8>,
    pub nonce: String,
    pub pkce_verifier: String,
    pub next: String,
    pub reauth_user: Option<i64>,
    /// When it was started (Unix seconds): a re-authentication's
    /// `auth_time` must come after it.
    pub started: i64,
}

/// How long a sign-in may stay at the provider.
const ATTEMPT_MINUTES: i32 = 10;

pub struct NewAttempt<'a> {
    pub state_hash: &'a [u8],
    pub browser_hash: &'a [u8],
    pub nonce: &'a str,
    pub pkce_verifier: &'a str,
    pub next: &'a str,
    pub reauth_user: Option<i64>,
}

/// Keeps a new attempt, dropping those past their time.
pub async fn start(pool: &PgPool, a: NewAttempt<'_>) -> Result<(), Db> {
    let mut tx = pool.begin().await?;
    sqlx::query("DELETE FROM sso_attempts WHERE created_at < now() - make_interval(mins => $1)")
        .bind(ATTEMPT_MINUTES)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO sso_attempts (state_hash, browser_hash, nonce, pkce_verifier, next, reauth_user)
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(a.state_hash)
    .bind(a.browser_hash)
    .bind(a.nonce)
    .bind(a.pkce_verifier)
    .bind(a.next)
    .bind(a.reauth_user)
    .execute(&mut *tx)
    .await?;
    Ok(tx.commit().await?)
}

/// Takes the attempt `state` names, once: a second take finds nothing.
pub async fn take(pool: &PgPool, state_hash: &[u8]) -> Result<Option<Attempt>, Db> {
    Ok(sqlx::query_as(
        "DELETE FROM sso_attempts
         WHERE state_hash = $1 AND created_at >= now() - make_interval(mins => $2)
         RETURNING browser_hash, nonce, pkce_verifier, next, reauth_user,
                   extract(epoch FROM created_at)::bigint AS started",
    )
    .bind(state_hash)
    .bind(ATTEMPT_MINUTES)
    .fetch_optional(pool)
    .await?)
}

pub async fn by_identity(
    conn: &mut PgConnection,
    issuer: &str,
    subject: &str,
) -> Result<Option<UserRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM users WHERE oidc_issuer = $1 AND oidc_subject = $2 FOR UPDATE"
    ))
    .bind(issuer)
    .bind(subject)
    .fetch_optional(conn)
    .await?)
}

/// Whether the user signs in through the provider (and so has no password).
pub async fn is_single_sign_on(pool: &PgPool, user_id: i64) -> Result<bool, Db> {
    Ok(
        sqlx::query_scalar("SELECT oidc_subject IS NOT NULL FROM users WHERE id = $1")
            .bind(user_id)
            .fetch_optional(pool)
            .await?
            .unwrap_or(false),
    )
}

pub struct NewSsoUser<'a> {
    pub username: &'a str,
    pub display_name: &'a str,
    /// Not a PHC string, so no password ever matches it.
    pub password_hash: &'a str,
    pub roles: &'a [Role],
    pub issuer: &'a str,
    pub subject: &'a str,
}

pub async fn insert(conn: &mut PgConnection, u: NewSsoUser<'_>) -> Result<UserRow, Db> {
    Ok(sqlx::query_as(&format!(
        "INSERT INTO users (username, display_name, password_hash, roles, oidc_issuer, oidc_subject)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING {COLUMNS}"
    ))
    .bind(u.username)
    .bind(u.display_name)
    .bind(u.password_hash)
    .bind(role_strings(u.roles))
    .bind(u.issuer)
    .bind(u.subject)
    .fetch_one(conn)
    .await?)
}

/// Sets the roles the provider's groups give.
pub async fn set_roles(conn: &mut PgConnection, id: i64, roles: &[Role]) -> Result<UserRow, Db> {
    Ok(sqlx::query_as(&format!(
        "UPDATE users SET roles = $2, updated_at = now() WHERE id = $1 RETURNING {COLUMNS}"
    ))
    .bind(id)
    .bind(role_strings(roles))
    .fetch_one(conn)
    .await?)
}

/// The names of the user's teams.
pub async fn team_names(conn: &mut PgConnection, user_id: i64) -> Result<Vec<String>, Db> {
    Ok(sqlx::query_scalar(
        "SELECT t.name FROM teams t JOIN memberships m ON m.team_id = t.id
         WHERE m.user_id = $1 ORDER BY t.name",
    )
    .bind(user_id)
    .fetch_all(conn)
    .await?)
}

/// The team's id, making the team when the mapping names one not made yet.
/// `true` with it when it was made now.
pub async fn team_for(conn: &mut PgConnection, name: &str) -> Result<(i64, bool), Db> {
    let made: Option<i64> = sqlx::query_scalar(
        "INSERT INTO teams (name, description) VALUES ($1, 'Made by single sign-on''s group mapping')
         ON CONFLICT (name) DO NOTHING RETURNING id",
    )
    .bind(name)
    .fetch_optional(&mut *conn)
    .await?;
    if let Some(id) = made {
        return Ok((id, true));
    }
    let id = sqlx::query_scalar("SELECT id FROM teams WHERE name = $1")
        .bind(name)
        .fetch_one(conn)
        .await?;
    Ok((id, false))
}

/// Leaves every team of the user's not in `keep` (team ids).
pub async fn leave_teams_but(
    conn: &mut PgConnection,
    user_id: i64,
    keep: &[i64],
) -> Result<(), Db> {
    sqlx::query("DELETE FROM memberships WHERE user_id = $1 AND NOT (team_id = ANY($2))")
        .bind(user_id)
        .bind(keep)
        .execute(conn)
        .await?;
    Ok(())
}

/// Marks a fresh sign-in at the provider, for the approval it was asked for.
pub async fn mark_reauthenticated(pool: &PgPool, user_id: i64) -> Result<(), Db> {
    sqlx::query("UPDATE users SET reauth_at = now() WHERE id = $1")
        .bind(user_id)
        .execute(pool)
        .await?;
    Ok(())
}

/// Uses up a fresh sign-in no older than `window_secs`; `false` when there
/// is none (an approval then asks for one).
pub async fn use_reauthentication(
    pool: &PgPool,
    user_id: i64,
    window_secs: i64,
) -> Result<bool, Db> {
    let used: Option<i64> = sqlx::query_scalar(
        "UPDATE users SET reauth_at = NULL
         WHERE id = $1 AND reauth_at >= now() - make_interval(secs => $2)
         RETURNING id",
    )
    .bind(user_id)
    .bind(window_secs as f64)
    .fetch_optional(pool)
    .await?;
    Ok(used.is_some())
}

/// Whether a fresh sign-in waits to be used (the approval form says so).
pub async fn reauthenticated_within(
    pool: &PgPool,
    user_id: i64,
    window_secs: i64,
) -> Result<bool, Db> {
    Ok(sqlx::query_scalar(
        "SELECT coalesce(reauth_at >= now() - make_interval(secs => $2), false) FROM users WHERE id = $1",
    )
    .bind(user_id)
    .bind(window_secs as f64)
    .fetch_optional(pool)
    .await?
    .unwrap_or(false))
}
