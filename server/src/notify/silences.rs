//! Silences: a cluster muted by an admin, a stream or a group by an admin
//! or a member of its owner team; made and ended in the audit log, refusals
//! audited. The rules are `streamkeeper::notify::silence`.

use crate::audit::{audited, record_refusal};
use crate::notify::NotifyService;
use crate::notify::store::{self, SilenceRow};
use crate::platform::authz::Facts;
use crate::platform::db::{begin, commit};
use crate::platform::errors::Db;
use crate::platform::ownership;
use chrono::{DateTime, Utc};
use serde_json::json;
use sqlx::PgPool;
use streamkeeper::access::stewardship::{Stewardship, may_steward};
use streamkeeper::accounts::account::Principal;
use streamkeeper::notify::{
    FlagNotice, Silence, SilenceError, SilenceScope, check_silence, flag_held_by,
};
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

/// A stored silence as the rules read it, a stream's with its owner team
/// by the one ownership rule: the fan-out and the pages' "muted until"
/// both build them here, so a page says what delivery does.
pub async fn silence_rule(
    pool: &PgPool,
    cluster_id: i64,
    cluster: &str,
    scope: &str,
    name: &str,
    until: DateTime<Utc>,
) -> Result<Option<Silence>, Db> {
    let Some(scope) = SilenceScope::parse(scope, name) else {
        return Ok(None);
    };
    let owner = match &scope {
        SilenceScope::Stream(topic) => ownership::stream(pool, cluster_id, topic)
            .await?
            .map(|o| o.team.name),
        _ => None,
    };
    Ok(Some(Silence {
        cluster: cluster.to_owned(),
        scope,
        until_ms: until.timestamp_millis(),
        owner,
    }))
}

impl NotifyService {
    /// The silence holding `subject`'s flags now (`subject_kind`
    /// `cluster`, `topic` or `group`), by the rule delivery holds them by
    /// (`flag_held_by`): a group's own, its cluster's, and its streams'
    /// when their owner owns the group too and every stream it reads is
    /// muted.
    pub(super) async fn muted_now(
        &self,
        who: &Principal,
        cluster_id: i64,
        subject_kind: &str,
        subject: &str,
    ) -> Result<Option<SilenceView>, AppError> {
        crate::platform::authz::require(
            who,
            streamkeeper::accounts::role::Action::Read,
            "see silences",
        )?;
        self.cluster(who, "", cluster_id).await?;
        let pool = &self.pool;
        // One cluster: its id names it for the rules.
        let cluster = cluster_id.to_string();
        let mut held = Vec::new();
        for row in store::silences(pool, cluster_id).await? {
            let rule = silence_rule(pool, cluster_id, &cluster, &row.scope, &row.name, row.until);
            if let Some(rule) = rule.await? {
                held.push((rule, row));
            }
        }
        let (team, topics) = if subject_kind == "group" {
            let owner = ownership::group(pool, cluster_id, subject).await?.flatten();
            let topics = store::group_topics(pool, cluster_id, subject).await?;
            (owner.map(|o| o.team.name), topics)
        } else {
            (None, Vec::new())
        };
        let flag = FlagNotice {
            id: 0,
            cluster,
            subject_kind: subject_kind.to_owned(),
            subject: subject.to_owned(),
            kind: String::new(),
            was: None,
            reason: String::new(),
            team,
            url: String::new(),
            onset_ms: 0,
            topics,
            label_topics: None,
        };
        let rules: Vec<Silence> = held.iter().map(|(s, _)| s.clone()).collect();
        let now_ms = crate::platform::clock::now().timestamp_millis();
        let by = flag_held_by(&rules, &flag, now_ms);
        Ok(by
            .and_then(|s| held.into_iter().find(|(r, _)| r == s))
            .map(|(_, row)| view(row)))
    }

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
