//! Turning database failures into errors a person can act on, without
//! leaking database text: the details go to the log under a reference.

use crate::clients::registry::RegistryError;
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::Role;
use streamkeeper_app::error::AppError;

/// A store's failure. `?` turns it into the one answer for a database
/// failure ([`db`]: 503 while the database does not answer, otherwise a
/// reference to the log line), so no call site maps it by hand.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct Db(#[from] pub sqlx::Error);

impl From<Db> for AppError {
    fn from(Db(e): Db) -> Self {
        db(e)
    }
}

pub fn db(e: sqlx::Error) -> AppError {
    if unstorable_text(&e) {
        // The extractors refuse control characters with the field named
        // (`platform::rest`); this catches text from any other way in
        // (a server function's form, the CLI) rather than answering 500.
        return AppError::Invalid(
            "the text holds a character that cannot be stored (NUL, U+0000)".into(),
        );
    }
    if unreachable(&e) {
        tracing::error!(error = %e, "database unavailable");
        AppError::Unavailable("the database does not answer; try again shortly".into())
    } else {
        let reference = reference();
        tracing::error!(%reference, error = %e, "database error");
        AppError::Internal(reference)
    }
}

/// Postgres refused text it cannot hold: NUL (`character_not_in_repertoire`,
/// `untranslatable_character`).
fn unstorable_text(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .and_then(|d| d.code())
        .is_some_and(|c| c == "22021" || c == "22P05")
}

/// The database did not answer (rather than refused what it was asked).
pub fn unreachable(e: &sqlx::Error) -> bool {
    matches!(
        e,
        sqlx::Error::PoolTimedOut | sqlx::Error::Io(_) | sqlx::Error::PoolClosed
    )
}

/// A failure that is not the client's (a stored row that no longer
/// parses, a task that died): its text goes to the log under the request's
/// reference, and the person sees only the reference.
pub fn internal(what: &str, e: impl std::fmt::Display) -> AppError {
    let reference = reference();
    tracing::error!(%reference, error = %e, "{what}");
    AppError::Internal(reference)
}

/// A Schema Registry failure, by its one status ([`RegistryError::status`]),
/// worded for `admin` or not (upstream text is an admin's only).
pub fn registry(who: &Principal, e: &RegistryError) -> AppError {
    let text = || {
        format!(
            "The Schema Registry: {}",
            e.for_viewer(who.has(Role::Admin))
        )
    };
    match e.status() {
        404 => AppError::NotFound(e.to_string()),
        422 => AppError::Invalid(text()),
        _ => AppError::Unavailable(text()),
    }
}

tokio::task_local! {
    /// The id of the request being answered (set by `web::request_id`).
    static REQUEST: String;
}

/// Runs `f` as the request `id`: the references its errors show are that id.
pub async fn within_request<F: std::future::Future>(id: String, f: F) -> F::Output {
    REQUEST.scope(id, f).await
}

/// What ties a user-facing error to its log lines: the request's id (the
/// `X-Request-Id` header and every log line of the request carry it), or a
/// fresh one outside a request.
pub fn reference() -> String {
    REQUEST
        .try_with(Clone::clone)
        .unwrap_or_else(|_| fresh_reference())
}

/// A new random reference: 16 hex digits.
pub fn fresh_reference() -> String {
    use rand::Rng;
    format!("{:016x}", rand::rngs::OsRng.r#gen::<u64>())
}
