//! Watched clusters as users see them: their state and data age, and a
//! consumer group's lag evaluated over its recent window.

mod admin;
pub mod api;
mod apply;
pub mod cli;
pub mod cluster_file;
mod groups;
pub mod judge;
pub mod kept;
pub mod metrics;
pub mod routine;
pub mod slo;
pub mod store;
mod views;

pub use apply::ApplyReport;
pub use groups::windows;
pub use views::last_message;
use views::{removed_view, topic_view};

use crate::accounts::{require, team_id};
use crate::audit::{audited, record_refusal};
use crate::platform::authz::Facts;
use crate::platform::db::{begin, commit};
use crate::platform::ownership;
use chrono::Utc;
use serde_json::json;
use sqlx::PgPool;
use std::collections::{BTreeMap, HashMap};
use streamkeeper::access::ownership as rule;
use streamkeeper::access::stewardship::{DescribeRefusal, StreamEntry, may_describe};
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::{Action, Role};
use streamkeeper::platform::credential::CredentialPolicy;
use streamkeeper::platform::page::{Choice, Page, PageRequest, choice};
use streamkeeper::platform::sort::Sorted;
use streamkeeper::schemas::Mode;
use streamkeeper::watch::cluster::{self, ClusterState, LastPass};
use streamkeeper::watch::list::{GroupColumn, GroupStatus, StreamColumn, StreamStatus};
use streamkeeper::watch::listing::Listing;
use streamkeeper::watch::sign_in;
use streamkeeper_app::error::AppError;
use streamkeeper_app::watch::model::{
    ClusterDetail, ClusterView, ConnectionReport, GroupFilter, GroupLagView, GroupSummary,
    LagPoint, NewCluster, PartitionLagView, PartitionRef, Paused, RemovedCluster, StreamConsumer,
    StreamDetail, StreamFilter, StreamSpec, StreamSummary, TopicView,
};

#[derive(Clone)]
pub struct ClusterService {
    pool: PgPool,
    /// Which credential references clusters may name.
    credentials: CredentialPolicy,
}

impl ClusterService {
    pub fn new(pool: PgPool, credentials: CredentialPolicy) -> Self {
        Self { pool, credentials }
    }

    async fn view(&self, c: store::ClusterRow) -> Result<ClusterView, AppError> {
        let last = store::last_pass(&self.pool, c.id).await?;
        let good = store::last_good_pass(&self.pool, c.id).await?;
        // Shown only while the latest pass is refused: a later timeout
        // is what the cluster says then.
        let refused = match last.as_ref().and_then(|p| p.problems.first()) {
            Some(p) if sign_in::is_refusal(p) => {
                store::first_refused_since_read(&self.pool, c.id).await?
            }
            _ => None,
        };
        let now = Utc::now();
        let state = cluster::state(
            last.as_ref().map(|p| LastPass {
                outcome: ClusterState::parse(&p.outcome),
                finished_at: p.finished_at,
            }),
            i64::from(c.interval_s),
            now,
        );
        Ok(ClusterView {
            id: c.id,
            name: c.name,
            bootstrap: c.bootstrap,
            security_protocol: c.security_protocol,
            sasl_mechanism: c.sasl_mechanism,
            credentials_set: c.username_ref.is_some() && c.password_ref.is_some(),
            interval_s: c.interval_s,
            state,
            last_good_pass_at: good,
            data_age_s: good.map(|g| (now - g).num_seconds()),
            sign_in_refused_since: refused,
            problems: last.map(|p| p.problems).unwrap_or_default(),
            paused: c
                .paused_at
                .zip(c.paused_by)
                .map(|(at, by)| Paused { at, by }),
        })
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    pub async fn get(&self, who: &Principal, id: i64) -> Result<ClusterView, AppError> {
        require(who, Action::Read, "see clusters")?;
        let c = store::by_id(&self.pool, id)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("Cluster {id}")))?;
        self.view(c).await
    }
}

