//! What the screens add to a team's channels: the team's delivery settings
//! (its repeat interval), the broken channels a home page tells of, and a
//! flag's delivery log with the transitions a silence holds.

use crate::audit::{audited, record_refusal};
use crate::notify::NotifyService;
use crate::notify::store;
use crate::platform::db::{begin, commit};
use serde_json::json;
use streamkeeper::access::stewardship::Stewardship;
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::Role;
use streamkeeper::notify::check_repeat;
use streamkeeper_app::error::AppError;
use streamkeeper_app::notify::model::{BrokenChannel, DeliveryView, NotifySettings};

impl NotifyService {
    pub(super) async fn team_settings(
        &self,
        who: &Principal,
        team_id: i64,
    ) -> Result<NotifySettings, AppError> {
        self.may_manage(who, "", team_id, Stewardship::Act).await?;
        let (team, repeat_s) = store::team_repeat(&self.pool, team_id)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("Team {team_id}")))?;
        Ok(NotifySettings {
            team,
            repeat_s: i64::from(repeat_s),
        })
    }

    pub(super) async fn set_team_settings(
        &self,
        who: &Principal,
        from: &str,
        team_id: i64,
        new: &NotifySettings,
    ) -> Result<NotifySettings, AppError> {
        self.may_manage(who, from, team_id, Stewardship::Steer)
            .await?;
        // In range, it fits the column's i32.
        let checked = check_repeat(new.repeat_s)
            .map_err(|e| e.to_string())
            .and_then(|s| i32::try_from(s).map_err(|e| e.to_string()));
        let repeat_s = match checked {
            Ok(s) => s,
            Err(why) => {
                record_refusal(
                    &self.pool,
                    who,
                    from,
                    "notify.settings.refused",
                    format!("team:{team_id}"),
                    json!({ "repeat_s": new.repeat_s, "refused": why }),
                )
                .await;
                return Err(AppError::Invalid(why));
            }
        };
        let mut tx = begin(&self.pool).await?;
        store::set_repeat(&mut tx, team_id, repeat_s).await?;
        audited(
            &mut tx,
            who,
            from,
            "notify.settings",
            format!("team:{team_id}"),
            json!({ "repeat_s": repeat_s }),
        )
        .await?;
        commit(tx).await?;
        self.team_settings(who, team_id).await
    }

    /// Admins see every team's broken channels; a team's owners their
    /// team's; the platform team's members every team's (they are told of
    /// trouble nobody else hears of).
    pub(super) async fn broken(&self, who: &Principal) -> Result<Vec<BrokenChannel>, AppError> {
        let rows = store::broken_for(
            &self.pool,
            who.user_id,
            who.has(Role::Admin),
            who.has(Role::Owner),
        )
        .await?;
        Ok(rows
            .into_iter()
            .map(|b| BrokenChannel {
                team_id: b.team_id,
                team: b.team,
                channel_id: b.channel_id,
                name: b.name,
                kind: b.kind,
                broken_at: b.broken_at,
                answer: b.answer,
            })
            .collect())
    }

    /// A flag's transitions a silence holds, then its channels' deliveries,
    /// the latest first.
    pub(super) async fn flag_deliveries(
        &self,
        flag_id: i64,
    ) -> Result<Vec<DeliveryView>, AppError> {
        let held = store::held_of(&self.pool, flag_id).await?.into_iter().map(|h| {
            let by = match (h.until, h.reason) {
                (Some(until), Some(reason)) => format!(
                    "held by a silence until {} ({reason})",
                    until.format("%Y-%m-%d %H:%M UTC")
                ),
                (Some(until), None) => format!(
                    "held by its streams' silences until {}",
                    until.format("%Y-%m-%d %H:%M UTC")
                ),
                _ => "held by a silence that has ended: sent at the next pass if the trouble is still there".into(),
            };
            DeliveryView {
                channel: String::new(),
                kind: String::new(),
                transition: h.transition,
                attempts: 0,
                answer: None,
                delivered_at: None,
                failed_at: None,
                next_attempt_at: None,
                held_by: Some(by),
            }
        });
        let sent = store::deliveries_of(&self.pool, flag_id)
            .await?
            .into_iter()
            .map(|d| DeliveryView {
                channel: d.channel,
                kind: d.kind,
                transition: d.transition,
                attempts: d.attempts,
                // One message told many flags: each flag's log names it.
                answer: match (d.digest, d.answer) {
                    (Some(id), Some(a)) => Some(format!("in digest {id}: {a}")),
                    (Some(id), None) => Some(format!("in digest {id}")),
                    (None, a) => a,
                },
                delivered_at: d.delivered_at,
                failed_at: d.failed_at,
                next_attempt_at: d.next_attempt_at,
                held_by: None,
            });
        Ok(held.chain(sent).collect())
    }
}
