//! After each pass: judge every group that was read, reconcile the result
//! with the open flags (raise once, update, resolve), route new flags to
//! the owner team (else the platform team) and queue their webhooks.

use crate::clusters::{WINDOW_PASSES, Windows, by_group, judgeable};
use crate::kafka::reader::{Reading, TopicReading};
use crate::store::clusters::Judgement;
use crate::store::clusters::{ClusterRow, TopicRow};
use crate::store::flags as store;
use chrono::Utc;
use serde_json::json;
use sqlx::PgPool;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use streamkeeper::flags::{self, FlagKey, Observation, Step};
use streamkeeper::watch::lag::status::{
    Rules, group_status, partition_status, trouble_onset_ms, window_time_lag_s,
};

/// How a pass went, as far as flags care.
pub enum PassResult<'a> {
    Read(&'a Reading),
    Failed(&'a str),
}

fn group_key(group: &str) -> FlagKey {
    key("group", group, "lag")
}

fn cluster_key(name: &str) -> FlagKey {
    key("cluster", name, "reachability")
}

pub fn key(subject_kind: &str, subject: &str, rule: &str) -> FlagKey {
    FlagKey {
        subject_kind: subject_kind.into(),
        subject: subject.into(),
        rule: rule.into(),
    }
}

/// A group's troubles: its windowed lag status, and its time lag against
/// the freshness budgets of the streams it reads. Also its judgement for
/// the lists.
fn observe_group(
    group: &str,
    windows: Windows,
    members: usize,
    budgets: &HashMap<String, i32>,
) -> (Vec<Observation>, Judgement) {
    let rules = Rules::default();
    let mut total_lag: Option<i64> = None;
    let mut max_time_lag: Option<f64> = None;
    let mut verdicts = Vec::new();
    let mut receipts = Vec::new();
    let mut stale = Vec::new();
    let mut onset: Option<i64> = None;
    for ((topic, partition), samples) in windows {
        let window = judgeable(&samples);
        if let Some(lag) = window.last().and_then(|s| s.lag().messages()) {
            let lag = i64::try_from(lag).unwrap_or(i64::MAX);
            total_lag = Some(total_lag.unwrap_or(0).saturating_add(lag));
        }
        let time_lag = window_time_lag_s(&window);
        if let Some(t) = time_lag {
            max_time_lag = Some(max_time_lag.map_or(t, |m| m.max(t)));
        }
        if let Some(budget) = budgets.get(&topic)
            && let Some(secs) = time_lag.filter(|s| *s > f64::from(*budget))
        {
            stale.push(json!({
                "topic": topic, "partition": partition,
                "time_lag_s": secs.round(), "budget_s": budget,
            }));
        }
        let v = partition_status(&window, members > 0, &rules);
        if v.status.is_trouble() {
            if let Some(o) = trouble_onset_ms(&window, v.status, rules.allowed_lag) {
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
    let mut found = Vec::new();
    if let Some(first) = stale.first() {
        let more = match stale.len() {
            1 => String::new(),
            n => format!(" (and {} more partition(s))", n - 1),
        };
        found.push(Observation {
            key: key("group", group, "freshness"),
            kind: "FRESHNESS".into(),
            reason: format!(
                "time lag {} s on {}[{}] is above the stream's freshness budget of {} s{more}",
                first["time_lag_s"],
                first["topic"].as_str().unwrap_or(""),
                first["partition"],
                first["budget_s"]
            ),
            onset_ms: Utc::now().timestamp_millis(),
            evidence: json!({
                "rule": "time lag (interpolated from the log-end history) above the stream's freshness budget",
                "partitions": stale,
            }),
        });
    }
    let status = group_status(&verdicts);
    if status.is_trouble() {
        let worst = verdicts
            .iter()
            .find(|v| v.status == status)
            .map(|v| v.reason.clone())
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
        found.push(Observation {
            key: group_key(group),
            kind: status.as_str().into(),
            reason,
            onset_ms: onset.unwrap_or_else(|| Utc::now().timestamp_millis()),
            evidence: json!({
                "rule": "windowed lag status (Burrow-style, evaluated at the newest sample)",
                "window_passes": WINDOW_PASSES,
                "min_samples": rules.min_samples,
                "stop_samples": rules.stop_samples,
                "allowed_lag": rules.allowed_lag,
                "group_members": members,
                "group_status": status.as_str(),
                "partitions": receipts,
            }),
        });
    }
    let judgement = Judgement {
        group: group.to_owned(),
        status: status.as_str().to_owned(),
        total_lag,
        max_time_lag_s: max_time_lag,
    };
    (found, judgement)
}

/// A topic's troubles: replication and leadership from its metadata, and
/// silence beyond 1.5 × the interval its stream expects.
fn observe_topic(
    t: &TopicReading,
    catalog: Option<&TopicRow>,
    at: chrono::DateTime<Utc>,
    evaluated: &mut BTreeSet<FlagKey>,
) -> Vec<Observation> {
    let mut found = Vec::new();
    let health = crate::store::clusters::topic_health(t, at);
    let rules = [
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
    ];
    for (rule, kind, parts, what) in rules {
        let k = key("topic", &t.name, rule);
        evaluated.insert(k.clone());
        if !parts.is_empty() {
            found.push(Observation {
                key: k,
                kind: kind.into(),
                reason: format!("partitions {parts:?} have {what}"),
                onset_ms: at.timestamp_millis(),
                evidence: json!({
                    "rule": format!("{kind} partitions in topic metadata"),
                    "partitions": t.partitions.iter().map(|p| json!({
                        "partition": p.partition, "leader": p.leader,
                        "replicas": p.replicas, "isr": p.isr,
                    })).collect::<Vec<_>>(),
                }),
            });
        }
    }
    if let Some(c) = catalog {
        let k = key("topic", &t.name, "quiet");
        evaluated.insert(k.clone());
        let quiet = streamkeeper::watch::health::topic_health(
            &[],
            c.last_advanced_at.map(|a| a.timestamp_millis()),
            at.timestamp_millis(),
            c.expected_interval_s.map(i64::from),
        );
        if let (Some(quiet_s), Some(expected)) = (quiet.quiet_for_s, c.expected_interval_s) {
            found.push(Observation {
                key: k,
                kind: "QUIET".into(),
                reason: format!(
                    "no new message for {quiet_s} s; one is expected every {expected} s"
                ),
                onset_ms: c.last_advanced_at.map_or(0, |a| a.timestamp_millis()),
                evidence: json!({
                    "rule": "time since the last message above 1.5 × the expected interval",
                    "last_message_at": c.last_advanced_at,
                    "expected_interval_s": expected,
                    "log_end_total": c.log_end_total,
                }),
            });
        }
    }
    found
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
            let catalog: HashMap<String, TopicRow> =
                crate::store::clusters::topics(pool, cluster.id)
                    .await?
                    .into_iter()
                    .map(|t| (t.name.clone(), t))
                    .collect();
            let budgets: HashMap<String, i32> = catalog
                .iter()
                .filter_map(|(n, t)| t.freshness_budget_s.map(|b| (n.clone(), b)))
                .collect();
            for t in &reading.topics {
                observed.extend(observe_topic(
                    t,
                    catalog.get(&t.name),
                    reading.finished,
                    &mut evaluated,
                ));
            }
            let window = crate::store::samples::cluster_window(pool, cluster.id, WINDOW_PASSES);
            let mut windows = by_group(window.await?);
            let mut judgements = Vec::new();
            for g in reading.groups.iter().filter(|g| g.error.is_none()) {
                evaluated.insert(group_key(&g.name));
                evaluated.insert(key("group", &g.name, "freshness"));
                let w = windows.remove(&g.name).unwrap_or_default();
                let (found, judgement) = observe_group(&g.name, w, g.members, &budgets);
                observed.extend(found);
                judgements.push(judgement);
            }
            crate::store::clusters::set_judgements(pool, cluster.id, reading.finished, &judgements)
                .await?;
        }
    }
    reconcile(pool, cluster, observed, &evaluated).await
}

/// Raises, updates and resolves a cluster's flags from what was observed.
/// Only flags whose key was `evaluated` may resolve: a routine that did not
/// look at something says nothing about it.
pub async fn reconcile(
    pool: &PgPool,
    cluster: &ClusterRow,
    observed: Vec<Observation>,
    evaluated: &BTreeSet<FlagKey>,
) -> Result<(), sqlx::Error> {
    let live = store::live(pool, cluster.id).await?;
    let open: BTreeMap<FlagKey, String> = live
        .iter()
        .map(|(k, (_, kind))| (k.clone(), kind.clone()))
        .collect();
    for step in flags::reconcile(&open, observed, &|k| evaluated.contains(k)) {
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

/// Groups go to their owner, topics to their stream's owner, the rest (and
/// anything unowned) to the platform team.
async fn route(
    pool: &PgPool,
    cluster: &ClusterRow,
    key: &FlagKey,
) -> Result<Option<(i64, String, Option<String>)>, sqlx::Error> {
    match key.subject_kind.as_str() {
        "group" => store::route_group(pool, cluster.id, &key.subject).await,
        "topic" => {
            let owner =
                crate::store::clusters::stream_owner(pool, cluster.id, &key.subject).await?;
            store::route_owner(pool, owner).await
        }
        _ => store::route_owner(pool, None).await,
    }
}

async fn raise(pool: &PgPool, cluster: &ClusterRow, o: &Observation) -> Result<(), sqlx::Error> {
    let route = route(pool, cluster, &o.key).await?;
    let mut tx = pool.begin().await?;
    let id = store::raise(&mut tx, cluster.id, o, route.as_ref().map(|r| r.0)).await?;
    match route
        .as_ref()
        .and_then(|(_, team, url)| url.as_ref().map(|u| (team, u)))
    {
        Some((team, url)) => {
            let body = json!({
                "text": flags::message(&cluster.name, o, Some(team)),
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
    let route = route(pool, cluster, key).await?;
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
