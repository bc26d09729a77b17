//! `/api/v1/clusters/{id}/connect…` (Connect clusters and their
//! connectors) and `/api/v1/connect/validate`.

use axum::Extension;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use std::sync::Arc;
use streamkeeper::accounts::account::Principal;
use streamkeeper::platform::page::{Page, PageRequest};
use streamkeeper_app::port::ClientAddr;
use streamkeeper_app::port::Connect as _;
use utoipa::{IntoParams, ToSchema};

use super::{
    ConnectClusterView, ConnectService, ConnectSpec, ConnectTest, ConnectorDetail,
    ConnectorSummary, ValidateReport, ValidateRequest,
};
use crate::platform::rest::{ApiError, ApiJson, ApiPath, ApiQuery, ErrorBody};
use axum::extract::FromRef;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The cluster's Connect clusters, with when each was last read and why
/// the last pass failed (a gap) if it did.
#[utoipa::path(get, path = "/clusters/{id}/connect", tag = "connect",
    params(("id" = i64, Path)),
    responses((status = 200, body = Vec<ConnectClusterView>), (status = 404, body = ErrorBody)))]
pub async fn list(
    State(st): State<Arc<ConnectService>>,
    Extension(who): Extension<Principal>,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<Vec<ConnectClusterView>>, ApiError> {
    Ok(Json(st.connect_clusters(&who, id).await?))
}

/// Add or change a Connect cluster, by name (admin). Credentials are
/// references (`env:NAME`, `file:/path`): Basic, or a bearer token; on
/// Confluent Cloud a Cloud API key as Basic.
#[utoipa::path(put, path = "/clusters/{id}/connect", tag = "connect",
    params(("id" = i64, Path)), request_body = ConnectSpec,
    responses((status = 200, body = ConnectClusterView), (status = 403, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn set(
    State(st): State<Arc<ConnectService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(id): ApiPath<i64>,
    ApiJson(spec): ApiJson<ConnectSpec>,
) -> Result<Json<ConnectClusterView>, ApiError> {
    Ok(Json(st.set(&who, &from, id, spec).await?))
}

/// Remove a Connect cluster and what was read of it (admin).
#[utoipa::path(delete, path = "/clusters/{id}/connect/{name}", tag = "connect",
    params(("id" = i64, Path), ("name" = String, Path)),
    responses((status = 204), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn delete(
    State(st): State<Arc<ConnectService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath((id, name)): ApiPath<(i64, String)>,
) -> Result<StatusCode, ApiError> {
    st.delete(&who, &from, id, &name).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Test the connection (admin): the worker's version (none on Confluent
/// Cloud), how many plugins and connectors it has; or why it could not.
#[utoipa::path(post, path = "/clusters/{id}/connect/{name}/test", tag = "connect",
    params(("id" = i64, Path), ("name" = String, Path)),
    responses((status = 200, body = ConnectTest), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn test(
    State(st): State<Arc<ConnectService>>,
    Extension(who): Extension<Principal>,
    ApiPath((id, name)): ApiPath<(i64, String)>,
) -> Result<Json<ConnectTest>, ApiError> {
    Ok(Json(st.test(&who, id, &name).await?))
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct ConnectorsQuery {
    /// Only connectors whose name or class contains this (any case).
    q: Option<String>,
    page: Option<u32>,
    per_page: Option<u32>,
}

/// A Connect cluster's connectors as the status routine last read them:
/// trouble first (FAILED, then UNASSIGNED or RESTARTING, then paused or
/// stopped, then running, then gone), then by name.
#[utoipa::path(get, path = "/clusters/{id}/connect/{name}/connectors", tag = "connect",
    params(("id" = i64, Path), ("name" = String, Path), ConnectorsQuery),
    responses((status = 200, body = Page<ConnectorSummary>), (status = 404, body = ErrorBody)))]
pub async fn connectors(
    State(st): State<Arc<ConnectService>>,
    Extension(who): Extension<Principal>,
    ApiPath((id, name)): ApiPath<(i64, String)>,
    ApiQuery(q): ApiQuery<ConnectorsQuery>,
) -> Result<Json<Page<ConnectorSummary>>, ApiError> {
    let page = PageRequest::new(q.page, q.per_page);
    Ok(Json(
        st.connectors(&who, id, &name, q.q.as_deref(), page).await?,
    ))
}

/// One connector: its config with secrets masked, tasks with their traces,
/// its state history and the topics it reads and writes.
#[utoipa::path(get, path = "/clusters/{id}/connect/{name}/connectors/{connector}", tag = "connect",
    params(("id" = i64, Path), ("name" = String, Path), ("connector" = String, Path)),
    responses((status = 200, body = ConnectorDetail), (status = 404, body = ErrorBody)))]
pub async fn connector(
    State(st): State<Arc<ConnectService>>,
    Extension(who): Extension<Principal>,
    ApiPath((id, name, connector)): ApiPath<(i64, String, String)>,
) -> Result<Json<ConnectorDetail>, ApiError> {
    Ok(Json(st.connector(&who, id, &name, &connector).await?))
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct ConnectorOwner {
    /// Team name, or null: then the owner of a stream it reads or writes.
    pub team: Option<String>,
}

/// Set a connector's owner team (admin; owners may claim an unowned
/// connector for their team).
#[utoipa::path(put, path = "/clusters/{id}/connect/{name}/connectors/{connector}/owner", tag = "connect",
    params(("id" = i64, Path), ("name" = String, Path), ("connector" = String, Path)), request_body = ConnectorOwner,
    responses((status = 204), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn set_owner(
    State(st): State<Arc<ConnectService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath((id, name, connector)): ApiPath<(i64, String, String)>,
    ApiJson(o): ApiJson<ConnectorOwner>,
) -> Result<StatusCode, ApiError> {
    st.set_owner(&who, &from, id, &name, &connector, o.team.as_deref())
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Validate a connector config: the rules (required properties, allowed
/// values, the known traps, each finding with a fix), and with
/// `cluster_id` and `connect` the worker's own validate beside them and
/// the cluster's topics, registry and other connectors in the rules' view.
/// The answer never echoes an inline secret.
#[utoipa::path(post, path = "/connect/validate", tag = "connect",
    request_body = ValidateRequest,
    responses((status = 200, body = ValidateReport), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn validate(
    State(st): State<Arc<ConnectService>>,
    Extension(who): Extension<Principal>,
    ApiJson(req): ApiJson<ValidateRequest>,
) -> Result<Json<ValidateReport>, ApiError> {
    Ok(Json(st.validate(&who, req).await?))
}

/// "Change this connector": the running config read from the worker now,
/// as a draft to edit and propose (`POST /review-items/connectors`), with
/// inline secrets masked and the findings beside the worker's answer.
#[utoipa::path(get, path = "/clusters/{id}/connect/{name}/connectors/{connector}/draft", tag = "connect",
    params(("id" = i64, Path), ("name" = String, Path), ("connector" = String, Path)),
    responses((status = 200, body = ValidateReport), (status = 404, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn import(
    State(st): State<Arc<ConnectService>>,
    Extension(who): Extension<Principal>,
    ApiPath((id, name, connector)): ApiPath<(i64, String, String)>,
) -> Result<Json<ValidateReport>, ApiError> {
    Ok(Json(st.import(&who, id, &name, &connector).await?))
}

/// This feature's REST routes with their OpenAPI paths, relative to
/// `/api/v1` (the router nests and merges them).
pub fn routes<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    Arc<ConnectService>: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(list, set))
        .routes(routes!(delete))
        .routes(routes!(test))
        .routes(routes!(connectors))
        .routes(routes!(connector))
        .routes(routes!(set_owner))
        .routes(routes!(import))
        .routes(routes!(validate))
}
