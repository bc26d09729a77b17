//! Bearer tokens for machines. A token is `sk_` + 43 base64url characters
//! (256 random bits); only its SHA-256 is stored.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use rand::RngCore;
use sha2::{Digest, Sha256};
use sqlx::{FromRow, PgConnection, PgPool};

use super::users::UserRow;

pub const PREFIX: &str = "sk_";

pub fn generate() -> String {
    let mut bytes = [0_u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(bytes))
}

pub fn digest(token: &str) -> Vec<u8> {
    Sha256::digest(token.as_bytes()).to_vec()
}

#[derive(Debug, Clone, FromRow)]
pub struct TokenRow {
    pub id: i64,
    pub username: String,
    pub name: String,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
}

pub async fn insert(
    conn: &mut PgConnection,
    user_id: i64,
    name: &str,
    token: &str,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "INSERT INTO api_tokens (user_id, name, token_hash) VALUES ($1, $2, $3) RETURNING id",
    )
    .bind(user_id)
    .bind(name)
    .bind(digest(token))
    .fetch_one(conn)
    .await
}

/// Revokes a live token; returns its owner's username, or `None` when there
/// is no such live token.
pub async fn revoke(conn: &mut PgConnection, id: i64) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar(
        "UPDATE api_tokens t SET revoked_at = now() FROM users u
         WHERE t.id = $1 AND t.revoked_at IS NULL AND u.id = t.user_id RETURNING u.username",
    )
    .bind(id)
    .fetch_optional(conn)
    .await
}

pub async fn list(pool: &PgPool) -> Result<Vec<TokenRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT t.id, u.username, t.name, t.created_at, t.last_used_at, t.revoked_at
         FROM api_tokens t JOIN users u ON u.id = t.user_id ORDER BY t.id",
    )
    .fetch_all(pool)
    .await
}

/// The active user a live token acts as. Marks the token used, at most once
/// a minute so that busy machines do not write on every request.
pub async fn user_for(pool: &PgPool, token: &str) -> Result<Option<UserRow>, sqlx::Error> {
    let found: Option<(i64, i64)> = sqlx::query_as(
        "SELECT t.id, t.user_id FROM api_tokens t JOIN users u ON u.id = t.user_id
         WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND NOT u.disabled",
    )
    .bind(digest(token))
    .fetch_optional(pool)
    .await?;
    let Some((token_id, user_id)) = found else {
        return Ok(None);
    };
    sqlx::query(
        "UPDATE api_tokens SET last_used_at = now()
         WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')",
    )
    .bind(token_id)
    .execute(pool)
    .await?;
    super::users::by_id(pool, user_id).await
}
