//! The review inbox: a proposal's round trip (checked against the
//! consumers and the registry, bound to its base, stored) and an approval
//! that applies it to the registry double; and the inbox's "waiting for
//! me" page and badge with many items in the table.
//!
//! ```sh
//! source scripts/lib.sh && start_postgres /tmp/pgbench 55433
//! DATABASE_URL=postgres://postgres@127.0.0.1:55433/postgres \
//!   cargo bench -p streamkeeper-server --bench review -- 10000
//! ```
//! Argument: items in the table for the inbox figures (default 10,000).
//! Works in a database of its own, dropped at the end.

#[path = "support/db.rs"]
mod bench_db;
#[path = "support/median.rs"]
mod bench_median;

use bench_db::BenchDb;
use bench_median::median;
use std::sync::Arc;
use std::time::{Duration, Instant};
use streamkeeper::accounts::account::{Credential, Principal};
use streamkeeper::accounts::role::Role;
use streamkeeper::platform::page::PageRequest;
use streamkeeper::review::Kind;
use streamkeeper::schemas::SchemaType;
use streamkeeper_app::port::Reviews as _;
use streamkeeper_app::review::model::{Approval, DomainSpec, NewReviewItem, ReviewFilter};
use streamkeeper_server::review::ReviewService;
use streamkeeper_server::schemas::SchemaService;

const ROUND_TRIPS: usize = 30;

fn principal(user_id: i64, username: &str, roles: Vec<Role>) -> Principal {
    Principal {
        user_id,
        username: username.into(),
        display_name: username.into(),
        roles,
        via: Credential::Token,
        scopes: None,
    }
}

