//! Who owns the schema: with a migration role apart from the runtime role
//! (`db::hand_over`), the runtime role is given every table but the audit
//! log, and only SELECT and INSERT on the audit log.

use crate::platform::errors::Db;
use sqlx::PgPool;

/// The role a pool connects as.
pub async fn current_role(pool: &PgPool) -> Result<String, Db> {
    Ok(sqlx::query_scalar("SELECT current_user::text")
        .fetch_one(pool)
        .await?)
}

/// Run under the schema's owner: `role` gets CREATE on the schema (a new
/// owner needs it), the sessions' schema and every table but `audit_log`
/// and the migrations' own, and only SELECT, INSERT on `audit_log`. In one
/// transaction, so a failure leaves the ownership as it was.
pub async fn hand_over(owner: &PgPool, role: &str) -> Result<(), Db> {
    // Role and table names are quoted by Postgres (quote_ident, format's
    // %I), never spliced from input.
    let quoted: String = sqlx::query_scalar("SELECT quote_ident($1)")
        .bind(role)
        .fetch_one(owner)
        .await?;
    let mut statements = vec![
        format!("GRANT USAGE, CREATE ON SCHEMA public TO {quoted}"),
        format!("ALTER SCHEMA tower_sessions OWNER TO {quoted}"),
    ];
    statements.extend(
        sqlx::query_scalar::<_, String>(
            "SELECT format('ALTER TABLE %I.%I OWNER TO %I', schemaname, tablename, $1)
             FROM pg_tables
             WHERE schemaname IN ('public', 'tower_sessions')
               AND tablename NOT IN ('audit_log', '_sqlx_migrations') AND tableowner <> $1",
        )
        .bind(role)
        .fetch_all(owner)
        .await?,
    );
    statements.extend([
        format!("REVOKE ALL ON audit_log FROM {quoted}"),
        format!("GRANT SELECT, INSERT ON audit_log TO {quoted}"),
    ]);
    let mut tx = owner.begin().await?;
    for statement in statements {
        sqlx::query(&statement).execute(&mut *tx).await?;
    }
    Ok(tx.commit().await?)
}
