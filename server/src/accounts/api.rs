//! `/api/v1/me`, `/users` and `/teams`.

use axum::Extension;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use streamkeeper::accounts::account::Principal;
use streamkeeper::platform::page::{Page, PageRequest};
use streamkeeper_app::accounts::model::{
    Me, NewTeam, NewUser, PasswordChange, TeamDetail, TeamSummary, TimeZoneChange, UserDetail,
    UserSummary, UserUpdate,
};
use streamkeeper_app::error::AppError;
use streamkeeper_app::port::{ClientAddr, SessionHandle};
use utoipa::{IntoParams, ToSchema};

use crate::platform::rest::{ApiError, ApiJson, ApiPath, ApiQuery, ErrorBody};
use axum::extract::FromRef;
use streamkeeper_app::port::Backend;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

#[derive(Debug, Deserialize, IntoParams)]
pub struct ListQuery {
    /// Substring of the username or display name.
    q: Option<String>,
    /// `username` (the default), `name`, `status` (active first) or
    /// `created`; a `-` before it sorts descending (`-created`: the newest
    /// first). 400 for another.
    sort: Option<String>,
    /// Page number, from 1.
    page: Option<u32>,
    /// Items per page (1–200, default 25).
    per_page: Option<u32>,
}

/// The signed-in user or token owner.
#[utoipa::path(get, path = "/me", tag = "accounts",
    responses((status = 200, body = Me), (status = 401, body = ErrorBody)))]
pub async fn me(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
) -> Result<Json<Me>, ApiError> {
    Ok(Json(st.accounts.me(&who).await?))
}

