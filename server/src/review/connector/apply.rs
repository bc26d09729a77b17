//! Applying an approved connector item: the running config read again (a
//! moved one sends the item back to review as a new revision), then the
//! restart or the PUT, and the outcome kept with the item.

use serde_json::json;
use streamkeeper::accounts::account::Principal;
use streamkeeper::connect::Config;
use streamkeeper::connect::canonical::Base;
use streamkeeper::connect::draft::DraftContent;
use streamkeeper::connect::secret::is_mask;
use streamkeeper::review::{Kind, State};
use streamkeeper_app::error::AppError;

use super::super::apply::{AUTONOMOUS, audit};
use super::super::store::{self as items, ItemRow};
use super::super::{ReviewService, facts, lock, refusal, state_of, writers};
use super::{Change, content_of, kind_of, plain, running, stored_base};
use crate::clients::connect::{ConnectClient, RestartOptions};
use crate::platform::db::{begin, commit};

impl ReviewService {
    /// Applies an approved connector item under its lock (held by `tx`):
    /// the running config is read again first; a moved one sends the item
    /// back to review. A worker that fails leaves the item where it was,
    /// with the reason, and nothing half-applied (PUT replaces a config
    /// whole or not at all).
    pub(in crate::review) async fn apply_connector(
        &self,
        who: &Principal,
        actor: &str,
        from: &str,
        tx: sqlx::Transaction<'_, sqlx::Postgres>,
        item: &ItemRow,
    ) -> Result<(), AppError> {
        let kind = kind_of(item)?;
        let content = content_of(item)?;
        let name = content.name.as_str();
        let (client, now) = match self.connector_now(item.cluster_id, &content).await {
            Ok(found) => found,
            Err(reason) => {
                return self
                    .failed(tx, actor, from, item, state_of(item), &reason)
                    .await;
            }
        };
        let marked = &content.secret_keys;
        let was = Base::of(stored_base(item).as_ref(), marked);
        if kind == Kind::ConnectorRestart {
            if now.is_none() {
                let reason = format!("Connector {name} no longer exists on {}.", content.connect);
                return self
                    .failed(tx, actor, from, item, state_of(item), &reason)
                    .await;
            }
            let options = RestartOptions {
                include_tasks: true,
                only_failed: true,
            };
            return match client.restart(name, options).await {
                Ok(_) => {
                    let reason = format!(
                        "Restarted the failed instances of connector {name} on {}.",
                        content.connect
                    );
                    self.applied(tx, who, actor, from, item, &reason).await
                }
                Err(e) => {
                    let reason = format!(
                        "Kafka Connect did not restart connector {name}: {}",
                        e.for_viewer(false)
                    );
                    self.failed(tx, actor, from, item, state_of(item), &reason)
                        .await
                }
            };
        }
        if now.is_some()
            && Base::of(now.as_ref(), marked) == Base::of(Some(&content.config), marked)
        {
            let reason = format!(
                "Connector {name} on {} already runs exactly this config; nothing was written.",
                content.connect
            );
            return self.applied(tx, who, actor, from, item, &reason).await;
        }
        if was.moved(now.as_ref(), marked) {
            drop(tx);
            return self
                .connector_back_to_review(actor, from, item, &content, now.is_some())
                .await;
        }
        if let Some((key, _)) = content.config.iter().find(|(_, v)| is_mask(v)) {
            let reason = format!(
                "{key} holds a masked value, not a secret: edit the draft to give it as a ${{…}} reference. Nothing was written."
            );
            return self
                .failed(tx, actor, from, item, state_of(item), &reason)
                .await;
        }
        match client.put_config(name, &plain(&content.config)).await {
            Ok((created, _)) => {
                let reason = if created {
                    format!("Created connector {name} on {}.", content.connect)
                } else {
                    format!(
                        "Replaced the config of connector {name} on {}.",
                        content.connect
                    )
                };
                self.applied(tx, who, actor, from, item, &reason).await
            }
            Err(e) => {
                let reason = format!(
                    "Kafka Connect did not take the config, so nothing changed: {}",
                    e.for_viewer(false)
                );
                self.failed(tx, actor, from, item, state_of(item), &reason)
                    .await
            }
        }
    }

