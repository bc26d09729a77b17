//! `/api/v1/clusters`: watched clusters and consumer-group lag; and the
//! streams' freshness SLOs (`/api/v1/domains/{domain}/slo`, `/api/v1/slo.csv`).

use axum::Extension;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use streamkeeper::accounts::account::Principal;
use streamkeeper::platform::page::{Page, PageRequest};
use streamkeeper_app::port::ClientAddr;
use streamkeeper_app::port::Slo as _;
use streamkeeper_app::port::Watch as _;
use streamkeeper_app::watch::model::DomainSlo;
use streamkeeper_app::watch::model::{
    ClusterView, GroupFilter, GroupLagView, GroupSummary, NewCluster, RemovedCluster, StreamSpec,
    TopicView,
};
use utoipa::{IntoParams, ToSchema};

use crate::platform::rest::{ApiError, ApiJson, ApiPath, ApiQuery, ErrorBody};
use crate::watch::ClusterService;
use axum::extract::FromRef;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

#[derive(Debug, Deserialize, IntoParams)]
pub struct ClusterListQuery {
    /// `true` lists the removed clusters not purged yet instead (admin).
    #[serde(default)]
    removed: bool,
}

/// The watched clusters, or with `removed=true` the removed ones.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum ClusterList {
    Watched(Vec<ClusterView>),
    Removed(Vec<RemovedCluster>),
}

/// Watched clusters with their state and data age; with `removed=true`
/// (admin), the removed clusters whose history is still kept, with who
/// removed them, when, and when they are purged.
#[utoipa::path(get, path = "/clusters", tag = "watch", params(ClusterListQuery),
    responses((status = 200, body = ClusterList), (status = 403, body = ErrorBody)))]
pub async fn list(
    State(st): State<Arc<ClusterService>>,
    Extension(who): Extension<Principal>,
    ApiQuery(q): ApiQuery<ClusterListQuery>,
) -> Result<Json<ClusterList>, ApiError> {
    Ok(Json(if q.removed {
        ClusterList::Removed(st.removed_clusters(&who).await?)
    } else {
        ClusterList::Watched(st.clusters(&who).await?)
    }))
}

/// Add a cluster to watch (admin). Credentials are references only.
#[utoipa::path(post, path = "/clusters", tag = "watch", request_body = NewCluster,
    responses((status = 201, body = ClusterView), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn create(
    State(st): State<Arc<ClusterService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiJson(new): ApiJson<NewCluster>,
) -> Result<(StatusCode, Json<ClusterView>), ApiError> {
    let c = st.create_cluster(&who, &from, new).await?;
    Ok((StatusCode::CREATED, Json(c)))
}

/// One cluster.
#[utoipa::path(get, path = "/clusters/{id}", tag = "watch", params(("id" = i64, Path)),
    responses((status = 200, body = ClusterView), (status = 404, body = ErrorBody)))]
