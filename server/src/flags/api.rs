//! `/api/v1/flags`, group ownership, team webhooks and the platform team.

use axum::Extension;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use streamkeeper::accounts::account::Principal;
use streamkeeper::flags::{FlagScope, FlagState};
use streamkeeper::platform::page::{Page, PageRequest, choice};
use streamkeeper_app::flags::model::{Dismissal, FlagView};
use streamkeeper_app::port::Accounts as _;
use streamkeeper_app::port::ClientAddr;
use utoipa::{IntoParams, ToSchema};

use crate::accounts::AccountService;
use crate::platform::rest::{ApiError, ApiJson, ApiPath, ApiQuery, ErrorBody};
use axum::extract::FromRef;
use std::sync::Arc;
use streamkeeper_app::port::Backend;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

#[derive(Debug, Deserialize, IntoParams)]
pub struct FlagQuery {
    /// `mine` (flags routed to the caller's teams, the default) or `all`.
    scope: Option<String>,
    /// `live` (open and acknowledged, the default) or `any`.
    state: Option<String>,
    /// `raised` (when it was raised; `-raised`, the latest first, is the
    /// default), `since` (when the trouble began), `kind`, `subject`,
    /// `cluster`, `team` or `state`; a `-` before it sorts descending.
    /// 400 for another.
    sort: Option<String>,
    page: Option<u32>,
    per_page: Option<u32>,
}

/// Flags, the latest raised first unless `sort` says otherwise.
#[utoipa::path(get, path = "/flags", tag = "watch", params(FlagQuery),
    responses((status = 200, body = Page<FlagView>), (status = 400, body = ErrorBody)))]
pub async fn list(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
    ApiQuery(q): ApiQuery<FlagQuery>,
) -> Result<Json<Page<FlagView>>, ApiError> {
    let mine = choice::<FlagScope>(q.scope.as_deref())?.unwrap_or_default() == FlagScope::Mine;
    let live = choice::<FlagState>(q.state.as_deref())?.unwrap_or_default() == FlagState::Live;
    let page = PageRequest::new(q.page, q.per_page);
    Ok(Json(st.flags.list(&who, mine, live, q.sort, page).await?))
}

/// A flag with its receipts.
#[utoipa::path(get, path = "/flags/{id}", tag = "watch", params(("id" = i64, Path)),
    responses((status = 200, body = FlagView), (status = 404, body = ErrorBody)))]
pub async fn get(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<FlagView>, ApiError> {
    Ok(Json(st.flags.get(&who, id).await?))
}

/// Acknowledge a flag (a member of its team, or an admin).
#[utoipa::path(post, path = "/flags/{id}/acknowledge", tag = "watch", params(("id" = i64, Path)),
    responses((status = 200, body = FlagView), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn acknowledge(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<FlagView>, ApiError> {
    Ok(Json(st.flags.acknowledge(&who, &from, id).await?))
}

/// Dismiss a flag: wrong or expected, with a reason, and optionally a
/// snooze. While its trouble lasts nothing is raised again and nobody is
/// paged; it comes back once the trouble clears and returns, or when the
/// snooze ends with the trouble still there. 404 for a flag that does not
/// exist, 403 for another team's (both audited), 422 for a missing reason
/// or kind or a snooze in the past or beyond 90 days.
#[utoipa::path(post, path = "/flags/{id}/dismiss", tag = "watch", params(("id" = i64, Path)),
    request_body = Dismissal,
    responses((status = 200, body = FlagView), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn dismiss(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(id): ApiPath<i64>,
    ApiJson(d): ApiJson<Dismissal>,
) -> Result<Json<FlagView>, ApiError> {
    Ok(Json(st.flags.dismiss(&who, &from, id, &d).await?))
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct Webhook {
    /// A Slack-compatible incoming-webhook URL, or null to remove it.
    pub url: Option<String>,
}

/// Set a team's webhook (admin).
#[utoipa::path(put, path = "/teams/{id}/webhook", tag = "accounts", params(("id" = i64, Path)),
    request_body = Webhook,
    responses((status = 204), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn set_webhook(
    State(st): State<Arc<AccountService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(id): ApiPath<i64>,
    ApiJson(w): ApiJson<Webhook>,
) -> Result<StatusCode, ApiError> {
    st.set_webhook(&who, &from, id, w.url.as_deref()).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct PlatformTeam {
    pub team: String,
}

/// Choose the team that receives unowned flags (admin).
#[utoipa::path(put, path = "/settings/platform-team", tag = "accounts", request_body = PlatformTeam,
    responses((status = 204), (status = 404, body = ErrorBody)))]
pub async fn set_platform_team(
    State(st): State<Arc<AccountService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiJson(p): ApiJson<PlatformTeam>,
) -> Result<StatusCode, ApiError> {
    st.set_platform_team(&who, &from, &p.team).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// This feature's REST routes with their OpenAPI paths, relative to
/// `/api/v1` (the router nests and merges them).
pub fn routes<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    Arc<AccountService>: FromRef<S>,
    Backend: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(get))
        .routes(routes!(acknowledge))
        .routes(routes!(dismiss))
        .routes(routes!(set_webhook))
        .routes(routes!(set_platform_team))
}
