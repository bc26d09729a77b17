//! Applying an approved item: re-check the base under the item's lock
//! (Terraform's stale saved plan), register the schema, record the outcome
//! and tell the author. A moved base sends the item back to review.

use super::store::{self as items, ItemRow};
use super::{ReviewService, facts, item_after, lock, refusal, state_of, target, writers};
use crate::audit::store::Event;
use crate::clients::registry::{NewSchema, RegistryError, SchemaReference, VersionRef};
use crate::platform::db::{begin, commit};
use crate::platform::errors::{self};
use serde_json::json;
use std::collections::BTreeMap;
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::Role;
use streamkeeper::review::mail::MailEvent;
use streamkeeper::review::{Content, Kind, Refusal, State, check_apply, involved, is_routine};
use streamkeeper::schemas::Verdict;
use streamkeeper_app::error::AppError;
use streamkeeper_app::review::model::ReviewItem;

/// Who the audit log names for what Streamkeeper does on its own.
pub(super) const AUTONOMOUS: &str = "streamkeeper";

fn content_of(item: &ItemRow) -> Result<Content, AppError> {
    serde_json::from_value(item.content.clone())
        .map_err(|e| errors::internal("stored review content", e))
}

/// The registration request for the content.
pub(super) fn registration(c: &Content) -> NewSchema {
    NewSchema {
        schema_type: c.schema_type,
        schema: c.schema.clone(),
        references: c
            .references
            .iter()
            .map(|r| SchemaReference {
                name: r.name.clone(),
                subject: r.subject.clone(),
                version: r.version,
            })
            .collect(),
    }
}

pub(super) async fn audit(
    conn: &mut sqlx::PgConnection,
    actor: &str,
    from: &str,
    action: &str,
    id: i64,
    detail: serde_json::Value,
) -> Result<(), AppError> {
    Ok(crate::audit::store::append(
        conn,
        Event {
            actor,
            action,
            target: target(id),
            detail,
            source: from,
        },
    )
    .await
    .map(drop)?)
}

impl ReviewService {
    /// Apply on request (the item's page, the API): by its author, an
    /// editor, one of its approvers, or an admin.
    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    pub(super) async fn carry_out(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
    ) -> Result<ReviewItem, AppError> {
        let item = self.readable(who, from, id).await?;
        if !involved(who.user_id, who.has(Role::Admin), &facts(&item)) {
            self.refused(
                who,
                from,
                id,
                "review.apply.refused",
                "not involved in the item",
            )
            .await;
            return Err(AppError::Forbidden(
                "apply this change (its author, editors, approvers and admins may)".into(),
            ));
        }
        self.apply_now(who, &who.username, from, id).await?;
        // Applying it answers what they were told about it (its approval,
        // and the outcome the apply itself reported).
        let mut tx = begin(&self.pool).await?;
        items::mark_item_read(&mut tx, who.user_id, id).await?;
        commit(tx).await?;
        self.view(who, item_after(&self.pool, id).await?).await
    }

    /// An autonomous domain's routine change: approved by the ladder's
    /// rule rather than a person, applied, and reported to its approvers.
    pub(super) async fn apply_routine(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
    ) -> Result<(), AppError> {
        let mut tx = begin(&self.pool).await?;
        let Some(item) = items::lock_item(&mut tx, id).await? else {
            return Ok(());
        };
        let level = self.level(&item.domain).await?;
        let verdict = Verdict::parse(&item.verdict).unwrap_or(Verdict::Undecided);
        if state_of(&item) != State::InReview || !is_routine(level, verdict) {
            return Ok(());
        }
        let reason = format!(
            "Routine: every check is compatible and domain {} is autonomous, so it was applied without approval.",
            item.domain
        );
        items::set_state(&mut tx, id, State::Approved.as_str(), &reason).await?;
        audit(
            &mut tx,
            AUTONOMOUS,
            from,
            "review.auto_approve",
            id,
            json!({ "revision": item.revision, "content_hash": item.content_hash, "proposed_by": who.username }),
        )
        .await?;
        let message = format!(
            "#{id} {} was applied without approval as a routine change; review it afterwards.",
            item.title
        );
        Self::notify(&mut tx, &item.approver_ids, id, &message).await?;
        commit(tx).await?;
        // The outcome is on the item; the proposal stands either way.
        if let Err(e) = self.apply_now(who, AUTONOMOUS, from, id).await {
            tracing::info!(item = id, error = %e, "routine apply did not complete");
        }
        Ok(())
    }

