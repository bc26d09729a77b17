//! A request id on every request: made here (a client's own `X-Request-Id`
//! is not trusted, so one id names one request), on every log line of the
//! request through its span, in the `X-Request-Id` response header, and as
//! the reference an internal error shows (`errors::reference`).

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument;

pub const HEADER: &str = "x-request-id";

pub async fn request_id(req: Request, next: Next) -> Response {
    let id = crate::platform::errors::fresh_reference();
    let span = tracing::info_span!(
        "request",
        request_id = %id,
        method = %req.method(),
        path = %req.uri().path(),
    );
    let mut res = crate::platform::errors::within_request(id.clone(), next.run(req))
        .instrument(span)
        .await;
    if let Ok(value) = HeaderValue::from_str(&id) {
        res.headers_mut().insert(HEADER, value);
    }
    res
}
