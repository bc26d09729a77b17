//! Server functions answer every error with 500 and the error in the body.
//! This gives them the status their error means (400 for a malformed form,
//! 401, 403, 404, 409, 422, 503), read from the one error type they share,
//! and hands the error to the layers above as a response extension (a form
//! posted without JavaScript is redirected back with its error, so the
//! status alone does not say it was refused). And a form holding a control
//! character is refused before the server function reads it, with the field
//! named, as the REST extractors refuse it (issue 39).

use axum::body::{Body, to_bytes};
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use leptos::server_fn::error::{FromServerFnError, SERVER_FN_ERROR_HEADER, ServerFnUrlError};
use streamkeeper::platform::text::{self, ControlCharacter, TextKind};
use streamkeeper_app::error::AppError;

use crate::platform::limits::BodyLimit;
use crate::platform::rest::refuse_query_controls;

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

/// A server function's form (`application/x-www-form-urlencoded`, what
/// every one of ours takes) and query checked for control characters: the
/// names one line, the values free text. Sits inside `error_status`, which
/// gives its refusal the status and extension any server function error
/// gets.
pub async fn refuse_controls(req: Request, next: Next) -> Response {
    let path = req.uri().path().to_string();
    if !path.starts_with("/fn/") {
        return next.run(req).await;
    }
    let accepts_html = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/html"));
    let referer = req
        .headers()
        .get(header::REFERER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let refuse = |e: AppError| refusal(&path, accepts_html, referer.as_deref(), e);
    if let Err(e) = refuse_query_controls(req.uri().query()) {
        return refuse(AppError::Invalid(e.to_string()));
    }
    let form = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    if !form {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    // The body limit's layer has cut the body off at its limit already.
    let bytes = match to_bytes(body, usize::MAX).await {
        Ok(bytes) => bytes,
        Err(_) => {
            let limit = parts.extensions.get::<BodyLimit>().copied();
            return refuse(limit.map_or_else(
                || AppError::Request("the form could not be read".into()),
                |l| l.refusal(None),
            ));
        }
    };
    if let Err(e) = check_form(&bytes) {
        return refuse(AppError::Invalid(e.to_string()));
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

fn check_form(bytes: &[u8]) -> Result<(), ControlCharacter> {
    for (name, value) in form_urlencoded::parse(bytes) {
        text::check("the form", &name, TextKind::Line)?;
        text::check(&name, &value, TextKind::Lines)?;
    }
    Ok(())
}

/// The answer a server function gives for `error`: the error as JSON with
/// leptos's error header, or for a form posted without JavaScript, a
/// redirect back to its page with the error in the URL (which the page
/// shows), as leptos's own `form-redirects` does.
fn refusal(path: &str, accepts_html: bool, referer: Option<&str>, error: AppError) -> Response {
    let status = StatusCode::from_u16(error.status()).unwrap_or(StatusCode::BAD_REQUEST);
    let mut res = Response::new(Body::from(error.ser()));
    *res.status_mut() = status;
    let headers = res.headers_mut();
    if let Ok(v) = HeaderValue::from_str(path) {
        headers.insert(SERVER_FN_ERROR_HEADER, v);
    }
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if accepts_html {
        let back = referer.unwrap_or("/");
        let to = ServerFnUrlError::new(path, error)
            .to_url(back)
            .map_or_else(|_| back.to_string(), |u| u.to_string());
        if let Ok(v) = HeaderValue::from_str(&to) {
            *res.status_mut() = StatusCode::FOUND;
            res.headers_mut().insert(header::LOCATION, v);
        }
    }
    res
}
