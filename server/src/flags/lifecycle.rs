//! The flags' lifecycle carried out: raise, update, resolve and release,
//! and the webhook of each transition the owner hears of (a raise, a
//! worsening, a resolution, a source's news). The features that watch
//! things (groups, topics, freshness, clusters, connectors) hand their
//! observations over through [`FlagSource`], which says what they looked
//! at, who owns what, which kind is worse, and draws each kind's receipts;
//! the rules are `streamkeeper::flags::lifecycle`.

use crate::flags::store;
use crate::platform::errors::Db;
use async_trait::async_trait;
use serde_json::{Value, json};
use sqlx::PgPool;
use std::collections::{BTreeMap, HashMap, HashSet};
use streamkeeper::flags::lifecycle::{self, Standing, Step};
use streamkeeper::flags::{self, FlagKey, Observation};

/// Where a flag goes: the team's id, its name and its webhook, if any.
pub type Route = (i64, String, Option<String>);

/// What a watching feature tells the lifecycle about its observations.
#[async_trait]
pub trait FlagSource: Send {
    /// The Kafka cluster the flags are on: its id and name.
    fn cluster(&self) -> (i64, &str);
    /// Whether this evaluation looked at `key`'s subject: only then may its
    /// flag resolve (or its dismissal let go).
    fn evaluated(&self, key: &FlagKey) -> bool;
    /// Whether kind `now` is worse than `before` for `key`: a worsening is
    /// told to the owner.
    fn worse(&self, key: &FlagKey, before: &str, now: &str) -> bool;
    /// The team `key`'s flags go to.
    async fn route(&self, pool: &PgPool, key: &FlagKey) -> Result<Option<Route>, Db>;
    /// Draws the receipts of a flag being raised.
    fn receipts(&self, o: &mut Observation);
    /// Whether live flag `id`'s receipts are written this time, drawing
    /// them when so. By default every time.
    fn rewrite(&mut self, _id: i64, o: &mut Observation) -> bool {
        self.receipts(o);
        true
    }
    /// The flags that stand now: what is kept about others may go.
    fn standing(&mut self, _ids: &HashSet<i64>) {}
    /// News on a flag still open that the owner hears of besides a
    /// worsening (a connector restarted), told by the observation itself.
    fn news(&self, _o: &Observation) -> bool {
        false
    }
}

/// A flag that stands for its key: its id and where it stands.
struct Stands {
    id: i64,
    standing: Standing,
}

async fn read_standing(pool: &PgPool, cluster_id: i64) -> Result<BTreeMap<FlagKey, Stands>, Db> {
    Ok(store::standing(pool, cluster_id)
        .await?
        .into_iter()
        .map(|r| {
            let standing = match r.state.as_str() {
                "dismissed" => Standing::Dismissed {
                    snoozed_until_ms: r.snoozed_until.map(|t| t.timestamp_millis()),
                },
                _ => Standing::Live { kind: r.kind },
            };
            let key = FlagKey {
                subject_kind: r.subject_kind,
                subject: r.subject,
                rule: r.rule,
            };
            (key, Stands { id: r.id, standing })
        })
        .collect())
}

/// Raises, updates, resolves and lets go of a cluster's flags from what
/// `source` observed. Flags still there are updated together, in one
/// statement after the others: a thousand troubled groups would cost a
/// round trip each (BENCHMARKS.md).
pub async fn reconcile(
    pool: &PgPool,
    source: &mut dyn FlagSource,
    observed: Vec<Observation>,
) -> Result<(), Db> {
    let (cluster_id, cluster) = {
        let (id, name) = source.cluster();
        (id, name.to_owned())
    };
    let stands = read_standing(pool, cluster_id).await?;
    source.standing(&stands.values().map(|s| s.id).collect());
    let by_key: BTreeMap<FlagKey, Standing> = stands
        .iter()
        .map(|(k, s)| (k.clone(), s.standing.clone()))
        .collect();
    let now_ms = crate::platform::clock::now().timestamp_millis();
    let steps = {
        let src = &*source;
        lifecycle::reconcile(
            &by_key,
            observed,
            &|k| src.evaluated(k),
            now_ms,
            &|key, before, now| src.worse(key, before, now),
        )
    };
    let mut updates = Vec::new();
    let mut told: Vec<(i64, Observation, Option<String>)> = Vec::new();
    for step in steps {
        match step {
            Step::Raise(mut o) => {
                source.receipts(&mut o);
                let route = source.route(pool, &o.key).await?;
                raise(pool, cluster_id, &cluster, &o, route).await?;
            }
            Step::Update {
                mut observation,
                worsened,
            } => {
                let Some(s) = stands.get(&observation.key) else {
                    continue;
                };
                let write = source.rewrite(s.id, &mut observation);
                if worsened || source.news(&observation) {
                    let was = match &s.standing {
                        Standing::Live { kind } if worsened => Some(kind.clone()),
                        _ => None,
                    };
                    if !write {
                        source.receipts(&mut observation);
                    }
                    told.push((s.id, observation.clone(), was));
                }
                updates.push((s.id, observation, write));
            }
            Step::Resolve(key) => {
                if let Some(Stands {
                    id,
                    standing: Standing::Live { kind },
                }) = stands.get(&key)
                {
                    let route = source.route(pool, &key).await?;
                    resolve(pool, &cluster, *id, &key, kind, route).await?;
                }
            }
            Step::Release(key, why) => {
                if let Some(s) = stands.get(&key) {
                    store::release(pool, s.id).await?;
                    tracing::info!(subject = %key.subject, ?why, "dismissal let go");
                }
            }
        }
    }
    let rows: Vec<(i64, &Observation, bool)> =
        updates.iter().map(|(id, o, w)| (*id, o, *w)).collect();
    store::update_many(pool, &rows).await?;
    for (id, o, was) in told {
        let route = source.route(pool, &o.key).await?;
        tell(pool, &cluster, id, &o, was.as_deref(), route).await?;
    }
    Ok(())
}

