//! Watched clusters as users see them: their state and data age, and a
//! consumer group's lag evaluated over its recent window.

pub mod api;
pub mod cli;
pub mod cluster_file;
pub mod judge;
pub mod kept;
pub mod metrics;
pub mod routine;
pub mod store;

use crate::accounts::{require, team_id};
use crate::audit::{audited, record_refusal};
use crate::platform::authz::Facts;
use crate::platform::db::{begin, commit};
use crate::platform::errors::{self};
use crate::platform::ownership;
use crate::store::is_unique_violation;
use chrono::Utc;
use serde_json::json;
use sqlx::PgPool;
use std::collections::BTreeMap;
use store::samples::SampleRow;
use streamkeeper::access::ownership as rule;
use streamkeeper::access::stewardship::{DescribeRefusal, StreamEntry, may_claim, may_describe};
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::{Action, Role};
use streamkeeper::platform::credential::CredentialPolicy;
use streamkeeper::platform::page::{Choice, Page, PageRequest, choice};
use streamkeeper::platform::sort::Sorted;
use streamkeeper::schemas::Mode;
use streamkeeper::watch::cluster::{self, ClusterState, LastPass};
use streamkeeper::watch::health::LastMessage;
use streamkeeper::watch::lag::status::{Rules, group_status, partition_status, window_time_lag_s};
use streamkeeper::watch::list::{GroupColumn, GroupStatus, StreamColumn, StreamStatus};
use streamkeeper::watch::listing::Listing;
use streamkeeper::watch::observe::standings;
use streamkeeper::watch::reach::Unreachable;
use streamkeeper::watch::topic_name::topic_issue;
use streamkeeper::watch::window::{WINDOW_PASSES, Windows, by_group, judgeable};
use streamkeeper_app::error::AppError;
use streamkeeper_app::watch::model::{
    ClusterDetail, ClusterView, ConnectionReport, GroupFilter, GroupLagView, GroupSummary,
    LagPoint, NewCluster, PartitionLagView, PartitionRef, Paused, RemovedCluster, StreamConsumer,
    StreamDetail, StreamFilter, StreamSpec, StreamSummary, TopicView,
};