#[async_trait::async_trait]
impl streamkeeper_app::port::Watch for ClusterService {
    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn clusters(&self, who: &Principal) -> Result<Vec<ClusterView>, AppError> {
        require(who, Action::Read, "see clusters")?;
        let mut out = Vec::new();
        for c in store::all(&self.pool).await? {
            out.push(self.view(c).await?);
        }
        Ok(out)
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    async fn cluster(&self, who: &Principal, id: i64) -> Result<ClusterDetail, AppError> {
        let cluster = self.get(who, id).await?;
        let topics = self.topic_views(id).await?;
        Ok(ClusterDetail { cluster, topics })
    }

    /// A page of a cluster's groups with their last judgement (written by
    /// the evaluation after each pass, so a page of 10,000 groups is one
    /// indexed read).
    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    async fn groups(
        &self,
        who: &Principal,
        id: i64,
        filter: GroupFilter,
        page: PageRequest,
    ) -> Result<Page<GroupSummary>, AppError> {
        self.get(who, id).await?;
        let status = choice::<GroupStatus>(filter.status.as_deref())?;
        let order = Sorted::<GroupColumn>::parse(filter.sort.as_deref())?;
        let query = store::GroupQuery {
            q: filter.q.as_deref(),
            status: status.map(Choice::as_str),
            order,
        };
        let p = store::group_list(&self.pool, id, &query, page).await?;
        let names: Vec<String> = p.items.iter().map(|g| g.name.clone()).collect();
        let mut owners = ownership::groups(&self.pool, id, &names).await?;
        let items = p
            .items
            .into_iter()
            .map(|g| {
                let listing = Listing::of(g.gone_since);
                GroupSummary {
                    owner_reason: owned_because(owners.get(&g.name)),
                    owner: owners.remove(&g.name).flatten().map(|o| o.team.name),
                    name: g.name,
                    state: listing.state(&g.state, |t| t.to_rfc3339()),
                    members: g.members,
                    status: listing.status(g.status.as_deref().unwrap_or("PENDING")),
                    total_lag: listing.figure(g.total_lag.and_then(|l| u64::try_from(l).ok())),
                    max_time_lag_s: listing.figure(g.max_time_lag_s),
                    last_seen: g.last_seen,
                    gone_since: g.gone_since,
                    evaluated_at: g.evaluated_at,
                }
            })
            .collect();
        Ok(Page::new(items, page, p.total))
    }

    /// A group's lag per partition, each judged over the last passes.
    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    async fn group_lag(
        &self,
        who: &Principal,
        id: i64,
        group: &str,
    ) -> Result<GroupLagView, AppError> {
        let cluster = self.get(who, id).await?;
        let g = store::group(&self.pool, id, group)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("Consumer group {group}")))?;
        self.evaluate(&cluster, g, None).await
    }

    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn create_cluster(
        &self,
        who: &Principal,
        from: &str,
        new: NewCluster,
    ) -> Result<ClusterView, AppError> {
        self.create(who, from, new).await
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    async fn update_cluster(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        new: NewCluster,
        keep_credentials: bool,
    ) -> Result<ClusterView, AppError> {
        self.update(who, from, id, new, keep_credentials).await
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    async fn remove_cluster(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
    ) -> Result<RemovedCluster, AppError> {
        self.remove(who, from, id).await
    }

    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn removed_clusters(&self, who: &Principal) -> Result<Vec<RemovedCluster>, AppError> {
        require(who, Action::ManageClusters, "see removed clusters")?;
        Ok(store::removed(&self.pool)
            .await?
            .into_iter()
            .map(removed_view)
            .collect())
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    async fn restore_cluster(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
    ) -> Result<ClusterView, AppError> {
        self.restore(who, from, id).await
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    async fn pause_cluster(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        paused: bool,
    ) -> Result<ClusterView, AppError> {
        self.pause(who, from, id, paused).await
    }

    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn test_connection(
        &self,
        who: &Principal,
        new: NewCluster,
    ) -> Result<ConnectionReport, AppError> {
        self.try_connect(who, new).await
    }

    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn streams(
        &self,
        who: &Principal,
        filter: StreamFilter,
        page: PageRequest,
    ) -> Result<Page<StreamSummary>, AppError> {
        require(who, Action::Read, "see streams")?;
        let trouble =
            choice::<StreamStatus>(filter.status.as_deref())?.map(|s| s == StreamStatus::Trouble);
        let owner = filter
            .owner
            .as_deref()
            .map(str::trim)
            .filter(|o| !o.is_empty());
        let order = Sorted::<StreamColumn>::parse(filter.sort.as_deref())?;
        let p = store::stream_list(&self.pool, filter.q.as_deref(), owner, trouble, order, page)
            .await?;
        // Owners by the ownership rule, one read per cluster on the page.
        let mut named: BTreeMap<i64, Vec<String>> = BTreeMap::new();
        for r in &p.items {
            named.entry(r.cluster_id).or_default().push(r.topic.clone());
        }
        let mut owners = HashMap::new();
        for (cluster, topics) in named {
            for (topic, owner) in ownership::streams(&self.pool, cluster, &topics).await? {
                owners.insert((cluster, topic), owner);
            }
        }
        let items = p
            .items
            .into_iter()
            .map(|r| {
                let owner = owners
                    .remove(&(r.cluster_id, r.topic.clone()))
                    .flatten()
                    .map(|o| o.team.name);
                let last = last_message(
                    r.log_end_total,
                    r.last_message_at,
                    r.last_advanced_at,
                    r.first_seen,
                );
                StreamSummary {
                    cluster_id: r.cluster_id,
                    cluster: r.cluster,
                    topic: r.topic,
                    owner,
                    tier: r.tier,
                    partitions: r.partitions,
                    status: r.flag.unwrap_or_else(|| "OK".into()),
                    last_message_at: last
                        .at_ms()
                        .and_then(chrono::DateTime::from_timestamp_millis),
                    last_message: last,
                }
            })
            .collect();
        Ok(Page::new(items, page, p.total))
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    async fn stream(
        &self,
        who: &Principal,
        id: i64,
        topic: &str,
        hours: i64,
    ) -> Result<StreamDetail, AppError> {
        let cluster = self.get(who, id).await?;
        let t = self
            .streams(who, id)
            .await?
            .into_iter()
            .find(|t| t.name == topic)
            .ok_or_else(|| AppError::NotFound(format!("Stream {topic}")))?;
        let mut consumers = Vec::new();
        let readers = store::readers(&self.pool, id, topic).await?;
        let names: Vec<String> = readers.iter().map(|g| g.name.clone()).collect();
        let mut owners = ownership::groups(&self.pool, id, &names).await?;
        for g in readers {
            let name = g.name.clone();
            let owner_reason = owned_because(owners.get(&name));
            let owner = owners.remove(&name).flatten().map(|o| o.team.name);
            let listing = Listing::of(g.gone_since);
            let view = self.evaluate(&cluster, g, Some(topic)).await?;
            // Judged on this stream's partitions only.
            let mine: Vec<&PartitionLagView> = view
                .partitions
                .iter()
                .filter(|p| p.topic == topic)
                .collect();
            let status = mine
                .iter()
                .filter_map(|p| streamkeeper::watch::lag::status::Status::parse(&p.status))
                .max()
                .map_or("INCOMPLETE", |s| s.as_str());
            let status = listing.status(status);
            let lags: Vec<u64> = mine.iter().filter_map(|p| p.lag).collect();
            let series =
                streamkeeper_app::port::Watch::lag_series(self, who, id, &name, hours, None)
                    .await?;
            consumers.push(StreamConsumer {
                group: name,
                owner,
                owner_reason,
                status,
                gone_since: view.gone_since,
                lag: (!lags.is_empty()).then(|| lags.iter().sum()),
                max_time_lag_s: mine.iter().filter_map(|p| p.time_lag_s).reduce(f64::max),
                trend: view.trend.clone(),
                series,
            });
        }
        Ok(StreamDetail {
            cluster_id: id,
            cluster: cluster.name,
            cluster_state: cluster.state,
            cluster_paused: cluster.paused.clone(),
            data_age_s: cluster.data_age_s,
            topic: t,
            consumers,
            series_to: Utc::now(),
            series_hours: streamkeeper::watch::series::window_hours(hours),
            may_set_domain: who.has(Role::Admin),
        })
    }

    /// Describes a stream, as `streamkeeper::access::stewardship` allows:
    /// admins describe any; an owner describes a stream that is unowned or
    /// owned by one of their teams, for one of their teams, and leaves its
    /// domain and declared level as they are. Refusals are audited.
    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    async fn describe_stream(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        topic: &str,
        spec: StreamSpec,
    ) -> Result<TopicView, AppError> {
        require(who, Action::Read, "describe streams")?;
        check_spec(&spec)?;
        // A removed cluster's streams are gone with it.
        self.get(who, id).await?;
        let current = store::topics(&self.pool, id)
            .await?
            .into_iter()
            .find(|t| t.name == topic)
            .ok_or_else(|| AppError::NotFound(format!("Topic {topic}")))?;
        let owner = ownership::stream(&self.pool, id, topic).await?;
        let team_id = match spec.owner_team.as_deref() {
            Some(name) => Some(team_id(&self.pool, name).await?),
            None => None,
        };
        let mine = Facts::load(&self.pool, who).await?;
        let domain = spec.domain.trim();
        let compatibility = spec.compatibility.map(Mode::as_str);
        let now = StreamEntry {
            owner_team: rule::team_id(owner.as_ref()),
            domain: current.domain.as_deref().unwrap_or(""),
            compatibility: current.compatibility.as_deref(),
        };
        let wanted = StreamEntry {
            owner_team: team_id,
            domain,
            compatibility,
        };
        // The stream's row stays locked until the change commits, and a
        // proposal reads the domain under a share lock (review/propose.rs):
        // no item can open between counting the open ones and the move.
        let mut tx = begin(&self.pool).await?;
        store::lock_stream(&mut tx, id, topic).await?;
        let open = store::open_items_of_stream(&mut tx, id, topic).await?;
        if let Err(refusal) = may_describe(mine.steward(who), now, wanted, open) {
            let asked = (id, topic, now, wanted);
            return Err(self.refuse_describe(who, from, asked, refusal).await);
        }
        store::upsert_stream(
            &mut tx,
            id,
            topic,
            &store::StreamSpec {
                owner_team_id: team_id,
                domain,
                tier: spec.tier,
                freshness_budget_s: spec.freshness_budget_s,
                expected_interval_s: spec.expected_interval_s,
                description: spec.description.trim(),
                compatibility,
            },
        )
        .await?;
        audited(
            &mut tx,
            who,
            from,
            "stream.describe",
            format!("stream:{topic}"),
            json!({
                "cluster_id": id, "owner_team": spec.owner_team, "tier": spec.tier,
                "freshness_budget_s": spec.freshness_budget_s,
                "expected_interval_s": spec.expected_interval_s,
                "owner_team_before": owner.map(|o| o.team.name),
                "domain": { "before": now.domain, "after": domain },
                "compatibility": { "before": now.compatibility, "after": compatibility },
            }),
        )
        .await?;
        commit(tx).await?;
        self.streams(who, id)
            .await?
            .into_iter()
            .find(|t| t.name == topic)
            .ok_or_else(|| AppError::NotFound(format!("Topic {topic}")))
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    async fn lag_series(
        &self,
        who: &Principal,
        id: i64,
        group: &str,
        hours: i64,
        partition: Option<&PartitionRef>,
    ) -> Result<Vec<LagPoint>, AppError> {
        self.get(who, id).await?;
        let hours = streamkeeper::watch::series::window_hours(hours);
        let since = Utc::now() - chrono::Duration::hours(hours);
        // An hour is drawn pass by pass; a day from the minute rollups, a
        // week from the hour rollups. Either way a missing pass or bucket
        // is a gap, never a zero.
        let rollup = match hours {
            1 => None,
            2..=24 => Some(store::samples::Rollup::Minute),
            _ => Some(store::samples::Rollup::Hour),
        };
        let points: Vec<(i64, Option<i64>)> = match (partition, rollup) {
            (Some(p), rollup) => store::samples::partition_series(
                &self.pool,
                id,
                group,
                (&p.topic, p.partition),
                since,
                rollup,
            )
            .await?
            .into_iter()
            .map(|(at, lag)| (at.timestamp_millis(), lag))
            .collect(),
            (None, None) => store::samples::pass_series(&self.pool, id, group, since)
                .await?
                .into_iter()
                // A pass that read nothing, or had nothing for this group, is a gap.
                .map(|(at, outcome, total)| {
                    (
                        at.timestamp_millis(),
                        total.filter(|_| outcome != "UNREACHABLE"),
                    )
                })
                .collect(),
            (None, Some(r)) => store::samples::rollup_series(&self.pool, id, group, since, r)
                .await?
                .into_iter()
                .map(|(at, lag)| (at.timestamp_millis(), lag))
                .collect(),
        };
        let first_seen = store::samples::group_first_seen(&self.pool, id, group)
            .await?
            .map(|at| at.timestamp_millis());
        let points = streamkeeper::watch::series::since_first_seen(&points, first_seen);
        Ok(streamkeeper::watch::series::downsample(points, 400)
            .into_iter()
            .filter_map(|(ms, lag)| {
                chrono::DateTime::from_timestamp_millis(ms).map(|at| LagPoint { at, lag })
            })
            .collect())
    }
}

impl ClusterService {
    /// The catalog of a cluster: every topic seen, with its stream entry.
    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    pub async fn streams(&self, who: &Principal, id: i64) -> Result<Vec<TopicView>, AppError> {
        self.get(who, id).await?;
        self.topic_views(id).await
    }

    /// Every topic of cluster `id` with its owner by the ownership rule.
    async fn topic_views(&self, id: i64) -> Result<Vec<TopicView>, AppError> {
        let topics = store::topics(&self.pool, id).await?;
        let names: Vec<String> = topics.iter().map(|t| t.name.clone()).collect();
        let mut owners = ownership::streams(&self.pool, id, &names).await?;
        let mut slos = self.cluster_slos(id).await?;
        Ok(topics
            .into_iter()
            .map(|t| {
                let owner = owners.remove(&t.name).flatten().map(|o| o.team.name);
                let slo = slos.remove(&t.name);
                topic_view(t, owner, slo)
            })
            .collect())
    }
}

impl ClusterService {
    /// Audits a refused description of stream `topic` of cluster `id`
    /// (`now` as it stands, `wanted` as asked) and answers why, as the
    /// caller's error.
    async fn refuse_describe(
        &self,
        who: &Principal,
        from: &str,
        (id, topic, now, wanted): (i64, &str, StreamEntry<'_>, StreamEntry<'_>),
        refusal: DescribeRefusal,
    ) -> AppError {
        let target = format!("stream:{topic}");
        let detail = json!({
            "cluster_id": id, "refused": refusal.to_string(),
            "domain": { "now": now.domain, "asked": wanted.domain },
            "compatibility": { "now": now.compatibility, "asked": wanted.compatibility },
        });
        record_refusal(
            &self.pool,
            who,
            from,
            "stream.describe.refused",
            target,
            detail,
        )
        .await;
        match refusal {
            DescribeRefusal::NotSteward => AppError::Forbidden(refusal.to_string()),
            r if r.is_conflict() => AppError::Conflict(r.to_string()),
            r => AppError::Refused(r.to_string()),
        }
    }
}

/// A stream's description as asked: its tier 1 to 3, its budget and
/// interval positive.
fn check_spec(spec: &StreamSpec) -> Result<(), AppError> {
    if spec.tier.is_some_and(|t| !(1..=3).contains(&t)) {
        return Err(AppError::Invalid("The SLA tier is 1, 2 or 3.".into()));
    }
    if spec.freshness_budget_s.is_some_and(|b| b <= 0)
        || spec.expected_interval_s.is_some_and(|b| b <= 0)
    {
        return Err(AppError::Invalid(
            "Budgets and intervals are positive numbers of seconds.".into(),
        ));
    }
    Ok(())
}

/// Why a group (as `platform::ownership` answered for it) is owned, for
/// lists: "by stream orders", "claimed on …"; `None` when unowned.
fn owned_because(owner: Option<&Option<rule::Owner>>) -> Option<String> {
    owner?.as_ref().map(|o| o.reason.to_string())
}