/// Users, by username unless `sort` says otherwise (admin).
#[utoipa::path(get, path = "/users", tag = "accounts", params(ListQuery),
    responses((status = 200, body = Page<UserSummary>), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn list_users(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> Result<Json<Page<UserSummary>>, ApiError> {
    let page = PageRequest::new(q.page, q.per_page);
    Ok(Json(st.accounts.list_users(&who, q.q, q.sort, page).await?))
}

/// Create a user (admin).
#[utoipa::path(post, path = "/users", tag = "accounts", request_body = NewUser,
    responses((status = 201, body = UserSummary), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn create_user(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiJson(new): ApiJson<NewUser>,
) -> Result<(StatusCode, Json<UserSummary>), ApiError> {
    let user = st.accounts.create_user(&who, &from, new).await?;
    Ok((StatusCode::CREATED, Json(user)))
}

/// A user and their teams (admin, or the user themselves).
#[utoipa::path(get, path = "/users/{id}", tag = "accounts", params(("id" = i64, Path)),
    responses((status = 200, body = UserDetail), (status = 404, body = ErrorBody)))]
pub async fn get_user(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<UserDetail>, ApiError> {
    Ok(Json(st.accounts.user(&who, id).await?))
}

/// Change a user's display name, roles, access or password (admin).
/// Disabling, changing roles or setting a password ends the user's
/// sessions; a password set here must be changed at the user's next sign-in.
#[utoipa::path(patch, path = "/users/{id}", tag = "accounts", params(("id" = i64, Path)),
    request_body = UserUpdate,
    responses((status = 200, body = UserSummary), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn update_user(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(id): ApiPath<i64>,
    ApiJson(update): ApiJson<UserUpdate>,
) -> Result<Json<UserSummary>, ApiError> {
    Ok(Json(
        st.accounts.update_user(&who, &from, id, update).await?,
    ))
}

/// Change your own password, given the current one (a session only: sign
/// in first). Your other sessions end and your API tokens are revoked; this
/// session stays signed in. A wrong current password answers 403, is
/// audited and spends the sign-in throttle; the new one must pass the
/// password policy (422).
#[utoipa::path(post, path = "/me/password", tag = "accounts", request_body = PasswordChange,
    responses((status = 204), (status = 403, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn change_password(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    keeper: Option<Extension<SessionHandle>>,
    ApiJson(change): ApiJson<PasswordChange>,
) -> Result<StatusCode, ApiError> {
    let Some(Extension(keeper)) = keeper else {
        return Err(ApiError(AppError::Forbidden(
            "change a password with an API token; sign in instead".into(),
        )));
    };
    let epoch = st
        .accounts
        .change_password(&who, &from, &change.current_password, &change.new_password)
        .await?;
    keeper.0.keep(epoch).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Choose the zone the pages show you times in (an IANA name such as
/// `Europe/Berlin`; UTC until you choose). The API and the CLI keep UTC.
/// An unknown zone answers 422. Audited as `account.time_zone`.
#[utoipa::path(put, path = "/me/time-zone", tag = "accounts", request_body = TimeZoneChange,
    responses((status = 204), (status = 422, body = ErrorBody)))]
pub async fn set_time_zone(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiJson(change): ApiJson<TimeZoneChange>,
) -> Result<StatusCode, ApiError> {
    st.accounts
        .set_time_zone(&who, &from, &change.time_zone)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Remove a user's TOTP second factor and recovery codes, for a lost
/// device (admin; audited). They sign in with their password alone until
/// they set one up again.
#[utoipa::path(delete, path = "/users/{id}/second-factor", tag = "accounts",
    params(("id" = i64, Path)),
    responses((status = 204), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn reset_second_factor(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(id): ApiPath<i64>,
) -> Result<StatusCode, ApiError> {
    st.accounts.reset_second_factor(&who, &from, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct PageQuery {
    page: Option<u32>,
    per_page: Option<u32>,
}

/// Teams, by name (admin).
#[utoipa::path(get, path = "/teams", tag = "accounts", params(PageQuery),
    responses((status = 200, body = Page<TeamSummary>), (status = 403, body = ErrorBody)))]
pub async fn list_teams(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<Json<Page<TeamSummary>>, ApiError> {
    let page = PageRequest::new(q.page, q.per_page);
    Ok(Json(st.accounts.list_teams(&who, page).await?))
}

/// Create a team (admin).
#[utoipa::path(post, path = "/teams", tag = "accounts", request_body = NewTeam,
    responses((status = 201, body = TeamSummary), (status = 409, body = ErrorBody)))]
pub async fn create_team(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiJson(new): ApiJson<NewTeam>,
) -> Result<(StatusCode, Json<TeamSummary>), ApiError> {
    let team = st.accounts.create_team(&who, &from, new).await?;
    Ok((StatusCode::CREATED, Json(team)))
}

/// A team and its members (admin).
#[utoipa::path(get, path = "/teams/{id}", tag = "accounts", params(("id" = i64, Path)),
    responses((status = 200, body = TeamDetail), (status = 404, body = ErrorBody)))]
pub async fn get_team(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<TeamDetail>, ApiError> {
    Ok(Json(st.accounts.team(&who, id).await?))
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct NewMember {
    pub username: String,
}

/// Add a member to a team (admin).
#[utoipa::path(post, path = "/teams/{id}/members", tag = "accounts", params(("id" = i64, Path)),
    request_body = NewMember,
    responses((status = 204), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn add_member(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(id): ApiPath<i64>,
    ApiJson(m): ApiJson<NewMember>,
) -> Result<StatusCode, ApiError> {
    st.accounts.add_member(&who, &from, id, &m.username).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Remove a member from a team (admin).
#[utoipa::path(delete, path = "/teams/{id}/members/{user_id}", tag = "accounts",
    params(("id" = i64, Path), ("user_id" = i64, Path)),
    responses((status = 204), (status = 404, body = ErrorBody)))]
pub async fn remove_member(
    State(st): State<Backend>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath((id, user_id)): ApiPath<(i64, i64)>,
) -> Result<StatusCode, ApiError> {
    st.accounts.remove_member(&who, &from, id, user_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// This feature's REST routes with their OpenAPI paths, relative to
/// `/api/v1` (the router nests and merges them).
pub fn routes<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    Backend: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(me))
        .routes(routes!(change_password))
        .routes(routes!(set_time_zone))
        .routes(routes!(reset_second_factor))
        .routes(routes!(list_users, create_user))
        .routes(routes!(get_user, update_user))
        .routes(routes!(list_teams, create_team))
        .routes(routes!(get_team))
        .routes(routes!(add_member))
        .routes(routes!(remove_member))
}
