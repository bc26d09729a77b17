//! A connector item as its own page shows it (the config, its diff
//! against the base, the frozen approvers, what the caller may do) and in
//! the shape of the inbox's item page.

use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::Role;
use streamkeeper::connect::canonical::{Base, diff};
use streamkeeper::review::{
    Kind, State, check_apply, check_approval, check_edit, check_reject, check_withdraw, involved,
};
use streamkeeper::schemas::SchemaType;
use streamkeeper_app::connect::model::{DraftCheck, RunAfterApply};
use streamkeeper_app::error::AppError;
use streamkeeper_app::review::model::{ApprovalView, ItemActions};

use super::super::store::{self as items, ItemRow};
use super::super::{ReviewService, approver, facts, state_of};
use super::{AsSchemaItem, ConnectorItem, content_of, kind_of, manual_request, stored_base};
use crate::platform::errors;

/// A draft's validation as kept with its revision (the report without its
/// config, which is the content), as the item page shows it; none for a
/// restart, whose check only says what it restarts.
fn stored_check(item: &ItemRow) -> Option<DraftCheck> {
    #[derive(Deserialize)]
    struct Kept {
        plugin: streamkeeper::connect::Plugin,
        findings: Vec<streamkeeper::connect::Finding>,
        worker: Option<streamkeeper::connect::worker::WorkerAnswer>,
        worker_error: Option<String>,
        rows: Vec<streamkeeper::connect::worker::Row>,
        may_propose: bool,
    }
    let kept: Kept = serde_json::from_value(item.connector_check.clone()?).ok()?;
    Some(DraftCheck {
        plugin: kept.plugin,
        findings: kept.findings,
        rows: kept.rows,
        worker_errors: kept.worker.map(|w| w.error_count),
        worker_error: kept.worker_error,
        may_propose: kept.may_propose,
        config: BTreeMap::new(),
    })
}

impl ReviewService {
    pub(super) async fn connector_item_view(
        &self,
        who: &Principal,
        item: ItemRow,
    ) -> Result<ConnectorItem, AppError> {
        let kind = kind_of(&item)?;
        let content = content_of(&item)?;
        let level = self.level(&item.domain).await?;
        let f = facts(&item);
        let owns = self.owns_stream(who, &item).await?;
        let me = approver(who);
        let approve = check_approval(&f, me, &item.content_hash);
        let approve_refusal = approve.as_ref().err().and_then(|r| {
            let took_part = who.user_id == item.author_id || item.editor_ids.contains(&who.user_id);
            (took_part || who.has(Role::Approver)).then(|| r.to_string())
        });
        let actions = ItemActions {
            approve: approve.is_ok(),
            reject: check_reject(&f, me, "reason").is_ok(),
            edit: kind == Kind::ConnectorDraft
                && check_edit(&f, who.user_id, owns, item.revision).is_ok(),
            withdraw: check_withdraw(&f, who.user_id, owns).is_ok(),
            apply: check_apply(&f, level).is_ok()
                && involved(who.user_id, who.has(Role::Admin), &f),
            approve_refusal,
            confirm: self.confirmation(who).await?,
        };
        let manual_apply = if level.applies() || state_of(&item).is_closed() {
            None
        } else {
            crate::connect::store::by_name(&self.pool, item.cluster_id, &content.connect)
                .await?
                .and_then(|c| manual_request(&c.url, kind, &content))
        };
        let base_config = stored_base(&item);
        let base = Base::of(base_config.as_ref(), &content.secret_keys);
        let approvals = items::approvals(&self.pool, item.id)
            .await?
            .into_iter()
            .map(|a| ApprovalView {
                current: a.revision == item.revision,
                approver: a.approver,
                revision: a.revision,
                content_hash: a.content_hash,
                approved_at: a.approved_at,
            })
            .collect();
        Ok(ConnectorItem {
            summary: super::super::view::summary(who, &item),
            diff: diff(base_config.as_ref(), &content.config, &content.secret_keys),
            base,
            content_hash: item.content_hash.clone(),
            check: item.connector_check.clone().unwrap_or(Value::Null),
            approvers: items::usernames(&self.pool, &item.approver_ids).await?,
            eligible_approvers: f.eligible_approvers(),
            approvals,
            state_reason: item.state_reason.clone(),
            autonomy: level,
            manual_apply,
            actions,
            content,
        })
    }

    /// A connector item in the shape of the inbox's item page: the
    /// masked config as the "schema", the diff against the running config
    /// (secret values left out) and, once applied, whether it runs. Its
    /// own page is [`ReviewService::connector_item`].
    pub(in crate::review) async fn connector_as_schema_item(
        &self,
        item: &ItemRow,
    ) -> Result<AsSchemaItem, AppError> {
        let kind = kind_of(item)?;
        let content = content_of(item)?;
        let level = self.level(&item.domain).await?;
        let connect =
            crate::connect::store::by_name(&self.pool, item.cluster_id, &content.connect).await?;
        let manual = if level.applies() || state_of(item).is_closed() {
            None
        } else {
            connect
                .as_ref()
                .and_then(|c| manual_request(&c.url, kind, &content))
        };
        let run = match (&connect, item.applied_at) {
            (Some(c), Some(applied)) if state_of(item) == State::Applied => {
                Some(self.run_after_apply(c, &content.name, applied).await?)
            }
            _ => None,
        };
        let schema = serde_json::to_string_pretty(&content.config)
            .map_err(|e| errors::internal("a connector item's config", e))?;
        let diff = (kind == Kind::ConnectorDraft).then(|| {
            diff(
                stored_base(item).as_ref(),
                &content.config,
                &content.secret_keys,
            )
        });
        Ok(AsSchemaItem {
            content: streamkeeper::review::Content {
                cluster_id: item.cluster_id,
                topic: item.topic.clone(),
                subject: item.subject.clone(),
                schema_type: SchemaType::Json,
                schema,
                references: Vec::new(),
            },
            manual,
            diff,
            run,
            check: stored_check(item),
        })
    }

    /// What the first status pass after an apply read of the connector: a
    /// pass that ran before the apply says nothing about it.
    async fn run_after_apply(
        &self,
        connect: &crate::connect::store::ConnectRow,
        name: &str,
        applied: chrono::DateTime<chrono::Utc>,
    ) -> Result<RunAfterApply, AppError> {
        let read = connect.read_at.filter(|at| *at > applied);
        let row = match read {
            Some(_) => crate::connect::store::connector(&self.pool, connect.id, name)
                .await?
                .filter(|r| r.seen_at > applied && r.gone_at.is_none()),
            None => None,
        };
        Ok(RunAfterApply {
            failure: row
                .as_ref()
                .and_then(|r| r.failed_trace.as_deref())
                .map(|t| streamkeeper::connect::status::first_line(t).to_owned()),
            tasks_failed: row.as_ref().map_or(0, |r| r.tasks_failed),
            state: row.map(|r| r.shown_state()),
            read_at: read,
            interval_s: connect.interval_s,
        })
    }
}
