//! The pilot's page over a year of records: 100,000 flags (lag on 1,000
//! groups reading 200 topics in 10 domains, each notified, some
//! acknowledged or dismissed), 100,000 compatibility checks (one in 20
//! breaking) and 2,000 review items, the pilot covering half the domains
//! from a year ago. Times what the manager's page asks the server (the
//! report and the first page of receipts) and each query behind it, and
//! how long rebuilding the pilot's day tally from the records takes.
//!
//! ```sh
//! source scripts/lib.sh && start_postgres /tmp/pgbench 55433
//! DATABASE_URL=postgres://postgres@127.0.0.1:55433/postgres \
//!   cargo bench -p streamkeeper-server --bench pilot -- 100000
//! ```
//! Argument: flags and checks each (default 100,000). Works in a database
//! of its own, dropped at the end.

#[path = "support/db.rs"]
mod bench_db;
#[path = "support/median.rs"]
mod bench_median;

use bench_db::BenchDb;
use bench_median::median;
use std::time::{Duration, Instant};
use streamkeeper::accounts::account::{Credential, Principal};
use streamkeeper::accounts::role::Role;
use streamkeeper::pilot::ScopeKind;
use streamkeeper::platform::page::PageRequest;
use streamkeeper_app::port::Pilot as _;
use streamkeeper_server::pilot::{PilotService, store};

const RUNS: usize = 11;

async fn timed<F, Fut, T>(runs: usize, mut f: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let mut v = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        std::hint::black_box(f().await);
        v.push(t.elapsed());
    }
    median(&mut v)
}