/// A cluster row from what an admin entered, blanks as absent, for
/// validation and connection tests before anything is stored.
fn probe_row(new: &NewCluster) -> store::ClusterRow {
    let some = |v: &Option<String>| {
        v.clone()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    store::ClusterRow {
        id: 0,
        name: new.name.trim().to_string(),
        bootstrap: new.bootstrap.trim().to_string(),
        security_protocol: new.security_protocol.trim().to_ascii_uppercase(),
        sasl_mechanism: some(&new.sasl_mechanism),
        username_ref: some(&new.username_ref),
        password_ref: some(&new.password_ref),
        ca_ref: some(&new.ca_ref),
        insecure_credentials: new.insecure_credentials,
        interval_s: new.interval_s,
        created_at: Utc::now(),
        paused_at: None,
        paused_by: None,
    }
}

fn removed_view(r: store::RemovedRow) -> RemovedCluster {
    RemovedCluster {
        purged_on: cluster::purged_on(r.removed_at),
        id: r.id,
        name: r.name,
        bootstrap: r.bootstrap,
        removed_at: r.removed_at,
        removed_by: r.removed_by,
    }
}

/// A topic's last message from what the catalog stored of it.
pub fn last_message(
    log_end_total: Option<i64>,
    record: Option<chrono::DateTime<Utc>>,
    advanced: Option<chrono::DateTime<Utc>>,
    first_seen: chrono::DateTime<Utc>,
) -> LastMessage {
    LastMessage::of(
        log_end_total,
        record.map(|r| r.timestamp_millis()),
        advanced.map(|a| a.timestamp_millis()),
        first_seen.timestamp_millis(),
    )
}

fn topic_view(t: store::TopicRow) -> TopicView {
    let last = last_message(
        t.log_end_total,
        t.last_message_at,
        t.last_advanced_at,
        t.first_seen,
    );
    TopicView {
        name: t.name,
        partitions: t.partitions,
        under_replicated: t.under_replicated,
        offline: t.offline,
        log_end_total: t.log_end_total,
        last_seen: t.last_seen,
        last_message_at: last
            .at_ms()
            .and_then(chrono::DateTime::from_timestamp_millis),
        last_message: last,
        owner: t.owner,
        domain: t.domain,
        tier: t.tier,
        freshness_budget_s: t.freshness_budget_s,
        expected_interval_s: t.expected_interval_s,
        description: t.description,
        compatibility: t.compatibility,
    }
}

/// A group's samples per partition over its window of passes.
pub async fn windows(
    pool: &PgPool,
    cluster_id: i64,
    group: &str,
) -> Result<Windows<SampleRow>, crate::platform::errors::Db> {
    let rows = store::samples::group_window(pool, cluster_id, group, WINDOW_PASSES).await?;
    Ok(by_group(rows).remove(group).unwrap_or_default())
}

/// Checks a cluster as entered and returns it as it would be stored:
/// name, interval, bootstrap, protocol, mechanism, and credentials as
/// references the policy allows, sent only over TLS unless the cluster is
/// marked insecure (resolving them waits for the first pass).
fn validate(new: &NewCluster, policy: &CredentialPolicy) -> Result<store::ClusterRow, AppError> {
    let name = streamkeeper::accounts::account::check_team_name(&new.name)
        .map_err(|e| AppError::Invalid(e.to_string().replace("team name", "cluster name")))?;
    if !(5..=3600).contains(&new.interval_s) {
        return Err(AppError::Invalid(
            "The sampling interval must be 5 to 3600 seconds.".into(),
        ));
    }
    let probe = store::ClusterRow {
        name,
        ..probe_row(new)
    };
    crate::watch::routine::settings_of(&probe, policy).map_err(AppError::Invalid)?;
    Ok(probe)
}

/// An audit entry's detail: `base` with the cluster's credential
/// references (never what they resolve to), the fields among them that
/// changed (for a new cluster, those set), and what those were before.
fn with_credentials(
    mut base: serde_json::Value,
    old: Option<&store::ClusterRow>,
    new: &store::ClusterRow,
) -> serde_json::Value {
    let refs = |c: &store::ClusterRow| {
        json!({
            "username_ref": c.username_ref,
            "password_ref": c.password_ref,
            "insecure_credentials": c.insecure_credentials,
        })
    };
    let (now, was) = (refs(new), old.map(refs));
    let changed: Vec<&str> = ["username_ref", "password_ref", "insecure_credentials"]
        .into_iter()
        .filter(|k| match &was {
            Some(w) => w[k] != now[k],
            None => !now[k].is_null() && now[k] != json!(false),
        })
        .collect();
    if let (Some(b), serde_json::Value::Object(n)) = (base.as_object_mut(), now) {
        b.extend(n);
        if let Some(w) = was.filter(|_| !changed.is_empty()) {
            b.insert("credentials_were".into(), w);
        }
        b.insert("credentials_changed".into(), json!(changed));
    }
    base
}

/// What an audit entry says of a cluster's connection (its credentials go
/// through `with_credentials`).
fn connection_of(c: &store::ClusterRow) -> serde_json::Value {
    json!({
        "bootstrap": c.bootstrap,
        "security_protocol": c.security_protocol,
        "ca_ref": c.ca_ref,
        "interval_s": c.interval_s,
    })
}

/// A cluster's name for an audit target, however long it was entered.
fn target_of(name: &str) -> String {
    format!(
        "cluster:{}",
        name.trim().chars().take(100).collect::<String>()
    )
}

fn stored(c: &store::ClusterRow) -> store::NewCluster<'_> {
    store::NewCluster {
        name: &c.name,
        bootstrap: &c.bootstrap,
        security_protocol: &c.security_protocol,
        sasl_mechanism: c.sasl_mechanism.as_deref(),
        username_ref: c.username_ref.as_deref(),
        password_ref: c.password_ref.as_deref(),
        ca_ref: c.ca_ref.as_deref(),
        insecure_credentials: c.insecure_credentials,
        interval_s: c.interval_s,
    }
}

fn same_settings(a: &store::ClusterRow, b: &store::ClusterRow) -> bool {
    (
        &a.bootstrap,
        &a.security_protocol,
        &a.sasl_mechanism,
        &a.username_ref,
        &a.password_ref,
        &a.ca_ref,
        a.insecure_credentials,
        a.interval_s,
    ) == (
        &b.bootstrap,
        &b.security_protocol,
        &b.sasl_mechanism,
        &b.username_ref,
        &b.password_ref,
        &b.ca_ref,
        b.insecure_credentials,
        b.interval_s,
    )
}

