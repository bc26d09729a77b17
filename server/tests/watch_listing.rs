//! A consumer group the cluster stops listing reads "not listed since …"
//! on every page and API answer that shows its state or lag — the
//! cluster's groups, the group's page, the stream's consumers — never
//! the OK and lag 0 of its last judgement (issue 45, item 2).

mod support;

use axum::http::{Method, StatusCode};
use chrono::{DateTime, Duration, Utc};
use serde_json::Value;
use sqlx::PgPool;
use streamkeeper::accounts::role::Role;
use streamkeeper_server::clients::kafka::reader::{
    GroupReading, OffsetsBy, PartitionReading, Reading, TopicReading,
};
use streamkeeper_server::watch::judge::{self, PassResult};
use streamkeeper_server::watch::kept::KeptWindow;
use streamkeeper_server::watch::store::{self as clusters, samples};
use support::{PASSWORD, TestApp};

/// A synthetic pass at `at`: both topics, and `groups` listed, each
/// keeping up with its own one-partition topic (lag 0).
fn reading(groups: &[&str], at: DateTime<Utc>, offset: i64) -> Reading {
    Reading {
        started: at,
        finished: at,
        brokers: 1,
        topics: ["kept", "gone"]
            .iter()
            .map(|g| TopicReading {
                name: format!("t-{g}"),
                partitions: vec![PartitionReading {
                    partition: 0,
                    leader: Some(1),
                    replicas: vec![1],
                    isr: vec![1],
                    log_start: Some(0),
                    log_end: Some(offset),
                }],
                last_message_at: None,
                wire: None,
            })
            .collect(),
        groups: groups
            .iter()
            .map(|g| GroupReading {
                name: (*g).to_string(),
                state: "Stable".into(),
                members: 1,
                offsets: [((format!("t-{g}"), 0), Some(offset))].into(),
                error: None,
                assigned: Default::default(),
            })
            .collect(),
        groups_listed: true,
        problems: vec![],
        phases: Vec::new(),
        offsets_by: OffsetsBy::Librdkafka("synthetic".into()),
    }
}

/// The `<tr>` of the list that names `group`.
fn row_of<'a>(html: &'a str, group: &str) -> &'a str {
    let at = html
        .find(&format!(">{group}</a>"))
        .unwrap_or_else(|| panic!("{group} is not listed: {html}"));
    let start = html[..at].rfind("<tr").unwrap_or(0);
    let end = html[at..].find("</tr>").map_or(html.len(), |e| at + e);
    &html[start..end]
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_group_the_cluster_stops_listing_reads_not_listed_everywhere(pool: PgPool) {
    let t = TestApp::new(pool.clone()).await;
    let viewer = t.user("vic", &[Role::Viewer]).await;
    let vt = t.token(viewer).await;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s)
         VALUES ('synthetic', '127.0.0.1:1', 'PLAINTEXT', 15) RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .expect("cluster");
    let row = clusters::by_id(&pool, id).await.expect("db").expect("row");
    samples::ensure_partitions(&pool, Utc::now())
        .await
        .expect("partitions");
    // Three passes with both groups keeping up (OK, lag 0), then one that
    // no longer lists "gone".
    let now = Utc::now();
    let mut kept = KeptWindow::default();
    for pass in 0..4i64 {
        let at = now - Duration::seconds(45 - 15 * pass);
        let listed: &[&str] = if pass < 3 {
            &["kept", "gone"]
        } else {
            &["kept"]
        };
        let r = reading(listed, at, 100 + 10 * pass);
        let stored = clusters::record_reading(&pool, id, &r)
            .await
            .expect("store");
        kept.push_read(stored.pass_id, r.finished, &stored.samples);
        judge::after_pass(&pool, &row, PassResult::Read(&r), &mut kept)
            .await
            .expect("judge");
    }
    let not_listed = |v: &Value| {
        v.as_str()
            .is_some_and(|s| s.starts_with("not listed since "))
    };

    // The API: the cluster's groups and the group.
    let r = t
        .api(
            Method::GET,
            &format!("/api/v1/clusters/{id}/groups"),
            &vt,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let items = r.json()["items"].as_array().cloned().unwrap_or_default();
    let of = |name: &str| {
        items
            .iter()
            .find(|g| g["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name}: {}", r.body))
    };
    let gone = of("gone");
    assert_eq!(gone["status"], "NOT_LISTED", "{gone}");
    assert_eq!(gone["total_lag"], Value::Null, "{gone}");
    assert!(not_listed(&gone["state"]), "{gone}");
    assert_eq!(
        of("kept")["status"],
        "OK",
        "a listed group is judged as before"
    );
    assert_eq!(of("kept")["total_lag"], 0);
    let r = t
        .api(
            Method::GET,
            &format!("/api/v1/clusters/{id}/groups/gone"),
            &vt,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let g = r.json();
    assert_eq!(g["status"], "NOT_LISTED", "{g}");
    assert!(not_listed(&g["state"]), "{g}");
    for p in g["partitions"].as_array().cloned().unwrap_or_default() {
        assert_eq!(p["status"], "NOT_LISTED", "{g}");
        assert_eq!(p["lag"], Value::Null, "{g}");
    }

    // The pages: the cluster's list, the group's page, the stream's
    // consumers. None says OK or lag 0 for the group.
    let cookie = t.login("vic", PASSWORD).await.expect("vic signs in");
    let page = t.get(&format!("/clusters/{id}"), Some(&cookie)).await;
    assert_eq!(page.status, StatusCode::OK);
    let gone_row = row_of(&page.body, "gone");
    assert!(gone_row.contains("not listed since"), "{gone_row}");
    assert!(
        !gone_row.contains(">OK<") && !gone_row.contains(">0<"),
        "{gone_row}"
    );
    assert!(row_of(&page.body, "kept").contains(">OK<"));

    let page = t
        .get(&format!("/clusters/{id}/group?name=gone"), Some(&cookie))
        .await;
    assert_eq!(page.status, StatusCode::OK);
    let age = page
        .body
        .split("data-testid=\"data-age\"")
        .nth(1)
        .unwrap_or_default();
    assert!(
        age[..age.find("</p>").unwrap_or(age.len())].contains("not listed since"),
        "{}",
        page.body
    );
    assert!(!page.body.contains(">OK<"), "{}", page.body);

    let page = t
        .get(&format!("/clusters/{id}/stream?name=t-gone"), Some(&cookie))
        .await;
    assert_eq!(page.status, StatusCode::OK);
    let card = page
        .body
        .split("data-testid=\"consumer\"")
        .nth(1)
        .unwrap_or_else(|| panic!("no consumer: {}", page.body));
    let card = &card[..card.find("</section>").unwrap_or(card.len())];
    assert!(card.contains("not listed since"), "{card}");
    assert!(!card.contains(">OK<") && !card.contains("lag 0"), "{card}");
}
