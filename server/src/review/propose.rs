//! Proposals and edits: the content made canonical, checked at once
//! against every consumer group and the subject's history, bound to its
//! base by a hash, with the domain's approvers frozen for the revision.

use super::store::{self as items, Revision};
use super::{ReviewService, facts, item_after, lock, refusal, target};
use crate::clients::registry::{RegistryError, VersionRef};
use crate::platform::db::{acquire, begin, commit};
use crate::platform::errors::{self};
use serde_json::json;
use std::collections::BTreeMap;
use streamkeeper::access::stewardship::{Stewardship, may_steward};
use streamkeeper::accounts::account::Principal;
use streamkeeper::review::{
    Base, Content, Kind, MAX_TITLE_CHARS, Refusal, check_edit, content_hash, is_routine,
    proposal_subject,
};
use streamkeeper::schemas::Verdict;
use streamkeeper_app::error::AppError;
use streamkeeper_app::review::model::{NewReviewItem, ReviewEdit, ReviewItem};
use streamkeeper_app::schemas::model::ProposedSchema;

/// The latest version of the subject, as the base a change is made on.
pub(super) struct BaseNow {
    pub base: Base,
    pub schema: Option<String>,
}

impl ReviewService {
    /// The stream's domain; a change to a stream without one has nobody
    /// to approve it, so it is refused with what to do.
    async fn domain_of(
        &self,
        cluster_id: i64,
        topic: &str,
    ) -> Result<(String, Option<i64>), AppError> {
        let (domain, owner) = items::stream_domain(&self.pool, cluster_id, topic)
            .await?
            .unwrap_or_default();
        if domain.trim().is_empty() {
            return Err(AppError::Invalid(format!(
                "Stream {topic} has no domain: describe it with its owner and domain first, so that its approvers are known."
            )));
        }
        Ok((domain, owner))
    }

    /// The subject's latest version in the cluster's registry; no versions
    /// (or no registry) is a base too. A registry that cannot be read is
    /// an error: a change must not be bound to a base nobody saw.
    pub(super) async fn base_now(
        &self,
        cluster_id: i64,
        subject: &str,
    ) -> Result<BaseNow, AppError> {
        let Some(registry) = self.schemas.registry_client_of(cluster_id).await? else {
            return Ok(BaseNow {
                base: Base {
                    version: None,
                    schema_id: None,
                },
                schema: None,
            });
        };
        match registry.version(subject, VersionRef::Latest, false).await {
            Ok(v) => Ok(BaseNow {
                base: Base {
                    version: Some(v.version),
                    schema_id: Some(v.id),
                },
                schema: Some(v.schema),
            }),
            Err(RegistryError::SubjectNotFound { .. } | RegistryError::VersionNotFound { .. }) => {
                Ok(BaseNow {
                    base: Base {
                        version: None,
                        schema_id: None,
                    },
                    schema: None,
                })
            }
            Err(e) => Err(AppError::Unavailable(format!(
                "the Schema Registry could not say what {subject} is at now ({e}); nothing was saved"
            ))),
        }
    }

    /// Everything a revision is made of: the check, the base, the frozen
    /// approvers and required count, and the hash binding them.
    pub(super) async fn prepare(
        &self,
        who: &Principal,
        kind: Kind,
        content: &Content,
        domain: &str,
    ) -> Result<Revision, AppError> {
        let report = self
            .schemas
            .check_subject(
                who,
                content.cluster_id,
                &content.topic,
                &content.subject,
                ProposedSchema {
                    schema_type: content.schema_type,
                    schema: content.schema.clone(),
                    references: BTreeMap::new(),
                    subject_references: content.references.clone(),
                },
            )
            .await?;
        let now = self.base_now(content.cluster_id, &content.subject).await?;
        let settings = items::domain(&self.pool, domain).await?;
        let mut conn = acquire(&self.pool).await?;
        let approver_ids = items::effective_approvers(&mut conn, domain).await?;
        let as_i32 = |v: Option<u32>| v.and_then(|v| i32::try_from(v).ok());
        Ok(Revision {
            content: serde_json::to_value(content)
                .map_err(|e| errors::internal("a review item's content", e))?,
            content_hash: content_hash(kind, content, &now.base),
            base_version: as_i32(now.base.version),
            base_schema_id: as_i32(now.base.schema_id),
            base_schema: now.schema,
            check_id: Some(report.id),
            verdict: report.verdict.as_str().to_owned(),
            required_approvals: settings.map_or(1, |s| s.required_approvals),
            approver_ids,
            connector_check: None,
        })
    }

