//! The sampler routine against the broker and Postgres started by
//! scripts/test: exact lag and statuses through the API, a stopped consumer
//! flagged STOP, catching up, REWIND, and an unreachable cluster stored as
//! a gap (no samples), never as zero lag.

mod support;

use axum::http::{Method, StatusCode};
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::{Offset, TopicPartitionList};
use serde_json::json;
use std::time::Duration;
use streamkeeper::role::Role;
use streamkeeper_server::store::clusters as store;
use streamkeeper_server::watch::{self, PassOutcome};
use support::TestApp;

fn bootstrap() -> String {
    std::env::var("STREAMKEEPER_TEST_BOOTSTRAP")
        .expect("STREAMKEEPER_TEST_BOOTSTRAP is not set: run this test through scripts/test, which starts the broker")
}

async fn produce(bootstrap: &str, topic: &str, partitions: i32, per_partition: i32) {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .expect("admin");
    for r in admin
        .create_topics(
            &[NewTopic::new(topic, partitions, TopicReplication::Fixed(1))],
            &AdminOptions::new().operation_timeout(Some(Duration::from_secs(10))),
        )
        .await
        .expect("create")
    {
        r.expect("created");
    }
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .expect("producer");
    for p in 0..partitions {
        for i in 0..per_partition {
            let payload = format!("m{i}");
            producer
                .send(
                    FutureRecord::<(), _>::to(topic)
                        .partition(p)
                        .payload(&payload),
                    Duration::from_secs(10),
                )
                .await
                .map_err(|(e, _)| e)
                .expect("delivered");
        }
    }
}

fn commit(bootstrap: &str, group: &str, topic: &str, offsets: &[(i32, i64)]) {
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        .create()
        .expect("consumer");
    let mut tpl = TopicPartitionList::new();
    for (p, o) in offsets {
        tpl.add_partition_offset(topic, *p, Offset::Offset(*o))
            .expect("tpl");
    }
    c.assign(&tpl).expect("assign");
    c.commit(&tpl, CommitMode::Sync).expect("commit");
}

