//! The users table.

use crate::platform::errors::Db;
use chrono::{DateTime, Utc};
use sqlx::{FromRow, PgConnection, PgPool};
use streamkeeper::accounts::list::UserColumn;
use streamkeeper::accounts::role::Role;
use streamkeeper::platform::page::{Page, PageRequest};
use streamkeeper::platform::sort::Sorted;
use streamkeeper_app::accounts::model::{TeamRef, UserSummary};

/// A user row, with what only the server may see. Deserialize reads it
/// from `to_jsonb(users)`, for a token's lookup in one query.
#[derive(Debug, Clone, FromRow, serde::Deserialize)]
pub struct UserRow {
    pub id: i64,
    pub username: String,
    pub display_name: String,
    pub password_hash: String,
    pub roles: Vec<String>,
    pub disabled: bool,
    pub session_epoch: i32,
    pub created_at: DateTime<Utc>,
    /// Set by an admin's password: the user must change it first.
    pub must_change_password: bool,
    /// The TOTP secret (base32) once enrolment is confirmed, in plain form:
    /// only while no `STREAMKEEPER_TOTP_KEY` is set (see `totp_sealed`).
    pub totp_secret: Option<String>,
    /// The TOTP secret sealed under `STREAMKEEPER_TOTP_KEY`
    /// (`platform::seal`, bound to the user's id).
    #[sqlx(default)]
    #[serde(default)]
    pub totp_sealed: Option<String>,
    /// The last time step a code was accepted for.
    pub totp_last_step: Option<i64>,
    /// The seed (hex) of an enrolment or recovery-code renewal under way.
    pub totp_pending_seed: Option<String>,
    /// The provider's subject, for a user who signs in through it.
    #[sqlx(default)]
    #[serde(default)]
    pub oidc_subject: Option<String>,
    /// The IANA zone the user reads times in on the pages.
    pub time_zone: String,
}

impl UserRow {
    /// Whether the user set up a second factor (its secret in either form).
    pub fn has_second_factor(&self) -> bool {
        self.totp_secret.is_some() || self.totp_sealed.is_some()
    }

    /// Roles as stored; unknown strings cannot be stored (a CHECK constraint
    /// holds them to the five roles), so none are dropped in practice.
    pub fn roles(&self) -> Vec<Role> {
        streamkeeper::accounts::role::normalize(self.roles.iter().filter_map(|r| r.parse().ok()))
    }

    pub fn summary(&self) -> UserSummary {
        UserSummary {
            id: self.id,
            username: self.username.clone(),
            display_name: self.display_name.clone(),
            roles: self.roles(),
            disabled: self.disabled,
            created_at: self.created_at,
            second_factor: self.has_second_factor(),
            must_change_password: self.must_change_password,
            single_sign_on: self.oidc_subject.is_some(),
        }
    }
}

pub(super) const COLUMNS: &str =
    "id, username, display_name, password_hash, roles, disabled, session_epoch,
     created_at, must_change_password, totp_secret, totp_sealed, totp_last_step, totp_pending_seed, oidc_subject, time_zone";

pub fn role_strings(roles: &[Role]) -> Vec<String> {
    roles.iter().map(|r| r.as_str().to_string()).collect()
}

pub async fn by_id(pool: &PgPool, id: i64) -> Result<Option<UserRow>, Db> {
    Ok(
        sqlx::query_as(&format!("SELECT {COLUMNS} FROM users WHERE id = $1"))
            .bind(id)
            .fetch_optional(pool)
            .await?,
    )
}

pub async fn by_username(pool: &PgPool, username: &str) -> Result<Option<UserRow>, Db> {
    Ok(
        sqlx::query_as(&format!("SELECT {COLUMNS} FROM users WHERE username = $1"))
            .bind(username)
            .fetch_optional(pool)
            .await?,
    )
}

/// By username, inside the caller's transaction.
pub async fn by_username_in(
    conn: &mut PgConnection,
    username: &str,
) -> Result<Option<UserRow>, Db> {
    Ok(
        sqlx::query_as(&format!("SELECT {COLUMNS} FROM users WHERE username = $1"))
            .bind(username)
            .fetch_optional(conn)
            .await?,
    )
}

/// Locks the row for a read-modify-write in a transaction.
pub async fn lock(conn: &mut PgConnection, id: i64) -> Result<Option<UserRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM users WHERE id = $1 FOR UPDATE"
    ))
    .bind(id)
    .fetch_optional(conn)
    .await?)
}