    /// Who may propose a change to a stream: admins, and owners of the
    /// stream's team (of an unowned stream, any owner).
    async fn may_propose(&self, who: &Principal, owner: Option<i64>) -> Result<(), AppError> {
        let mine = self.my_teams(who).await?;
        if may_steward(mine.steward(who), owner, Stewardship::Steer) {
            return Ok(());
        }
        Err(AppError::Forbidden(
            "propose changes to this stream (admins, and owners of the stream's team)".into(),
        ))
    }

    #[tracing::instrument(skip_all, fields(user = %who.username))]
    pub(super) async fn put_in_review(
        &self,
        who: &Principal,
        from: &str,
        new: NewReviewItem,
    ) -> Result<ReviewItem, AppError> {
        let topic = new.topic.trim().to_owned();
        let (domain, owner) = self.domain_of(new.cluster_id, &topic).await?;
        self.may_propose(who, owner).await?;
        let level = self.level(&domain).await?;
        if !level.takes_proposals() {
            return Err(refusal(&Refusal::Watching(domain)));
        }
        let subject = proposal_subject(new.kind, &topic, new.subject.as_deref())
            .map_err(|e| AppError::Invalid(e.to_string()))?;
        if new
            .title
            .as_deref()
            .is_some_and(|t| t.trim().chars().count() > MAX_TITLE_CHARS)
        {
            return Err(AppError::Invalid(format!(
                "A title has at most {MAX_TITLE_CHARS} characters."
            )));
        }
        if new.schema.trim().is_empty() {
            return Err(AppError::Invalid("The proposed schema is empty.".into()));
        }
        let content = Content {
            cluster_id: new.cluster_id,
            topic: topic.clone(),
            subject: subject.clone(),
            schema_type: new.schema_type,
            schema: new.schema,
            references: new.references,
        }
        .canonical();
        let revision = self.prepare(who, new.kind, &content, &domain).await?;
        let title = new
            .title
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| format!("{} of {subject}", capitalised(new.kind.describe())));
        let mut tx = begin(&self.pool).await?;
        let domain_now = items::stream_domain_locked(&mut tx, new.cluster_id, &topic).await?;
        if domain_now.as_deref() != Some(domain.as_str()) {
            return Err(AppError::Conflict(format!(
                "Stream {topic} moved to another domain while the change was being proposed: propose it again."
            )));
        }
        let id = items::insert_item(
            &mut tx,
            &items::NewItem {
                kind: new.kind.as_str(),
                cluster_id: new.cluster_id,
                topic: &topic,
                subject: &subject,
                domain: &domain,
                owner_team_id: owner,
                title: &title,
                author_id: who.user_id,
                revision: &revision,
            },
        )
        .await?;
        crate::audit::audited(
            &mut tx,
            who,
            from,
            "review.propose",
            target(id),
            json!({ "kind": new.kind.as_str(), "subject": subject, "domain": domain,
                    "content_hash": revision.content_hash, "base_version": revision.base_version,
                    "verdict": revision.verdict }),
        )
        .await?;
        self.tell_approvers(&mut tx, id, &title, &revision, &who.username)
            .await?;
        commit(tx).await?;
        let verdict = Verdict::parse(&revision.verdict).unwrap_or(Verdict::Undecided);
        if is_routine(level, verdict) {
            self.apply_routine(who, from, id).await?;
        }
        self.view(who, item_after(&self.pool, id).await?).await
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    pub(super) async fn revise(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        edit: ReviewEdit,
    ) -> Result<ReviewItem, AppError> {
        let item = self.readable(who, from, id).await?;
        if item.kind.parse::<Kind>().is_ok_and(Kind::is_connector) {
            return Err(AppError::Invalid(format!(
                "Review item {id} changes a connector: edit it with PUT /api/v1/review-items/{id}/connector."
            )));
        }
        let owns = self.owns_stream(who, &item).await?;
        // Refused early when it cannot succeed, before running the checks.
        if let Err(r) = check_edit(&facts(&item), who.user_id, owns, edit.loaded_revision) {
            self.refused(who, from, id, "review.edit.refused", &r.to_string())
                .await;
            return Err(refusal(&r));
        }
        if edit.schema.trim().is_empty() {
            return Err(AppError::Invalid("The proposed schema is empty.".into()));
        }
        let kind: Kind = item
            .kind
            .parse()
            .map_err(|e: streamkeeper::review::UnknownKind| {
                errors::internal("a review item's kind", e)
            })?;
        let content = Content {
            cluster_id: item.cluster_id,
            topic: item.topic.clone(),
            subject: item.subject.clone(),
            schema_type: edit.schema_type,
            schema: edit.schema,
            references: edit.references,
        }
        .canonical();
        let revision = self.prepare(who, kind, &content, &item.domain).await?;
        self.store_edit(who, from, id, owns, edit.loaded_revision, &revision)
            .await?;
        self.view(who, item_after(&self.pool, id).await?).await
    }

