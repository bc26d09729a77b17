//! Schemas through the REST API and the CLI: the catalog's schemas, the
//! check of a producer change against each consumer group's reader schema
//! and the subject's history, the registry double as the registry (and as
//! a registry that fails), and `schema check` offline and against a
//! running console with its exit codes.

mod support;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use std::process::Command;
use streamkeeper::accounts::role::Role;
use streamkeeper_doubles::registry::{self, Fault};
use support::TestApp;

const V1: &str = r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"amount","type":"double"}]}"#;
/// Drops `amount`: readers that need it break.
const DROPS_AMOUNT: &str =
    r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"string"}]}"#;
/// Adds an optional field: everyone still reads it.
const ADDS_NOTE: &str = r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"amount","type":"double"},{"name":"note","type":["null","string"],"default":null}]}"#;
/// The billing team reads with `amount` and a `currency` it defaults.
const BILLING_READER: &str = r#"{"type":"record","name":"Order","fields":[{"name":"amount","type":"double"},{"name":"currency","type":"string","default":"EUR"}]}"#;

/// A cluster whose last pass saw `orders` read by `billing` (owned by
/// payments) and `audit` (unowned), and `fresh` read by `newcomer`.
async fn cluster(t: &TestApp) -> i64 {
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s)
         VALUES ('local', '127.0.0.1:1', 'PLAINTEXT', 15) RETURNING id",
    )
    .fetch_one(&t.pool)
    .await
    .expect("cluster");
    for topic in ["orders", "fresh"] {
        sqlx::query(
            "INSERT INTO topics (cluster_id, name, partitions, first_seen, last_seen) VALUES ($1, $2, 1, now(), now())",
        )
        .bind(id)
        .bind(topic)
        .execute(&t.pool)
        .await
        .expect("topic");
    }
    for (group, topic) in [
        ("billing", "orders"),
        ("audit", "orders"),
        ("newcomer", "fresh"),
    ] {
        sqlx::query(
            "INSERT INTO consumer_groups (cluster_id, name, state, members, topics, first_seen, last_seen)
             VALUES ($1, $2, 'Stable', 1, ARRAY[$3], now() + interval '1 minute', now())",
        )
        .bind(id)
        .bind(group)
        .bind(topic)
        .execute(&t.pool)
        .await
        .expect("group");
    }
    id
}

