//! `/api/v1/routines`: the background routines as a platform team watches
//! them, and the admin's schedule and run-now.

use axum::Extension;
use axum::Json;
use axum::extract::State;
use serde::Deserialize;
use streamkeeper::accounts::account::Principal;
use streamkeeper::platform::page::{Page, PageRequest};
use utoipa::IntoParams;

use crate::platform::rest::{ApiError, ApiJson, ApiPath, ApiQuery, ErrorBody};
use crate::platform::routine::{RoutineStatus, Routines, RunRequested};
use axum::extract::FromRef;
use streamkeeper::platform::schedule::Schedule;
use streamkeeper_app::platform::model::ReplicaShares;
use streamkeeper_app::port::ClientAddr;
use utoipa::ToSchema;
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

/// How the per-cluster routines are shared out over the replicas (admin):
/// each replica's version and heartbeat, the clusters it holds of each
/// routine, and the fair share (clusters ÷ live replicas, rounded up).
#[utoipa::path(get, path = "/routines/replicas", tag = "routines",
    responses((status = 200, body = ReplicaShares), (status = 403, body = ErrorBody)))]
pub async fn replicas(
    State(routines): State<Routines>,
    Extension(who): Extension<Principal>,
) -> Result<Json<ReplicaShares>, ApiError> {
    Ok(Json(routines.replicas(&who).await?))
}

/// Set a routine's schedule for all its targets (admin): `{"kind":
/// "every", "every_ms": 30000}`, `{"kind": "cron", "expression": "*/5 * * *
/// *"}` (UTC), `{"kind": "paused"}` or `{"kind": "default"}` (its own
/// interval). Every replica runs it so from its next run.
#[utoipa::path(put, path = "/routines/{name}/schedule", tag = "routines",
    params(("name" = String, Path, description = "The routine, e.g. `registry-hygiene`")),
    request_body = Schedule,
    responses((status = 200, body = Schedule), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn set_schedule(
    State(routines): State<Routines>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(name): ApiPath<String>,
    ApiJson(schedule): ApiJson<Schedule>,
) -> Result<Json<Schedule>, ApiError> {
    Ok(Json(
        routines.set_schedule(&who, &from, &name, schedule).await?,
    ))
}

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct RunNow {
    /// The cluster, for a per-cluster routine; none: every cluster.
    pub cluster: Option<String>,
}

/// Run a routine once now (admin), paused or not: one replica runs each
/// target once, however many see the request.
#[utoipa::path(post, path = "/routines/{name}/run", tag = "routines",
    params(("name" = String, Path, description = "The routine, e.g. `sample`")),
    request_body = RunNow,
    responses((status = 202, body = RunRequested), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn run_now(
    State(routines): State<Routines>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(name): ApiPath<String>,
    ApiJson(body): ApiJson<RunNow>,
) -> Result<(axum::http::StatusCode, Json<RunRequested>), ApiError> {
    let asked = routines
        .run_now(&who, &from, &name, body.cluster.as_deref())
        .await?;
    Ok((axum::http::StatusCode::ACCEPTED, Json(asked)))
}

/// This feature's REST routes with their OpenAPI paths, relative to
/// `/api/v1` (the router nests and merges them).
pub fn routes<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    Routines: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(replicas))
        .routes(routes!(set_schedule))
        .routes(routes!(run_now))
}
