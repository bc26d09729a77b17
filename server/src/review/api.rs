//! `/api/v1/review-items` and `/api/v1/review-domains`: proposals,
//! approvals bound to the content hash (by a signed-in person who confirms
//! again: no token approves), rejections, edits, applies, and the
//! domains' approvers and autonomy levels.

use axum::Extension;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use streamkeeper::accounts::account::Principal;
use streamkeeper::platform::page::{Page, PageRequest, choice};
use streamkeeper::review::{Kind, State as ItemState};
use streamkeeper_app::port::ClientAddr;
use streamkeeper_app::port::Reviews as _;
use streamkeeper_app::review::model::{
    Approval, CommentView, DomainSettings, DomainSpec, InboxCounts, InboxScope, NewReviewItem,
    NotificationView, ReviewEdit, ReviewFilter, ReviewItem, ReviewSummary,
};
use utoipa::{IntoParams, ToSchema};

use crate::platform::rest::{ApiError, ApiJson, ApiPath, ApiQuery, ErrorBody};
use crate::review::ReviewService;
use crate::review::connector::{
    ConnectorDraftEdit, ConnectorItem, NewConnectorDraft, NewConnectorRestart,
};
use axum::extract::FromRef;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

#[derive(Debug, Deserialize, IntoParams)]
pub struct ItemQuery {
    /// `waiting` (for the caller's approval, the default), `mine` or `all`.
    scope: Option<String>,
    /// in_review, approved, rejected, withdrawn, applied or apply_failed.
    state: Option<String>,
    /// producer_change, schema_registration, connector_draft or connector_restart.
    kind: Option<String>,
    domain: Option<String>,
    page: Option<u32>,
    per_page: Option<u32>,
}

/// Review items the caller may read, most recently changed first.
#[utoipa::path(get, path = "/review-items", tag = "review", params(ItemQuery),
    responses((status = 200, body = Page<ReviewSummary>), (status = 400, body = ErrorBody)))]
pub async fn list(
    State(st): State<Arc<ReviewService>>,
    Extension(who): Extension<Principal>,
    ApiQuery(q): ApiQuery<ItemQuery>,
) -> Result<Json<Page<ReviewSummary>>, ApiError> {
    let filter = ReviewFilter {
        scope: choice::<InboxScope>(q.scope.as_deref())?.unwrap_or_default(),
        state: choice::<ItemState>(q.state.as_deref())?,
        kind: choice::<Kind>(q.kind.as_deref())?,
        domain: q.domain,
    };
    let page = PageRequest::new(q.page, q.per_page);
    Ok(Json(st.list(&who, filter, page).await?))
}

/// Propose a change: it is checked at once against every consumer group
/// and the subject's history, bound to the subject's latest version by its
/// content hash, and waits for the domain's named approvers.
#[utoipa::path(post, path = "/review-items", tag = "review", request_body = NewReviewItem,
    responses((status = 201, body = ReviewItem), (status = 403, body = ErrorBody), (status = 422, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn propose(
    State(st): State<Arc<ReviewService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiJson(new): ApiJson<NewReviewItem>,
) -> Result<(StatusCode, Json<ReviewItem>), ApiError> {
    let item = st.propose(&who, &from, new).await?;
    Ok((StatusCode::CREATED, Json(item)))
}

/// The title of a change proposed from a check.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct CheckProposal {
    /// The item's title; blank or missing: the default one.
    #[serde(default)]
    title: Option<String>,
}

/// Propose the schema a recorded check was made of, with the registered
/// references it was checked with (a check made with references pasted as
/// text is refused, 409: a review item carries only registered ones). Its
/// check's readers only; checked again as it is proposed.
#[utoipa::path(post, path = "/schema-checks/{id}/proposals", tag = "review",
    params(("id" = i64, Path)), request_body = CheckProposal,
    responses((status = 201, body = ReviewItem), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn propose_check(
    State(st): State<Arc<ReviewService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(id): ApiPath<i64>,
    ApiJson(p): ApiJson<CheckProposal>,
) -> Result<(StatusCode, Json<ReviewItem>), ApiError> {
    let title = p.title.filter(|t| !t.trim().is_empty());
    let item = st.propose_check(&who, &from, id, title).await?;
    Ok((StatusCode::CREATED, Json(item)))
}

/// An item with its content hash, base, diff, checks, approvals, comments
/// and audit trail. Another domain's item answers 404.
#[utoipa::path(get, path = "/review-items/{id}", tag = "review", params(("id" = i64, Path)),
    responses((status = 200, body = ReviewItem), (status = 404, body = ErrorBody)))]
