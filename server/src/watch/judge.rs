//! After each pass: judge every group that was read and hand what it
//! found to the flags' lifecycle (`flags::lifecycle`), saying what was
//! looked at, who owns what, which lag status is worse, and drawing each
//! group's receipts from its window.

use crate::clients::kafka::reader::{GroupReading, Reading};
use crate::flags::lifecycle::{self, FlagSource, Route};
use crate::platform::errors::Db;
use crate::platform::ownership;
use crate::watch::kept::{self, KeptFlags, KeptSample, KeptWindow};
use crate::watch::store::Judgement;
use crate::watch::store::{ClusterRow, TopicRow};
use async_trait::async_trait;
use serde_json::{Value, json};
use sqlx::PgPool;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::time::{Duration, Instant};
use streamkeeper::access::ownership::team_id;
use streamkeeper::flags::{FlagKey, Observation, receipts};
use streamkeeper::watch::lag::consumed::{Consumption, NotConsumed, not_consumed};
use streamkeeper::watch::lag::status::Status;
use streamkeeper::watch::observe::{
    LagTrouble, TopicCatalog, cluster_key, freshness_key, group_key, observe_group, observe_topic,
    standings, with_samples,
};
use streamkeeper::watch::retention::retention_key;
use streamkeeper::watch::window::Windows;

/// How a pass went, as far as flags care.
pub enum PassResult<'a> {
    Read(&'a Reading),
    Failed(&'a str),
}

/// Where an evaluation's time went, phase by phase: logged at debug level
/// (`RUST_LOG=streamkeeper_server::watch::judge=debug`), which is how
/// BENCHMARKS.md breaks the evaluation down.
struct Phases {
    last: Instant,
    spent: Vec<(&'static str, Duration)>,
}

impl Phases {
    fn start() -> Self {
        Phases {
            last: Instant::now(),
            spent: Vec::new(),
        }
    }

    /// Ends phase `name`, started where the previous one ended.
    fn mark(&mut self, name: &'static str) {
        let now = Instant::now();
        self.spent.push((name, now - self.last));
        self.last = now;
    }
}

/// The catalog's facts about a topic that decide whether it is quiet.
fn catalog_of(t: &TopicRow) -> TopicCatalog {
    TopicCatalog {
        last_message: crate::watch::last_message(
            t.log_end_total,
            t.last_message_at,
            t.last_advanced_at,
            t.first_seen,
        ),
        first_seen_ms: t.first_seen.timestamp_millis(),
        expected_interval_s: t.expected_interval_s,
        log_end_total: t.log_end_total,
    }
}

/// Reconciles flags after a pass. The groups' windows come from `kept`,
/// the sampler's memory of the cluster's recent passes, when it matches
/// the store (else from Postgres; see `watch::kept`): the pass itself must
/// already be recorded, and kept. So do the open lag flags' standings and
/// what their receipts last said. Errors are logged by the caller; a
/// failed reconciliation leaves the flags as they were, and the memory of
/// them is dropped (read again next time).
pub async fn after_pass(
    pool: &PgPool,
    cluster: &ClusterRow,
    result: PassResult<'_>,
    kept: &mut KeptWindow,
) -> Result<(), Db> {
    let mut phases = Phases::start();
    let mut observed = Vec::new();
    let mut evaluated: BTreeSet<FlagKey> = BTreeSet::new();
    evaluated.insert(cluster_key(&cluster.name));
    let none = BTreeMap::new();
    let mut windows = &none;
    let mut troubles = HashMap::new();
    let mut flags = match result {
        PassResult::Failed(why) => {
            observed.push(Observation {
                key: cluster_key(&cluster.name),
                kind: "UNREACHABLE".into(),
                reason: format!("the last pass could not read the cluster: {why}"),
                onset_ms: crate::platform::clock::now().timestamp_millis(),
                evidence: json!({ "rule": "a pass that reads nothing", "error": why }),
            });
            std::mem::take(&mut kept.flags)
        }
        PassResult::Read(reading) => {
            let catalog: HashMap<String, TopicRow> = crate::watch::store::topics(pool, cluster.id)
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
                    &t.name,
                    &t.meta(),
                    catalog.get(&t.name).map(catalog_of).as_ref(),
                    reading.finished.timestamp_millis(),
                    &mut evaluated,
                ));
            }
            phases.mark("topics");
            let source = kept::current(pool, cluster.id, kept).await?;
            tracing::debug!(cluster = %cluster.name, ?source, "windows");
            phases.mark("windows");
            let mut flags = std::mem::take(&mut kept.flags);
            windows = kept.windows();
            // How long stuck partitions have stood, as their flags keep it.
            let mut known = match flags.standings.take() {
                Some(known) => known,
                None => lifecycle::lag_evidence(pool, cluster.id, None)
                    .await?
                    .iter()
                    .map(|(group, evidence)| (group.clone(), standings(evidence)))
                    .collect(),
            };
            let mut unconsumed = crate::watch::store::not_consumed(pool, cluster.id).await?;
            // Only this pass's first sightings are kept for the next.
            let mut seen_once = std::mem::take(&mut flags.unassigned_once);
            phases.mark("standings");
            let mut judgements = Vec::new();
            let mut time_lags = crate::watch::slo::TimeLags::new();
            for g in reading.groups.iter().filter(|g| g.error.is_none()) {
                evaluated.insert(group_key(&g.name));
                evaluated.insert(freshness_key(&g.name));
                let none = Windows::new();
                let w = windows.get(&g.name).unwrap_or(&none);
                let now_ms = crate::platform::clock::now().timestamp_millis();
                let before = known.remove(&g.name).unwrap_or_default();
                let once = seen_once.remove(&g.name).unwrap_or_default();
                let pass = not_consumed_by(g, unconsumed.remove(&g.name), &once, now_ms);
                if !pass.unassigned_once.is_empty() {
                    flags
                        .unassigned_once
                        .insert(g.name.clone(), pass.unassigned_once);
                }
                let not_consumed = pass.not_consumed;
                let seen = observe_group(
                    &g.name,
                    w,
                    g.members,
                    &budgets,
                    &before,
                    &not_consumed,
                    now_ms,
                );
                observed.extend(seen.freshness);
                crate::watch::slo::add_time_lags(&mut time_lags, seen.time_lags);
                // A retention risk not known this pass (the log start
                // between two segment deletions) neither raises nor
                // resolves its flag.
                if seen.retention.judged() {
                    evaluated.insert(retention_key(&g.name));
                }
                observed.extend(seen.retention.flag());
                // What its lag flag will keep if it stays open, or what a
                // return from a stop is remembered by until it commits.
                if !seen.standings.is_empty() {
                    known.insert(g.name.clone(), seen.standings);
                }
                if let Some(trouble) = seen.lag {
                    // Its receipts are made only if they are written
                    // (`Receipts::complete`).
                    observed.push(trouble.observation(&g.name, Value::Null));
                    troubles.insert(g.name.clone(), trouble);
                }
                let j = seen.judgement;
                judgements.push(Judgement {
                    group: g.name.clone(),
                    status: j.status.as_str().to_owned(),
                    total_lag: j.total_lag,
                    max_time_lag_s: j.max_time_lag_s,
                    lag_velocity: j.trend.velocity,
                    catch_up_s: j.trend.catch_up.seconds(),
                    retention_risk_s: j.trend.retention.seconds(),
                    not_consumed,
                });
            }
            phases.mark("observe groups");
            crate::watch::store::set_judgements(pool, cluster.id, reading.finished, &judgements)
                .await?;
            phases.mark("judgements stored");
            let slo = crate::watch::slo::after_pass(
                pool,
                cluster,
                (reading.started, reading.finished),
                &catalog,
                &time_lags,
            )
            .await?;
            evaluated.extend(slo.evaluated);
            observed.extend(slo.observed);
            phases.mark("freshness SLOs");
            flags.standings = Some(known);
            flags
        }
    };
    let lag_receipts = Receipts { troubles, windows };
    reconcile_kept(
        pool,
        cluster,
        observed,
        &evaluated,
        Some(&mut flags),
        Some(&lag_receipts),
        &mut phases,
    )
    .await?;
    kept.flags = flags;
    tracing::debug!(cluster = %cluster.name, phases = ?phases.spent, "evaluated");
    Ok(())
}

