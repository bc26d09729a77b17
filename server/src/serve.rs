//! `streamkeeper serve`: the web server and its housekeeping tasks, until
//! Ctrl-C or SIGTERM.

use crate::config::ServeConfig;
use crate::web::{AppState, router};
use sqlx::PgPool;
use std::net::SocketAddr;
use std::time::Duration;
use tower_sessions::ExpiredDeletion;
use tower_sessions_sqlx_store::PostgresStore;

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("could not listen on {addr} (STREAMKEEPER_BIND): {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("the server stopped: {0}")]
    Io(#[from] std::io::Error),
}

pub async fn serve(pool: PgPool, config: ServeConfig) -> Result<(), ServeError> {
    // Its table was made with the migrations (`db::migrate`).
    let store = PostgresStore::new(pool.clone());
    let bind = config.bind;
    let public = config.public_url.to_string();
    let pool_for_watch = pool.clone();
    let outbound = config.outbound.clone();
    let state = AppState::new(pool, config);

    // Housekeeping that logs and carries on: expired sessions, and the
    // login limiter's memory.
    tokio::spawn(
        store
            .clone()
            .continuously_delete_expired(Duration::from_secs(300)),
    );
    let limiter = state.limiter.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(60));
        loop {
            tick.tick().await;
            let kept = limiter.shrink();
            tracing::debug!(kept, "sign-in throttle keys held");
        }
    });

    // The audit log's head, exported where the database cannot rewrite
    // it: a log line every ten minutes (and at start) for the log
    // collector to keep; `audit verify --expect-head` checks against it.
    let pool_for_head = pool_for_watch.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(600));
        loop {
            tick.tick().await;
            match crate::store::audit::head(&pool_for_head).await {
                Ok(Some(head)) => tracing::info!(%head, "audit head"),
                Ok(None) => {}
                Err(e) => tracing::warn!(error = %e, "could not read the audit head"),
            }
        }
    });

    crate::notify::spawn(pool_for_watch.clone(), outbound.egress);
    crate::hygiene::spawn(pool_for_watch.clone(), outbound.clone());
    crate::watch::spawn(pool_for_watch, outbound.credentials);
    let app = router(state, store);
    let listener = tokio::net::TcpListener::bind(bind)
        .await
        .map_err(|source| ServeError::Bind { addr: bind, source })?;
    tracing::info!(%bind, %public, "serving the console");
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown())
    .await?;
    Ok(())
}

async fn shutdown() {
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
}
