//! The flags' lifecycle on the real Postgres: a dismissal holds its
//! trouble back (no new flag, no page) until the trouble clears or its
//! snooze ends; a worsening reaches the owner; each transition is
//! delivered exactly once, also while a sampler holds the flag's row and
//! with two replicas delivering; a receiver that fails delays only its own
//! delivery, retried with the same idempotency key; refusals on flags are
//! audited and change nothing; a connector flag's page shows its trace.

mod support;

use axum::http::{HeaderMap, Method, StatusCode};
use serde_json::{Value, json};
use sqlx::PgPool;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use streamkeeper::accounts::role::Role;
use streamkeeper::flags::{FlagKey, Observation};
use streamkeeper::platform::egress::EgressPolicy;
use streamkeeper_server::clients::webhook::Webhooks;
use streamkeeper_server::flags::lifecycle::{self, FlagSource, Route};
use streamkeeper_server::flags::routine::deliver_due;
use streamkeeper_server::platform::errors::Db;
use support::TestApp;

/// What a receiver got: each post's idempotency key and body.
type Got = Arc<Mutex<Vec<(String, Value)>>>;

/// A webhook receiver: `/ok` answers 200, `/fail` 503, `/hang` never in
/// time. Every post is recorded.
async fn receiver() -> (String, Got) {
    let got: Got = Arc::new(Mutex::new(Vec::new()));
    let record = |got: Got, status: StatusCode, wait: Duration| {
        move |headers: HeaderMap, axum::Json(v): axum::Json<Value>| {
            let got = got.clone();
            async move {
                let key = headers
                    .get("idempotency-key")
                    .and_then(|k| k.to_str().ok())
                    .unwrap_or("")
                    .to_owned();
                got.lock().expect("lock").push((key, v));
                tokio::time::sleep(wait).await;
                status
            }
        }
    };
    let app = axum::Router::new()
        .route(
            "/ok",
            axum::routing::post(record(got.clone(), StatusCode::OK, Duration::ZERO)),
        )
        .route(
            "/fail",
            axum::routing::post(record(
                got.clone(),
                StatusCode::SERVICE_UNAVAILABLE,
                Duration::ZERO,
            )),
        )
        .route(
            "/hang",
            axum::routing::post(record(got.clone(), StatusCode::OK, Duration::from_secs(30))),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, got)
}

fn webhooks() -> Webhooks {
    Webhooks::new(EgressPolicy::LOOPBACK).expect("webhooks")
}

fn count(got: &Got) -> usize {
    got.lock().expect("lock").len()
}

async fn cluster(pool: &PgPool) -> i64 {
    sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s, insecure_credentials)
         VALUES ('local', '127.0.0.1:9092', 'PLAINTEXT', 15, true) RETURNING id",
    )
    .fetch_one(pool)
    .await
    .expect("cluster")
}

async fn team(pool: &PgPool, name: &str, webhook: &str) -> Route {
    let id =
        sqlx::query_scalar("INSERT INTO teams (name, webhook_url) VALUES ($1, $2) RETURNING id")
            .bind(name)
            .bind(webhook)
            .fetch_one(pool)
            .await
            .expect("team");
    (id, name.to_owned(), Some(webhook.to_owned()))
}

/// A watcher of the tests' own: everything is looked at each pass, lag
/// statuses worsen WARN → STALL → STOP, and everything goes to `route`
/// unless `routes` names the subject's team.
struct Watcher {
    cluster: i64,
    route: Route,
    routes: Vec<(String, Route)>,
}

#[async_trait::async_trait]
impl FlagSource for Watcher {
    fn cluster(&self) -> (i64, &str) {
        (self.cluster, "local")
    }
    fn evaluated(&self, _: &FlagKey) -> bool {
        true
    }
    fn worse(&self, _: &FlagKey, before: &str, now: &str) -> bool {
        let rank = |k: &str| ["WARN", "STALL", "STOP"].iter().position(|x| *x == k);
        rank(now) > rank(before)
    }
    async fn route(&self, _: &PgPool, key: &FlagKey) -> Result<Option<Route>, Db> {
        let named = self.routes.iter().find(|(s, _)| *s == key.subject);
        Ok(Some(named.map_or(&self.route, |(_, r)| r).clone()))
    }
    fn receipts(&self, o: &mut Observation) {
        o.evidence["drawn"] = json!(true);
    }
}

