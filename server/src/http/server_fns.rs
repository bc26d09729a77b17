//! Server functions answer every error with 500 and the error in the body.
//! This gives them the status their error means (400 for a malformed form,
//! 401, 403, 404, 409, 422, 503), read from the one error type they share,
//! and hands the error to the layers above as a response extension (a form
//! posted without JavaScript is redirected back with its error, so the
//! status alone does not say it was refused).

use axum::body::{Body, to_bytes};
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;
use streamkeeper_app::error::AppError;

/// Server-function error bodies are a JSON-encoded `AppError`, a few
/// hundred bytes; anything larger is not one of ours and is left alone.
const MAX_ERROR_BODY: usize = 64 * 1024;

pub async fn error_status(req: Request, next: Next) -> Response {
    let res = next.run(req).await;
    if !res.headers().contains_key("serverfnerror") {
        return res;
    }
    let (mut parts, body) = res.into_parts();
    let Ok(bytes) = to_bytes(body, MAX_ERROR_BODY).await else {
        return Response::from_parts(parts, Body::empty());
    };
    if let Ok(err) = serde_json::from_slice::<AppError>(&bytes) {
        if parts.status == StatusCode::INTERNAL_SERVER_ERROR
            && let Ok(status) = StatusCode::from_u16(err.status())
        {
            parts.status = status;
        }
        parts.extensions.insert(err);
    }
    Response::from_parts(parts, Body::from(bytes))
}
