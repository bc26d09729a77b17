//! The review inbox's server functions. The edit and propose forms' functions
//! take one argument per field, as ActionForm sends them.

// The edit and propose forms' server functions take one argument per
// field, as ActionForm sends them; the generated client function cannot
// carry an allow of its own.
#![allow(clippy::too_many_arguments)]

use crate::error::AppError;
use crate::review::model::{
    CommentView, DomainSettings, ItemPage, NotificationView, ReviewItem, ReviewSummary,
};
use leptos::prelude::*;
use streamkeeper::platform::page::Page;
#[cfg(feature = "ssr")]
use streamkeeper::{
    platform::page::choice,
    review::{Autonomy, Kind, MAX_REQUIRED_APPROVALS},
};

#[server(prefix = "/fn", endpoint = "list_reviews")]
pub async fn list_reviews(
    scope: Option<String>,
    state: Option<String>,
    kind: Option<String>,
    domain: Option<String>,
    page: u32,
) -> Result<Page<ReviewSummary>, AppError> {
    use crate::port::{backend, principal};
    use crate::review::model::ReviewFilter;
    use streamkeeper::platform::page::PageRequest;
    let who = principal().await?;
    let filter = ReviewFilter {
        scope: choice(scope.as_deref())?.unwrap_or_default(),
        state: choice(state.as_deref())?,
        kind: choice(kind.as_deref())?,
        domain: domain
            .map(|d| d.trim().to_string())
            .filter(|d| !d.is_empty()),
    };
    backend()?
        .reviews
        .list(&who, filter, PageRequest::new(Some(page), None))
        .await
}

#[server(prefix = "/fn", endpoint = "get_review")]
pub async fn get_review(id: i64) -> Result<ItemPage, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    let from = crate::port::client_addr().await;
    let item = backend()?.reviews.get(&who, &from, id).await?;
    // Only an item apply sent back to review was rebased; the schemas are
    // parsed here, on the server (the browser has no Protobuf parser).
    let rebased = item.trail.iter().any(|a| a.action == "review.stale");
    let rebase_drops = match (
        &item.base_schema,
        rebased && !item.summary.kind.is_connector(),
    ) {
        (Some(base), true) => streamkeeper::review::dropped_fields(
            item.content.schema_type,
            base,
            &item.content.schema,
        ),
        _ => Vec::new(),
    };
    Ok(ItemPage { item, rebase_drops })
}

/// Proposes a change for review (the subjects page's registration form),
/// then shows the new item.
#[server(prefix = "/fn", endpoint = "propose_review")]
pub async fn propose_review(
    kind: String,
    cluster_id: i64,
    topic: String,
    subject: Option<String>,
    schema_type: String,
    schema: String,
    title: Option<String>,
) -> Result<i64, AppError> {
    use crate::port::{backend, client_addr, principal};
    use crate::review::model::NewReviewItem;
    use streamkeeper::schemas::SchemaType;
    let who = principal().await?;
    let kind = choice::<Kind>(Some(&kind))?
        .ok_or_else(|| AppError::Invalid("Say what kind of change this is.".into()))?;
    let schema_type = SchemaType::parse(&schema_type)
        .ok_or_else(|| AppError::Invalid(format!("Unknown schema type {schema_type:?}.")))?;
    let blank = |v: Option<String>| v.map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    let new = NewReviewItem {
        kind,
        cluster_id,
        topic: topic.trim().to_string(),
        subject: blank(subject),
        schema_type,
        schema,
        references: Vec::new(),
        title: blank(title),
    };
    let item = backend()?
        .reviews
        .propose(&who, &client_addr().await, new)
        .await?;
    let id = item.summary.id;
    leptos_axum::redirect(&format!("/review/{id}"));
    crate::ui::flash::noted(Ok(id), |id| format!("Proposed (review item {id}).")).await
}

/// Approves the revision whose content hash the page showed; the password
/// confirms it is the signed-in person at the keyboard.
#[server(prefix = "/fn", endpoint = "approve_review")]
pub async fn approve_review(
    item_id: i64,
    content_hash: String,
    password: String,
    #[server(default)] totp: Option<String>,
) -> Result<ReviewItem, AppError> {
    use crate::port::{backend, client_addr, principal};
    use crate::review::model::Approval;
    let who = principal().await?;
    let approval = Approval {
        content_hash,
        password: Some(password),
        totp: totp.filter(|t| !t.trim().is_empty()),
    };
    let item = backend()?
        .reviews
        .approve(&who, &client_addr().await, item_id, approval)
        .await?;
    leptos_axum::redirect(&format!("/review/{item_id}"));
    crate::ui::flash::noted(Ok(item), |i| {
        format!(
            "You approved revision {} ({} of {}). {}",
            i.summary.revision,
            i.summary.approval_count,
            streamkeeper::platform::words::counted(i.summary.required, "approval"),
            item_note(i)
        )
    })
    .await
}

#[server(prefix = "/fn", endpoint = "reject_review")]
pub async fn reject_review(item_id: i64, reason: String) -> Result<ReviewItem, AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let item = backend()?
        .reviews
        .reject(&who, &client_addr().await, item_id, reason.trim())
        .await?;
    leptos_axum::redirect(&format!("/review/{item_id}"));
    crate::ui::flash::noted(Ok(item), |_| {
        "You rejected it; its author is told, with your reason.".to_string()
    })
    .await
}