/// The topics `g` keeps offsets on but does not consume, from what the
/// last evaluation left out (`before`) and saw unassigned once (`once`),
/// and its members' assignments now.
fn not_consumed_by(
    g: &GroupReading,
    before: Option<NotConsumed>,
    once: &NotConsumed,
    now_ms: i64,
) -> Consumption {
    let before = before.unwrap_or_default();
    let assigned = g.assigned.trusted(&g.state);
    // Nothing to say without trusted assignments or anything known.
    if before.is_empty() && once.is_empty() && assigned.is_none() {
        return Consumption::default();
    }
    // Offsets are in topic order: one name per topic.
    let mut committed_on = BTreeSet::new();
    for ((topic, _), c) in &g.offsets {
        if c.is_some() && committed_on.last() != Some(topic) {
            committed_on.insert(topic.clone());
        }
    }
    not_consumed(&before, once, &committed_on, assigned, now_ms)
}

/// The groups' lag troubles of an evaluation and the windows they were
/// observed over: what their flags' receipts are made from, for the flags
/// raised and those whose receipts are written.
struct Receipts<'a> {
    troubles: HashMap<String, LagTrouble>,
    windows: &'a BTreeMap<String, Windows<KeptSample>>,
}

impl Receipts<'_> {
    /// The lag trouble behind `o`, when it is a group's lag flag.
    fn trouble(&self, o: &Observation) -> Option<&LagTrouble> {
        if o.key == group_key(&o.key.subject) {
            self.troubles.get(&o.key.subject)
        } else {
            None
        }
    }

    /// Makes a group lag flag's receipts, with each troubled partition's
    /// samples (see `with_samples`).
    fn complete(&self, o: &mut Observation) {
        if let Some(trouble) = self.trouble(o) {
            o.evidence = trouble.evidence();
            if let Some(w) = self.windows.get(&o.key.subject) {
                with_samples(&mut o.evidence, w);
            }
        }
    }
}

