//! A consumer group's standing over its window of passes, and its owner
//! team (set by an admin, or claimed by an owner).

use super::store::samples::SampleRow;
use super::{ClusterService, store};
use crate::accounts::{require, team_id};
use crate::audit::{audited, record_refusal};
use crate::platform::authz::Facts;
use crate::platform::db::{begin, commit};
use crate::platform::ownership;
use serde_json::json;
use sqlx::PgPool;
use sqlx::types::Json;
use streamkeeper::access::ownership as rule;
use streamkeeper::access::stewardship::may_claim;
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::Action;
use streamkeeper::watch::lag::consumed;
use streamkeeper::watch::lag::status::{
    Rules, Status, group_status, partition_status, window_time_lag_s,
};
use streamkeeper::watch::lag::trend::{Trend, group_trend, partition_trend};
use streamkeeper::watch::listing::Listing;
use streamkeeper::watch::observe::standings;
use streamkeeper::watch::window::{WINDOW_PASSES, Windows, by_group, judgeable};
use streamkeeper_app::error::AppError;
use streamkeeper_app::watch::model::{ClusterView, GroupLagView, PartitionLagView, TrendView};

/// A group's samples per partition over its window of passes.
pub async fn windows(
    pool: &PgPool,
    cluster_id: i64,
    group: &str,
) -> Result<Windows<SampleRow>, crate::platform::errors::Db> {
    let rows = store::samples::group_window(pool, cluster_id, group, WINDOW_PASSES).await?;
    Ok(by_group(rows).remove(group).unwrap_or_default())
}

/// A trend as the pages and the API show it; none for a group no longer
/// listed (its samples are from before).
fn trend_view(t: &Trend, listing: Listing) -> TrendView {
    match listing.figure(Some(t)) {
        Some(t) => TrendView {
            velocity_per_s: t.velocity,
            catch_up_s: t.catch_up.seconds(),
            catch_up: t.catch_up.sentence(),
            retention_risk_s: t.retention.seconds(),
            retention: t.retention.sentence(),
        },
        None => TrendView::default(),
    }
}

impl ClusterService {
    /// Judges each partition of a group over its window of passes. Its
    /// trend is that of its partitions of topic `only` when given (a
    /// stream's page), else of all.
    pub(super) async fn evaluate(
        &self,
        cluster: &ClusterView,
        g: store::GroupRow,
        only: Option<&str>,
    ) -> Result<GroupLagView, AppError> {
        let (id, group) = (cluster.id, g.name.as_str());
        let by_partition = windows(&self.pool, id, group).await?;
        // The stand its open flag kept, so the page says what the flag says.
        let known = crate::flags::lifecycle::lag_evidence(&self.pool, id, Some(group))
            .await?
            .get(group)
            .map(standings)
            .unwrap_or_default();
        let rules = Rules::default();
        let has_members = g.members > 0;
        // A group no longer listed shows its samples from before, but no
        // status or lag as if current.
        let listing = Listing::of(g.gone_since);
        let mut partitions = Vec::new();
        let mut verdicts = Vec::new();
        let mut trends = Vec::new();
        let mut as_of = None;
        let Json(not_consumed) = &g.not_consumed;
        let left_out = by_partition
            .keys()
            .any(|(t, _)| not_consumed.contains_key(t));
        for ((topic, partition), samples) in by_partition {
            let window = judgeable(&samples);
            let newest = samples.last();
            as_of = as_of.max(newest.map(|s| s.at));
            // Left out of the group's status and trend, with no lag.
            if let Some(since) = not_consumed.get(&topic) {
                partitions.push(PartitionLagView {
                    committed: newest.and_then(|s| s.committed),
                    log_start: newest.and_then(|s| s.log_start),
                    log_end: newest.and_then(|s| s.log_end),
                    lag: None,
                    time_lag_s: None,
                    status: listing.status(Status::NotConsumed.as_str()),
                    reason: consumed::reason(*since),
                    trend: TrendView::default(),
                    topic,
                    partition,
                });
                continue;
            }
            let standing = known.get(&(topic.clone(), partition)).copied();
            let verdict = partition_status(&window, has_members, &rules, standing);
            let time_lag_s = window_time_lag_s(&window);
            let trend = partition_trend(&window, rules.allowed_lag);
            if only.is_none_or(|t| t == topic) {
                trends.push(trend);
            }
            partitions.push(PartitionLagView {
                topic,
                partition,
                committed: newest.and_then(|s| s.committed),
                log_start: newest.and_then(|s| s.log_start),
                log_end: newest.and_then(|s| s.log_end),
                lag: listing.figure(window.last().and_then(|s| s.lag().messages())),
                time_lag_s: listing.figure(time_lag_s),
                status: listing.status(verdict.status.as_str()),
                reason: verdict.reason.clone(),
                trend: trend_view(&trend, listing),
            });
            verdicts.push(verdict);
        }
        Ok(GroupLagView {
            cluster: cluster.name.clone(),
            group: g.name.clone(),
            state: listing.state(&g.state, |t| t.to_rfc3339()),
            members: g.members,
            status: listing.status(
                consumed::status_of(group_status(&verdicts), !verdicts.is_empty(), left_out)
                    .as_str(),
            ),
            as_of,
            cluster_state: cluster.state,
            cluster_paused: cluster.paused.clone(),
            gone_since: g.gone_since,
            trend: trend_view(&group_trend(&trends), listing),
            partitions,
        })
    }

