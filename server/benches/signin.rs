//! Sign-in under load, through the real router (sessions in Postgres,
//! the login limiter, the audit entry): how many sign-ins a second the
//! server does with argon2 on the blocking pool, and how long `/healthz`
//! takes while a burst of 50 sign-ins is hashed.
//!
//! ```sh
//! source scripts/lib.sh && start_postgres /tmp/pgbench 55433
//! DATABASE_URL=postgres://postgres@127.0.0.1:55433/postgres \
//!   cargo bench -p streamkeeper-server --bench signin
//! ```
//! Works in a database of its own, dropped at the end. The runtime has
//! one async thread per core, as `streamkeeper serve` does.

#[path = "support/db.rs"]
mod bench_db;
#[path = "support/median.rs"]
mod bench_median;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode, header};
use bench_db::BenchDb;
use bench_median::median;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};
use streamkeeper_server::config::{ServeConfig, serve_args_from_env};
use streamkeeper_server::http::{AppState, router};
use tower::ServiceExt;
use tower_sessions_sqlx_store::PostgresStore;

const USERS: usize = 50;
const PASSWORD: &str = "correct-horse-battery-staple";
/// Rounds of the throughput figure: each user signs in once a round,
/// well within the per-account budget of 10.
const ROUNDS: usize = 4;

/// A distinct client address per sign-in, as 50 people at their own
/// machines would be: the per-address budget is not what is measured.
static NEXT_ADDRESS: AtomicU32 = AtomicU32::new(1);

async fn sign_in(app: &Router, user: usize) -> Duration {
    let body = form_urlencoded::Serializer::new(String::new())
        .extend_pairs([
            ("username", format!("user{user}").as_str()),
            ("password", PASSWORD),
            ("next", "/"),
        ])
        .finish();
    let address = Ipv4Addr::from(0x0a00_0000 | NEXT_ADDRESS.fetch_add(1, Ordering::SeqCst));
    let mut req = Request::post("/login")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::ORIGIN, "http://127.0.0.1:3000")
        .header("sec-fetch-site", "same-origin")
        .body(Body::from(body))
        .expect("request");
    req.extensions_mut()
        .insert(ConnectInfo(SocketAddr::from((address, 40_000))));
    let t = Instant::now();
    let res = app.clone().oneshot(req).await.expect("infallible");
    let took = t.elapsed();
    let location = res
        .headers()
        .get(header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    assert_eq!(location, "/", "user{user} was not signed in");
    took
}

async fn healthz(app: &Router) -> Duration {
    let t = Instant::now();
    let res = app
        .clone()
        .oneshot(Request::get("/healthz").body(Body::empty()).expect("req"))
        .await
        .expect("infallible");
    assert_eq!(res.status(), StatusCode::OK);
    t.elapsed()
}

/// Sign-ins of every user at once; their times.
async fn burst(app: &Router) -> Vec<Duration> {
    let tasks: Vec<_> = (0..USERS)
        .map(|u| {
            let app = app.clone();
            tokio::spawn(async move { sign_in(&app, u).await })
        })
        .collect();
    let mut times = Vec::new();
    for t in tasks {
        times.push(t.await.expect("sign-in task"));
    }
    times
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((sorted.len() as f64) * p).ceil() as usize;
    sorted
        .get(rank.saturating_sub(1).min(sorted.len().saturating_sub(1)))
        .copied()
        .unwrap_or_default()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[tokio::main]
async fn main() {
    let Ok(base) = std::env::var("DATABASE_URL") else {
        eprintln!("set DATABASE_URL (see the comment at the top of benches/signin.rs)");
        std::process::exit(2);
    };
    let db = BenchDb::create(&base, "signin", 10).await;
    let pool = db.pool.clone();
    let hash = streamkeeper_server::platform::password::hash(PASSWORD).expect("hash");
    for u in 0..USERS {
        sqlx::query(
            "INSERT INTO users (username, display_name, password_hash, roles)
             VALUES ($1, $1, $2, ARRAY['viewer'])",
        )
        .bind(format!("user{u}"))
        .bind(&hash)
        .execute(&pool)
        .await
        .expect("user");
    }
    // Sign-in sends nothing out: the default (closed) outbound settings.
    // Sign-in serves no wasm: any site folder will do.
    let mut args = serve_args_from_env().expect("settings");
    args.site_root.get_or_insert_with(|| "target/site".into());
    let config = ServeConfig::from_args(
        &args,
        streamkeeper_server::clients::egress::Outbound::default(),
    )
    .expect("valid settings");
    let store = PostgresStore::new(pool.clone());
    store.migrate().await.expect("session table");
    let app = router(AppState::new(pool.clone(), config), store);

    // One sign-in alone, for the cost of one.
    let mut alone = Vec::new();
    for u in 0..5 {
        alone.push(sign_in(&app, u).await);
    }

    // Throughput: rounds of 50 at once, back to back.
    let t = Instant::now();
    let mut waits = Vec::new();
    for _ in 0..ROUNDS {
        waits.extend(burst(&app).await);
    }
    let elapsed = t.elapsed();
    let signins = ROUNDS * USERS;

    // Healthz every 5 ms while a burst of 50 is hashed.
    let running = Arc::new(AtomicBool::new(true));
    let pinger = {
        let (app, running) = (app.clone(), running.clone());
        tokio::spawn(async move {
            let mut times = Vec::new();
            while running.load(Ordering::SeqCst) {
                times.push(healthz(&app).await);
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            times
        })
    };
    let t = Instant::now();
    burst(&app).await;
    let burst_took = t.elapsed();
    running.store(false, Ordering::SeqCst);
    let mut times = pinger.await.expect("pinger");
    times.sort();

    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "one sign-in alone: median {:.1} ms ({cores} cores, argon2id 19 MiB t=2 p=1)",
        ms(median(&mut alone))
    );
    println!(
        "throughput: {signins} sign-ins ({ROUNDS} bursts of {USERS}) in {:.2} s = {:.1} sign-ins/s; \
         a sign-in waited median {:.0} ms, max {:.0} ms",
        elapsed.as_secs_f64(),
        signins as f64 / elapsed.as_secs_f64(),
        ms(median(&mut waits)),
        ms(waits.iter().max().copied().unwrap_or_default())
    );
    println!(
        "healthz during a burst of {USERS} sign-ins ({:.2} s): {} answers, p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        burst_took.as_secs_f64(),
        times.len(),
        ms(percentile(&times, 0.50)),
        ms(percentile(&times, 0.99)),
        ms(times.last().copied().unwrap_or_default())
    );
    db.drop().await;
}
