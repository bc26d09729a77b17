//! On-call reached end to end, on the broker scripts/test starts: a
//! consumer stops; its owner team's PagerDuty (the double that keeps
//! Events API v2's contract) gets one `trigger` for the flag and a real
//! Alertmanager shows one active alert with its labels; acknowledging
//! the flag in the console, as a person, sends PagerDuty `acknowledge`;
//! the consumer comes back and both resolve. Sampled every 5 s, as the
//! other broker tests are; the notify routine's passes run in between.

mod support;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use streamkeeper::accounts::role::Role;
use streamkeeper::platform::credential::CredentialPolicy;
use streamkeeper::platform::egress::EgressPolicy;
use streamkeeper_doubles::oncall::{self, Recorder};
use streamkeeper_server::clients::egress::Outbound;
use streamkeeper_server::clients::kafka::reader::{ReadError, Reading};
use streamkeeper_server::clients::webhook::Webhooks;
use streamkeeper_server::watch::routine::{self as watch, PassOutcome};
use support::TestApp;
use support::alertmanager::Alertmanager;
use support::kafka::{bootstrap, consuming, producing, topic_with};

/// The sampling interval (the routine's `every` in scripts/test's runs).
const INTERVAL: Duration = Duration::from_secs(5);
/// The team's PagerDuty routing key (an integration's 32 characters).
const KEY: &str = "0123456789abcdef0123456789abcdef";

/// The sampler's passes of one cluster every [`INTERVAL`], and the
/// notify routine's passes in between (it runs every second).
struct Sampler {
    cluster: streamkeeper_server::watch::store::ClusterRow,
    pending: Option<tokio::task::JoinHandle<Result<Reading, ReadError>>>,
    kept: streamkeeper_server::watch::kept::KeptWindow,
    hooks: Webhooks,
    policy: CredentialPolicy,
    next: tokio::time::Instant,
    passes: usize,
}

impl Sampler {
    async fn new(t: &TestApp, id: i64, policy: CredentialPolicy) -> Self {
        let cluster = streamkeeper_server::watch::store::by_id(&t.pool, id)
            .await
            .expect("db")
            .expect("cluster");
        Self {
            cluster,
            pending: None,
            kept: Default::default(),
            hooks: Webhooks::new(EgressPolicy::LOOPBACK).expect("webhooks"),
            policy,
            next: tokio::time::Instant::now(),
            passes: 0,
        }
    }

    /// A sampler's pass when one is due, then a notify pass, then a
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
        streamkeeper_server::notify::routine::pass(
            &t.pool,
            support::ORIGIN,
            &self.hooks,
            &self.policy,
        )
        .await
        .expect("notify");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }

    /// Ticks until `done`, failing after `within`.
    async fn until(&mut self, t: &TestApp, within: Duration, what: &str, done: impl Fn() -> bool) {
        let deadline = tokio::time::Instant::now() + within;
        while !done() {
            assert!(tokio::time::Instant::now() < deadline, "{what}");
            self.tick(t).await;
        }
    }
}

/// PagerDuty's events as `action dedup_key`, in the order received.
fn actions(rec: &Recorder) -> Vec<String> {
    rec.of("pagerduty")
        .iter()
        .map(|r| format!("{} {}", r.body["event_action"], r.body["dedup_key"]).replace('"', ""))
        .collect()
}

