//! The OpenLineage Kafka transport, read: per cluster whose
//! `lineage_topic` is set, a member of the consumer group [`GROUP`] drains
//! the topic, stores each batch through the same writer as HTTP ingest and
//! only then commits its offsets. A crash between the two loses nothing
//! (the offsets were not committed, so the records come again) and stores
//! nothing twice (an event already stored has the same canonical hash).
//! A record that is not an event Streamkeeper can store is noted in
//! `lineage_rejected`, logged and skipped: it never holds up its partition.
//!
//! Every replica runs it ([`Lease::Everywhere`]): the group's coordinator,
//! not a lease, shares the partitions among them, and hands a dead
//! replica's partitions to the others.
//!
//! [`Derive`] is the other routine here: it emits the derived events
//! (`streamkeeper::lineage::derived`) for the groups the sampler saw and
//! the connectors the Connect status routine read.

use super::store::{self, RejectedRecord};
use super::{Accepted, LineageService, Refused, Stored, accept_one};
use crate::clients::kafka::group_consumer::{GroupConsumer, Record as KafkaRecord};
use crate::platform::routine::{
    Lease, Outcome, Record, Routine, RunError, RunResult, Scope, Spec, Target,
};
use async_trait::async_trait;
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use streamkeeper::lineage::graph::Provenance;
use streamkeeper::platform::credential::CredentialPolicy;
use tokio_util::sync::CancellationToken;

/// The consumer group Streamkeeper joins on a cluster's lineage topic: the
/// only group it ever joins (docs/security.md).
pub const GROUP: &str = "streamkeeper-lineage";

/// The routine's name, and the sender its events are stored under.
pub const NAME: &str = "lineage-kafka";

/// Records taken per batch (one writer transaction, one commit).
pub const MAX_BATCH: usize = 500;

/// How long one run drains before it lets the runner look again (the
/// topic's cluster settings may have changed).
const RUN_FOR: Duration = Duration::from_secs(5);

/// A member of the group on one cluster, and what it was joined with.
struct Joined {
    topic: String,
    bootstrap: String,
    consumer: GroupConsumer,
}

pub struct KafkaIngest {
    lineage: Arc<LineageService>,
    credentials: CredentialPolicy,
    max_batch: usize,
    joined: Mutex<HashMap<i64, Joined>>,
}

impl KafkaIngest {
    pub fn new(lineage: Arc<LineageService>, credentials: CredentialPolicy) -> Self {
        Self::with_batch(lineage, credentials, MAX_BATCH)
    }

    /// With batches of at most `max_batch` records.
    pub fn with_batch(
        lineage: Arc<LineageService>,
        credentials: CredentialPolicy,
        max_batch: usize,
    ) -> Self {
        KafkaIngest {
            lineage,
            credentials,
            max_batch: max_batch.max(1),
            joined: Mutex::new(HashMap::new()),
        }
    }

    fn take(&self, cluster: i64) -> Option<Joined> {
        self.joined
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&cluster)
    }

    fn put(&self, cluster: i64, j: Joined) {
        self.joined
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(cluster, j);
    }
}

/// What one batch came to.
#[derive(Default)]
struct Tally {
    records: usize,
    stored: usize,
    duplicates: usize,
    rejected: usize,
}

/// Why a record is skipped, or the event it holds.
fn read_record(r: &KafkaRecord, cluster: i64) -> Result<Accepted, String> {
    let Some(value) = &r.value else {
        return Err("the record has no value".into());
    };
    match accept_one(value) {
        Ok(received) => Ok(Accepted {
            received,
            provenance: Provenance::Observed,
            sender: NAME.into(),
            source: format!("kafka:{cluster}"),
        }),
        Err(e) => Err(e.to_string()),
    }
}

