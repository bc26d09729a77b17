//! Schema drift read off the wire, against the broker started by
//! scripts/test and the registry double: the pass reads the wire-format
//! headers of each stream's last records, the registry routine places
//! their IDs; a producer switching to an unregistered schema ID raises a
//! DRIFT flag to the stream's owner naming the record's offset, and the
//! subjects screen and its API say what producers write. Bytes that are no
//! header are "not known", never a failed pass.

mod support;

use axum::http::{Method, StatusCode};
use rdkafka::producer::{FutureProducer, FutureRecord};
use serde_json::{Value, json};
use std::time::Duration;
use streamkeeper::accounts::role::Role;
use streamkeeper_doubles::registry;
use streamkeeper_server::clients::registry::{NewSchema, RegistryClient};
use streamkeeper_server::watch::kept::KeptWindow;
use streamkeeper_server::watch::routine::{self as watch, PassOutcome};
use streamkeeper_server::watch::store;
use support::TestApp;
use support::kafka::{bootstrap, plain, topic_with};

const V1: &str = r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"string"}]}"#;
const V2: &str = r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"note","type":"string","default":""}]}"#;

/// Writes `values` to partition 0 of `topic`, in order.
async fn produce_values(bootstrap: &str, topic: &str, values: &[Vec<u8>]) {
    let producer: FutureProducer = plain(bootstrap).create().expect("producer");
    for v in values {
        producer
            .send(
                FutureRecord::<(), _>::to(topic).partition(0).payload(v),
                Duration::from_secs(10),
            )
            .await
            .map_err(|(e, _)| e)
            .expect("delivered");
    }
}

/// An Avro value in the wire format: magic byte, schema ID, then data.
fn framed(id: u32) -> Vec<u8> {
    let mut v = vec![0_u8];
    v.extend(id.to_be_bytes());
    // Avro's string "a": zigzag length 1, then the byte.
    v.extend([0x02, b'a']);
    v
}

/// One pass of the sampler, its evaluation included: it reads cleanly.
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

/// The registry routine (hygiene, then drift).
async fn judge(t: &TestApp, id: i64) {
    let cluster = store::by_id(&t.pool, id)
        .await
        .expect("db")
        .expect("cluster");
    streamkeeper_server::schemas::routine::run(&t.pool, &support::outbound(), &cluster)
        .await
        .expect("registry routine");
}

