//! The registry hygiene routine: every few minutes, for each cluster with a
//! Schema Registry, read its subjects with their versions, latest schema
//! and level (stored for the subjects screen), compare them with
//! the cluster's topics and the catalog (`streamkeeper::schemas::hygiene`),
//! store the findings, and flag unregistered Tier 1 and Tier 2 streams to
//! their owners; then places what each stream's producers write against
//! the registry (schema drift, `schemas::drift`). Only reads the registry. A registry that cannot be read
//! keeps its last findings, subjects and flags, and says why.

use async_trait::async_trait;
use chrono::Utc;
use serde_json::json;
use sqlx::PgPool;
use std::collections::BTreeSet;
use std::time::Duration;
use streamkeeper::flags::Observation;
use streamkeeper::schemas::Mode;
use streamkeeper::schemas::hygiene::{Finding, SubjectFacts, TopicFacts, findings};
use tokio_util::sync::CancellationToken;

use crate::clients::egress::Outbound;
use crate::clients::registry::{Deleted, RegistryClient, RegistryError, Scope, VersionRef};
use crate::platform::routine::{
    Lease, Outcome, Record, Routine, RunError, RunResult, Scope as RoutineScope, Spec, Target,
};
use crate::schemas::client;
use crate::schemas::store::{self as store, FindingRow};
use crate::watch::judge;
use crate::watch::store::{self as clusters, ClusterRow};
use streamkeeper::watch::observe::key;

const EVERY: Duration = Duration::from_secs(300);

#[derive(Debug, thiserror::Error)]
pub enum HygieneError {
    #[error("the registry cannot be used: {0}")]
    Settings(String),
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error("database: {0}")]
    Database(#[from] crate::platform::errors::Db),
}

/// Reads one cluster's registry and updates its findings and flags;
/// returns the findings.
pub async fn run(
    pool: &PgPool,
    outbound: &Outbound,
    cluster: &ClusterRow,
) -> Result<Vec<Finding>, HygieneError> {
    let Some(r) = store::registry(pool, cluster.id).await? else {
        return Ok(Vec::new());
    };
    let result = read(pool, outbound, cluster, &r).await;
    if let Err(e) = &result {
        store::record_registry_error(pool, cluster.id, &e.to_string()).await?;
    }
    result
}

async fn read(
    pool: &PgPool,
    outbound: &Outbound,
    cluster: &ClusterRow,
    r: &store::RegistryRow,
) -> Result<Vec<Finding>, HygieneError> {
    let registry = client(r, outbound).map_err(HygieneError::Settings)?;
    let global = registry
        .config(Scope::Global, false)
        .await?
        .compatibility_level
        .unwrap_or(Mode::Backward);
    let mut subjects = Vec::new();
    let mut cached = Vec::new();
    for name in registry.subjects(None, Deleted::Hide).await? {
        let Some(row) = subject(&registry, &name).await? else {
            continue;
        };
        subjects.push(SubjectFacts {
            name,
            level: row.level.as_deref().and_then(Mode::parse),
        });
        cached.push(row);
    }
    store::replace_subjects(pool, cluster.id, global.as_str(), &cached).await?;
    let declared = store::declared_levels(pool, cluster.id).await?;
    let topics: Vec<TopicFacts> = clusters::topics(pool, cluster.id)
        .await?
        .into_iter()
        .map(|t| TopicFacts {
            declared: declared.get(&t.name).and_then(|m| Mode::parse(m)),
            tier: t.tier,
            name: t.name,
        })
        .collect();
    let found = findings(&topics, &subjects, global);
    let now = Utc::now();
    let rows: Vec<FindingRow> = found
        .iter()
        .map(|f| {
            let (kind, subject, topic) = match f {
                Finding::UnregisteredTopic { topic, .. } => {
                    ("UNREGISTERED_TOPIC", None, Some(topic))
                }
                Finding::OrphanSubject { subject, topic } => {
                    ("ORPHAN_SUBJECT", Some(subject), Some(topic))
                }
                Finding::LevelDrift { subject, topic, .. } => {
                    ("LEVEL_DRIFT", Some(subject), Some(topic))
                }
            };
            FindingRow {
                kind: kind.into(),
                subject: subject.cloned(),
                topic: topic.cloned(),
                detail: f.describe(),
                found_at: now,
            }
        })
        .collect();
    store::replace_findings(pool, cluster.id, &rows).await?;

    // Flags: every topic was looked at, so each may raise or resolve.
    let rule = "schema-registered";
    let evaluated: BTreeSet<_> = topics.iter().map(|t| key("topic", &t.name, rule)).collect();
    let observed = found
        .iter()
        .filter_map(|f| match f {
            Finding::UnregisteredTopic { topic, flag: true } => Some(Observation {
                key: key("topic", topic, rule),
                kind: "UNREGISTERED".into(),
                reason: format!("{} — a Tier 1 or Tier 2 stream must have its schema in the registry", f.describe()),
                onset_ms: now.timestamp_millis(),
                evidence: json!({
                    "rule": "a Tier 1 or 2 stream's topic has a value subject in the Schema Registry",
                    "registry": r.url,
                    "subjects_seen": subjects.len(),
                }),
            }),
            _ => None,
        })
        .collect();
    judge::reconcile(pool, cluster, observed, &evaluated).await?;
    super::drift::judge(pool, &registry, cluster).await?;
    Ok(found)
}