impl KafkaIngest {
    /// Stores one batch, notes its rejects, then commits it. Any failure
    /// before the commit leaves the batch to be read again.
    async fn batch(
        &self,
        cluster: i64,
        j: &Joined,
        records: &[KafkaRecord],
        tally: &mut Tally,
    ) -> Result<(), RunError> {
        let mut events = Vec::new();
        let mut reasons = Vec::new();
        for r in records {
            match read_record(r, cluster) {
                Ok(a) => events.push(a),
                Err(why) => {
                    tracing::warn!(
                        cluster,
                        topic = %j.topic,
                        partition = r.partition,
                        offset = r.offset,
                        reason = %why,
                        "skipping a lineage record that is not a storable event"
                    );
                    reasons.push((r, why));
                }
            }
        }
        for result in self.lineage.ingest(events).await {
            match result {
                Ok(Stored::New) => tally.stored += 1,
                Ok(Stored::Duplicate) => tally.duplicates += 1,
                Err(Refused::Store(e)) => {
                    return Err(RunError::Internal(Box::new(std::io::Error::other(
                        e.to_string(),
                    ))));
                }
                Err(e) => return Err(RunError::Failed(e.to_string())),
            }
        }
        let rejected: Vec<RejectedRecord> = reasons
            .iter()
            .map(|(r, why)| RejectedRecord {
                partition: r.partition,
                offset: r.offset,
                bytes: r
                    .value
                    .as_ref()
                    .map_or(0, |v| i32::try_from(v.len()).unwrap_or(i32::MAX)),
                reason: why,
            })
            .collect();
        store::reject_records(self.lineage.pool(), cluster, &j.topic, &rejected).await?;
        j.consumer
            .commit(records)
            .await
            .map_err(|e| RunError::Failed(format!("committing the lineage offsets: {e}")))?;
        tally.records += records.len();
        tally.rejected += rejected.len();
        Ok(())
    }
}

#[async_trait]
impl Routine for KafkaIngest {
    fn spec(&self) -> Spec {
        Spec {
            name: NAME,
            scope: Scope::PerCluster,
            lease: Lease::Everywhere,
            record: Record::WhenWorked,
            every: Duration::from_secs(1),
        }
    }

    async fn run(&self, target: Target, cancel: &CancellationToken) -> RunResult {
        let Some(cluster) = target.cluster_id() else {
            return Ok(Outcome::Idle);
        };
        let pool = self.lineage.pool();
        let mut joined = self.take(cluster);
        let Some(topic) = store::lineage_topic(pool, cluster).await? else {
            // Off (or turned off): leave the group.
            return Ok(Outcome::Idle);
        };
        let Some(row) = crate::watch::store::by_id(pool, cluster).await? else {
            return Ok(Outcome::Idle);
        };
        if joined
            .as_ref()
            .is_some_and(|j| j.topic != topic || j.bootstrap != row.bootstrap)
        {
            joined = None;
        }
        let j = match joined {
            Some(j) => j,
            None => {
                let settings = crate::watch::routine::settings_of(&row, &self.credentials)
                    .map_err(RunError::Failed)?;
                let consumer = GroupConsumer::join(&settings, GROUP, &topic)
                    .map_err(|e| RunError::Failed(e.to_string()))?;
                Joined {
                    topic,
                    bootstrap: row.bootstrap.clone(),
                    consumer,
                }
            }
        };
        let started = tokio::time::Instant::now();
        let mut tally = Tally::default();
        while !cancel.is_cancelled() && started.elapsed() < RUN_FOR {
            let records = match j
                .consumer
                .next_batch(
                    self.max_batch,
                    Duration::from_millis(500),
                    Duration::from_millis(20),
                )
                .await
            {
                Ok(r) => r,
                Err(e) => return Err(RunError::Failed(format!("reading {}: {e}", j.topic))),
            };
            if records.is_empty() {
                break;
            }
            // On failure the member is dropped: the next run joins again
            // and reads from the last commit.
            self.batch(cluster, &j, &records, &mut tally).await?;
        }
        self.put(cluster, j);
        if tally.records == 0 {
            return Ok(Outcome::Idle);
        }
        Ok(Outcome::Done(json!({
            "records": tally.records,
            "stored": tally.stored,
            "duplicates": tally.duplicates,
            "rejected": tally.rejected,
        })))
    }
}