/// Raises, updates and resolves a cluster's flags from what was observed.
/// Only flags whose key was `evaluated` may resolve: a routine that did not
/// look at something says nothing about it.
pub async fn reconcile(
    pool: &PgPool,
    cluster: &ClusterRow,
    observed: Vec<Observation>,
    evaluated: &BTreeSet<FlagKey>,
) -> Result<(), Db> {
    let mut phases = Phases::start();
    reconcile_kept(pool, cluster, observed, evaluated, None, None, &mut phases).await
}

/// [`reconcile`], writing the receipts of flags still open only when they
/// say something new or it is their turn (`streamkeeper::flags::receipts`),
/// as far as `kept` knows what was written; without it, every time.
/// `lag_receipts` makes the receipts of the groups' lag flags that are
/// raised or written.
async fn reconcile_kept(
    pool: &PgPool,
    cluster: &ClusterRow,
    observed: Vec<Observation>,
    evaluated: &BTreeSet<FlagKey>,
    mut kept: Option<&mut KeptFlags>,
    lag_receipts: Option<&Receipts<'_>>,
    phases: &mut Phases,
) -> Result<(), Db> {
    let evaluation = kept.as_deref().map_or(0, |k| k.evaluations);
    let mut source = WatchFlags {
        cluster,
        evaluated,
        kept: kept.as_deref_mut(),
        lag_receipts,
        evaluation,
    };
    lifecycle::reconcile(pool, &mut source, observed).await?;
    phases.mark("reconcile");
    if let Some(k) = kept {
        k.evaluations = k.evaluations.wrapping_add(1);
    }
    Ok(())
}

/// The watch's flags (groups' lag and freshness, topics' health, the
/// cluster's reachability) as the flags' lifecycle asks for them.
struct WatchFlags<'a> {
    cluster: &'a ClusterRow,
    evaluated: &'a BTreeSet<FlagKey>,
    /// What the sampler remembers of the receipts it wrote.
    kept: Option<&'a mut KeptFlags>,
    lag_receipts: Option<&'a Receipts<'a>>,
    /// This evaluation's number, for the receipts' turns.
    evaluation: u64,
}

#[async_trait]
impl FlagSource for WatchFlags<'_> {
    fn cluster(&self) -> (i64, &str) {
        (self.cluster.id, &self.cluster.name)
    }

    fn evaluated(&self, key: &FlagKey) -> bool {
        self.evaluated.contains(key)
    }

    /// Lag statuses are ordered, worst last (WARN, REWIND, STALL, STOP,
    /// LOST), and a fast SLO burn is worse than a slow one; the other
    /// rules have one kind each.
    fn worse(&self, _: &FlagKey, before: &str, now: &str) -> bool {
        match (Status::parse(before), Status::parse(now)) {
            (Some(before), Some(now)) => now > before,
            _ => streamkeeper::watch::slo::worse(before, now),
        }
    }

    /// Groups and topics go to their owner (`platform::ownership`: a
    /// group's claim, else a stream it reads), the rest (and anything
    /// unowned) to the platform team.
    async fn route(&self, pool: &PgPool, key: &FlagKey) -> Result<Option<Route>, Db> {
        match key.subject_kind.as_str() {
            "group" => {
                let owner = ownership::group(pool, self.cluster.id, &key.subject).await?;
                crate::flags::route_owner(pool, team_id(owner.flatten().as_ref())).await
            }
            "topic" => {
                let owner = ownership::stream(pool, self.cluster.id, &key.subject).await?;
                crate::flags::route_owner(pool, team_id(owner.as_ref())).await
            }
            _ => crate::flags::route_owner(pool, None).await,
        }
    }

    fn receipts(&self, o: &mut Observation) {
        if let Some(r) = self.lag_receipts {
            r.complete(o);
        }
    }

    fn rewrite(&mut self, id: i64, o: &mut Observation) -> bool {
        let write = match self.kept.as_deref_mut() {
            Some(k) => {
                let gist = match self.lag_receipts.and_then(|r| r.trouble(o)) {
                    Some(trouble) => trouble.gist(),
                    None => receipts::gist(&o.evidence),
                };
                let write =
                    receipts::rewrite(k.written.get(&id).copied(), gist, id, self.evaluation);
                if write {
                    k.written.insert(id, gist);
                }
                write
            }
            None => true,
        };
        if write {
            self.receipts(o);
        }
        write
    }

    /// Flags closed elsewhere (dismissed, say) are forgotten.
    fn standing(&mut self, ids: &HashSet<i64>) {
        if let Some(k) = self.kept.as_deref_mut() {
            k.written.retain(|id, _| ids.contains(id));
        }
    }
}
