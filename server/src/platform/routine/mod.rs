//! The routine runner: the server's background work (sampling, registry
//! hygiene, webhooks, housekeeping) as [`Routine`]s with a name, a scope
//! (once for the installation, or once per cluster), an interval and a
//! lease. The runner repeats each one, takes its Postgres lease first when
//! it is exclusive (so with several replicas each target runs on one at a
//! time, and another takes over within about an interval when a replica
//! dies), records every run (started, finished, outcome, error), logs a
//! failure and carries on, and on shutdown lets a run finish or abandons
//! it and releases its leases, so the next start takes them at once.
//!
//! Admins set a routine's schedule (another interval, a cron expression,
//! or paused) and ask for a run now; both are stored in Postgres, and every
//! replica's runner reads them every [`POLL`]: a new schedule takes effect
//! at the routine's next run, and a run-now request is claimed by one
//! replica in one statement, so it runs once however many replicas see it.

pub mod api;
pub mod cli;
mod handover;
pub mod metrics;
mod poll;
mod retention;
mod service;
mod share;
pub mod store;

pub use retention::RunRetention;
pub use service::{Routines, Trail};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use handover::{Forget, forget, over_share, shed};
use poll::poll;
use sqlx::PgPool;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use streamkeeper::platform::schedule::{Schedule, next_run};
/// The listing's shapes are the screens' (the page reads them back).
pub use streamkeeper_app::platform::model::{RoutineStatus, RunRequested};
use tokio::task::JoinSet;
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;
use tracing::instrument;

/// What a routine runs for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Once for the installation.
    Global,
    /// Once for each watched cluster (clusters added later included).
    PerCluster,
}

/// Whether replicas share the work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lease {
    /// One replica at a time runs it for a target: the holder of its lease.
    Exclusive,
    /// Every replica runs it (work of its own, or work claimed row by row).
    Everywhere,
}

/// Which runs leave a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record {
    /// Every run, its row open while it runs.
    EveryRun,
    /// Only runs that did something, written when they end: for routines
    /// that look often and mostly find nothing to do.
    WhenWorked,
}

/// What the runner needs to know of a routine.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    pub name: &'static str,
    pub scope: Scope,
    pub lease: Lease,
    pub record: Record,
    /// How often it runs, unless [`Routine::every`] says otherwise for a target.
    pub every: Duration,
}

/// One target of a routine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    Global,
    Cluster(i64),
}

impl Target {
    pub fn cluster_id(self) -> Option<i64> {
        match self {
            Target::Global => None,
            Target::Cluster(id) => Some(id),
        }
    }
}

/// How a run went, when it did not fail.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// It did its work; the detail (counts, say) is stored with the run.
    Done(serde_json::Value),
    /// There was nothing to do (no row is kept).
    Idle,
    /// It stopped at shutdown before finishing.
    Abandoned,
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A failure said in words an operator can act on (an unreachable
    /// cluster, a registry that refuses), stored with the run.
    #[error("{0}")]
    Failed(String),
    /// A failure whose text stays in the log (database text): the run's row
    /// holds a reference to the log line.
    #[error("{0}")]
    Internal(Box<dyn std::error::Error + Send + Sync>),
}

impl From<sqlx::Error> for RunError {
    fn from(e: sqlx::Error) -> Self {
        RunError::Internal(Box::new(e))
    }
}

impl From<crate::platform::errors::Db> for RunError {
    fn from(crate::platform::errors::Db(e): crate::platform::errors::Db) -> Self {
        e.into()
    }
}

pub type RunResult = Result<Outcome, RunError>;

#[async_trait]
pub trait Routine: Send + Sync + 'static {
    fn spec(&self) -> Spec;

    /// The interval for `target`, read before each run (the sampler's is
    /// the cluster's own).
    async fn every(&self, _target: Target) -> Duration {
        self.spec().every
    }

    /// One run. A run that can stop early watches `cancel` and returns
    /// [`Outcome::Abandoned`]; one that does not is dropped a few seconds
    /// after shutdown begins.
    async fn run(&self, target: Target, cancel: &CancellationToken) -> RunResult;
}

/// How often a per-cluster routine looks for clusters added or removed.
const RELIST: Duration = Duration::from_secs(10);
/// How often each runner reads the stored schedules and run-now requests.
pub const POLL: Duration = Duration::from_secs(2);
/// How long a run that does not watch the token may go on after shutdown
/// begins before it is dropped.
const ABANDON_AFTER: Duration = Duration::from_secs(3);
/// The longest the runner waits on the database while stopping.
const STOP_WRITES: Duration = Duration::from_secs(2);