    /// Sets or clears a group's owner team. Admins may do anything; an
    /// owner may claim a group for a team they belong to when it is
    /// unowned or their team's by a stream it reads (`may_claim`). A claim
    /// refused, or on a group or team that does not exist, is audited and
    /// changes nothing.
    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    pub async fn set_group_owner(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        group: &str,
        team: Option<&str>,
    ) -> Result<(), AppError> {
        require(who, Action::Read, "claim groups")?;
        // A removed cluster's groups are gone with it.
        self.get(who, id).await?;
        let claimed = self.claim_group(who, id, group, team).await;
        let team_id = match claimed {
            Ok(t) => t,
            // A 403 the web layer audits with its reason; a claim on a
            // group or team that does not exist is recorded here.
            Err(e @ AppError::Forbidden(_)) => return Err(e),
            Err(e) => {
                let target = format!("group:{group}");
                let detail = json!({ "cluster_id": id, "team": team, "refused": e.to_string() });
                record_refusal(&self.pool, who, from, "group.owner.refused", target, detail).await;
                return Err(e);
            }
        };
        let mut tx = begin(&self.pool).await?;
        store::set_group_owner(&mut tx, id, group, team_id, crate::platform::clock::now()).await?;
        audited(
            &mut tx,
            who,
            from,
            "group.owner",
            format!("group:{group}"),
            json!({ "cluster_id": id, "team": team }),
        )
        .await?;
        Ok(commit(tx).await?)
    }

    /// The team `who` may give the group to, or why not.
    async fn claim_group(
        &self,
        who: &Principal,
        id: i64,
        group: &str,
        team: Option<&str>,
    ) -> Result<Option<i64>, AppError> {
        let Some(current) = ownership::group(&self.pool, id, group).await? else {
            return Err(AppError::NotFound(format!("Consumer group {group}")));
        };
        let team_id = match team {
            Some(name) => Some(team_id(&self.pool, name).await?),
            None => None,
        };
        let mine = Facts::load(&self.pool, who).await?;
        if !may_claim(mine.steward(who), current.as_ref(), team_id) {
            return Err(AppError::Forbidden(format!(
                "change this group's owner: it is {} (owners may claim unowned groups, or their own team's, for their own team)",
                rule::describe(current.as_ref())
            )));
        }
        Ok(team_id)
    }
}
