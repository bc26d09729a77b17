//! `streamkeeper serve`: the web server and its routines, until Ctrl-C or
//! SIGTERM. On either it stops taking requests, lets the routines finish or
//! abandon their runs, releases their leases, and returns within about
//! nine seconds (within ten of the signal, with the runtime's own stop).

use crate::config::ServeConfig;
use crate::http::{AppState, router};
use crate::platform::limiter::LoginLimiter;
use crate::platform::routine::{
    Lease, Outcome, Record, Routine, RunError, RunResult, RunRetention, Runner, Scope, Spec, Target,
};
use async_trait::async_trait;
use serde_json::json;
use sqlx::PgPool;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tower_sessions::ExpiredDeletion;
use tower_sessions_sqlx_store::PostgresStore;

/// How long open connections may finish their requests after the signal.
const DRAIN: Duration = Duration::from_secs(6);
/// How long routines may take to stop after the signal.
const STOP_ROUTINES: Duration = Duration::from_secs(6);

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("could not listen on {addr} (STREAMKEEPER_BIND): {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// Every routine a replica runs.
fn routines(
    pool: &PgPool,
    config: &ServeConfig,
    sessions: &PostgresStore,
    limiter: &LoginLimiter,
    lineage: &Arc<crate::lineage::LineageService>,
) -> Vec<Arc<dyn Routine>> {
    let outbound = &config.outbound;
    let mut all: Vec<Arc<dyn Routine>> = vec![
        Arc::new(crate::watch::routine::Sampler::new(
            pool.clone(),
            outbound.credentials.clone(),
        )),
        Arc::new(crate::watch::routine::SampleHousekeeping::new(pool.clone())),
        Arc::new(crate::schemas::routine::Hygiene::new(
            pool.clone(),
            outbound.clone(),
        )),
        Arc::new(crate::connect::routine::Status::new(
            pool.clone(),
            outbound.clone(),
        )),
        Arc::new(crate::lineage::routine::KafkaIngest::new(
            lineage.clone(),
            outbound.credentials.clone(),
        )),
        Arc::new(crate::lineage::routine::Derive::new(lineage.clone())),
        Arc::new(crate::lineage::routine::Fold::new(lineage.clone())),
        Arc::new(ExpiredSessions(sessions.clone())),
        Arc::new(LimiterShrink(limiter.clone())),
        Arc::new(AuditHead(pool.clone())),
        Arc::new(RunRetention::new(pool.clone())),
    ];
    if let Some(url) = &config.lineage_forward {
        match crate::clients::openlineage::OpenLineageSender::new(outbound.egress, url.clone()) {
            Ok(sender) => all.push(Arc::new(crate::lineage::routine::Forward::new(
                pool.clone(),
                sender,
            ))),
            Err(e) => {
                tracing::error!(error = %e, "no HTTP client: derived lineage is not forwarded")
            }
        }
    }
    match crate::flags::routine::Deliveries::new(pool.clone(), outbound.egress) {
        Ok(d) => all.push(Arc::new(
            d.with_mail(config.smtp.clone().map(crate::clients::smtp::Smtp::new)),
        )),
        Err(e) => tracing::error!(error = %e, "no HTTP client: webhooks are not delivered"),
    }
    match crate::notify::routine::Notify::new(
        pool.clone(),
        config.public_url.to_string(),
        outbound.egress,
        outbound.credentials.clone(),
    ) {
        Ok(n) => all.push(Arc::new(
            n.with_mail(config.smtp.clone().map(crate::clients::smtp::Smtp::new)),
        )),
        Err(e) => tracing::error!(error = %e, "no HTTP client: channels are not notified"),
    }
    all
}

pub async fn serve(pool: PgPool, config: ServeConfig) -> Result<(), ServeError> {
    // Its table was made with the migrations (`db::migrate`).
    let store = PostgresStore::new(pool.clone());
    let bind = config.bind;
    let public = config.public_url.to_string();
    let mut runner = Runner::new(pool.clone());
    let state = AppState::with_runner(pool.clone(), config, Some(runner.health()));
    for r in routines(&pool, &state.config, &store, &state.limiter, &state.lineage) {
        runner.add(r);
    }
    let stopping = runner.stopping();
    tokio::spawn(signalled(stopping.clone()));
    state.db.spawn(&pool);
    // The first impact question should not wait for every edge to load.
    let lineage = state.lineage.clone();
    tokio::spawn(async move {
        if let Err(e) = lineage.warm().await {
            tracing::warn!(error = %e, "the lineage adjacency loads at the first question instead");
        }
    });

    let app = router(state, store);
    // Before the listener takes its file: the limit raised and read.
    let capacity = crate::http::listener::Capacity::of_this_process();
    let listener = match crate::http::listener::bind(bind) {
        Ok(l) => l,
        Err(source) => {
            runner.shutdown(STOP_ROUTINES).await;
            return Err(ServeError::Bind { addr: bind, source });
        }
    };
    tracing::info!(%bind, %public, holder = runner.holder(), connections = capacity.connections, "serving the console");
    let server = crate::http::listener::serve(listener, app, capacity, stopping.clone());
    tokio::pin!(server);
    tokio::select! {
        // Stopped with no connection left to drain.
        () = &mut server => {
            runner.shutdown(STOP_ROUTINES).await;
        }
        // Requests in flight and the routines stop side by side, each bounded.
        () = stopping.cancelled() => {
            let drain = async {
                if tokio::time::timeout(DRAIN, &mut server).await.is_err() {
                    tracing::warn!("requests still open {} s after the signal; closing", DRAIN.as_secs());
                }
            };
            tokio::join!(drain, runner.shutdown(STOP_ROUTINES));
        }
    }
    Ok(())
}

/// Cancels `stopping` on Ctrl-C or SIGTERM.
async fn signalled(stopping: CancellationToken) {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutting down");
    stopping.cancel();
}

/// Deletes expired sessions.
struct ExpiredSessions(PostgresStore);

#[async_trait]
impl Routine for ExpiredSessions {
    fn spec(&self) -> Spec {
        Spec {
            name: "sessions",
            scope: Scope::Global,
            lease: Lease::Exclusive,
            record: Record::EveryRun,
            every: Duration::from_secs(300),
        }
    }

    async fn run(&self, _: Target, _: &CancellationToken) -> RunResult {
        self.0
            .delete_expired()
            .await
            .map_err(|e| RunError::Internal(Box::new(e)))?;
        Ok(Outcome::Done(json!({})))
    }
}

/// Keeps the login limiter's memory bounded (each replica has its own).
struct LimiterShrink(LoginLimiter);

#[async_trait]
impl Routine for LimiterShrink {
    fn spec(&self) -> Spec {
        Spec {
            name: "limiter-shrink",
            scope: Scope::Global,
            lease: Lease::Everywhere,
            record: Record::EveryRun,
            every: Duration::from_secs(60),
        }
    }

    async fn run(&self, _: Target, _: &CancellationToken) -> RunResult {
        let kept = self.0.shrink();
        Ok(Outcome::Done(json!({ "keys_held": kept })))
    }
}

/// The audit log's head, exported where the database cannot rewrite it: a
/// log line every ten minutes (and at start) from each replica, for the log
/// collector to keep; `audit verify --expect-head` checks against it.
struct AuditHead(PgPool);

#[async_trait]
impl Routine for AuditHead {
    fn spec(&self) -> Spec {
        Spec {
            name: "audit-head",
            scope: Scope::Global,
            lease: Lease::Everywhere,
            record: Record::EveryRun,
            every: Duration::from_secs(600),
        }
    }

    async fn run(&self, _: Target, _: &CancellationToken) -> RunResult {
        if let Some(head) = crate::audit::store::head(&self.0).await? {
            tracing::info!(%head, "audit head");
        }
        Ok(Outcome::Done(json!({})))
    }
}
