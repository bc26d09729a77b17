//! One request body limit for every route, server functions included
//! (they read their bodies whole, past axum's extractors and their
//! limit): a body that says it is too long is refused at once, one that
//! does not is cut off when it gets there, and both refusals are a JSON
//! 413 naming the limit.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::AppState;
use crate::platform::limits::BodyLimit;
use crate::platform::rest::ApiError;

pub async fn limit(State(st): State<AppState>, mut req: Request, next: Next) -> Response {
    let limit = BodyLimit(st.config.body_limit());
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > u64::try_from(limit.0).unwrap_or(u64::MAX)) {
        return ApiError(limit.refusal(declared)).into_response();
    }
    req.extensions_mut().insert(limit);
    let req = req.map(|body| Body::new(http_body_util::Limited::new(body, limit.0)));
    next.run(req).await
}