    /// Stores an edit as the item's next revision, under the item's lock:
    /// checked again there (an approval, another edit or an apply may have
    /// landed while the checks ran), every approval voided, audited, the
    /// approvers told and, when someone else edited, the author too. Shared
    /// by schema and connector items.
    pub(super) async fn store_edit(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        owns: bool,
        loaded_revision: i32,
        revision: &Revision,
    ) -> Result<(), AppError> {
        let mut tx = begin(&self.pool).await?;
        let locked = lock(&mut tx, id).await?;
        // Again under the lock: an approval, another edit or an apply may
        // have landed while the checks ran.
        let f = facts(&locked);
        if let Err(r) = check_edit(&f, who.user_id, owns, loaded_revision) {
            drop(tx);
            self.refused(who, from, id, "review.edit.refused", &r.to_string())
                .await;
            return Err(refusal(&r));
        }
        let voided = f.counted_approvals();
        let reason = format!(
            "Edited by {} (revision {}); {voided} approval(s) voided.",
            who.username,
            locked.revision + 1
        );
        let new_revision = items::new_revision(&mut tx, id, revision, &reason).await?;
        if who.user_id != locked.author_id {
            items::add_editor(&mut tx, id, who.user_id).await?;
        }
        crate::audit::audited(
            &mut tx,
            who,
            from,
            "review.edit",
            target(id),
            json!({ "revision": new_revision, "content_hash": revision.content_hash,
                    "voided_approvals": voided, "verdict": revision.verdict }),
        )
        .await?;
        self.tell_approvers(&mut tx, id, &locked.title, revision, &who.username)
            .await?;
        if who.user_id != locked.author_id {
            Self::notify(
                &mut tx,
                &[locked.author_id],
                id,
                &format!("{} edited #{id} {}: {reason}", who.username, locked.title),
            )
            .await?;
        }
        commit(tx).await?;
        Ok(())
    }

    /// Tells the revision's approvers, in the app, by their teams'
    /// webhooks and by email, that an item waits for them.
    pub(super) async fn tell_approvers(
        &self,
        conn: &mut sqlx::PgConnection,
        id: i64,
        title: &str,
        revision: &Revision,
        by: &str,
    ) -> Result<(), AppError> {
        let message = format!("#{id} {title} waits for your review (from {by}).");
        Self::notify(conn, &revision.approver_ids, id, &message).await?;
        let body = json!({
            "text": format!("Review needed: #{id} {title} (check: {}). Proposed by {by}.", revision.verdict),
            "review_item": { "id": id, "title": title, "content_hash": revision.content_hash,
                             "verdict": revision.verdict },
        });
        for url in items::team_webhooks(conn, &revision.approver_ids).await? {
            items::enqueue_webhook(conn, id, &url, &body).await?;
        }
        let approvers = &revision.approver_ids;
        self.mail_approvers(
            conn,
            id,
            &revision.verdict,
            revision.check_id,
            approvers,
            by,
        )
        .await
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}
