//! The status routine: for each Kafka cluster, every Connect cluster whose
//! interval is up (default 30 s) is read with one request
//! (`GET /connectors?expand=status&expand=info`), read-only. Each
//! connector's and task's state is stored, with a history row when it
//! changed; a FAILED connector or task raises a flag to the connector's
//! owner with the trace as its receipt, resolved when it runs again; one
//! UNASSIGNED longer than two passes is flagged. A worker that cannot be
//! read is a gap: the run fails, its error is kept, and no state is
//! written (nothing is resolved on the strength of a pass that saw nothing).

use super::store::{self, ConnectRow, SeenConnector, SeenTask};
use crate::clients::egress::Outbound;
use crate::platform::db::{acquire, begin, commit};
use crate::platform::errors::Db;
use crate::platform::routine::{
    Lease, Outcome, Record, Routine, RunError, RunResult, Scope, Spec, Target,
};
use crate::watch::judge::{raise_to, resolve_to};
use crate::watch::store::ClusterRow;
use async_trait::async_trait;
use serde_json::json;
use sqlx::PgPool;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;
use streamkeeper::connect::canonical::config_hash;
use streamkeeper::connect::lineage::lineage;
use streamkeeper::connect::status::{
    ConnectorSeen, InstanceSeen, SUBJECT_KIND, flag_key, observe, scrub_trace, unassigned_passes,
};
use streamkeeper::connect::{Config, secret};
use streamkeeper::flags::{self, FlagKey, Step};
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
    let none = BTreeSet::new();
    let mut rows = Vec::with_capacity(listing.len());
    let mut seen = Vec::with_capacity(listing.len());
    for (name, entry) in &listing {
        // Created or deleted mid-listing: not read this time, not gone either.
        let (Some(status), Some(info)) = (&entry.status, &entry.info) else {
            continue;
        };
        let plain: Config = info.config.0.iter().collect();
        let scrub = |t: &Option<String>| t.as_deref().map(|t| scrub_trace(t, &plain, &none));
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
            config: secret::mask(&plain, &none).to_json(),
            config_hash: config_hash(&plain, &none),
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
    let flagged = reconcile(pool, cluster, connect, &seen, &listed).await?;
    Ok(PassReport {
        connectors: rows.len(),
        flagged,
    })
}

/// Raises, updates and resolves the Connect cluster's connector flags.
/// A flag resolves only for a connector this pass read (or one the worker
/// no longer lists): one missing from a listing mid-change keeps its flag.
async fn reconcile(
    pool: &PgPool,
    cluster: &ClusterRow,
    connect: &ConnectRow,
    seen: &[ConnectorSeen],
    listed: &[String],
) -> Result<usize, Db> {
    let prefix = format!("{}/", connect.name);
    let live = crate::flags::store::live(pool, cluster.id).await?;
    let mine: BTreeMap<&FlagKey, &(i64, String)> = live
        .iter()
        .filter(|(k, _)| k.subject_kind == SUBJECT_KIND && k.subject.starts_with(&prefix))
        .collect();
    let open: BTreeMap<FlagKey, String> = mine
        .iter()
        .map(|(k, (_, kind))| ((*k).clone(), kind.clone()))
        .collect();
    let now_ms = chrono::Utc::now().timestamp_millis();
    let observed: Vec<_> = seen
        .iter()
        .filter_map(|s| observe(s, now_ms, &restart_url(connect, &s.name)))
        .collect();
    let flagged = observed.len();
    let listed: BTreeSet<&str> = listed.iter().map(String::as_str).collect();
    let mut evaluated: BTreeSet<FlagKey> = seen
        .iter()
        .map(|s| flag_key(&connect.name, &s.name))
        .collect();
    evaluated.extend(
        open.keys()
            .filter(|k| !listed.contains(&k.subject[prefix.len()..]))
            .cloned(),
    );
    for step in flags::reconcile(&open, observed, &|k| evaluated.contains(k)) {
        match step {
            Step::Raise(o) => {
                let name = &o.key.subject[prefix.len()..];
                let route = store::route(pool, connect.id, name).await?;
                raise_to(pool, cluster, &o, route).await?;
            }
            Step::Update { observation, .. } => {
                if let Some((id, _)) = mine.get(&observation.key) {
                    let mut conn = acquire(pool).await?;
                    crate::flags::store::update(&mut conn, *id, &observation).await?;
                }
            }
            Step::Resolve(key) => {
                if let Some((id, kind)) = mine.get(&key) {
                    let route =
                        store::route(pool, connect.id, &key.subject[prefix.len()..]).await?;
                    resolve_to(pool, cluster, *id, &key, kind, route).await?;
                }
            }
        }
    }
    Ok(flagged)
}