/// The open DRIFT flags on `topic`.
async fn drift_flags(t: &TestApp, at: &str, topic: &str) -> Vec<Value> {
    let flags = t
        .api(Method::GET, "/api/v1/flags?scope=all", at, None)
        .await
        .json();
    flags["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["kind"] == "DRIFT" && f["subject"] == topic)
        .cloned()
        .collect()
}

/// What the subjects API says producers write to `subject`.
async fn producers_write(t: &TestApp, at: &str, id: i64, subject: &str) -> Value {
    let v = t
        .api(
            Method::GET,
            &format!("/api/v1/clusters/{id}/registry/subjects"),
            at,
            None,
        )
        .await
        .json();
    v["subjects"]["items"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["name"] == subject)
        .map(|s| s["producers_write"].clone())
        .unwrap_or_else(|| panic!("no {subject} in {v}"))
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_producer_switching_to_an_unregistered_id_is_flagged_with_the_offset(pool: sqlx::PgPool) {
    let bootstrap = bootstrap();
    let run = format!(
        "{}-{}",
        std::process::id(),
        pool.connect_options().get_database().unwrap_or("db")
    );
    let topic = format!("drift-orders-{run}");
    let subject = format!("{topic}-value");
    topic_with(&bootstrap, &topic, &[0]).await;

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
    let (base, _handle) = registry::spawn().await;
    let r = t
        .api(
            Method::PUT,
            &format!("/api/v1/clusters/{id}/registry"),
            &at,
            Some(json!({"url": base})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let client = RegistryClient::new(support::registry_settings(&base)).expect("client");
    let v1 = client
        .register(&subject, &NewSchema::avro(V1), false)
        .await
        .expect("v1");
    let v2 = client
        .register(&subject, &NewSchema::avro(V2), false)
        .await
        .expect("v2");
    let team: i64 = sqlx::query_scalar("INSERT INTO teams (name) VALUES ('payments') RETURNING id")
        .fetch_one(&t.pool)
        .await
        .expect("team");
    sqlx::query("INSERT INTO streams (cluster_id, topic, owner_team_id) VALUES ($1, $2, $3)")
        .bind(id)
        .bind(&topic)
        .bind(team)
        .execute(&t.pool)
        .await
        .expect("stream");

    // The registry read first: a pass reads the tails of streams whose
    // value subject it lists.
    judge(&t, id).await;
    // The producers write v2, the latest: no drift.
    produce_values(&bootstrap, &topic, &[framed(v2), framed(v2), framed(v2)]).await;
    let mut kept = KeptWindow::default();
    pass(&t, id, &mut kept).await;
    judge(&t, id).await;
    let flags = drift_flags(&t, &at, &topic).await;
    assert!(flags.is_empty(), "{flags:?}");
    assert_eq!(
        producers_write(&t, &at, id, &subject).await,
        "producers write v2 (latest v2)"
    );

    // One switches to an ID the registry does not know (offsets 3 and
    // 4), then a record of garbage after the magic byte (offset 5).
    produce_values(
        &bootstrap,
        &topic,
        &[framed(9_999), framed(9_999), vec![0_u8, 1]],
    )
    .await;
    pass(&t, id, &mut kept).await;
    judge(&t, id).await;
    let flags = drift_flags(&t, &at, &topic).await;
    assert_eq!(flags.len(), 1, "{flags:?}");
    assert_eq!(
        flags[0]["reason"],
        format!("schema ID 9999 is not registered ({topic}[0] at offset 4)")
    );
    let (evidence, owner): (Value, Option<i64>) = sqlx::query_as(
        "SELECT evidence, team_id FROM flags WHERE kind = 'DRIFT' AND subject = $1 AND state = 'open'",
    )
    .bind(&topic)
    .fetch_one(&t.pool)
    .await
    .expect("flag");
    assert_eq!(owner, Some(team), "to the stream's owner");
    let receipt = &evidence["drifts"][0];
    assert_eq!(receipt["partition"], 0, "{evidence}");
    assert_eq!(receipt["offset"], 4, "{evidence}");
    assert_eq!(receipt["carried"]["id"], 9_999, "{evidence}");
    assert!(receipt["timestamp_ms"].as_i64().is_some(), "{evidence}");
    let said = producers_write(&t, &at, id, &subject).await;
    assert!(
        said.as_str().is_some_and(|s| s.starts_with(
            "producers write ID 9999, not registered, records not known (the magic byte then 1 byte(s)"
        ) && s.ends_with("(latest v2)")),
        "{said}"
    );

    // Back to the latest: the flag resolves.
    produce_values(&bootstrap, &topic, &[framed(v2), framed(v2), framed(v2)]).await;
    pass(&t, id, &mut kept).await;
    judge(&t, id).await;
    let flags = drift_flags(&t, &at, &topic).await;
    assert!(flags.is_empty(), "{flags:?}");

    // v1 after v2 was registered: an old version, flagged.
    produce_values(&bootstrap, &topic, &[framed(v1)]).await;
    pass(&t, id, &mut kept).await;
    judge(&t, id).await;
    let flags = drift_flags(&t, &at, &topic).await;
    assert_eq!(flags.len(), 1, "{flags:?}");
    assert_eq!(
        flags[0]["reason"],
        format!(
            "schema ID {v1} is v1 of {subject}, after v2 was registered ({topic}[0] at offset 9)"
        )
    );

    // The subjects screen says it too.
    let cookie = t.login("ada", support::PASSWORD).await.expect("signed in");
    let page = t.get(&format!("/schemas/{id}"), Some(&cookie)).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body.contains("producers write v1, v2 (latest v2)"),
        "{}",
        page.body
    );
}
