//! Freshness SLOs per stream against its tier (issue 42, item 3), over
//! real Postgres: passes driven through the watch's evaluation (a reader
//! keeping up, the cluster unreachable for two passes, then the reader
//! stopped so its time lag passes the budget) fill the stream's tallies —
//! the gap counted not known, never fresh — and raise the fast-burn flag;
//! the stream's REST answer, the domain's SLO, the CSV and the pages
//! (server HTML, as a browser without JavaScript gets them) show them.

mod support;

use axum::http::{Method, StatusCode};
use chrono::{DateTime, Duration, Utc};
use sqlx::PgPool;
use std::collections::BTreeMap;
use streamkeeper::accounts::role::Role;
use streamkeeper_server::clients::kafka::reader::{
    GroupReading, OffsetsBy, PartitionReading, Reading, TopicReading,
};
use streamkeeper_server::watch::judge::{self, PassResult};
use streamkeeper_server::watch::kept::KeptWindow;
use streamkeeper_server::watch::store::{self as clusters, ClusterRow, samples};
use support::{PASSWORD, TestApp};

/// The cluster `local`, sampled every 60 s, with the domain `payments`:
/// `orders` (Tier 1, 60 s budget) and `clicks` (Tier 3, 90 s budget: too
/// short for a 60 s interval), and `logs` without a budget.
async fn shop(pool: &PgPool) -> ClusterRow {
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s)
         VALUES ('local', '127.0.0.1:1', 'PLAINTEXT', 60) RETURNING id",
    )
    .fetch_one(pool)
    .await
    .expect("cluster");
    sqlx::query(
        "INSERT INTO streams (cluster_id, topic, domain, tier, freshness_budget_s) VALUES
           ($1, 'orders', 'payments', 1, 60), ($1, 'clicks', 'payments', 3, 90),
           ($1, 'logs', 'payments', NULL, NULL)",
    )
    .bind(id)
    .execute(pool)
    .await
    .expect("streams");
    clusters::by_id(pool, id).await.expect("db").expect("row")
}

/// Pass `n`: `orders` grows 100 messages a pass; `billing` commits the
/// log end until pass 6, then stops there.
fn pass(n: i64, at: DateTime<Utc>) -> Reading {
    let end = 1_000 + 100 * n;
    let topic = |name: &str, end: i64| TopicReading {
        name: name.into(),
        partitions: vec![PartitionReading {
            partition: 0,
            leader: Some(1),
            replicas: vec![1],
            isr: vec![1],
            log_start: Some(0),
            log_end: Some(end),
        }],
        last_message_at: None,
        wire: None,
    };
    let committed = 1_000 + 100 * n.min(6);
    let offsets: BTreeMap<(String, i32), Option<i64>> =
        [(("orders".to_string(), 0), Some(committed))].into();
    Reading {
        started: at,
        finished: at,
        brokers: 1,
        topics: vec![topic("orders", end), topic("clicks", 5), topic("logs", 0)],
        groups: vec![GroupReading {
            name: "billing".into(),
            state: "Stable".into(),
            members: 1,
            offsets,
            error: None,
            assigned: Default::default(),
        }],
        groups_listed: true,
        problems: vec![],
        phases: Vec::new(),
        offsets_by: OffsetsBy::Librdkafka("synthetic".into()),
    }
}

