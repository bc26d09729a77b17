//! The sampler routine: one task a cluster (the routine runner's), each
//! pass read-only, passes never overlapping, one slow or dead cluster never
//! delaying another. The runner's lease makes one replica sample each
//! cluster at a time; another takes over when it lapses.

use crate::clients::kafka::probe;
use crate::clients::kafka::progress::Progress;
use crate::clients::kafka::reader::{self, Reading};
use crate::clients::kafka::settings::{ClusterSettings, SecretRef};
use crate::platform::db::{begin, commit};
use crate::platform::routine::{
    Lease, Outcome, Record, Routine, RunError, RunResult, Scope, Spec, Target,
};
use crate::watch::judge::{self, PassResult};
use crate::watch::kept::KeptWindow;
use crate::watch::store::samples;
use crate::watch::store::{self as store, ClusterRow};
use async_trait::async_trait;
use chrono::Utc;
use serde_json::json;
use sqlx::PgPool;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;
use streamkeeper::platform::credential::CredentialPolicy;
use streamkeeper::watch::cluster::{HISTORY_DAYS, purge_cutoff};
use streamkeeper::watch::reach::Unreachable;
use streamkeeper::watch::sign_in;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How a pass ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PassOutcome {
    Stored { samples: usize, problems: usize },
    Failed(String),
}

/// A cluster's settings, its credential references checked against the
/// policy (at every use: a reference stored under an older policy is
/// refused now).
pub fn settings_of(c: &ClusterRow, policy: &CredentialPolicy) -> Result<ClusterSettings, String> {
    let reference = |r: &Option<String>| {
        r.as_deref()
            .map(|r| SecretRef::checked(r, policy))
            .transpose()
    };
    let mut s = ClusterSettings::new(
        &c.bootstrap,
        c.security_protocol.parse().map_err(|e| format!("{e}"))?,
        c.sasl_mechanism
            .as_deref()
            .map(str::parse)
            .transpose()
            .map_err(|e| format!("{e}"))?,
        reference(&c.username_ref).map_err(|e| format!("{e}"))?,
        reference(&c.password_ref).map_err(|e| format!("{e}"))?,
        c.insecure_credentials,
    )
    .map_err(|e| e.to_string())?;
    s.ca = reference(&c.ca_ref).map_err(|e| format!("{e}"))?;
    // Requests time out well inside the interval, so a pass ends before the
    // next one is due.
    let interval = u64::try_from(c.interval_s).unwrap_or(15);
    s.timeout = Duration::from_millis((interval * 400).clamp(2_000, 10_000));
    Ok(s)
}

/// A pass still reading from an earlier tick (librdkafka calls cannot be
/// cancelled; we wait for them instead of starting another).
type Pending = JoinHandle<Result<Reading, reader::ReadError>>;

/// Runs one pass for a cluster and stores what it read, or the gap; the
/// pass goes into `kept`, the cluster's window in memory, too.
pub async fn pass(
    pool: &PgPool,
    c: &ClusterRow,
    credentials: &CredentialPolicy,
    pending: &mut Option<Pending>,
    kept: &mut KeptWindow,
) -> PassOutcome {
    let started = Utc::now();
    if pending.as_ref().is_some_and(|h| !h.is_finished()) {
        return fail(
            pool,
            c,
            started,
            "the previous pass is still running".into(),
            kept,
        )
        .await;
    }
    let settings = match settings_of(c, credentials) {
        Ok(s) => s,
        Err(e) => return fail(pool, c, started, format!("settings: {e}"), kept).await,
    };
    let known = match store::known_topics(pool, c.id).await {
        Ok(k) => k,
        Err(e) => return PassOutcome::Failed(format!("database: {e}")),
    };
    let last_of = match store::last_message_targets(pool, c.id).await {
        Ok(l) => l,
        Err(e) => return PassOutcome::Failed(format!("database: {e}")),
    };
    let budget = Duration::from_secs(u64::try_from(c.interval_s).unwrap_or(15)) * 4 / 5;
    let probed = settings.clone();
    let progress = Progress::default();
    let watched = progress.clone();
    let handle = tokio::task::spawn_blocking(move || {
        reader::read_watched(&settings, &known, &last_of, &watched)
    });
    let deadline = Instant::now() + budget;
    let mut handle = handle;
    let result = tokio::select! {
        joined = &mut handle => Some(joined),
        () = tokio::time::sleep_until(deadline) => None,
    };
    match result {
        None => {
            *pending = Some(handle);
            fail(
                pool,
                c,
                started,
                format!(
                    "the pass took longer than {} s ({})",
                    budget.as_secs(),
                    progress.held_by()
                ),
                kept,
            )
            .await
        }
        Some(Err(e)) => fail(pool, c, started, format!("the reader crashed: {e}"), kept).await,
        Some(Ok(Err(e))) => {
            let why = failure(probed, e).await;
            let why = match why {
                Failure::Refused(cause, why) => refused(pool, c, started, cause, &why).await,
                Failure::Other(why) => why,
            };
            fail(pool, c, started, why, kept).await
        }
        Some(Ok(Ok(reading))) => match store::record_reading(pool, c.id, &reading).await {
            Ok(stored) => {
                kept.push_read(stored.pass_id, reading.finished, &stored.samples);
                if let Err(e) = judge::after_pass(pool, c, PassResult::Read(&reading), kept).await {
                    tracing::error!(cluster = %c.name, error = %e, "could not update flags");
                }
                PassOutcome::Stored {
                    samples: stored.samples.len(),
                    problems: reading.problems.len(),
                }
            }
            // Nothing was stored, so the memory still matches the store.
            Err(e) => PassOutcome::Failed(format!("storing the pass failed: {e}")),
        },
    }
}