/// A subject's versions, latest schema and own level, for the subjects
/// screen; `None` when it was deleted since the listing.
async fn subject(
    registry: &RegistryClient,
    name: &str,
) -> Result<Option<store::SubjectRow>, HygieneError> {
    let gone = |e: &RegistryError| {
        matches!(
            e,
            RegistryError::SubjectNotFound { .. } | RegistryError::VersionNotFound { .. }
        )
    };
    let (versions, latest) = match tokio::join!(
        registry.versions(name, Deleted::Hide),
        registry.version(name, VersionRef::Latest, false),
    ) {
        (Ok(versions), Ok(latest)) => (versions, latest),
        (Err(e), _) | (_, Err(e)) if gone(&e) => return Ok(None),
        (Err(e), _) | (_, Err(e)) => return Err(e.into()),
    };
    let level = match registry.config(Scope::Subject(name), false).await {
        Ok(c) => c.compatibility_level,
        Err(RegistryError::NoSubjectConfig { .. }) => None,
        Err(e) if gone(&e) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let number = |n: u32| i32::try_from(n).unwrap_or(i32::MAX);
    Ok(Some(store::SubjectRow {
        subject: name.to_owned(),
        versions: versions.into_iter().map(number).collect(),
        latest_id: number(latest.id),
        schema_type: latest.schema_type.as_str().to_owned(),
        level: level.map(|m| m.as_str().to_owned()),
    }))
}

/// How often the routine looks whether a cluster's registry is due a
/// reading: a registry just set is read within this, not after a whole
/// [`EVERY`].
const TICK: Duration = Duration::from_secs(15);

/// Reads every registry every few minutes (and a new or changed one at
/// once), one replica per cluster.
pub struct Hygiene {
    pool: PgPool,
    outbound: Outbound,
}

impl Hygiene {
    pub fn new(pool: PgPool, outbound: Outbound) -> Self {
        Self { pool, outbound }
    }
}

impl From<HygieneError> for RunError {
    fn from(e: HygieneError) -> Self {
        match e {
            HygieneError::Database(e) => e.into(),
            other => RunError::Failed(other.to_string()),
        }
    }
}

#[async_trait]
impl Routine for Hygiene {
    fn spec(&self) -> Spec {
        Spec {
            name: "registry-hygiene",
            scope: RoutineScope::PerCluster,
            lease: Lease::Exclusive,
            // It looks every few seconds and reads every few minutes.
            record: Record::WhenWorked,
            every: TICK,
        }
    }

    async fn run(&self, target: Target, _: &CancellationToken) -> RunResult {
        let Some(id) = target.cluster_id() else {
            return Ok(Outcome::Idle);
        };
        let due = store::due_registries(&self.pool, EVERY.as_secs() as i64).await?;
        if !due.contains(&id) {
            return Ok(Outcome::Idle);
        }
        let Some(cluster) = clusters::by_id(&self.pool, id).await? else {
            return Ok(Outcome::Idle);
        };
        let found = run(&self.pool, &self.outbound, &cluster).await?;
        Ok(Outcome::Done(json!({ "findings": found.len() })))
    }
}
