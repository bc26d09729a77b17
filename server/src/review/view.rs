//! Review items as the inbox and the item's page show them, with what the
//! caller may do with each.

use super::{ReviewService, apply::registration, approver, facts, state_of};
use crate::errors::db;
use crate::schemas::{pretty, side_by_side};
use crate::store::review::{self as items, DomainListRow, ItemRow};
use streamkeeper::account::Principal;
use streamkeeper::review::{
    Autonomy, Base, Content, Kind, State, check_apply, check_approval, check_edit, check_reject,
    check_withdraw,
};
use streamkeeper::role::Role;
use streamkeeper::schema::Verdict;
use streamkeeper_app::error::AppError;
use streamkeeper_app::model::{
    ApprovalView, CommentView, DomainSettings, ItemActions, ReviewItem, ReviewSummary,
};

pub(super) fn summary(who: &Principal, item: &ItemRow) -> ReviewSummary {
    let f = facts(item);
    ReviewSummary {
        id: item.id,
        kind: item.kind.parse().unwrap_or(Kind::ProducerChange),
        title: item.title.clone(),
        cluster_id: item.cluster_id,
        cluster: item.cluster.clone(),
        topic: item.topic.clone(),
        subject: item.subject.clone(),
        domain: item.domain.clone(),
        author: item.author.clone(),
        state: state_of(item),
        revision: item.revision,
        verdict: Verdict::parse(&item.verdict).unwrap_or(Verdict::Undecided),
        approval_count: f.counted_approvals(),
        required: item.required_approvals,
        waiting_for_me: check_approval(&f, approver(who), &item.content_hash).is_ok(),
        created_at: item.created_at,
        updated_at: item.updated_at,
    }
}

pub(super) fn domain(d: DomainListRow) -> DomainSettings {
    DomainSettings {
        domain: d.domain,
        autonomy: d
            .autonomy
            .and_then(|a| a.parse().ok())
            .unwrap_or(Autonomy::DEFAULT),
        required_approvals: d.required_approvals.unwrap_or(1),
        approver_users: d.approver_users,
        approver_teams: d.approver_teams,
        effective_approvers: d.effective,
        streams: d.streams,
        updated_by: d.updated_by,
        updated_at: d.updated_at,
    }
}

/// The registry request that applies the content, to run by hand where
/// Streamkeeper does not write.
fn manual_request(url: &str, c: &Content) -> String {
    let body = registration(c).to_json();
    let body = serde_json::to_string_pretty(&body).unwrap_or_default();
    let subject = c.subject.replace('/', "%2F");
    format!(
        "curl -X POST -H 'Content-Type: application/vnd.schemaregistry.v1+json' \\\n  '{}/subjects/{subject}/versions' --data @- <<'EOF'\n{body}\nEOF",
        url.trim_end_matches('/')
    )
}

impl ReviewService {
    /// The item's page for the caller.
    pub(super) async fn view(
        &self,
        who: &Principal,
        item: ItemRow,
    ) -> Result<ReviewItem, AppError> {
        let content: Content = serde_json::from_value(item.content.clone())
            .map_err(|e| AppError::Internal(format!("stored review content: {e}")))?;
        let level = self.level(&item.domain).await?;
        let f = facts(&item);
        let owns = self.owns_stream(who, &item).await?;
        let me = approver(who);
        let approve = check_approval(&f, me, &item.content_hash);
        // Say why someone who might expect to approve cannot.
        let approve_refusal = approve.as_ref().err().and_then(|r| {
            let took_part = who.user_id == item.author_id || item.editor_ids.contains(&who.user_id);
            (took_part || who.has(Role::Approver)).then(|| r.to_string())
        });
        let verdict = Verdict::parse(&item.verdict).unwrap_or(Verdict::Undecided);
        let may_apply = check_apply(&f, level).is_ok()
            || (streamkeeper::review::is_routine(level, verdict)
                && matches!(f.state, State::Approved | State::ApplyFailed));
        let involved = who.has(Role::Admin)
            || item.author_id == who.user_id
            || item.editor_ids.contains(&who.user_id)
            || item.approver_ids.contains(&who.user_id);
        let actions = ItemActions {
            approve: approve.is_ok(),
            reject: check_reject(&f, me, "reason").is_ok(),
            edit: check_edit(&f, who.user_id, owns, item.revision).is_ok(),
            withdraw: check_withdraw(&f, who.user_id, owns).is_ok(),
            apply: may_apply && involved,
            approve_refusal,
        };
        let check = match item.check_id {
            Some(c) => self.schemas.item_check(c).await.ok().flatten(),
            None => None,
        };
        let manual_apply = if level.applies() || state_of(&item).is_closed() {
            None
        } else {
            self.schemas
                .registry_url(item.cluster_id)
                .await?
                .map(|url| manual_request(&url, &content))
        };
        let diff = side_by_side(
            &item.base_schema.as_deref().map(pretty).unwrap_or_default(),
            &pretty(&content.schema),
        );
        let approvals = items::approvals(&self.pool, item.id)
            .await
            .map_err(db)?
            .into_iter()
            .map(|a| ApprovalView {
                current: a.revision == item.revision,
                approver: a.approver,
                revision: a.revision,
                content_hash: a.content_hash,
                approved_at: a.approved_at,
            })
            .collect();
        let comments = items::comments(&self.pool, item.id)
            .await
            .map_err(db)?
            .into_iter()
            .map(|c| CommentView {
                id: c.id,
                author: c.author,
                body: c.body,
                created_at: c.created_at,
            })
            .collect();
        let u32_of = |v: Option<i32>| v.and_then(|v| u32::try_from(v).ok());
        Ok(ReviewItem {
            summary: summary(who, &item),
            content_hash: item.content_hash.clone(),
            base: Base {
                version: u32_of(item.base_version),
                schema_id: u32_of(item.base_schema_id),
            },
            base_schema: item.base_schema.clone(),
            diff,
            check,
            approvers: items::usernames(&self.pool, &item.approver_ids)
                .await
                .map_err(db)?,
            eligible_approvers: f.eligible_approvers(),
            editors: items::usernames(&self.pool, &item.editor_ids)
                .await
                .map_err(db)?,
            approvals,
            comments,
            trail: items::trail(&self.pool, item.id).await.map_err(db)?,
            state_reason: item.state_reason.clone(),
            autonomy: level,
            applied_version: u32_of(item.applied_version),
            applied_schema_id: u32_of(item.applied_schema_id),
            manual_apply,
            actions,
            content,
        })
    }
}
