//! `/api/v1/audit` and `/api/v1/audit/refusals`.

use axum::Extension;
use axum::Json;
use axum::extract::State;
use serde::Deserialize;
use streamkeeper::accounts::account::Principal;
use streamkeeper::platform::page::{Page, PageRequest};
use streamkeeper_app::audit::model::{AuditFilter, AuditRow, RefusalTally};
use utoipa::IntoParams;

use crate::platform::rest::{ApiError, ApiQuery, ErrorBody};
use axum::extract::FromRef;
use streamkeeper_app::port::Backend;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

#[derive(Debug, Deserialize, IntoParams)]
pub struct AuditQuery {
    /// Substring of the actor's name.
    actor: Option<String>,
    /// Substring of the action, e.g. `login.failure`.
    action: Option<String>,
    /// Substring of the target, e.g. `user:alice`.
    target: Option<String>,
    page: Option<u32>,
    per_page: Option<u32>,
}

/// The entries' filters, and their order.
#[derive(Debug, Deserialize, IntoParams)]
pub struct EntryQuery {
    /// Substring of the actor's name.
    actor: Option<String>,
    /// Substring of the action, e.g. `login.failure`.
    action: Option<String>,
    /// Substring of the target, e.g. `user:alice`.
    target: Option<String>,
    /// `id` (the chain's order; `-id`, the newest first, is the default),
    /// `at`, `actor`, `action`, `target` or `source`; a `-` before it sorts
    /// descending. 400 for another.
    sort: Option<String>,
    page: Option<u32>,
    per_page: Option<u32>,
}

/// Audit entries, newest first unless `sort` says otherwise (admin).
#[utoipa::path(get, path = "/audit", tag = "audit", params(EntryQuery),
    responses((status = 200, body = Page<AuditRow>), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn list(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
    ApiQuery(q): ApiQuery<EntryQuery>,
) -> Result<Json<Page<AuditRow>>, ApiError> {
    let filter = AuditFilter {
        actor: q.actor,
        action: q.action,
        target: q.target,
    };
    let page = PageRequest::new(q.page, q.per_page);
    Ok(Json(st.audit.entries(&who, filter, q.sort, page).await?))
}

/// Refusals by unauthenticated sources (cross-site requests, failed
/// sign-ins, unknown tokens), one row per source, action and minute with
/// its count, latest first (admin). Filters as for the entries.
#[utoipa::path(get, path = "/audit/refusals", tag = "audit", params(AuditQuery),
    responses((status = 200, body = Page<RefusalTally>), (status = 403, body = ErrorBody)))]
pub async fn refusals(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
    ApiQuery(q): ApiQuery<AuditQuery>,
) -> Result<Json<Page<RefusalTally>>, ApiError> {
    let filter = AuditFilter {
        actor: q.actor,
        action: q.action,
        target: q.target,
    };
    let page = PageRequest::new(q.page, q.per_page);
    Ok(Json(st.audit.refusals(&who, filter, page).await?))
}

/// This feature's REST routes with their OpenAPI paths, relative to
/// `/api/v1` (the router nests and merges them).
pub fn routes<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    Backend: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(refusals))
}
