//! Per-cluster routines shared out over replicas on one Postgres: with
//! two replicas and four clusters each holds two within three intervals;
//! a third that joins takes its share within three intervals; one that
//! stops leaves its clusters to the others; and through it all no cluster
//! is sampled twice at once nor left unsampled for more than an interval.

mod support;

use async_trait::async_trait;
use axum::http::{Method, StatusCode};
use sqlx::PgPool;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use streamkeeper::accounts::role::Role;
use streamkeeper::accounts::token::Scope as TokenScope;
use streamkeeper_server::platform::routine::{
    Lease, Outcome, Record, Routine, RunResult, Runner, Scope, Spec, Target,
};
use support::TestApp;
use tokio_util::sync::CancellationToken;

const EVERY: Duration = Duration::from_secs(3);
const NAME: &str = "shared-pass";

/// One run as a replica saw it: which replica, which cluster, when.
#[derive(Debug, Clone)]
struct Pass {
    replica: &'static str,
    cluster: i64,
    start: Instant,
    end: Instant,
}

/// A pass that takes a little while, logged with the replica that ran it.
struct Sampler {
    replica: &'static str,
    log: Arc<Mutex<Vec<Pass>>>,
}

#[async_trait]
impl Routine for Sampler {
    fn spec(&self) -> Spec {
        Spec {
            name: NAME,
            scope: Scope::PerCluster,
            lease: Lease::Exclusive,
            record: Record::EveryRun,
            every: EVERY,
        }
    }

    async fn run(&self, t: Target, _: &CancellationToken) -> RunResult {
        let start = Instant::now();
        tokio::time::sleep(Duration::from_millis(150)).await;
        if let Target::Cluster(cluster) = t {
            self.log.lock().expect("log").push(Pass {
                replica: self.replica,
                cluster,
                start,
                end: Instant::now(),
            });
        }
        Ok(Outcome::Done(serde_json::json!({})))
    }
}

async fn clusters(pool: &PgPool, n: usize) -> Vec<i64> {
    let mut ids = vec![];
    for i in 0..n {
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO clusters (name, bootstrap, security_protocol)
             VALUES ($1, '127.0.0.1:1', 'PLAINTEXT') RETURNING id",
        )
        .bind(format!("c{i}"))
        .fetch_one(pool)
        .await
        .expect("cluster");
        ids.push(id);
    }
    ids
}

fn replica(pool: &PgPool, name: &'static str, log: &Arc<Mutex<Vec<Pass>>>) -> Runner {
    let mut r = Runner::new(pool.clone());
    r.add(Arc::new(Sampler {
        replica: name,
        log: log.clone(),
    }));
    r
}

/// Live leases of the routine per holder.
async fn shares(pool: &PgPool) -> HashMap<String, i64> {
    sqlx::query_as::<_, (String, i64)>(
        "SELECT holder, count(*) FROM routine_leases
          WHERE routine = $1 AND expires_at > now() GROUP BY holder",
    )
    .bind(NAME)
    .fetch_all(pool)
    .await
    .expect("leases")
    .into_iter()
    .collect()
}