fn trouble(group: &str, kind: &str) -> Observation {
    Observation {
        key: FlagKey {
            subject_kind: "group".into(),
            subject: group.into(),
            rule: "lag".into(),
        },
        kind: kind.into(),
        reason: format!("{group} is {kind}"),
        onset_ms: chrono::Utc::now().timestamp_millis() - 60_000,
        evidence: json!({}),
    }
}

async fn pass(pool: &PgPool, w: &mut Watcher, observed: Vec<Observation>) {
    lifecycle::reconcile(pool, w, observed)
        .await
        .expect("reconcile");
}

async fn flags_of(pool: &PgPool, group: &str) -> Vec<(i64, String)> {
    sqlx::query_as("SELECT id, state FROM flags WHERE subject = $1 ORDER BY id")
        .bind(group)
        .fetch_all(pool)
        .await
        .expect("flags")
}

async fn admin(t: &TestApp) -> String {
    let ada = t.user("ada", &[Role::Admin]).await;
    t.token(ada).await
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_dismissed_flag_stays_quiet_while_its_trouble_lasts(pool: PgPool) {
    let t = TestApp::new(pool.clone()).await;
    let token = admin(&t).await;
    let (url, got) = receiver().await;
    let mut w = Watcher {
        cluster: cluster(&pool).await,
        route: team(&pool, "payments", &format!("{url}/ok")).await,
        routes: Vec::new(),
    };
    pass(&pool, &mut w, vec![trouble("billing", "STOP")]).await;
    deliver_due(&pool, &webhooks()).await.expect("deliver");
    assert_eq!(count(&got), 1, "raised and paged once");
    let id = flags_of(&pool, "billing").await[0].0;

    let r = t
        .api(
            Method::POST,
            &format!("/api/v1/flags/{id}/dismiss"),
            &token,
            Some(json!({"reason": "backfill paused", "dismissal": "expected"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["dismissal"], "expected");

    // The trouble lasts three passes: no new flag, no page.
    for _ in 0..3 {
        pass(&pool, &mut w, vec![trouble("billing", "STOP")]).await;
        deliver_due(&pool, &webhooks()).await.expect("deliver");
    }
    assert_eq!(
        flags_of(&pool, "billing").await,
        vec![(id, "dismissed".into())]
    );
    assert_eq!(count(&got), 1, "nobody paged again");

    // It clears: the dismissal lets go; it comes back: raised again.
    pass(&pool, &mut w, vec![]).await;
    let released: Option<chrono::DateTime<chrono::Utc>> =
        sqlx::query_scalar("SELECT released_at FROM flags WHERE id = $1")
            .bind(id)
            .fetch_one(&pool)
            .await
            .expect("released");
    assert!(released.is_some());
    pass(&pool, &mut w, vec![trouble("billing", "WARN")]).await;
    deliver_due(&pool, &webhooks()).await.expect("deliver");
    let flags = flags_of(&pool, "billing").await;
    assert_eq!(flags.len(), 2, "{flags:?}");
    assert_eq!(flags[1].1, "open");
    assert_eq!(count(&got), 2);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_snoozed_flag_returns_when_its_snooze_ends_with_the_trouble_there(pool: PgPool) {
    let t = TestApp::new(pool.clone()).await;
    let token = admin(&t).await;
    let (url, got) = receiver().await;
    let mut w = Watcher {
        cluster: cluster(&pool).await,
        route: team(&pool, "payments", &format!("{url}/ok")).await,
        routes: Vec::new(),
    };
    pass(&pool, &mut w, vec![trouble("billing", "STALL")]).await;
    let id = flags_of(&pool, "billing").await[0].0;
    let until = chrono::Utc::now() + chrono::Duration::hours(2);
    let path = format!("/api/v1/flags/{id}/dismiss");
    let r = t
        .api(
            Method::POST,
            &path,
            &token,
            Some(json!({"reason": "known", "dismissal": "wrong", "snooze_until": until})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    pass(&pool, &mut w, vec![trouble("billing", "STALL")]).await;
    assert_eq!(flags_of(&pool, "billing").await.len(), 1, "snoozed");

    // Two hours on (the test moves the snooze rather than the clock).
    sqlx::query("UPDATE flags SET snoozed_until = now() - interval '1 s' WHERE id = $1")
        .bind(id)
        .execute(&pool)
        .await
        .expect("move");
    pass(&pool, &mut w, vec![trouble("billing", "STALL")]).await;
    deliver_due(&pool, &webhooks()).await.expect("deliver");
    let flags = flags_of(&pool, "billing").await;
    assert_eq!(flags.len(), 2, "raised again: {flags:?}");
    assert_eq!(flags[1].1, "open");
    // The first raise and the one after the snooze.
    assert_eq!(count(&got), 2);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_flag_that_worsens_reaches_its_owner(pool: PgPool) {
    let (url, got) = receiver().await;
    let mut w = Watcher {
        cluster: cluster(&pool).await,
        route: team(&pool, "payments", &format!("{url}/ok")).await,
        routes: Vec::new(),
    };
    pass(&pool, &mut w, vec![trouble("billing", "WARN")]).await;
    pass(&pool, &mut w, vec![trouble("billing", "WARN")]).await;
    pass(&pool, &mut w, vec![trouble("billing", "STOP")]).await;
    pass(&pool, &mut w, vec![trouble("billing", "STOP")]).await;
    pass(&pool, &mut w, vec![trouble("billing", "WARN")]).await;
    deliver_due(&pool, &webhooks()).await.expect("deliver");
    let got = got.lock().expect("lock").clone();
    let transitions: BTreeSet<String> = got
        .iter()
        .map(|(_, b)| b["transition"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(got.len(), 2, "the raise and the worsening only: {got:?}");
    assert_eq!(
        transitions,
        BTreeSet::from(["raise".into(), "worsen".into()])
    );
    let worse = got
        .iter()
        .find(|(_, b)| b["transition"] == "worsen")
        .expect("worsening");
    assert!(
        worse.1["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("[STOP]") && t.contains("(was WARN)")),
        "{}",
        worse.1
    );
    assert_ne!(got[0].0, got[1].0, "a key per transition");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_delivery_racing_a_sampler_update_of_its_flag_is_delivered_once(pool: PgPool) {
    let (url, got) = receiver().await;
    let mut w = Watcher {
        cluster: cluster(&pool).await,
        route: team(&pool, "payments", &format!("{url}/ok")).await,
        routes: Vec::new(),
    };
    pass(&pool, &mut w, vec![trouble("billing", "STOP")]).await;
    let id = flags_of(&pool, "billing").await[0].0;

    // The sampler updates the flag and holds its row.
    let mut sampler = pool.begin().await.expect("begin");
    sqlx::query("UPDATE flags SET reason = 'still stopped' WHERE id = $1")
        .bind(id)
        .execute(&mut *sampler)
        .await
        .expect("lock");
    let first = {
        let pool = pool.clone();
        tokio::spawn(async move { deliver_due(&pool, &webhooks()).await })
    };
    // The post goes out while the row is held; recording it waits.
    for _ in 0..100 {
        if count(&got) > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(count(&got), 1);
    // Another replica meanwhile finds nothing to send.
    assert_eq!(deliver_due(&pool, &webhooks()).await.expect("second"), 0);
    sampler.commit().await.expect("commit");
    assert_eq!(first.await.expect("join").expect("first"), 1);
    assert_eq!(deliver_due(&pool, &webhooks()).await.expect("again"), 0);
    assert_eq!(count(&got), 1, "delivered once");
    let (notified, reason): (Option<chrono::DateTime<chrono::Utc>>, String) =
        sqlx::query_as("SELECT notified_at, reason FROM flags WHERE id = $1")
            .bind(id)
            .fetch_one(&pool)
            .await
            .expect("flag");
    assert!(notified.is_some(), "notified on its 2xx");
    assert_eq!(reason, "still stopped", "the sampler's update stands");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn two_replicas_deliver_each_flag_once(pool: PgPool) {
    let (url, got) = receiver().await;
    let mut w = Watcher {
        cluster: cluster(&pool).await,
        route: team(&pool, "payments", &format!("{url}/ok")).await,
        routes: Vec::new(),
    };
    let observed = (0..120)
        .map(|i| trouble(&format!("g{i}"), "STOP"))
        .collect();
    pass(&pool, &mut w, observed).await;
    let replica = |pool: PgPool| async move {
        let hooks = webhooks();
        let mut sent = 0;
        loop {
            match deliver_due(&pool, &hooks).await.expect("deliver") {
                0 => return sent,
                n => sent += n,
            }
        }
    };
    let (a, b) = tokio::join!(replica(pool.clone()), replica(pool.clone()));
    assert_eq!(a + b, 120, "{a} + {b}");
    let got = got.lock().expect("lock").clone();
    assert_eq!(got.len(), 120);
    let keys: BTreeSet<&str> = got.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys.len(), 120, "one key per flag, each sent once");
    let unnotified: i64 =
        sqlx::query_scalar("SELECT count(*) FROM flags WHERE notified_at IS NULL")
            .fetch_one(&pool)
            .await
            .expect("count");
    assert_eq!(unnotified, 0);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_failing_receiver_delays_only_its_own_delivery_retried_with_the_same_key(pool: PgPool) {
    let (url, got) = receiver().await;
    let c = cluster(&pool).await;
    let mut w = Watcher {
        cluster: c,
        route: team(&pool, "payments", &format!("{url}/ok")).await,
        routes: vec![
            (
                "scoring".into(),
                team(&pool, "fraud", &format!("{url}/fail")).await,
            ),
            (
                "clicks".into(),
                team(&pool, "ads", &format!("{url}/hang")).await,
            ),
        ],
    };
    let observed = ["scoring", "clicks", "billing"]
        .map(|g| trouble(g, "STOP"))
        .to_vec();
    pass(&pool, &mut w, observed).await;
    let started = std::time::Instant::now();
    assert_eq!(deliver_due(&pool, &webhooks()).await.expect("deliver"), 3);
    // Side by side: the hanging one costs its timeout once, not per flag.
    assert!(
        started.elapsed() < Duration::from_secs(9),
        "{:?}",
        started.elapsed()
    );
    let states: Vec<(String, bool, i32)> = sqlx::query_as(
        "SELECT f.subject, d.delivered_at IS NOT NULL, d.attempts FROM deliveries d
         JOIN flags f ON f.id = d.flag_id ORDER BY f.subject",
    )
    .fetch_all(&pool)
    .await
    .expect("deliveries");
    assert_eq!(
        states,
        vec![
            ("billing".into(), true, 1),
            ("clicks".into(), false, 1),
            ("scoring".into(), false, 1)
        ]
    );

    // The retry of the failed one carries the key of its first attempt.
    sqlx::query("UPDATE deliveries SET next_attempt_at = now() WHERE delivered_at IS NULL")
        .execute(&pool)
        .await
        .expect("due");
    deliver_due(&pool, &webhooks()).await.expect("retry");
    let got = got.lock().expect("lock").clone();
    let scoring: Vec<&str> = got
        .iter()
        .filter(|(_, b)| b["flag"]["subject"] == "scoring")
        .map(|(k, _)| k.as_str())
        .collect();
    assert_eq!(scoring.len(), 2);
    assert_eq!(scoring[0], scoring[1], "the same key on retry");
    assert!(!scoring[0].is_empty());
    let billing = got
        .iter()
        .filter(|(_, b)| b["flag"]["subject"] == "billing")
        .count();
    assert_eq!(billing, 1, "no flag delivered twice because another failed");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn dismissals_of_flags_missing_or_of_others_are_refused_audited_and_change_nothing(
    pool: PgPool,
) {
    let t = TestApp::new(pool.clone()).await;
    let olga = t.user("olga", &[Role::Owner]).await;
    let token = t.token(olga).await;
    let (url, _got) = receiver().await;
    let mut w = Watcher {
        cluster: cluster(&pool).await,
        route: team(&pool, "payments", &format!("{url}/ok")).await,
        routes: Vec::new(),
    };
    pass(&pool, &mut w, vec![trouble("billing", "STOP")]).await;
    let id = flags_of(&pool, "billing").await[0].0;
    let body = json!({"reason": "noise", "dismissal": "wrong"});

    let r = t
        .api(
            Method::POST,
            "/api/v1/flags/999999/dismiss",
            &token,
            Some(body.clone()),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    let path = format!("/api/v1/flags/{id}/dismiss");
    let r = t.api(Method::POST, &path, &token, Some(body.clone())).await;
    assert_eq!(
        r.status,
        StatusCode::FORBIDDEN,
        "olga is not in payments: {}",
        r.body
    );
    let actions = t.audit_actions().await;
    assert!(
        actions.iter().any(|a| a == "flag.act.refused"),
        "{actions:?}"
    );
    assert!(
        actions.iter().any(|a| a == "request.refused"),
        "{actions:?}"
    );

    // Her team's now; bad values are 422 and change nothing either.
    sqlx::query("INSERT INTO memberships (team_id, user_id) VALUES ($1, $2)")
        .bind(w.route.0)
        .bind(olga)
        .execute(&pool)
        .await
        .expect("member");
    let past = chrono::Utc::now() - chrono::Duration::hours(1);
    let far = chrono::Utc::now() + chrono::Duration::days(400);
    for bad in [
        json!({"reason": "noise", "dismissal": "bored"}),
        json!({"reason": "noise", "dismissal": ""}),
        json!({"reason": " ", "dismissal": "wrong"}),
        json!({"reason": "noise", "dismissal": "wrong", "snooze_until": past}),
        json!({"reason": "noise", "dismissal": "wrong", "snooze_until": far}),
    ] {
        let r = t.api(Method::POST, &path, &token, Some(bad.clone())).await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{bad}: {}",
            r.body
        );
    }
    assert_eq!(flags_of(&pool, "billing").await, vec![(id, "open".into())]);
    let r = t.api(Method::POST, &path, &token, Some(body)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_connector_flags_page_shows_its_trace_restart_and_link(pool: PgPool) {
    use streamkeeper::connect::status::{ConnectorSeen, InstanceSeen, observe};
    let t = TestApp::new(pool.clone()).await;
    t.user("ada", &[Role::Admin]).await;
    let cookie = t.login("ada", support::PASSWORD).await.expect("signed in");
    let c = cluster(&pool).await;
    let trace = "org.apache.kafka.connect.errors.ConnectException: disk full\n\tat S3SinkTask.put(S3SinkTask.java:225)";
    let instance = |task, state: &str, trace: Option<&str>| InstanceSeen {
        task,
        state: state.into(),
        trace: trace.map(str::to_owned),
        unassigned_passes: 0,
    };
    let seen = ConnectorSeen {
        connect: "main".into(),
        name: "s3-orders".into(),
        connector: instance(None, "RUNNING", None),
        tasks: vec![instance(Some(0), "FAILED", Some(trace))],
    };
    let restart =
        "http://connect:8083/connectors/s3-orders/restart?includeTasks=true&onlyFailed=true";
    let o = observe(&seen, chrono::Utc::now().timestamp_millis(), restart).expect("trouble");
    let id = lifecycle::raise(&pool, c, "local", &o, None)
        .await
        .expect("raise");
    let page = t.get(&format!("/flags/{id}"), Some(&cookie)).await;
    assert_eq!(page.status, StatusCode::OK);
    let receipts = page
        .body
        .split(r#"data-testid="receipts""#)
        .nth(1)
        .unwrap_or_else(|| panic!("{}", page.body));
    assert!(
        receipts.contains("ConnectException: disk full"),
        "{receipts}"
    );
    assert!(
        receipts.contains("S3SinkTask.java:225"),
        "the whole trace: {receipts}"
    );
    assert!(
        receipts.contains("POST http://connect:8083/connectors/s3-orders/restart"),
        "{receipts}"
    );
    assert!(
        receipts.contains(&format!(
            "/clusters/{c}/connector?connect=main&amp;name=s3-orders"
        )),
        "{receipts}"
    );
    assert!(!receipts.contains("window of null"), "{receipts}");
}