async fn passes(t: &TestApp, id: i64, n: usize) {
    let cluster = store::by_id(&t.pool, id)
        .await
        .expect("db")
        .expect("cluster");
    let mut pending = None;
    for _ in 0..n {
        let outcome = watch::pass(&t.pool, &cluster, &mut pending).await;
        assert!(
            matches!(outcome, PassOutcome::Stored { problems: 0, .. }),
            "{outcome:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[sqlx::test(migrator = "streamkeeper_server::db::MIGRATOR")]
async fn lag_statuses_and_gaps_through_the_api(pool: sqlx::PgPool) {
    let bootstrap = bootstrap();
    let run = format!(
        "{}-{}",
        std::process::id(),
        pool.connect_options().get_database().unwrap_or("db")
    );
    let topic = format!("watch-orders-{run}");
    let group = format!("watch-readers-{run}");
    produce(&bootstrap, &topic, 3, 10).await;
    commit(&bootstrap, &group, &topic, &[(0, 4), (1, 7)]);

    let t = TestApp::new(pool).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let viewer = t.user("vic", &[Role::Viewer]).await;
    let (at, vt) = (t.token(admin).await, t.token(viewer).await);
    let r = t
        .api(
            Method::POST,
            "/api/v1/clusters",
            &vt,
            Some(json!({"name": "local", "bootstrap": bootstrap})),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "only admins add clusters");
    let r = t
        .api(
            Method::POST,
            "/api/v1/clusters",
            &at,
            Some(json!({"name": "local", "bootstrap": bootstrap})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.json()["state"], "UNKNOWN");
    let id = r.json()["id"].as_i64().expect("id");
    let r = t.api(Method::POST, "/api/v1/clusters", &at, Some(json!({"name": "cc", "bootstrap": "pkc.example:9092", "security_protocol": "SASL_SSL", "username_ref": "api-key-in-clear", "password_ref": "env:X"}))).await;
    assert_eq!(
        r.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "credentials must be references: {}",
        r.body
    );

    passes(&t, id, 4).await;
    let url = format!("/api/v1/clusters/{id}/groups/{group}");
    let r = t.api(Method::GET, &url, &vt, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let v = r.json();
    assert_eq!(v["cluster_state"], "UP");
    let p = |i: usize, k: &str| v["partitions"][i][k].clone();
    assert_eq!(
        (p(0, "lag"), p(1, "lag"), p(2, "lag")),
        (json!(6), json!(3), json!(null))
    );
    assert_eq!(
        (p(0, "status"), p(1, "status"), p(2, "status")),
        (json!("STOP"), json!("STOP"), json!("NO_COMMIT"))
    );
    assert_eq!(v["status"], "STOP");
    assert!(
        p(0, "reason").as_str().unwrap_or("").contains("6 behind"),
        "{}",
        p(0, "reason")
    );

    // The same, server-rendered for a signed-in viewer, chart included.
    let cookie = t.login("vic", support::PASSWORD).await.expect("signed in");
    let page = t
        .get(&format!("/clusters/{id}/group?name={group}"), Some(&cookie))
        .await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body.contains("STOP") && page.body.contains("<svg"),
        "{}",
        page.body
    );
    assert!(page.body.contains("no progress for"), "the reason is shown");
    let page = t.get(&format!("/clusters/{id}"), Some(&cookie)).await;
    assert!(
        page.body.contains(group.as_str()) && page.body.contains("UP"),
        "{}",
        page.body
    );

    // Catching up resolves it.
    commit(&bootstrap, &group, &topic, &[(0, 10), (1, 10)]);
    passes(&t, id, 1).await;
    let v = t.api(Method::GET, &url, &vt, None).await.json();
    assert_eq!(
        (v["partitions"][0]["lag"].clone(), v["status"].clone()),
        (json!(0), json!("OK"))
    );

    // Moving the offset back is REWIND.
    commit(&bootstrap, &group, &topic, &[(0, 2)]);
    passes(&t, id, 1).await;
    let v = t.api(Method::GET, &url, &vt, None).await.json();
    assert_eq!(v["partitions"][0]["status"], "REWIND", "{v}");
    assert_eq!(v["status"], "REWIND");

    // An unreachable cluster: a gap, a state, no samples.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = dead.local_addr().expect("addr").port();
    drop(dead);
    let r = t
        .api(
            Method::POST,
            "/api/v1/clusters",
            &at,
            Some(
                json!({"name": "gone", "bootstrap": format!("127.0.0.1:{port}"), "interval_s": 5}),
            ),
        )
        .await;
    let gone = r.json()["id"].as_i64().expect("id");
    let cluster = store::by_id(&t.pool, gone)
        .await
        .expect("db")
        .expect("cluster");
    let outcome = watch::pass(&t.pool, &cluster, &mut None).await;
    assert!(matches!(outcome, PassOutcome::Failed(_)), "{outcome:?}");
    let v = t
        .api(Method::GET, &format!("/api/v1/clusters/{gone}"), &vt, None)
        .await
        .json();
    assert_eq!(v["state"], "UNREACHABLE");
    assert_eq!(v["last_good_pass_at"], json!(null));
    assert!(
        v["problems"][0]
            .as_str()
            .unwrap_or("")
            .contains("could not be reached"),
        "{v}"
    );
    let samples: i64 = sqlx::query_scalar("SELECT count(*) FROM lag_samples WHERE cluster_id = $1")
        .bind(gone)
        .fetch_one(&t.pool)
        .await
        .expect("count");
    assert_eq!(samples, 0, "no zero-lag samples for an unreachable cluster");
    let list = t
        .api(Method::GET, "/api/v1/clusters", &vt, None)
        .await
        .json();
    assert_eq!(list.as_array().map(Vec::len), Some(2));
    assert!(
        !list.to_string().contains("env:"),
        "credential references are not echoed"
    );
    assert!(
        t.audit_actions()
            .await
            .iter()
            .filter(|a| *a == "cluster.create")
            .count()
            == 2
    );
}
