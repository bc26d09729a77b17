//! The pilot's "lag flagged" against an outside clock, on the broker
//! scripts/test starts: a consumer keeps up with a producer, is stopped at
//! T, and its owner's webhook receiver (in this test, on its own clock) has
//! the STOP at A; sampled every 5 s, the pilot's figure for that flag is
//! within one interval of A − T.

mod support;

use axum::http::{Method, StatusCode};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use streamkeeper::accounts::role::Role;
use streamkeeper_server::clients::kafka::reader::{ReadError, Reading};
use streamkeeper_server::watch::routine::{self as watch, PassOutcome};
use support::TestApp;
use support::kafka::{bootstrap, consuming, producing, topic_with};

/// The sampling interval (the routine's `every` in scripts/test's runs).
const INTERVAL: Duration = Duration::from_secs(5);

/// A receiver that records when it answered each STOP it was sent.
async fn receiver() -> (String, Arc<Mutex<Vec<DateTime<Utc>>>>) {
    let got: Arc<Mutex<Vec<DateTime<Utc>>>> = Arc::default();
    let g = got.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |axum::Json(v): axum::Json<Value>| {
            let g = g.clone();
            async move {
                if v["flag"]["kind"] == "STOP" && v["flag"]["state"] == "open" {
                    g.lock().expect("lock").push(Utc::now());
                }
                StatusCode::OK
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, got)
}

/// The sampler's passes of one cluster every [`INTERVAL`] and the
/// webhooks' deliveries in between.
struct Sampler {
    cluster: streamkeeper_server::watch::store::ClusterRow,
    pending: Option<tokio::task::JoinHandle<Result<Reading, ReadError>>>,
    kept: streamkeeper_server::watch::kept::KeptWindow,
    http: streamkeeper_server::clients::webhook::Webhooks,
    next: tokio::time::Instant,
    passes: usize,
}

impl Sampler {
    async fn new(t: &TestApp, id: i64) -> Self {
        let cluster = streamkeeper_server::watch::store::by_id(&t.pool, id)
            .await
            .expect("db")
            .expect("cluster");
        let http = streamkeeper_server::clients::webhook::Webhooks::new(
            streamkeeper::platform::egress::EgressPolicy::LOOPBACK,
        )
        .expect("webhooks");
        Self {
            cluster,
            pending: None,
            kept: Default::default(),
            http,
            next: tokio::time::Instant::now(),
            passes: 0,
        }
    }

    /// A pass when one is due, then what is due of the webhooks, then a
    /// quarter of a second.
    async fn tick(&mut self, t: &TestApp) {
        if tokio::time::Instant::now() >= self.next {
            let outcome = watch::pass(
                &t.pool,
                &self.cluster,
                &Default::default(),
                &mut self.pending,
                &mut self.kept,
            )
            .await;
            assert!(matches!(outcome, PassOutcome::Stored { .. }), "{outcome:?}");
            self.next += INTERVAL;
            self.passes += 1;
        }
        streamkeeper_server::flags::routine::deliver_due(&t.pool, &self.http)
            .await
            .expect("deliver");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn lag_flagged_is_within_one_interval_of_an_outside_clock(pool: sqlx::PgPool) {
    let bootstrap = bootstrap();
    let run = format!(
        "{}-{}",
        std::process::id(),
        pool.connect_options().get_database().unwrap_or("db")
    );
    let topic = format!("pilot-orders-{run}");
    let group = format!("pilot-readers-{run}");
    topic_with(&bootstrap, &topic, &[1]).await;
    let (stop_producer, stop_consumer) = (Arc::default(), Arc::<AtomicBool>::default());
    producing(&bootstrap, &topic, Arc::clone(&stop_producer));
    let consumer = consuming(&bootstrap, &group, &topic, Arc::clone(&stop_consumer));

    let t = TestApp::new(pool).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let manager = t.user("meg", &[Role::Manager]).await;
    let (at, mt) = (t.token(admin).await, t.token(manager).await);
    let team = t
        .api(
            Method::POST,
            "/api/v1/teams",
            &at,
            Some(json!({"name": "payments"})),
        )
        .await
        .json()["id"]
        .as_i64()
        .expect("team");
    let (url, answered) = receiver().await;
    let r = t
        .api(
            Method::PUT,
            &format!("/api/v1/teams/{team}/webhook"),
            &at,
            Some(json!({"url": url})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    let r = t
        .api(
            Method::POST,
            "/api/v1/clusters",
            &at,
            Some(json!({"name": "local", "bootstrap": bootstrap})),
        )
        .await;
    let id = r.json()["id"].as_i64().expect("id");
    let started = (Utc::now() - chrono::Duration::days(1)).date_naive();
    let r = t
        .api(
            Method::PUT,
            "/api/v1/pilot/settings",
            &mt,
            Some(json!({"scope_kind": "clusters", "scope": ["local"], "started_on": started})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);

    // The sampler's passes every 5 s, the webhooks' every 250 ms, as their
    // routines run them; the group is claimed once a pass has seen it.
    let mut s = Sampler::new(&t, id).await;
    s.tick(&t).await;
    let r = t
        .api(
            Method::PUT,
            &format!("/api/v1/clusters/{id}/groups/{group}/owner"),
            &at,
            Some(json!({"team": "payments"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    // Consuming through six passes, then stopped between two.
    while s.passes < 6 {
        s.tick(&t).await;
    }
    tokio::time::sleep(Duration::from_millis(2_300)).await;
    stop_consumer.store(true, Ordering::SeqCst);
    let stopped = consumer.join().expect("consumer");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    while answered.lock().expect("lock").is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "no STOP delivered");
        s.tick(&t).await;
    }
    stop_producer.store(true, Ordering::SeqCst);
    let delivered = answered.lock().expect("lock")[0];
    let outside = (delivered - stopped).num_milliseconds();

    let r = t
        .api(Method::GET, "/api/v1/pilot/events.csv", &mt, None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let mut rd = csv::Reader::from_reader(r.body.as_bytes());
    let figures: Vec<i64> = rd
        .records()
        .map(|rec| rec.expect("record"))
        .filter(|rec| &rec[0] == "lag_flagged")
        .map(|rec| rec[5].parse().expect("ms"))
        .collect();
    assert_eq!(figures.len(), 1, "{figures:?}");
    let interval = i64::try_from(INTERVAL.as_millis()).expect("ms");
    assert!(
        (figures[0] - outside).abs() <= interval,
        "the pilot says {} ms; stopped at {stopped}, delivered at {delivered}: {outside} ms",
        figures[0]
    );
}
