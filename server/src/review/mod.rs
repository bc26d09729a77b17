//! The review inbox: proposals become review items bound to a hash of
//! their exact content and base; named approvers of the item's domain
//! approve (with their password again) or reject them; approved items are
//! applied to the registry where the domain's autonomy level allows, after
//! checking their base has not moved. Every step, and every refusal, is in
//! the audit log. The rules are in `streamkeeper::review`; this gathers the
//! facts under a row lock, asks them, and carries out the answer.

pub mod api;
mod apply;
mod confirm;
pub mod connector;
mod mail;
mod propose;
pub mod store;
mod view;

use crate::accounts::require;
use crate::connect::ConnectService;
use crate::platform::authz::Facts;
use crate::platform::db::{begin, commit};
use crate::platform::errors::{self};
use crate::platform::limiter::LoginLimiter;
use crate::schemas::SchemaService;
use serde_json::json;
use sqlx::PgPool;
use std::sync::Arc;
use store::{self as items, ItemRow};
use streamkeeper::access::stewardship::{Stewardship, may_steward};
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::{Action, Role};
use streamkeeper::platform::page::{Page, PageRequest};
use streamkeeper::review::mail::MailEvent;
use streamkeeper::review::{
    Approver, Autonomy, ItemFacts, Kind, Refusal, State, check_approval, check_reject,
    check_withdraw, completes,
};
use streamkeeper::schemas::subject::value_subject;
use streamkeeper_app::error::AppError;
use streamkeeper_app::review::model::{
    Approval, CommentView, DomainSettings, DomainSpec, InboxCounts, NewReviewItem,
    NotificationView, ReviewEdit, ReviewFilter, ReviewItem, ReviewSummary,
};

/// How [`ReviewService::close`] ends an item.
struct Closing {
    action: &'static str,
    to: State,
    /// The item's state reason, also what its writers are told.
    why: String,
    detail: serde_json::Value,
}

#[derive(Clone)]
pub struct ReviewService {
    pool: PgPool,
    schemas: Arc<SchemaService>,
    /// Connector items are validated by, and applied to, Kafka Connect.
    connect: Arc<ConnectService>,
    /// Sign-in's throttle: confirming an approval with a password spends
    /// from the same per-account budget, so a stolen session cannot guess
    /// the password faster than the sign-in form allows.
    limiter: LoginLimiter,
    /// Where emails' links point; `None` without a mail server.
    mail: Option<mail::MailLinks>,
}

pub use mail::MailLinks;

/// An item's audit target.
fn target(id: i64) -> String {
    format!("review:{id}")
}

fn state_of(item: &ItemRow) -> State {
    // The table's CHECK holds state to the six names.
    item.state.parse().unwrap_or(State::InReview)
}

fn facts<'a>(item: &'a ItemRow) -> ItemFacts<'a> {
    ItemFacts {
        domain: &item.domain,
        state: state_of(item),
        revision: item.revision,
        content_hash: &item.content_hash,
        author_id: item.author_id,
        editor_ids: &item.editor_ids,
        approver_ids: &item.approver_ids,
        approved_by: &item.approved_by,
        required: item.required_approvals,
    }
}

fn approver(who: &Principal) -> Approver<'_> {
    Approver {
        user_id: who.user_id,
        roles: &who.roles,
    }
}

/// Locks the item for the rest of the transaction (see
/// [`items::lock_item`]); a missing one is not found.
async fn lock(conn: &mut sqlx::PgConnection, id: i64) -> Result<ItemRow, AppError> {
    items::lock_item(conn, id)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("Review item {id}")))
}

/// Who is told what becomes of an item: its author and its editors.
fn writers(item: &ItemRow) -> Vec<i64> {
    let mut told = item.editor_ids.clone();
    told.push(item.author_id);
    told
}

/// A refused action as the caller sees it: "reload" refusals are
/// conflicts (409), the rest are refusals (403).
fn refusal(r: &Refusal) -> AppError {
    if r.is_conflict() {
        AppError::Conflict(r.to_string())
    } else {
        AppError::Refused(r.to_string())
    }
}