pub async fn get(
    State(st): State<Arc<ReviewService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<ReviewItem>, ApiError> {
    Ok(Json(st.get(&who, &from, id).await?))
}

/// Edit an item at the revision you loaded: a new revision, checked again,
/// every approval voided; you can never approve it afterwards.
#[utoipa::path(put, path = "/review-items/{id}", tag = "review", params(("id" = i64, Path)),
    request_body = ReviewEdit,
    responses((status = 200, body = ReviewItem), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn edit(
    State(st): State<Arc<ReviewService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(id): ApiPath<i64>,
    ApiJson(edit): ApiJson<ReviewEdit>,
) -> Result<Json<ReviewItem>, ApiError> {
    Ok(Json(st.edit(&who, &from, id, edit).await?))
}

/// Approve the item's current content, named by its `content_hash`, in a
/// signed-in session confirmed with `password` (and `totp` when a second
/// factor is set up; a fresh sign-in at the provider for single sign-on).
/// A token is refused (403: approvals are done in the console). A stale
/// hash is refused (409); so are the author, editors, and anyone who is
/// not a named approver of the domain (403).
#[utoipa::path(post, path = "/review-items/{id}/approvals", tag = "review", params(("id" = i64, Path)),
    request_body = Approval,
    responses((status = 200, body = ReviewItem), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn approve(
    State(st): State<Arc<ReviewService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(id): ApiPath<i64>,
    ApiJson(approval): ApiJson<Approval>,
) -> Result<Json<ReviewItem>, ApiError> {
    Ok(Json(st.approve(&who, &from, id, approval).await?))
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct Rejection {
    /// Why: the author needs it.
    reason: String,
}

/// Reject the item, with a reason.
#[utoipa::path(post, path = "/review-items/{id}/rejections", tag = "review", params(("id" = i64, Path)),
    request_body = Rejection,
    responses((status = 200, body = ReviewItem), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn reject(
    State(st): State<Arc<ReviewService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(id): ApiPath<i64>,
    ApiJson(r): ApiJson<Rejection>,
) -> Result<Json<ReviewItem>, ApiError> {
    Ok(Json(st.reject(&who, &from, id, &r.reason).await?))
}

/// Withdraw the item (its author, editors, owners of the stream's team).
#[utoipa::path(post, path = "/review-items/{id}/withdraw", tag = "review", params(("id" = i64, Path)),
    responses((status = 200, body = ReviewItem), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn withdraw(
    State(st): State<Arc<ReviewService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<ReviewItem>, ApiError> {
    Ok(Json(st.withdraw(&who, &from, id).await?))
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct NewComment {
    body: String,
}

/// Comment on the item.
#[utoipa::path(post, path = "/review-items/{id}/comments", tag = "review", params(("id" = i64, Path)),
    request_body = NewComment,
    responses((status = 201, body = CommentView), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn comment(
    State(st): State<Arc<ReviewService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(id): ApiPath<i64>,
    ApiJson(c): ApiJson<NewComment>,
) -> Result<(StatusCode, Json<CommentView>), ApiError> {
    let c = st.comment(&who, &from, id, &c.body).await?;
    Ok((StatusCode::CREATED, Json(c)))
}

/// Apply an approved item (domains at act_after_approval or autonomous):
/// refused without enough approvals; when the subject moved since, the item
/// goes back to review (409) with the reason.
#[utoipa::path(post, path = "/review-items/{id}/apply", tag = "review", params(("id" = i64, Path)),
    responses((status = 200, body = ReviewItem), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn apply(
    State(st): State<Arc<ReviewService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<ReviewItem>, ApiError> {
    Ok(Json(st.apply(&who, &from, id).await?))
}

/// Every domain (named by a stream or configured) with its autonomy level,
/// required approvals and approvers.
#[utoipa::path(get, path = "/review-domains", tag = "review",
    responses((status = 200, body = Vec<DomainSettings>)))]
pub async fn domains(
    State(st): State<Arc<ReviewService>>,
    Extension(who): Extension<Principal>,
) -> Result<Json<Vec<DomainSettings>>, ApiError> {
    Ok(Json(st.domains(&who).await?))
}

/// Set a domain's autonomy level, required approvals and named approvers
/// (admins; audited).
#[utoipa::path(put, path = "/review-domains/{domain}", tag = "review", params(("domain" = String, Path)),
    request_body = DomainSpec,
    responses((status = 200, body = DomainSettings), (status = 403, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn set_domain(
    State(st): State<Arc<ReviewService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(domain): ApiPath<String>,
    ApiJson(spec): ApiJson<DomainSpec>,
) -> Result<Json<DomainSettings>, ApiError> {
    Ok(Json(st.set_domain(&who, &from, &domain, spec).await?))
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct PageQuery {
    page: Option<u32>,
    per_page: Option<u32>,
}

/// The caller's notifications, unread first.
#[utoipa::path(get, path = "/notifications", tag = "review", params(PageQuery),
    responses((status = 200, body = Page<NotificationView>)))]
pub async fn notifications(
    State(st): State<Arc<ReviewService>>,
    Extension(who): Extension<Principal>,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<Json<Page<NotificationView>>, ApiError> {
    let page = PageRequest::new(q.page, q.per_page);
    Ok(Json(st.notifications(&who, page).await?))
}

/// Mark all the caller's notifications read.
#[utoipa::path(post, path = "/notifications/read", tag = "review",
    responses((status = 204)))]
pub async fn mark_read(
    State(st): State<Arc<ReviewService>>,
    Extension(who): Extension<Principal>,
) -> Result<StatusCode, ApiError> {
    st.mark_read(&who).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Items waiting for the caller and unread notifications.
#[utoipa::path(get, path = "/me/inbox", tag = "review",
    responses((status = 200, body = InboxCounts)))]
pub async fn counts(
    State(st): State<Arc<ReviewService>>,
    Extension(who): Extension<Principal>,
) -> Result<Json<InboxCounts>, ApiError> {
    Ok(Json(st.counts(&who).await?))
}

/// Propose a connector config (create, or replace the running one's):
/// validated by the rules and the worker (a draft with errors answers 422),
/// bound by its content hash to the running config read now (or to "does
/// not exist"), waiting for the named approvers of the domain of the
/// streams it reads and writes. Inline secrets are refused; `${…}`
/// references are kept as written.
#[utoipa::path(post, path = "/review-items/connectors", tag = "review",
    request_body = NewConnectorDraft,
    responses((status = 201, body = ConnectorItem), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn propose_connector(
    State(st): State<Arc<ReviewService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiJson(new): ApiJson<NewConnectorDraft>,
) -> Result<(StatusCode, Json<ConnectorItem>), ApiError> {
    let item = st.propose_connector(&who, &from, new).await?;
    Ok((StatusCode::CREATED, Json(item)))
}

/// Propose restarting a connector's failed instances, for approvers
/// (applied as `POST /connectors/{name}/restart?includeTasks=true&onlyFailed=true`).
#[utoipa::path(post, path = "/review-items/connector-restarts", tag = "review",
    request_body = NewConnectorRestart,
    responses((status = 201, body = ConnectorItem), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn propose_restart(
    State(st): State<Arc<ReviewService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiJson(new): ApiJson<NewConnectorRestart>,
) -> Result<(StatusCode, Json<ConnectorItem>), ApiError> {
    let item = st.propose_restart(&who, &from, new).await?;
    Ok((StatusCode::CREATED, Json(item)))
}

/// A connector item: its masked content, the base, the diff against it
/// (secrets only as "changed"), the validation, approvals and, below *act
/// after approval*, the exact request to run by hand.
#[utoipa::path(get, path = "/review-items/{id}/connector", tag = "review", params(("id" = i64, Path)),
    responses((status = 200, body = ConnectorItem), (status = 404, body = ErrorBody)))]
pub async fn connector_item(
    State(st): State<Arc<ReviewService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<ConnectorItem>, ApiError> {
    Ok(Json(st.connector_item(&who, &from, id).await?))
}

/// Edit a connector draft at the revision you loaded: validated again on
/// the running config read now, every approval voided.
#[utoipa::path(put, path = "/review-items/{id}/connector", tag = "review", params(("id" = i64, Path)),
    request_body = ConnectorDraftEdit,
    responses((status = 200, body = ConnectorItem), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn edit_connector(
    State(st): State<Arc<ReviewService>>,
    Extension(who): Extension<Principal>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    ApiPath(id): ApiPath<i64>,
    ApiJson(edit): ApiJson<ConnectorDraftEdit>,
) -> Result<Json<ConnectorItem>, ApiError> {
    Ok(Json(st.edit_connector(&who, &from, id, edit).await?))
}

/// This feature's REST routes with their OpenAPI paths, relative to
/// `/api/v1` (the router nests and merges them).
pub fn routes<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    Arc<ReviewService>: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(list, propose))
        .routes(routes!(propose_check))
        .routes(routes!(propose_connector))
        .routes(routes!(propose_restart))
        .routes(routes!(connector_item, edit_connector))
        .routes(routes!(get, edit))
        .routes(routes!(approve))
        .routes(routes!(reject))
        .routes(routes!(withdraw))
        .routes(routes!(comment))
        .routes(routes!(apply))
        .routes(routes!(domains))
        .routes(routes!(set_domain))
        .routes(routes!(notifications))
        .routes(routes!(mark_read))
        .routes(routes!(counts))
}
