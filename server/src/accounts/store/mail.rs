//! A person's email address and what they want to hear by email.

use crate::platform::errors::Db;
use sqlx::{FromRow, PgConnection, PgPool};

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct MailPrefs {
    pub email: Option<String>,
    pub mail_waiting: bool,
    pub mail_outcomes: bool,
}

pub async fn preferences(pool: &PgPool, user: i64) -> Result<Option<MailPrefs>, Db> {
    Ok(
        sqlx::query_as("SELECT email, mail_waiting, mail_outcomes FROM users WHERE id = $1")
            .bind(user)
            .fetch_optional(pool)
            .await?,
    )
}

/// Sets them; answers what they replaced.
pub async fn set_preferences(
    conn: &mut PgConnection,
    user: i64,
    p: &MailPrefs,
) -> Result<Option<MailPrefs>, Db> {
    Ok(sqlx::query_as(
        "UPDATE users u SET email = $2, mail_waiting = $3, mail_outcomes = $4, updated_at = now()
         FROM (SELECT email, mail_waiting, mail_outcomes FROM users WHERE id = $1 FOR UPDATE) old
         WHERE u.id = $1 RETURNING old.email, old.mail_waiting, old.mail_outcomes",
    )
    .bind(user)
    .bind(&p.email)
    .bind(p.mail_waiting)
    .bind(p.mail_outcomes)
    .fetch_optional(conn)
    .await?)
}

/// Who of `users` wants mail of this kind (`waiting`: items waiting for
/// them; else outcomes of their items), with their address: enabled
/// accounts with an address, each once, in id order.
pub async fn recipients(
    conn: &mut PgConnection,
    users: &[i64],
    waiting: bool,
) -> Result<Vec<(i64, String)>, Db> {
    Ok(sqlx::query_as(
        "SELECT id, email FROM users
         WHERE id = ANY ($1) AND email IS NOT NULL AND NOT disabled
           AND CASE WHEN $2 THEN mail_waiting ELSE mail_outcomes END
         ORDER BY id",
    )
    .bind(users)
    .bind(waiting)
    .fetch_all(conn)
    .await?)
}