pub async fn insert(
    conn: &mut PgConnection,
    username: &str,
    display_name: &str,
    password_hash: &str,
    roles: &[Role],
    must_change_password: bool,
) -> Result<UserRow, Db> {
    Ok(sqlx::query_as(&format!(
        "INSERT INTO users (username, display_name, password_hash, roles, must_change_password)
         VALUES ($1, $2, $3, $4, $5) RETURNING {COLUMNS}"
    ))
    .bind(username)
    .bind(display_name)
    .bind(password_hash)
    .bind(role_strings(roles))
    .bind(must_change_password)
    .fetch_one(conn)
    .await?)
}

/// Writes the changeable fields; bumps the session epoch when `end_sessions`.
pub async fn update(
    conn: &mut PgConnection,
    u: &UserRow,
    end_sessions: bool,
) -> Result<UserRow, Db> {
    Ok(sqlx::query_as(&format!(
        "UPDATE users SET display_name = $2, roles = $3, disabled = $4, password_hash = $5,
             session_epoch = session_epoch + CASE WHEN $6 THEN 1 ELSE 0 END, updated_at = now(),
             must_change_password = $7
         WHERE id = $1 RETURNING {COLUMNS}"
    ))
    .bind(u.id)
    .bind(&u.display_name)
    .bind(&u.roles)
    .bind(u.disabled)
    .bind(&u.password_hash)
    .bind(end_sessions)
    .bind(u.must_change_password)
    .fetch_one(conn)
    .await?)
}

/// Sets the zone the user reads times in; answers the zone it replaced.
pub async fn set_time_zone(
    conn: &mut PgConnection,
    id: i64,
    zone: &str,
) -> Result<Option<String>, Db> {
    Ok(sqlx::query_scalar(
        "UPDATE users u SET time_zone = $2, updated_at = now()
         FROM (SELECT time_zone FROM users WHERE id = $1 FOR UPDATE) old
         WHERE u.id = $1 RETURNING old.time_zone",
    )
    .bind(id)
    .bind(zone)
    .fetch_optional(conn)
    .await?)
}

/// `ORDER BY` of the users list: each column's keys, then the id.
fn user_order(order: Sorted<UserColumn>) -> String {
    let keys: &[&'static str] = match order.column {
        UserColumn::Username => &["username"],
        UserColumn::Name => &["display_name"],
        UserColumn::Status => &["disabled"],
        UserColumn::Created => &["created_at"],
    };
    crate::store::order_by(keys, order.descending, "id")
}

/// Users whose username or display name contains `query`, in `order`.
pub async fn list(
    pool: &PgPool,
    query: Option<&str>,
    order: Sorted<UserColumn>,
    page: PageRequest,
) -> Result<Page<UserSummary>, Db> {
    let pattern = crate::store::contains_pattern(query);
    let total: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM users WHERE $1::text IS NULL OR username ILIKE $1 OR display_name ILIKE $1",
    )
    .bind(&pattern)
    .fetch_one(pool)
    .await?;
    let rows: Vec<UserRow> = sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM users
         WHERE $1::text IS NULL OR username ILIKE $1 OR display_name ILIKE $1
         ORDER BY {} LIMIT $2 OFFSET $3",
        user_order(order)
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

pub async fn teams_of(pool: &PgPool, user_id: i64) -> Result<Vec<TeamRef>, Db> {
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

/// Starts (or, with `None`, drops) an enrolment or recovery-code renewal.
pub async fn set_totp_pending(
    conn: &mut PgConnection,
    id: i64,
    seed: Option<&str>,
) -> Result<(), Db> {
    Ok(
        sqlx::query("UPDATE users SET totp_pending_seed = $2 WHERE id = $1")
            .bind(id)
            .bind(seed)
            .execute(conn)
            .await
            .map(drop)?,
    )
}

/// A TOTP secret as stored: sealed when the server has a key, else plain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoredSecret {
    Plain(String),
    Sealed(String),
}

