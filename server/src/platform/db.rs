//! The Postgres pool: connect with bounded retries, and the embedded
//! migrations.

use sqlx::migrate::Migrator;
use sqlx::pool::PoolConnection;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{PgPool, Postgres, Transaction};
use std::time::{Duration, Instant};

use crate::platform::errors::Db;
use crate::store::ownership;

pub static MIGRATOR: Migrator = sqlx::migrate!("../migrations");

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error(
        "could not reach Postgres at DATABASE_URL within {secs} s (last error: {last}); check that it runs and accepts connections"
    )]
    Unreachable { secs: u64, last: String },
    #[error("applying migrations failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("could not prepare the session table: {0}")]
    Sessions(sqlx::Error),
    #[error(
        "handing the schema to the DATABASE_URL role failed: {0} (the STREAMKEEPER_MIGRATE_DATABASE_URL role must own the database and be a member of the DATABASE_URL role; see docs/security.md)"
    )]
    HandOver(String),
}

/// Connects, retrying with exponential backoff (0.25 s doubling to 5 s) for
/// at most `timeout`: Postgres often starts alongside us.
pub async fn connect(url: &str, timeout: Duration) -> Result<PgPool, DbError> {
    let started = Instant::now();
    let mut delay = Duration::from_millis(250);
    loop {
        let attempt = match connect_options(url) {
            Ok(options) => {
                PgPoolOptions::new()
                    .max_connections(16)
                    .acquire_timeout(Duration::from_secs(5))
                    .connect_with(options)
                    .await
            }
            Err(e) => Err(e),
        };
        match attempt {
            Ok(pool) => return Ok(pool),
            Err(e) => {
                // Only the error kind is logged: its text may quote the URL.
                let last = describe(&e);
                if started.elapsed() + delay > timeout {
                    return Err(DbError::Unreachable {
                        secs: timeout.as_secs(),
                        last,
                    });
                }
                tracing::warn!(error = %last, retry_in_ms = delay.as_millis() as u64, "Postgres not reachable yet");
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(5));
            }
        }
    }
}

/// `url` as the console connects to it: with JIT compilation off. Its
/// reads are a year of records at most, planned above `jit_above_cost`
/// by their scope joins; compiling them cost about 100 ms a query and
/// gained nothing (the pilot bench, BENCHMARKS.md).
pub fn connect_options(url: &str) -> Result<PgConnectOptions, sqlx::Error> {
    Ok(url.parse::<PgConnectOptions>()?.options([("jit", "off")]))
}

/// Sets this connection's clock offset (`platform::clock`), which
/// `streamkeeper_now()` adds to `now()`: only the demo's history player
/// calls it, on its own connections.
pub async fn set_clock_offset(conn: &mut sqlx::PgConnection, ms: i64) -> Result<(), sqlx::Error> {
    sqlx::query("SELECT set_config($1, $2, false)")
        .bind(crate::platform::clock::OFFSET_SETTING)
        .bind(ms.to_string())
        .execute(conn)
        .await
        .map(drop)
}

fn describe(e: &sqlx::Error) -> String {
    match e {
        sqlx::Error::Io(io) => format!("I/O: {}", io.kind()),
        sqlx::Error::Database(d) => format!("database: {}", d.message()),
        sqlx::Error::PoolTimedOut => "timed out".into(),
        sqlx::Error::Tls(_) => "TLS handshake failed".into(),
        sqlx::Error::Configuration(_) => "invalid connection settings".into(),
        other => other.to_string(),
    }
}

/// The schema's migrations and the sessions' table (tower-sessions makes
/// its own), under whichever role owns the schema: the runtime role then
/// needs no right to create anything at start.
pub async fn migrate(pool: &PgPool) -> Result<(), DbError> {
    MIGRATOR.run(pool).await?;
    tower_sessions_sqlx_store::PostgresStore::new(pool.clone())
        .migrate()
        .await
        .map_err(DbError::Sessions)?;
    Ok(())
}

/// With a migration role apart from the runtime role (the one `runtime`
/// connects as): every table but the audit log becomes the runtime role's
/// (it makes and drops the samples' day partitions, which only an owner
/// may), and the audit log stays the migration role's, the runtime role
/// holding only SELECT and INSERT on it. So the runtime role cannot
/// disable the log's append-only triggers nor rewrite or cut its tail.
/// Run after every migration ([`migrate`], which made the sessions' table
/// too), under the migration role.
pub async fn hand_over(owner: &PgPool, runtime: &PgPool) -> Result<(), DbError> {
    let fail = |e: crate::platform::errors::Db| DbError::HandOver(describe(&e.0));
    let role = ownership::current_role(runtime).await.map_err(fail)?;
    let me = ownership::current_role(owner).await.map_err(fail)?;
    if role == me {
        return Err(DbError::HandOver(format!(
            "both URLs connect as {me}; the runtime role must be another one"
        )));
    }
    ownership::hand_over(owner, &role).await.map_err(fail)?;
    tracing::info!(runtime = %role, "schema handed to the runtime role; the audit log stays append-only for it");
    Ok(())
}

/// A transaction, failing as a store does ([`Db`]), so a service's `?`
/// gives the one answer for a database failure.
pub async fn begin(pool: &PgPool) -> Result<Transaction<'static, Postgres>, Db> {
    Ok(pool.begin().await?)
}

/// Commits `tx`, failing as a store does.
pub async fn commit(tx: Transaction<'_, Postgres>) -> Result<(), Db> {
    Ok(tx.commit().await?)
}

/// One connection of the pool, failing as a store does.
pub async fn acquire(pool: &PgPool) -> Result<PoolConnection<Postgres>, Db> {
    Ok(pool.acquire().await?)
}

/// For `/readyz`: whether Postgres answers a query.
pub async fn ping(pool: &PgPool) -> Result<(), Db> {
    sqlx::query("SELECT 1").execute(pool).await?;
    Ok(())
}

/// For the database watch (`db_watch`): whether its own connection answers.
pub async fn ping_connection(conn: &mut sqlx::PgConnection) -> Result<(), sqlx::Error> {
    sqlx::query("SELECT 1").execute(conn).await?;
    Ok(())
}

/// For `/readyz`: the embedded migrations this database has not applied
/// (a replica started by a newer release waits until they are).
pub async fn pending_migrations(pool: &PgPool) -> Result<Vec<i64>, Db> {
    let applied: Vec<i64> =
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success")
            .fetch_all(pool)
            .await?;
    Ok(MIGRATOR
        .iter()
        .map(|m| m.version)
        .filter(|v| !applied.contains(v))
        .collect())
}