/// Twelve passes a minute apart ending now, the 5th and 6th unreachable.
async fn drive(pool: &PgPool, c: &ClusterRow) {
    samples::ensure_partitions(pool, Utc::now())
        .await
        .expect("partitions");
    let mut kept = KeptWindow::default();
    let start = Utc::now() - Duration::seconds(60 * 11);
    for n in 0..12i64 {
        let at = start + Duration::seconds(60 * n);
        if n == 4 || n == 5 {
            let id = clusters::record_failure(pool, c.id, at, "unreachable")
                .await
                .expect("failure");
            kept.push_failed(id);
            judge::after_pass(pool, c, PassResult::Failed("unreachable"), &mut kept)
                .await
                .expect("judge");
        } else {
            let r = pass(n, at);
            let stored = clusters::record_reading(pool, c.id, &r)
                .await
                .expect("store");
            kept.push_read(stored.pass_id, r.finished, &stored.samples);
            judge::after_pass(pool, c, PassResult::Read(&r), &mut kept)
                .await
                .expect("judge");
        }
    }
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_streams_slo_counts_gaps_not_known_burns_and_shows_everywhere(pool: PgPool) {
    let c = shop(&pool).await;
    drive(&pool, &c).await;

    // Per minute and per hour, never a row a sample; the gap has no time.
    let (fresh, stale, rows): (i64, i64, i64) = sqlx::query_as(
        "SELECT SUM(fresh_s)::bigint, SUM(stale_s)::bigint, COUNT(*) FROM stream_slo_1m
         WHERE topic = 'orders'",
    )
    .fetch_one(&pool)
    .await
    .expect("tally");
    assert_eq!(stale, 4 * 60, "passes 8 to 11: time lag above 60 s");
    assert!(
        fresh <= 6 * 60,
        "at most the six good passes before: {fresh}"
    );
    assert!(rows <= 10, "one row a minute judged: {rows}");
    let clicks: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM stream_slo_1h WHERE topic = 'clicks'")
            .fetch_one(&pool)
            .await
            .expect("clicks");
    assert_eq!(clicks, 0, "no reader: not known, nothing stored");

    // The fast burn raised the owner's flag through the one lifecycle.
    let flag: (String, String) = sqlx::query_as(
        "SELECT kind, reason FROM flags WHERE subject_kind = 'topic' AND subject = 'orders'
           AND rule = 'slo_burn' AND state <> 'RESOLVED'",
    )
    .fetch_one(&pool)
    .await
    .expect("a burn flag");
    assert_eq!(flag.0, "SLO_BURN_FAST", "{}", flag.1);

    let t = TestApp::new(pool.clone()).await;
    let pat = t.user("pat", &[Role::Viewer]).await;
    let token = t.token(pat).await;

    // The stream's REST answer carries its SLO.
    let list = t
        .api(
            Method::GET,
            &format!("/api/v1/clusters/{}/streams", c.id),
            &token,
            None,
        )
        .await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.body);
    let all = list.json();
    let of = |name: &str| {
        all.as_array()
            .and_then(|a| a.iter().find(|s| s["name"] == name))
            .cloned()
            .expect("listed")
    };
    let orders = of("orders");
    assert_eq!(orders["slo"]["stale_min"], 4.0);
    assert_eq!(orders["slo"]["target_pct"], 99.9);
    assert_eq!(orders["slo"]["within_tier"], true);
    assert_eq!(
        of("clicks")["slo"]["interval_warning"],
        "checked every 60 s: too slow for a 90 s budget"
    );
    assert!(of("logs")["slo"].is_null());

    // The domain's SLO: orders judged and within its tier; clicks not known.
    let domain = t
        .api(Method::GET, "/api/v1/domains/payments/slo", &token, None)
        .await;
    assert_eq!(domain.status, StatusCode::OK, "{}", domain.body);
    let d = domain.json();
    assert_eq!(
        (d["within_tier"].clone(), d["judged"].clone()),
        (1.into(), 1.into())
    );
    assert_eq!(d["streams"].as_array().map(Vec::len), Some(2));
    let missing = t
        .api(Method::GET, "/api/v1/domains/nowhere/slo", &token, None)
        .await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND, "{}", missing.body);

    let csv = t
        .api(Method::GET, "/api/v1/slo.csv?domain=payments", &token, None)
        .await;
    assert_eq!(csv.status, StatusCode::OK);
    let mut lines = csv.body.lines();
    assert!(
        lines
            .next()
            .is_some_and(|h| h.starts_with("domain,cluster,topic,tier"))
    );
    assert!(
        csv.body.contains("payments,local,orders,1,99.900,60,"),
        "{}",
        csv.body
    );

    // The pages, as server HTML.
    let cookie = t.login("pat", PASSWORD).await.expect("signs in");
    let page = t
        .get(
            &format!("/clusters/{}/stream?name=orders", c.id),
            Some(&cookie),
        )
        .await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("Freshness SLO"), "{}", page.body);
    assert!(
        page.body.contains("4 min of 43.8 min used"),
        "{}",
        page.body
    );
    let page = t
        .get(
            &format!("/clusters/{}/stream?name=clicks", c.id),
            Some(&cookie),
        )
        .await;
    assert!(
        page.body
            .contains("checked every 60 s: too slow for a 90 s budget")
    );
    let page = t.get("/domain?name=payments", Some(&cookie)).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body.contains("streams within their tier: 1 of 1"),
        "{}",
        page.body
    );
}