/// The orders schema with `n` optional fields added: each is compatible
/// with the one before.
fn schema(n: usize) -> String {
    let extra: String = (0..n)
        .map(|i| format!(r#",{{"name":"f{i}","type":["null","string"],"default":null}}"#))
        .collect();
    format!(
        r#"{{"type":"record","name":"Order","fields":[{{"name":"id","type":"string"}},{{"name":"amount","type":"double"}}{extra}]}}"#
    )
}

#[tokio::main]
async fn main() {
    let Ok(base) = std::env::var("DATABASE_URL") else {
        eprintln!("set DATABASE_URL (see the comment at the top of benches/review.rs)");
        std::process::exit(2);
    };
    let items: i64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(10_000);
    let db = BenchDb::create(&base, "review", 4).await;
    let pool = db.pool.clone();

    let (registry_url, _handle) = streamkeeper_doubles::registry::spawn().await;
    let cluster: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s)
         VALUES ('bench', '127.0.0.1:1', 'PLAINTEXT', 15) RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .expect("cluster");
    for sql in [
        "INSERT INTO schema_registries (cluster_id, url) VALUES ($1, $2)",
        "INSERT INTO topics (cluster_id, name, partitions, first_seen, last_seen)
         SELECT $1, 'orders', 6, now(), now() WHERE $2 <> ''",
        "INSERT INTO streams (cluster_id, topic, domain) SELECT $1, 'orders', 'payments' WHERE $2 <> ''",
        "INSERT INTO consumer_groups (cluster_id, name, state, members, topics, first_seen, last_seen)
         SELECT $1, 'g' || n, 'Stable', 1, ARRAY['orders'], now(), now()
         FROM generate_series(1, 20) n WHERE $2 <> ''",
    ] {
        sqlx::query(sql)
            .bind(cluster)
            .bind(&registry_url)
            .execute(&pool)
            .await
            .expect("setup");
    }
    let mut ids = Vec::new();
    for (name, role) in [("ada", "admin"), ("olga", "owner"), ("ann", "approver")] {
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO users (username, display_name, password_hash, roles)
             VALUES ($1, $1, 'unused', ARRAY[$2]) RETURNING id",
        )
        .bind(name)
        .bind(role)
        .fetch_one(&pool)
        .await
        .expect("user");
        ids.push(id);
    }
    let ada = principal(ids[0], "ada", vec![Role::Admin]);
    let olga = principal(ids[1], "olga", vec![Role::Owner]);
    let ann = principal(ids[2], "ann", vec![Role::Approver]);

    let schemas = Arc::new(SchemaService::new(
        pool.clone(),
        streamkeeper_server::clients::egress::Outbound {
            egress: streamkeeper::platform::egress::EgressPolicy::LOOPBACK,
            ..Default::default()
        },
    ));
    let reviews = ReviewService::new(
        pool.clone(),
        schemas.clone(),
        Arc::new(streamkeeper_server::connect::ConnectService::new(
            pool.clone(),
            streamkeeper_server::clients::egress::Outbound {
                egress: streamkeeper::platform::egress::EgressPolicy::LOOPBACK,
                ..Default::default()
            },
        )),
        streamkeeper_server::platform::limiter::LoginLimiter::new(),
    );
    reviews
        .set_domain(
            &ada,
            "bench",
            "payments",
            DomainSpec {
                autonomy: streamkeeper::review::Autonomy::ActAfterApproval,
                required_approvals: 1,
                approver_users: vec!["ann".into()],
                approver_teams: vec![],
            },
        )
        .await
        .expect("domain");

    let mut proposed = Vec::new();
    let mut applied = Vec::new();
    for n in 0..ROUND_TRIPS {
        let t = Instant::now();
        let item = reviews
            .propose(
                &olga,
                "bench",
                NewReviewItem {
                    kind: Kind::ProducerChange,
                    cluster_id: cluster,
                    topic: "orders".into(),
                    subject: None,
                    schema_type: SchemaType::Avro,
                    schema: schema(n),
                    references: vec![],
                    title: None,
                },
            )
            .await
            .expect("propose");
        proposed.push(t.elapsed());
        let t = Instant::now();
        let done = reviews
            .approve(
                &ann,
                "bench",
                item.summary.id,
                Approval {
                    content_hash: item.content_hash.clone(),
                    password: None,
                    totp: None,
                },
            )
            .await
            .expect("approve");
        applied.push(t.elapsed());
        assert_eq!(
            done.summary.state,
            streamkeeper::review::State::Applied,
            "{}",
            done.state_reason
        );
    }
    println!(
        "propose  checked against 20 groups and the registry, stored: median {:.1} ms, max {:.1} ms ({ROUND_TRIPS} runs)",
        ms(median(&mut proposed)),
        ms(proposed.iter().max().copied().unwrap_or_default())
    );
    println!(
        "approve  approval + base re-check + registration applied: median {:.1} ms, max {:.1} ms",
        ms(median(&mut applied)),
        ms(applied.iter().max().copied().unwrap_or_default())
    );

    // Many items, a fifth of them waiting for ann.
    let t = Instant::now();
    sqlx::query(
        "INSERT INTO review_items (kind, cluster_id, topic, subject, domain, title, author_id, state,
             content, content_hash, verdict, required_approvals, approver_ids)
         SELECT 'producer_change', $1, 'orders', 'orders-value', 'payments', 'item ' || n, $2,
             CASE WHEN n % 5 = 0 THEN 'in_review' ELSE 'applied' END,
             '{}', md5(n::text), 'COMPATIBLE', 1, ARRAY[$3]::bigint[]
         FROM generate_series(1, $4) n",
    )
    .bind(cluster)
    .bind(ids[1])
    .bind(ids[2])
    .bind(items)
    .execute(&pool)
    .await
    .expect("items");
    sqlx::query("ANALYZE")
        .execute(&pool)
        .await
        .expect("analyze");
    println!("setup: {items} items in {:.1} s", t.elapsed().as_secs_f64());
    let mut pages = Vec::new();
    let mut badges = Vec::new();
    let mut total = 0;
    for _ in 0..20 {
        let t = Instant::now();
        total = reviews
            .list(&ann, ReviewFilter::default(), PageRequest::new(None, None))
            .await
            .expect("inbox")
            .total;
        pages.push(t.elapsed());
        let t = Instant::now();
        reviews.counts(&ann).await.expect("counts");
        badges.push(t.elapsed());
    }
    println!(
        "inbox    waiting for me, first page of {total} at {items} items: median {:.1} ms; header badge median {:.1} ms",
        ms(median(&mut pages)),
        ms(median(&mut badges))
    );

    db.drop().await;
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
