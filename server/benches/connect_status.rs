//! The Connect status routine's pass over a Connect cluster with many
//! connectors (the double, in process, on loopback), the connectors page
//! it feeds, and validating a draft with the worker.
//!
//! ```sh
//! source scripts/lib.sh && start_postgres /tmp/pgbench 55433
//! DATABASE_URL=postgres://postgres@127.0.0.1:55433/postgres \
//!   cargo bench -p streamkeeper-server --bench connect_status -- 1000 4
//! ```
//! Arguments: connectors (default 1,000), tasks each (default 4). Works in
//! a database of its own, dropped at the end.

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
use streamkeeper_app::port::Connect as _;
use streamkeeper_server::connect::{ConnectService, ValidateRequest, routine, store};

fn outbound() -> streamkeeper_server::clients::egress::Outbound {
    streamkeeper_server::clients::egress::Outbound {
        egress: streamkeeper::platform::egress::EgressPolicy::LOOPBACK,
        ..Default::default()
    }
}

#[tokio::main]
async fn main() {
    let Ok(base) = std::env::var("DATABASE_URL") else {
        eprintln!("set DATABASE_URL (see the comment at the top of benches/connect_status.rs)");
        std::process::exit(2);
    };
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let connectors = args.first().copied().unwrap_or(1_000);
    let tasks = args.get(1).copied().unwrap_or(4).to_string();
    let db = BenchDb::create(&base, "connect", 4).await;
    let pool = db.pool.clone();
    let (url, double) = streamkeeper_doubles::connect::spawn().await;
    for i in 0..connectors {
        let topic = format!("topic-{i:05}");
        double.put(
            &format!("sink-{i:05}"),
            &[
                (
                    "connector.class",
                    "io.confluent.connect.jdbc.JdbcSinkConnector",
                ),
                ("tasks.max", &tasks),
                ("topics", &topic),
                ("connection.url", "jdbc:postgresql://dw:5432/dw"),
                ("connection.user", "writer"),
                ("connection.password", "inline-secret"),
            ],
        );
    }
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s)
         VALUES ('bench', '127.0.0.1:9092', 'PLAINTEXT', 15) RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .expect("cluster");
    sqlx::query("INSERT INTO connect_clusters (cluster_id, name, url) VALUES ($1, 'main', $2)")
        .bind(id)
        .bind(&url)
        .execute(&pool)
        .await
        .expect("connect");
    let cluster = streamkeeper_server::watch::store::by_id(&pool, id)
        .await
        .expect("db")
        .expect("cluster");
    let connect = store::by_name(&pool, id, "main")
        .await
        .expect("db")
        .expect("connect");

    let mut runs = Vec::new();
    for round in 0..5 {
        // Rounds 2 and 3 see ten tasks fail, round 4 sees them run again.
        if round == 2 {
            for i in 0..10 {
                double.fail_task(&format!("sink-{i:05}"), 0, "java.sql.SQLException: boom");
            }
        }
        if round == 4 {
            for i in 0..10 {
                double.set_task(
                    &format!("sink-{i:05}"),
                    0,
                    streamkeeper_doubles::connect::State::Running,
                );
            }
        }
        let t = Instant::now();
        let r = routine::pass(&pool, &outbound(), &cluster, &connect)
            .await
            .expect("pass");
        let took = t.elapsed();
        println!(
            "pass {round}: {} connectors × {tasks} tasks, {} flagged, {:.0} ms",
            r.connectors,
            r.flagged,
            took.as_secs_f64() * 1e3
        );
        runs.push(took);
    }
    println!(
        "status pass: median {:.0} ms",
        median(&mut runs).as_secs_f64() * 1e3
    );

    let service = ConnectService::new(pool.clone(), outbound());
    let who = Principal {
        user_id: 0,
        username: "bench".into(),
        display_name: "bench".into(),
        roles: vec![Role::Viewer],
        via: Credential::Token,
        scopes: None,
    };
    let last = u32::try_from(connectors.div_ceil(25)).unwrap_or(1).max(1);
    for (what, q, page) in [
        ("first page", None, 1),
        ("last page", None, last),
        ("search \"0042\"", Some("0042"), 1),
    ] {
        let mut views = Vec::new();
        for _ in 0..9 {
            let t = Instant::now();
            service
                .connectors(&who, id, "main", q, PageRequest::new(Some(page), None))
                .await
                .expect("page");
            views.push(t.elapsed());
        }
        println!(
            "connectors page, {what}: median {:.1} ms",
            median(&mut views).as_secs_f64() * 1e3
        );
    }

    let draft = serde_json::json!({
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "name": "pg-orders", "topic.prefix": "shop", "database.hostname": "db",
        "database.user": "cdc", "database.dbname": "shop", "plugin.name": "pgoutput",
        "database.password": "${file:/secrets/pg.properties:password}",
    });
    for (what, connect) in [
        ("rules alone", None),
        ("rules and the worker", Some("main")),
    ] {
        let mut runs = Vec::new();
        for _ in 0..21 {
            let t = Instant::now();
            service
                .validate(
                    &who,
                    ValidateRequest {
                        config: draft.clone(),
                        cluster_id: Some(id),
                        connect: connect.map(str::to_owned),
                    },
                )
                .await
                .expect("validate");
            runs.push(t.elapsed());
        }
        println!(
            "validate, {what} (1,000 connectors in context): median {:.2} ms",
            median(&mut runs).as_secs_f64() * 1e3
        );
    }
    db.drop().await;
}
