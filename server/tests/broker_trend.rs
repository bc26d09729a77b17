//! Lag trend against the broker started by scripts/test: a stopped
//! consumer whose log start closes on its committed offset is flagged
//! RETENTION ("will lose data … at this rate") before the loss, then LOST
//! when the log start passes it; the group's answer, page and `/metrics`
//! carry the trend.
//!
//! nisshi's in-memory storage does not enforce `retention.ms`, so the test
//! moves the log start itself with DeleteRecords, which is what retention
//! does (deleting a partition's oldest records): the sampler cannot tell
//! the two apart.

mod support;

use axum::http::{Method, StatusCode};
use rdkafka::admin::{AdminClient, AdminOptions};
use rdkafka::client::DefaultClientContext;
use rdkafka::{Offset, TopicPartitionList};
use serde_json::{Value, json};
use std::time::Duration;
use streamkeeper::accounts::role::Role;
use streamkeeper_server::watch::kept::KeptWindow;
use streamkeeper_server::watch::routine::{self as watch, PassOutcome};
use streamkeeper_server::watch::store;
use support::TestApp;
use support::kafka::{bootstrap, commit, plain, topic_with};

/// Deletes partition 0's records before `offset`: its log start moves there.
async fn delete_before(bootstrap: &str, topic: &str, offset: i64) {
    let admin: AdminClient<DefaultClientContext> = plain(bootstrap).create().expect("admin");
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(topic, 0, Offset::Offset(offset))
        .expect("offset");
    let opts = AdminOptions::new().operation_timeout(Some(Duration::from_secs(10)));
    let done = admin.delete_records(&tpl, &opts).await.expect("deleted");
    for e in done.elements() {
        assert!(e.error().is_ok(), "{:?}", e.error());
    }
}

/// One pass of the sampler, its evaluation included.
async fn pass(t: &TestApp, id: i64, kept: &mut KeptWindow) {
    let cluster = store::by_id(&t.pool, id)
        .await
        .expect("db")
        .expect("cluster");
    let outcome = watch::pass(&t.pool, &cluster, &Default::default(), &mut None, kept).await;
    assert!(
        matches!(outcome, PassOutcome::Stored { problems: 0, .. }),
        "{outcome:?}"
    );
}

/// The open flags of `kind` on `group`.
fn flags_of<'a>(flags: &'a Value, kind: &str, group: &str) -> Vec<&'a Value> {
    flags["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["kind"] == kind && f["subject"] == group)
        .collect()
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_log_start_closing_on_a_stopped_group_is_flagged_before_it_is_lost(pool: sqlx::PgPool) {
    let bootstrap = bootstrap();
    let run = format!(
        "{}-{}",
        std::process::id(),
        pool.connect_options().get_database().unwrap_or("db")
    );
    let topic = format!("trend-billing-{run}");
    let group = format!("trend-billing-{run}");
    topic_with(&bootstrap, &topic, &[1_000]).await;
    // Stopped at 500, no members: retention closes in from 100.
    commit(&bootstrap, &group, &topic, &[(0, 500)]);
    delete_before(&bootstrap, &topic, 100).await;

    let t = TestApp::new(pool).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let at = t.token(admin).await;
    let r = t
        .api(
            Method::POST,
            "/api/v1/clusters",
            &at,
            Some(json!({"name": "local", "bootstrap": bootstrap})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let id = r.json()["id"].as_i64().expect("id");

    // Retention deletes 40 records between passes 300 ms apart.
    let mut kept = Default::default();
    for i in 1..=5 {
        pass(&t, id, &mut kept).await;
        delete_before(&bootstrap, &topic, 100 + 40 * i).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let url = format!("/api/v1/clusters/{id}/groups/{group}");
    let v = t.api(Method::GET, &url, &at, None).await.json();
    assert_eq!(v["status"], "STOP", "{v}");
    let left = v["trend"]["retention_risk_s"].as_f64().expect("a figure");
    assert!(left > 0.0 && left < 60.0, "{v}");
    assert!(
        v["trend"]["retention"]
            .as_str()
            .is_some_and(|s| s.starts_with("loses data in ~")),
        "{v}"
    );
    assert_eq!(v["trend"]["catch_up"], "not catching up", "{v}");
    assert_eq!(
        v["partitions"][0]["trend"]["retention"], v["trend"]["retention"],
        "one partition: the group's is its"
    );
    let flags = t
        .api(Method::GET, "/api/v1/flags?scope=all", &at, None)
        .await
        .json();
    let risk = flags_of(&flags, "RETENTION", &group);
    assert_eq!(risk.len(), 1, "{flags}");
    let reason = risk[0]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.starts_with(&format!("{group} will lose data on {topic}[0] in ~"))
            && reason.ends_with("at this rate"),
        "{reason}"
    );
    assert!(flags_of(&flags, "LOST", &group).is_empty(), "not lost yet");

    // Shown on the group's page and in `/metrics`.
    let cookie = t.login("ada", support::PASSWORD).await.expect("signed in");
    let page = t
        .get(&format!("/clusters/{id}/group?name={group}"), Some(&cookie))
        .await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body.contains("Catch-up: not catching up · "),
        "{}",
        page.body
    );
    assert!(page.body.contains("loses data in ~"), "{}", page.body);
    let scraper = t
        .token_with(admin, &[streamkeeper::accounts::token::Scope::Metrics])
        .await;
    let metrics = t.api(Method::GET, "/metrics", &scraper, None).await.body;
    let series = format!(
        "streamkeeper_consumergroup_retention_risk_seconds{{cluster_name=\"local\",group=\"{group}\"}}"
    );
    assert!(metrics.contains(&series), "{metrics}");

    // The log start passes the commit: the group is LOST, and the
    // retention flag stays open saying what was lost.
    delete_before(&bootstrap, &topic, 600).await;
    pass(&t, id, &mut kept).await;
    let v = t.api(Method::GET, &url, &at, None).await.json();
    assert_eq!(v["status"], "LOST", "{v}");
    assert_eq!(v["trend"]["retention_risk_s"], 0.0, "{v}");
    let flags = t
        .api(Method::GET, "/api/v1/flags?scope=all", &at, None)
        .await
        .json();
    assert_eq!(flags_of(&flags, "LOST", &group).len(), 1, "{flags}");
    let risk = flags_of(&flags, "RETENTION", &group);
    assert_eq!(risk.len(), 1, "{flags}");
    assert_eq!(
        risk[0]["reason"],
        format!("{group} lost 100 unread messages on {topic}[0] to retention")
    );
}
