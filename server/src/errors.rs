//! Turning database failures into errors a person can act on, without
//! leaking database text: the details go to the log under a reference.

use streamkeeper_app::error::AppError;

pub fn db(e: sqlx::Error) -> AppError {
    match e {
        sqlx::Error::PoolTimedOut | sqlx::Error::Io(_) | sqlx::Error::PoolClosed => {
            tracing::error!(error = %e, "database unavailable");
            AppError::Unavailable("the database does not answer; try again shortly".into())
        }
        other => {
            let reference = reference();
            tracing::error!(%reference, error = %other, "database error");
            AppError::Internal(reference)
        }
    }
}

/// A short random reference that ties a user-facing error to its log line.
pub fn reference() -> String {
    use rand::Rng;
    format!("{:08x}", rand::rngs::OsRng.r#gen::<u32>())
}
