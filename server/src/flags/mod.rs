//! Flags as owners use them: their lists, a flag's receipts, acknowledging
//! and dismissing (wrong or expected, with a reason that stays on the
//! record, and an optional snooze). Only members of the flag's team, or
//! admins, act on a flag; every refusal is audited. The lifecycle the
//! watching features drive is `lifecycle`.

pub mod api;
pub mod lifecycle;
pub mod metrics;
pub mod routine;
pub mod store;

use crate::accounts::require;
use crate::audit::{audited, record_refusal};
use crate::platform::authz::Facts;
use crate::platform::db::{begin, commit};
use serde_json::json;
use sqlx::PgPool;
use store::FlagRow;
use streamkeeper::access::stewardship::{Stewardship, may_steward};
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::Action;
use streamkeeper::flags::FlagColumn;
use streamkeeper::flags::lifecycle::{DismissalKind, check_snooze};
use streamkeeper::platform::page::{Choice, choice};
use streamkeeper::platform::page::{Page, PageRequest};
use streamkeeper::platform::sort::Sorted;
use streamkeeper_app::error::AppError;
use streamkeeper_app::flags::model::{Dismissal, FlagView};

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
        dismissal: f.dismissal,
        snoozed_until: f.snoozed_until,
        released_at: f.released_at,
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
        dismissal: Option<&Dismissal>,
    ) -> Result<FlagView, AppError> {
        require(who, Action::Read, "act on flags")?;
        // What is wrong with the request itself is said before anything
        // is looked up, and changes nothing.
        let checked = dismissal.map(checked_dismissal).transpose()?;
        let mut tx = begin(&self.pool).await?;
        let Some((state, team)) = store::lock(&mut tx, id).await? else {
            // The web layer records the 403s it answers; a 404 is recorded
            // here, so probing for flags leaves a trace too.
            let e = AppError::NotFound(format!("Flag {id}"));
            let detail = json!({ "refused": e.to_string() });
            record_refusal(
                &self.pool,
                who,
                from,
                "flag.act.refused",
                format!("flag:{id}"),
                detail,
            )
            .await;
            return Err(e);
        };
        if !self.may_act(who, team).await? {
            return Err(AppError::Forbidden("act on a flag of another team".into()));
        }
        let (action, detail) = match (dismissal, checked) {
            (Some(d), Some((kind, snoozed_until))) => {
                if !matches!(state.as_str(), "open" | "acknowledged") {
                    return Err(AppError::Conflict(format!("This flag is {state} already.")));
                }
                let reason = d.reason.trim();
                let dismissal = store::Dismissal {
                    by: &who.username,
                    kind: kind.as_str(),
                    reason,
                    snoozed_until,
                };
                store::dismiss(&mut tx, id, &dismissal).await?;
                // To the team's channels a dismissed flag is over: its
                // incident and alert are resolved.
                if team.is_some() {
                    store::record_transition(&mut tx, id, "resolve", None, None).await?;
                }
                let detail = json!({ "reason": reason, "dismissal": kind.as_str(),
                                     "snoozed_until": snoozed_until });
                ("flag.dismiss", detail)
            }
            _ => {
                if state != "open" {
                    return Err(AppError::Conflict(format!(
                        "This flag is {state}; only open flags can be acknowledged."
                    )));
                }
                store::acknowledge(&mut tx, id, &who.username).await?;
                if team.is_some() {
                    store::record_transition(&mut tx, id, "acknowledge", None, Some(&who.username))
                        .await?;
                }
                ("flag.acknowledge", json!({}))
            }
        };
        audited(&mut tx, who, from, action, format!("flag:{id}"), detail).await?;
        commit(tx).await?;
        streamkeeper_app::port::Flags::get(self, who, id).await
    }
}

/// A dismissal's kind and snooze, or why they are refused (422).
fn checked_dismissal(
    d: &Dismissal,
) -> Result<(DismissalKind, Option<chrono::DateTime<chrono::Utc>>), AppError> {
    if d.reason.trim().is_empty() {
        return Err(AppError::Invalid(
            "Say why the flag is dismissed; the reason stays on the record.".into(),
        ));
    }
    // A body's value that is none of the allowed ones is invalid (422),
    // not a malformed request.
    let kind = choice::<DismissalKind>(Some(&d.dismissal))
        .map_err(|e| AppError::Invalid(e.to_string()))?
        .ok_or_else(|| {
            AppError::Invalid(
            "Say whether the flag was wrong or the trouble expected (dismissal: wrong or expected)."
                .into(),
        )
        })?;
    let now = crate::platform::clock::now();
    let until = d
        .snooze_until
        .map(|u| check_snooze(u.timestamp_millis(), now.timestamp_millis()).map(|_| u))
        .transpose()
        .map_err(|e| AppError::Invalid(e.to_string()))?;
    Ok((kind, until))
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
        dismissal: &Dismissal,
    ) -> Result<FlagView, AppError> {
        self.act(who, from, id, Some(dismissal)).await
    }
}

/// When the earliest delivery not yet sent or given up is due, if before
/// `until` (the history player waits for it: `demo_history`).
pub async fn next_delivery_before(
    pool: &PgPool,
    until: chrono::DateTime<chrono::Utc>,
) -> Result<Option<chrono::DateTime<chrono::Utc>>, crate::platform::errors::Db> {
    store::next_due_before(&mut *pool.acquire().await?, until).await
}

/// The live flag of a group's lag on a cluster, if any (the history
/// player acts on it as its owner would).
pub async fn live_group_flag(
    pool: &PgPool,
    cluster_id: i64,
    group: &str,
) -> Result<Option<i64>, crate::platform::errors::Db> {
    Ok(store::live(pool, cluster_id)
        .await?
        .into_iter()
        .find(|(k, _)| k.subject_kind == "group" && k.subject == group)
        .map(|(_, (id, _))| id))
}

/// The given owner team, else the platform team, with its webhook.
pub async fn route_owner(
    pool: &PgPool,
    owner: Option<i64>,
) -> Result<Option<lifecycle::Route>, crate::platform::errors::Db> {
    store::route_owner(pool, owner).await
}