    /// Applies the item now if the rules allow, holding its lock while the
    /// registry is asked, so no approval, edit or second apply interleaves.
    pub(super) async fn apply_now(
        &self,
        who: &Principal,
        actor: &str,
        from: &str,
        id: i64,
    ) -> Result<(), AppError> {
        let mut tx = begin(&self.pool).await?;
        let item = lock(&mut tx, id).await?;
        let level = self.level(&item.domain).await?;
        let f = facts(&item);
        if item.kind.parse::<Kind>().is_ok_and(Kind::is_connector) {
            // Never routine: a connector change is not undone by deleting
            // what it adds, so it always waits for its approvals.
            if let Err(r) = check_apply(&f, level) {
                drop(tx);
                self.refused(who, from, id, "review.apply.refused", &r.to_string())
                    .await;
                return Err(refusal(&r));
            }
            return self.apply_connector(who, actor, from, tx, &item).await;
        }
        let verdict = Verdict::parse(&item.verdict).unwrap_or(Verdict::Undecided);
        let allowed = check_apply(&f, level).or_else(|r| {
            let routine = is_routine(level, verdict)
                && matches!(f.state, State::Approved | State::ApplyFailed)
                && item.approved_by.is_empty();
            if routine { Ok(()) } else { Err(r) }
        });
        if let Err(r) = allowed {
            drop(tx);
            self.refused(who, from, id, "review.apply.refused", &r.to_string())
                .await;
            return Err(refusal(&r));
        }
        let content = content_of(&item)?;
        let Some(registry) = self.schemas.registry_client_of(item.cluster_id).await? else {
            let reason = "This cluster has no Schema Registry: apply it by hand, or configure the registry and apply again.";
            return self
                .failed(tx, actor, from, &item, State::ApplyFailed, reason)
                .await;
        };
        let latest = match registry
            .version(&item.subject, VersionRef::Latest, false)
            .await
        {
            Ok(v) => Some(v.version),
            Err(RegistryError::SubjectNotFound { .. } | RegistryError::VersionNotFound { .. }) => {
                None
            }
            Err(e) => {
                let reason = format!(
                    "The registry could not say what {} is at now, so nothing was written: {e}",
                    item.subject
                );
                return self
                    .failed(tx, actor, from, &item, State::ApplyFailed, &reason)
                    .await;
            }
        };
        let base = item.base_version.and_then(|v| u32::try_from(v).ok());
        if latest != base {
            drop(tx);
            return self
                .back_to_review(who, actor, from, &item, base, latest)
                .await;
        }
        let request = registration(&content);
        match registry.register(&item.subject, &request, false).await {
            Ok(schema_id) => {
                // The registry answers with the ID only; the version is
                // looked up, and its absence does not undo the write.
                let version = registry
                    .lookup(&item.subject, &request, false, false)
                    .await
                    .ok()
                    .map(|v| v.version);
                let reason = match version {
                    Some(v) => format!(
                        "Registered as {} version {v} (schema id {schema_id}).",
                        item.subject
                    ),
                    None => format!("Registered under {} (schema id {schema_id}).", item.subject),
                };
                let v32 = version.and_then(|v| i32::try_from(v).ok());
                let id32 = i32::try_from(schema_id).unwrap_or(i32::MAX);
                items::set_applied(&mut tx, id, v32, id32, &reason).await?;
                crate::schemas::store::registry_written(&mut tx, item.cluster_id).await?;
                if item.kind == Kind::ProducerChange.as_str()
                    && let Some(v) = v32
                {
                    // The stream's schema is now the registered version.
                    crate::schemas::store::insert_schema(
                        &mut tx,
                        item.cluster_id,
                        &crate::schemas::store::NewSchemaRow {
                            topic: &item.topic,
                            group: None,
                            schema_type: content.schema_type.as_str(),
                            schema: &content.schema,
                            refs: &BTreeMap::new(),
                            pinned: Some((&item.subject, v)),
                            recorded_by: actor,
                        },
                    )
                    .await?;
                }
                audit(
                    &mut tx,
                    actor,
                    from,
                    "review.apply",
                    id,
                    json!({ "revision": item.revision, "content_hash": item.content_hash,
                            "subject": item.subject, "version": version, "schema_id": schema_id }),
                )
                .await?;
                let mut told = writers(&item);
                told.retain(|u| *u != who.user_id || actor == AUTONOMOUS);
                Self::notify(
                    &mut tx,
                    &told,
                    id,
                    &format!("#{id} {} is applied: {reason}", item.title),
                )
                .await?;
                self.mail(
                    &mut tx,
                    &told,
                    super::mail::item_ref(&item),
                    &MailEvent::Applied,
                )
                .await?;
                commit(tx).await?;
                Ok(())
            }
            Err(e) => {
                let reason = format!("The registry did not register it: {e}");
                self.failed(tx, actor, from, &item, State::ApplyFailed, &reason)
                    .await
            }
        }
    }