/// How long a lease lasts: well under the interval (three fifths, within 1
/// to 30 seconds), so when its holder dies another replica takes over
/// within one interval. A live holder renews it every third of that, during
/// a run and between runs alike, so no replica takes a live holder's lease.
pub fn lease_ttl(every: Duration) -> Duration {
    (every * 3 / 5).clamp(Duration::from_secs(1), Duration::from_secs(30))
}

/// The name a replica holds leases under: the host (a pod's name) when the
/// environment says it, the process, and a random part.
fn holder_name() -> String {
    let host = std::env::var("HOSTNAME").unwrap_or_default();
    let me = format!(
        "{}-{}",
        std::process::id(),
        crate::platform::errors::reference()
    );
    if host.is_empty() {
        me
    } else {
        format!("{host}-{me}")
    }
}

struct Shared {
    pool: PgPool,
    holder: String,
    /// Routine tasks still running (a guard in each task counts it down,
    /// whether it returns or panics).
    alive: AtomicUsize,
    /// The stored schedules and pending run-now requests as last polled.
    stored: RwLock<Stored>,
    /// Bumped when what is stored changed, waking every routine's task.
    wake: tokio::sync::watch::Sender<u64>,
    /// How the per-cluster routines are shared out over the replicas.
    shares: share::Shares,
}

/// What the poller last read.
#[derive(Default, PartialEq)]
struct Stored {
    schedules: HashMap<String, Schedule>,
    /// (routine, cluster) with a request nobody has claimed.
    requests: HashSet<(String, Option<i64>)>,
}

impl Shared {
    fn schedule(&self, routine: &str) -> Schedule {
        self.stored
            .read()
            .ok()
            .and_then(|s| s.schedules.get(routine).cloned())
            .unwrap_or(Schedule::Default)
    }

    fn requested(&self, routine: &str, target: Target) -> bool {
        self.stored.read().is_ok_and(|s| {
            s.requests
                .contains(&(routine.to_string(), target.cluster_id()))
        })
    }

    /// When this replica next runs a routine whose own interval is `own`
    /// and whose last run here started at `last` (none: not yet).
    fn plan(&self, routine: &str, own: Duration, last: Option<DateTime<Utc>>) -> Option<Instant> {
        let now = Utc::now();
        next_run(&self.schedule(routine), own, last, now)
            .map(|at| Instant::now() + (at - now).to_std().unwrap_or_default())
    }
}

struct Alive(Arc<Shared>);