/// Waits up to `within` for every cluster to be held with each of
/// `replicas` holding between `low` and `high`; the shares last seen.
async fn balanced(
    pool: &PgPool,
    within: Duration,
    replicas: usize,
    (low, high): (i64, i64),
) -> (bool, HashMap<String, i64>) {
    let end = Instant::now() + within;
    loop {
        let s = shares(pool).await;
        let even = s.len() == replicas
            && s.values().sum::<i64>() == 4
            && s.values().all(|n| (low..=high).contains(n));
        if even || Instant::now() >= end {
            return (even, s);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// No cluster run twice at once; no gap between a cluster's runs over an
/// interval (plus the run's own time and a scheduling margin).
fn never_twice_never_late(log: &[Pass]) {
    let mut by: HashMap<i64, Vec<&Pass>> = HashMap::new();
    for p in log {
        by.entry(p.cluster).or_default().push(p);
    }
    for (cluster, mut passes) in by {
        passes.sort_by_key(|p| p.start);
        for w in passes.windows(2) {
            assert!(
                w[1].start >= w[0].end,
                "cluster {cluster} run twice at once: {:?} and {:?}",
                w[0],
                w[1]
            );
            let gap = w[1].start - w[0].start;
            assert!(
                gap <= EVERY + Duration::from_millis(400),
                "cluster {cluster} unsampled for {gap:?} ({} then {})",
                w[0].replica,
                w[1].replica
            );
        }
    }
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn replicas_share_the_clusters_and_a_newcomer_takes_its_share(pool: PgPool) {
    clusters(&pool, 4).await;
    let log: Arc<Mutex<Vec<Pass>>> = Arc::default();
    let a = replica(&pool, "a", &log);
    let b = replica(&pool, "b", &log);

    let (even, s) = balanced(&pool, EVERY * 3, 2, (2, 2)).await;
    assert!(even, "two replicas hold two clusters each: {s:?}");
    assert!(s.contains_key(a.holder()) && s.contains_key(b.holder()));

    // A third joins: 4 over 3 is 2, 1, 1 — the newcomer has work.
    let c = replica(&pool, "c", &log);
    let (even, s) = balanced(&pool, EVERY * 3, 3, (1, 2)).await;
    assert!(even, "the newcomer takes its share: {s:?}");
    assert!(s.get(c.holder()).is_some_and(|n| *n >= 1), "{s:?}");
    // And it stays so: nobody keeps moving clusters about.
    let moves = |log: &[Pass]| {
        let mut last: HashMap<i64, &str> = HashMap::new();
        log.iter()
            .filter(|p| {
                last.insert(p.cluster, p.replica)
                    .is_some_and(|r| r != p.replica)
            })
            .count()
    };
    // (The newcomer's first run ends a little after its lease is seen.)
    tokio::time::sleep(EVERY).await;
    let before = moves(&log.lock().expect("log"));
    shown_to_admins_only(&pool, [a.holder(), b.holder(), c.holder()]).await;
    tokio::time::sleep(EVERY * 2).await;
    assert_eq!(
        moves(&log.lock().expect("log")),
        before,
        "the shares settle"
    );

    // One stops: the other two take its clusters, at most two each.
    c.shutdown(Duration::from_secs(2)).await;
    let (even, s) = balanced(&pool, EVERY * 2, 2, (2, 2)).await;
    assert!(even, "a stopped replica's clusters are taken over: {s:?}");
    tokio::time::sleep(EVERY).await;
    a.shutdown(Duration::from_secs(2)).await;
    b.shutdown(Duration::from_secs(2)).await;

    never_twice_never_late(&log.lock().expect("log"));
    let replicas: i64 = sqlx::query_scalar("SELECT count(*) FROM routine_replicas")
        .fetch_one(&pool)
        .await
        .expect("replicas");
    assert_eq!(replicas, 0, "stopped replicas leave no heartbeat behind");
}

/// The shares as an admin reads them (API, page, `/metrics`); others are
/// refused.
async fn shown_to_admins_only(pool: &PgPool, holders: [&str; 3]) {
    let t = TestApp::new(pool.clone()).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let viewer = t.user("vic", &[Role::Viewer]).await;
    let r = t
        .api(
            Method::GET,
            "/api/v1/routines/replicas",
            &t.token(admin).await,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let j = r.json();
    assert_eq!(
        (j["clusters"].as_u64(), j["alive"].as_u64()),
        (Some(4), Some(3)),
        "{j}"
    );
    assert_eq!(j["fair_share"], 2);
    for h in holders {
        let row = j["replicas"]
            .as_array()
            .and_then(|rs| rs.iter().find(|r| r["replica"] == h))
            .unwrap_or_else(|| panic!("{h} listed: {j}"));
        assert_eq!(row["alive"], true);
        assert_eq!(row["version"], env!("CARGO_PKG_VERSION"));
        let held = row["held"][0]["clusters"].as_u64().unwrap_or(0);
        assert!((1..=2).contains(&held), "{h} holds its share: {j}");
    }
    let r = t
        .api(
            Method::GET,
            "/metrics",
            &t.token_with(admin, &[TokenScope::Metrics]).await,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let held = r
        .body
        .lines()
        .filter(|l| l.starts_with("streamkeeper_routine_replica_clusters{"))
        .count();
    assert_eq!(held, 3, "one series a live replica: {}", r.body);
    assert!(
        r.body.contains("streamkeeper_replicas_alive 3"),
        "{}",
        r.body
    );
    let r = t
        .api(
            Method::GET,
            "/api/v1/routines/replicas",
            &t.token(viewer).await,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);

    let cookie = t.login("ada", support::PASSWORD).await.expect("signed in");
    let page = t.get("/settings/routines", Some(&cookie)).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body
            .contains("3 replicas alive; 4 clusters: each takes at most 2"),
        "{}",
        page.body
    );
    assert!(page.body.contains(holders[2]), "the newcomer is listed");
}
