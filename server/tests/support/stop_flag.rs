//! The STOP flag delivered, as the plaintext broker (broker_watch.rs) and
//! the secured ones (broker_secure.rs) both run it: a group that stopped is
//! flagged STOP to the team that claimed it, its webhook delivered after a
//! failed try, acknowledged by its team only, resolved when it catches up.

use super::TestApp;
use super::kafka::{commit_at, topic_at};
use axum::http::{Method, StatusCode};
use rdkafka::ClientConfig;
use serde_json::json;
use std::time::Duration;
use streamkeeper::accounts::role::Role;
use streamkeeper::platform::credential::CredentialPolicy;
use streamkeeper_server::watch::routine::{self as watch, PassOutcome};
use streamkeeper_server::watch::store;

/// `n` sampler passes of cluster `id`, each one stored with no problem;
/// its references checked against `policy`.
pub async fn passes(t: &TestApp, id: i64, policy: &CredentialPolicy, n: usize) {
    let cluster = store::by_id(&t.pool, id)
        .await
        .expect("db")
        .expect("cluster");
    let (mut pending, mut kept) = (None, Default::default());
    for _ in 0..n {
        let outcome = watch::pass(&t.pool, &cluster, policy, &mut pending, &mut kept).await;
        assert!(
            matches!(outcome, PassOutcome::Stored { problems: 0, .. }),
            "{outcome:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A webhook receiver that fails its first call, then records bodies.
pub async fn receiver() -> (
    String,
    std::sync::Arc<std::sync::Mutex<Vec<serde_json::Value>>>,
) {
    use std::sync::{Arc, Mutex};
    let got: Arc<Mutex<Vec<serde_json::Value>>> = Arc::new(Mutex::new(Vec::new()));
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (g, c) = (got.clone(), calls.clone());
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |axum::Json(v): axum::Json<serde_json::Value>| {
            let (g, c) = (g.clone(), c.clone());
            async move {
                if c.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                    return StatusCode::INTERNAL_SERVER_ERROR;
                }
                g.lock().expect("lock").push(v);
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

/// The scenario on cluster `id` (watched in `t`, its references allowed
/// by `policy`), its topic and group made through a client configured as
/// `conf`.
pub async fn a_stopped_consumer_is_flagged_to_its_owner(
    t: &TestApp,
    id: i64,
    conf: &ClientConfig,
    policy: &CredentialPolicy,
) {
    let run = format!(
        "{}-{}",
        std::process::id(),
        t.pool.connect_options().get_database().unwrap_or("db")
    );
    let topic = format!("flag-orders-{run}");
    let group = format!("flag-readers-{run}");
    topic_at(conf, &topic, &[10]).await;
    commit_at(conf, &group, &topic, &[(0, 3)]);

    let admin = t.user("ada", &[Role::Admin]).await;
    let owner = t.user("olga", &[Role::Owner]).await;
    let outsider = t.user("otto", &[Role::Owner]).await;
    let (at, ot, xt) = (
        t.token(admin).await,
        t.token(owner).await,
        t.token(outsider).await,
    );
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
    t.api(
        Method::POST,
        "/api/v1/teams",
        &at,
        Some(json!({"name": "other"})),
    )
    .await;
    t.api(
        Method::POST,
        &format!("/api/v1/teams/{team}/members"),
        &at,
        Some(json!({"username": "olga"})),
    )
    .await;
    let (url, got) = receiver().await;
    let r = t
        .api(
            Method::PUT,
            &format!("/api/v1/teams/{team}/webhook"),
            &at,
            Some(json!({"url": url})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);

    // First pass discovers the group; the owner claims it for their team.
    passes(t, id, policy, 1).await;
    let owner_url = format!("/api/v1/clusters/{id}/groups/{group}/owner");
    let r = t
        .api(
            Method::PUT,
            &owner_url,
            &xt,
            Some(json!({"team": "payments"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "not a member of payments");
    let r = t
        .api(
            Method::PUT,
            &owner_url,
            &ot,
            Some(json!({"team": "payments"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);

    passes(t, id, policy, 4).await;
    let flags = t.api(Method::GET, "/api/v1/flags", &ot, None).await.json();
    assert_eq!(flags["total"], 1, "{flags}");
    let flag = &flags["items"][0];
    assert_eq!(
        (
            flag["kind"].clone(),
            flag["subject"].clone(),
            flag["team"].clone()
        ),
        (json!("STOP"), json!(group), json!("payments"))
    );
    // Receipts: the samples of the window the flag was judged over, as of
    // the pass that raised it (they are rewritten when the trouble changes).
    let samples = flag["evidence"]["partitions"][0]["samples"]
        .as_array()
        .map_or(0, Vec::len);
    // (A STOP needs fewer samples than the window's other statuses.)
    let least = flag["evidence"]["stop_samples"]
        .as_u64()
        .unwrap_or(u64::MAX);
    assert!(
        (least..=5).contains(&(samples as u64)),
        "receipts: the window's samples ({samples}, at least {least}): {flag}"
    );
    assert!(flag["onset_at"].as_str() <= flag["raised_at"].as_str());
    let flag_id = flag["id"].as_i64().expect("id");
    // Not raised twice for the same trouble.
    passes(t, id, policy, 2).await;
    // (Other tests' groups share this broker, so count this group's flags.)
    let all = t
        .api(
            Method::GET,
            "/api/v1/flags?scope=all&state=any&per_page=200",
            &at,
            None,
        )
        .await
        .json();
    let mine = all["items"].as_array().map_or(0, |v| {
        v.iter().filter(|f| f["subject"] == json!(group)).count()
    });
    assert_eq!(mine, 1);
    assert_eq!(
        t.api(Method::GET, "/api/v1/flags", &xt, None).await.json()["total"],
        0,
        "not routed to other teams"
    );

    // The webhook failed once, then got the flag with a text and the structured flag.
    let http = streamkeeper_server::clients::webhook::Webhooks::new(
        streamkeeper::platform::egress::EgressPolicy::LOOPBACK,
    )
    .expect("webhooks");
    streamkeeper_server::flags::routine::deliver_due(&t.pool, &http)
        .await
        .expect("deliver");
    assert!(got.lock().expect("lock").is_empty());
    tokio::time::sleep(Duration::from_millis(2100)).await;
    streamkeeper_server::flags::routine::deliver_due(&t.pool, &http)
        .await
        .expect("deliver");
    let bodies = got.lock().expect("lock").clone();
    assert_eq!(bodies.len(), 1, "{bodies:?}");
    assert!(
        bodies[0]["text"]
            .as_str()
            .unwrap_or("")
            .starts_with("[STOP] group"),
        "{}",
        bodies[0]
    );
    assert_eq!(bodies[0]["flag"]["id"], flag_id);
    let f = t
        .api(Method::GET, &format!("/api/v1/flags/{flag_id}"), &ot, None)
        .await
        .json();
    assert!(f["notified_at"].is_string(), "notified after delivery: {f}");

    // Only the owner team acts on it; acknowledging is recorded.
    let ack = format!("/api/v1/flags/{flag_id}/acknowledge");
    assert_eq!(
        t.api(Method::POST, &ack, &xt, None).await.status,
        StatusCode::FORBIDDEN
    );
    let r = t.api(Method::POST, &ack, &ot, None).await;
    assert_eq!(r.json()["state"], "acknowledged");
    assert_eq!(r.json()["acknowledged_by"], "olga");
    assert_eq!(
        t.api(Method::POST, &ack, &ot, None).await.status,
        StatusCode::CONFLICT
    );
    let r = t
        .api(
            Method::POST,
            &format!("/api/v1/flags/{flag_id}/dismiss"),
            &ot,
            Some(json!({"reason": " ", "dismissal": "expected"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);

    // Catching up resolves it, and says so on the webhook.
    commit_at(conf, &group, &topic, &[(0, 10)]);
    passes(t, id, policy, 1).await;
    let f = t
        .api(Method::GET, &format!("/api/v1/flags/{flag_id}"), &ot, None)
        .await
        .json();
    assert_eq!(f["state"], "resolved", "{f}");
    streamkeeper_server::flags::routine::deliver_due(&t.pool, &http)
        .await
        .expect("deliver");
    let bodies = got.lock().expect("lock").clone();
    assert!(
        bodies
            .last()
            .and_then(|b| b["text"].as_str())
            .unwrap_or("")
            .starts_with("[RESOLVED]"),
        "{bodies:?}"
    );
    let actions = t.audit_actions().await;
    assert!(
        actions.contains(&"flag.acknowledge".to_string())
            && actions.contains(&"group.owner".to_string())
    );
}
