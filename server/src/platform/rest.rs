//! REST errors: JSON with a stable code and a message, and extractors that
//! turn malformed bodies, queries and paths into 400s with the reason, and
//! text holding a control character into a 422 naming the field
//! (`streamkeeper::platform::text`).

use axum::Json;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Path, Query, RawPathParams, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;
use streamkeeper::platform::text::{self, ControlCharacter, TextKind};
use streamkeeper_app::error::AppError;
use utoipa::ToSchema;

#[derive(Debug)]
pub struct ApiError(pub AppError);

/// The body of every error: `{"error": {"code": "...", "message": "..."}}`.
#[derive(Serialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Serialize, ToSchema)]
pub struct ErrorDetail {
    /// Stable: unauthenticated, forbidden, password_change_required, not_found, invalid, conflict,
    /// unavailable, internal, bad_request, cross_site, too_large.
    pub code: String,
    pub message: String,
}

impl ApiError {
    /// The same error with a more specific message.
    pub fn with_message(self, message: &str) -> ApiMessage {
        ApiMessage(self.0, message.to_string())
    }
}

pub struct ApiMessage(AppError, String);

fn respond(err: &AppError, message: String) -> Response {
    let status = StatusCode::from_u16(err.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = ErrorBody {
        error: ErrorDetail {
            code: err.code().to_string(),
            message,
        },
    };
    let mut res = (status, Json(body)).into_response();
    // The web layer reads what was refused from here (web::refusals).
    res.extensions_mut().insert(err.clone());
    res
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        respond(&self.0, self.0.to_string())
    }
}

impl IntoResponse for ApiMessage {
    fn into_response(self) -> Response {
        respond(&self.0, self.1)
    }
}

impl From<AppError> for ApiError {
    fn from(e: AppError) -> Self {
        ApiError(e)
    }
}

impl From<streamkeeper::platform::page::UnknownChoice> for ApiError {
    fn from(e: streamkeeper::platform::page::UnknownChoice) -> Self {
        ApiError(e.into())
    }
}

fn bad_request(what: &str, text: String) -> ApiError {
    ApiError(AppError::Request(format!("{what}: {text}")))
}

impl From<ControlCharacter> for ApiError {
    fn from(e: ControlCharacter) -> Self {
        ApiError(AppError::Invalid(e.to_string()))
    }
}

/// A JSON body's strings checked for control characters. Only a body the
/// byte scan suspects is parsed a second time; one that is not JSON is
/// left to the decoder to refuse with its reason.
fn refuse_controls(bytes: &[u8]) -> Result<(), ApiError> {
    if !text::json_may_hold_control(bytes) {
        return Ok(());
    }
    match serde_json::from_slice::<serde_json::Value>(bytes) {
        Ok(value) => Ok(text::check_json(&value)?),
        Err(_) => Ok(()),
    }
}

/// The query string's names and values, decoded, each one line.
pub fn refuse_query_controls(query: Option<&str>) -> Result<(), ControlCharacter> {
    let pairs = form_urlencoded::parse(query.unwrap_or_default().as_bytes());
    for (name, value) in pairs {
        text::check("the query", &name, TextKind::Line)?;
        text::check(&name, &value, TextKind::Line)?;
    }
    Ok(())
}

/// `Json` whose rejections are 400 JSON errors with the parser's reason.
/// A big body (a schema, say) is decoded on the blocking pool, a few at a
/// time, so twenty 1 MiB checks arriving at once do not hold the async
/// threads for the milliseconds each decode takes.
pub struct ApiJson<T>(pub T);

/// Bodies up to this are decoded where they arrive: cheaper than a hop.
const DECODE_HERE: usize = 64 << 10;

fn is_json(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|t| t.trim().to_ascii_lowercase())
        .is_some_and(|t| {
            t == "application/json" || (t.starts_with("application/") && t.ends_with("+json"))
        })
}

impl<S: Send + Sync, T: DeserializeOwned + Send + 'static> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let limit = req
            .extensions()
            .get::<crate::platform::limits::BodyLimit>()
            .copied();
        let invalid = move |e: JsonRejection| match limit {
            // A body cut off at the limit: say so, not "invalid JSON".
            Some(limit) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                ApiError(limit.refusal(None))
            }
            _ => bad_request("the JSON body is invalid", e.body_text()),
        };
        if !is_json(req.headers()) {
            // Json answers a missing or wrong content type as it always has.
            return Json::<T>::from_request(req, state)
                .await
                .map(|Json(v)| ApiJson(v))
                .map_err(invalid);
        }
        let bytes = axum::body::Bytes::from_request(req, state)
            .await
            .map_err(|e| invalid(JsonRejection::from(e)))?;
        let small = bytes.len() <= DECODE_HERE;
        let decode = move || {
            refuse_controls(&bytes)?;
            Json::<T>::from_bytes(&bytes)
                .map(|Json(v)| ApiJson(v))
                .map_err(invalid)
        };
        if small {
            decode()
        } else {
            crate::platform::limits::decoding().run(decode).await?
        }
    }
}

/// `Query` whose rejections are 400 JSON errors, and a control character
/// in a name or value a 422.
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        refuse_query_controls(parts.uri.query())?;
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(v)| ApiQuery(v))
            .map_err(|e: QueryRejection| bad_request("the query string is invalid", e.body_text()))
    }
}

/// `Path` whose rejections are 400 JSON errors, and a control character in
/// a segment a 422.
pub struct ApiPath<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiPath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        // Each segment decoded, one line: `%00` in a topic's name is refused
        // here, not by the database.
        if let Ok(raw) = RawPathParams::from_request_parts(parts, state).await {
            for (name, value) in &raw {
                text::check(name, value, TextKind::Line)?;
            }
        }
        Path::<T>::from_request_parts(parts, state)
            .await
            .map(|Path(v)| ApiPath(v))
            .map_err(|e: PathRejection| bad_request("the path is invalid", e.body_text()))
    }
}
