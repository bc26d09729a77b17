//! Silences: a cluster muted by an admin, a stream or a group by an admin
//! or a member of its owner team; made and ended in the audit log, refusals
//! audited. The rules are `streamkeeper::notify::silence`.

use crate::audit::{audited, record_refusal};
use crate::notify::NotifyService;
use crate::notify::store::{self, SilenceRow};
use crate::platform::authz::Facts;
use crate::platform::db::{begin, commit};
use serde_json::json;
use streamkeeper::access::stewardship::{Stewardship, may_steward};
use streamkeeper::accounts::account::Principal;
use streamkeeper::notify::{SilenceError, SilenceScope, check_silence};
use streamkeeper_app::error::AppError;
use streamkeeper_app::notify::model::{NewSilence, SilenceView};

pub fn view(s: SilenceRow) -> SilenceView {
    SilenceView {
        id: s.id,
        cluster_id: s.cluster_id,
        scope: s.scope,
        name: s.name,
        until: s.until,
        reason: s.reason,
        created_by: s.created_by,
        created_at: s.created_at,
    }
}

impl NotifyService {
    async fn refuse(&self, who: &Principal, from: &str, cluster_id: i64, e: AppError) -> AppError {
        record_refusal(
            &self.pool,
            who,
            from,
            "notify.silence.refused",
            format!("cluster:{cluster_id}"),
            json!({ "refused": e.to_string() }),
        )
        .await;
        e
    }

    /// 404 (audited) for a cluster that is not there.
    pub(super) async fn cluster(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
    ) -> Result<(), AppError> {
        if store::cluster_exists(&self.pool, id).await? {
            return Ok(());
        }
        let e = AppError::NotFound(format!("Cluster {id}"));
        Err(self.refuse(who, from, id, e).await)
    }

    /// Whether `who` may mute `scope`: a cluster, admins; a stream or a
    /// group, admins and its owner team's members.
    async fn may_mute(
        &self,
        who: &Principal,
        cluster_id: i64,
        scope: &SilenceScope,
    ) -> Result<(), AppError> {
        let pool = &self.pool;
        let owner = match scope {
            SilenceScope::Cluster => None,
            SilenceScope::Stream(t) => {
                crate::platform::ownership::stream(pool, cluster_id, t).await?
            }
            SilenceScope::Group(g) => crate::platform::ownership::group(pool, cluster_id, g)
                .await?
                .flatten(),
        };
        let facts = Facts::load(pool, who).await?;
        let owner = owner.map(|o| o.team_id());
        if may_steward(facts.steward(who), owner, Stewardship::Act) {
            Ok(())
        } else {
            Err(AppError::Forbidden(format!("mute this {}", scope.kind())))
        }
    }

    pub(super) async fn make_silence(
        &self,
        who: &Principal,
        from: &str,
        cluster_id: i64,
        new: &NewSilence,
    ) -> Result<SilenceView, AppError> {
        self.cluster(who, from, cluster_id).await?;
        let now = crate::platform::clock::now();
        let checked = SilenceScope::parse(new.scope.trim(), &new.name)
            .ok_or(SilenceError::NoScope)
            .and_then(|s| {
                check_silence(
                    new.until.timestamp_millis(),
                    &new.reason,
                    now.timestamp_millis(),
                )
                .map(|()| s)
            });
        let scope = match checked {
            Ok(s) => s,
            Err(e) => {
                let e = AppError::Invalid(e.to_string());
                return Err(self.refuse(who, from, cluster_id, e).await);
            }
        };
        self.may_mute(who, cluster_id, &scope).await?;
        let row = SilenceRow {
            id: 0,
            cluster_id,
            scope: scope.kind().to_owned(),
            name: scope.name().to_owned(),
            until: new.until,
            reason: new.reason.trim().to_owned(),
            created_by: who.username.clone(),
            created_at: now,
        };
        let mut tx = begin(&self.pool).await?;
        let row = store::add_silence(&mut tx, &row).await?;
        let detail = json!({ "cluster_id": cluster_id, "scope": row.scope, "name": row.name,
                             "until": row.until, "reason": row.reason });
        audited(
            &mut tx,
            who,
            from,
            "notify.silence",
            format!("silence:{}", row.id),
            detail,
        )
        .await?;
        commit(tx).await?;
        Ok(view(row))
    }

    pub(super) async fn end_silence(
        &self,
        who: &Principal,
        from: &str,
        cluster_id: i64,
        id: i64,
    ) -> Result<(), AppError> {
        self.cluster(who, from, cluster_id).await?;
        let s = store::silence_by_id(&self.pool, cluster_id, id)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("Silence {id}")))?;
        let scope = SilenceScope::parse(&s.scope, &s.name)
            .ok_or_else(|| AppError::Internal(format!("stored silence scope {}", s.scope)))?;
        self.may_mute(who, cluster_id, &scope).await?;
        let mut tx = begin(&self.pool).await?;
        store::end_silence(&mut tx, id).await?;
        audited(
            &mut tx,
            who,
            from,
            "notify.silence.end",
            format!("silence:{id}"),
            json!({}),
        )
        .await?;
        Ok(commit(tx).await?)
    }
}