impl Drop for Alive {
    fn drop(&mut self) {
        self.0.alive.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What `/readyz` asks of a runner.
#[derive(Clone)]
pub struct Health {
    shared: Arc<Shared>,
    cancel: CancellationToken,
}

impl Health {
    /// Routine tasks running now.
    pub fn running(&self) -> usize {
        self.shared.alive.load(Ordering::SeqCst)
    }

    /// Whether shutdown has begun.
    pub fn stopping(&self) -> bool {
        self.cancel.is_cancelled()
    }
}

/// Runs routines until [`Runner::shutdown`].
pub struct Runner {
    shared: Arc<Shared>,
    cancel: CancellationToken,
    tasks: JoinSet<()>,
    /// The poller of schedules and requests, started with the first routine.
    poller: Option<tokio::task::JoinHandle<()>>,
}

impl Runner {
    pub fn new(pool: PgPool) -> Self {
        let holder = holder_name();
        Self {
            shared: Arc::new(Shared {
                pool,
                shares: share::Shares::new(holder.clone()),
                holder,
                alive: AtomicUsize::new(0),
                stored: RwLock::default(),
                wake: tokio::sync::watch::Sender::new(0),
            }),
            cancel: CancellationToken::new(),
            tasks: JoinSet::new(),
            poller: None,
        }
    }

    /// The name this runner holds its leases and records its runs under.
    pub fn holder(&self) -> &str {
        &self.shared.holder
    }

    /// Cancelled when shutdown begins (the web server stops on it too).
    pub fn stopping(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// What `/readyz` reads: how many routines run, and whether they stop.
    pub fn health(&self) -> Health {
        Health {
            shared: self.shared.clone(),
            cancel: self.cancel.clone(),
        }
    }

    /// Starts running `routine`: now, and then every interval.
    pub fn add(&mut self, routine: Arc<dyn Routine>) {
        if self.poller.is_none() {
            self.poller = Some(tokio::spawn(poll(self.shared.clone(), self.cancel.clone())));
        }
        let shared = self.shared.clone();
        let cancel = self.cancel.clone();
        shared.alive.fetch_add(1, Ordering::SeqCst);
        let alive = Alive(shared.clone());
        self.tasks.spawn(async move {
            let _alive = alive;
            let spec = routine.spec();
            let (scope, lease, record) = (
                match spec.scope {
                    Scope::Global => "global",
                    Scope::PerCluster => "cluster",
                },
                match spec.lease {
                    Lease::Exclusive => "exclusive",
                    Lease::Everywhere => "everywhere",
                },
                match spec.record {
                    Record::EveryRun => "every_run",
                    Record::WhenWorked => "when_worked",
                },
            );
            let registered =
                store::register(&shared.pool, spec.name, scope, lease, record, spec.every).await;
            if let Err(e) = registered {
                tracing::warn!(routine = spec.name, error = %e, "could not register the routine");
            }
            match spec.scope {
                Scope::Global => keep(shared, routine, Target::Global, cancel).await,
                Scope::PerCluster => supervise(shared, routine, cancel).await,
            }
        });
    }

    /// Stops every routine: a run that watches the token abandons its pass,
    /// another gets a few seconds to finish; then this runner's leases are
    /// released and its open runs closed as abandoned. Returns within about
    /// `within` plus two seconds of database writes.
    pub async fn shutdown(mut self, within: Duration) {
        self.cancel.cancel();
        let drained = tokio::time::timeout(within, async {
            while self.tasks.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            tracing::warn!(
                "routines still running {} s after shutdown began; stopping them",
                within.as_secs()
            );
            self.tasks.abort_all();
        }
        if let Some(poller) = self.poller.take() {
            poller.abort();
        }
        let pool = &self.shared.pool;
        let holder = &self.shared.holder;
        match tokio::time::timeout(STOP_WRITES, async {
            let released = store::release(pool, holder).await?;
            let abandoned = store::abandon_open(pool, holder).await?;
            store::replicas::gone(pool, holder).await?;
            Ok::<_, sqlx::Error>((released, abandoned))
        })
        .await
        {
            Ok(Ok((released, abandoned))) => {
                tracing::info!(released, abandoned, "routines stopped, leases released");
            }
            Ok(Err(e)) => tracing::warn!(error = %e, "could not release the routine leases"),
            Err(_) => {
                tracing::warn!("the database did not answer; routine leases lapse by themselves")
            }
        }
    }
}

/// Runs a per-cluster routine for every cluster, starting it for clusters
/// added later and stopping it for clusters removed.
async fn supervise(shared: Arc<Shared>, routine: Arc<dyn Routine>, cancel: CancellationToken) {
    let mut running: HashMap<i64, CancellationToken> = HashMap::new();
    let mut tasks = JoinSet::new();
    loop {
        match store::cluster_ids(&shared.pool).await {
            Ok(ids) => {
                running.retain(|id, token| {
                    let kept = ids.contains(id);
                    if !kept {
                        token.cancel();
                    }
                    kept
                });
                for id in ids {
                    running.entry(id).or_insert_with(|| {
                        let token = cancel.child_token();
                        tasks.spawn(keep(
                            shared.clone(),
                            routine.clone(),
                            Target::Cluster(id),
                            token.clone(),
                        ));
                        token
                    });
                }
            }
            Err(e) => {
                tracing::error!(routine = routine.spec().name, error = %e, "cannot list clusters")
            }
        }
        while tasks.try_join_next().is_some() {}
        tokio::select! {
            () = cancel.cancelled() => break,
            () = tokio::time::sleep(RELIST) => {}
        }
    }
    while tasks.join_next().await.is_some() {}
}

/// Sleeps until `at`, or for ever when there is no next run (paused).
async fn until(at: Option<Instant>) {
    match at {
        Some(at) => sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// One routine for one target, until cancelled: at each run its stored
/// schedule says is due (or a run-now request), take the lease (when
/// exclusive) and run, renewing the lease between runs. When another
/// replica holds it, look again when it lapses, so a dead holder's work
/// moves at once. A changed schedule or a new request wakes it.
async fn keep(
    shared: Arc<Shared>,
    routine: Arc<dyn Routine>,
    target: Target,
    cancel: CancellationToken,
) {
    let spec = routine.spec();
    let _forget = Forget {
        shared: shared.clone(),
        routine: spec.name,
        target,
    };
    let mut wake = shared.wake.subscribe();
    if *wake.borrow_and_update() == 0 {
        tokio::select! {
            () = cancel.cancelled() => return,
            _ = wake.changed() => {}
        }
    }
    let mut own = spec.every;
    // The start of this replica's last run of it, which intervals count from.
    let mut last: Option<DateTime<Utc>> = None;
    let mut next = shared.plan(spec.name, own, last);
    let mut held: Option<Duration> = None;
    // Since when this replica, at its share, has left the target to others.
    let mut declined: Option<Instant> = None;
    // When the lease of a target this replica handed over lapses.
    let mut handed: Option<Instant> = None;
    loop {
        // Until the next run or a request; a holder keeps its lease alive meanwhile.
        let mut asked = false;
        loop {
            let renew = held.map(|ttl| Instant::now() + ttl / 3);
            tokio::select! {
                biased;
                () = cancel.cancelled() => return,
                () = until(next) => break,
                changed = wake.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    next = shared.plan(spec.name, own, last);
                    if shared.requested(spec.name, target) {
                        asked = true;
                        break;
                    }
                }
                () = until(renew) => {
                    let ttl = held.unwrap_or_default();
                    let claim = store::claim(
                        &shared.pool,
                        spec.name,
                        target.cluster_id(),
                        &shared.holder,
                        ttl,
                    )
                    .await;
                    shared.shares.noted(spec.name, target, &claim);
                    match claim {
                        Ok(store::Claim::Ours) => {}
                        Ok(store::Claim::Theirs { .. }) => held = None,
                        // The next claim tells whether it is still ours.
                        Err(e) => tracing::warn!(routine = spec.name, ?target, error = %e, "could not renew the lease"),
                    }
                }
            }
        }
        let started = Utc::now();
        own = routine.every(target).await;
        let schedule = shared.schedule(spec.name);
        // The time to the run after this one (none while paused), and the
        // interval the lease is sized by.
        let gap = next_run(&schedule, own, Some(started), started)
            .map(|at| (at - started).to_std().unwrap_or_default());
        let every = gap.unwrap_or(own);
        next = gap.map(|g| Instant::now() + g);
        let asked = asked || shared.requested(spec.name, target);
        if schedule == Schedule::Paused && !asked {
            // A paused routine's lease lapses: a run-now goes to whichever
            // replica takes it first.
            held = None;
            forget(&shared, spec.name, target);
            continue;
        }
        if spec.lease == Lease::Exclusive {
            let ttl = lease_ttl(every);
            // A target handed over is left to the others until a little
            // after its lease lapses; taken back only if nobody took it.
            if let Some(back) = handed.map(|at| at + ttl / 4) {
                if Instant::now() < back {
                    next = Some(back);
                    continue;
                }
                handed = None;
            }
            if let Some(wait) = over_share(&shared, spec.name, target, ttl, &mut declined).await {
                next = Some(Instant::now() + wait);
                continue;
            }
            let claim = store::claim(
                &shared.pool,
                spec.name,
                target.cluster_id(),
                &shared.holder,
                ttl,
            )
            .await;
            shared.shares.noted(spec.name, target, &claim);
            held = matches!(claim, Ok(store::Claim::Ours)).then_some(ttl);
            match claim {
                Ok(store::Claim::Ours) => {}
                Ok(store::Claim::Theirs { left }) => {
                    // The holder runs what was asked; this replica looks
                    // again a little after the lease lapses, so the
                    // holder's renewal (if it is alive) comes first.
                    let lapses =
                        Instant::now() + left.unwrap_or(every) + Duration::from_millis(100);
                    next = Some(next.map_or(lapses, |n| n.min(lapses)));
                    continue;
                }
                Err(e) => {
                    tracing::error!(routine = spec.name, ?target, error = %e, "routine lease");
                    continue;
                }
            }
        }
        if asked {
            // One replica takes each request; the one that does not, and
            // was not due anyway, goes back to its schedule.
            let claimed =
                store::claim_request(&shared.pool, spec.name, target.cluster_id(), &shared.holder)
                    .await;
            match claimed {
                Ok(Some(id)) => {
                    tracing::info!(
                        routine = spec.name,
                        ?target,
                        request = id,
                        "running now, as asked"
                    );
                }
                other => {
                    if let Err(e) = other {
                        tracing::warn!(routine = spec.name, error = %e, "could not claim a run-now request");
                    }
                    let due =
                        next_run(&schedule, own, last, started).is_some_and(|at| at <= started);
                    if !due {
                        next = shared.plan(spec.name, own, last);
                        continue;
                    }
                }
            }
        }
        last = Some(started);
        let began = Instant::now();
        run_once(&shared, &*routine, spec, target, every, gap, &cancel).await;
        let rest = every.saturating_sub(began.elapsed());
        if held.is_some() && shed(&shared, spec.name, target, rest).await {
            held = None;
            handed = Some(Instant::now() + rest);
        }
    }
}

/// One run, recorded and logged; the lease is renewed while it lasts.
#[instrument(skip_all, fields(routine, cluster))]
async fn run_once(
    shared: &Shared,
    routine: &dyn Routine,
    spec: Spec,
    target: Target,
    every: Duration,
    next_in: Option<Duration>,
    cancel: &CancellationToken,
) {
    let span = tracing::Span::current();
    span.record("routine", spec.name);
    if let Some(id) = target.cluster_id() {
        span.record("cluster", id);
    }
    let pool = &shared.pool;
    let cluster_id = target.cluster_id();
    let exclusive = spec.lease == Lease::Exclusive;
    let started = Utc::now();
    let row = match spec.record {
        Record::WhenWorked => None,
        Record::EveryRun => {
            match store::start_run(pool, spec.name, cluster_id, &shared.holder, exclusive).await {
                Ok(id) => Some(id),
                Err(e) => {
                    tracing::error!(error = %e, "could not record the run");
                    None
                }
            }
        }
    };

    let ttl = lease_ttl(every);
    let mut renew = tokio::time::interval_at(Instant::now() + ttl / 3, ttl / 3);
    let abandon = async {
        cancel.cancelled().await;
        tokio::time::sleep(ABANDON_AFTER).await;
    };
    tokio::pin!(abandon);
    let work = routine.run(target, cancel);
    tokio::pin!(work);
    let result = loop {
        tokio::select! {
            r = &mut work => break r,
            () = &mut abandon => break Ok(Outcome::Abandoned),
            _ = renew.tick(), if exclusive => {
                match store::claim(pool, spec.name, cluster_id, &shared.holder, ttl).await {
                    Ok(store::Claim::Ours) => {}
                    Ok(store::Claim::Theirs { .. }) => {
                        tracing::warn!("another replica took the lease during a run");
                    }
                    Err(e) => tracing::warn!(error = %e, "could not renew the lease"),
                }
            }
        }
    };

    let (outcome, error, detail) = match result {
        Ok(Outcome::Idle) => {
            if let Some(id) = row
                && let Err(e) = store::delete_run(pool, id).await
            {
                tracing::warn!(error = %e, "could not drop an idle run");
            }
            return;
        }
        Ok(Outcome::Done(detail)) => {
            tracing::debug!(%detail, "routine ran");
            ("ok", None, detail)
        }
        Ok(Outcome::Abandoned) => {
            tracing::info!("routine run abandoned at shutdown");
            ("abandoned", None, serde_json::json!({}))
        }
        Err(RunError::Failed(why)) => {
            tracing::warn!(error = %why, "routine run failed");
            ("failed", Some(why), serde_json::json!({}))
        }
        Err(RunError::Internal(e)) => {
            let reference = crate::platform::errors::reference();
            tracing::error!(%reference, error = %e, "routine run failed");
            (
                "failed",
                Some(format!("internal error; see the log under {reference}")),
                serde_json::json!({}),
            )
        }
    };
    let finished = store::Finished {
        outcome,
        error: error.as_deref(),
        detail: &detail,
        next_in,
    };
    let stored = match row {
        Some(id) => store::finish_run(pool, id, &finished).await,
        None if spec.record == Record::WhenWorked => {
            store::record_run(
                pool,
                spec.name,
                cluster_id,
                &shared.holder,
                started,
                &finished,
            )
            .await
        }
        None => Ok(()),
    };
    if let Err(e) = stored {
        tracing::error!(error = %e, "could not record the run");
    }
}

#[cfg(test)]
mod tests {
    use super::lease_ttl;
    use std::time::Duration;

    #[test]
    fn a_lease_is_three_fifths_of_its_interval_within_one_to_thirty_seconds() {
        let s = Duration::from_secs;
        assert_eq!(lease_ttl(s(1)), s(1));
        assert_eq!(lease_ttl(s(5)), s(3));
        assert_eq!(lease_ttl(s(15)), s(9));
        assert_eq!(lease_ttl(s(3600)), s(30));
        // Shorter than the interval wherever the interval is over a second.
        assert!((2..7200).all(|n| lease_ttl(s(n)) < s(n)));
    }
}