#[tokio::main]
async fn main() {
    let Ok(base) = std::env::var("DATABASE_URL") else {
        eprintln!("set DATABASE_URL (see the comment at the top of benches/pilot.rs)");
        std::process::exit(2);
    };
    let n: i64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(100_000);
    // As many connections as the console's pool.
    let db = BenchDb::create(&base, "pilot", 16).await;
    let pool = db.pool.clone();
    let t0 = Instant::now();
    for sql in [
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s)
         VALUES ('prod', '127.0.0.1:1', 'PLAINTEXT', 15)",
        "INSERT INTO teams (name) VALUES ('payments')",
        "INSERT INTO users (username, display_name, password_hash, roles)
         VALUES ('meg', 'meg', 'x', ARRAY['manager'])",
        "INSERT INTO streams (cluster_id, topic, owner_team_id, domain)
         SELECT 1, 't' || i, 1, 'd' || (i % 10) FROM generate_series(0, 199) i",
        "INSERT INTO consumer_groups (cluster_id, name, state, members, topics, first_seen, last_seen, owner_team_id)
         SELECT 1, 'g' || i, 'Stable', 1, ARRAY['t' || (i % 200)], now() - interval '400 days', now(), 1
           FROM generate_series(0, 999) i",
        "INSERT INTO flags (cluster_id, subject_kind, subject, rule, kind, state, team_id, reason, evidence,
                            onset_at, raised_at, notified_at, acknowledged_at, dismissed_at, dismissed_by,
                            dismissed_reason)
         SELECT 1, 'group', 'g' || (i % 1000), 'lag', 'STOP',
                CASE WHEN i % 50 = 0 THEN 'dismissed' ELSE 'resolved' END, 1, 'lag for a while',
                '{\"samples\": []}', at, at + interval '5 min', at + (i % 90) * interval '1 min',
                CASE WHEN i % 7 = 0 THEN at + interval '20 min' END,
                CASE WHEN i % 50 = 0 THEN at + interval '1 hour' END,
                CASE WHEN i % 50 = 0 THEN 'olga' END, CASE WHEN i % 50 = 0 THEN 'expected' END
           FROM generate_series(1, $1) i,
                LATERAL (SELECT now() - interval '365 days' + i * (interval '365 days' / $1) AS at) a",
        "INSERT INTO compatibility_checks (cluster_id, topic, schema_type, schema, verdict, report,
                                           submitted_by, submitted_at, decided_at, owner_team_id, domain)
         SELECT 1, 't' || (i % 200), 'AVRO', '{}',
                CASE WHEN i % 20 = 0 THEN 'INCOMPATIBLE' ELSE 'COMPATIBLE' END,
                '{\"verdict\": \"x\"}', 'ci', at, at + (i % 3000) * interval '1 ms', 1, 'd' || (i % 200 % 10)
           FROM generate_series(1, $1) i,
                LATERAL (SELECT now() - interval '365 days' + i * (interval '365 days' / $1) AS at) a",
        "INSERT INTO review_items (kind, cluster_id, topic, subject, domain, title, author_id, state, content,
                                   content_hash, verdict, required_approvals, approver_ids, created_at,
                                   approved_at, applied_at)
         SELECT 'producer_change', 1, 't' || (i % 200), 't' || (i % 200) || '-value', 'd' || (i % 200 % 10),
                'change', 1, CASE WHEN i % 9 = 0 THEN 'rejected' ELSE 'applied' END, '{}', 'h', 'COMPATIBLE',
                1, ARRAY[1]::bigint[], at, at + interval '3 hours', at + interval '3 hours 1 min'
           FROM generate_series(1, 2000) i,
                LATERAL (SELECT now() - interval '365 days' + i * interval '4 hours' AS at) a",
        "INSERT INTO pilot (scope_kind, scope, started_on, updated_by)
         VALUES ('domains', ARRAY['d0', 'd1', 'd2', 'd3', 'd4'], (now() - interval '364 days')::date, 'meg')",
        "ANALYZE",
    ] {
        let q = sqlx::query(sql);
        // Only the statements that make the year's records take its size.
        let q = if sql.contains("$1") { q.bind(n) } else { q };
        q.execute(&pool)
            .await
            .unwrap_or_else(|e| panic!("{e}: {sql}"));
    }
    println!(
        "a year of {n} flags and {n} checks made in {:?}",
        t0.elapsed()
    );

    let who = Principal {
        user_id: 1,
        username: "meg".into(),
        display_name: "meg".into(),
        roles: vec![Role::Manager],
        via: Credential::Token,
        scopes: None,
    };
    let pilot = PilotService::new(pool.clone());
    let now = chrono::Utc::now();
    let report = pilot.report(&who, "bench", now).await.expect("report");
    let events: usize = report.report.table.iter().map(|r| r.now.events).sum();
    println!(
        "the pilot: day {}, {} weeks, {events} timed events in scope",
        report.report.day,
        report.report.weeks.len()
    );
    let scope: Vec<String> = report.settings.scope.clone();
    let from = report
        .settings
        .started_on
        .expect("started")
        .and_time(chrono::NaiveTime::MIN)
        .and_utc();
    let within = store::Within {
        kind: ScopeKind::Domains,
        scope: &scope,
        from,
    };
    let page = PageRequest::new(Some(1), Some(20));
    let figures = [
        (
            "the page (report and the first receipts)",
            // As the page's server function asks them: at once.
            timed(RUNS, || async {
                tokio::try_join!(
                    pilot.report(&who, "bench", now),
                    pilot.receipts(&who, "bench", page)
                )
                .expect("the page")
            })
            .await,
        ),
        (
            "  report",
            timed(RUNS, || async {
                pilot.report(&who, "bench", now).await.expect("report")
            })
            .await,
        ),
        (
            "  receipts, first page",
            timed(RUNS, || async {
                pilot.receipts(&who, "bench", page).await.expect("receipts")
            })
            .await,
        ),
        (
            "    store::tally (the day tally, questions, restarts)",
            timed(RUNS, || async {
                store::tally(&pool, &within, now).await.expect("tally")
            })
            .await,
        ),
        (
            "    store::dismissed",
            timed(RUNS, || async {
                store::dismissed(&pool, &within, 200)
                    .await
                    .expect("dismissed")
            })
            .await,
        ),
        (
            "    store::domains",
            timed(RUNS, || async {
                store::domains(&pool, &within).await.expect("domains")
            })
            .await,
        ),
        (
            "    store::first_weeks",
            timed(RUNS, || async {
                store::first_weeks(&pool, &within, 20)
                    .await
                    .expect("first weeks")
            })
            .await,
        ),
        (
            "  store::rebuild (after a change of scope; 3 runs)",
            timed(3, || async {
                store::rebuild(&pool).await.expect("rebuild")
            })
            .await,
        ),
    ];
    println!("median of {RUNS} runs (target for the page: ≤ 200 ms):");
    for (name, d) in figures {
        println!("{name:<45} {:>8.1} ms", d.as_secs_f64() * 1000.0);
    }
    db.drop().await;
}
