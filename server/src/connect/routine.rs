//! The status routine: for each Kafka cluster, every Connect cluster whose
//! interval is up (default 30 s) is read with one request
//! (`GET /connectors?expand=status&expand=info`), read-only (and, once a
//! day per plugin class, the plugin's validate, which changes nothing, to
//! learn which keys it types PASSWORD: `password_keys`). Each
//! connector's and task's state is stored, with a history row when it
//! changed; a FAILED connector or task raises a flag to the connector's
//! owner with the trace as its receipt, resolved when it runs again; one
//! UNASSIGNED longer than two passes is flagged. A worker that cannot be
//! read is a gap: the run fails, its error is kept, and no state is
//! written (nothing is resolved on the strength of a pass that saw nothing).
//!
//! At the *autonomous* level of a connector's domain, its failed instances
//! are restarted (`POST …/restart?includeTasks=true&onlyFailed=true`) with
//! the backoff of `streamkeeper::connect::restart` (1, 2, 4 … 60 minutes,
//! five a day), each restart audited and told to the owner on the flag and
//! through its webhook. Below that level nothing is restarted: the flag
//! carries the exact request, and approvers may review a restart item.

use super::store::{self, ConnectRow, SeenConnector, SeenTask};
use crate::clients::egress::Outbound;
use crate::flags::lifecycle::{self, FlagSource, Route};
use crate::platform::db::{begin, commit};
use crate::platform::errors::Db;
use crate::platform::ownership;
use crate::platform::routine::{
    Lease, Outcome, Record, Routine, RunError, RunResult, Scope, Spec, Target,
};
use crate::watch::store::ClusterRow;
use async_trait::async_trait;
use serde_json::json;
use sqlx::PgPool;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;
use streamkeeper::connect::canonical::config_hash;
use streamkeeper::connect::draft::governing_domain;
use streamkeeper::connect::lineage::lineage;
use streamkeeper::connect::restart::{Decision, MAX_PER_DAY, decide, wait_minutes};
use streamkeeper::connect::status::{
    ConnectorSeen, InstanceSeen, SUBJECT_KIND, observe, scrub_trace, unassigned_passes,
};
use streamkeeper::connect::{Config, secret};
use streamkeeper::flags::{FlagKey, Observation};
use tokio_util::sync::CancellationToken;

/// How often the routine looks for Connect clusters that are due.
const TICK: Duration = Duration::from_secs(5);

pub struct Status {
    pool: PgPool,
    outbound: Outbound,
}

impl Status {
    pub fn new(pool: PgPool, outbound: Outbound) -> Self {
        Self { pool, outbound }
    }
}

#[async_trait]
impl Routine for Status {
    fn spec(&self) -> Spec {
        Spec {
            name: "connect-status",
            scope: Scope::PerCluster,
            lease: Lease::Exclusive,
            // It looks every few seconds and reads each worker every interval.
            record: Record::WhenWorked,
            every: TICK,
        }
    }