    /// Records an apply that did not happen: the item is left in `state`
    /// (it can be applied again) with the reason, audited, and its authors
    /// are told. Schema items go to APPLY_FAILED; a connector draft stays
    /// where it was.
    pub(super) async fn failed(
        &self,
        mut tx: sqlx::Transaction<'_, sqlx::Postgres>,
        actor: &str,
        from: &str,
        item: &ItemRow,
        state: State,
        reason: &str,
    ) -> Result<(), AppError> {
        items::set_state(&mut tx, item.id, state.as_str(), reason).await?;
        audit(
            &mut tx,
            actor,
            from,
            "review.apply_failed",
            item.id,
            json!({ "revision": item.revision, "error": reason }),
        )
        .await?;
        let told = writers(item);
        Self::notify(
            &mut tx,
            &told,
            item.id,
            &format!("#{} {} was not applied: {reason}", item.id, item.title),
        )
        .await?;
        let event = MailEvent::ApplyFailed { why: reason };
        self.mail(&mut tx, &told, super::mail::item_ref(item), &event)
            .await?;
        commit(tx).await?;
        Err(AppError::Unavailable(reason.to_owned()))
    }

    /// The subject moved since the change was reviewed: the change becomes
    /// a new revision on the new base, checked again, with every approval
    /// voided, like a stale saved plan that must be planned again.
    async fn back_to_review(
        &self,
        who: &Principal,
        actor: &str,
        from: &str,
        item: &ItemRow,
        was: Option<u32>,
        now: Option<u32>,
    ) -> Result<(), AppError> {
        let content = content_of(item)?;
        let kind: Kind = item
            .kind
            .parse()
            .map_err(|e: streamkeeper::review::UnknownKind| {
                errors::internal("a review item's kind", e)
            })?;
        let revision = self.prepare(who, kind, &content, &item.domain).await?;
        let mut tx = begin(&self.pool).await?;
        let locked = lock(&mut tx, item.id).await?;
        if locked.revision != item.revision {
            return Err(refusal(&Refusal::StaleHash {
                current: locked.revision,
            }));
        }
        let name = |v: Option<u32>| v.map_or("no version".to_owned(), |v| format!("version {v}"));
        let reason = format!(
            "Not applied: {} moved from {} (the base it was approved on) to {}. It is back in review as revision {}; every approval is void.",
            item.subject,
            name(was),
            name(now),
            item.revision + 1
        );
        let voided = facts(&locked).counted_approvals();
        items::new_revision(&mut tx, item.id, &revision, &reason).await?;
        audit(
            &mut tx,
            actor,
            from,
            "review.stale",
            item.id,
            json!({ "base_was": was, "base_now": now, "voided_approvals": voided,
                    "content_hash": revision.content_hash }),
        )
        .await?;
        self.tell_approvers(&mut tx, item.id, &item.title, &revision, actor)
            .await?;
        Self::notify(
            &mut tx,
            &[item.author_id],
            item.id,
            &format!("#{} {}: {reason}", item.id, item.title),
        )
        .await?;
        commit(tx).await?;
        Err(AppError::Conflict(reason))
    }
}
