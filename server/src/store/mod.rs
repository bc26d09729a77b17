//! Postgres queries, one module per table family. Queries return sqlx
//! errors; the services turn them into errors a person understands.

pub mod audit;
pub mod clusters;
pub mod flags;
pub mod teams;
pub mod tokens;
pub mod users;

/// Whether an error is a unique-constraint violation (Postgres 23505).
pub fn is_unique_violation(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .and_then(|d| d.code())
        .is_some_and(|c| c == "23505")
}
