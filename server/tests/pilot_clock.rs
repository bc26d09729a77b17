//! The pilot's figures against the times a receiver and the owners saw
//! (issue 45 item 3), on a real Postgres through the product's paths: a
//! flag's "lag flagged" ends at its webhook's 2xx, or when a member of a
//! team without one sees it in the app; a lineage question's "owners
//! notified" at the last owner team's delivery, and one that reached no
//! team is no owner notified; a flag dismissed and raised again for the
//! same trouble counts once; a domain's decisions are the pilot's scope's,
//! at the time they were made.

mod support;

use axum::http::{Method, StatusCode};
use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};
use sqlx::PgPool;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use streamkeeper::accounts::role::Role;
use streamkeeper::flags::{FlagKey, Observation};
use support::TestApp;

/// A webhook receiver on its own clock: refuses its first `refusals`
/// calls (500), then answers 200 and records when it did.
async fn receiver(refusals: usize) -> (String, Arc<Mutex<Vec<DateTime<Utc>>>>) {
    let got: Arc<Mutex<Vec<DateTime<Utc>>>> = Arc::default();
    let calls = Arc::new(AtomicUsize::new(0));
    let g = got.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |_: axum::Json<Value>| {
            let (g, c) = (g.clone(), calls.clone());
            async move {
                if c.fetch_add(1, Ordering::SeqCst) < refusals {
                    return StatusCode::INTERNAL_SERVER_ERROR;
                }
                g.lock().expect("lock").push(Utc::now());
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

/// Sends what is due, then makes every retry due at once (the backoff is
/// not what these tests are about).
async fn deliver(pool: &PgPool) {
    let http = streamkeeper_server::clients::webhook::Webhooks::new(
        streamkeeper::platform::egress::EgressPolicy::LOOPBACK,
    )
    .expect("webhooks");
    streamkeeper_server::flags::routine::deliver_due(pool, &http)
        .await
        .expect("deliver");
    sqlx::query("UPDATE deliveries SET next_attempt_at = now() WHERE delivered_at IS NULL")
        .execute(pool)
        .await
        .expect("due");
}

async fn cluster(pool: &PgPool, name: &str) -> i64 {
    sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol) VALUES ($1, '127.0.0.1:1', 'PLAINTEXT') RETURNING id",
    )
    .bind(name)
    .fetch_one(pool)
    .await
    .expect("cluster")
}

/// A team, with `member` in it and its webhook if any.
async fn team(pool: &PgPool, name: &str, member: i64, webhook: Option<&str>) -> i64 {
    let id: i64 =
        sqlx::query_scalar("INSERT INTO teams (name, webhook_url) VALUES ($1, $2) RETURNING id")
            .bind(name)
            .bind(webhook)
            .fetch_one(pool)
            .await
            .expect("team");
    sqlx::query("INSERT INTO memberships (team_id, user_id) VALUES ($1, $2)")
        .bind(id)
        .bind(member)
        .execute(pool)
        .await
        .expect("member");
    id
}

fn group_key(group: &str) -> FlagKey {
    FlagKey {
        subject_kind: "group".into(),
        subject: group.into(),
        rule: "lag".into(),
    }
}

/// Raises a group's STOP as a pass does, begun at `onset`, to `route`.
async fn raise(
    pool: &PgPool,
    cluster: i64,
    group: &str,
    onset: DateTime<Utc>,
    route: (i64, &str, Option<&str>),
) -> i64 {
    let row = streamkeeper_server::watch::store::by_id(pool, cluster)
        .await
        .expect("read")
        .expect("cluster");
    let o = Observation {
        key: group_key(group),
        kind: "STOP".into(),
        reason: "no members and no progress".into(),
        onset_ms: onset.timestamp_millis(),
        evidence: json!({}),
    };
    let (id, name, url) = route;
    streamkeeper_server::flags::lifecycle::raise(
        pool,
        row.id,
        &row.name,
        &o,
        Some((id, name.into(), url.map(str::to_owned))),
    )
    .await
    .expect("raise");
    sqlx::query_scalar("SELECT max(id) FROM flags WHERE subject = $1")
        .bind(group)
        .fetch_one(pool)
        .await
        .expect("flag")
}

/// A pilot over `scope` started yesterday, and its page.
async fn pilot(t: &TestApp, token: &str, kind: &str, scope: &[&str]) {
    let started = (Utc::now() - Duration::days(1)).date_naive();
    let r = t
        .api(
            Method::PUT,
            "/api/v1/pilot/settings",
            token,
            Some(json!({"scope_kind": kind, "scope": scope, "started_on": started})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
}

async fn page(t: &TestApp, token: &str) -> Value {
    let r = t.api(Method::GET, "/api/v1/pilot", token, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.json()
}

/// The events of `metric` in the events CSV: (reference, duration ms).
async fn events(t: &TestApp, token: &str, metric: &str) -> Vec<(String, i64)> {
    let r = t
        .api(Method::GET, "/api/v1/pilot/events.csv", token, None)
        .await;
    let mut rd = csv::Reader::from_reader(r.body.as_bytes());
    rd.records()
        .map(|rec| rec.expect("record"))
        .filter(|rec| &rec[0] == metric)
        .map(|rec| (rec[1].to_string(), rec[5].parse().expect("ms")))
        .collect()
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn lag_flagged_ends_when_the_owner_had_the_flag(pool: PgPool) {
    let t = TestApp::new(pool.clone()).await;
    let local = cluster(&pool, "local").await;
    let manager = t.user("meg", &[Role::Manager]).await;
    let (admin, olga, lea) = (
        t.user("ada", &[Role::Admin]).await,
        t.user("olga", &[Role::Owner]).await,
        t.user("lea", &[Role::Owner]).await,
    );
    let (mt, at, lt) = (
        t.token(manager).await,
        t.token(admin).await,
        t.token(lea).await,
    );
    // payments answers its webhook after refusing it once; ledger has none.
    let (url, answered) = receiver(1).await;
    let payments = team(&pool, "payments", olga, Some(&url)).await;
    let ledger = team(&pool, "ledger", lea, None).await;
    pilot(&t, &mt, "clusters", &["local"]).await;
    let onset = Utc::now() - Duration::minutes(7);
    let billing = raise(
        &pool,
        local,
        "billing",
        onset,
        (payments, "payments", Some(&url)),
    )
    .await;
    let audit = raise(&pool, local, "audit", onset, (ledger, "ledger", None)).await;
    let flagged = |p: &Value| p["report"]["table"][0]["now"]["events"].clone();
    assert_eq!(flagged(&page(&t, &mt).await), 0, "nobody has them yet");

    // An admin of no team lists every flag: not ledger's owner.
    let r = t
        .api(Method::GET, "/api/v1/flags?scope=all", &at, None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    // The receiver refuses the first try, takes the second.
    deliver(&pool).await;
    assert_eq!(flagged(&page(&t, &mt).await), 0, "refused is not notified");
    deliver(&pool).await;
    let at_receiver = answered.lock().expect("lock").first().copied();
    let at_receiver = at_receiver.expect("delivered");
    let got = events(&t, &mt, "lag_flagged").await;
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].0, format!("flag:{billing}"));
    let by_receiver = (at_receiver - onset).num_milliseconds();
    assert!(
        (got[0].1 - by_receiver).abs() < 1_000,
        "the pilot's {} ms against the receiver's {by_receiver} ms",
        got[0].1
    );

    // A member of ledger lists her flags: from then ledger had it.
    let before = Utc::now();
    let r = t.api(Method::GET, "/api/v1/flags", &lt, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let got = events(&t, &mt, "lag_flagged").await;
    let seen = got
        .iter()
        .find(|(r, _)| *r == format!("flag:{audit}"))
        .unwrap_or_else(|| panic!("{got:?}"));
    assert!(
        seen.1 >= (before - onset).num_milliseconds() - 1_000,
        "from when she saw it: {seen:?}"
    );
    assert_eq!(flagged(&page(&t, &mt).await), 2);
}

/// A streaming job reading `topic` on the broker at `bootstrap` and writing
/// `topic`-enriched there.
fn reads(run: &str, job: &str, bootstrap: &str, topic: &str) -> Value {
    json!({
        "eventTime": "2026-01-01T00:00:00Z", "eventType": "START",
        "inputs": [{"facets": {}, "inputFacets": {}, "name": topic, "namespace": format!("kafka://{bootstrap}")}],
        "job": {"facets": {}, "name": job, "namespace": "sk-test"},
        "outputs": [{"facets": {}, "name": format!("{topic}-enriched"), "namespace": format!("kafka://{bootstrap}"), "outputFacets": {}}],
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python",
        "run": {"facets": {}, "runId": run},
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
    })
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn lineage_notified_ends_at_the_last_owner_teams_delivery(pool: PgPool) {
    use streamkeeper::accounts::token::Scope;
    let t = TestApp::new(pool.clone()).await;
    let (admin, manager, olga) = (
        t.user("ada", &[Role::Admin]).await,
        t.user("meg", &[Role::Manager]).await,
        t.user("olga", &[Role::Owner]).await,
    );
    let (at, mt) = (t.token(admin).await, t.token(manager).await);
    let flink = t.user("flink", &[Role::Owner]).await;
    let flink = t.token_with(flink, &[Scope::LineageWrite]).await;
    // payments owns what local/orders feeds and refuses its webhook twice;
    // elsewhere's topics have no owner.
    let (url, answered) = receiver(2).await;
    let payments = team(&pool, "payments", olga, Some(&url)).await;
    for (name, bootstrap, owner) in [
        ("local", "127.0.0.1:9092", Some(payments)),
        ("elsewhere", "127.0.0.1:9093", None),
    ] {
        let r = t
            .api(
                Method::POST,
                "/api/v1/clusters",
                &at,
                Some(json!({"name": name, "bootstrap": bootstrap})),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
        sqlx::query(
            "INSERT INTO streams (cluster_id, topic, owner_team_id)
             VALUES ($1, 'orders', NULL), ($1, 'orders-enriched', $2)",
        )
        .bind(r.json()["id"].as_i64().expect("id"))
        .bind(owner)
        .execute(&pool)
        .await
        .expect("stream");
    }
    let events_in = json!([
        reads(
            "0194b3a2-7c1e-7000-8000-000000000501",
            "enricher",
            "127.0.0.1:9092",
            "orders"
        ),
        reads(
            "0194b3a2-7c1e-7000-8000-000000000502",
            "auditor",
            "127.0.0.1:9093",
            "orders"
        ),
    ]);
    let r = t
        .api(
            Method::POST,
            "/api/v1/lineage/batch",
            &flink,
            Some(events_in),
        )
        .await;
    assert_eq!(r.json()["status"], "success", "{}", r.body);
    pilot(&t, &mt, "clusters", &["local", "elsewhere"]).await;
    let mut asked = Vec::new();
    for cluster in ["local", "elsewhere"] {
        let r = t
            .api(
                Method::POST,
                "/api/v1/lineage/impact/notify",
                &at,
                Some(json!({"topic": "orders", "cluster": cluster})),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        asked.push(r.json()["question"].as_i64().expect("question"));
    }
    let asked_at: DateTime<Utc> =
        sqlx::query_scalar("SELECT asked_at FROM lineage_questions WHERE id = $1")
            .bind(asked[0])
            .fetch_one(&pool)
            .await
            .expect("asked");
    let notified = |p: &Value| {
        p["report"]["table"]
            .as_array()
            .and_then(|t| t.iter().find(|r| r["metric"] == "lineage_notified"))
            .map(|r| r["now"]["events"].clone())
    };
    // Refused twice: not notified after either.
    for _ in 0..2 {
        deliver(&pool).await;
        let p = page(&t, &mt).await;
        assert_eq!(notified(&p), Some(json!(0)), "{p}");
        assert_eq!(p["report"]["counts"]["questions_reached_no_owner"], 1);
    }
    deliver(&pool).await;
    let at_receiver = answered.lock().expect("lock").first().copied();
    let at_receiver = at_receiver.expect("delivered on the third try");
    let got = events(&t, &mt, "lineage_notified").await;
    assert_eq!(
        got.iter().map(|(r, _)| r.clone()).collect::<Vec<_>>(),
        [format!("lineage-question:{}", asked[0])],
        "the question that reached no team is not one"
    );
    let by_receiver = (at_receiver - asked_at).num_milliseconds();
    assert!(
        (got[0].1 - by_receiver).abs() < 1_000,
        "the pilot's {} ms against the receiver's {by_receiver} ms",
        got[0].1
    );
    assert_eq!(notified(&page(&t, &mt).await), Some(json!(1)));
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_flag_dismissed_and_raised_again_for_the_same_trouble_counts_once(pool: PgPool) {
    let t = TestApp::new(pool.clone()).await;
    let local = cluster(&pool, "local").await;
    let manager = t.user("meg", &[Role::Manager]).await;
    let olga = t.user("olga", &[Role::Owner]).await;
    let (mt, ot) = (t.token(manager).await, t.token(olga).await);
    let payments = team(&pool, "payments", olga, None).await;
    pilot(&t, &mt, "clusters", &["local"]).await;
    let onset = Utc::now() - Duration::minutes(20);
    let route = (payments, "payments", None);
    let first = raise(&pool, local, "billing", onset, route).await;
    let r = t.api(Method::GET, "/api/v1/flags", &ot, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = t
        .api(
            Method::POST,
            &format!("/api/v1/flags/{first}/dismiss"),
            &ot,
            Some(json!({"reason": "not ours", "dismissal": "wrong"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    // The next pass sees the same trouble, begun before the dismissal.
    let again = raise(&pool, local, "billing", onset, route).await;
    assert_ne!(again, first);
    let r = t.api(Method::GET, "/api/v1/flags", &ot, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let counts = |p: &Value| p["report"]["counts"].clone();
    let p = page(&t, &mt).await;
    assert_eq!(counts(&p)["flags_raised"], 1, "{p}");
    assert_eq!(counts(&p)["flags_dismissed"], 1, "{p}");
    assert_eq!(p["report"]["table"][0]["now"]["events"], 1, "{p}");
    let lag = events(&t, &mt, "lag_flagged").await;
    assert_eq!(
        lag.iter().map(|(r, _)| r.clone()).collect::<Vec<_>>(),
        [format!("flag:{first}")]
    );
    // Trouble that began after the dismissal is new trouble.
    let r = t
        .api(
            Method::POST,
            &format!("/api/v1/flags/{again}/dismiss"),
            &ot,
            Some(json!({"reason": "still not ours", "dismissal": "wrong"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    raise(&pool, local, "billing", Utc::now(), route).await;
    let p = page(&t, &mt).await;
    assert_eq!(counts(&p)["flags_raised"], 2, "{p}");
    assert_eq!(counts(&p)["flags_dismissed"], 1, "{p}");
    // The tally the triggers kept is the one the records give.
    let before = counts(&p);
    streamkeeper_server::pilot::store::rebuild(&pool)
        .await
        .expect("rebuild");
    assert_eq!(counts(&page(&t, &mt).await), before);
}

/// A review item on `topic` of `cluster` in `domain`, by `author`.
async fn item(pool: &PgPool, cluster: i64, topic: &str, domain: &str, author: i64) -> i64 {
    sqlx::query_scalar(
        "INSERT INTO review_items (kind, cluster_id, topic, subject, domain, title, author_id, content,
             content_hash, verdict, required_approvals, approver_ids)
         VALUES ('producer_change', $1, $2, $2 || '-value', $3, 'a change', $4, '{}', 'h', 'COMPATIBLE',
                 1, '{}') RETURNING id",
    )
    .bind(cluster)
    .bind(topic)
    .bind(domain)
    .bind(author)
    .fetch_one(pool)
    .await
    .expect("item")
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_domains_decisions_are_the_pilots_scope_at_the_time_they_were_made(pool: PgPool) {
    let t = TestApp::new(pool.clone()).await;
    let local = cluster(&pool, "local").await;
    let manager = t.user("meg", &[Role::Manager]).await;
    let ann = t.user("ann", &[Role::Approver]).await;
    let mt = t.token(manager).await;
    // payments has orders (the pilot's) and refunds (not).
    sqlx::query(
        "INSERT INTO streams (cluster_id, topic, domain) VALUES ($1, 'orders', 'payments'),
                ($1, 'refunds', 'payments')",
    )
    .bind(local)
    .execute(&pool)
    .await
    .expect("streams");
    pilot(&t, &mt, "streams", &["local/orders"]).await;
    let mut conn = pool.acquire().await.expect("conn");
    for topic in ["orders", "refunds"] {
        let approved = item(&pool, local, topic, "payments", ann).await;
        sqlx::query(
            "INSERT INTO review_approvals (item_id, revision, approver_id, content_hash) VALUES ($1, 1, $2, 'h')",
        )
        .bind(approved)
        .bind(ann)
        .execute(&pool)
        .await
        .expect("approval");
        let rejected = item(&pool, local, topic, "payments", ann).await;
        streamkeeper_server::review::store::set_state(&mut conn, rejected, "rejected", "no")
            .await
            .expect("reject");
    }
    // Rejected three days ago, before the pilot, and touched today.
    let old = item(&pool, local, "orders", "payments", ann).await;
    streamkeeper_server::review::store::set_state(&mut conn, old, "rejected", "no")
        .await
        .expect("reject");
    sqlx::query(
        "UPDATE review_items SET rejected_at = rejected_at - interval '3 days' WHERE id = $1",
    )
    .bind(old)
    .execute(&pool)
    .await
    .expect("backdate");
    let p = page(&t, &mt).await;
    let domains = p["domains"].as_array().expect("domains");
    let payments = domains
        .iter()
        .find(|d| d["domain"] == "payments")
        .unwrap_or_else(|| panic!("{p}"));
    assert_eq!(payments["approvals"], 1, "{payments}");
    assert_eq!(payments["rejections"], 1, "{payments}");
}
