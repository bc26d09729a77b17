//! The routine runner's part of `/metrics`: runs of the last hour by
//! outcome, and each routine's latest run (how long, whether it failed,
//! when), so "the sampler has not finished a pass in 10 minutes" is an
//! alert rule.

use super::store;
use crate::platform::metrics::{Labels, Scrape};
use sqlx::PgPool;

fn target(routine: String, cluster: Option<String>) -> Labels {
    vec![
        ("routine", routine),
        ("cluster_name", cluster.unwrap_or_default()),
    ]
}

pub async fn collect(pool: &PgPool, scrape: &mut Scrape) -> Result<(), sqlx::Error> {
    let runs = scrape.gauges(
        "streamkeeper_routine_runs_last_hour",
        "Runs started in the last hour, by routine, cluster (empty for a global routine) and outcome",
    );
    for r in store::runs_last_hour(pool).await? {
        let mut l = target(r.routine, r.cluster);
        l.push(("outcome", r.outcome));
        runs.set(l, r.n as f64);
    }
    let took = scrape.gauges(
        "streamkeeper_routine_last_run_duration_seconds",
        "How long the routine's latest finished run took",
    );
    let failed = scrape.gauges(
        "streamkeeper_routine_last_run_failed",
        "1 when the routine's latest finished run failed or was abandoned, else 0",
    );
    let when = scrape.gauges(
        "streamkeeper_routine_last_run_timestamp_seconds",
        "When the routine's latest run finished (Unix time)",
    );
    let shares = super::share::listing(pool).await?;
    scrape
        .gauges(
            "streamkeeper_replicas_alive",
            "Replicas that wrote a heartbeat in the last few seconds",
        )
        .set(vec![], shares.alive as f64);
    scrape
        .gauges(
            "streamkeeper_routine_fair_share",
            "The most clusters of a per-cluster routine one replica takes: clusters / live replicas, rounded up",
        )
        .set(vec![], shares.fair_share as f64);
    let held = scrape.gauges(
        "streamkeeper_routine_replica_clusters",
        "Clusters a live replica holds the lease of, by routine",
    );
    for r in shares.replicas.into_iter().filter(|r| r.alive) {
        for h in r.held {
            held.set(
                vec![("routine", h.routine), ("replica", r.replica.clone())],
                h.clusters as f64,
            );
        }
    }
    for r in store::last_runs(pool).await? {
        let l = target(r.routine, r.cluster);
        took.set(l.clone(), r.seconds);
        failed.set(l.clone(), f64::from(u8::from(r.outcome != "ok")));
        when.set(l, r.finished_at.timestamp_millis() as f64 / 1000.0);
    }
    Ok(())
}
