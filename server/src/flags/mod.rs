//! Flags as owners use them: their lists, a flag's receipts, acknowledging
//! and dismissing (with a reason that stays on the record). Only members of
//! the flag's team, or admins, act on a flag.

pub mod api;
pub mod metrics;
pub mod routine;
pub mod store;

use crate::accounts::{audited, require};
use crate::platform::authz::Facts;
use crate::platform::db::{begin, commit};
use serde_json::json;
use sqlx::PgPool;
use store::FlagRow;
use streamkeeper::access::stewardship::{Stewardship, may_steward};
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::Action;
use streamkeeper::flags::FlagColumn;
use streamkeeper::platform::page::{Page, PageRequest};
use streamkeeper::platform::sort::Sorted;
use streamkeeper_app::error::AppError;
use streamkeeper_app::flags::model::FlagView;

#[derive(Clone)]
pub struct FlagService {
    pool: PgPool,
}

fn view(f: FlagRow, actionable: bool) -> FlagView {
    FlagView {
        id: f.id,
        cluster_id: f.cluster_id,
        cluster: f.cluster,
        subject_kind: f.subject_kind,
        subject: f.subject,
        kind: f.kind,
        state: f.state,
        team: f.team,
        reason: f.reason,
        evidence: f.evidence,
        onset_at: f.onset_at,
        raised_at: f.raised_at,
        notified_at: f.notified_at,
        acknowledged_at: f.acknowledged_at,
        acknowledged_by: f.acknowledged_by,
        dismissed_at: f.dismissed_at,
        dismissed_by: f.dismissed_by,
        dismissed_reason: f.dismissed_reason,
        resolved_at: f.resolved_at,
        actionable,
    }
}

impl FlagService {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    async fn may_act(&self, who: &Principal, team_id: Option<i64>) -> Result<bool, AppError> {
        let facts = Facts::load(&self.pool, who).await?;
        Ok(may_steward(facts.steward(who), team_id, Stewardship::Act))
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    async fn act(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        dismiss_reason: Option<&str>,
    ) -> Result<FlagView, AppError> {
        require(who, Action::Read, "act on flags")?;
        let mut tx = begin(&self.pool).await?;
        let (state, team) = store::lock(&mut tx, id)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("Flag {id}")))?;
        if !self.may_act(who, team).await? {
            return Err(AppError::Forbidden("act on a flag of another team".into()));
        }
        let action = match dismiss_reason {
            None => {
                if state != "open" {
                    return Err(AppError::Conflict(format!(
                        "This flag is {state}; only open flags can be acknowledged."
                    )));
                }
                store::acknowledge(&mut tx, id, &who.username).await?;
                "flag.acknowledge"
            }
            Some(reason) => {
                let reason = reason.trim();
                if reason.is_empty() {
                    return Err(AppError::Invalid(
                        "Say why the flag is dismissed; the reason stays on the record.".into(),
                    ));
                }
                if !matches!(state.as_str(), "open" | "acknowledged") {
                    return Err(AppError::Conflict(format!("This flag is {state} already.")));
                }
                store::dismiss(&mut tx, id, &who.username, reason).await?;
                "flag.dismiss"
            }
        };
        audited(
            &mut tx,
            who,
            from,
            action,
            format!("flag:{id}"),
            json!({ "reason": dismiss_reason }),
        )
        .await?;
        commit(tx).await?;
        streamkeeper_app::port::Flags::get(self, who, id).await
    }
}

#[async_trait::async_trait]
impl streamkeeper_app::port::Flags for FlagService {
    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn list(
        &self,
        who: &Principal,
        mine: bool,
        live_only: bool,
        sort: Option<String>,
        page: PageRequest,
    ) -> Result<Page<FlagView>, AppError> {
        require(who, Action::Read, "see flags")?;
        let order = Sorted::<FlagColumn>::parse(sort.as_deref())?;
        let facts = Facts::load(&self.pool, who).await?;
        let teams = mine.then_some(facts.teams());
        let p = store::list(&self.pool, teams, live_only, order, page).await?;
        let ids: Vec<i64> = p.items.iter().map(|f| f.id).collect();
        store::mark_seen(&self.pool, &ids, facts.teams()).await?;
        let steward = facts.steward(who);
        let items = p
            .items
            .into_iter()
            .map(|f| {
                let actionable = may_steward(steward, f.team_id, Stewardship::Act);
                view(f, actionable)
            })
            .collect();
        Ok(Page::new(
            items,
            PageRequest::new(Some(p.page), Some(p.per_page)),
            p.total,
        ))
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    async fn get(&self, who: &Principal, id: i64) -> Result<FlagView, AppError> {
        require(who, Action::Read, "see flags")?;
        let f = store::by_id(&self.pool, id)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("Flag {id}")))?;
        let actionable = self.may_act(who, f.team_id).await?;
        Ok(view(f, actionable))
    }

    async fn acknowledge(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
    ) -> Result<FlagView, AppError> {
        self.act(who, from, id, None).await
    }

    async fn dismiss(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        reason: &str,
    ) -> Result<FlagView, AppError> {
        self.act(who, from, id, Some(reason)).await
    }
}