    /// The worker's client and the config it runs now for the item's
    /// connector; the reason nothing was written when either cannot be had.
    async fn connector_now(
        &self,
        cluster_id: i64,
        content: &DraftContent,
    ) -> Result<(ConnectClient, Option<Config>), String> {
        let name = content.name.as_str();
        let client = match self.connect.client_of(cluster_id, &content.connect).await {
            Ok((_, c)) => c,
            Err(e) => return Err(format!("Nothing was written: {e}")),
        };
        match running(&client, name).await {
            Ok(now) => Ok((client, now)),
            Err(e) => Err(format!(
                "Kafka Connect could not say what connector {name} runs now, so nothing was written: {}",
                e.for_viewer(false)
            )),
        }
    }

    async fn applied(
        &self,
        mut tx: sqlx::Transaction<'_, sqlx::Postgres>,
        who: &Principal,
        actor: &str,
        from: &str,
        item: &ItemRow,
        reason: &str,
    ) -> Result<(), AppError> {
        items::set_state(&mut tx, item.id, State::Applied.as_str(), reason).await?;
        audit(
            &mut tx,
            actor,
            from,
            "review.apply",
            item.id,
            json!({ "revision": item.revision, "content_hash": item.content_hash,
                    "connector": item.subject, "outcome": reason }),
        )
        .await?;
        let mut told = writers(item);
        told.retain(|u| *u != who.user_id || actor == AUTONOMOUS);
        Self::notify(
            &mut tx,
            &told,
            item.id,
            &format!("#{} {} is applied: {reason}", item.id, item.title),
        )
        .await?;
        let event = streamkeeper::review::mail::MailEvent::Applied;
        self.mail(&mut tx, &told, crate::review::mail::item_ref(item), &event)
            .await?;
        commit(tx).await?;
        Ok(())
    }

    /// The running config moved since the draft was reviewed: the draft
    /// becomes a new revision on the config running now, validated again,
    /// every approval void.
    async fn connector_back_to_review(
        &self,
        actor: &str,
        from: &str,
        item: &ItemRow,
        content: &DraftContent,
        exists_now: bool,
    ) -> Result<(), AppError> {
        let change = Change {
            kind: Kind::ConnectorDraft,
            cluster_id: item.cluster_id,
            connect: &content.connect,
            name: &content.name,
            config: &content.config,
        };
        let p = self.prepare_connector(&change, &item.domain, false).await?;
        let mut tx = begin(&self.pool).await?;
        let locked = lock(&mut tx, item.id).await?;
        if locked.revision != item.revision {
            return Err(refusal(&streamkeeper::review::Refusal::StaleHash {
                current: locked.revision,
            }));
        }
        let was = if item.base_schema.is_some() {
            "the config it was approved on"
        } else {
            "not existing"
        };
        let now = if exists_now {
            "a different running config"
        } else {
            "no connector"
        };
        let reason = format!(
            "Not applied: connector {} moved from {was} to {now} since it was approved. It is back in review as revision {}; every approval is void.",
            content.name,
            item.revision + 1
        );
        let voided = facts(&locked).counted_approvals();
        items::new_revision(&mut tx, item.id, &p, &reason).await?;
        audit(
            &mut tx,
            actor,
            from,
            "review.stale",
            item.id,
            json!({ "connector": item.subject, "base_was": item.base_schema.is_some(),
                    "exists_now": exists_now, "voided_approvals": voided,
                    "content_hash": p.content_hash }),
        )
        .await?;
        self.tell_approvers(&mut tx, item.id, &item.title, &p, actor)
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
