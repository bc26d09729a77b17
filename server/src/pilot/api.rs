//! `/api/v1/pilot`: the pilot's page, its settings, its receipts and the
//! CSV exports (managers and admins).

use axum::Extension;
use axum::Json;
use axum::extract::{FromRef, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use serde::Deserialize;
use std::sync::Arc;
use streamkeeper::accounts::account::Principal;
use streamkeeper::pilot::receipts::Receipt;
use streamkeeper::pilot::{PilotInput, PilotReport, PilotSettings};
use streamkeeper::platform::page::{Page, PageRequest};
use streamkeeper_app::port::ClientAddr;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{PilotService, events_csv, table_csv};
use crate::platform::rest::{ApiError, ApiJson, ApiQuery, ErrorBody};
use streamkeeper_app::port::Pilot as _;

/// The pilot: the day-30 table (each metric's baseline, p50 and p90 over
/// the pilot so far, the ratio to the baseline, the events it rests on),
/// every week's figures and counts, and the flags dismissed as wrong with
/// their reasons.
#[utoipa::path(get, path = "/pilot", tag = "pilot",
    responses((status = 200, body = PilotReport), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "No pilot is set up yet")))]
pub async fn report(
    State(pilot): State<Arc<PilotService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
) -> Result<Json<PilotReport>, ApiError> {
    Ok(Json(pilot.report(&who, &from, Utc::now()).await?))
}

/// The pilot's settings: scope, start, every metric's baseline.
#[utoipa::path(get, path = "/pilot/settings", tag = "pilot",
    responses((status = 200, body = PilotSettings), (status = 403, body = ErrorBody)))]
pub async fn settings(
    State(pilot): State<Arc<PilotService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
) -> Result<Json<PilotSettings>, ApiError> {
    Ok(Json(pilot.settings(&who, &from).await?))
}

/// Set the pilot up or change it: scope (`clusters`, `streams` as
/// `cluster/topic`, or `domains`), start date, and the baselines entered,
/// each with a note on where it came from (metrics left out keep their
/// defaults: 2 h, 8 h, 2 days).
#[utoipa::path(put, path = "/pilot/settings", tag = "pilot", request_body = PilotInput,
    responses((status = 200, body = PilotSettings), (status = 403, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
pub async fn set_settings(
    State(pilot): State<Arc<PilotService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiJson(input): ApiJson<PilotInput>,
) -> Result<Json<PilotSettings>, ApiError> {
    Ok(Json(pilot.set(&who, &from, input).await?))
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct ReceiptQuery {
    page: Option<u32>,
    per_page: Option<u32>,
}

/// What Streamkeeper would have done in the pilot's domains at watch or
/// suggest (flags it raised, changes it would have blocked, connector
/// restarts it would have made), each with its receipt, newest first.
#[utoipa::path(get, path = "/pilot/receipts", tag = "pilot", params(ReceiptQuery),
    responses((status = 200, body = Page<Receipt>), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)))]
pub async fn receipts(
    State(pilot): State<Arc<PilotService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiQuery(q): ApiQuery<ReceiptQuery>,
) -> Result<Json<Page<Receipt>>, ApiError> {
    let page = PageRequest::new(q.page, q.per_page);
    Ok(Json(pilot.receipts(&who, &from, page).await?))
}

fn csv(name: &str, body: Vec<u8>) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{name}\""),
            ),
        ],
        body,
    )
        .into_response()
}

/// The day-30 table as CSV (the figures of `GET /pilot`'s `report.table`).
#[utoipa::path(get, path = "/pilot/table.csv", tag = "pilot",
    responses((status = 200, content_type = "text/csv", body = String),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn table(
    State(pilot): State<Arc<PilotService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
) -> Result<Response, ApiError> {
    let r = pilot.report(&who, &from, Utc::now()).await?;
    Ok(csv("pilot-table.csv", table_csv(&r)?))
}

/// Every timed event behind the figures as CSV: metric, the record it
/// comes from, subject, start, end, duration and pilot week.
#[utoipa::path(get, path = "/pilot/events.csv", tag = "pilot",
    responses((status = 200, content_type = "text/csv", body = String),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn events(
    State(pilot): State<Arc<PilotService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
) -> Result<Response, ApiError> {
    let (start, events) = pilot.events(&who, &from, Utc::now()).await?;
    Ok(csv("pilot-events.csv", events_csv(start, &events)?))
}

/// This feature's REST routes with their OpenAPI paths, relative to
/// `/api/v1` (the router nests and merges them).
pub fn routes<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    Arc<PilotService>: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(report))
        .routes(routes!(settings, set_settings))
        .routes(routes!(receipts))
        .routes(routes!(table))
        .routes(routes!(events))
}