/// What applying a clusters file did (or, in a dry run, would do).
#[derive(Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ApplyReport {
    pub created: Vec<String>,
    pub updated: Vec<String>,
    pub unchanged: Vec<String>,
    /// Clusters in the console the file does not name: left alone.
    pub not_in_file: Vec<String>,
}

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

    /// Makes the clusters named in a clusters file match it, in one
    /// transaction: every entry is validated before anything changes, so a
    /// bad file changes nothing. Clusters not in the file are left alone
    /// and listed. With `dry_run`, says what would change.
    #[tracing::instrument(skip_all, fields(user = %who.username))]
    pub async fn apply(
        &self,
        who: &Principal,
        from: &str,
        entries: Vec<NewCluster>,
        dry_run: bool,
    ) -> Result<ApplyReport, AppError> {
        require(who, Action::ManageClusters, "apply a clusters file")?;
        let wanted = entries
            .iter()
            .map(|e| {
                validate(e, &self.credentials).map_err(|err| match err {
                    AppError::Invalid(m) => {
                        (e, AppError::Invalid(format!("Cluster {:?}: {m}", e.name)))
                    }
                    other => (e, other),
                })
            })
            .collect::<Result<Vec<_>, _>>();
        let wanted = match wanted {
            Ok(w) => w,
            Err((entry, e)) => {
                let why = e.to_string();
                let target = target_of(&entry.name);
                record_refusal(
                    &self.pool,
                    who,
                    from,
                    "cluster.apply.refused",
                    target,
                    json!({ "refused": why }),
                )
                .await;
                return Err(e);
            }
        };
        let existing: BTreeMap<String, store::ClusterRow> = store::all(&self.pool)
            .await?
            .into_iter()
            .map(|c| (c.name.clone(), c))
            .collect();
        let mut report = ApplyReport::default();
        let mut tx = begin(&self.pool).await?;
        for w in &wanted {
            let (action, old, row) = match existing.get(&w.name) {
                Some(old) if same_settings(old, w) => {
                    report.unchanged.push(w.name.clone());
                    continue;
                }
                Some(old) => {
                    report.updated.push(w.name.clone());
                    if dry_run {
                        continue;
                    }
                    let row = store::update(&mut tx, old.id, &stored(w)).await?;
                    ("cluster.update", Some(old), row)
                }
                None => {
                    report.created.push(w.name.clone());
                    if dry_run {
                        continue;
                    }
                    let row = store::insert(&mut tx, &stored(w)).await?;
                    ("cluster.create", None, row)
                }
            };
            audited(
                &mut tx,
                who,
                from,
                action,
                format!("cluster:{}", row.name),
                with_credentials(
                    {
                        let mut d = connection_of(&row);
                        d["source"] = json!("clusters file");
                        d
                    },
                    old,
                    &row,
                ),
            )
            .await?;
        }
        commit(tx).await?;
        report.not_in_file = existing
            .into_keys()
            .filter(|n| !wanted.iter().any(|w| &w.name == n))
            .collect();
        Ok(report)
    }

    /// Sets each named cluster's lineage topic as a clusters file says
    /// (absent: the Kafka transport off), audited per change; clusters not
    /// named are left alone. A bad topic name changes nothing. Returns the
    /// clusters changed (that would change, with `dry_run`).
    #[tracing::instrument(skip_all, fields(user = %who.username))]
    pub async fn set_lineage_topics(
        &self,
        who: &Principal,
        from: &str,
        wanted: Vec<(String, Option<String>)>,
        dry_run: bool,
    ) -> Result<Vec<String>, AppError> {
        require(who, Action::ManageClusters, "apply a clusters file")?;
        for (name, topic) in &wanted {
            if let Some(t) = topic
                && let Some(why) = topic_issue(t)
            {
                let e = AppError::Invalid(format!(
                    "Cluster {name:?}: the lineage topic {t:?} is not a Kafka topic name: {why}"
                ));
                record_refusal(
                    &self.pool,
                    who,
                    from,
                    "cluster.apply.refused",
                    target_of(name),
                    json!({ "refused": e.to_string() }),
                )
                .await;
                return Err(e);
            }
        }
        let existing = store::lineage_topics(&self.pool).await?;
        let mut changed = Vec::new();
        let mut tx = begin(&self.pool).await?;
        for (name, topic) in wanted {
            let Some((id, old)) = existing.get(&name) else {
                continue;
            };
            if *old == topic {
                continue;
            }
            changed.push(name.clone());
            if dry_run {
                continue;
            }
            store::set_lineage_topic(&mut tx, *id, topic.as_deref()).await?;
            audited(
                &mut tx,
                who,
                from,
                "cluster.lineage_topic",
                format!("cluster:{name}"),
                json!({ "from": old, "to": topic, "group": "streamkeeper-lineage" }),
            )
            .await?;
        }
        commit(tx).await?;
        Ok(changed)
    }

    /// Sets one cluster's lineage topic (`None`: the Kafka transport off),
    /// admin only, with the clusters file's validation (a bad name is
    /// refused and audited as one), audited. Returns whether it changed.
    #[tracing::instrument(skip_all, fields(user = %who.username))]
    pub async fn set_lineage_topic(
        &self,
        who: &Principal,
        from: &str,
        cluster_id: i64,
        topic: Option<&str>,
    ) -> Result<bool, AppError> {
        // A refusal is a 403, audited by the web layer like every refused write.
        require(who, Action::ManageClusters, "set a cluster's lineage topic")?;
        let existing = store::lineage_topics(&self.pool).await?;
        let Some(name) = existing
            .iter()
            .find(|(_, (id, _))| *id == cluster_id)
            .map(|(name, _)| name.clone())
        else {
            return Err(AppError::NotFound(format!("Cluster {cluster_id}")));
        };
        let topic = topic.map(str::trim).filter(|t| !t.is_empty());
        let changed = self
            .set_lineage_topics(who, from, vec![(name, topic.map(str::to_owned))], false)
            .await?;
        Ok(!changed.is_empty())
    }

    /// Judges each partition of a group over its window of passes.
    async fn evaluate(
        &self,
        cluster: &ClusterView,
        g: store::GroupRow,
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
        let mut as_of = None;
        for ((topic, partition), samples) in by_partition {
            let window = judgeable(&samples);
            let newest = samples.last();
            as_of = as_of.max(newest.map(|s| s.at));
            let standing = known.get(&(topic.clone(), partition)).copied();
            let verdict = partition_status(&window, has_members, &rules, standing);
            let time_lag_s = window_time_lag_s(&window);
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
            });
            verdicts.push(verdict);
        }
        Ok(GroupLagView {
            cluster: cluster.name.clone(),
            group: g.name.clone(),
            state: listing.state(&g.state, |t| t.to_rfc3339()),
            members: g.members,
            status: listing.status(group_status(&verdicts).as_str()),
            as_of,
            cluster_state: cluster.state,
            cluster_paused: cluster.paused.clone(),
            gone_since: g.gone_since,
            partitions,
        })
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
        let topics = store::topics(&self.pool, id)
            .await?
            .into_iter()
            .map(topic_view)
            .collect();
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
        self.evaluate(&cluster, g).await
    }

    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn create_cluster(
        &self,
        who: &Principal,
        from: &str,
        new: NewCluster,
    ) -> Result<ClusterView, AppError> {
        require(who, Action::ManageClusters, "add clusters")?;
        let probe = match validate(&new, &self.credentials) {
            Ok(p) => p,
            Err(e) => {
                let why = e.to_string();
                let target = target_of(&new.name);
                record_refusal(
                    &self.pool,
                    who,
                    from,
                    "cluster.create.refused",
                    target,
                    json!({ "refused": why }),
                )
                .await;
                return Err(e);
            }
        };
        let name = probe.name.clone();
        let mut tx = begin(&self.pool).await?;
        let row = store::insert(&mut tx, &stored(&probe)).await.map_err(|e| {
            if is_unique_violation(&e) {
                AppError::Conflict(format!("A cluster named {name} already exists."))
            } else {
                e.into()
            }
        })?;
        audited(
            &mut tx,
            who,
            from,
            "cluster.create",
            format!("cluster:{name}"),
            with_credentials(connection_of(&row), None, &row),
        )
        .await?;
        commit(tx).await?;
        self.view(row).await
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    async fn update_cluster(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        mut new: NewCluster,
        keep_credentials: bool,
    ) -> Result<ClusterView, AppError> {
        require(who, Action::ManageClusters, "change clusters")?;
        let old = store::by_id(&self.pool, id)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("Cluster {id}")))?;
        // The name is how the clusters file, the CLI and every audit entry
        // know the cluster: it stays.
        new.name = old.name.clone();
        if keep_credentials {
            new.username_ref = old.username_ref.clone();
            new.password_ref = old.password_ref.clone();
            new.insecure_credentials = old.insecure_credentials;
        }
        // The forms do not show the CA reference either: blank keeps it.
        if new.ca_ref.as_deref().is_none_or(|r| r.trim().is_empty()) {
            new.ca_ref = old.ca_ref.clone();
        }
        let probe = match validate(&new, &self.credentials) {
            Ok(p) => p,
            Err(e) => {
                record_refusal(
                    &self.pool,
                    who,
                    from,
                    "cluster.update.refused",
                    target_of(&old.name),
                    json!({ "refused": e.to_string() }),
                )
                .await;
                return Err(e);
            }
        };
        if same_settings(&old, &probe) {
            return self.view(old).await;
        }
        let mut tx = begin(&self.pool).await?;
        let row = store::update(&mut tx, id, &stored(&probe)).await?;
        audited(
            &mut tx,
            who,
            from,
            "cluster.update",
            format!("cluster:{}", row.name),
            with_credentials(
                {
                    let mut d = connection_of(&row);
                    d["was"] = connection_of(&old);
                    d
                },
                Some(&old),
                &row,
            ),
        )
        .await?;
        commit(tx).await?;
        self.view(row).await
    }

    /// Soft: the cluster is no longer watched and is gone from every list
    /// and page, but its history stays until housekeeping purges it
    /// ([`cluster::HISTORY_DAYS`] on); the audit entry says when.
    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    async fn remove_cluster(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
    ) -> Result<RemovedCluster, AppError> {
        require(who, Action::ManageClusters, "remove clusters")?;
        let old = store::by_id(&self.pool, id)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("Cluster {id}")))?;
        let mut tx = begin(&self.pool).await?;
        // Removed meanwhile by someone else: gone, as for a second remove.
        let removed_at = store::remove(&mut tx, id, &who.username)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("Cluster {id}")))?;
        let purged_on = cluster::purged_on(removed_at);
        audited(
            &mut tx,
            who,
            from,
            "cluster.remove",
            format!("cluster:{}", old.name),
            {
                let mut d = connection_of(&old);
                d["id"] = json!(id);
                d["history_kept_until"] = json!(purged_on);
                d
            },
        )
        .await?;
        commit(tx).await?;
        Ok(RemovedCluster {
            id,
            name: old.name,
            bootstrap: old.bootstrap,
            removed_at,
            removed_by: who.username.clone(),
            purged_on,
        })
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

    /// Watched again from the routines' next look at the clusters; its lag
    /// windows start with its next pass (`store::restore`).
    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    async fn restore_cluster(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
    ) -> Result<ClusterView, AppError> {
        require(who, Action::ManageClusters, "restore clusters")?;
        let old = store::removed_by_id(&self.pool, id)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("Removed cluster {id}")))?;
        let mut tx = begin(&self.pool).await?;
        let restored = match store::restore(&mut tx, id).await {
            Ok(r) => r,
            Err(e) if is_unique_violation(&e) => {
                drop(tx);
                let e = AppError::Conflict(format!(
                    "A watched cluster is named {} now: remove or rename it first.",
                    old.name
                ));
                record_refusal(
                    &self.pool,
                    who,
                    from,
                    "cluster.restore.refused",
                    target_of(&old.name),
                    json!({ "id": id, "refused": e.to_string() }),
                )
                .await;
                return Err(e);
            }
            Err(e) => return Err(e.into()),
        };
        if !restored {
            return Err(AppError::NotFound(format!("Removed cluster {id}")));
        }
        audited(
            &mut tx,
            who,
            from,
            "cluster.restore",
            format!("cluster:{}", old.name),
            json!({ "id": id, "removed_at": old.removed_at, "removed_by": old.removed_by }),
        )
        .await?;
        commit(tx).await?;
        self.get(who, id).await
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    async fn pause_cluster(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        paused: bool,
    ) -> Result<ClusterView, AppError> {
        let verb = if paused { "pause" } else { "resume" };
        require(who, Action::ManageClusters, &format!("{verb} clusters"))?;
        let old = store::by_id(&self.pool, id)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("Cluster {id}")))?;
        let mut tx = begin(&self.pool).await?;
        let by = paused.then_some(who.username.as_str());
        // Asking for the state it is already in changes and audits nothing.
        if store::set_paused(&mut tx, id, by).await? {
            audited(
                &mut tx,
                who,
                from,
                &format!("cluster.{verb}"),
                format!("cluster:{}", old.name),
                serde_json::json!({}),
            )
            .await?;
        }
        commit(tx).await?;
        self.get(who, id).await
    }

    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn test_connection(
        &self,
        who: &Principal,
        new: NewCluster,
    ) -> Result<ConnectionReport, AppError> {
        require(who, Action::ManageClusters, "test cluster connections")?;
        let row = probe_row(&new);
        let mut settings = crate::watch::routine::settings_of(&row, &self.credentials)
            .map_err(AppError::Invalid)?;
        settings.timeout =
            std::time::Duration::from_secs(streamkeeper::watch::reach::TEST_TIMEOUT_S);
        let diagnosed = settings.clone();
        let started = Utc::now();
        // One metadata request first: when it fails, librdkafka's reasons
        // on the way say why (the read's own error says only that it did).
        let read = tokio::task::spawn_blocking(move || {
            crate::clients::kafka::probe::attempt(&settings).map(|()| {
                crate::clients::kafka::reader::read(
                    &settings,
                    &Default::default(),
                    &Default::default(),
                )
            })
        })
        .await
        .map_err(|e| errors::internal("the lag reader's task", e))?;
        let took_ms = (Utc::now() - started).num_milliseconds();
        let failed = |why: Option<Unreachable>, problems: Vec<String>| ConnectionReport {
            reachable: false,
            brokers: 0,
            topics: 0,
            partitions: 0,
            partitions_with_offsets: 0,
            groups: 0,
            groups_with_offsets: 0,
            took_ms,
            unreachable: why,
            problems,
        };
        Ok(match read {
            Err(reasons) => {
                let (why, sentence) =
                    crate::clients::kafka::probe::explain(&diagnosed, &reasons).await;
                let mut problems = vec![sentence];
                problems.extend(reasons);
                failed(Some(why), problems)
            }
            Ok(Err(e)) => failed(None, vec![e.to_string()]),
            Ok(Ok(r)) => {
                let parts = r.topics.iter().flat_map(|t| &t.partitions);
                ConnectionReport {
                    reachable: true,
                    brokers: r.brokers,
                    topics: r.topics.len(),
                    partitions: parts.clone().count(),
                    partitions_with_offsets: parts.filter(|p| p.log_end.is_some()).count(),
                    groups: r.groups.len(),
                    groups_with_offsets: r.groups.iter().filter(|g| g.error.is_none()).count(),
                    took_ms,
                    unreachable: None,
                    problems: r.problems,
                }
            }
        })
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
        let items = p
            .items
            .into_iter()
            .map(|r| {
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
                    owner: r.owner,
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
            let view = self.evaluate(&cluster, g).await?;
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
        // A removed cluster's streams are gone with it.
        self.get(who, id).await?;
        let current = store::topics(&self.pool, id)
            .await?
            .into_iter()
            .find(|t| t.name == topic)
            .ok_or_else(|| AppError::NotFound(format!("Topic {topic}")))?;
        let team_id = match spec.owner_team.as_deref() {
            Some(name) => Some(team_id(&self.pool, name).await?),
            None => None,
        };
        let mine = Facts::load(&self.pool, who).await?;
        let domain = spec.domain.trim();
        let compatibility = spec.compatibility.map(Mode::as_str);
        let now = StreamEntry {
            owner_team: current.owner_team_id,
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
            let target = format!("stream:{topic}");
            let detail = json!({
                "cluster_id": id, "refused": refusal.to_string(),
                "domain": { "now": now.domain, "asked": domain },
                "compatibility": { "now": now.compatibility, "asked": compatibility },
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
            return Err(match refusal {
                DescribeRefusal::NotSteward => AppError::Forbidden(refusal.to_string()),
                r if r.is_conflict() => AppError::Conflict(r.to_string()),
                r => AppError::Refused(r.to_string()),
            });
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
                "owner_team_before": current.owner,
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

impl ClusterService {
    /// The catalog of a cluster: every topic seen, with its stream entry.
    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    pub async fn streams(&self, who: &Principal, id: i64) -> Result<Vec<TopicView>, AppError> {
        self.get(who, id).await?;
        Ok(store::topics(&self.pool, id)
            .await?
            .into_iter()
            .map(topic_view)
            .collect())
    }
}

/// Why a group (as `platform::ownership` answered for it) is owned, for
/// lists: "by stream orders", "claimed on …"; `None` when unowned.
fn owned_because(owner: Option<&Option<rule::Owner>>) -> Option<String> {
    owner?.as_ref().map(|o| o.reason.to_string())
}