/// A registry double set as the cluster's registry (by an admin's token),
/// and a client to arrange its subjects.
async fn with_registry(
    t: &TestApp,
    id: i64,
    admin_token: &str,
) -> (
    String,
    registry::RegistryHandle,
    streamkeeper_server::clients::registry::RegistryClient,
) {
    use streamkeeper_server::clients::registry::RegistryClient;
    let (base, handle) = registry::spawn().await;
    let r = t
        .api(
            Method::PUT,
            &format!("/api/v1/clusters/{id}/registry"),
            admin_token,
            Some(json!({"url": base})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let client = RegistryClient::new(support::registry_settings(&base)).expect("client");
    (base, handle, client)
}

fn proposed(schema: &str) -> Value {
    json!({"schema_type": "AVRO", "schema": schema})
}

fn verdict_of<'a>(report: &'a Value, group: &str) -> &'a Value {
    report["consumers"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["group"] == group))
        .unwrap_or_else(|| panic!("no verdict for {group}: {report}"))
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_producer_change_is_checked_against_each_consumer(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let id = cluster(&t).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let owner = t.user("olga", &[Role::Owner]).await;
    let viewer = t.user("vic", &[Role::Viewer]).await;
    let (at, ot, vt) = (
        t.token(admin).await,
        t.token(owner).await,
        t.token(viewer).await,
    );
    sqlx::query("INSERT INTO teams (name) VALUES ('payments'), ('other')")
        .execute(&t.pool)
        .await
        .expect("teams");
    sqlx::query("UPDATE consumer_groups SET owner_team_id = (SELECT id FROM teams WHERE name = 'payments') WHERE name = 'billing'")
        .execute(&t.pool)
        .await
        .expect("owner");

    // Nothing recorded: no verdict, never "compatible".
    let url = format!("/api/v1/clusters/{id}/streams/orders/compatibility");
    let r = t
        .api(Method::POST, &url, &vt, Some(proposed(ADDS_NOTE)))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["verdict"], "UNDECIDED", "{}", r.body);
    assert!(
        r.json()["summary"]
            .as_str()
            .is_some_and(|s| s.contains("no stream schema recorded"))
    );

    // The stream's schema, recorded by an admin; a viewer may not.
    let schema_url = format!("/api/v1/clusters/{id}/streams/orders/schema");
    let r = t
        .api(
            Method::PUT,
            &schema_url,
            &vt,
            Some(json!({"schema_type": "AVRO", "schema": V1})),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let r = t
        .api(
            Method::PUT,
            &schema_url,
            &at,
            Some(json!({"schema_type": "AVRO", "schema": "{not avro"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("does not parse")),
        "{}",
        r.body
    );
    let r = t
        .api(
            Method::PUT,
            &schema_url,
            &at,
            Some(json!({"schema_type": "AVRO", "schema": V1})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);

    // billing declares its reader schema; its owner may, others may not.
    let reader_url = format!("/api/v1/clusters/{id}/groups/billing/reader-schemas/orders");
    let r = t
        .api(
            Method::PUT,
            &reader_url,
            &ot,
            Some(json!({"schema_type": "AVRO", "schema": BILLING_READER})),
        )
        .await;
    assert_eq!(
        r.status,
        StatusCode::FORBIDDEN,
        "olga is not in payments: {}",
        r.body
    );
    sqlx::query("INSERT INTO memberships (team_id, user_id) SELECT id, $1 FROM teams WHERE name = 'payments'")
        .bind(owner)
        .execute(&t.pool)
        .await
        .expect("member");
    let r = t
        .api(
            Method::PUT,
            &reader_url,
            &ot,
            Some(json!({"schema_type": "AVRO", "schema": BILLING_READER})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);

    let r = t
        .api(
            Method::GET,
            &format!("/api/v1/clusters/{id}/streams/orders/schemas"),
            &vt,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let s = r.json();
    assert_eq!(s["history"].as_array().map(Vec::len), Some(1));
    let audit = s["readers"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["group"] == "audit"))
        .expect("audit");
    assert_eq!(audit["reader"], "assumed");
    assert!(
        audit["note"]
            .as_str()
            .is_some_and(|n| n.contains("latest when the group was first seen")),
        "{audit}"
    );

    // A breaking change: both readers need `amount`.
    let r = t
        .api(Method::POST, &url, &vt, Some(proposed(DROPS_AMOUNT)))
        .await;
    let report = r.json();
    assert_eq!(report["verdict"], "INCOMPATIBLE", "{report}");
    let billing = verdict_of(&report, "billing");
    assert_eq!(billing["verdict"], "INCOMPATIBLE");
    assert_eq!(billing["owner"], "payments");
    assert_eq!(billing["reader"], "declared");
    assert_eq!(
        billing["reasons"][0]["kind"],
        "READER_FIELD_MISSING_DEFAULT_VALUE"
    );
    assert!(
        billing["reasons"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("amount")),
        "{billing}"
    );
    assert_eq!(verdict_of(&report, "audit")["reader"], "assumed");
    assert_eq!(verdict_of(&report, "audit")["verdict"], "INCOMPATIBLE");
    // Dropping a field is BACKWARD compatible with the subject's history.
    assert_eq!(report["history"]["verdict"], "COMPATIBLE", "{report}");
    assert_eq!(report["history"]["source"], "catalog");
    let summary = report["summary"].as_str().unwrap_or_default();
    assert!(
        summary.contains("billing (payments)") && summary.contains("audit (unowned)"),
        "{summary}"
    );
    assert!(report["elapsed_ms"].as_i64().is_some());
    // The check is on record.
    let again = t
        .api(
            Method::GET,
            &format!("/api/v1/schema-checks/{}", report["id"]),
            &vt,
            None,
        )
        .await;
    assert_eq!(again.json()["verdict"], "INCOMPATIBLE");

    // A compatible change.
    let r = t
        .api(Method::POST, &url, &vt, Some(proposed(ADDS_NOTE)))
        .await;
    assert_eq!(r.json()["verdict"], "COMPATIBLE", "{}", r.body);

    // Bad input: a clear error, never a verdict.
    let r = t
        .api(
            Method::POST,
            &url,
            &vt,
            Some(json!({"schema_type": "AVRO", "schema": "{\"type\": \"recrod\"}"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    let r = t
        .api(
            Method::POST,
            &url,
            &vt,
            Some(json!({"schema_type": "XML", "schema": "<a/>"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    assert!(r.body.contains("XML"), "{}", r.body);
    let r = t
        .api(
            Method::POST,
            &format!("/api/v1/clusters/{id}/streams/ordres/compatibility"),
            &vt,
            Some(proposed(ADDS_NOTE)),
        )
        .await;
    assert_eq!(
        r.status,
        StatusCode::NOT_FOUND,
        "a misspelt topic is not compatible: {}",
        r.body
    );
    // A different format than the readers': incompatible, said so.
    let r = t
        .api(
            Method::POST,
            &url,
            &vt,
            Some(json!({"schema_type": "JSON", "schema": "{\"type\":\"object\"}"})),
        )
        .await;
    assert_eq!(r.json()["verdict"], "INCOMPATIBLE", "{}", r.body);
    assert_eq!(
        verdict_of(&r.json(), "billing")["reasons"][0]["kind"],
        "SCHEMA_TYPE_CHANGED"
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_registry_gives_history_and_a_second_opinion(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let id = cluster(&t).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let at = t.token(admin).await;
    let (base, handle) = registry::spawn().await;

    let reg = format!("/api/v1/clusters/{id}/registry");
    let r = t
        .api(
            Method::PUT,
            &reg,
            &at,
            Some(json!({"url": base, "username_ref": "key-in-clear", "password_ref": "env:STREAMKEEPER_CRED_X"})),
        )
        .await;
    assert_eq!(
        r.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "credentials are references: {}",
        r.body
    );
    let r = t
        .api(Method::PUT, &reg, &at, Some(json!({"url": base})))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);

    // v1 registered, level FULL, and the catalog has it too.
    let client = streamkeeper_server::clients::registry::RegistryClient::new(
        support::registry_settings(&base),
    )
    .expect("client");
    client
        .register(
            "orders-value",
            &streamkeeper_server::clients::registry::NewSchema::avro(V1),
            false,
        )
        .await
        .expect("register v1");
    client
        .set_config(
            streamkeeper_server::clients::registry::Scope::Subject("orders-value"),
            streamkeeper::schemas::Mode::Full,
        )
        .await
        .expect("level");
    let r = t
        .api(
            Method::PUT,
            &format!("/api/v1/clusters/{id}/streams/orders/schema"),
            &at,
            Some(json!({"subject": "orders-value", "version": 1})),
        )
        .await;
    assert_eq!(
        r.status,
        StatusCode::CREATED,
        "pinned to the registry's version: {}",
        r.body
    );
    assert_eq!(r.json()["source"], "registry");

    // The subjects screen's data (as the hygiene pass stored it):
    // versions, levels, and a side-by-side diff.
    client
        .register(
            "orders-value",
            &streamkeeper_server::clients::registry::NewSchema::avro(ADDS_NOTE),
            false,
        )
        .await
        .expect("register v2");
    let row = streamkeeper_server::watch::store::by_id(&t.pool, id)
        .await
        .expect("db")
        .expect("row");
    streamkeeper_server::schemas::routine::run(&t.pool, &support::outbound(), &row)
        .await
        .expect("hygiene");
    let subjects = t
        .api(
            Method::GET,
            &format!("/api/v1/clusters/{id}/registry/subjects"),
            &at,
            None,
        )
        .await;
    assert_eq!(subjects.status, StatusCode::OK, "{}", subjects.body);
    let s = subjects.json();
    assert_eq!(s["subjects"]["items"][0]["name"], "orders-value");
    assert_eq!(s["subjects"]["items"][0]["versions"], json!([1, 2]));
    assert_eq!(s["subjects"]["items"][0]["level"], "FULL");
    let diff = t
        .api(
            Method::GET,
            &format!("/api/v1/clusters/{id}/registry/subjects/orders-value/diff"),
            &at,
            None,
        )
        .await
        .json();
    assert_eq!(
        (diff["left"].as_u64(), diff["right"].as_u64()),
        (Some(1), Some(2)),
        "{diff}"
    );
    let added: Vec<&str> = diff["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .filter(|l| l["left"].is_null())
        .filter_map(|l| l["right"].as_str())
        .collect();
    assert!(added.iter().any(|l| l.contains("\"note\"")), "{diff}");
    let r = t
        .api(
            Method::GET,
            &format!("/api/v1/clusters/{id}/registry/subjects/nope-value/diff"),
            &at,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);

    // Dropping `amount` (no default) breaks FULL: history and registry agree.
    let url = format!("/api/v1/clusters/{id}/streams/orders/compatibility");
    let report = t
        .api(Method::POST, &url, &at, Some(proposed(DROPS_AMOUNT)))
        .await
        .json();
    assert_eq!(report["history"]["source"], "registry", "{report}");
    assert_eq!(report["history"]["mode"], "FULL");
    assert_eq!(report["history"]["verdict"], "INCOMPATIBLE");
    assert_eq!(
        report["history"]["findings"][0]["direction"],
        "old_reads_new"
    );
    assert_eq!(report["registry"]["is_compatible"], false, "{report}");
    assert!(
        report["registry"]["messages"]
            .as_array()
            .is_some_and(|m| !m.is_empty())
    );

    // The registry failing: the history falls back to the catalog and the
    // second opinion says why; the verdict is still given, and still right.
    handle.fail_next(10, Fault::ServerError);
    let report = t
        .api(Method::POST, &url, &at, Some(proposed(DROPS_AMOUNT)))
        .await
        .json();
    assert_eq!(report["history"]["source"], "catalog", "{report}");
    assert!(
        report["history"]["note"]
            .as_str()
            .is_some_and(|n| n.contains("registry could not be read")),
        "{report}"
    );
    assert!(report["registry"]["error"].is_string(), "{report}");
    assert_eq!(report["verdict"], "INCOMPATIBLE");
}

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_streamkeeper"));
    c.env_remove("DATABASE_URL")
        .env_remove("STREAMKEEPER_SERVER")
        .env_remove("STREAMKEEPER_TOKEN");
    c
}

fn text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn schema_check_offline_prints_json_and_exits_by_verdict() {
    let dir = std::env::temp_dir().join(format!("sk-schema-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = |name: &str, body: &str| {
        let p = dir.join(name);
        std::fs::write(&p, body).expect("write");
        p.to_string_lossy().into_owned()
    };
    let (v1, drops, adds) = (
        file("v1.avsc", V1),
        file("drops.avsc", DROPS_AMOUNT),
        file("adds.avsc", ADDS_NOTE),
    );
    let run = |args: &[&str]| {
        bin()
            .args(["schema", "check"])
            .args(args)
            .output()
            .expect("run")
    };

    let o = run(&[
        "--type", "avro", "--mode", "BACKWARD", "--old", &v1, "--new", &adds,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(out["compatible"], true);

    // FORWARD: the old schema cannot read data without `amount`.
    let o = run(&[
        "--type", "avro", "--mode", "FORWARD", "--old", &v1, "--new", &drops,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(
        out["incompatibilities"][0]["kind"],
        "READER_FIELD_MISSING_DEFAULT_VALUE"
    );
    assert_eq!(out["incompatibilities"][0]["direction"], "old_reads_new");

    // Transitive: several --old, oldest first.
    let o = run(&[
        "--type",
        "avro",
        "--mode",
        "FORWARD_TRANSITIVE",
        "--old",
        &v1,
        "--old",
        &adds,
        "--new",
        &drops,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));

    // Errors: exit 2 with the reason.
    let bad = file("bad.avsc", "{\"type\": \"record\"");
    let o = run(&[
        "--type", "avro", "--mode", "BACKWARD", "--old", &v1, "--new", &bad,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("bad.avsc"), "{}", text(&o));
    let o = run(&["--type", "avro", "--mode", "SIDEWAYS", "--new", &v1]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("SIDEWAYS"), "{}", text(&o));
    let o = run(&["--type", "yaml", "--mode", "BACKWARD", "--new", &v1]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["--mode", "BACKWARD", "--new", &v1]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "--type is required offline: {}",
        text(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn schema_check_against_a_console_exits_by_verdict(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let id = cluster(&t).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let token = t.token(admin).await;
    let r = t
        .api(
            Method::PUT,
            &format!("/api/v1/clusters/{id}/streams/orders/schema"),
            &token,
            Some(json!({"schema_type": "AVRO", "schema": V1})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let server = format!("http://{}", listener.local_addr().expect("addr"));
    let app = t.app.clone();
    tokio::spawn(async move {
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<std::net::SocketAddr>(),
        )
        .await
    });
    let dir = std::env::temp_dir().join(format!("sk-schema-online-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let drops = dir.join("drops.avsc");
    std::fs::write(&drops, DROPS_AMOUNT).expect("write");
    let adds = dir.join("adds.avsc");
    std::fs::write(&adds, ADDS_NOTE).expect("write");
    let run = |topic: &str, schema: &std::path::Path, token: &str| {
        let (server, topic, schema, token) = (
            server.clone(),
            topic.to_owned(),
            schema.to_path_buf(),
            token.to_owned(),
        );
        async move {
            tokio::task::spawn_blocking(move || {
                bin()
                    .args([
                        "schema",
                        "check",
                        "--server",
                        &server,
                        "--token",
                        &token,
                        "--cluster",
                        "local",
                        "--topic",
                        &topic,
                        "--schema",
                    ])
                    .arg(&schema)
                    .output()
                    .expect("run")
            })
            .await
            .expect("join")
        }
    };
    let o = run("orders", &drops, &token).await;
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("\"INCOMPATIBLE\""), "{}", text(&o));
    let o = run("orders", &adds, &token).await;
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // No reader schema known for `fresh`'s consumer: no verdict, exit 2.
    let o = run("fresh", &adds, &token).await;
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = run("orders", &adds, "not-a-token").await;
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("401"), "{}", text(&o));

    // `--propose TITLE`: the checked schema goes into review as well.
    owned_in_a_domain(&t, id, &token).await;
    let (server2, token2, adds2) = (server.clone(), token.clone(), adds.clone());
    let o = tokio::task::spawn_blocking(move || {
        bin()
            .args([
                "schema",
                "check",
                "--server",
                &server2,
                "--token",
                &token2,
                "--cluster",
                "local",
                "--topic",
                "orders",
                "--propose",
                "Orders get a note",
                "--schema",
            ])
            .arg(&adds2)
            .output()
            .expect("run")
    })
    .await
    .expect("join");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    let item: i64 =
        sqlx::query_scalar("SELECT id FROM review_items WHERE title = 'Orders get a note'")
            .fetch_one(&t.pool)
            .await
            .expect("the proposed item");
    assert!(
        stderr.contains(&format!(
            "proposed for review as item {item}: {server}/review/{item}"
        )),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Gives `orders` an owner team and a domain (proposals need both).
async fn owned_in_a_domain(t: &TestApp, cluster: i64, admin_token: &str) {
    let r = t
        .api(
            Method::POST,
            "/api/v1/teams",
            admin_token,
            Some(json!({"name": "payments"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let r = t
        .api(
            Method::PUT,
            &format!("/api/v1/clusters/{cluster}/streams/orders"),
            admin_token,
            Some(json!({"owner_team": "payments", "domain": "payments"})),
        )
        .await;
    assert!(r.status.is_success(), "{}", r.body);
}

/// Proposing from a check carries the registered references it was
/// checked with; a check with references pasted as text is refused with
/// what to do, not proposed without them.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_check_is_proposed_with_its_references(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let (id, at, _base, _handle) = registry_with_references(&t).await;
    owned_in_a_domain(&t, id, &at).await;
    let url = format!("/api/v1/clusters/{id}/streams/orders/compatibility");
    let report = t
        .api(
            Method::POST,
            &url,
            &at,
            Some(json!({
                "schema_type": "JSON",
                "schema": ORDER_JSON_V2,
                "subject_references": [{"name": "money.json", "subject": "money", "version": 1}],
            })),
        )
        .await
        .json();
    let check = report["id"].as_i64().expect("check id");
    let r = t
        .api(
            Method::POST,
            &format!("/api/v1/schema-checks/{check}/proposals"),
            &at,
            Some(json!({"title": "Orders get a note"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let item = r.json();
    assert_eq!(item["title"], "Orders get a note");
    assert_eq!(
        item["content"]["references"],
        json!([{"name": "money.json", "subject": "money", "version": 1}]),
        "{item}"
    );

    // Pasted as text: refused (409), naming the reference; nothing proposed.
    let report = t
        .api(
            Method::POST,
            &url,
            &at,
            Some(json!({
                "schema_type": "JSON",
                "schema": ORDER_JSON_V2,
                "references": {"money.json": MONEY},
            })),
        )
        .await
        .json();
    let pasted = report["id"].as_i64().expect("check id");
    let r = t
        .api(
            Method::POST,
            &format!("/api/v1/schema-checks/{pasted}/proposals"),
            &at,
            Some(json!({})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    assert!(r.body.contains("pasted as text (money.json)"), "{}", r.body);
    let items: i64 = sqlx::query_scalar("SELECT count(*) FROM review_items")
        .fetch_one(&t.pool)
        .await
        .expect("items");
    assert_eq!(items, 1);
    // A check nobody made: 404.
    let r = t
        .api(
            Method::POST,
            "/api/v1/schema-checks/99999/proposals",
            &at,
            Some(json!({})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn registry_hygiene_finds_and_flags(pool: sqlx::PgPool) {
    use streamkeeper_server::clients::registry::{NewSchema, Scope};
    let t = TestApp::new(pool).await;
    let id = cluster(&t).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let at = t.token(admin).await;
    let (_, handle, client) = with_registry(&t, id, &at).await;
    for subject in ["orders-value", "gone-value"] {
        client
            .register(subject, &NewSchema::avro(V1), false)
            .await
            .expect("register");
    }
    // orders declares FULL (the registry is at BACKWARD); fresh is Tier 1
    // and unregistered.
    let team: i64 = sqlx::query_scalar("INSERT INTO teams (name) VALUES ('payments') RETURNING id")
        .fetch_one(&t.pool)
        .await
        .expect("team");
    sqlx::query(
        "INSERT INTO streams (cluster_id, topic, tier, compatibility, owner_team_id) VALUES ($1, 'orders', 3, 'FULL', NULL), ($1, 'fresh', 1, NULL, $2)",
    )
    .bind(id)
    .bind(team)
    .execute(&t.pool)
    .await
    .expect("streams");
    let row = streamkeeper_server::watch::store::by_id(&t.pool, id)
        .await
        .expect("db")
        .expect("row");

    let registry_status = || async {
        t.api(
            Method::GET,
            &format!("/api/v1/clusters/{id}/registry"),
            &at,
            None,
        )
        .await
        .json()
    };
    let due = || async {
        streamkeeper_server::schemas::store::due_registries(&t.pool, 300)
            .await
            .expect("due")
    };
    assert_eq!(
        due().await,
        vec![id],
        "a registry never read is due at once"
    );
    let found = streamkeeper_server::schemas::routine::run(&t.pool, &support::outbound(), &row)
        .await
        .expect("hygiene");
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(
        due().await.is_empty(),
        "read just now: not due for five minutes"
    );
    let status = registry_status().await;
    let kinds: Vec<&str> = status["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["kind"].as_str())
        .collect();
    // Listed per owner: payments' stream first, then the unowned.
    assert_eq!(
        kinds,
        ["UNREGISTERED_TOPIC", "LEVEL_DRIFT", "ORPHAN_SUBJECT"],
        "{status}"
    );
    assert_eq!(status["findings"][0]["owner"], "payments", "{status}");
    assert!(status["findings"][1]["owner"].is_null(), "{status}");
    assert!(status["last_error"].is_null());
    let flags = || async {
        sqlx::query_as::<_, (String, String, String)>(
            "SELECT subject, kind, state FROM flags WHERE rule = 'schema-registered' ORDER BY id",
        )
        .fetch_all(&t.pool)
        .await
        .expect("flags")
    };
    assert_eq!(
        flags().await,
        vec![("fresh".into(), "UNREGISTERED".into(), "open".into())]
    );

    // The registry failing: the findings and the flag stay, the error shows.
    handle.fail_next(1, Fault::ServerError);
    assert!(
        streamkeeper_server::schemas::routine::run(&t.pool, &support::outbound(), &row)
            .await
            .is_err()
    );
    let status = registry_status().await;
    assert!(
        status["last_error"].as_str().is_some_and(|e| !e.is_empty()),
        "{status}"
    );
    assert_eq!(status["findings"].as_array().map(Vec::len), Some(3));
    assert_eq!(flags().await[0].2, "open");

    // Registered and levelled: the flag resolves and the findings clear.
    client
        .register("fresh-value", &NewSchema::avro(V1), false)
        .await
        .expect("register");
    client
        .set_config(
            Scope::Subject("orders-value"),
            streamkeeper::schemas::Mode::Full,
        )
        .await
        .expect("level");
    let found = streamkeeper_server::schemas::routine::run(&t.pool, &support::outbound(), &row)
        .await
        .expect("hygiene");
    assert_eq!(found.len(), 1, "only the orphan is left: {found:?}");
    assert_eq!(flags().await[0].2, "resolved");
    let page = registry_status().await;
    assert!(page["last_error"].is_null(), "{page}");
}

/// A JSON Schema `orders` value that keeps its money in a referenced
/// subject (`money` version 1, named `money.json`).
const MONEY: &str = r#"{"type":"object","properties":{"amount":{"type":"number"}}}"#;
const ORDER_JSON_V1: &str =
    r#"{"type":"object","properties":{"id":{"type":"string"},"total":{"$ref":"money.json"}}}"#;
/// Adds an optional property to the open model: STRICT refuses it
/// (OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL), LENIENT takes it.
const ORDER_JSON_V2: &str = r#"{"type":"object","properties":{"id":{"type":"string"},"total":{"$ref":"money.json"},"note":{"type":"string"}}}"#;

/// A cluster with the registry double as its registry, `money` v1 and
/// `orders-value` v1 (referencing it) registered; the admin's token.
async fn registry_with_references(
    t: &TestApp,
) -> (
    i64,
    String,
    String,
    streamkeeper_doubles::registry::RegistryHandle,
) {
    use streamkeeper_server::clients::registry::{NewSchema, SchemaReference};
    let id = cluster(t).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let at = t.token(admin).await;
    let (base, handle, client) = with_registry(t, id, &at).await;
    let json_schema = |text: &str| NewSchema::new(streamkeeper::schemas::SchemaType::Json, text);
    client
        .register("money", &json_schema(MONEY), false)
        .await
        .expect("money");
    let order = NewSchema {
        references: vec![SchemaReference {
            name: "money.json".into(),
            subject: "money".into(),
            version: 1,
        }],
        ..json_schema(ORDER_JSON_V1)
    };
    client
        .register("orders-value", &order, false)
        .await
        .expect("orders v1");
    (id, at, base, handle)
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_registry_is_asked_with_the_references_under_the_subjects_policy(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let (id, at, base, _handle) = registry_with_references(&t).await;

    // Pinning the latest version copies its references' text too: the
    // catalog can parse it, and the readers assumed to read it, without
    // the registry.
    let r = t
        .api(
            Method::PUT,
            &format!("/api/v1/clusters/{id}/streams/orders/schema"),
            &at,
            Some(json!({"subject": "orders-value"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(
        (r.json()["source"].as_str(), r.json()["version"].as_i64()),
        (Some("registry"), Some(1))
    );
    let refs: Value = sqlx::query_scalar("SELECT refs FROM catalog_schemas WHERE topic = 'orders'")
        .fetch_one(&t.pool)
        .await
        .expect("refs");
    assert_eq!(refs, json!({"money.json": MONEY}));

    let url = format!("/api/v1/clusters/{id}/streams/orders/compatibility");
    let by_subject = json!({
        "schema_type": "JSON",
        "schema": ORDER_JSON_V2,
        "subject_references": [{"name": "money.json", "subject": "money", "version": 1}],
    });

    // STRICT (no policy set): both the history and the registry refuse it.
    let report = t
        .api(Method::POST, &url, &at, Some(by_subject.clone()))
        .await
        .json();
    assert_eq!(report["history"]["source"], "registry", "{report}");
    assert_eq!(report["history"]["verdict"], "INCOMPATIBLE", "{report}");
    assert_eq!(
        report["history"]["findings"][0]["kind"],
        "OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL"
    );
    assert_eq!(report["registry"]["is_compatible"], false, "{report}");
    let messages = report["registry"]["messages"].to_string();
    assert!(
        messages.contains("OPTIONAL_PROPERTY_ADDED"),
        "refused for the change, not for a reference it could not resolve: {messages}"
    );

    // The subject's policy set to LENIENT: the history uses it, and the
    // registry (asked with the reference, else it could not parse the
    // schema) agrees.
    let put = reqwest::Client::new()
        .put(format!("{base}/config/orders-value"))
        .json(&json!({"compatibilityPolicy": "LENIENT"}))
        .send()
        .await
        .expect("policy");
    assert!(put.status().is_success(), "{put:?}");
    let report = t
        .api(Method::POST, &url, &at, Some(by_subject))
        .await
        .json();
    assert_eq!(report["history"]["verdict"], "COMPATIBLE", "{report}");
    assert!(
        report["history"]["note"]
            .as_str()
            .is_some_and(|n| n.contains("LENIENT")),
        "{report}"
    );
    assert_eq!(report["registry"]["is_compatible"], true, "{report}");
    assert!(report["registry"]["error"].is_null(), "{report}");
    assert_eq!(report["verdict"], "COMPATIBLE", "{report}");

    // The same reference given as text: checked here, but the registry is
    // not asked, and the report says why.
    let report = t
        .api(
            Method::POST,
            &url,
            &at,
            Some(json!({
                "schema_type": "JSON",
                "schema": ORDER_JSON_V2,
                "references": {"money.json": MONEY},
            })),
        )
        .await
        .json();
    assert_eq!(report["history"]["verdict"], "COMPATIBLE", "{report}");
    assert!(report["registry"]["is_compatible"].is_null(), "{report}");
    let why = report["registry"]["error"].as_str().unwrap_or_default();
    assert!(
        why.contains("not asked") && why.contains("money.json"),
        "{report}"
    );

    // A subject reference the registry does not have: a clear 404.
    let r = t
        .api(
            Method::POST,
            &url,
            &at,
            Some(json!({
                "schema_type": "JSON",
                "schema": ORDER_JSON_V2,
                "subject_references": [{"name": "money.json", "subject": "money", "version": 7}],
            })),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);

    // A registry that cannot be used (it closes every connection) is 503
    // on each route that has to ask it, never 422 as if the input were bad.
    _handle.fail_next(100, streamkeeper_doubles::registry::Fault::Close);
    let diff = format!("/api/v1/clusters/{id}/registry/subjects/orders-value/diff");
    let with_references = json!({
        "schema_type": "JSON",
        "schema": ORDER_JSON_V2,
        "subject_references": [{"name": "money.json", "subject": "money", "version": 1}],
    });
    for (method, path, body) in [
        (Method::POST, url.as_str(), Some(with_references)),
        (Method::GET, diff.as_str(), None),
    ] {
        let r = t.api(method, path, &at, body).await;
        assert_eq!(
            r.status,
            StatusCode::SERVICE_UNAVAILABLE,
            "{path}: {}",
            r.body
        );
        assert_eq!(r.json()["error"]["code"], "unavailable", "{}", r.body);
    }
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_stream_pages_forms_pin_a_version_and_record_text_with_references(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let (id, _, _, _) = registry_with_references(&t).await;
    let cookie = t.login("ada", support::PASSWORD).await.expect("signed in");
    let id_text = id.to_string();
    let recorded = || async {
        sqlx::query_as::<_, (Option<String>, String, Value, Option<String>, Option<i32>)>(
            "SELECT group_name, source, refs, subject, version FROM catalog_schemas ORDER BY id",
        )
        .fetch_all(&t.pool)
        .await
        .expect("catalog")
    };

    // The stream page offers both forms, the pin one on the value subject.
    let page = t
        .get(&format!("/clusters/{id}/stream?name=orders"), Some(&cookie))
        .await;
    for part in [
        r#"data-testid="record-stream-schema-pin""#,
        r#"value="orders-value""#,
        r#"name="ref_names[2]""#,
    ] {
        assert!(page.body.contains(part), "{part} missing: {}", page.body);
    }

    // The pin form as a browser posts it, JavaScript off: the stream's
    // schema at the latest version, a group's reader at version 1.
    let pin = |group: &'static str, version: &'static str| {
        let id_text = id_text.clone();
        let cookie = cookie.clone();
        let t = &t;
        async move {
            t.post_form(
                "/fn/pin_schema",
                Some(&cookie),
                &[
                    ("cluster_id", id_text.as_str()),
                    ("topic", "orders"),
                    ("group", group),
                    ("subject", "orders-value"),
                    ("version", version),
                ],
            )
            .await
        }
    };
    let r = pin("", "latest").await;
    assert!(
        r.status.is_success() || r.status.is_redirection(),
        "{} {}",
        r.status,
        r.body
    );
    let r = pin("billing", "1").await;
    assert!(
        r.status.is_success() || r.status.is_redirection(),
        "{} {}",
        r.status,
        r.body
    );
    let r = pin("billing", "v1").await;
    assert!(r.status.is_client_error(), "{} {}", r.status, r.body);
    let r = pin("billing", "9").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    let pinned = json!({"money.json": MONEY});
    assert_eq!(
        recorded().await,
        vec![
            (
                None,
                "registry".into(),
                pinned.clone(),
                Some("orders-value".into()),
                Some(1)
            ),
            (
                Some("billing".into()),
                "registry".into(),
                pinned,
                Some("orders-value".into()),
                Some(1)
            ),
        ]
    );

    // The text form with one reference slot filled and two spare.
    let form = [
        ("cluster_id", id_text.as_str()),
        ("topic", "orders"),
        ("group", "audit"),
        ("schema_type", "JSON"),
        ("schema", ORDER_JSON_V2),
        ("ref_names[0]", "money.json"),
        ("ref_texts[0]", MONEY),
        ("ref_names[1]", ""),
        ("ref_texts[1]", ""),
        ("ref_names[2]", ""),
        ("ref_texts[2]", ""),
    ];
    let r = t.post_form("/fn/record_schema", Some(&cookie), &form).await;
    assert!(
        r.status.is_success() || r.status.is_redirection(),
        "{} {}",
        r.status,
        r.body
    );
    let last = recorded().await.pop().expect("a row");
    assert_eq!(
        last,
        (
            Some("audit".into()),
            "text".into(),
            json!({"money.json": MONEY}),
            None,
            None
        )
    );
    // Without the reference the schema does not parse, and nothing is kept.
    let mut without = form;
    without[5] = ("ref_names[0]", "");
    without[6] = ("ref_texts[0]", "");
    let r = t
        .post_form("/fn/record_schema", Some(&cookie), &without)
        .await;
    assert!(r.body.contains("money.json"), "{} {}", r.status, r.body);
    assert!(r.status.is_client_error(), "{} {}", r.status, r.body);
    // Half a reference is refused before any parse.
    without[6] = ("ref_texts[0]", MONEY);
    let r = t
        .post_form("/fn/record_schema", Some(&cookie), &without)
        .await;
    assert!(r.body.contains("no name"), "{} {}", r.status, r.body);
    assert_eq!(recorded().await.len(), 3);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_subjects_screen_reads_what_the_hygiene_pass_stored(pool: sqlx::PgPool) {
    use streamkeeper_server::clients::registry::{NewSchema, RegistryClient, Scope};
    let t = TestApp::new(pool).await;
    let (id, at, base, handle) = registry_with_references(&t).await;
    let client = RegistryClient::new(support::registry_settings(&base)).expect("client");
    // 30 more subjects: more than a page of 25.
    for i in 0..30 {
        client
            .register(
                &format!("topic-{i:02}-value"),
                &NewSchema::avro(format!(
                    r#"{{"type":"record","name":"R{i}","fields":[{{"name":"id","type":"string"}}]}}"#
                )),
                false,
            )
            .await
            .expect("register");
    }
    client
        .set_config(Scope::Subject("money"), streamkeeper::schemas::Mode::Full)
        .await
        .expect("level");
    let subjects = |query: &'static str| {
        let t = &t;
        let at = at.clone();
        async move {
            let r = t
                .api(
                    Method::GET,
                    &format!("/api/v1/clusters/{id}/registry/subjects{query}"),
                    &at,
                    None,
                )
                .await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.body);
            r.json()
        }
    };

    // Before any pass: nothing stored, and it says so.
    let s = subjects("").await;
    assert!(s["read_at"].is_null(), "{s}");
    assert_eq!(s["subjects"]["total"], 0);
    let page = t
        .get(
            &format!("/schemas/{id}"),
            Some(&t.login("ada", support::PASSWORD).await.expect("signed in")),
        )
        .await;
    assert!(page.body.contains("not read yet"), "{}", page.body);

    let row = streamkeeper_server::watch::store::by_id(&t.pool, id)
        .await
        .expect("db")
        .expect("row");
    streamkeeper_server::schemas::routine::run(&t.pool, &support::outbound(), &row)
        .await
        .expect("hygiene");
    let s = subjects("").await;
    assert!(s["read_at"].is_string(), "{s}");
    assert_eq!(s["global"], "BACKWARD");
    assert_eq!(
        (
            s["subjects"]["total"].as_u64(),
            s["subjects"]["items"].as_array().map(Vec::len)
        ),
        (Some(32), Some(25)),
        "a page of 25 of 32: {s}"
    );
    let money = &s["subjects"]["items"][0];
    assert_eq!(money["name"], "money");
    assert_eq!(money["level"], "FULL");
    assert_eq!(money["schema_type"], "JSON");
    assert_eq!(money["versions"], json!([1]));
    let s = subjects("?page=2").await;
    assert_eq!(s["subjects"]["items"].as_array().map(Vec::len), Some(7));
    assert_eq!(s["subjects"]["items"][6]["name"], "topic-29-value");
    // A search, where `_` is a character, not a wildcard.
    let s = subjects("?q=ORDERS").await;
    assert_eq!(s["search"], "ORDERS");
    assert_eq!(s["subjects"]["total"], 1, "{s}");
    assert_eq!(s["subjects"]["items"][0]["name"], "orders-value");
    assert!(s["subjects"]["items"][0]["level"].is_null());
    assert_eq!(subjects("?q=topic_0").await["subjects"]["total"], 0);

    // The registry failing: the stored subjects stay, with the error and
    // the time of the good reading they come from.
    let read_at = s["read_at"].clone();
    client
        .register("later-value", &NewSchema::avro(V1), false)
        .await
        .expect("register");
    handle.fail_next(1, Fault::ServerError);
    assert!(
        streamkeeper_server::schemas::routine::run(&t.pool, &support::outbound(), &row)
            .await
            .is_err()
    );
    let s = subjects("").await;
    assert_eq!(s["read_at"], read_at);
    assert!(
        s["last_error"].as_str().is_some_and(|e| !e.is_empty()),
        "{s}"
    );
    assert_eq!(s["subjects"]["total"], 32, "the previous reading is kept");
    let page = t
        .get(
            &format!("/schemas/{id}"),
            Some(&t.login("ada", support::PASSWORD).await.expect("signed in")),
        )
        .await;
    assert!(
        page.body.contains("The last reading failed"),
        "{}",
        page.body
    );
    assert!(page.body.contains("orders-value"), "{}", page.body);

    // The next good pass replaces them.
    streamkeeper_server::schemas::routine::run(&t.pool, &support::outbound(), &row)
        .await
        .expect("hygiene");
    let s = subjects("?q=later").await;
    assert_eq!(s["subjects"]["total"], 1, "{s}");
    assert!(s["last_error"].is_null(), "{s}");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_redirecting_registry_is_not_followed_and_its_answer_is_for_admins(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let id = cluster(&t).await;
    let at = t.token(t.user("ada", &[Role::Admin]).await).await;
    let vt = t.token(t.user("val", &[Role::Viewer]).await).await;
    let serve = |app: axum::Router| async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("port");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        tokio::spawn(async move { axum::serve(listener, app).await });
        base
    };
    // Where the redirect points: it must never be asked.
    let asked = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&asked);
    let elsewhere = serve(axum::Router::new().fallback(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        async { "[]" }
    }))
    .await;
    let to = format!("{elsewhere}/elsewhere");
    let app = axum::Router::new().fallback(move || {
        let to = to.clone();
        async move {
            (
                StatusCode::FOUND,
                [("location", to)],
                "moved: internal-token-123",
            )
        }
    });
    let base = serve(app).await;
    let r = t
        .api(
            Method::PUT,
            &format!("/api/v1/clusters/{id}/registry"),
            &at,
            Some(json!({"url": base})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);

    let diff = format!("/api/v1/clusters/{id}/registry/subjects/orders-value/diff");
    let viewer = t.api(Method::GET, &diff, &vt, None).await;
    // A registry that cannot be used is 503, as on every route.
    assert_eq!(
        viewer.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        viewer.body
    );
    assert!(viewer.body.contains("HTTP 302"), "{}", viewer.body);
    assert!(
        !viewer.body.contains("internal-token-123") && !viewer.body.contains("/elsewhere"),
        "a viewer sees the status only: {}",
        viewer.body
    );
    let admin = t.api(Method::GET, &diff, &at, None).await;
    assert_eq!(
        admin.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        admin.body
    );
    assert!(
        admin.body.contains("internal-token-123") && admin.body.contains("/elsewhere"),
        "an admin sees what it sent: {}",
        admin.body
    );
    assert_eq!(
        asked.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "the redirect was never followed"
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_registrys_subjects_sort_by_their_columns_on_the_server(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let viewer = t.user("vic", &[Role::Viewer]).await;
    let vt = t.token(viewer).await;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s)
         VALUES ('east', '127.0.0.1:1', 'PLAINTEXT', 15) RETURNING id",
    )
    .fetch_one(&t.pool)
    .await
    .expect("cluster");
    sqlx::query(
        "INSERT INTO schema_registries (cluster_id, url) VALUES ($1, 'http://registry.invalid')",
    )
    .bind(id)
    .execute(&t.pool)
    .await
    .expect("registry");
    // As the hygiene pass stores them: b has the most versions, c the
    // newest schema, a a level of its own.
    sqlx::query(
        "INSERT INTO registry_subjects (cluster_id, subject, versions, latest_id, schema_type, level)
         VALUES ($1, 'a-value', '{1}', 5, 'AVRO', 'FULL'),
                ($1, 'b-value', '{1,2,3}', 7, 'AVRO', NULL),
                ($1, 'c-value', '{1,2}', 9, 'AVRO', 'BACKWARD')",
    )
    .bind(id)
    .execute(&t.pool)
    .await
    .expect("subjects");
    let names = |sort: &'static str| {
        let (t, vt) = (&t, &vt);
        async move {
            let r = t
                .api(
                    Method::GET,
                    &format!("/api/v1/clusters/{id}/registry/subjects?sort={sort}"),
                    vt,
                    None,
                )
                .await;
            assert_eq!(r.status, StatusCode::OK, "{sort}: {}", r.body);
            r.json()["subjects"]["items"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|s| s["name"].as_str().unwrap_or("").to_owned())
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        }
    };
    assert_eq!(
        names("").await,
        ["a-value", "b-value", "c-value"],
        "by subject"
    );
    assert_eq!(names("-subject").await, ["c-value", "b-value", "a-value"]);
    assert_eq!(names("-versions").await, ["b-value", "c-value", "a-value"]);
    assert_eq!(names("versions").await, ["a-value", "c-value", "b-value"]);
    assert_eq!(names("-latest").await, ["c-value", "b-value", "a-value"]);
    // A subject following the global level has none of its own: last.
    assert_eq!(names("level").await, ["c-value", "a-value", "b-value"]);
    let r = t
        .api(
            Method::GET,
            &format!("/api/v1/clusters/{id}/registry/subjects?sort=colour"),
            &vt,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    assert!(
        r.body
            .contains("unknown sort 'colour' (one of: subject, versions, latest, level"),
        "{}",
        r.body
    );
    // The page's headers sort the same way, and the search keeps the order.
    let cookie = t
        .login("vic", support::PASSWORD)
        .await
        .expect("vic signs in");
    let page = t
        .get(&format!("/schemas/{id}?sort=-versions"), Some(&cookie))
        .await;
    assert!(
        page.body.contains("aria-sort=\"descending\"")
            && page
                .body
                .contains(&format!("href=\"/schemas/{id}?sort=versions\""))
            && page.body.contains("name=\"sort\" value=\"-versions\""),
        "{}",
        page.body
    );
}