/// Completes an enrolment: the secret, the step of the code that confirmed
/// it (not accepted again) and no pending seed.
pub async fn enable_totp(
    conn: &mut PgConnection,
    id: i64,
    secret: &StoredSecret,
    step: i64,
) -> Result<(), Db> {
    let (plain, sealed) = match secret {
        StoredSecret::Plain(p) => (Some(p), None),
        StoredSecret::Sealed(s) => (None, Some(s)),
    };
    Ok(sqlx::query(
        "UPDATE users SET totp_secret = $2, totp_sealed = $4, totp_last_step = $3,
                          totp_pending_seed = NULL
         WHERE id = $1",
    )
    .bind(id)
    .bind(plain)
    .bind(step)
    .bind(sealed)
    .execute(conn)
    .await
    .map(drop)?)
}

/// Records that a code of `step` was accepted, unless one of that step or
/// a later one was already: `false` then (a replay that raced another).
pub async fn use_totp_step(conn: &mut PgConnection, id: i64, step: i64) -> Result<bool, Db> {
    let done = sqlx::query(
        "UPDATE users SET totp_last_step = $2
         WHERE id = $1 AND (totp_secret IS NOT NULL OR totp_sealed IS NOT NULL)
           AND (totp_last_step IS NULL OR totp_last_step < $2)",
    )
    .bind(id)
    .bind(step)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Removes the second factor and its recovery codes.
pub async fn clear_totp(conn: &mut PgConnection, id: i64) -> Result<(), Db> {
    sqlx::query(
        "UPDATE users SET totp_secret = NULL, totp_sealed = NULL, totp_last_step = NULL,
                          totp_pending_seed = NULL
         WHERE id = $1",
    )
    .bind(id)
    .execute(&mut *conn)
    .await?;
    Ok(sqlx::query("DELETE FROM recovery_codes WHERE user_id = $1")
        .bind(id)
        .execute(conn)
        .await
        .map(drop)?)
}

/// Replaces a user's recovery codes (their hashes) and ends the renewal.
pub async fn replace_recovery_codes(
    conn: &mut PgConnection,
    id: i64,
    hashes: &[String],
) -> Result<(), Db> {
    sqlx::query("DELETE FROM recovery_codes WHERE user_id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    sqlx::query(
        "INSERT INTO recovery_codes (user_id, code_hash) SELECT $1, h FROM unnest($2::text[]) h",
    )
    .bind(id)
    .bind(hashes)
    .execute(&mut *conn)
    .await?;
    set_totp_pending(conn, id, None).await
}

/// Uses up a recovery code: `true` when it was one of the user's, unused.
pub async fn use_recovery_code(conn: &mut PgConnection, id: i64, hash: &str) -> Result<bool, Db> {
    let done = sqlx::query(
        "UPDATE recovery_codes SET used_at = now()
         WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL",
    )
    .bind(id)
    .bind(hash)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// How many of a user's recovery codes are still unused.
pub async fn recovery_codes_left(pool: &PgPool, id: i64) -> Result<i64, Db> {
    Ok(sqlx::query_scalar(
        "SELECT count(*) FROM recovery_codes WHERE user_id = $1 AND used_at IS NULL",
    )
    .bind(id)
    .fetch_one(pool)
    .await?)
}

/// Users whose TOTP secret is still in plain form, to seal at start-up.
pub async fn plain_totp_secrets(pool: &PgPool) -> Result<Vec<(i64, String)>, Db> {
    Ok(sqlx::query_as(
        "SELECT id, totp_secret FROM users WHERE totp_secret IS NOT NULL ORDER BY id",
    )
    .fetch_all(pool)
    .await?)
}

/// Replaces a plain TOTP secret by its sealed form, unless it changed
/// meanwhile (another replica sealed it, or the user enrolled anew).
pub async fn seal_totp_secret(
    pool: &PgPool,
    id: i64,
    plain: &str,
    sealed: &str,
) -> Result<bool, Db> {
    let done = sqlx::query(
        "UPDATE users SET totp_secret = NULL, totp_sealed = $3
         WHERE id = $1 AND totp_secret = $2",
    )
    .bind(id)
    .bind(plain)
    .bind(sealed)
    .execute(pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// One sealed TOTP secret with its user, if any is sealed: what start-up
/// tries the key on.
pub async fn a_sealed_totp_secret(pool: &PgPool) -> Result<Option<(i64, String)>, Db> {
    Ok(sqlx::query_as(
        "SELECT id, totp_sealed FROM users WHERE totp_sealed IS NOT NULL ORDER BY id LIMIT 1",
    )
    .fetch_optional(pool)
    .await?)
}
