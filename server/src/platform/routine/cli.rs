//! `streamkeeper routines`: each routine and target, as `GET /api/v1/routines`
//! lists them.

use crate::platform::cli::cli_principal;
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use std::process::ExitCode;

/// `streamkeeper routines`: every routine for every target, as
/// `GET /api/v1/routines` shows them.
pub async fn routines(pool: &PgPool) -> anyhow::Result<ExitCode> {
    let routines = crate::platform::routine::Routines::new(pool.clone());
    let who = cli_principal();
    let time = |t: Option<DateTime<Utc>>| {
        t.map_or("-".to_string(), |t| {
            t.format("%Y-%m-%d %H:%M:%S").to_string()
        })
    };
    println!(
        "{:<22} {:<16} {:<20} {:<10} {:<20} {:<28} error",
        "routine", "cluster", "last started", "outcome", "next due", "lease holder"
    );
    let mut page = streamkeeper::platform::page::PageRequest::new(Some(1), Some(200));
    loop {
        let p = routines.list(&who, None, page).await?;
        for r in &p.items {
            let outcome = match (&r.last_outcome, r.running) {
                (_, true) => "running",
                (Some(o), false) => o.as_str(),
                (None, false) => "-",
            };
            println!(
                "{:<22} {:<16} {:<20} {:<10} {:<20} {:<28} {}",
                r.routine,
                r.cluster.as_deref().unwrap_or("-"),
                time(r.last_started_at),
                outcome,
                time(r.next_due_at),
                r.holder.as_deref().unwrap_or("-"),
                r.last_error.as_deref().unwrap_or("")
            );
        }
        if !p.has_next() {
            break;
        }
        page.page += 1;
    }
    Ok(ExitCode::SUCCESS)
}