/// The channels' credential directory (`notify/` under the policy's)
/// holding the routing key, and a policy allowing it.
fn secrets() -> (std::path::PathBuf, CredentialPolicy) {
    let root = std::env::temp_dir().join(format!("sk-notify-broker-{}", std::process::id()));
    let dir = root.join("notify");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("pd"), KEY).expect("write");
    let policy = CredentialPolicy::new("STREAMKEEPER_CRED_", [root.to_str().expect("utf-8")])
        .expect("policy");
    (root, policy)
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_stopped_consumer_pages_its_owner_once_and_both_resolve(pool: sqlx::PgPool) {
    let bootstrap = bootstrap();
    let run = format!(
        "{}-{}",
        std::process::id(),
        pool.connect_options().get_database().unwrap_or("db")
    );
    let topic = format!("oncall-orders-{run}");
    let group = format!("oncall-readers-{run}");
    topic_with(&bootstrap, &topic, &[1]).await;
    let (stop_producer, stop_consumer) = (Arc::default(), Arc::<AtomicBool>::default());
    producing(&bootstrap, &topic, Arc::clone(&stop_producer));
    let consumer = consuming(&bootstrap, &group, &topic, Arc::clone(&stop_consumer));

    let (dir, policy) = secrets();
    let mut cfg = support::config();
    cfg.outbound = Outbound {
        egress: EgressPolicy::LOOPBACK,
        credentials: policy.clone(),
    };
    let t = TestApp::with_config(pool, cfg).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    t.user("olga", &[Role::Owner]).await;
    let at = t.token(admin).await;
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
    let r = t
        .api(
            Method::POST,
            &format!("/api/v1/teams/{team}/members"),
            &at,
            Some(json!({"username": "olga"})),
        )
        .await;
    assert!(r.status.is_success(), "{}", r.body);

    // The team's on-call: PagerDuty (the double) and a real Alertmanager.
    let (pd_url, rec) = oncall::spawn(vec![KEY.into()]).await;
    let am = Alertmanager::start().await;
    let channels = format!("/api/v1/teams/{team}/channels");
    for body in [
        json!({"name": "pager", "kind": "pagerduty", "endpoint": format!("{pd_url}/v2/enqueue"),
               "secret": format!("file:{}/notify/pd", dir.display())}),
        json!({"name": "am", "kind": "alertmanager", "endpoint": am.alerts_endpoint()}),
    ] {
        let r = t.api(Method::POST, &channels, &at, Some(body)).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    }
    let r = t
        .api(
            Method::POST,
            "/api/v1/clusters",
            &at,
            Some(json!({"name": "local", "bootstrap": bootstrap})),
        )
        .await;
    let id = r.json()["id"].as_i64().expect("id");

    // The group is claimed once a pass has seen it, and consumes through
    // three passes; then it stops.
    let mut s = Sampler::new(&t, id, policy).await;
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
    while s.passes < 3 {
        s.tick(&t).await;
    }
    assert!(rec.got().is_empty(), "nothing while it consumes");
    stop_consumer.store(true, Ordering::SeqCst);
    consumer.join().expect("consumer");
    let paged = || !rec.of("pagerduty").is_empty();
    s.until(&t, Duration::from_secs(60), "PagerDuty never paged", paged)
        .await;
    // One more pass of the same trouble tells nobody again.
    let passes = s.passes;
    while s.passes < passes + 1 {
        s.tick(&t).await;
    }

    let all = "/api/v1/flags?scope=all&state=any&per_page=200";
    let flags = t.api(Method::GET, all, &at, None).await.json();
    let flag = flags["items"]
        .as_array()
        .expect("flags")
        .iter()
        .find(|f| f["subject"] == json!(group))
        .cloned()
        .expect("the group's flag");
    assert_eq!(flag["kind"], "STOP", "{flag}");
    let flag_id = flag["id"].as_i64().expect("id");
    let dedup = format!("streamkeeper-flag-{flag_id}");
    assert_eq!(actions(&rec), vec![format!("trigger {dedup}")]);
    let trigger = &rec.of("pagerduty")[0];
    assert_eq!(trigger.status, 202);
    assert_eq!(trigger.body["payload"]["severity"], "critical");
    assert_eq!(trigger.body["routing_key"], KEY);

    // Alertmanager's own API: exactly one active alert, with its labels.
    let alerts = am.alerts("group", &group).await;
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    let a = &alerts[0];
    assert_eq!(a["status"]["state"], "active", "{a}");
    let labels = json!({"alertname": "StreamkeeperFlag", "cluster": "local", "group": group,
        "topic": topic, "team": "payments", "severity": "critical", "kind": "STOP"});
    assert_eq!(a["labels"], labels);
    assert_eq!(
        a["generatorURL"],
        format!("{}/flags/{flag_id}", support::ORIGIN)
    );

    // Acknowledged in the console by a member, signed in as a person,
    // through the server function the flag's page posts to.
    let cookie = t
        .login("olga", support::PASSWORD)
        .await
        .expect("olga signs in");
    let r = t
        .post_form(
            "/fn/acknowledge_flag",
            Some(&cookie),
            &[("flag_id", &flag_id.to_string())],
        )
        .await;
    assert!(r.status.is_success(), "{} {}", r.status, r.body);
    let acked = || actions(&rec).len() >= 2;
    s.until(&t, Duration::from_secs(10), "no acknowledge sent", acked)
        .await;
    assert_eq!(actions(&rec)[1], format!("acknowledge {dedup}"));

    // The consumer comes back: the flag resolves, PagerDuty's incident
    // with it, and the Alertmanager alert ends.
    let stop_again = Arc::<AtomicBool>::default();
    let consumer = consuming(&bootstrap, &group, &topic, Arc::clone(&stop_again));
    let resolved = || actions(&rec).len() >= 3;
    s.until(&t, Duration::from_secs(60), "never resolved", resolved)
        .await;
    stop_again.store(true, Ordering::SeqCst);
    stop_producer.store(true, Ordering::SeqCst);
    consumer.join().expect("consumer");
    assert_eq!(
        actions(&rec),
        vec![
            format!("trigger {dedup}"),
            format!("acknowledge {dedup}"),
            format!("resolve {dedup}")
        ]
    );
    assert!(rec.of("pagerduty").iter().all(|r| r.status == 202));
    let f = t
        .api(Method::GET, &format!("/api/v1/flags/{flag_id}"), &at, None)
        .await
        .json();
    assert_eq!(f["state"], "resolved", "{f}");
    // Ended: the last post's endsAt has passed, so Alertmanager no longer
    // lists it among the alerts not ended.
    let posts: Vec<Value> = sqlx::query_scalar(
        "SELECT d.body FROM deliveries d JOIN notify_channels c ON c.id = d.channel_id
          WHERE c.kind = 'alertmanager' AND d.delivered_at IS NOT NULL ORDER BY d.id",
    )
    .fetch_all(&t.pool)
    .await
    .expect("posts");
    assert_eq!(posts.len(), 3, "raise, acknowledge, resolve: {posts:?}");
    let ends = posts[2][0]["endsAt"].as_str().expect("endsAt");
    let ends = chrono::DateTime::parse_from_rfc3339(ends).expect("time");
    assert!(ends <= chrono::Utc::now(), "{ends}");
    let left = am.alerts("group", &group).await;
    assert!(
        left.iter().all(|a| a["status"]["state"] != "active"),
        "{left:?}"
    );
    std::fs::remove_dir_all(dir).ok();
}
