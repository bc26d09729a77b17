//! Registry hygiene and the subjects screen against the registry double
//! with many subjects: the hygiene routine's pass over a registry (which
//! stores each subject's versions, latest schema and level), and the
//! subjects screen, which reads a page of what the pass stored.
//!
//! ```sh
//! source scripts/lib.sh && start_postgres /tmp/pgbench 55433
//! DATABASE_URL=postgres://postgres@127.0.0.1:55433/postgres \
//!   cargo bench -p streamkeeper-server --bench hygiene -- 1000
//! ```
//! Argument: subjects (default 1,000), one per topic, plus as many topics
//! again with no subject. Works in a database of its own, dropped at the end.

#[path = "support/db.rs"]
mod bench_db;
#[path = "support/median.rs"]
mod bench_median;

use bench_db::BenchDb;
use bench_median::median;
use std::time::Instant;
use streamkeeper::accounts::account::{Credential, Principal};
use streamkeeper::accounts::role::Role;
use streamkeeper::platform::page::PageRequest;
use streamkeeper_app::port::Schemas as _;
use streamkeeper_server::clients::registry::{NewSchema, RegistryClient, RegistrySettings};
use streamkeeper_server::schemas::SchemaService;
use streamkeeper_server::watch::store as clusters;

/// The registry double is on loopback.
fn outbound() -> streamkeeper_server::clients::egress::Outbound {
    streamkeeper_server::clients::egress::Outbound {
        egress: streamkeeper::platform::egress::EgressPolicy::LOOPBACK,
        ..Default::default()
    }
}

#[tokio::main]
async fn main() {
    let Ok(base) = std::env::var("DATABASE_URL") else {
        eprintln!("set DATABASE_URL (see the comment at the top of benches/hygiene.rs)");
        std::process::exit(2);
    };
    let subjects: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(1_000);
    let db = BenchDb::create(&base, "hygiene", 4).await;
    let pool = db.pool.clone();

    let (registry_url, _handle) = streamkeeper_doubles::registry::spawn().await;
    let registry = RegistryClient::new(RegistrySettings {
        egress: streamkeeper::platform::egress::EgressPolicy::LOOPBACK,
        ..RegistrySettings::new(registry_url.clone())
    })
    .expect("client");
    let t = Instant::now();
    for i in 0..subjects {
        let schema = format!(
            r#"{{"type":"record","name":"R{i}","fields":[{{"name":"id","type":"string"}}]}}"#
        );
        registry
            .register(
                &format!("topic-{i:05}-value"),
                &NewSchema::avro(schema),
                false,
            )
            .await
            .expect("register");
    }
    println!(
        "setup: {subjects} subjects registered in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s)
         VALUES ('bench', '127.0.0.1:1', 'PLAINTEXT', 15) RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .expect("cluster");
    sqlx::query("INSERT INTO schema_registries (cluster_id, url) VALUES ($1, $2)")
        .bind(id)
        .bind(&registry_url)
        .execute(&pool)
        .await
        .expect("registry");
    let topics: Vec<String> = (0..subjects * 2).map(|i| format!("topic-{i:05}")).collect();
    sqlx::query(
        "INSERT INTO topics (cluster_id, name, partitions, first_seen, last_seen)
         SELECT $1, n, 6, now(), now() FROM UNNEST($2::text[]) AS n",
    )
    .bind(id)
    .bind(&topics)
    .execute(&pool)
    .await
    .expect("topics");
    let cluster = clusters::by_id(&pool, id)
        .await
        .expect("db")
        .expect("cluster");

    let mut runs = Vec::new();
    let mut found = 0;
    for _ in 0..3 {
        let t = Instant::now();
        found = streamkeeper_server::schemas::routine::run(&pool, &outbound(), &cluster)
            .await
            .expect("hygiene")
            .len();
        runs.push(t.elapsed());
    }
    println!(
        "hygiene  {subjects} subjects, {} topics: {found} findings, median {:.2} s a pass",
        topics.len(),
        median(&mut runs).as_secs_f64()
    );

    let service = SchemaService::new(pool.clone(), outbound());
    let who = Principal {
        user_id: 0,
        username: "bench".into(),
        display_name: "bench".into(),
        roles: vec![Role::Viewer],
        via: Credential::Token,
        scopes: None,
    };
    // The screen reads what the pass stored: the first page, the last
    // page, and a search, each timed.
    let last = u32::try_from(subjects.div_ceil(25)).unwrap_or(1).max(1);
    for (what, search, page) in [
        ("first page", None, 1),
        ("last page", None, last),
        ("search \"0042\"", Some("0042".to_string()), 1),
    ] {
        let mut views = Vec::new();
        let mut shown = 0;
        for _ in 0..5 {
            let t = Instant::now();
            shown = service
                .registry_subjects(
                    &who,
                    id,
                    search.clone(),
                    None,
                    PageRequest::new(Some(page), None),
                )
                .await
                .expect("subjects")
                .subjects
                .items
                .len();
            views.push(t.elapsed());
        }
        println!(
            "subjects screen, {subjects} subjects stored, {what} ({shown} shown): median {:.1} ms",
            median(&mut views).as_secs_f64() * 1000.0
        );
    }

    db.drop().await;
}
