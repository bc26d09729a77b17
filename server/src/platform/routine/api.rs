//! `/api/v1/routines`: the background routines as a platform team watches
//! them.

use axum::Extension;
use axum::Json;
use axum::extract::State;
use serde::Deserialize;
use streamkeeper::accounts::account::Principal;
use streamkeeper::platform::page::{Page, PageRequest};
use utoipa::IntoParams;

use crate::platform::rest::{ApiError, ApiQuery, ErrorBody};
use crate::platform::routine::{RoutineStatus, Routines};
use axum::extract::FromRef;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

#[derive(Debug, Deserialize, IntoParams)]
pub struct RoutineQuery {
    /// One routine by name, e.g. `sample`.
    routine: Option<String>,
    page: Option<u32>,
    per_page: Option<u32>,
}

/// Each routine for each target it runs for (every cluster, for the
/// per-cluster ones): its last run's start, end, outcome and error, the
/// replica holding its lease, and when it is next due (admin).
#[utoipa::path(get, path = "/routines", tag = "routines", params(RoutineQuery),
    responses((status = 200, body = Page<RoutineStatus>), (status = 403, body = ErrorBody)))]
pub async fn list(
    State(routines): State<Routines>,
    Extension(who): Extension<Principal>,
    ApiQuery(q): ApiQuery<RoutineQuery>,
) -> Result<Json<Page<RoutineStatus>>, ApiError> {
    let page = PageRequest::new(q.page, q.per_page);
    Ok(Json(routines.list(&who, q.routine.as_deref(), page).await?))
}

/// This feature's REST routes with their OpenAPI paths, relative to
/// `/api/v1` (the router nests and merges them).
pub fn routes<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    Routines: FromRef<S>,
{
    OpenApiRouter::new().routes(routes!(list))
}