    async fn run(&self, target: Target, _: &CancellationToken) -> RunResult {
        let Some(id) = target.cluster_id() else {
            return Ok(Outcome::Idle);
        };
        let due = store::due(&self.pool, id).await?;
        if due.is_empty() {
            return Ok(Outcome::Idle);
        }
        let Some(cluster) = crate::watch::store::by_id(&self.pool, id).await? else {
            return Ok(Outcome::Idle);
        };
        let mut read = Vec::new();
        let mut gaps = Vec::new();
        for connect in &due {
            match pass(&self.pool, &self.outbound, &cluster, connect).await {
                Ok(r) => read.push(json!({"connect": connect.name, "connectors": r.connectors, "flagged": r.flagged})),
                Err(PassError::Gap(why)) => gaps.push(format!("{}: {why}", connect.name)),
                Err(PassError::Db(e)) => return Err(e.into()),
            }
        }
        if gaps.is_empty() {
            Ok(Outcome::Done(json!({ "read": read })))
        } else {
            Err(RunError::Failed(format!(
                "Kafka Connect could not be read (a gap: states are as of the last pass that read it): {}",
                gaps.join("; ")
            )))
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PassError {
    /// The worker could not be read; recorded on the Connect cluster.
    #[error("{0}")]
    Gap(String),
    #[error(transparent)]
    Db(#[from] Db),
}

#[derive(Debug, Clone, Copy, Default)]
pub struct PassReport {
    pub connectors: usize,
    /// Connectors with trouble after this pass.
    pub flagged: usize,
}

/// The Kafka topics among a connector's datasets, read from its config in
/// clear (the lineage names no credential); patterns are left out.
pub fn topics_of(config: &Config, bootstrap: &str) -> Vec<String> {
    let Ok(l) = lineage(config, bootstrap) else {
        return Vec::new();
    };
    let topics: BTreeSet<String> = l
        .inputs
        .iter()
        .chain(l.outputs.iter())
        .filter(|d| d.namespace.starts_with("kafka://") && !d.pattern)
        .map(|d| d.name.clone())
        .collect();
    topics.into_iter().collect()
}

fn restart_url(connect: &ConnectRow, name: &str) -> String {
    let Ok(mut url) = url::Url::parse(&connect.url) else {
        return String::new();
    };
    if let Ok(mut path) = url.path_segments_mut() {
        path.pop_if_empty().extend(["connectors", name, "restart"]);
    }
    url.set_query(Some("includeTasks=true&onlyFailed=true"));
    url.to_string()
}

fn count(n: i32) -> u32 {
    u32::try_from(n).unwrap_or(0)
}

/// One pass over one Connect cluster.
pub async fn pass(
    pool: &PgPool,
    outbound: &Outbound,
    cluster: &ClusterRow,
    connect: &ConnectRow,
) -> Result<PassReport, PassError> {
    let client = match super::client(connect, outbound) {
        Ok(c) => c,
        Err(why) => {
            store::pass_failed(pool, connect.id, &why).await?;
            return Err(PassError::Gap(why));
        }
    };
    let listing = match client.connectors_expanded(true, true).await {
        Ok(l) => l,
        Err(e) => {
            // Worded for everyone: the run's record and the settings page show it.
            let why = e.for_viewer(false);
            store::pass_failed(pool, connect.id, &why).await?;
            return Err(PassError::Gap(why));
        }
    };
    let before = store::current(pool, connect.id).await?;
    let ids: Vec<i64> = before.iter().map(|c| c.id).collect();
    let before_tasks = store::tasks(pool, &ids).await?;
    let by_name: HashMap<&str, &store::ConnectorRow> =
        before.iter().map(|c| (c.name.as_str(), c)).collect();
    let task_before: HashMap<(i64, i32), &store::TaskRow> = before_tasks
        .iter()
        .map(|t| ((t.connector_id, t.task), t))
        .collect();
    let marked_by_class =
        super::password_keys::marked_by_class(pool, &client, connect.id, &listing).await?;
    let none = BTreeSet::new();
    let mut rows = Vec::with_capacity(listing.len());
    let mut seen = Vec::with_capacity(listing.len());
    for (name, entry) in &listing {
        // Created or deleted mid-listing: not read this time, not gone either.
        let (Some(status), Some(info)) = (&entry.status, &entry.info) else {
            continue;
        };
        let plain: Config = info.config.0.iter().collect();
        let marked = plain
            .get(streamkeeper::connect::config::CLASS)
            .and_then(|c| marked_by_class.get(c))
            .unwrap_or(&none);
        let scrub = |t: &Option<String>| t.as_deref().map(|t| scrub_trace(t, &plain, marked));
        let prev = by_name.get(name.as_str()).copied();
        let state = status.connector.state.as_str().to_owned();
        let trace = scrub(&status.connector.trace);
        let passes = unassigned_passes(prev.map_or(0, |p| count(p.unassigned_passes)), &state);
        let changed = prev.is_none_or(|p| p.state != state || p.trace != trace);
        let mut tasks = Vec::with_capacity(status.tasks.len());
        let mut task_seen = Vec::with_capacity(status.tasks.len());
        for t in &status.tasks {
            let task = i32::try_from(t.id).unwrap_or(i32::MAX);
            let tprev = prev.and_then(|p| task_before.get(&(p.id, task)).copied());
            let tstate = t.state.as_str().to_owned();
            let ttrace = scrub(&t.trace);
            let tpasses =
                unassigned_passes(tprev.map_or(0, |p| count(p.unassigned_passes)), &tstate);
            task_seen.push(InstanceSeen {
                task: Some(t.id),
                state: tstate.clone(),
                trace: ttrace.clone(),
                unassigned_passes: tpasses,
            });
            tasks.push(SeenTask {
                task,
                changed: tprev.is_none_or(|p| p.state != tstate || p.trace != ttrace),
                state: tstate,
                worker_id: t.worker_id.clone(),
                trace: ttrace,
                unassigned_passes: i32::try_from(tpasses).unwrap_or(i32::MAX),
            });
        }
        seen.push(ConnectorSeen {
            connect: connect.name.clone(),
            name: name.clone(),
            connector: InstanceSeen {
                task: None,
                state: state.clone(),
                trace: trace.clone(),
                unassigned_passes: passes,
            },
            tasks: task_seen,
        });
        rows.push(SeenConnector {
            name: name.clone(),
            class: plain
                .get(streamkeeper::connect::config::CLASS)
                .map(str::to_owned),
            kind: format!("{:?}", status.kind).to_ascii_lowercase(),
            state,
            worker_id: status.connector.worker_id.clone(),
            trace,
            config: secret::mask(&plain, marked).to_json(),
            config_hash: config_hash(&plain, marked),
            topics: topics_of(&plain, &cluster.bootstrap),
            unassigned_passes: i32::try_from(passes).unwrap_or(i32::MAX),
            tasks,
            changed,
        });
    }
    let listed: Vec<String> = listing.keys().cloned().collect();
    let mut tx = begin(pool).await?;
    store::write_pass(&mut tx, connect.id, &rows, &listed).await?;
    commit(tx).await?;
    let restarts = restart_failed(pool, &client, connect, &seen).await?;
    let flagged = reconcile(pool, cluster, connect, &seen, &listed, &restarts).await?;
    Ok(PassReport {
        connectors: rows.len(),
        flagged,
    })
}

/// What the routine did about a failed connector this pass, for its flag.
struct AutoRestart {
    /// Restarted now (and how that went), or why not.
    restarted: bool,
    sentence: String,
    evidence: serde_json::Value,
}

/// Whether the connector's domain is at the *autonomous* level.
async fn autonomous(pool: &PgPool, connector_id: i64, name: &str) -> Result<bool, Db> {
    let streams = store::stream_domains(pool, connector_id).await?;
    let pairs: Vec<(String, String)> = streams
        .iter()
        .map(|(t, d, _)| (t.clone(), d.clone()))
        .collect();
    let Ok((_, domain)) = governing_domain(name, &pairs) else {
        return Ok(false);
    };
    Ok(streams
        .iter()
        .any(|(_, d, level)| *d == domain && level.as_deref() == Some("autonomous")))
}

/// Restarts the failed instances of connectors in autonomous domains when
/// their backoff allows, audited; returns what was done per connector.
async fn restart_failed(
    pool: &PgPool,
    client: &crate::clients::connect::ConnectClient,
    connect: &ConnectRow,
    seen: &[ConnectorSeen],
) -> Result<BTreeMap<String, AutoRestart>, Db> {
    let mut done = BTreeMap::new();
    let failing: Vec<&ConnectorSeen> = seen
        .iter()
        .filter(|s| s.connector.state == "FAILED" || s.tasks.iter().any(|t| t.state == "FAILED"))
        .collect();
    if failing.is_empty() {
        return Ok(done);
    }
    let ids: HashMap<String, i64> = store::current(pool, connect.id)
        .await?
        .into_iter()
        .map(|c| (c.name, c.id))
        .collect();
    let now = chrono::Utc::now();
    for s in failing {
        let Some(&id) = ids.get(&s.name) else {
            continue;
        };
        if !autonomous(pool, id, &s.name).await? {
            continue;
        }
        let earlier = store::restarts_since(pool, id, now - chrono::Duration::days(1)).await?;
        let earlier_ms: Vec<i64> = earlier.iter().map(|t| t.timestamp_millis()).collect();
        let tasks: Vec<i32> = s
            .tasks
            .iter()
            .filter(|t| t.state == "FAILED")
            .filter_map(|t| t.task.and_then(|n| i32::try_from(n).ok()))
            .collect();
        let outcome = match decide(&earlier_ms, now.timestamp_millis()) {
            Decision::WaitUntil(ms) => {
                let at = chrono::DateTime::from_timestamp_millis(ms).unwrap_or(now);
                AutoRestart {
                    restarted: false,
                    sentence: format!(
                        "Streamkeeper restarts it again at {} (backoff after {} restart(s) today).",
                        at.format("%H:%M UTC"),
                        earlier.len()
                    ),
                    evidence: json!({ "next_at": at, "today": earlier.len() }),
                }
            }
            Decision::DailyCapReached => AutoRestart {
                restarted: false,
                sentence: format!(
                    "Streamkeeper restarted it {MAX_PER_DAY} times in 24 hours and stops trying: it needs a person."
                ),
                evidence: json!({ "capped": true, "today": earlier.len() }),
            },
            Decision::Restart => {
                let options = crate::clients::connect::RestartOptions {
                    include_tasks: true,
                    only_failed: true,
                };
                let n = earlier.len() + 1;
                let (ok, what) = match client.restart(&s.name, options).await {
                    Ok(_) => (true, "restarted".to_owned()),
                    Err(e) => (
                        false,
                        format!("the restart failed: {}", e.for_viewer(false)),
                    ),
                };
                let mut tx = begin(pool).await?;
                store::insert_restart(&mut tx, id, &tasks, &what).await?;
                let detail = json!({ "tasks": tasks, "try": n, "of": MAX_PER_DAY,
                                     "outcome": what, "next_wait_min": wait_minutes(n) });
                crate::audit::store::append(
                    &mut tx,
                    crate::audit::store::Event {
                        actor: "streamkeeper",
                        action: "connector.restart",
                        target: format!("connector:{}/{}", connect.name, s.name),
                        detail: detail.clone(),
                        source: "connect-status",
                    },
                )
                .await?;
                commit(tx).await?;
                tracing::info!(connect = %connect.name, connector = %s.name, try_ = n, ok, "connector restarted");
                AutoRestart {
                    restarted: true,
                    sentence: if ok {
                        format!(
                            "Streamkeeper restarted its failed instances (try {n} of {MAX_PER_DAY} today; the next waits {} min).",
                            wait_minutes(n)
                        )
                    } else {
                        format!(
                            "Streamkeeper tried to restart it (try {n} of {MAX_PER_DAY} today): {what}."
                        )
                    },
                    evidence: detail,
                }
            }
        };
        done.insert(s.name.clone(), outcome);
    }
    Ok(done)
}

/// Raises, updates and resolves the Connect cluster's connector flags
/// through the flags' lifecycle; returns how many connectors are in
/// trouble.
async fn reconcile(
    pool: &PgPool,
    cluster: &ClusterRow,
    connect: &ConnectRow,
    seen: &[ConnectorSeen],
    listed: &[String],
    restarts: &BTreeMap<String, AutoRestart>,
) -> Result<usize, Db> {
    let now_ms = chrono::Utc::now().timestamp_millis();
    let observed: Vec<_> = seen
        .iter()
        .filter_map(|s| {
            let mut o = observe(s, now_ms, &restart_url(connect, &s.name))?;
            if let Some(r) = restarts.get(&s.name) {
                o.reason = format!("{} — {}", o.reason, r.sentence);
                o.evidence["auto_restart"] = r.evidence.clone();
            }
            Some(o)
        })
        .collect();
    let flagged = observed.len();
    let mut source = ConnectFlags {
        cluster,
        connect,
        prefix: format!("{}/", connect.name),
        seen: seen.iter().map(|s| s.name.as_str()).collect(),
        listed: listed.iter().map(String::as_str).collect(),
        restarts,
    };
    lifecycle::reconcile(pool, &mut source, observed).await?;
    Ok(flagged)
}

/// A Connect cluster's connector flags as the flags' lifecycle asks for
/// them.
struct ConnectFlags<'a> {
    cluster: &'a ClusterRow,
    connect: &'a ConnectRow,
    /// `<connect>/`: the start of this Connect cluster's flag subjects.
    prefix: String,
    /// Connectors this pass read.
    seen: BTreeSet<&'a str>,
    /// Connectors the worker listed (some perhaps not read: mid-change).
    listed: BTreeSet<&'a str>,
    restarts: &'a BTreeMap<String, AutoRestart>,
}

impl ConnectFlags<'_> {
    /// The connector a flag key of this Connect cluster names.
    fn name<'k>(&self, key: &'k FlagKey) -> Option<&'k str> {
        (key.subject_kind == SUBJECT_KIND)
            .then(|| key.subject.strip_prefix(&self.prefix))
            .flatten()
    }
}