/// The derive routine's name, and the sender its events are stored under.
pub const DERIVE: &str = "lineage-derive";

/// Emits a derived event for each consumer group the sampler saw reading
/// topics and each connector its worker lists, and stores them through the
/// ingest writer as derived. An unchanged group or connector within the
/// hour is the same event, stored once.
pub struct Derive {
    lineage: Arc<LineageService>,
}

impl Derive {
    pub fn new(lineage: Arc<LineageService>) -> Self {
        Derive { lineage }
    }

    /// The derived events of what is known now.
    async fn events(&self) -> Result<(Vec<Accepted>, usize), RunError> {
        use streamkeeper::connect::lineage::{kafka_namespace, lineage};
        use streamkeeper::lineage::derived;
        let pool = self.lineage.pool();
        let mut values = Vec::new();
        for g in store::seen_groups(pool).await? {
            let ns = kafka_namespace(&g.bootstrap);
            values.push(derived::group(&ns, &g.name, &g.topics, g.last_seen));
        }
        let mut unreadable = 0;
        for c in store::seen_connectors(pool).await? {
            let read = streamkeeper::connect::config::Config::from_value(&c.config)
                .map_err(|e| e.to_string())
                .and_then(|config| lineage(&config, &c.bootstrap).map_err(|e| e.to_string()));
            match read {
                Ok(l) => values.push(derived::connector(&c.connect, &c.name, &l, c.seen_at)),
                Err(why) => {
                    // Its config names no datasets we can read: nothing to say.
                    tracing::debug!(connector = %c.name, reason = %why, "no derived lineage");
                    unreadable += 1;
                }
            }
        }
        let mut out = Vec::with_capacity(values.len());
        for v in values {
            match streamkeeper::lineage::receive::receive_value(v) {
                Ok(received) => out.push(Accepted {
                    received,
                    provenance: Provenance::Derived,
                    sender: DERIVE.into(),
                    source: "derived".into(),
                }),
                // A name the event rules refuse (it came from a broker or a
                // worker, not from us): skipped, as a producer's would be.
                Err(e) => {
                    tracing::warn!(error = %e, "a derived lineage event was refused");
                    unreadable += 1;
                }
            }
        }
        Ok((out, unreadable))
    }
}

#[async_trait]
impl Routine for Derive {
    fn spec(&self) -> Spec {
        Spec {
            name: DERIVE,
            scope: Scope::Global,
            lease: Lease::Exclusive,
            record: Record::WhenWorked,
            every: Duration::from_secs(60),
        }
    }

    async fn run(&self, _: Target, cancel: &CancellationToken) -> RunResult {
        let (events, unreadable) = self.events().await?;
        let (mut stored, mut known) = (0usize, 0usize);
        let mut rest = events;
        while !rest.is_empty() {
            if cancel.is_cancelled() {
                return Ok(Outcome::Abandoned);
            }
            let tail = rest.split_off(rest.len().min(super::MAX_BATCH));
            for r in self
                .lineage
                .ingest(std::mem::replace(&mut rest, tail))
                .await
            {
                match r {
                    Ok(Stored::New) => stored += 1,
                    Ok(Stored::Duplicate) => known += 1,
                    Err(e) => {
                        return Err(RunError::Failed(format!("storing derived lineage: {e}")));
                    }
                }
            }
        }
        if stored == 0 {
            return Ok(Outcome::Idle);
        }
        Ok(Outcome::Done(json!({
            "stored": stored,
            "unchanged": known,
            "unreadable": unreadable,
        })))
    }
}

/// The forward routine's name.
pub const FORWARD: &str = "lineage-forward";

/// Events sent per run at most.
const FORWARD_BATCH: i64 = 200;

/// Forwards each derived event to the configured OpenLineage endpoint, in
/// the order stored; a failure is retried after 2, 4, 8 … seconds (at most
/// an hour apart), so an endpoint that is down gets everything once back.
pub struct Forward {
    pool: sqlx::PgPool,
    sender: crate::clients::openlineage::OpenLineageSender,
}

