//! Bearer tokens for machines. A token is `sk_` + 43 base64url characters
//! (256 random bits); only its SHA-256 is stored.

use crate::platform::errors::Db;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use rand::RngCore;
use sha2::{Digest, Sha256};
use sqlx::{FromRow, PgConnection, PgPool};
use streamkeeper::accounts::token::{Scope, Scopes, TokenFacts};

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
    pub scopes: Vec<String>,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub last_used_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
    /// The user's token epoch when the token was made.
    pub epoch: i32,
    /// The user's token epoch now.
    pub user_epoch: i32,
    pub user_disabled: bool,
    pub user_id: i64,
}

impl TokenRow {
    /// Scopes as stored; a CHECK constraint holds them to the known names
    /// and to at least one, so `None` means a row written around it.
    pub fn scopes(&self) -> Option<Scopes> {
        Scopes::new(self.scopes.iter().filter_map(|s| s.parse::<Scope>().ok())).ok()
    }

    pub fn facts(&self) -> TokenFacts {
        TokenFacts {
            revoked: self.revoked_at.is_some(),
            expires_at: self.expires_at,
            epoch: self.epoch,
            user_epoch: self.user_epoch,
            user_disabled: self.user_disabled,
        }
    }
}

const COLUMNS: &str = "t.id, u.username, t.name, t.scopes, t.created_at, t.expires_at,
    t.last_used_at, t.revoked_at, t.user_epoch AS epoch, u.token_epoch AS user_epoch,
    u.disabled AS user_disabled, t.user_id";

/// Stores a new token carrying its user's current token epoch, so a later
/// password change or disable (which moves the epoch on) ends it.
pub async fn insert(
    conn: &mut PgConnection,
    user_id: i64,
    name: &str,
    token: &str,
    scopes: &Scopes,
    expires_at: Option<DateTime<Utc>>,
) -> Result<i64, Db> {
    let scopes: Vec<&str> = scopes.iter().map(Scope::as_str).collect();
    Ok(sqlx::query_scalar(
        "INSERT INTO api_tokens (user_id, name, token_hash, scopes, expires_at, user_epoch)
         SELECT id, $2, $3, $4, $5, token_epoch FROM users WHERE id = $1 RETURNING id",
    )
    .bind(user_id)
    .bind(name)
    .bind(digest(token))
    .bind(scopes)
    .bind(expires_at)
    .fetch_one(conn)
    .await?)
}

/// Revokes a live token; returns its owner's username, or `None` when there
/// is no such live token.
pub async fn revoke(conn: &mut PgConnection, id: i64) -> Result<Option<String>, Db> {
    Ok(sqlx::query_scalar(
        "UPDATE api_tokens t SET revoked_at = now() FROM users u
         WHERE t.id = $1 AND t.revoked_at IS NULL AND u.id = t.user_id RETURNING u.username",
    )
    .bind(id)
    .fetch_optional(conn)
    .await?)
}

pub async fn list(pool: &PgPool) -> Result<Vec<TokenRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM api_tokens t JOIN users u ON u.id = t.user_id ORDER BY t.id"
    ))
    .fetch_all(pool)
    .await?)
}

/// A token with its user's row, as one lookup reads them.
#[derive(FromRow)]
pub struct TokenAndUser {
    #[sqlx(flatten)]
    pub token: TokenRow,
    #[sqlx(json)]
    pub user: super::users::UserRow,
}

/// The token with this secret, live or not, with its user's row, in one
/// statement: the one lookup each bearer-token request makes (lineage
/// producers send thousands a second). The caller decides (with
/// `streamkeeper::accounts::token::liveness`) and says why a dead one is
/// refused.
pub async fn find_with_user(pool: &PgPool, token: &str) -> Result<Option<TokenAndUser>, Db> {
    Ok(sqlx::query_as(&format!(
        "SELECT {COLUMNS}, to_jsonb(u) AS \"user\" FROM api_tokens t JOIN users u ON u.id = t.user_id
         WHERE t.token_hash = $1"
    ))
    .bind(digest(token))
    .fetch_optional(pool)
    .await?)
}

/// Marks a token used, at most once a minute so that busy machines do not
/// write on every request.
pub async fn touch(pool: &PgPool, id: i64) -> Result<(), Db> {
    Ok(sqlx::query(
        "UPDATE api_tokens SET last_used_at = now()
         WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')",
    )
    .bind(id)
    .execute(pool)
    .await
    .map(drop)?)
}
