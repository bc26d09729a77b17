//! `/api/v1/.../schemas`: the catalog's schemas, checks of proposed
//! producer schemas (for CI jobs), and a cluster's Schema Registry.

use axum::Extension;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use streamkeeper::accounts::account::Principal;
use streamkeeper::platform::page::PageRequest;
use streamkeeper_app::port::ClientAddr;
use streamkeeper_app::port::Schemas as _;
use streamkeeper_app::schemas::model::{
    CatalogSchema, CompatibilityReport, NewCatalogSchema, OwnersNotice, ProposedSchema,
    RegistrySpec, RegistryStatus, RegistrySubjects, StreamSchemas, SubjectDiff,
};
use utoipa::IntoParams;

use crate::platform::rest::{ApiError, ApiJson, ApiPath, ApiQuery, ErrorBody};
use crate::schemas::SchemaService;
use axum::extract::FromRef;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// A stream's schema with its history, each consumer group's reader schema
/// (declared, assumed, or missing) and the last checks.
#[utoipa::path(get, path = "/clusters/{id}/streams/{topic}/schemas", tag = "schemas",
    params(("id" = i64, Path), ("topic" = String, Path)),
    responses((status = 200, body = StreamSchemas), (status = 404, body = ErrorBody)))]
pub async fn stream_schemas(
    State(st): State<Arc<SchemaService>>,
    Extension(who): Extension<Principal>,
    ApiPath((id, topic)): ApiPath<(i64, String)>,
) -> Result<Json<StreamSchemas>, ApiError> {
    Ok(Json(st.stream_schemas(&who, id, &topic).await?))
}

