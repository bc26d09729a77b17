//! After each pass: judge every group that was read, reconcile the result
//! with the open flags (raise once, update, resolve), route new flags to
//! the owner team (else the platform team) and queue their webhooks.

use crate::clusters::{judgeable, windows};
use crate::kafka::reader::Reading;
use crate::store::clusters::ClusterRow;
use crate::store::flags as store;
use chrono::Utc;
use serde_json::json;
use sqlx::PgPool;
use std::collections::{BTreeMap, BTreeSet};
use streamkeeper::flag::{self, FlagKey, Observation, Step};
use streamkeeper::lag::status::{Rules, group_status, onset_ms, partition_status};

/// How a pass went, as far as flags care.
pub enum PassResult<'a> {
    Read(&'a Reading),
    Failed(&'a str),
}

fn group_key(group: &str) -> FlagKey {
    FlagKey {
        subject_kind: "group".into(),
        subject: group.into(),
        rule: "lag".into(),
    }
}

fn cluster_key(name: &str) -> FlagKey {
    FlagKey {
        subject_kind: "cluster".into(),
        subject: name.into(),
        rule: "reachability".into(),
    }
}

/// The trouble a group is in, with its receipts, or `None` when it is fine.
async fn observe_group(
    pool: &PgPool,
    cluster_id: i64,
    group: &str,
    members: usize,
) -> Result<Option<Observation>, sqlx::Error> {
    let rules = Rules::default();
    let mut verdicts = Vec::new();
    let mut receipts = Vec::new();
    let mut onset: Option<i64> = None;
    for ((topic, partition), samples) in windows(pool, cluster_id, group).await? {
        let window = judgeable(&samples);
        let v = partition_status(&window, members > 0, &rules);
        if v.status.is_trouble() {
            if let Some(o) = onset_ms(&window, rules.allowed_lag) {
                onset = Some(onset.map_or(o, |x| x.min(o)));
            }
            receipts.push(json!({
                "topic": topic,
                "partition": partition,
                "status": v.status.as_str(),
                "reason": v.reason,
                "samples": window.iter().map(|s| json!({
                    "at": chrono::DateTime::from_timestamp_millis(s.at_ms),
                    "committed": s.committed,
                    "log_start": s.log_start,
                    "log_end": s.log_end,
                })).collect::<Vec<_>>(),
            }));
        }
        verdicts.push(v);
    }
    let status = group_status(&verdicts);
    if !status.is_trouble() {
        return Ok(None);
    }
    let worst = verdicts
        .iter()
        .filter(|v| v.status == status)
        .map(|v| v.reason.clone())
        .next()
        .unwrap_or_default();
    let troubled = verdicts.iter().filter(|v| v.status.is_trouble()).count();
    let reason = if troubled > 1 {
        format!(
            "{worst} (and {} more partition(s) in trouble)",
            troubled - 1
        )
    } else {
        worst
    };
    Ok(Some(Observation {
        key: group_key(group),
        kind: status.as_str().into(),
        reason,
        onset_ms: onset.unwrap_or_else(|| Utc::now().timestamp_millis()),
        evidence: json!({
            "rule": "windowed lag status (Burrow-style, evaluated at the newest sample)",
            "window_passes": crate::clusters::WINDOW_PASSES,
            "min_samples": rules.min_samples,
            "allowed_lag": rules.allowed_lag,
            "group_members": members,
            "group_status": status.as_str(),
            "partitions": receipts,
        }),
    }))
}

/// Reconciles flags after a pass. Errors are logged by the caller; a failed
/// reconciliation leaves the flags as they were.
pub async fn after_pass(
    pool: &PgPool,
    cluster: &ClusterRow,
    result: PassResult<'_>,
) -> Result<(), sqlx::Error> {
    let mut observed = Vec::new();
    let mut evaluated: BTreeSet<FlagKey> = BTreeSet::new();
    evaluated.insert(cluster_key(&cluster.name));
    match result {
        PassResult::Failed(why) => observed.push(Observation {
            key: cluster_key(&cluster.name),
            kind: "UNREACHABLE".into(),
            reason: format!("the last pass could not read the cluster: {why}"),
            onset_ms: Utc::now().timestamp_millis(),
            evidence: json!({ "rule": "a pass that reads nothing", "error": why }),
        }),
        PassResult::Read(reading) => {
            for t in &reading.topics {
                let health = crate::store::clusters::topic_health(t, reading.finished);
                for (rule, kind, parts, what) in [
                    (
                        "replication",
                        "UNDER_REPLICATED",
                        &health.under_replicated,
                        "fewer in-sync replicas than replicas",
                    ),
                    (
                        "leadership",
                        "OFFLINE",
                        &health.offline,
                        "no leader: nobody can read or write them",
                    ),
                ] {
                    let key = FlagKey {
                        subject_kind: "topic".into(),
                        subject: t.name.clone(),
                        rule: rule.into(),
                    };
                    evaluated.insert(key.clone());
                    if !parts.is_empty() {
                        observed.push(Observation {
                            key,
                            kind: kind.into(),
                            reason: format!("partitions {parts:?} have {what}"),
                            onset_ms: reading.finished.timestamp_millis(),
                            evidence: json!({
                                "rule": format!("{kind} partitions in topic metadata"),
                                "partitions": t.partitions.iter().map(|p| json!({
                                    "partition": p.partition,
                                    "leader": p.leader,
                                    "replicas": p.replicas,
                                    "isr": p.isr,
                                })).collect::<Vec<_>>(),
                            }),
                        });
                    }
                }
            }
            for g in reading.groups.iter().filter(|g| g.error.is_none()) {
                evaluated.insert(group_key(&g.name));
                if let Some(o) = observe_group(pool, cluster.id, &g.name, g.members).await? {
                    observed.push(o);
                }
            }
        }
    }
    let live = store::live(pool, cluster.id).await?;
    let open: BTreeMap<FlagKey, String> = live
        .iter()
        .map(|(k, (_, kind))| (k.clone(), kind.clone()))
        .collect();
    for step in flag::reconcile(&open, observed, &|k| evaluated.contains(k)) {
        match step {
            Step::Raise(o) => raise(pool, cluster, &o).await?,
            Step::Update { observation, .. } => {
                if let Some((id, _)) = live.get(&observation.key) {
                    let mut conn = pool.acquire().await?;
                    store::update(&mut conn, *id, &observation).await?;
                }
            }
            Step::Resolve(key) => {
                if let Some((id, kind)) = live.get(&key) {
                    resolve(pool, cluster, *id, &key, kind).await?;
                }
            }
        }
    }
    Ok(())
}

async fn raise(pool: &PgPool, cluster: &ClusterRow, o: &Observation) -> Result<(), sqlx::Error> {
    let route = match o.key.subject_kind.as_str() {
        "group" => store::route_group(pool, cluster.id, &o.key.subject).await?,
        _ => store::route_platform(pool).await?,
    };
    let mut tx = pool.begin().await?;
    let id = store::raise(&mut tx, cluster.id, o, route.as_ref().map(|r| r.0)).await?;
    match route
        .as_ref()
        .and_then(|(_, team, url)| url.as_ref().map(|u| (team, u)))
    {
        Some((team, url)) => {
            let body = json!({
                "text": flag::message(&cluster.name, o, Some(team)),
                "flag": {
                    "id": id,
                    "state": "open",
                    "cluster": cluster.name,
                    "subject_kind": o.key.subject_kind,
                    "subject": o.key.subject,
                    "kind": o.kind,
                    "reason": o.reason,
                    "team": team,
                    "onset_at": chrono::DateTime::from_timestamp_millis(o.onset_ms),
                    "evidence": o.evidence,
                },
            });
            store::enqueue(&mut tx, id, url, &body).await?;
        }
        // No webhook: the in-app list is the notification.
        None => store::mark_notified(&mut tx, id).await?,
    }
    tx.commit().await?;
    tracing::info!(cluster = %cluster.name, subject = %o.key.subject, kind = %o.kind, "flag raised");
    Ok(())
}

async fn resolve(
    pool: &PgPool,
    cluster: &ClusterRow,
    id: i64,
    key: &FlagKey,
    kind: &str,
) -> Result<(), sqlx::Error> {
    let route = match key.subject_kind.as_str() {
        "group" => store::route_group(pool, cluster.id, &key.subject).await?,
        _ => store::route_platform(pool).await?,
    };
    let mut tx = pool.begin().await?;
    store::resolve(&mut tx, id).await?;
    if let Some((_, team, Some(url))) = route {
        let body = json!({
            "text": format!("[RESOLVED] {} {} on cluster {} is no longer {kind} — owner: team {team}",
                key.subject_kind, key.subject, cluster.name),
            "flag": { "id": id, "state": "resolved", "cluster": cluster.name,
                      "subject_kind": key.subject_kind, "subject": key.subject, "kind": kind },
        });
        store::enqueue(&mut tx, id, &url, &body).await?;
    }
    tx.commit().await?;
    tracing::info!(cluster = %cluster.name, subject = %key.subject, "flag resolved");
    Ok(())
}