/// Why a read failed: a refused sign-in (its cause and what the read
/// said), or anything else, as the pass's record says it.
enum Failure {
    Refused(Unreachable, String),
    Other(String),
}

/// Why a read failed. The read's own error says only that the cluster
/// could not be reached; for a cluster that signs in, one metadata
/// request's reasons say whether the broker refused the sign-in, which is
/// then said first: a flagged cause to fix, not an outage. librdkafka's
/// reasons name no secret.
async fn failure(settings: ClusterSettings, e: reader::ReadError) -> Failure {
    if !settings.protocol.sasl() || !matches!(e, reader::ReadError::Unreachable(_)) {
        return Failure::Other(e.to_string());
    }
    let mut settings = settings;
    // A refusal answers at once; a hung broker must not hold the pass.
    settings.timeout = settings.timeout.min(Duration::from_secs(2));
    let attempt = tokio::task::spawn_blocking(move || probe::attempt(&settings)).await;
    match attempt {
        Ok(Err(reasons)) => match Unreachable::of(&reasons) {
            why @ (Unreachable::Authentication | Unreachable::Mechanism) => {
                Failure::Refused(why, e.to_string())
            }
            _ => Failure::Other(e.to_string()),
        },
        _ => Failure::Other(e.to_string()),
    }
}

/// A refused sign-in's problem, since the first refusal after the
/// cluster's last read (this pass's start when it is the first; the
/// store's answer failing, too: the time is then late, not lost). The
/// first refusal is audited: the cluster's state changed for a cause
/// someone must fix.
async fn refused(
    pool: &PgPool,
    c: &ClusterRow,
    started: chrono::DateTime<Utc>,
    cause: Unreachable,
    error: &str,
) -> String {
    // Audited only when the store says none was refused before: an
    // answer that failed says nothing, and auditing then would repeat.
    let (first, is_first) = match store::first_refused_since_read(pool, c.id).await {
        Ok(first) => (first, first.is_none()),
        Err(e) => {
            tracing::error!(cluster = %c.name, error = %e, "cannot read since when sign-in is refused");
            (None, false)
        }
    };
    let since = first.unwrap_or(started);
    let why = sign_in::refused_problem(since, cause.sentence(), error);
    if is_first && let Err(e) = audit_refusal(pool, c, since, cause).await {
        tracing::error!(cluster = %c.name, error = %e, "could not audit a refused sign-in");
    }
    why
}

async fn audit_refusal(
    pool: &PgPool,
    c: &ClusterRow,
    since: chrono::DateTime<Utc>,
    cause: Unreachable,
) -> Result<(), crate::platform::errors::Db> {
    let mut tx = begin(pool).await?;
    crate::audit::store::append(
        &mut tx,
        crate::audit::store::Event {
            actor: "streamkeeper",
            action: "cluster.sign_in_refused",
            target: format!("cluster:{}", c.name),
            // The cause and the mechanism, never the login.
            detail: json!({
                "id": c.id,
                "since": since,
                "cause": cause,
                "mechanism": c.sasl_mechanism,
            }),
            source: "sample",
        },
    )
    .await?;
    commit(tx).await
}

async fn fail(
    pool: &PgPool,
    c: &ClusterRow,
    started: chrono::DateTime<Utc>,
    why: String,
    kept: &mut KeptWindow,
) -> PassOutcome {
    match store::record_failure(pool, c.id, started, &why).await {
        Ok(id) => kept.push_failed(id),
        // Whether or not the row went in, the next evaluation compares the
        // store's pass ids with the memory's and reads the window back.
        Err(e) => tracing::error!(cluster = %c.name, error = %e, "could not record a failed pass"),
    }
    if let Err(e) = judge::after_pass(pool, c, PassResult::Failed(&why), kept).await {
        tracing::error!(cluster = %c.name, error = %e, "could not update flags");
    }
    PassOutcome::Failed(why)
}

/// The sampler as a routine: one pass a cluster each interval (the
/// cluster's own), on the replica holding the cluster's lease.
pub struct Sampler {
    pool: PgPool,
    credentials: CredentialPolicy,
    /// Per cluster, a read still going on from an earlier pass.
    pending: Mutex<HashMap<i64, Pending>>,
    /// Per cluster, its window of recent passes (see `watch::kept`).
    kept: Mutex<HashMap<i64, KeptWindow>>,
}

