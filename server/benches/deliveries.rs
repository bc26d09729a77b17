//! A burst of flags delivered to a local webhook receiver: each delivery
//! claimed, posted and recorded on its own (one short transaction each).
//!
//! ```sh
//! source scripts/lib.sh && start_postgres /tmp/pgbench 55433
//! DATABASE_URL=postgres://postgres@127.0.0.1:55433/postgres \
//!   cargo bench -p streamkeeper-server --bench deliveries -- 1000
//! ```
//! Argument: flags in the burst (1,000 unless given). One pass raises them
//! all (one lag flag a group, each to a team with a webhook), then the
//! deliveries routine's pass runs until none is due, as one replica would
//! every second. Prints the pass that raised them, the time to deliver the
//! burst and deliveries per second; the target is a burst of 1,000 within
//! 10 s. Works in a database of its own, dropped at the end.

#[path = "support/db.rs"]
mod bench_db;

use bench_db::BenchDb;
use serde_json::json;
use sqlx::PgPool;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;
use streamkeeper::flags::{FlagKey, Observation};
use streamkeeper::platform::egress::EgressPolicy;
use streamkeeper_server::clients::webhook::Webhooks;
use streamkeeper_server::flags::lifecycle::{self, FlagSource, Route};
use streamkeeper_server::flags::routine::deliver_due;
use streamkeeper_server::platform::errors::Db;

/// Every flag to one team, every group looked at.
struct Burst {
    cluster: i64,
    route: Route,
}

#[async_trait::async_trait]
impl FlagSource for Burst {
    fn cluster(&self) -> (i64, &str) {
        (self.cluster, "bench")
    }
    fn evaluated(&self, _: &FlagKey) -> bool {
        true
    }
    fn worse(&self, _: &FlagKey, _: &str, _: &str) -> bool {
        false
    }
    async fn route(&self, _: &PgPool, _: &FlagKey) -> Result<Option<Route>, Db> {
        Ok(Some(self.route.clone()))
    }
    fn receipts(&self, _: &mut Observation) {}
}

#[tokio::main]
async fn main() {
    let base = std::env::var("DATABASE_URL").expect("DATABASE_URL (see the top of this file)");
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(1_000);
    let db = BenchDb::create(&base, "deliveries", 20).await;
    let pool = db.pool.clone();

    let got = Arc::new(AtomicUsize::new(0));
    let counter = got.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            let counter = counter.clone();
            async move {
                counter.fetch_add(1, Ordering::Relaxed);
                "ok"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });

    let cluster: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s, insecure_credentials)
         VALUES ('bench', '127.0.0.1:9092', 'PLAINTEXT', 15, true) RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .expect("cluster");
    let team: i64 =
        sqlx::query_scalar("INSERT INTO teams (name, webhook_url) VALUES ('t', $1) RETURNING id")
            .bind(&url)
            .fetch_one(&pool)
            .await
            .expect("team");
    let mut burst = Burst {
        cluster,
        route: (team, "t".into(), Some(url)),
    };
    let now = chrono::Utc::now().timestamp_millis();
    let observed = (0..n)
        .map(|i| Observation {
            key: FlagKey {
                subject_kind: "group".into(),
                subject: format!("group-{i}"),
                rule: "lag".into(),
            },
            kind: "STOP".into(),
            reason: "no progress".into(),
            onset_ms: now,
            evidence: json!({"rule": "bench"}),
        })
        .collect();
    let raised = Instant::now();
    lifecycle::reconcile(&pool, &mut burst, observed)
        .await
        .expect("raise");
    let raised = raised.elapsed();

    let hooks = Webhooks::new(EgressPolicy::LOOPBACK).expect("webhooks");
    let started = Instant::now();
    let mut passes = 0;
    while deliver_due(&pool, &hooks).await.expect("deliver") > 0 {
        passes += 1;
    }
    let took = started.elapsed();
    let delivered = got.load(Ordering::Relaxed);
    println!(
        "raised {n} flags in one pass: {:.2} s",
        raised.as_secs_f64()
    );
    println!(
        "delivered {delivered} in {:.2} s over {passes} routine passes: {:.0} deliveries/s (target: 1,000 within 10 s)",
        took.as_secs_f64(),
        delivered as f64 / took.as_secs_f64()
    );
    assert_eq!(delivered, n, "each flag delivered once");
    db.drop().await;
}
