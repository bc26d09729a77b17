//! Notification channels on the real Postgres, against doubles that keep
//! PagerDuty's, Slack's and Teams' published contracts and a real
//! Alertmanager: transitions only, one grouped message per channel for a
//! burst, filters, acknowledgments and resolutions, retries with the same
//! idempotency key, a broken channel that leaves the others delivering,
//! silences, the channels' settings over REST (refusals audited,
//! secrets never shown back), and a silence made in Alertmanager itself
//! that keeps its receiver from being told.

mod support;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::PgPool;
use std::path::PathBuf;
use streamkeeper::accounts::role::Role;
use streamkeeper::flags::{FlagKey, Observation};
use streamkeeper::platform::credential::CredentialPolicy;
use streamkeeper::platform::egress::EgressPolicy;
use streamkeeper_doubles::oncall::{self, Recorder};
use streamkeeper_server::clients::egress::Outbound;
use streamkeeper_server::clients::webhook::Webhooks;
use streamkeeper_server::flags::lifecycle::{self, FlagSource, Route};
use streamkeeper_server::platform::errors::Db;
use support::TestApp;
use support::alertmanager::Alertmanager;

const KEY: &str = "0123456789abcdef0123456789abcdef";

/// A credential directory of the test's own, with the policy allowing it;
/// the channels' files go in its `notify/` (where channels may read).
fn secrets(name: &str, files: &[(&str, &str)]) -> (PathBuf, CredentialPolicy) {
    let root = std::env::temp_dir().join(format!("sk-notify-{}-{name}", std::process::id()));
    let dir = root.join("notify");
    std::fs::create_dir_all(&dir).expect("dir");
    for (f, v) in files {
        std::fs::write(dir.join(f), v).expect("write");
    }
    let policy = CredentialPolicy::new("STREAMKEEPER_CRED_", [root.to_str().expect("utf-8")])
        .expect("policy");
    (dir, policy)
}

fn outbound(policy: &CredentialPolicy) -> Outbound {
    Outbound {
        egress: EgressPolicy::LOOPBACK,
        credentials: policy.clone(),
    }
}

async fn app(pool: &PgPool, policy: &CredentialPolicy) -> TestApp {
    let mut cfg = support::config();
    cfg.outbound = outbound(policy);
    TestApp::with_config(pool.clone(), cfg).await
}

async fn cluster(pool: &PgPool) -> i64 {
    sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s, insecure_credentials)
         VALUES ('prod', '127.0.0.1:9092', 'PLAINTEXT', 15, true) RETURNING id",
    )
    .fetch_one(pool)
    .await
    .expect("cluster")
}

async fn team(pool: &PgPool, name: &str) -> Route {
    let id = sqlx::query_scalar("INSERT INTO teams (name) VALUES ($1) RETURNING id")
        .bind(name)
        .fetch_one(pool)
        .await
        .expect("team");
    (id, name.to_owned(), None)
}

struct Watcher {
    cluster: i64,
    route: Route,
}

