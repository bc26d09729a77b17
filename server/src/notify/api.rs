//! `/api/v1/teams/{team}/channels` (a team's notification channels: list,
//! add, send a test, remove) and `/api/v1/flags/{id}/deliveries`.

use axum::Extension;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use streamkeeper::accounts::account::Principal;
use streamkeeper_app::notify::model::{
    ChannelView, DeliveryView, NewChannel, NewSilence, NotifySettings, SilenceView, TestAnswer,
};
use streamkeeper_app::port::{Backend, ClientAddr};

use crate::platform::rest::{ApiError, ApiJson, ApiPath, ErrorBody};
use axum::extract::FromRef;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// A team's channels (admins and the team's members).
#[utoipa::path(get, path = "/teams/{team}/channels", tag = "notify", params(("team" = i64, Path)),
    responses((status = 200, body = Vec<ChannelView>), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)))]
pub async fn list(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
    ApiPath(team): ApiPath<i64>,
) -> Result<Json<Vec<ChannelView>>, ApiError> {
    Ok(Json(st.notify.channels(&who, team).await?))
}

/// Add a channel. Secrets (a Slack or Teams URL, a PagerDuty routing key,
/// a webhook's signing key) are references (`env:NAME`, `file:/path`)
/// and never shown back. 422 for a bad kind, URL, reference or filter, or
/// an endpoint the egress rule refuses (audited); 409 for a name taken.
#[utoipa::path(post, path = "/teams/{team}/channels", tag = "notify", params(("team" = i64, Path)),
    request_body = NewChannel,
    responses((status = 201, body = ChannelView), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
pub async fn add(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(team): ApiPath<i64>,
    ApiJson(new): ApiJson<NewChannel>,
) -> Result<(StatusCode, Json<ChannelView>), ApiError> {
    let c = st.notify.add_channel(&who, &from, team, &new).await?;
    Ok((StatusCode::CREATED, Json(c)))
}

/// Remove a channel.
#[utoipa::path(delete, path = "/teams/{team}/channels/{id}", tag = "notify",
    params(("team" = i64, Path), ("id" = i64, Path)),
    responses((status = 204), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn remove(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath((team, id)): ApiPath<(i64, i64)>,
) -> Result<StatusCode, ApiError> {
    st.notify.remove_channel(&who, &from, team, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Send a test message now: the answer says exactly what the receiver
/// answered (a 4xx also marks the channel broken, a 2xx mends it).
#[utoipa::path(post, path = "/teams/{team}/channels/{id}/test", tag = "notify",
    params(("team" = i64, Path), ("id" = i64, Path)),
    responses((status = 200, body = TestAnswer), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)))]
pub async fn test(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath((team, id)): ApiPath<(i64, i64)>,
) -> Result<Json<TestAnswer>, ApiError> {
    Ok(Json(st.notify.test_channel(&who, &from, team, id).await?))
}

/// A flag's deliveries to its team's channels, with each receiver's answer.
#[utoipa::path(get, path = "/flags/{id}/deliveries", tag = "notify", params(("id" = i64, Path)),
    responses((status = 200, body = Vec<DeliveryView>), (status = 404, body = ErrorBody)))]
pub async fn deliveries(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<Vec<DeliveryView>>, ApiError> {
    Ok(Json(st.notify.deliveries(&who, id).await?))
}

/// A cluster's silences that have not ended.
#[utoipa::path(get, path = "/clusters/{cluster}/silences", tag = "notify",
    params(("cluster" = i64, Path)),
    responses((status = 200, body = Vec<SilenceView>), (status = 404, body = ErrorBody)))]
pub async fn silences(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
    ApiPath(cluster): ApiPath<i64>,
) -> Result<Json<Vec<SilenceView>>, ApiError> {
    Ok(Json(st.notify.silences(&who, cluster).await?))
}

/// Mute a cluster (admins), a stream or a group (admins and its owner
/// team's members) until a time (at most 30 days), with a reason: flags
/// are still recorded, their deliveries held and sent if the trouble
/// outlives the silence. 422 (audited) for a missing reason or scope or
/// an end in the past or too far.
#[utoipa::path(post, path = "/clusters/{cluster}/silences", tag = "notify",
    params(("cluster" = i64, Path)), request_body = NewSilence,
    responses((status = 201, body = SilenceView), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn silence(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(cluster): ApiPath<i64>,
    ApiJson(new): ApiJson<NewSilence>,
) -> Result<(StatusCode, Json<SilenceView>), ApiError> {
    let s = st.notify.silence(&who, &from, cluster, &new).await?;
    Ok((StatusCode::CREATED, Json(s)))
}

/// End a silence now.
#[utoipa::path(delete, path = "/clusters/{cluster}/silences/{id}", tag = "notify",
    params(("cluster" = i64, Path), ("id" = i64, Path)),
    responses((status = 204), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn unsilence(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath((cluster, id)): ApiPath<(i64, i64)>,
) -> Result<StatusCode, ApiError> {
    st.notify.unsilence(&who, &from, cluster, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A team's delivery settings: its repeat interval for flags left
/// unacknowledged (admins and the team's members).
#[utoipa::path(get, path = "/teams/{team}/notify-settings", tag = "notify",
    params(("team" = i64, Path)),
    responses((status = 200, body = NotifySettings), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)))]
pub async fn settings(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
    ApiPath(team): ApiPath<i64>,
) -> Result<Json<NotifySettings>, ApiError> {
    Ok(Json(st.notify.settings(&who, team).await?))
}

/// Set a team's repeat interval: 300 to 604800 seconds (422, audited,
/// otherwise).
#[utoipa::path(put, path = "/teams/{team}/notify-settings", tag = "notify",
    params(("team" = i64, Path)), request_body = NotifySettings,
    responses((status = 200, body = NotifySettings), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn set_settings(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(team): ApiPath<i64>,
    ApiJson(new): ApiJson<NotifySettings>,
) -> Result<Json<NotifySettings>, ApiError> {
    Ok(Json(st.notify.set_settings(&who, &from, team, &new).await?))
}

/// This feature's REST routes with their OpenAPI paths, relative to `/api/v1`.
pub fn routes<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    Backend: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(list, add))
        .routes(routes!(remove))
        .routes(routes!(test))
        .routes(routes!(deliveries))
        .routes(routes!(silences, silence))
        .routes(routes!(unsilence))
        .routes(routes!(settings, set_settings))
}
