//! The Postgres pool: connect with bounded retries, and the embedded
//! migrations.

use sqlx::PgPool;
use sqlx::migrate::Migrator;
use sqlx::postgres::PgPoolOptions;
use std::time::{Duration, Instant};

pub static MIGRATOR: Migrator = sqlx::migrate!("../migrations");

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error(
        "could not reach Postgres at DATABASE_URL within {secs} s (last error: {last}); check that it runs and accepts connections"
    )]
    Unreachable { secs: u64, last: String },
    #[error("applying migrations failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

/// Connects, retrying with exponential backoff (0.25 s doubling to 5 s) for
/// at most `timeout`: Postgres often starts alongside us.
pub async fn connect(url: &str, timeout: Duration) -> Result<PgPool, DbError> {
    let started = Instant::now();
    let mut delay = Duration::from_millis(250);
    loop {
        let attempt = PgPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(Duration::from_secs(5))
            .connect(url)
            .await;
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

pub async fn migrate(pool: &PgPool) -> Result<(), DbError> {
    MIGRATOR.run(pool).await?;
    Ok(())
}