impl Forward {
    pub fn new(pool: sqlx::PgPool, sender: crate::clients::openlineage::OpenLineageSender) -> Self {
        Forward { pool, sender }
    }
}

/// Seconds before the next attempt after `attempts` failed ones.
fn backoff_s(attempts: i32) -> f64 {
    2f64.powi(attempts.clamp(1, 12)).min(3600.0)
}

#[async_trait]
impl Routine for Forward {
    fn spec(&self) -> Spec {
        Spec {
            name: FORWARD,
            scope: Scope::Global,
            lease: Lease::Exclusive,
            record: Record::WhenWorked,
            every: Duration::from_secs(5),
        }
    }

    async fn run(&self, _: Target, cancel: &CancellationToken) -> RunResult {
        let due = store::forward_due(&self.pool, FORWARD_BATCH).await?;
        if due.is_empty() {
            return Ok(Outcome::Idle);
        }
        let (mut sent, mut failed) = (0usize, 0usize);
        for d in due {
            if cancel.is_cancelled() {
                break;
            }
            match self.sender.send(&d.body).await {
                Ok(()) => {
                    store::forward_attempted(&self.pool, d.event_id, None, 0.0).await?;
                    sent += 1;
                }
                Err(why) => {
                    let wait = backoff_s(d.attempts + 1);
                    store::forward_attempted(&self.pool, d.event_id, Some(&why), wait).await?;
                    failed += 1;
                    // The endpoint is likely down for the rest too: try them later.
                    break;
                }
            }
        }
        Ok(Outcome::Done(json!({ "sent": sent, "failed": failed })))
    }
}

/// The fold routine's name.
pub const FOLD: &str = "lineage-fold";

/// How long one run folds before it lets the runner record it and look
/// again (a row a run, not one per batch; the next run starts at once,
/// its interval being shorter).
const FOLD_FOR: Duration = Duration::from_secs(5);

/// How long a run with nothing to fold waits before it looks again, when
/// no append here woke it (another replica's appends, a restart's
/// leftovers).
const FOLD_LOOK: Duration = Duration::from_millis(100);

/// Folds stored events into the graph behind ingest ([`super::fold`]),
/// on every replica, one at a time: a replica that finds another holding
/// the fold's turn looks again later. A run folds for up to [`FOLD_FOR`],
/// woken by each append here, and records how many it folded and which
/// events it could not.
pub struct Fold {
    lineage: Arc<LineageService>,
}

impl Fold {
    pub fn new(lineage: Arc<LineageService>) -> Self {
        Fold { lineage }
    }
}

#[async_trait]
impl Routine for Fold {
    fn spec(&self) -> Spec {
        Spec {
            name: FOLD,
            scope: Scope::Global,
            lease: Lease::Everywhere,
            record: Record::WhenWorked,
            every: Duration::from_secs(1),
        }
    }

    async fn run(&self, _target: Target, cancel: &CancellationToken) -> RunResult {
        let fold = self.lineage.fold();
        let started = tokio::time::Instant::now();
        let (mut folded, mut failed) = (0usize, Vec::new());
        while !cancel.is_cancelled() {
            let round = fold.round(0..=i64::MAX, false).await.map_err(|e| match e {
                super::fold::FoldError::Db(e) => RunError::from(e),
                other => RunError::Failed(other.to_string()),
            })?;
            folded += round.taken - round.failed.len();
            failed.extend(round.failed);
            fold.measure().await?;
            if started.elapsed() >= FOLD_FOR {
                break;
            }
            if round.taken == 0 {
                tokio::select! {
                    () = fold.woken() => {}
                    () = tokio::time::sleep(FOLD_LOOK) => {}
                    () = cancel.cancelled() => {}
                }
            }
        }
        if folded == 0 && failed.is_empty() {
            return Ok(Outcome::Idle);
        }
        // The events' ids, for an admin to look up; the reasons are in
        // `lineage_fold_failures` (and the log).
        Ok(Outcome::Done(json!({
            "folded": folded,
            "failed": failed.len(),
            "failedEvents": failed.iter().take(20).collect::<Vec<_>>(),
        })))
    }
}
