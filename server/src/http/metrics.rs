//! `GET /metrics` (Prometheus, OpenMetrics text) and `GET /readyz` (for
//! load balancers and Kubernetes probes). `/metrics` needs a token with
//! the `metrics` scope (a scraper's token can do nothing else) or a
//! signed-in user; `/readyz` is public and says only which check failed.

use super::AppState;
use crate::platform::errors::Db;
use crate::platform::metrics::Scrape;
use crate::platform::rest::ApiError;
use axum::Json;
use axum::extract::{Extension, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use std::time::Duration;
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::Action;
use streamkeeper_app::error::AppError;

const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

pub async fn metrics(State(st): State<AppState>, Extension(who): Extension<Principal>) -> Response {
    match scrape(&st, &who).await {
        Ok(text) => ([(header::CONTENT_TYPE, OPENMETRICS)], text).into_response(),
        Err(e) => ApiError(e).into_response(),
    }
}

async fn scrape(st: &AppState, who: &Principal) -> Result<String, AppError> {
    crate::accounts::require(who, Action::Read, "read metrics")?;
    let pool = &st.pool;
    let mut s = Scrape::new(st.config.metrics_max_series);
    crate::watch::metrics::collect(pool, &mut s).await?;
    crate::flags::metrics::collect(pool, &mut s).await?;
    crate::connect::metrics::collect(pool, &mut s).await?;
    crate::platform::routine::metrics::collect(pool, &mut s)
        .await
        .map_err(Db::from)?;
    s.encode()
        .map_err(|e| crate::platform::errors::internal("encoding /metrics", e))
}

#[derive(Serialize)]
pub struct Readiness {
    ready: bool,
    database: String,
    migrations: String,
    routines: String,
}

/// How long each check may take: a probe that hangs is a probe that fails.
const CHECK: Duration = Duration::from_secs(2);

pub async fn readyz(State(st): State<AppState>) -> Response {
    let database = if st.db.now() == crate::platform::db_watch::Database::Down {
        // The watch saw it down: the pool would only wait out its timeout.
        Err("does not answer".to_string())
    } else {
        match tokio::time::timeout(CHECK, crate::platform::db::ping(&st.pool)).await {
            Ok(Ok(())) => Ok("ok".to_string()),
            Ok(Err(_)) => Err("does not answer".to_string()),
            Err(_) => Err(format!("no answer within {} s", CHECK.as_secs())),
        }
    };
    let migrations = match database {
        Err(_) => Err("not checked (no database)".to_string()),
        Ok(_) => {
            match tokio::time::timeout(CHECK, crate::platform::db::pending_migrations(&st.pool))
                .await
            {
                Ok(Ok(p)) if p.is_empty() => Ok("current".to_string()),
                Ok(Ok(p)) => Err(format!("{} not applied: {p:?}", p.len())),
                _ => Err("could not be read".to_string()),
            }
        }
    };
    let routines = match &st.runner {
        None => Err("not started".to_string()),
        Some(h) if h.stopping() => Err("stopping".to_string()),
        Some(h) if h.running() == 0 => Err("none running".to_string()),
        Some(h) => Ok(format!("{} running", h.running())),
    };
    let ready = database.is_ok() && migrations.is_ok() && routines.is_ok();
    let text = |r: Result<String, String>| r.unwrap_or_else(|e| e);
    let body = Readiness {
        ready,
        database: text(database),
        migrations: text(migrations),
        routines: text(routines),
    };
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(body)).into_response()
}
