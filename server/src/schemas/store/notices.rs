//! "Notify owners" of a check's downstream breakage: the owner teams by
//! name, and the notices sent of a check.

use crate::platform::errors::Db;
use sqlx::{PgConnection, PgPool};
use streamkeeper_app::schemas::model::OwnersNotice;

/// The teams named `names`, as (id, name); names not in the catalog are
/// left out (lineage's ownership facets may name teams it lacks).
pub async fn teams_named(pool: &PgPool, names: &[&str]) -> Result<Vec<(i64, String)>, Db> {
    Ok(
        sqlx::query_as("SELECT id, name FROM teams WHERE name = ANY($1) ORDER BY name")
            .bind(names)
            .fetch_all(pool)
            .await?,
    )
}

pub async fn insert_owners_notice(
    conn: &mut PgConnection,
    check_id: i64,
    n: &OwnersNotice,
) -> Result<(), Db> {
    sqlx::query(
        "INSERT INTO check_owner_notices (check_id, sent_by, sent_at, teams, messages)
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(check_id)
    .bind(&n.sent_by)
    .bind(n.sent_at)
    .bind(&n.teams)
    .bind(n.messages)
    .execute(conn)
    .await?;
    Ok(())
}

/// The notices sent of check `check_id`, newest first.
pub async fn owners_notices(pool: &PgPool, check_id: i64) -> Result<Vec<OwnersNotice>, Db> {
    let rows: Vec<(String, chrono::DateTime<chrono::Utc>, Vec<String>, i32)> = sqlx::query_as(
        "SELECT sent_by, sent_at, teams, messages FROM check_owner_notices
         WHERE check_id = $1 ORDER BY id DESC",
    )
    .bind(check_id)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(sent_by, sent_at, teams, messages)| OwnersNotice {
            sent_by,
            sent_at,
            teams,
            messages,
        })
        .collect())
}
