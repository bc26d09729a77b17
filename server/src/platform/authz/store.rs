//! The authorization facts' SQL.

use sqlx::PgPool;

use crate::platform::errors::Db;

/// Team ids the user belongs to.
pub async fn teams_of(pool: &PgPool, user_id: i64) -> Result<Vec<i64>, Db> {
    Ok(
        sqlx::query_scalar("SELECT team_id FROM memberships WHERE user_id = $1")
            .bind(user_id)
            .fetch_all(pool)
            .await?,
    )
}
