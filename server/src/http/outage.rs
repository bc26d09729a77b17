//! A database outage answered, not hung (issue 46): while the watch
//! (`platform::db_watch`) sees Postgres down, every request but the probes
//! and the site's files is answered 503 at once, and one under way when the
//! outage is seen is cut short with the same answer. Nothing is reported as
//! zero: no handler runs to read an empty answer.

use super::AppState;
use crate::platform::db_watch::Database;
use crate::platform::rest::ApiError;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use streamkeeper_app::error::AppError;

const WHY: &str = "the database does not answer; try again shortly";
/// What a browser shows: a page, not JSON (no app shell: it would need the
/// session, which lives in the database).
const PAGE: &str = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>Streamkeeper: unavailable</title></head><body><main><h1>Streamkeeper is unavailable</h1>\
<p>Its database does not answer. Nothing is lost: the page works again once it does; \
reload in a few seconds.</p></main></body></html>";

pub async fn while_database_down(State(st): State<AppState>, req: Request, next: Next) -> Response {
    let page = wants_page(&req);
    let path = req.uri().path();
    // The probes say themselves what they see; the site's files need no database.
    if path == "/healthz" || path == "/readyz" || path.starts_with("/pkg/") {
        return next.run(req).await;
    }
    if st.db.now() == Database::Down {
        return unavailable(page);
    }
    tokio::select! {
        // The request first: one that is done is not cut short.
        biased;
        response = next.run(req) => response,
        () = st.db.down() => unavailable(page),
    }
}

/// A browser's navigation (it asks for HTML), rather than the API or a
/// server function.
fn wants_page(req: &Request) -> bool {
    req.headers()
        .get(header::ACCEPT)
        .and_then(|a| a.to_str().ok())
        .is_some_and(|a| a.contains("text/html"))
}

fn unavailable(page: bool) -> Response {
    let mut res = if page {
        (StatusCode::SERVICE_UNAVAILABLE, Html(PAGE)).into_response()
    } else {
        ApiError(AppError::Unavailable(WHY.into())).into_response()
    };
    res.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    res
}