#[async_trait]
impl FlagSource for ConnectFlags<'_> {
    fn cluster(&self) -> (i64, &str) {
        (self.cluster.id, &self.cluster.name)
    }

    /// A flag resolves only for a connector this pass read, or one the
    /// worker no longer lists: one missing from a listing mid-change keeps
    /// its flag.
    fn evaluated(&self, key: &FlagKey) -> bool {
        self.name(key)
            .is_some_and(|n| self.seen.contains(n) || !self.listed.contains(n))
    }

    fn worse(&self, _: &FlagKey, before: &str, now: &str) -> bool {
        streamkeeper::connect::status::worse(before, now)
    }

    async fn route(&self, pool: &PgPool, key: &FlagKey) -> Result<Option<Route>, Db> {
        match self.name(key) {
            Some(name) => route(pool, self.connect.id, name).await,
            None => Ok(None),
        }
    }

    /// The observation carries them: the trace, the restart request.
    fn receipts(&self, _: &mut Observation) {}

    /// A restart on an open flag is news for the owner too.
    fn news(&self, o: &Observation) -> bool {
        self.name(&o.key)
            .and_then(|n| self.restarts.get(n))
            .is_some_and(|r| r.restarted)
    }
}

/// The team a connector's flags go to: its owner (`platform::ownership`:
/// its claim, else a stream it reads or writes), else the platform team;
/// with the team's webhook.
async fn route(pool: &PgPool, connect_id: i64, name: &str) -> Result<Option<Route>, Db> {
    let owner = ownership::connector(pool, connect_id, name)
        .await?
        .flatten();
    crate::flags::route_owner(pool, owner.as_ref().map(|o| o.team_id())).await
}