/// The structured flag a webhook carries.
fn flag_json(cluster: &str, id: i64, state: &str, o: &Observation, team: &str) -> Value {
    json!({
        "id": id,
        "state": state,
        "cluster": cluster,
        "subject_kind": o.key.subject_kind,
        "subject": o.key.subject,
        "kind": o.kind,
        "reason": o.reason,
        "team": team,
        "onset_at": chrono::DateTime::from_timestamp_millis(o.onset_ms),
        "evidence": o.evidence,
    })
}

/// Raises a flag to the team `route` names, queueing its webhook in the
/// same transaction; without a webhook the in-app list is the
/// notification, so it is notified at once.
pub async fn raise(
    pool: &PgPool,
    cluster_id: i64,
    cluster: &str,
    o: &Observation,
    route: Option<Route>,
) -> Result<i64, Db> {
    let mut tx = pool.begin().await?;
    let id = store::raise(&mut tx, cluster_id, o, route.as_ref().map(|r| r.0)).await?;
    let channels = match &route {
        Some((team_id, _, _)) => {
            store::record_transition(&mut tx, id, "raise", None, None).await?;
            store::has_channels(&mut tx, *team_id).await?
        }
        None => false,
    };
    match route {
        Some((_, team, Some(url))) => {
            let body = json!({
                "text": flags::message(cluster, o, Some(&team)),
                "transition": "raise",
                "flag": flag_json(cluster, id, "open", o, &team),
            });
            store::enqueue(&mut tx, id, "raise", &url, &body).await?;
        }
        // The team's channels say when it was notified (their first 2xx).
        _ if channels => {}
        _ => store::mark_notified(&mut tx, id).await?,
    }
    tx.commit().await?;
    tracing::info!(cluster, subject = %o.key.subject, kind = %o.kind, "flag raised");
    Ok(id)
}

/// Tells the owner of an open flag that it worsened (from `was`) or has
/// news, through its webhook if it has one.
async fn tell(
    pool: &PgPool,
    cluster: &str,
    id: i64,
    o: &Observation,
    was: Option<&str>,
    route: Option<Route>,
) -> Result<(), Db> {
    let Some((_, team, url)) = route else {
        return Ok(());
    };
    let transition = if was.is_some() { "worsen" } else { "restart" };
    let mut tx = pool.begin().await?;
    store::record_transition(&mut tx, id, transition, was, None).await?;
    let Some(url) = url else {
        return Ok(tx.commit().await?);
    };
    let (transition, text) = match was {
        Some(was) => (
            "worsen",
            flags::worsened_message(cluster, o, was, Some(&team)),
        ),
        None => ("restart", flags::message(cluster, o, Some(&team))),
    };
    let body = json!({
        "text": text,
        "transition": transition,
        "was": was,
        "flag": flag_json(cluster, id, "open", o, &team),
    });
    store::enqueue(&mut tx, id, transition, &url, &body).await?;
    tx.commit().await?;
    tracing::info!(cluster, subject = %o.key.subject, kind = %o.kind, transition, "flag told");
    Ok(())
}

/// Resolves a flag, telling the team `route` names.
async fn resolve(
    pool: &PgPool,
    cluster: &str,
    id: i64,
    key: &FlagKey,
    kind: &str,
    route: Option<Route>,
) -> Result<(), Db> {
    let mut tx = pool.begin().await?;
    store::resolve(&mut tx, id).await?;
    if route.is_some() {
        store::record_transition(&mut tx, id, "resolve", None, None).await?;
    }
    if let Some((_, team, Some(url))) = route {
        let body = json!({
            "text": flags::resolved_message(cluster, key, kind, Some(&team)),
            "transition": "resolve",
            "flag": { "id": id, "state": "resolved", "cluster": cluster,
                      "subject_kind": key.subject_kind, "subject": key.subject, "kind": kind },
        });
        store::enqueue(&mut tx, id, "resolve", &url, &body).await?;
    }
    tx.commit().await?;
    tracing::info!(cluster, subject = %key.subject, "flag resolved");
    Ok(())
}

/// The evidence of the live lag flags of a cluster's groups (of one group
/// when named), by group: it keeps how long their partitions stood still.
pub async fn lag_evidence(
    pool: &PgPool,
    cluster_id: i64,
    group: Option<&str>,
) -> Result<HashMap<String, Value>, Db> {
    store::lag_evidence(pool, cluster_id, group).await
}
