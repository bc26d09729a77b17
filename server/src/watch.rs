//! The sampler routine: one task a cluster, each pass read-only, passes
//! never overlapping, one slow or dead cluster never delaying another. A
//! lease in Postgres makes one replica sample each cluster at a time;
//! another takes over when it expires.

use crate::flagger::{self, PassResult};
use crate::kafka::reader::{self, Reading};
use crate::kafka::settings::{ClusterSettings, SecretRef};
use crate::store::clusters::{self as store, ClusterRow};
use crate::store::samples;
use chrono::Utc;
use sqlx::PgPool;
use std::collections::HashMap;
use std::time::Duration;
use streamkeeper::credential::CredentialPolicy;
use tokio::task::JoinHandle;
use tokio::time::Instant;

const ROUTINE: &str = "sample";

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
    // Requests time out well inside the interval, so a pass ends before the
    // next one is due.
    let interval = u64::try_from(c.interval_s).unwrap_or(15);
    s.timeout = Duration::from_millis((interval * 400).clamp(2_000, 10_000));
    Ok(s)
}

/// A pass still reading from an earlier tick (librdkafka calls cannot be
/// cancelled; we wait for them instead of starting another).
type Pending = JoinHandle<Result<Reading, reader::ReadError>>;

/// Runs one pass for a cluster and stores what it read, or the gap.
pub async fn pass(
    pool: &PgPool,
    c: &ClusterRow,
    credentials: &CredentialPolicy,
    pending: &mut Option<Pending>,
) -> PassOutcome {
    let started = Utc::now();
    if pending.as_ref().is_some_and(|h| !h.is_finished()) {
        return fail(
            pool,
            c,
            started,
            "the previous pass is still running".into(),
        )
        .await;
    }
    let settings = match settings_of(c, credentials) {
        Ok(s) => s,
        Err(e) => return fail(pool, c, started, format!("settings: {e}")).await,
    };
    let known = match store::known_topics(pool, c.id).await {
        Ok(k) => k,
        Err(e) => return PassOutcome::Failed(format!("database: {e}")),
    };
    let budget = Duration::from_secs(u64::try_from(c.interval_s).unwrap_or(15)) * 4 / 5;
    let handle = tokio::task::spawn_blocking(move || reader::read(&settings, &known));
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
                format!("the pass took longer than {} s", budget.as_secs()),
            )
            .await
        }
        Some(Err(e)) => fail(pool, c, started, format!("the reader crashed: {e}")).await,
        Some(Ok(Err(e))) => fail(pool, c, started, e.to_string()).await,
        Some(Ok(Ok(reading))) => match store::record_reading(pool, c.id, &reading).await {
            Ok(samples) => {
                if let Err(e) = flagger::after_pass(pool, c, PassResult::Read(&reading)).await {
                    tracing::error!(cluster = %c.name, error = %e, "could not update flags");
                }
                PassOutcome::Stored {
                    samples,
                    problems: reading.problems.len(),
                }
            }
            Err(e) => PassOutcome::Failed(format!("storing the pass failed: {e}")),
        },
    }
}

async fn fail(
    pool: &PgPool,
    c: &ClusterRow,
    started: chrono::DateTime<Utc>,
    why: String,
) -> PassOutcome {
    tracing::warn!(cluster = %c.name, reason = %why, "pass failed");
    if let Err(e) = store::record_failure(pool, c.id, started, &why).await {
        tracing::error!(cluster = %c.name, error = %e, "could not record a failed pass");
    }
    if let Err(e) = flagger::after_pass(pool, c, PassResult::Failed(&why)).await {
        tracing::error!(cluster = %c.name, error = %e, "could not update flags");
    }
    PassOutcome::Failed(why)
}

async fn watch_cluster(pool: PgPool, id: i64, holder: String, credentials: CredentialPolicy) {
    let mut pending = None;
    loop {
        let tick = Instant::now();
        let cluster = match store::by_id(&pool, id).await {
            Ok(Some(c)) => c,
            Ok(None) => return, // removed
            Err(e) => {
                tracing::error!(cluster = id, error = %e, "cannot load cluster");
                tokio::time::sleep(Duration::from_secs(5)).await;
                continue;
            }
        };
        let interval = Duration::from_secs(u64::try_from(cluster.interval_s).unwrap_or(15));
        let lease_s = i64::from(cluster.interval_s) * 3;
        match store::lease(&pool, ROUTINE, id, &holder, lease_s).await {
            Ok(true) => {
                let outcome = pass(&pool, &cluster, &credentials, &mut pending).await;
                tracing::debug!(cluster = %cluster.name, ?outcome, "pass");
            }
            Ok(false) => {}
            Err(e) => tracing::error!(cluster = id, error = %e, "lease"),
        }
        tokio::time::sleep_until(tick + interval).await;
    }
}

/// Hourly: day partitions for the samples to come, and retention (see
/// `store::samples` for how long each resolution is kept). Logs and
/// carries on: a failure here never stops sampling, since the default
/// partition takes rows no day partition does.
async fn housekeeping(pool: &PgPool) {
    let now = Utc::now();
    if let Err(e) = samples::ensure_partitions(pool, now).await {
        tracing::error!(error = %e, "could not create sample partitions");
    }
    match samples::expire(pool, now).await {
        Ok(gone) => tracing::debug!(?gone, "expired old samples"),
        Err(e) => tracing::error!(error = %e, "could not expire old samples"),
    }
}

/// Starts a watcher for every cluster, and for clusters added later.
pub fn spawn(pool: PgPool, credentials: CredentialPolicy) -> JoinHandle<()> {
    let holder = format!("{}-{}", std::process::id(), crate::errors::reference());
    tokio::spawn(async move {
        let mut running: HashMap<i64, JoinHandle<()>> = HashMap::new();
        let mut last_expiry: Option<Instant> = None;
        loop {
            if last_expiry.is_none_or(|t| t.elapsed() > Duration::from_secs(3600)) {
                housekeeping(&pool).await;
                last_expiry = Some(Instant::now());
            }
            match store::all(&pool).await {
                Ok(clusters) => {
                    running.retain(|_, h| !h.is_finished());
                    for c in clusters {
                        running.entry(c.id).or_insert_with(|| {
                            tokio::spawn(watch_cluster(
                                pool.clone(),
                                c.id,
                                holder.clone(),
                                credentials.clone(),
                            ))
                        });
                    }
                }
                Err(e) => tracing::error!(error = %e, "cannot list clusters"),
            }
            tokio::time::sleep(Duration::from_secs(10)).await;
        }
    })
}
