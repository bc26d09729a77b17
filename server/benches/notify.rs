//! A burst of flags in one pass, told to five channels of one team
//! (Slack, Teams, PagerDuty, Alertmanager, a signed webhook) on local
//! doubles that keep each receiver's contract.
//!
//! ```sh
//! source scripts/lib.sh && start_postgres /tmp/pgbench 55433
//! DATABASE_URL=postgres://postgres@127.0.0.1:55433/postgres \
//!   cargo bench -p streamkeeper-server --bench notify -- 1000
//! ```
//! Argument: flags in the burst (1,000 unless given). One pass raises them
//! all, then the notify routine's pass runs until nothing is due, as one
//! replica would every second. Prints the time until every channel has its
//! (grouped) messages — the target is 10 s — and how many messages were
//! sent: grouping makes it one message per chat channel, webhook and
//! Alertmanager, and one event per flag for PagerDuty (it deduplicates by
//! flag), far fewer than 5,000. Works in a database of its own.

#[path = "support/db.rs"]
mod bench_db;

use bench_db::BenchDb;
use serde_json::json;
use sqlx::PgPool;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;
use streamkeeper::flags::{FlagKey, Observation};
use streamkeeper::platform::credential::CredentialPolicy;
use streamkeeper::platform::egress::EgressPolicy;
use streamkeeper_server::clients::webhook::Webhooks;
use streamkeeper_server::flags::lifecycle::{self, FlagSource, Route};
use streamkeeper_server::platform::errors::Db;

const KEY: &str = "0123456789abcdef0123456789abcdef";

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

/// An Alertmanager stand-in that counts posts and alerts (the tests use
/// the real one; here only the count matters).
async fn alertmanager() -> (String, Arc<AtomicUsize>) {
    let posts = Arc::new(AtomicUsize::new(0));
    let counter = posts.clone();
    let app = axum::Router::new().route(
        "/api/v2/alerts",
        axum::routing::post(move || {
            let counter = counter.clone();
            async move {
                counter.fetch_add(1, Ordering::Relaxed);
                ""
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!(
        "http://{}/api/v2/alerts",
        listener.local_addr().expect("addr")
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, posts)
}

async fn channels(pool: &PgPool, team: i64, url: &str, am: &str, dir: &std::path::Path) {
    std::fs::write(dir.join("slack"), format!("{url}/services/T1/B1/x")).expect("w");
    std::fs::write(dir.join("teams"), format!("{url}/workflows/w")).expect("w");
    std::fs::write(dir.join("pd"), KEY).expect("w");
    std::fs::write(dir.join("sign"), "s3cret").expect("w");
    let d = dir.display();
    let rows = [
        (
            "slack",
            "slack",
            None,
            Some(format!("file:{d}/slack")),
            None,
        ),
        (
            "teams",
            "teams",
            None,
            Some(format!("file:{d}/teams")),
            None,
        ),
        (
            "pd",
            "pagerduty",
            Some(format!("{url}/v2/enqueue")),
            None,
            Some(format!("file:{d}/pd")),
        ),
        ("am", "alertmanager", Some(am.to_owned()), None, None),
        (
            "hook",
            "webhook",
            Some(format!("{url}/services/T2/B2/hook")),
            None,
            Some(format!("file:{d}/sign")),
        ),
    ];
    for (name, kind, endpoint, endpoint_ref, secret_ref) in rows {
        sqlx::query(
            "INSERT INTO notify_channels (team_id, name, kind, endpoint, endpoint_ref, secret_ref)
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(team)
        .bind(name)
        .bind(kind)
        .bind(endpoint)
        .bind(endpoint_ref)
        .bind(secret_ref)
        .execute(pool)
        .await
        .expect("channel");
    }
}

#[tokio::main]
async fn main() {
    let base = std::env::var("DATABASE_URL").expect("DATABASE_URL (see the top of this file)");
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(1_000);
    let db = BenchDb::create(&base, "notify", 20).await;
    let pool = db.pool.clone();
    let dir = std::env::temp_dir().join(format!("sk-notify-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let policy = CredentialPolicy::new("STREAMKEEPER_CRED_", [dir.to_str().expect("utf-8")])
        .expect("policy");
    let (url, rec) = streamkeeper_doubles::oncall::spawn(vec![KEY.into()]).await;
    let (am, am_posts) = alertmanager().await;

    let cluster: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s, insecure_credentials)
         VALUES ('bench', '127.0.0.1:9092', 'PLAINTEXT', 15, true) RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .expect("cluster");
    let team: i64 = sqlx::query_scalar("INSERT INTO teams (name) VALUES ('t') RETURNING id")
        .fetch_one(&pool)
        .await
        .expect("team");
    // Channels read their secrets under `notify/` (`CHANNELS_SCOPE`).
    let files = dir.join("notify");
    std::fs::create_dir_all(&files).expect("dir");
    channels(&pool, team, &url, &am, &files).await;
    let mut burst = Burst {
        cluster,
        route: (team, "t".into(), None),
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
    while streamkeeper_server::notify::routine::pass(&pool, "https://sk.example", &hooks, &policy)
        .await
        .expect("notify")
        > 0
    {
        passes += 1;
    }
    let took = started.elapsed();
    let got = rec.got();
    let refused = got.iter().filter(|r| r.status >= 300).count();
    let sent = got.len() + am_posts.load(Ordering::Relaxed);
    println!(
        "raised {n} flags in one pass: {:.2} s",
        raised.as_secs_f64()
    );
    println!(
        "every channel had its messages in {:.2} s over {passes} routine passes (target: 10 s)",
        took.as_secs_f64()
    );
    println!(
        "messages sent: {sent} (slack {}, teams {}, pagerduty {}, alertmanager {}; ungrouped would be {})",
        rec.of("slack").len(),
        rec.of("teams").len(),
        rec.of("pagerduty").len(),
        am_posts.load(Ordering::Relaxed),
        5 * n
    );
    assert_eq!(refused, 0, "every receiver took its messages");
    assert_eq!(rec.of("pagerduty").len(), n, "one PagerDuty event per flag");
    assert_eq!(rec.of("teams").len(), 1, "one grouped card");
    let _ = std::fs::remove_dir_all(&dir);
    db.drop().await;
}