impl ReviewService {
    pub fn new(
        pool: PgPool,
        schemas: Arc<SchemaService>,
        connect: Arc<ConnectService>,
        limiter: LoginLimiter,
    ) -> Self {
        Self {
            pool,
            schemas,
            connect,
            limiter,
            mail: None,
        }
    }

    /// Approvers and authors are also told by email, with links to the
    /// console at `links`.
    pub fn with_mail(mut self, links: Option<MailLinks>) -> Self {
        self.mail = links;
        self
    }

    /// Records a refused attempt in its own transaction: the attempt's
    /// transaction was rolled back, its trace must not be.
    async fn refused(&self, who: &Principal, from: &str, id: i64, action: &str, why: &str) {
        let detail = json!({ "refused": why });
        crate::audit::record_refusal(&self.pool, who, from, action, target(id), detail).await;
    }

    /// A domain's level: configured, else the default (suggest).
    async fn level(&self, domain: &str) -> Result<Autonomy, AppError> {
        Ok(items::domain(&self.pool, domain)
            .await?
            .and_then(|d| d.autonomy.parse().ok())
            .unwrap_or(Autonomy::DEFAULT))
    }

    async fn my_teams(&self, who: &Principal) -> Result<Facts, AppError> {
        Ok(Facts::load(&self.pool, who).await?)
    }

    /// Owners of the stream's team may edit and withdraw its items (an
    /// unowned stream's, any owner; admins, as such, not).
    async fn owns_stream(&self, who: &Principal, item: &ItemRow) -> Result<bool, AppError> {
        let owner =
            crate::platform::ownership::stream(&self.pool, item.cluster_id, &item.topic).await?;
        let mine = self.my_teams(who).await?;
        let owner = owner.map(|o| o.team_id());
        Ok(may_steward(mine.steward(who), owner, Stewardship::Own))
    }

    /// The item, if the caller may read it. Another domain's item is "not
    /// found", so ids cannot be probed, and the attempt is recorded.
    async fn readable(&self, who: &Principal, from: &str, id: i64) -> Result<ItemRow, AppError> {
        require(who, Action::Read, "read review items")?;
        let missing = || AppError::NotFound(format!("Review item {id}"));
        let item = items::item(&self.pool, id).await?.ok_or_else(missing)?;
        if who.has(Role::Admin) || items::readable(&self.pool, id, who.user_id).await? {
            Ok(item)
        } else {
            self.refused(
                who,
                from,
                id,
                "review.read.refused",
                "not in the item's domain",
            )
            .await;
            Err(missing())
        }
    }

    /// Notifies users in the app, in the caller's transaction.
    async fn notify(
        conn: &mut sqlx::PgConnection,
        users: &[i64],
        item: i64,
        message: &str,
    ) -> Result<(), AppError> {
        Ok(items::notify(conn, users, item, message).await?)
    }

    /// Ends an item (rejected, withdrawn) if `rule` allows it under the
    /// item's lock: the state with its reason, the audit entry, and its
    /// author and editors told. A refusal is audited as `<action>.refused`.
    async fn close(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        rule: impl FnOnce(&ItemFacts<'_>) -> Result<(), Refusal>,
        c: Closing,
    ) -> Result<ReviewItem, AppError> {
        let mut tx = begin(&self.pool).await?;
        let item = lock(&mut tx, id).await?;
        if let Err(r) = rule(&facts(&item)) {
            drop(tx);
            let action = format!("{}.refused", c.action);
            self.refused(who, from, id, &action, &r.to_string()).await;
            return Err(refusal(&r));
        }
        items::set_state(&mut tx, id, c.to.as_str(), &c.why).await?;
        let mut detail = c.detail;
        let reason = detail["reason"].as_str().unwrap_or_default().to_owned();
        detail["revision"] = json!(item.revision);
        crate::audit::audited(&mut tx, who, from, c.action, target(id), detail).await?;
        let message = format!("#{id} {}: {}", item.title, c.why);
        Self::notify(&mut tx, &writers(&item), id, &message).await?;
        if c.to == State::Rejected {
            let event = MailEvent::Rejected {
                by: &who.username,
                reason: &reason,
            };
            self.mail(&mut tx, &writers(&item), mail::item_ref(&item), &event)
                .await?;
        }
        items::mark_item_read(&mut tx, who.user_id, id).await?;
        commit(tx).await?;
        self.view(who, item_after(&self.pool, id).await?).await
    }
}

/// The item as it stands after an action.
async fn item_after(pool: &PgPool, id: i64) -> Result<ItemRow, AppError> {
    items::item(pool, id)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("Review item {id}")))
}