pub async fn get(
    State(st): State<Arc<ClusterService>>,
    Extension(who): Extension<Principal>,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<ClusterView>, ApiError> {
    Ok(Json(st.get(&who, id).await?))
}

/// Change a cluster's connection settings and interval (admin); the body
/// is a whole cluster as `POST /clusters` takes it, its `name` ignored (a
/// cluster keeps its name). Audited with what changed.
#[utoipa::path(put, path = "/clusters/{id}", tag = "watch", params(("id" = i64, Path)),
    request_body = NewCluster,
    responses((status = 200, body = ClusterView), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn update(
    State(st): State<Arc<ClusterService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(id): ApiPath<i64>,
    ApiJson(new): ApiJson<NewCluster>,
) -> Result<Json<ClusterView>, ApiError> {
    Ok(Json(st.update_cluster(&who, &from, id, new, false).await?))
}

/// Stop watching a cluster (admin): it is gone from every list and page
/// (404 like an unknown cluster) and its name is free, but its history
/// (lag samples, flags, streams, schemas, review items, Connect clusters)
/// is kept for the retention period, then purged; until then
/// `POST /clusters/{id}/restore` brings it back. Audited with the purge
/// date. A clusters file that still names it adds a new one at the next
/// apply.
#[utoipa::path(delete, path = "/clusters/{id}", tag = "watch", params(("id" = i64, Path)),
    responses((status = 204), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn remove(
    State(st): State<Arc<ClusterService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(id): ApiPath<i64>,
) -> Result<StatusCode, ApiError> {
    st.remove_cluster(&who, &from, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Restore a removed cluster (admin) with its history: watched again from
/// the next pass, its lag windows starting there. 404 when no removed
/// cluster has that id (purged, or never removed); 409 when a watched
/// cluster has its name now. Audited as `cluster.restore`.
#[utoipa::path(post, path = "/clusters/{id}/restore", tag = "watch", params(("id" = i64, Path)),
    responses((status = 200, body = ClusterView), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn restore(
    State(st): State<Arc<ClusterService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<ClusterView>, ApiError> {
    Ok(Json(st.restore_cluster(&who, &from, id).await?))
}

/// Pause a cluster (admin): its routines skip it (no passes, no flags
/// raised or resolved) until it is resumed; its pages say since when and
/// by whom. Audited as `cluster.pause` when it was not paused already.
#[utoipa::path(post, path = "/clusters/{id}/pause", tag = "watch", params(("id" = i64, Path)),
    responses((status = 200, body = ClusterView), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn pause(
    State(st): State<Arc<ClusterService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<ClusterView>, ApiError> {
    Ok(Json(st.pause_cluster(&who, &from, id, true).await?))
}

/// Resume a paused cluster (admin): its routines take it up again within
/// about ten seconds. Audited as `cluster.resume` when it was paused.
#[utoipa::path(post, path = "/clusters/{id}/resume", tag = "watch", params(("id" = i64, Path)),
    responses((status = 200, body = ClusterView), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn resume(
    State(st): State<Arc<ClusterService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<ClusterView>, ApiError> {
    Ok(Json(st.pause_cluster(&who, &from, id, false).await?))
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct GroupQuery {
    /// A substring of the group's name.
    q: Option<String>,
    /// A status (`OK`, `WARN`, `STALL`, `STOP`, `REWIND`, `LOST`, `NO_COMMIT`,
    /// `INCOMPLETE`), `trouble` for any trouble, or `gone` for groups the
    /// cluster no longer lists.
    status: Option<String>,
    /// `trouble` (the default: the most troubled first), or `name`,
    /// `owner`, `members`, `lag`, `time_lag`; a `-` before it sorts
    /// descending (`-lag`: the largest lag first).
    sort: Option<String>,
    page: Option<u32>,
    per_page: Option<u32>,
}

/// A cluster's consumer groups with their last judgement, the most
/// troubled first unless `sort` says otherwise.
#[utoipa::path(get, path = "/clusters/{id}/groups", tag = "watch",
    params(("id" = i64, Path), GroupQuery),
    responses((status = 200, body = Page<GroupSummary>), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn groups(
    State(st): State<Arc<ClusterService>>,
    Extension(who): Extension<Principal>,
    ApiPath(id): ApiPath<i64>,
    ApiQuery(q): ApiQuery<GroupQuery>,
) -> Result<Json<Page<GroupSummary>>, ApiError> {
    let filter = GroupFilter {
        q: q.q,
        status: q.status,
        sort: q.sort,
    };
    let page = PageRequest::new(q.page, q.per_page);
    Ok(Json(st.groups(&who, id, filter, page).await?))
}

/// A consumer group's lag per partition, judged over the last passes.
#[utoipa::path(get, path = "/clusters/{id}/groups/{group}", tag = "watch",
    params(("id" = i64, Path), ("group" = String, Path)),
    responses((status = 200, body = GroupLagView), (status = 404, body = ErrorBody)))]
pub async fn group(
    State(st): State<Arc<ClusterService>>,
    Extension(who): Extension<Principal>,
    ApiPath((id, group)): ApiPath<(i64, String)>,
) -> Result<Json<GroupLagView>, ApiError> {
    Ok(Json(st.group_lag(&who, id, &group).await?))
}

/// The catalog: every topic of the cluster with its health and stream entry.
#[utoipa::path(get, path = "/clusters/{id}/streams", tag = "watch", params(("id" = i64, Path)),
    responses((status = 200, body = Vec<TopicView>), (status = 404, body = ErrorBody)))]
pub async fn streams(
    State(st): State<Arc<ClusterService>>,
    Extension(who): Extension<Principal>,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<Vec<TopicView>>, ApiError> {
    Ok(Json(st.streams(&who, id).await?))
}

/// Describe a stream: owner team, domain, tier, freshness budget, expected interval.
#[utoipa::path(put, path = "/clusters/{id}/streams/{topic}", tag = "watch",
    params(("id" = i64, Path), ("topic" = String, Path)), request_body = StreamSpec,
    responses((status = 200, body = TopicView), (status = 403, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn describe_stream(
    State(st): State<Arc<ClusterService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath((id, topic)): ApiPath<(i64, String)>,
    ApiJson(spec): ApiJson<StreamSpec>,
) -> Result<Json<TopicView>, ApiError> {
    Ok(Json(
        st.describe_stream(&who, &from, id, &topic, spec).await?,
    ))
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct Owner {
    /// Team name, or null to make the group unowned.
    pub team: Option<String>,
}

/// Set a consumer group's owner team (admin; owners may claim an unowned group for their team).
#[utoipa::path(put, path = "/clusters/{id}/groups/{group}/owner", tag = "watch",
    params(("id" = i64, Path), ("group" = String, Path)), request_body = Owner,
    responses((status = 204), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn set_owner(
    State(st): State<Arc<ClusterService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath((id, group)): ApiPath<(i64, String)>,
    ApiJson(o): ApiJson<Owner>,
) -> Result<StatusCode, ApiError> {
    st.set_group_owner(&who, &from, id, &group, o.team.as_deref())
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct LineageTopic {
    /// The topic OpenLineage producers write to, read by the consumer
    /// group `streamkeeper-lineage`; null (or empty) turns the Kafka
    /// transport off.
    pub topic: Option<String>,
}

/// Set a cluster's lineage topic (admin): the opt-in OpenLineage Kafka
/// transport, as the clusters file's `lineage_topic` sets it. Audited.
#[utoipa::path(put, path = "/clusters/{id}/lineage-topic", tag = "watch",
    params(("id" = i64, Path)), request_body = LineageTopic,
    responses((status = 204, description = "Set (or already so)"), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn set_lineage_topic(
    State(st): State<Arc<ClusterService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(id): ApiPath<i64>,
    ApiJson(t): ApiJson<LineageTopic>,
) -> Result<StatusCode, ApiError> {
    st.set_lineage_topic(&who, &from, id, t.topic.as_deref())
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A domain's streams with a freshness budget, their freshness SLOs this
/// month (attainment, error budget used and left, when it runs out) and
/// how many are within their tier.
#[utoipa::path(get, path = "/domains/{domain}/slo", tag = "watch",
    params(("domain" = String, Path)),
    responses((status = 200, body = DomainSlo), (status = 404, body = ErrorBody)))]
pub async fn domain_slo(
    State(st): State<Arc<ClusterService>>,
    Extension(who): Extension<Principal>,
    ApiPath(domain): ApiPath<String>,
) -> Result<Json<DomainSlo>, ApiError> {
    Ok(Json(st.domain_slo(&who, &domain).await?))
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct SloCsvQuery {
    /// Only this domain's streams.
    domain: Option<String>,
}

/// Every stream's freshness SLO this month as CSV (one row a stream with
/// a freshness budget), or one domain's.
#[utoipa::path(get, path = "/slo.csv", tag = "watch", params(SloCsvQuery),
    responses((status = 200, content_type = "text/csv", body = String),
        (status = 404, body = ErrorBody)))]
pub async fn slo_csv(
    State(st): State<Arc<ClusterService>>,
    Extension(who): Extension<Principal>,
    ApiQuery(q): ApiQuery<SloCsvQuery>,
) -> Result<axum::response::Response, ApiError> {
    use axum::http::header;
    use axum::response::IntoResponse;
    let rows = match q.domain.as_deref().filter(|d| !d.is_empty()) {
        Some(d) => st.domain_slo(&who, d).await?.streams,
        None => st.slos(&who).await?,
    };
    let body = crate::watch::slo::slo_csv(&rows)?;
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8"),
            (
                header::CONTENT_DISPOSITION,
                "attachment; filename=\"slo.csv\"",
            ),
        ],
        body,
    )
        .into_response())
}

/// This feature's REST routes with their OpenAPI paths, relative to
/// `/api/v1` (the router nests and merges them).
pub fn routes<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    Arc<ClusterService>: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(set_owner))
        .routes(routes!(set_lineage_topic))
        .routes(routes!(list, create))
        .routes(routes!(get, update, remove))
        .routes(routes!(pause))
        .routes(routes!(resume))
        .routes(routes!(restore))
        .routes(routes!(groups))
        .routes(routes!(group))
        .routes(routes!(streams))
        .routes(routes!(describe_stream))
        .routes(routes!(domain_slo))
        .routes(routes!(slo_csv))
}