#[async_trait::async_trait]
impl FlagSource for Watcher {
    fn cluster(&self) -> (i64, &str) {
        (self.cluster, "prod")
    }
    fn evaluated(&self, _: &FlagKey) -> bool {
        true
    }
    fn worse(&self, _: &FlagKey, before: &str, now: &str) -> bool {
        let rank = |k: &str| ["WARN", "STALL", "STOP"].iter().position(|x| *x == k);
        rank(now) > rank(before)
    }
    async fn route(&self, _: &PgPool, _: &FlagKey) -> Result<Option<Route>, Db> {
        Ok(Some(self.route.clone()))
    }
    fn receipts(&self, _: &mut Observation) {}
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

async fn watch(pool: &PgPool, w: &mut Watcher, observed: Vec<Observation>) {
    lifecycle::reconcile(pool, w, observed)
        .await
        .expect("reconcile");
}

/// One pass of the notify routine.
async fn notify(pool: &PgPool, policy: &CredentialPolicy) -> usize {
    let hooks = Webhooks::new(EgressPolicy::LOOPBACK).expect("webhooks");
    streamkeeper_server::notify::routine::pass(pool, "https://sk.example", &hooks, policy)
        .await
        .expect("notify")
}

async fn add(t: &TestApp, token: &str, team: i64, body: Value) -> Value {
    let r = t
        .api(
            Method::POST,
            &format!("/api/v1/teams/{team}/channels"),
            token,
            Some(body),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    r.json()
}

async fn admin(t: &TestApp) -> String {
    let ada = t.user("ada", &[Role::Admin]).await;
    t.token(ada).await
}

/// Slack, Teams, PagerDuty and a signed webhook for team `team`.
async fn four_channels(t: &TestApp, token: &str, team: i64, dir: &std::path::Path, url: &str) {
    std::fs::write(dir.join("slack"), format!("{url}/services/T1/B1/abc")).expect("w");
    std::fs::write(dir.join("teams"), format!("{url}/workflows/flow-1")).expect("w");
    std::fs::write(dir.join("pd"), KEY).expect("w");
    std::fs::write(dir.join("sign"), "s3cret").expect("w");
    let d = dir.display();
    add(
        t,
        token,
        team,
        json!({"name": "chat", "kind": "slack", "endpoint": format!("file:{d}/slack")}),
    )
    .await;
    add(
        t,
        token,
        team,
        json!({"name": "teams", "kind": "teams", "endpoint": format!("file:{d}/teams")}),
    )
    .await;
    add(
        t,
        token,
        team,
        json!({"name": "pager", "kind": "pagerduty",
        "endpoint": format!("{url}/v2/enqueue"), "secret": format!("file:{d}/pd"),
        "min_severity": "error"}),
    )
    .await;
    add(
        t,
        token,
        team,
        json!({"name": "hook", "kind": "webhook",
        "endpoint": format!("{url}/services/T9/B9/hook"), "secret": format!("file:{d}/sign")}),
    )
    .await;
}

fn actions(rec: &Recorder) -> Vec<String> {
    rec.of("pagerduty")
        .iter()
        .map(|r| format!("{} {}", r.body["event_action"], r.body["dedup_key"]).replace('"', ""))
        .collect()
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_burst_is_one_message_per_channel_and_only_transitions_are_told(pool: PgPool) {
    let (dir, policy) = secrets("burst", &[]);
    let t = app(&pool, &policy).await;
    let token = admin(&t).await;
    let (url, rec) = oncall::spawn(vec![KEY.into()]).await;
    let route = team(&pool, "payments").await;
    four_channels(&t, &token, route.0, &dir, &url).await;
    let mut w = Watcher {
        cluster: cluster(&pool).await,
        route,
    };

    let burst: Vec<Observation> = (0..30)
        .map(|i| trouble(&format!("g{i}"), if i == 0 { "WARN" } else { "STOP" }))
        .collect();
    watch(&pool, &mut w, burst.clone()).await;
    notify(&pool, &policy).await;
    let slack = rec.of("slack");
    let chat: Vec<_> = slack.iter().filter(|r| r.path.ends_with("/abc")).collect();
    assert_eq!(chat.len(), 1, "one grouped message");
    assert!(chat.iter().all(|r| r.status == 200), "Slack's limits kept");
    assert_eq!(
        chat[0].body["blocks"][0]["text"]["text"],
        "30 flags raised on cluster prod"
    );
    assert_eq!(rec.of("teams").len(), 1);
    assert_eq!(rec.of("teams")[0].status, 202, "a card Teams takes");
    // PagerDuty: one event per flag, the WARN filtered out (error and up).
    let pd = rec.of("pagerduty");
    assert_eq!(pd.len(), 29);
    assert!(
        pd.iter()
            .all(|r| r.status == 202 && r.body["event_action"] == "trigger")
    );
    assert!(pd.iter().all(|r| r.body["routing_key"] == KEY));
    // The webhook's signature verifies over exactly the bytes sent.
    let hook: Vec<_> = slack.iter().filter(|r| r.path.ends_with("/hook")).collect();
    assert_eq!(hook.len(), 1);
    let sig = hook[0].signature.as_deref().expect("signed");
    let now = chrono::Utc::now().timestamp();
    assert_eq!(
        streamkeeper::notify::webhook::verify(b"s3cret", sig, &hook[0].raw, now, 300),
        Ok(())
    );
    assert_eq!(hook[0].body["flags"].as_array().map(Vec::len), Some(30));

    // The same trouble next pass: nothing is told again.
    let before = rec.got().len();
    watch(&pool, &mut w, burst).await;
    notify(&pool, &policy).await;
    assert_eq!(rec.got().len(), before, "transitions only");

    // Acknowledged in the console: PagerDuty hears `acknowledge`.
    let id: i64 = sqlx::query_scalar("SELECT id FROM flags WHERE subject = 'g1'")
        .fetch_one(&pool)
        .await
        .expect("flag");
    let r = t
        .api(
            Method::POST,
            &format!("/api/v1/flags/{id}/acknowledge"),
            &token,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    notify(&pool, &policy).await;
    assert!(
        actions(&rec).contains(&format!("acknowledge streamkeeper-flag-{id}")),
        "{:?}",
        actions(&rec)
    );

    // Everything clears: one resolution message per chat channel, and a
    // resolve per PagerDuty incident.
    watch(&pool, &mut w, vec![]).await;
    notify(&pool, &policy).await;
    let resolves = actions(&rec)
        .iter()
        .filter(|a| a.starts_with("resolve"))
        .count();
    assert_eq!(resolves, 29);
    let last = rec.of("teams").pop().expect("teams");
    let title = &last.body["attachments"][0]["content"]["body"][0]["text"];
    assert_eq!(title, "30 flags resolved on cluster prod");

    // The flag's page lists each channel's delivery with its answer.
    let r = t
        .api(
            Method::GET,
            &format!("/api/v1/flags/{id}/deliveries"),
            &token,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let d = r.json();
    let of = |ch: &str, tr: &str| {
        d.as_array()
            .expect("list")
            .iter()
            .find(|x| x["channel"] == ch && x["transition"] == tr)
            .cloned()
            .unwrap_or(Value::Null)
    };
    assert_eq!(of("chat", "raise")["answer"], "200 ok");
    assert!(
        of("pager", "acknowledge")["answer"]
            .as_str()
            .expect("a")
            .starts_with("202 ")
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_refused_channel_is_broken_while_the_others_deliver_and_throttling_retries(pool: PgPool) {
    let (dir, policy) = secrets("broken", &[]);
    let t = app(&pool, &policy).await;
    let token = admin(&t).await;
    let (url, rec) = oncall::spawn(vec![KEY.into()]).await;
    let route = team(&pool, "payments").await;
    four_channels(&t, &token, route.0, &dir, &url).await;
    rec.revoke("/services/T1/B1/abc");
    rec.throttle(1);
    let mut w = Watcher {
        cluster: cluster(&pool).await,
        route,
    };
    watch(&pool, &mut w, vec![trouble("billing", "STOP")]).await;
    notify(&pool, &policy).await;

    let broken: (Option<chrono::DateTime<chrono::Utc>>, Option<String>) =
        sqlx::query_as("SELECT broken_at, broken_answer FROM notify_channels WHERE name = 'chat'")
            .fetch_one(&pool)
            .await
            .expect("chat");
    assert!(broken.0.is_some());
    assert_eq!(broken.1.as_deref(), Some("404 no_service"));
    assert_eq!(rec.of("teams").len(), 1, "the others deliver");
    // PagerDuty throttled the first: retried later with the same key.
    let pd = rec.of("pagerduty");
    assert_eq!(pd.len(), 1);
    assert_eq!(pd[0].status, 429);
    sqlx::query("UPDATE deliveries SET next_attempt_at = now() WHERE delivered_at IS NULL")
        .execute(&pool)
        .await
        .expect("due");
    notify(&pool, &policy).await;
    let pd = rec.of("pagerduty");
    assert_eq!(pd.len(), 2);
    assert_eq!(pd[1].status, 202);
    assert_eq!(pd[0].idempotency_key, pd[1].idempotency_key);
    // The broken channel's delivery was given up, not retried.
    assert_eq!(
        rec.of("slack")
            .iter()
            .filter(|r| r.path.ends_with("/abc"))
            .count(),
        1
    );

    // The team's page shows it broken with the receiver's answer.
    let r = t
        .api(
            Method::GET,
            &format!("/api/v1/teams/{}/channels", w.route.0),
            &token,
            None,
        )
        .await;
    let chat = r
        .json()
        .as_array()
        .expect("list")
        .iter()
        .find(|c| c["name"] == "chat")
        .cloned();
    assert_eq!(chat.expect("chat")["broken_answer"], "404 no_service");
    // A receiver that hangs delays only itself (5 s timeout), then retries.
    assert!(
        !r.body.contains(KEY) && !r.body.contains("s3cret") && !r.body.contains("/services/T1")
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_silence_holds_deliveries_and_sends_them_if_the_trouble_outlives_it(pool: PgPool) {
    let (dir, policy) = secrets("silence", &[]);
    let t = app(&pool, &policy).await;
    let token = admin(&t).await;
    let (url, rec) = oncall::spawn(vec![KEY.into()]).await;
    let route = team(&pool, "payments").await;
    four_channels(&t, &token, route.0, &dir, &url).await;
    let cluster_id = cluster(&pool).await;
    let mut w = Watcher {
        cluster: cluster_id,
        route,
    };
    let path = format!("/api/v1/clusters/{cluster_id}/silences");
    let until = chrono::Utc::now() + chrono::Duration::hours(1);
    // Refused: no reason; a cluster muted by a non-admin (both audited).
    let r = t
        .api(
            Method::POST,
            &path,
            &token,
            Some(json!({"scope": "group", "name": "billing", "until": until, "reason": " "})),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    let bob = t.user("bob", &[Role::Viewer]).await;
    let bob = t.token(bob).await;
    let r = t
        .api(
            Method::POST,
            &path,
            &bob,
            Some(json!({"scope": "cluster", "until": until, "reason": "deploy"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let mut ids = Vec::new();
    for g in ["billing", "orders"] {
        let r = t
            .api(
                Method::POST,
                &path,
                &token,
                Some(json!({"scope": "group", "name": g, "until": until, "reason": "deploy"})),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
        ids.push(r.json()["id"].clone());
    }
    let listed = t.api(Method::GET, &path, &token, None).await.json();
    assert_eq!(listed.as_array().map(Vec::len), Some(2));
    assert_eq!(listed[0]["reason"], "deploy");
    let audited: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM audit_log WHERE action IN ('notify.silence', 'notify.silence.refused')",
    )
    .fetch_one(&pool)
    .await
    .expect("audit");
    assert_eq!(audited, 3);
    watch(
        &pool,
        &mut w,
        vec![trouble("billing", "STOP"), trouble("orders", "STOP")],
    )
    .await;
    notify(&pool, &policy).await;
    assert!(rec.got().is_empty(), "held: {:?}", rec.got());
    // Held until the silence ends, unlooked at by the passes before.
    let held: Vec<Option<chrono::DateTime<chrono::Utc>>> =
        sqlx::query_scalar("SELECT held_until FROM notify_transitions WHERE fanned_out_at IS NULL")
            .fetch_all(&pool)
            .await
            .expect("held");
    assert_eq!(held.len(), 2);
    assert!(
        held.iter()
            .all(|h| h.is_some_and(|h| (h - until).num_milliseconds().abs() < 1_000)),
        "{held:?} vs {until}"
    );
    // `orders` clears during the silence; `billing` outlives it.
    watch(&pool, &mut w, vec![trouble("billing", "STOP")]).await;
    notify(&pool, &policy).await;
    assert!(rec.got().is_empty());
    for id in ids {
        let r = t
            .api(Method::DELETE, &format!("{path}/{id}"), &token, None)
            .await;
        assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    }
    notify(&pool, &policy).await;
    let pd = rec.of("pagerduty");
    assert_eq!(pd.len(), 1, "only the trouble that outlived the silence");
    assert_eq!(pd[0].body["payload"]["component"], "billing");
    assert_eq!(pd[0].body["event_action"], "trigger");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn channels_are_for_admins_and_members_with_secrets_by_reference(pool: PgPool) {
    let (dir, policy) = secrets("settings", &[]);
    let t = app(&pool, &policy).await;
    let token = admin(&t).await;
    let (url, rec) = oncall::spawn(vec![KEY.into()]).await;
    let (team_id, _, _) = team(&pool, "payments").await;
    let bob = t.user("bob", &[Role::Viewer]).await;
    let bob = t.token(bob).await;
    let path = format!("/api/v1/teams/{team_id}/channels");
    let body = json!({"name": "x", "kind": "alertmanager", "endpoint": format!("{url}/am")});
    let r = t.api(Method::POST, &path, &bob, Some(body)).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);

    // A literal key is refused (422, audited) and nothing is kept.
    let literal = json!({"name": "p", "kind": "pagerduty", "secret": KEY});
    let r = t.api(Method::POST, &path, &token, Some(literal)).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(!r.body.contains(KEY));
    let outside = json!({"name": "p", "kind": "pagerduty", "secret": "file:/etc/shadow"});
    let r = t.api(Method::POST, &path, &token, Some(outside)).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    let metadata = json!({"name": "m", "kind": "webhook", "endpoint": "http://169.254.169.254/x"});
    let r = t.api(Method::POST, &path, &token, Some(metadata)).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    let refusals: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM audit_log WHERE action = 'notify.channel.refused'",
    )
    .fetch_one(&pool)
    .await
    .expect("audit");
    assert_eq!(refusals, 3);
    let r = t.api(Method::GET, &path, &token, None).await;
    assert_eq!(r.json(), json!([]));
    // A channel can name no secret but a notification channel's: not the
    // cluster's password beside them, nor (for a team's owner) another
    // team's routing key. A viewer of the team sees its channels only.
    std::fs::write(dir.join("../kafka"), "hunter2").expect("w");
    std::fs::create_dir_all(dir.join("payments")).expect("dir");
    std::fs::write(dir.join("payments/pd"), KEY).expect("w");
    let root = dir.parent().expect("root").display().to_string();
    let to_me = |secret: String| {
        json!({"name": "p", "kind": "pagerduty",
               "endpoint": format!("{url}/v2/enqueue"), "secret": secret})
    };
    let kafka = to_me(format!("file:{root}/kafka"));
    let r = t.api(Method::POST, &path, &token, Some(kafka)).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(!r.body.contains("hunter2"));
    let olga = t.user("olga", &[Role::Owner]).await;
    let vera = t.user("vera", &[Role::Viewer]).await;
    for member in [olga, vera] {
        let mut conn = pool.acquire().await.expect("conn");
        streamkeeper_server::accounts::store::teams::add_member(&mut conn, team_id, member)
            .await
            .expect("member");
    }
    let (olga, vera) = (t.token(olga).await, t.token(vera).await);
    let others = to_me(format!("file:{}/pd", dir.display()));
    let r = t.api(Method::POST, &path, &olga, Some(others)).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(r.body.contains("notify/payments"), "{}", r.body);
    let theirs = to_me(format!("file:{}/payments/pd", dir.display()));
    let r = t
        .api(Method::POST, &path, &vera, Some(theirs.clone()))
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let r = t.api(Method::POST, &path, &olga, Some(theirs)).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let own = r.json();
    let r = t.api(Method::GET, &path, &vera, None).await;
    assert_eq!(r.json().as_array().map(Vec::len), Some(1), "{}", r.body);
    let try_it = format!("{path}/{}/test", own["id"]);
    let r = t.api(Method::POST, &try_it, &vera, None).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let r = t
        .api(
            Method::DELETE,
            &format!("{path}/{}", own["id"]),
            &olga,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);

    // Send a test: the answer is the receiver's, word for word.
    std::fs::write(dir.join("pd"), "ffffffffffffffffffffffffffffffff").expect("w");
    let c = add(
        &t,
        &token,
        team_id,
        json!({"name": "pager", "kind": "pagerduty",
        "endpoint": format!("{url}/v2/enqueue"), "secret": format!("file:{}/pd", dir.display())}),
    )
    .await;
    assert_eq!(c["secret_set"], true);
    assert!(!c.to_string().contains("ffff"));
    let r = t
        .api(
            Method::POST,
            &format!("{path}/{}/test", c["id"]),
            &token,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let a = r.json();
    assert_eq!(a["status"], 400);
    assert_eq!(a["ok"], false);
    assert!(
        a["answer"]
            .as_str()
            .expect("answer")
            .contains("Invalid routing key"),
        "{a}"
    );
    std::fs::write(dir.join("pd"), KEY).expect("w");
    let r = t
        .api(
            Method::POST,
            &format!("{path}/{}/test", c["id"]),
            &token,
            None,
        )
        .await;
    let a = r.json();
    assert_eq!(a["ok"], true, "{a}");
    assert_eq!(a["status"], 202);
    let pd = rec.of("pagerduty");
    assert_eq!(
        pd.last().map(|r| r.body["event_action"].clone()),
        Some(json!("resolve"))
    );

    let r = t
        .api(Method::DELETE, &format!("{path}/{}", c["id"]), &token, None)
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let doc = t
        .api(Method::GET, "/api/v1/openapi.json", &token, None)
        .await;
    assert!(doc.body.contains("/api/v1/teams/{team}/channels/{id}/test"));
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_real_alertmanager_has_the_alert_active_then_resolved(pool: PgPool) {
    let (_dir, policy) = secrets("am", &[]);
    let t = app(&pool, &policy).await;
    let token = admin(&t).await;
    let am = Alertmanager::start().await;
    let route = team(&pool, "payments").await;
    add(
        &t,
        &token,
        route.0,
        json!({"name": "am", "kind": "alertmanager",
        "endpoint": am.alerts_endpoint()}),
    )
    .await;
    let mut w = Watcher {
        cluster: cluster(&pool).await,
        route,
    };
    watch(&pool, &mut w, vec![trouble("billing", "STOP")]).await;
    notify(&pool, &policy).await;
    let alerts = am.alerts("group", "billing").await;
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    let a = &alerts[0];
    assert_eq!(a["status"]["state"], "active", "{a}");
    let labels = &a["labels"];
    assert_eq!(labels["alertname"], "StreamkeeperFlag");
    assert_eq!(labels["cluster"], "prod");
    assert_eq!(labels["team"], "payments");
    assert_eq!(labels["severity"], "critical");
    assert!(
        a["generatorURL"]
            .as_str()
            .expect("url")
            .starts_with("https://sk.example/flags/")
    );
    assert_eq!(a["annotations"]["reason"], "billing is STOP");

    watch(&pool, &mut w, vec![]).await;
    notify(&pool, &policy).await;
    // Resolved: its endsAt has passed, so Alertmanager no longer lists it
    // as active.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let left = am.alerts("group", "billing").await;
    assert!(
        left.iter().all(|a| a["status"]["state"] != "active"),
        "{left:?}"
    );
    let answers: Vec<String> = sqlx::query_scalar(
        "SELECT answer FROM deliveries WHERE channel_id IS NOT NULL ORDER BY id",
    )
    .fetch_all(&pool)
    .await
    .expect("answers");
    assert_eq!(answers.len(), 2);
    assert!(answers.iter().all(|a| a.starts_with("200")), "{answers:?}");
}

/// Alertmanager knows an alert by its labels, and a worsening changes
/// two (`kind`, `severity`): the worse flag's alert is a new one, so the
/// old label set is ended in the same post, never left to linger as a
/// second alert until its `endsAt`.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_worsened_flag_ends_its_old_alert_in_alertmanager(pool: PgPool) {
    let (_dir, policy) = secrets("am-worse", &[]);
    let t = app(&pool, &policy).await;
    let token = admin(&t).await;
    let am = Alertmanager::start().await;
    let route = team(&pool, "payments").await;
    add(
        &t,
        &token,
        route.0,
        json!({"name": "am", "kind": "alertmanager",
        "endpoint": am.alerts_endpoint()}),
    )
    .await;
    let mut w = Watcher {
        cluster: cluster(&pool).await,
        route,
    };
    watch(&pool, &mut w, vec![trouble("billing", "WARN")]).await;
    notify(&pool, &policy).await;
    let before = am.alerts("group", "billing").await;
    assert_eq!(before.len(), 1, "{before:?}");
    assert_eq!(before[0]["labels"]["severity"], "warning");

    watch(&pool, &mut w, vec![trouble("billing", "STOP")]).await;
    notify(&pool, &policy).await;
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let active: Vec<Value> = am
        .alerts("group", "billing")
        .await
        .into_iter()
        .filter(|a| a["status"]["state"] == "active")
        .collect();
    assert_eq!(active.len(), 1, "one alert for one flag: {active:?}");
    assert_eq!(active[0]["labels"]["kind"], "STOP");
    assert_eq!(active[0]["labels"]["severity"], "critical");
}

/// Whether the team's first channel is marked broken.
async fn is_broken(t: &TestApp, channels: &str, token: &str) -> bool {
    let list = t.api(Method::GET, channels, token, None).await.json();
    !list[0]["broken_at"].is_null()
}

/// What PagerDuty received: (event action, status answered).
fn pd_events(rec: &Recorder) -> Vec<(String, u16)> {
    rec.of("pagerduty")
        .iter()
        .map(|r| {
            (
                r.body["event_action"].as_str().unwrap_or("").to_owned(),
                r.status,
            )
        })
        .collect()
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_channel_hears_of_a_flag_in_order_and_a_failed_test_mends_nothing(pool: PgPool) {
    let (dir, policy) = secrets("order", &[("pd", KEY)]);
    let t = app(&pool, &policy).await;
    let token = admin(&t).await;
    let (url, rec) = oncall::spawn(vec![KEY.into()]).await;
    let route = team(&pool, "payments").await;
    let team_id = route.0;
    let pager = add(
        &t,
        &token,
        team_id,
        json!({"name": "pager", "kind": "pagerduty", "min_severity": "error",
               "endpoint": format!("{url}/v2/enqueue"), "secret": format!("file:{}/pd", dir.display())}),
    )
    .await;
    let mut w = Watcher {
        cluster: cluster(&pool).await,
        route,
    };

    // A WARN no channel takes reached the team in the app: notified then.
    watch(&pool, &mut w, vec![trouble("slow", "WARN")]).await;
    notify(&pool, &policy).await;
    assert!(rec.of("pagerduty").is_empty());
    let notified: Option<chrono::DateTime<chrono::Utc>> =
        sqlx::query_scalar("SELECT notified_at FROM flags WHERE subject = 'slow'")
            .fetch_one(&pool)
            .await
            .expect("flag");
    assert!(
        notified.is_some(),
        "a raise no filter took is notified in the app"
    );

    // PagerDuty throttles the trigger and the trouble clears meanwhile:
    // the resolve waits for the retried trigger, never overtakes it (a
    // trigger after its resolve opens an incident nobody closes).
    rec.throttle(1);
    let slow = trouble("slow", "WARN");
    watch(
        &pool,
        &mut w,
        vec![slow.clone(), trouble("billing", "STOP")],
    )
    .await;
    notify(&pool, &policy).await;
    watch(&pool, &mut w, vec![slow.clone()]).await;
    notify(&pool, &policy).await;
    assert_eq!(pd_events(&rec), [("trigger".to_owned(), 429)]);
    sqlx::query("UPDATE deliveries SET next_attempt_at = now() WHERE delivered_at IS NULL")
        .execute(&pool)
        .await
        .expect("due");
    for _ in 0..3 {
        notify(&pool, &policy).await;
    }
    assert_eq!(
        pd_events(&rec),
        [
            ("trigger".to_owned(), 429),
            ("trigger".to_owned(), 202),
            ("resolve".to_owned(), 202)
        ]
    );

    // A refused key marks the channel broken; a throttled test says
    // nothing of its settings and leaves the mark; a 2xx mends it.
    let path = format!("/api/v1/teams/{team_id}/channels");
    let try_it = format!("{path}/{}/test", pager["id"]);
    std::fs::write(dir.join("pd"), "ffffffffffffffffffffffffffffffff").expect("w");
    assert_eq!(
        t.api(Method::POST, &try_it, &token, None).await.json()["status"],
        400
    );
    assert!(is_broken(&t, &path, &token).await);
    std::fs::write(dir.join("pd"), KEY).expect("w");
    rec.throttle(1);
    assert_eq!(
        t.api(Method::POST, &try_it, &token, None).await.json()["status"],
        429
    );
    assert!(is_broken(&t, &path, &token).await, "a 429 mends nothing");
    let a = t.api(Method::POST, &try_it, &token, None).await.json();
    assert_eq!(a["ok"], true, "{a}");
    assert!(!is_broken(&t, &path, &token).await, "a 2xx mends it");
}

/// A webhook receiver for Alertmanager's own notifications: the alerts
/// (their labels) of each post it got.
async fn alertmanager_receiver() -> (String, std::sync::Arc<std::sync::Mutex<Vec<Value>>>) {
    let got: std::sync::Arc<std::sync::Mutex<Vec<Value>>> = Default::default();
    let g = got.clone();
    let app = axum::Router::new().route(
        "/am-hook",
        axum::routing::post(move |axum::Json(v): axum::Json<Value>| {
            let g = g.clone();
            async move {
                let alerts = v["alerts"].as_array().cloned().unwrap_or_default();
                g.lock().expect("lock").extend(alerts);
                StatusCode::OK
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/am-hook", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, got)
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_silence_made_in_alertmanager_stops_its_notification(pool: PgPool) {
    let (_dir, policy) = secrets("am-silence", &[]);
    let t = app(&pool, &policy).await;
    let token = admin(&t).await;
    let (hook, notified) = alertmanager_receiver().await;
    let am = Alertmanager::start_with(Some(&hook)).await;
    let route = team(&pool, "payments").await;
    let endpoint = am.alerts_endpoint();
    let channel = json!({"name": "am", "kind": "alertmanager", "endpoint": endpoint});
    add(&t, &token, route.0, channel).await;
    // On-call mutes `billing` in their Alertmanager, as they would.
    let silence = am.silence("group", "billing").await;
    let mut w = Watcher {
        cluster: cluster(&pool).await,
        route,
    };
    let both = vec![trouble("billing", "STOP"), trouble("orders", "STOP")];
    watch(&pool, &mut w, both).await;
    notify(&pool, &policy).await;

    // Alertmanager has both alerts; the silenced one is suppressed by
    // that silence, the other active.
    let billing = am.alerts("group", "billing").await;
    assert_eq!(billing.len(), 1, "{billing:?}");
    assert_eq!(billing[0]["status"]["state"], "suppressed", "{billing:?}");
    assert_eq!(billing[0]["status"]["silencedBy"], json!([silence]));
    let orders = am.alerts("group", "orders").await;
    assert_eq!(orders[0]["status"]["state"], "active", "{orders:?}");

    // Its receiver is told of `orders` and never of `billing`.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(15);
    let told = |g: &str| {
        notified
            .lock()
            .expect("lock")
            .iter()
            .filter(|a| a["labels"]["group"] == g)
            .count()
    };
    while told("orders") == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "Alertmanager never notified its receiver"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    // Two more of its group intervals: nothing comes for `billing`.
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    assert_eq!(told("billing"), 0, "{:?}", notified.lock().expect("lock"));
    assert_eq!(told("orders"), 1);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_stream_silence_holds_the_flags_of_the_groups_reading_it(pool: PgPool) {
    let (dir, policy) = secrets("stream-silence", &[]);
    let t = app(&pool, &policy).await;
    let token = admin(&t).await;
    let (url, rec) = oncall::spawn(vec![KEY.into()]).await;
    let route = team(&pool, "payments").await;
    four_channels(&t, &token, route.0, &dir, &url).await;
    let cluster_id = cluster(&pool).await;
    // `billing` reads only `orders`; `audit` reads `orders` and `payments`.
    sqlx::query(
        "INSERT INTO consumer_groups (cluster_id, name, state, members, topics, first_seen, last_seen)
         VALUES ($1, 'billing', 'Empty', 0, ARRAY['orders'], now(), now()),
                ($1, 'audit', 'Empty', 0, ARRAY['orders', 'payments'], now(), now())",
    )
    .bind(cluster_id)
    .execute(&pool)
    .await
    .expect("groups");
    // The stream is payments' own, as are its groups' flags: its silence
    // holds them (another team's groups it would not, `flag_held_until`).
    sqlx::query("INSERT INTO streams (cluster_id, topic, owner_team_id) VALUES ($1, 'orders', $2)")
        .bind(cluster_id)
        .bind(route.0)
        .execute(&pool)
        .await
        .expect("stream");
    let path = format!("/api/v1/clusters/{cluster_id}/silences");
    let until = chrono::Utc::now() + chrono::Duration::hours(1);
    let r = t
        .api(
            Method::POST,
            &path,
            &token,
            Some(json!({"scope": "stream", "name": "orders", "until": until, "reason": "replay"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let id = r.json()["id"].clone();
    let mut w = Watcher {
        cluster: cluster_id,
        route,
    };
    let both = vec![trouble("billing", "STOP"), trouble("audit", "STOP")];
    watch(&pool, &mut w, both.clone()).await;
    notify(&pool, &policy).await;
    let components = |rec: &Recorder| -> Vec<String> {
        rec.of("pagerduty")
            .iter()
            .map(|r| r.body["payload"]["component"].as_str().unwrap_or("").into())
            .collect()
    };
    assert_eq!(
        components(&rec),
        ["audit"],
        "billing held; audit also reads a stream nobody muted"
    );
    // The silence ends with the trouble still there: billing is told.
    let r = t
        .api(Method::DELETE, &format!("{path}/{id}"), &token, None)
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    watch(&pool, &mut w, both).await;
    notify(&pool, &policy).await;
    assert_eq!(components(&rec), ["audit", "billing"]);
}

/// An Alertmanager channel's receiver: every post's body (an array of alerts).
async fn alert_posts() -> (String, std::sync::Arc<std::sync::Mutex<Vec<Value>>>) {
    let got: std::sync::Arc<std::sync::Mutex<Vec<Value>>> = Default::default();
    let g = got.clone();
    let app = axum::Router::new().route(
        "/api/v2/alerts",
        axum::routing::post(move |axum::Json(v): axum::Json<Value>| {
            let g = g.clone();
            async move {
                g.lock().expect("lock").push(v);
                StatusCode::OK
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
    (url, got)
}

/// Alertmanager knows an alert by its labels: a group that starts reading
/// another topic while its flag is open must not make the re-post and the
/// resolve a new alert (leaving the first to linger until it expires).
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn an_alerts_labels_stay_the_same_for_its_flags_life(pool: PgPool) {
    let (_dir, policy) = secrets("am-labels", &[]);
    let t = app(&pool, &policy).await;
    let token = admin(&t).await;
    let (url, got) = alert_posts().await;
    let route = team(&pool, "payments").await;
    add(
        &t,
        &token,
        route.0,
        json!({"name": "am", "kind": "alertmanager", "endpoint": url}),
    )
    .await;
    let cluster_id = cluster(&pool).await;
    sqlx::query(
        "INSERT INTO consumer_groups (cluster_id, name, state, members, topics, first_seen, last_seen)
         VALUES ($1, 'billing', 'Empty', 0, ARRAY['orders'], now(), now())",
    )
    .bind(cluster_id)
    .execute(&pool)
    .await
    .expect("group");
    let mut w = Watcher {
        cluster: cluster_id,
        route,
    };
    watch(&pool, &mut w, vec![trouble("billing", "STOP")]).await;
    notify(&pool, &policy).await;
    // It starts reading a second topic while its flag is open; a re-post
    // falls due; then the trouble clears.
    sqlx::query("UPDATE consumer_groups SET topics = ARRAY['orders', 'refunds']")
        .execute(&pool)
        .await
        .expect("topics");
    sqlx::query("UPDATE deliveries SET created_at = created_at - interval '10 minutes'")
        .execute(&pool)
        .await
        .expect("due");
    notify(&pool, &policy).await;
    watch(&pool, &mut w, vec![]).await;
    notify(&pool, &policy).await;
    let posts = got.lock().expect("lock").clone();
    let labels: Vec<Value> = posts
        .iter()
        .flat_map(|p| p.as_array().cloned().unwrap_or_default())
        .map(|a| a["labels"].clone())
        .collect();
    assert_eq!(labels.len(), 3, "raised, re-posted, resolved: {posts:?}");
    assert_eq!(labels[0]["topic"], "orders", "{labels:?}");
    assert!(
        labels.iter().all(|l| *l == labels[0]),
        "one alert for the flag's life: {labels:?}"
    );
}

/// The topics kept at a raise are the label's alone: whether a stream's
/// silence holds a group's flag goes by the topics the group reads now,
/// as its page's "muted" line tells.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_stream_silence_holds_a_groups_flag_by_the_topics_it_reads_now(pool: PgPool) {
    let (dir, policy) = secrets("silence-now", &[]);
    let t = app(&pool, &policy).await;
    let token = admin(&t).await;
    let (url, rec) = oncall::spawn(vec![KEY.into()]).await;
    let route = team(&pool, "payments").await;
    let team_id = route.0;
    four_channels(&t, &token, team_id, &dir, &url).await;
    let cluster_id = cluster(&pool).await;
    sqlx::query(
        "INSERT INTO consumer_groups (cluster_id, name, state, members, topics, first_seen, last_seen)
         VALUES ($1, 'billing', 'Empty', 0, ARRAY['refunds'], now(), now())",
    )
    .bind(cluster_id)
    .execute(&pool)
    .await
    .expect("group");
    let mut w = Watcher {
        cluster: cluster_id,
        route,
    };
    // Raised while it reads `refunds` (kept for its label); before it is
    // told, it reads `orders`, whose stream is silenced: the raise is held.
    watch(&pool, &mut w, vec![trouble("billing", "STOP")]).await;
    sqlx::query("UPDATE consumer_groups SET topics = ARRAY['orders']")
        .execute(&pool)
        .await
        .expect("topics");
    sqlx::query("INSERT INTO streams (cluster_id, topic, owner_team_id) VALUES ($1, 'orders', $2)")
        .bind(cluster_id)
        .bind(team_id)
        .execute(&pool)
        .await
        .expect("stream");
    let until = chrono::Utc::now() + chrono::Duration::hours(1);
    let r = t
        .api(
            Method::POST,
            &format!("/api/v1/clusters/{cluster_id}/silences"),
            &token,
            Some(json!({"scope": "stream", "name": "orders", "until": until, "reason": "replay"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    notify(&pool, &policy).await;
    assert!(
        pd_events(&rec).is_empty(),
        "held by the silence of what billing reads now: {:?}",
        pd_events(&rec)
    );
}

/// A group not seen at its flag's raise keeps no topics (not `{}` for
/// good): its label tells the topics it reads when told.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_group_unseen_at_its_raise_labels_the_topics_it_reads_later(pool: PgPool) {
    let (_dir, policy) = secrets("am-unseen", &[]);
    let t = app(&pool, &policy).await;
    let token = admin(&t).await;
    let (url, got) = alert_posts().await;
    let route = team(&pool, "payments").await;
    add(
        &t,
        &token,
        route.0,
        json!({"name": "am", "kind": "alertmanager", "endpoint": url}),
    )
    .await;
    let cluster_id = cluster(&pool).await;
    let mut w = Watcher {
        cluster: cluster_id,
        route,
    };
    watch(&pool, &mut w, vec![trouble("billing", "STOP")]).await;
    let kept: i64 = sqlx::query_scalar("SELECT count(*) FROM notify_flag_topics")
        .fetch_one(&pool)
        .await
        .expect("kept");
    assert_eq!(kept, 0, "nothing kept for a group not seen");
    sqlx::query(
        "INSERT INTO consumer_groups (cluster_id, name, state, members, topics, first_seen, last_seen)
         VALUES ($1, 'billing', 'Empty', 0, ARRAY['orders'], now(), now())",
    )
    .bind(cluster_id)
    .execute(&pool)
    .await
    .expect("group");
    notify(&pool, &policy).await;
    let posts = got.lock().expect("lock").clone();
    assert_eq!(posts[0][0]["labels"]["topic"], "orders", "{posts:?}");
}