#[server(prefix = "/fn", endpoint = "withdraw_review")]
pub async fn withdraw_review(item_id: i64) -> Result<ReviewItem, AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let item = backend()?
        .reviews
        .withdraw(&who, &client_addr().await, item_id)
        .await?;
    leptos_axum::redirect(&format!("/review/{item_id}"));
    crate::ui::flash::noted(Ok(item), |_| "You withdrew the proposal.".to_string()).await
}

#[server(prefix = "/fn", endpoint = "apply_review")]
pub async fn apply_review(item_id: i64) -> Result<ReviewItem, AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let item = backend()?
        .reviews
        .apply(&who, &client_addr().await, item_id)
        .await?;
    leptos_axum::redirect(&format!("/review/{item_id}"));
    crate::ui::flash::noted(Ok(item), item_note).await
}

/// A new revision of the item, from the revision the editor loaded.
#[server(prefix = "/fn", endpoint = "edit_review")]
pub async fn edit_review(
    item_id: i64,
    loaded_revision: i32,
    schema_type: String,
    schema: String,
) -> Result<ReviewItem, AppError> {
    use crate::port::{backend, client_addr, principal};
    use crate::review::model::ReviewEdit;
    use streamkeeper::schemas::SchemaType;
    let who = principal().await?;
    let schema_type = SchemaType::parse(&schema_type)
        .ok_or_else(|| AppError::Invalid(format!("Unknown schema type {schema_type:?}.")))?;
    let edit = ReviewEdit {
        loaded_revision,
        schema_type,
        schema,
        references: Vec::new(),
    };
    let item = backend()?
        .reviews
        .edit(&who, &client_addr().await, item_id, edit)
        .await?;
    leptos_axum::redirect(&format!("/review/{item_id}"));
    crate::ui::flash::noted(Ok(item), item_note).await
}

#[server(prefix = "/fn", endpoint = "comment_review")]
pub async fn comment_review(item_id: i64, body: String) -> Result<CommentView, AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let comment = backend()?
        .reviews
        .comment(&who, &client_addr().await, item_id, body.trim())
        .await?;
    leptos_axum::redirect(&format!("/review/{item_id}"));
    crate::ui::flash::noted(Ok(comment), |_| "Comment added.".to_string()).await
}

#[server(prefix = "/fn", endpoint = "list_review_notifications")]
pub async fn list_review_notifications(page: u32) -> Result<Page<NotificationView>, AppError> {
    use crate::port::{backend, principal};
    use streamkeeper::platform::page::PageRequest;
    let who = principal().await?;
    backend()?
        .reviews
        .notifications(&who, PageRequest::new(Some(page), None))
        .await
}

#[server(prefix = "/fn", endpoint = "mark_review_notifications_read")]
pub async fn mark_review_notifications_read() -> Result<(), AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    crate::ui::flash::noted(backend()?.reviews.mark_read(&who).await, |_| {
        "All notifications marked read.".to_string()
    })
    .await
}

#[server(prefix = "/fn", endpoint = "list_review_domains")]
pub async fn list_review_domains() -> Result<Vec<DomainSettings>, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?.reviews.domains(&who).await
}

/// Names from a comma-separated field, trimmed, blanks dropped.
#[cfg(feature = "ssr")]
fn names(v: &str) -> Vec<String> {
    v.split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect()
}

#[server(prefix = "/fn", endpoint = "set_review_domain")]
pub async fn set_review_domain(
    domain: String,
    autonomy: String,
    required_approvals: String,
    approver_users: String,
    approver_teams: String,
) -> Result<DomainSettings, AppError> {
    use crate::port::{backend, client_addr, principal};
    use crate::review::model::DomainSpec;
    let who = principal().await?;
    let domain = domain.trim();
    if domain.is_empty() {
        return Err(AppError::Invalid("Name the domain.".into()));
    }
    let autonomy: Autonomy = autonomy
        .parse()
        .map_err(|e| AppError::Invalid(format!("{e}.")))?;
    let required_approvals = required_approvals
        .trim()
        .parse::<i16>()
        .ok()
        .filter(|n| (1..=MAX_REQUIRED_APPROVALS).contains(n))
        .ok_or_else(|| {
            AppError::Invalid(format!(
                "Required approvals must be a whole number from 1 to {MAX_REQUIRED_APPROVALS}, not '{}'.",
                required_approvals.trim()
            ))
        })?;
    let spec = DomainSpec {
        autonomy,
        required_approvals,
        approver_users: names(&approver_users),
        approver_teams: names(&approver_teams),
    };
    crate::ui::flash::noted(
        backend()?
            .reviews
            .set_domain(&who, &client_addr().await, domain, spec)
            .await,
        |d| format!("Saved the domain {} ({}).", d.domain, d.autonomy.label()),
    )
    .await
}

/// Where the item stands after an action.
#[cfg(feature = "ssr")]
fn item_note(i: &ReviewItem) -> String {
    match (i.summary.state, i.applied_version) {
        (streamkeeper::review::State::Applied, Some(v)) if !i.summary.kind.is_connector() => {
            format!("It is applied: version {v} of {}.", i.summary.subject)
        }
        (state, _) => format!(
            "The item is {} (revision {}, {} of {}).",
            state.describe(),
            i.summary.revision,
            i.summary.approval_count,
            streamkeeper::platform::words::counted(i.summary.required, "approval")
        ),
    }
}