#[async_trait::async_trait]
impl streamkeeper_app::port::Reviews for ReviewService {
    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn list(
        &self,
        who: &Principal,
        filter: ReviewFilter,
        page: PageRequest,
    ) -> Result<Page<ReviewSummary>, AppError> {
        require(who, Action::Read, "read review items")?;
        let rows =
            items::list(&self.pool, who.user_id, who.has(Role::Admin), &filter, page).await?;
        Ok(Page {
            items: rows.items.iter().map(|r| view::summary(who, r)).collect(),
            page: rows.page,
            per_page: rows.per_page,
            total: rows.total,
        })
    }
    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    async fn get(&self, who: &Principal, from: &str, id: i64) -> Result<ReviewItem, AppError> {
        let item = self.readable(who, from, id).await?;
        self.view(who, item).await
    }
    async fn propose(
        &self,
        who: &Principal,
        from: &str,
        new: NewReviewItem,
    ) -> Result<ReviewItem, AppError> {
        self.put_in_review(who, from, new).await
    }
    #[tracing::instrument(skip_all, fields(user = %who.username, check = check_id))]
    async fn propose_check(
        &self,
        who: &Principal,
        from: &str,
        check_id: i64,
        title: Option<String>,
    ) -> Result<ReviewItem, AppError> {
        let checked = self.schemas.checked_schema(who, from, check_id).await?;
        // A review item carries only registered references (the registry
        // is where it is applied): one checked with pasted ones would lose
        // them, so it is refused with what to do.
        if !checked.pasted_references.is_empty() {
            return Err(AppError::Conflict(format!(
                "Check {check_id} used references pasted as text ({}); a review item carries only references registered in the Schema Registry. Register them first, then check and propose it with them as registered references.",
                checked.pasted_references.join(", ")
            )));
        }
        // A check under the topic's value subject was of a producer
        // change; one under another subject, of a registration there.
        let (kind, subject) = if checked.subject == value_subject(&checked.topic) {
            (Kind::ProducerChange, None)
        } else {
            (Kind::SchemaRegistration, Some(checked.subject))
        };
        let new = NewReviewItem {
            kind,
            cluster_id: checked.cluster_id,
            topic: checked.topic,
            subject,
            schema_type: checked.schema_type,
            schema: checked.schema,
            references: checked.references,
            title,
        };
        self.put_in_review(who, from, new).await
    }
    async fn edit(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        edit: ReviewEdit,
    ) -> Result<ReviewItem, AppError> {
        self.revise(who, from, id, edit).await
    }
    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    async fn approve(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        approval: Approval,
    ) -> Result<ReviewItem, AppError> {
        self.readable(who, from, id).await?;
        self.by_a_person(who, from, id, "review.approve.refused")
            .await?;
        self.confirm_approval(who, from, id, &approval).await?;
        let mut tx = begin(&self.pool).await?;
        let item = lock(&mut tx, id).await?;
        let f = facts(&item);
        if let Err(r) = check_approval(&f, approver(who), &approval.content_hash) {
            drop(tx);
            self.refused(who, from, id, "review.approve.refused", &r.to_string())
                .await;
            return Err(refusal(&r));
        }
        let done = completes(&f, who.user_id);
        items::insert_approval(&mut tx, id, item.revision, who.user_id, &item.content_hash).await?;
        let counted = f.counted_approvals() + 1;
        if done {
            items::set_state(&mut tx, id, State::Approved.as_str(), "").await?;
        }
        crate::audit::audited(
            &mut tx,
            who,
            from,
            "review.approve",
            target(id),
            json!({ "revision": item.revision, "content_hash": item.content_hash,
                    "approvals": counted, "required": item.required_approvals, "approved": done }),
        )
        .await?;
        let message = if done {
            format!(
                "#{id} {} is approved ({} approved it).",
                item.title, who.username
            )
        } else {
            format!(
                "{} approved #{id} {} ({counted} of {}).",
                who.username, item.title, item.required_approvals
            )
        };
        Self::notify(&mut tx, &writers(&item), id, &message).await?;
        let event = MailEvent::Approved {
            by: &who.username,
            done,
        };
        self.mail(&mut tx, &writers(&item), mail::item_ref(&item), &event)
            .await?;
        items::mark_item_read(&mut tx, who.user_id, id).await?;
        commit(tx).await?;
        if done && self.level(&item.domain).await?.applies() {
            // The outcome (applied, failed, back to review) is on the item;
            // the approval itself stands either way.
            if let Err(e) = self.apply_now(who, &who.username, from, id).await {
                tracing::info!(item = id, error = %e, "apply after approval did not complete");
            }
        }
        self.view(who, item_after(&self.pool, id).await?).await
    }
    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    async fn reject(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        reason: &str,
    ) -> Result<ReviewItem, AppError> {
        self.readable(who, from, id).await?;
        self.by_a_person(who, from, id, "review.reject.refused")
            .await?;
        let reason = reason.trim();
        self.close(
            who,
            from,
            id,
            |f| check_reject(f, approver(who), reason),
            Closing {
                action: "review.reject",
                to: State::Rejected,
                why: format!("Rejected by {}: {reason}", who.username),
                detail: json!({ "reason": reason }),
            },
        )
        .await
    }
    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    async fn withdraw(&self, who: &Principal, from: &str, id: i64) -> Result<ReviewItem, AppError> {
        let item = self.readable(who, from, id).await?;
        let owns = self.owns_stream(who, &item).await?;
        self.close(
            who,
            from,
            id,
            |f| check_withdraw(f, who.user_id, owns),
            Closing {
                action: "review.withdraw",
                to: State::Withdrawn,
                why: format!("Withdrawn by {}.", who.username),
                detail: json!({}),
            },
        )
        .await
    }
    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    async fn comment(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        body: &str,
    ) -> Result<CommentView, AppError> {
        let item = self.readable(who, from, id).await?;
        let body = body.trim();
        if body.is_empty() || body.chars().count() > 10_000 {
            return Err(AppError::Invalid(
                "A comment has between 1 and 10,000 characters.".into(),
            ));
        }
        let mut tx = begin(&self.pool).await?;
        let c = items::insert_comment(&mut tx, id, who.user_id, body).await?;
        crate::audit::audited(
            &mut tx,
            who,
            from,
            "review.comment",
            target(id),
            json!({ "comment": c.id }),
        )
        .await?;
        let mut told: Vec<i64> = item.editor_ids.clone();
        told.push(item.author_id);
        told.extend(item.approver_ids.iter().copied());
        told.retain(|u| *u != who.user_id);
        let message = format!("{} commented on #{id} {}.", who.username, item.title);
        Self::notify(&mut tx, &told, id, &message).await?;
        commit(tx).await?;
        Ok(CommentView {
            id: c.id,
            author: c.author,
            body: c.body,
            created_at: c.created_at,
        })
    }
    async fn apply(&self, who: &Principal, from: &str, id: i64) -> Result<ReviewItem, AppError> {
        self.carry_out(who, from, id).await
    }
    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn domains(&self, who: &Principal) -> Result<Vec<DomainSettings>, AppError> {
        require(who, Action::Read, "read review domains")?;
        Ok(items::domains(&self.pool)
            .await?
            .into_iter()
            .map(view::domain)
            .collect())
    }
    /// Sets a domain's level, required approvals and approvers (admins
    /// only), audited with what it was before.
    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn set_domain(
        &self,
        who: &Principal,
        from: &str,
        domain: &str,
        spec: DomainSpec,
    ) -> Result<DomainSettings, AppError> {
        require(
            who,
            Action::ManageClusters,
            "change a domain's review settings",
        )?;
        let domain = domain.trim();
        if domain.is_empty() || domain.chars().count() > 128 {
            return Err(AppError::Invalid(
                "A domain's name has 1 to 128 characters.".into(),
            ));
        }
        if !(1..=streamkeeper::review::MAX_REQUIRED_APPROVALS).contains(&spec.required_approvals) {
            return Err(AppError::Invalid(format!(
                "A domain requires between 1 and {} approvals.",
                streamkeeper::review::MAX_REQUIRED_APPROVALS
            )));
        }
        let mut users = Vec::new();
        for name in spec
            .approver_users
            .iter()
            .map(|u| u.trim())
            .filter(|u| !u.is_empty())
        {
            let u = crate::accounts::store::users::by_username(&self.pool, name)
                .await?
                .ok_or_else(|| AppError::NotFound(format!("User {name}")))?;
            if !u.roles().contains(&Role::Approver) {
                return Err(AppError::Invalid(format!(
                    "{name} does not hold the approver role; give it to them first."
                )));
            }
            users.push(u.id);
        }
        let mut teams = Vec::new();
        for name in spec
            .approver_teams
            .iter()
            .map(|t| t.trim())
            .filter(|t| !t.is_empty())
        {
            teams.push(crate::accounts::team_id(&self.pool, name).await?);
        }
        users.sort_unstable();
        users.dedup();
        teams.sort_unstable();
        teams.dedup();
        let before = items::domain(&self.pool, domain).await?;
        let mut tx = begin(&self.pool).await?;
        items::set_domain(
            &mut tx,
            domain,
            spec.autonomy.as_str(),
            spec.required_approvals,
            &users,
            &teams,
            &who.username,
        )
        .await?;
        crate::audit::audited(
            &mut tx,
            who,
            from,
            "review.domain.set",
            format!("domain:{domain}"),
            json!({
                "autonomy": spec.autonomy.as_str(),
                "autonomy_before": before.as_ref().map(|b| b.autonomy.clone()),
                "required_approvals": spec.required_approvals,
                "approver_users": spec.approver_users,
                "approver_teams": spec.approver_teams,
            }),
        )
        .await?;
        commit(tx).await?;
        self.domains(who)
            .await?
            .into_iter()
            .find(|d| d.domain == domain)
            .ok_or_else(|| {
                errors::internal("saving a review domain", "the domain just saved is missing")
            })
    }
    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn notifications(
        &self,
        who: &Principal,
        page: PageRequest,
    ) -> Result<Page<NotificationView>, AppError> {
        require(who, Action::Read, "read notifications")?;
        let rows = items::notifications(&self.pool, who.user_id, page).await?;
        Ok(Page {
            items: rows
                .items
                .into_iter()
                .map(|n| NotificationView {
                    id: n.id,
                    item_id: n.item_id,
                    message: n.message,
                    created_at: n.created_at,
                    read: n.read_at.is_some(),
                })
                .collect(),
            page: rows.page,
            per_page: rows.per_page,
            total: rows.total,
        })
    }
    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn mark_read(&self, who: &Principal) -> Result<(), AppError> {
        require(who, Action::Read, "read notifications")?;
        Ok(items::mark_read(&self.pool, who.user_id).await?)
    }
    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn counts(&self, who: &Principal) -> Result<InboxCounts, AppError> {
        require(who, Action::Read, "read the inbox")?;
        Ok(InboxCounts {
            waiting: items::waiting_count(&self.pool, who.user_id).await?,
            unread: items::unread_count(&self.pool, who.user_id).await?,
        })
    }
    async fn propose_connector(
        &self,
        who: &Principal,
        from: &str,
        cluster_id: i64,
        connect: &str,
        config: serde_json::Value,
    ) -> Result<i64, AppError> {
        let new = connector::NewConnectorDraft {
            cluster_id,
            connect: connect.to_owned(),
            config,
            title: None,
        };
        Ok(self.propose_connector(who, from, new).await?.summary.id)
    }
}