/// Record the stream's (producer) schema: text, or a registry subject and
/// version to pin. Admins, or owners of the stream's team.
#[utoipa::path(put, path = "/clusters/{id}/streams/{topic}/schema", tag = "schemas",
    params(("id" = i64, Path), ("topic" = String, Path)), request_body = NewCatalogSchema,
    responses((status = 201, body = CatalogSchema), (status = 403, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn record_stream_schema(
    State(st): State<Arc<SchemaService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath((id, topic)): ApiPath<(i64, String)>,
    ApiJson(new): ApiJson<NewCatalogSchema>,
) -> Result<(StatusCode, Json<CatalogSchema>), ApiError> {
    let s = st.record_schema(&who, &from, id, &topic, None, new).await?;
    Ok((StatusCode::CREATED, Json(s)))
}

/// Record the reader schema a consumer group reads a topic with. Admins,
/// or owners of the group's team.
#[utoipa::path(put, path = "/clusters/{id}/groups/{group}/reader-schemas/{topic}", tag = "schemas",
    params(("id" = i64, Path), ("group" = String, Path), ("topic" = String, Path)),
    request_body = NewCatalogSchema,
    responses((status = 201, body = CatalogSchema), (status = 403, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn record_reader_schema(
    State(st): State<Arc<SchemaService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath((id, group, topic)): ApiPath<(i64, String, String)>,
    ApiJson(new): ApiJson<NewCatalogSchema>,
) -> Result<(StatusCode, Json<CatalogSchema>), ApiError> {
    let s = st
        .record_schema(&who, &from, id, &topic, Some(&group), new)
        .await?;
    Ok((StatusCode::CREATED, Json(s)))
}

/// Check a proposed producer schema against every consumer group that
/// reads the topic and against the subject's history (the registry's own
/// check as a second opinion). For CI: `verdict` is COMPATIBLE,
/// INCOMPATIBLE or UNDECIDED.
#[utoipa::path(post, path = "/clusters/{id}/streams/{topic}/compatibility", tag = "schemas",
    params(("id" = i64, Path), ("topic" = String, Path)), request_body = ProposedSchema,
    responses((status = 200, body = CompatibilityReport), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn check(
    State(st): State<Arc<SchemaService>>,
    Extension(who): Extension<Principal>,
    ApiPath((id, topic)): ApiPath<(i64, String)>,
    ApiJson(proposed): ApiJson<ProposedSchema>,
) -> Result<Json<CompatibilityReport>, ApiError> {
    Ok(Json(st.check(&who, id, &topic, proposed).await?))
}

/// A recorded check.
#[utoipa::path(get, path = "/schema-checks/{id}", tag = "schemas", params(("id" = i64, Path)),
    responses((status = 200, body = CompatibilityReport), (status = 404, body = ErrorBody)))]
pub async fn check_report(
    State(st): State<Arc<SchemaService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<CompatibilityReport>, ApiError> {
    Ok(Json(st.check_report(&who, &from, id).await?))
}

/// "Notify owners": send the check's downstream breakage to the owner
/// teams it reaches, through their notification channels. The check's
/// submitter, members of the stream's team and admins; 422 when no owned
/// column or dashboard is reached.
#[utoipa::path(post, path = "/schema-checks/{id}/notify", tag = "schemas", params(("id" = i64, Path)),
    responses((status = 201, body = OwnersNotice), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn notify_owners(
    State(st): State<Arc<SchemaService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(id): ApiPath<i64>,
) -> Result<(StatusCode, Json<OwnersNotice>), ApiError> {
    let sent = st.notify_breakage_owners(&who, &from, id).await?;
    Ok((StatusCode::CREATED, Json(sent)))
}

/// Set the cluster's Schema Registry (admin). Credentials are references
/// (`env:NAME`, `file:/path`), e.g. a Confluent Cloud Schema Registry key.
#[utoipa::path(put, path = "/clusters/{id}/registry", tag = "schemas",
    params(("id" = i64, Path)), request_body = RegistrySpec,
    responses((status = 200, body = RegistrySpec), (status = 403, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn set_registry(
    State(st): State<Arc<SchemaService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(id): ApiPath<i64>,
    ApiJson(spec): ApiJson<RegistrySpec>,
) -> Result<Json<RegistrySpec>, ApiError> {
    Ok(Json(st.set_registry(&who, &from, id, spec).await?))
}

/// The cluster's registry as the hygiene routine last read it: when, what
/// failed, and its findings (unregistered topics, subjects with no topic,
/// levels that differ from the stream's declared one).
#[utoipa::path(get, path = "/clusters/{id}/registry", tag = "schemas",
    params(("id" = i64, Path)),
    responses((status = 200, body = RegistryStatus), (status = 404, body = ErrorBody)))]
pub async fn registry_status(
    State(st): State<Arc<SchemaService>>,
    Extension(who): Extension<Principal>,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<RegistryStatus>, ApiError> {
    st.registry_status(&who, id)
        .await?
        .map(Json)
        .ok_or_else(|| {
            streamkeeper_app::error::AppError::NotFound("This cluster's Schema Registry".into())
                .into()
        })
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct SubjectsQuery {
    /// Only subjects whose name contains this (any case).
    q: Option<String>,
    /// `subject` (the default), `versions` (how many), `latest` (the
    /// latest version's schema id) or `level`; a `-` before it sorts
    /// descending. 400 for another.
    sort: Option<String>,
    page: Option<u32>,
    per_page: Option<u32>,
}

/// The registry's subjects with their versions, latest schema and levels,
/// a page at a time, as the hygiene routine last read them (`read_at`,
/// null before the first reading; `last_error` when the last one failed).
#[utoipa::path(get, path = "/clusters/{id}/registry/subjects", tag = "schemas",
    params(("id" = i64, Path), SubjectsQuery),
    responses((status = 200, body = RegistrySubjects), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn registry_subjects(
    State(st): State<Arc<SchemaService>>,
    Extension(who): Extension<Principal>,
    ApiPath(id): ApiPath<i64>,
    ApiQuery(q): ApiQuery<SubjectsQuery>,
) -> Result<Json<RegistrySubjects>, ApiError> {
    let page = PageRequest::new(q.page, q.per_page);
    Ok(Json(
        st.registry_subjects(&who, id, q.q, q.sort, page).await?,
    ))
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct DiffQuery {
    /// The older version (default: the one before `right`).
    left: Option<u32>,
    /// The newer version (default: the latest).
    right: Option<u32>,
}

/// Two versions of a subject side by side, line by line.
#[utoipa::path(get, path = "/clusters/{id}/registry/subjects/{subject}/diff", tag = "schemas",
    params(("id" = i64, Path), ("subject" = String, Path), DiffQuery),
    responses((status = 200, body = SubjectDiff), (status = 404, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn subject_diff(
    State(st): State<Arc<SchemaService>>,
    Extension(who): Extension<Principal>,
    ApiPath((id, subject)): ApiPath<(i64, String)>,
    ApiQuery(q): ApiQuery<DiffQuery>,
) -> Result<Json<SubjectDiff>, ApiError> {
    Ok(Json(
        st.subject_diff(&who, id, &subject, q.left, q.right).await?,
    ))
}

/// This feature's REST routes with their OpenAPI paths, relative to
/// `/api/v1` (the router nests and merges them).
pub fn routes<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    Arc<SchemaService>: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(stream_schemas))
        .routes(routes!(record_stream_schema))
        .routes(routes!(record_reader_schema))
        .routes(routes!(check))
        .routes(routes!(check_report))
        .routes(routes!(notify_owners))
        .routes(routes!(set_registry, registry_status))
        .routes(routes!(registry_subjects))
        .routes(routes!(subject_diff))
}