impl Sampler {
    pub fn new(pool: PgPool, credentials: CredentialPolicy) -> Self {
        Self {
            pool,
            credentials,
            pending: Mutex::new(HashMap::new()),
            kept: Mutex::new(HashMap::new()),
        }
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<i64, Pending>> {
        // A poisoned map only holds join handles: still good to use.
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, HashMap<i64, KeptWindow>> {
        // A poisoned map holds windows checked against the store before
        // each use: still good to use.
        self.kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[async_trait]
impl Routine for Sampler {
    fn spec(&self) -> Spec {
        Spec {
            name: "sample",
            scope: Scope::PerCluster,
            lease: Lease::Exclusive,
            record: Record::EveryRun,
            every: Duration::from_secs(15),
        }
    }

    async fn every(&self, target: Target) -> Duration {
        let Some(id) = target.cluster_id() else {
            return self.spec().every;
        };
        match store::by_id(&self.pool, id).await {
            Ok(Some(c)) => Duration::from_secs(u64::try_from(c.interval_s).unwrap_or(15)),
            Ok(None) => self.spec().every,
            Err(e) => {
                tracing::error!(cluster = id, error = %e, "cannot load cluster");
                self.spec().every
            }
        }
    }

    async fn run(&self, target: Target, cancel: &CancellationToken) -> RunResult {
        let Some(id) = target.cluster_id() else {
            return Ok(Outcome::Idle);
        };
        let Some(cluster) = store::by_id(&self.pool, id).await? else {
            self.kept().remove(&id);
            return Ok(Outcome::Idle); // removed
        };
        let mut pending = self.pending().remove(&id);
        // Taken out for the pass and put back after it: a pass abandoned
        // half-way drops it, and the next reads the window from Postgres.
        let mut kept = self.kept().remove(&id).unwrap_or_default();
        // On shutdown the pass stops waiting: its read cannot be cancelled
        // and ends with the process.
        let outcome = tokio::select! {
            o = pass(&self.pool, &cluster, &self.credentials, &mut pending, &mut kept) => o,
            () = cancel.cancelled() => return Ok(Outcome::Abandoned),
        };
        if let Some(p) = pending {
            self.pending().insert(id, p);
        }
        self.kept().insert(id, kept);
        match outcome {
            PassOutcome::Stored { samples, problems } => Ok(Outcome::Done(
                json!({ "samples": samples, "problems": problems }),
            )),
            PassOutcome::Failed(why) => Err(RunError::Failed(why)),
        }
    }
}

/// Hourly: day partitions for the samples to come, and retention (see
/// `store::samples` for how long each resolution is kept), which purges
/// the clusters removed longer ago than their history is kept. A failure
/// here never stops sampling, since the default partition takes rows no
/// day partition does.
pub struct SampleHousekeeping {
    pool: PgPool,
}

impl SampleHousekeeping {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

#[async_trait]
impl Routine for SampleHousekeeping {
    fn spec(&self) -> Spec {
        Spec {
            name: "sample-housekeeping",
            scope: Scope::Global,
            lease: Lease::Exclusive,
            record: Record::EveryRun,
            every: Duration::from_secs(3600),
        }
    }

    async fn run(&self, _: Target, _: &CancellationToken) -> RunResult {
        let now = Utc::now();
        // Both halves run even when the first fails.
        let made = samples::ensure_partitions(&self.pool, now).await;
        let gone = samples::expire(&self.pool, now).await?;
        let purged = purge_removed(&self.pool, now).await?;
        made?;
        Ok(Outcome::Done(json!({
            "partitions_dropped": gone.partitions,
            "rollup_rows_deleted": gone.rollup_rows,
            "clusters_purged": purged,
        })))
    }
}

/// Deletes the clusters removed longer ago than their history is kept,
/// with everything recorded of them, each purge audited in the same
/// transaction. Returns their names.
pub async fn purge_removed(
    pool: &PgPool,
    now: chrono::DateTime<Utc>,
) -> Result<Vec<String>, crate::platform::errors::Db> {
    let mut tx = begin(pool).await?;
    let gone = store::purge_removed(&mut tx, purge_cutoff(now)).await?;
    for c in &gone {
        crate::audit::store::append(
            &mut tx,
            crate::audit::store::Event {
                actor: "streamkeeper",
                action: "cluster.purge",
                target: format!("cluster:{}", c.name),
                detail: json!({
                    "id": c.id,
                    "bootstrap": c.bootstrap,
                    "removed_at": c.removed_at,
                    "removed_by": c.removed_by,
                    "kept_days": HISTORY_DAYS,
                }),
                source: "sample-housekeeping",
            },
        )
        .await?;
    }
    commit(tx).await?;
    Ok(gone.into_iter().map(|c| c.name).collect())
}
