//! Lineage over the real router and Postgres: ingest as OpenLineage
//! clients send it (the real openlineage-python 1.54 client included),
//! storage once per canonical event, the fold, bad input answered 4xx
//! without losing good events, Marquez's read shape, impact with owners,
//! the lineage:write token's confinement, saturation, and the rebuild.

mod support;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::{Value, json};
use sqlx::PgPool;
use std::io::Write;
use std::sync::Arc;
use streamkeeper::accounts::role::Role;
use streamkeeper::accounts::token::Scope;
use streamkeeper_server::http::{AppState, router};
use streamkeeper_server::lineage::{IngestLimits, LineageService};
use support::{Reply, TestApp};
use tower_sessions_sqlx_store::PostgresStore;

const KAFKA: &str = "kafka://127.0.0.1:9092";

/// A streaming job's START as openlineage-python 1.54 serialises it.
fn start_event(run: &str, job: &str, input: &str, output: &str) -> Value {
    json!({
        "eventTime": "2026-01-01T00:00:00Z", "eventType": "START",
        "inputs": [{"facets": {}, "inputFacets": {}, "name": input, "namespace": KAFKA}],
        "job": {"facets": {"jobType": {"_producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python",
            "_schemaURL": "https://openlineage.io/spec/facets/2-0-4/JobTypeJobFacet.json#/$defs/JobTypeJobFacet",
            "integration": "FLINK", "jobType": "JOB", "processingType": "STREAMING"}},
            "name": job, "namespace": "sk-test"},
        "outputs": [{"facets": {}, "name": output, "namespace": "postgres://127.0.0.1:5432", "outputFacets": {}}],
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python",
        "run": {"facets": {}, "runId": run},
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
    })
}

async fn producer(t: &TestApp, name: &str, role: Role) -> String {
    let id = t.user(name, &[role]).await;
    t.token_with(id, &[Scope::LineageWrite]).await
}

/// A team named `team` (made if new) with the users `members` in it: an
/// `ownership` facet names a team only from someone who speaks for it.
async fn speaks_for(pool: &PgPool, team: &str, members: &[&str]) {
    sqlx::query(
        "WITH t AS (INSERT INTO teams (name) VALUES ($1)
                    ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name RETURNING id)
         INSERT INTO memberships (team_id, user_id)
         SELECT t.id, u.id FROM t, users u WHERE u.username = ANY($2)",
    )
    .bind(team)
    .bind(members)
    .execute(pool)
    .await
    .expect("team");
}

async fn post_raw(t: &TestApp, path: &str, token: &str, body: Vec<u8>, gzip: bool) -> Reply {
    let mut b = Request::post(path)
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header(header::CONTENT_TYPE, "application/json");
    if gzip {
        b = b.header(header::CONTENT_ENCODING, "gzip");
    }
    t.send(b.body(Body::from(body)).expect("request")).await
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(3));
    enc.write_all(bytes).expect("gzip");
    enc.finish().expect("gzip")
}

/// Folds what is stored and waiting, as every read does first: the tests
/// that read the graph's tables themselves call it before.
async fn folded(pool: &PgPool) {
    LineageService::new(pool.clone(), IngestLimits::for_body_limit(0))
        .fold()
        .catch_up()
        .await
        .expect("fold");
}

async fn counts(pool: &PgPool) -> (i64, i64, i64) {
    folded(pool).await;
    sqlx::query_as(
        "SELECT (SELECT count(*) FROM lineage_events), (SELECT count(*) FROM lineage_nodes),
                (SELECT count(*) FROM lineage_edges)",
    )
    .fetch_one(pool)
    .await
    .expect("counts")
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn an_event_is_stored_once_and_its_edges_show_from_start(pool: PgPool) {
    let t = TestApp::new(pool.clone()).await;
    let token = producer(&t, "flink", Role::Owner).await;
    let ev = start_event(
        "0194b3a2-7c1e-7000-8000-000000000001",
        "enricher",
        "orders",
        "shop.public.orders_enriched",
    );
    let r = t
        .api(Method::POST, "/api/v1/lineage", &token, Some(ev.clone()))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert!(r.body.is_empty(), "201 with no body, as Marquez answers");
    // The same event again, its keys in another order: stored nothing twice.
    let respaced = serde_json::to_vec_pretty(&ev).expect("json");
    let r = post_raw(&t, "/api/v1/lineage", &token, respaced, false).await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(counts(&pool).await, (1, 3, 2));
    // A START of a streaming job is enough for its edges.
    let (state, sender): (String, String) =
        sqlx::query_as("SELECT r.state, e.sender FROM lineage_runs r, lineage_events e LIMIT 1")
            .fetch_one(&pool)
            .await
            .expect("run");
    assert_eq!((state.as_str(), sender.as_str()), ("START", "flink"));
    let edge: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM lineage_edges e
         JOIN lineage_nodes a ON a.id = e.src JOIN lineage_nodes b ON b.id = e.dst
         WHERE a.name = 'orders' AND b.name = 'enricher' AND e.observed_first IS NOT NULL",
    )
    .fetch_one(&pool)
    .await
    .expect("edge");
    assert_eq!(edge, 1);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn bad_input_is_a_clear_4xx_and_never_costs_a_good_event(pool: PgPool) {
    let t = TestApp::new(pool.clone()).await;
    let token = producer(&t, "spark", Role::Owner).await;
    let good = |i: u32| {
        start_event(
            &format!("0194b3a2-7c1e-7000-8000-00000000010{i}"),
            &format!("job{i}"),
            "orders",
            "shop.public.t",
        )
    };

    let r = post_raw(
        &t,
        "/api/v1/lineage",
        &token,
        b"{\"eventTime\":".to_vec(),
        false,
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("not valid JSON")
    );

    let mut no_run_id = good(1);
    no_run_id["run"]
        .as_object_mut()
        .expect("run")
        .remove("runId");
    let r = t
        .api(
            Method::POST,
            "/api/v1/lineage",
            &token,
            Some(no_run_id.clone()),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(r.body.contains("runId"), "{}", r.body);

    let mut no_time = good(1);
    no_time.as_object_mut().expect("event").remove("eventTime");
    let r = t
        .api(Method::POST, "/api/v1/lineage", &token, Some(no_time))
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);

    // A NUL inside a string: Postgres could not keep it; a 422, not a 500.
    let mut nul = good(1);
    nul["job"]["facets"]["note"] = json!({"text": "a\u{0}b"});
    let r = t
        .api(Method::POST, "/api/v1/lineage", &token, Some(nul.clone()))
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);

    // A gzip bomb: 64 MiB of zeros in a few KB, refused at the cap.
    let bomb = gzip(&vec![b' '; 64 << 20]);
    assert!(bomb.len() < 1 << 20);
    let r = post_raw(&t, "/api/v1/lineage", &token, bomb, true).await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", r.body);
    let r = post_raw(&t, "/api/v1/lineage", &token, b"not gzip".to_vec(), true).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    // A 50 MB body.
    let r = post_raw(&t, "/api/v1/lineage", &token, vec![b' '; 50 << 20], false).await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE);

    // Odd names are kept and marked, not refused.
    let odd = json!({"dataset": {"facets": {}, "name": "1x:y", "namespace": "kafka://null:-1"},
        "eventTime": "2026-01-01T00:00:00Z", "producer": "p",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent"});
    let r = t
        .api(Method::POST, "/api/v1/lineage", &token, Some(odd.clone()))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    folded(&pool).await;
    let issues: Value = sqlx::query_scalar("SELECT issues FROM lineage_nodes WHERE name = '1x:y'")
        .fetch_one(&pool)
        .await
        .expect("marked node");
    let issues = issues.to_string();
    assert!(
        issues.contains("unresolved_kafka") && issues.contains("invalid_topic"),
        "{issues}"
    );

    // A batch: the good events are stored, the bad ones reported by index.
    let batch = json!([good(1), no_run_id, 42, good(2), nul, good(3)]);
    let r = t
        .api(Method::POST, "/api/v1/lineage/batch", &token, Some(batch))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let report = r.json();
    assert_eq!(report["status"], "partial_success");
    assert_eq!(report["summary"]["received"], 6);
    assert_eq!(report["summary"]["successful"], 3);
    assert_eq!(report["summary"]["non_retriable"], 3);
    let failed: Vec<u64> = report["failed_events"]
        .as_array()
        .expect("failed")
        .iter()
        .filter_map(|f| f["index"].as_u64())
        .collect();
    assert_eq!(failed, vec![1, 2, 4]);
    let (events, _, _) = counts(&pool).await;
    assert_eq!(events, 4, "three good events and the odd dataset");
    let r = t
        .api(
            Method::POST,
            "/api/v1/lineage/batch",
            &token,
            Some(json!({})),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    // A gzip batch, all good.
    let body = serde_json::to_vec(&json!([good(4), good(5)])).expect("json");
    let r = post_raw(&t, "/api/v1/lineage/batch", &token, gzip(&body), true).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["status"], "success");
    assert_eq!(counts(&pool).await.0, 6);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_lineage_write_token_sends_lineage_and_nothing_else(pool: PgPool) {
    let t = TestApp::new(pool.clone()).await;
    let token = producer(&t, "producer", Role::Admin).await;
    let ev = start_event(
        "0194b3a2-7c1e-7000-8000-000000000201",
        "j",
        "orders",
        "shop.public.t",
    );
    let r = t
        .api(Method::POST, "/api/v1/lineage", &token, Some(ev.clone()))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    for path in [
        "/api/v1/clusters",
        "/api/v1/lineage?nodeId=dataset:kafka://127.0.0.1:9092:orders",
        "/api/v1/namespaces",
        "/api/v1/me",
    ] {
        let r = t.api(Method::GET, path, &token, None).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{path}: {}", r.body);
    }
    let r = t
        .api(
            Method::POST,
            "/api/v1/teams",
            &token,
            Some(json!({"name": "x"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let refused: i64 =
        sqlx::query_scalar("SELECT count(*) FROM audit_log WHERE action = 'token.scope.refused'")
            .fetch_one(&pool)
            .await
            .expect("audit");
    assert_eq!(refused, 5, "every refusal is audited");

    // A viewer's token, even with the scope, may not send lineage.
    let viewer = producer(&t, "viewer", Role::Viewer).await;
    let r = t
        .api(Method::POST, "/api/v1/lineage", &viewer, Some(ev))
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert!(
        t.audit_actions()
            .await
            .contains(&"request.refused".to_string())
    );
    // And a token without the scope may not either.
    let uid = t.user("reader", &[Role::Owner]).await;
    let reader = t.token(uid).await;
    let ev = start_event(
        "0194b3a2-7c1e-7000-8000-000000000202",
        "j",
        "orders",
        "shop.public.t",
    );
    let r = t
        .api(Method::POST, "/api/v1/lineage", &reader, Some(ev))
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert_eq!(counts(&pool).await.0, 1);
    // Reading needs a sign-in.
    let r = t.get("/api/v1/lineage/impact?topic=orders", None).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
}

/// A cluster with the topic `orders` owned by `payments`, and a chain
/// orders → enricher → orders-enriched → sink → table.
async fn owned_chain(t: &TestApp) -> (String, String) {
    let admin = t.user("admin", &[Role::Admin]).await;
    let admin = t.token(admin).await;
    let r = t
        .api(
            Method::POST,
            "/api/v1/clusters",
            &admin,
            Some(json!({"name": "local", "bootstrap": "127.0.0.1:9092"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let cluster = r.json()["id"].as_i64().expect("cluster id");
    let team = t
        .api(
            Method::POST,
            "/api/v1/teams",
            &admin,
            Some(json!({"name": "payments"})),
        )
        .await;
    assert!(team.status.is_success(), "{}", team.body);
    let team = team.json()["id"].as_i64().expect("team id");
    // The catalog's owner of each topic (the sampler has not run: no API
    // call may describe a topic it has not seen).
    for topic in ["orders", "orders-enriched"] {
        sqlx::query("INSERT INTO streams (cluster_id, topic, owner_team_id) VALUES ($1, $2, $3)")
            .bind(cluster)
            .bind(topic)
            .bind(team)
            .execute(&t.pool)
            .await
            .expect("stream");
    }
    let token = producer(t, "flink", Role::Owner).await;
    speaks_for(&t.pool, "team:warehouse", &["flink"]).await;
    let mut enricher = start_event(
        "0194b3a2-7c1e-7000-8000-000000000301",
        "enricher",
        "orders",
        "x",
    );
    // Another alias of the same cluster: a comma list with a protocol.
    enricher["inputs"][0]["namespace"] = json!("kafka://PLAINTEXT://127.0.0.1:9092,other:9092");
    enricher["outputs"] =
        json!([{"facets": {}, "name": "orders-enriched", "namespace": KAFKA, "outputFacets": {}}]);
    let sink = json!({"eventTime": "2026-01-01T00:02:00Z",
        "inputs": [{"facets": {}, "inputFacets": {}, "name": "orders-enriched", "namespace": KAFKA}],
        "job": {"facets": {"ownership": {"_producer": "p", "_schemaURL": "s",
            "owners": [{"name": "team:warehouse", "type": "TEAM"}]}}, "name": "sink", "namespace": "connect"},
        "outputs": [{"facets": {}, "name": "shop.public.orders", "namespace": "postgres://127.0.0.1:5432", "outputFacets": {}}],
        "producer": "p", "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent"});
    let r = t
        .api(
            Method::POST,
            "/api/v1/lineage/batch",
            &token,
            Some(json!([enricher, sink])),
        )
        .await;
    assert_eq!(r.json()["status"], "success", "{}", r.body);
    let reader = t.user("viewer", &[Role::Viewer]).await;
    (t.token(reader).await, admin)
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn impact_of_a_topic_lists_what_breaks_with_owners_and_paths(pool: PgPool) {
    let t = TestApp::new(pool.clone()).await;
    let (viewer, _) = owned_chain(&t).await;
    let r = t
        .api(
            Method::GET,
            "/api/v1/lineage/impact?topic=orders&cluster=local",
            &viewer,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let v = r.json();
    assert_eq!(v["start"], "dataset:kafka://127.0.0.1:9092:orders");
    assert_eq!(v["partial"], false);
    let nodes = v["nodes"].as_array().expect("nodes");
    let names: Vec<&str> = nodes.iter().filter_map(|n| n["name"].as_str()).collect();
    assert_eq!(
        names,
        ["enricher", "orders-enriched", "sink", "shop.public.orders"]
    );
    let by = |name: &str| nodes.iter().find(|n| n["name"] == name).expect(name);
    assert_eq!(by("orders-enriched")["owner"], "payments");
    assert_eq!(by("sink")["owner"], "team:warehouse");
    assert_eq!(by("shop.public.orders")["depth"], 4);
    assert_eq!(
        by("shop.public.orders")["path"],
        json!([
            "dataset:kafka://127.0.0.1:9092:orders",
            "job:sk-test:enricher",
            "dataset:kafka://127.0.0.1:9092:orders-enriched",
            "job:connect:sink",
            "dataset:postgres://127.0.0.1:5432:shop.public.orders"
        ])
    );
    assert_eq!(by("sink")["known_as"], "observed");
    assert!(by("sink")["last_seen"].is_string());

    // Upstream of the table, with a depth cap: partial, and says why.
    let r = t
        .api(
            Method::GET,
            "/api/v1/lineage/impact?node=dataset:postgres://127.0.0.1:5432:shop.public.orders&direction=upstream&depth=2",
            &viewer,
            None,
        )
        .await;
    let v = r.json();
    assert_eq!(v["nodes"].as_array().map(Vec::len), Some(2), "{v}");
    assert_eq!(v["partial"], true);
    assert_eq!(v["cut"]["depth"], true);
    let r = t
        .api(
            Method::GET,
            "/api/v1/lineage/impact?topic=nope",
            &viewer,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let r = t
        .api(
            Method::GET,
            "/api/v1/lineage/impact?topic=orders&direction=sideways",
            &viewer,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);

    // The CLI answers the same from the database.
    let svc = LineageService::new(pool.clone(), IngestLimits::for_body_limit(0));
    let key = svc.topic(Some("local"), "orders").await.expect("topic");
    let cli = streamkeeper_server::platform::cli::cli_principal();
    let answer = svc
        .impact(
            &cli,
            &key,
            streamkeeper::lineage::impact::Direction::Downstream,
            Default::default(),
        )
        .await
        .expect("impact");
    let table = streamkeeper_server::lineage::cli::table(
        &streamkeeper_server::lineage::ImpactView::of(&answer),
    );
    assert!(
        table.contains("payments") && table.contains("job:connect:sink"),
        "{table}"
    );

    // A rebuild replays the events into the same graph.
    let before = counts(&pool).await;
    let (replayed, unreadable) = svc.rebuild().await.expect("rebuild");
    assert_eq!((replayed, unreadable), (2, 0));
    assert_eq!(counts(&pool).await, before);
    let again = svc
        .impact(
            &cli,
            &key,
            streamkeeper::lineage::impact::Direction::Downstream,
            Default::default(),
        )
        .await
        .expect("impact");
    assert_eq!(again, answer);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_marquez_read_api_answers_in_its_shape(pool: PgPool) {
    let t = TestApp::new(pool.clone()).await;
    let (viewer, _) = owned_chain(&t).await;
    let r = t
        .api(
            Method::GET,
            "/api/v1/lineage?nodeId=dataset%3Akafka%3A%2F%2F127.0.0.1%3A9092%3Aorders-enriched&depth=999",
            &viewer,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let v = r.json();
    let graph = v["graph"].as_array().expect("graph");
    let ids: Vec<&str> = graph.iter().filter_map(|n| n["id"].as_str()).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted, "sorted by id, as Marquez sorts");
    assert_eq!(ids.len(), 5);
    assert_eq!(v["partial"], true, "depth 999 was clamped");
    let node = graph
        .iter()
        .find(|n| n["id"] == "dataset:kafka://127.0.0.1:9092:orders-enriched")
        .expect("centre");
    assert_eq!(node["type"], "DATASET");
    assert_eq!(node["data"]["type"], "STREAM");
    assert_eq!(node["data"]["id"]["name"], "orders-enriched");
    assert_eq!(
        node["inEdges"],
        json!([{"origin": "job:sk-test:enricher", "destination": "dataset:kafka://127.0.0.1:9092:orders-enriched"}])
    );
    assert_eq!(
        node["outEdges"],
        json!([{"origin": "dataset:kafka://127.0.0.1:9092:orders-enriched", "destination": "job:connect:sink"}])
    );
    let job = graph
        .iter()
        .find(|n| n["id"] == "job:sk-test:enricher")
        .expect("job");
    assert_eq!(job["type"], "JOB");
    assert_eq!(job["data"]["type"], "STREAM");

    // The producer's alias namespace finds the same node.
    let r = t
        .api(
            Method::GET,
            "/api/v1/lineage?nodeId=dataset%3Akafka%3A%2F%2FPLAINTEXT%3A%2F%2F127.0.0.1%3A9092%2Cother%3A9092%3Aorders",
            &viewer,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = t
        .api(
            Method::GET,
            "/api/v1/lineage?nodeId=dataset:nope:x",
            &viewer,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let r = t
        .api(
            Method::GET,
            "/api/v1/lineage?nodeId=table:x:y",
            &viewer,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);

    let r = t
        .api(Method::GET, "/api/v1/namespaces", &viewer, None)
        .await;
    let names: Vec<String> = r.json()["namespaces"]
        .as_array()
        .expect("namespaces")
        .iter()
        .filter_map(|n| n["name"].as_str().map(str::to_string))
        .collect();
    assert_eq!(
        names,
        [
            "connect",
            "kafka://127.0.0.1:9092",
            "postgres://127.0.0.1:5432",
            "sk-test"
        ]
    );
    let r = t
        .api(
            Method::GET,
            "/api/v1/namespaces/kafka%3A%2F%2F127.0.0.1%3A9092/datasets?limit=1",
            &viewer,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let v = r.json();
    assert_eq!(v["totalCount"], 2);
    assert_eq!(v["datasets"].as_array().map(Vec::len), Some(1));
    assert_eq!(v["datasets"][0]["name"], "orders");
    let r = t
        .api(
            Method::GET,
            "/api/v1/namespaces/connect/jobs",
            &viewer,
            None,
        )
        .await;
    assert_eq!(r.json()["totalCount"], 1);
    assert_eq!(r.json()["jobs"][0]["name"], "sink");
    let r = t
        .api(
            Method::GET,
            "/api/v1/namespaces/connect/jobs?limit=0",
            &viewer,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    // All of it is in the OpenAPI document.
    let doc = t
        .api(Method::GET, "/api/v1/openapi.json", &viewer, None)
        .await
        .json();
    for path in [
        "/api/v1/lineage",
        "/api/v1/lineage/batch",
        "/api/v1/lineage/impact",
        "/api/v1/namespaces",
        "/api/v1/namespaces/{namespace}/datasets",
        "/api/v1/namespaces/{namespace}/jobs",
    ] {
        assert!(doc["paths"].get(path).is_some(), "{path} documented");
    }
}

/// The router with ingest limits of the test's own.
fn app_with(pool: &PgPool, limits: IngestLimits) -> axum::Router {
    let mut state = AppState::new(pool.clone(), support::config());
    state.unshared().expect("not shared yet").lineage =
        Arc::new(LineageService::new(pool.clone(), limits));
    router(state, PostgresStore::new(pool.clone()))
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_saturated_ingest_answers_429_with_retry_after(pool: PgPool) {
    let t = TestApp::new(pool.clone()).await;
    let token = producer(&t, "flink", Role::Owner).await;
    let app = app_with(
        &pool,
        IngestLimits {
            max_pending: 1,
            max_unfolded: 50_000,
            max_inflated: 1 << 20,
        },
    );
    // Hold the writer: it waits on this lock with the one event it took.
    let mut lock = pool.begin().await.expect("tx");
    sqlx::query("LOCK TABLE lineage_events IN EXCLUSIVE MODE")
        .execute(&mut *lock)
        .await
        .expect("lock");
    let send = |run: &'static str| {
        let app = app.clone();
        let token = token.clone();
        async move {
            let body = start_event(run, "j", "orders", "shop.public.t").to_string();
            let req = Request::post("/api/v1/lineage")
                .header(header::AUTHORIZATION, format!("Bearer {token}"))
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(body))
                .expect("request");
            tower::ServiceExt::oneshot(app, req)
                .await
                .expect("response")
        }
    };
    let first = tokio::spawn(send("0194b3a2-7c1e-7000-8000-000000000401"));
    // Wait until the writer, holding the one permit, waits on the lock:
    // only then is the queue full, whatever the load on the machine.
    let db = pool
        .connect_options()
        .get_database()
        .unwrap_or_default()
        .to_string();
    let mut waiting = false;
    for _ in 0..500 {
        let n: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'",
        )
        .bind(&db)
        .fetch_one(&pool)
        .await
        .expect("activity");
        if n > 0 {
            waiting = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(waiting, "the writer never reached the lock");
    let r = send("0194b3a2-7c1e-7000-8000-000000000402").await;
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(
        r.headers()
            .get(header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok()),
        Some("1")
    );
    lock.rollback().await.expect("release");
    let first = first.await.expect("task");
    assert_eq!(first.status(), StatusCode::CREATED);
    // After the queue drains, the refused event goes through.
    let r = send("0194b3a2-7c1e-7000-8000-000000000402").await;
    assert_eq!(r.status(), StatusCode::CREATED);
}

/// The interpreter with openlineage-python 1.54 (scripts/lib.sh,
/// `ensure_openlineage`, exports it).
fn openlineage_python() -> String {
    std::env::var("SK_OPENLINEAGE_PYTHON").unwrap_or_else(|_| {
        let home = std::env::var("HOME").unwrap_or_default();
        format!("{home}/.cache/streamkeeper/openlineage-1.54.0/bin/python")
    })
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_real_openlineage_python_client_is_stored_and_folded(pool: PgPool) {
    let t = TestApp::new(pool.clone()).await;
    let token = producer(&t, "client", Role::Owner).await;
    let store = PostgresStore::new(pool.clone());
    let app = router(AppState::new(pool.clone(), support::config()), store);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<std::net::SocketAddr>(),
        )
        .await
    });
    let python = openlineage_python();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/support/openlineage_client.py"
    );
    let run = |key: String, mode: &'static str, run_id: &'static str| {
        let python = python.clone();
        let url = format!("http://{addr}");
        tokio::task::spawn_blocking(move || {
            std::process::Command::new(&python)
                .args([script, &url, &key, mode, run_id, KAFKA])
                .output()
                .unwrap_or_else(|e| {
                    panic!(
                        "{python} (openlineage-python 1.54; scripts/lib.sh ensure_openlineage): {e}"
                    )
                })
        })
    };
    for (mode, run_id) in [
        ("gzip", "0194b3a2-7c1e-7000-8000-000000000501"),
        ("plain", "0194b3a2-7c1e-7000-8000-000000000502"),
    ] {
        let out = run(token.clone(), mode, run_id).await.expect("client");
        assert!(
            out.status.success(),
            "{mode}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 4);
    }
    // Both runs' events, the shared dataset event once (the same bytes).
    let (events, _, _) = counts(&pool).await;
    assert_eq!(events, 7);
    let kinds: Vec<(String, i64)> =
        sqlx::query_as("SELECT kind, count(*) FROM lineage_events GROUP BY kind ORDER BY kind")
            .fetch_all(&pool)
            .await
            .expect("kinds");
    assert_eq!(
        kinds,
        [("dataset".into(), 1), ("job".into(), 2), ("run".into(), 4)]
    );
    folded(&pool).await;
    let (kind, owner): (Option<String>, Option<Value>) = sqlx::query_as(
        "SELECT n.job_kind, f.value FROM lineage_nodes n
         JOIN lineage_facets f ON f.node_id = n.id AND f.key = 'ownership'
         WHERE n.name = 'orders_enricher_gzip'",
    )
    .fetch_one(&pool)
    .await
    .expect("job");
    assert_eq!(kind.as_deref(), Some("STREAMING"));
    assert!(owner.is_some_and(|o| o.to_string().contains("team:enrichment")));
    // The whole flow, from the START on: topic → job → topic → sink → table.
    let viewer = t.user("viewer", &[Role::Viewer]).await;
    let viewer = t.token(viewer).await;
    let r = t
        .api(
            Method::GET,
            "/api/v1/lineage/impact?node=dataset:kafka://127.0.0.1:9092:orders",
            &viewer,
            None,
        )
        .await;
    let names: Vec<String> = r.json()["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .filter_map(|n| n["name"].as_str().map(str::to_string))
        .collect();
    for want in [
        "orders_enricher_gzip",
        "orders_enricher_plain",
        "orders-enriched",
        "enriched_sink_gzip",
        "shop.public.orders_enriched",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
    }
    // A key without the scope: the client raises (a 403, not retried).
    let uid = t.user("noscope", &[Role::Owner]).await;
    let wrong = t.token_with(uid, &[Scope::Read]).await;
    let out = run(wrong, "plain", "0194b3a2-7c1e-7000-8000-000000000503")
        .await
        .expect("client");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("403"));
    assert_eq!(counts(&pool).await.0, 7);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn groups_and_connectors_show_in_the_impact_of_their_topic_as_derived(pool: PgPool) {
    use streamkeeper_server::platform::routine::{Outcome, Routine, Target};
    let t = TestApp::new(pool.clone()).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let admin = t.token(admin).await;
    let cluster: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s, insecure_credentials)
         VALUES ('local', '127.0.0.1:9092', 'PLAINTEXT', 15, true) RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .expect("cluster");
    // A group as the sampler's pass records it (watch::store::record_reading).
    sqlx::query(
        "INSERT INTO consumer_groups (cluster_id, name, state, members, topics, first_seen, last_seen)
         VALUES ($1, 'billing', 'Stable', 2, '{orders}', now(), now())",
    )
    .bind(cluster)
    .execute(&pool)
    .await
    .expect("group");
    // A sink connector on the Connect double, read by the status routine's pass.
    let (url, double) = streamkeeper_doubles::connect::spawn().await;
    double.put(
        "orders-to-lake",
        &[
            ("connector.class", "io.confluent.connect.s3.S3SinkConnector"),
            ("tasks.max", "1"),
            ("topics", "orders"),
            ("s3.bucket.name", "lake"),
            (
                "format.class",
                "io.confluent.connect.s3.format.json.JsonFormat",
            ),
            ("flush.size", "1000"),
            ("storage.class", "io.confluent.connect.s3.storage.S3Storage"),
        ],
    );
    let r = t
        .api(
            Method::PUT,
            &format!("/api/v1/clusters/{cluster}/connect"),
            &admin,
            Some(json!({"name": "main", "url": url})),
        )
        .await;
    assert!(r.status.is_success(), "{}", r.body);
    let row = streamkeeper_server::watch::store::by_id(&pool, cluster)
        .await
        .expect("db")
        .expect("cluster");
    let connect = streamkeeper_server::connect::store::by_name(&pool, cluster, "main")
        .await
        .expect("db")
        .expect("connect");
    streamkeeper_server::connect::routine::pass(&pool, &support::outbound(), &row, &connect)
        .await
        .expect("pass");

    let lineage = Arc::new(LineageService::new(
        pool.clone(),
        IngestLimits::for_body_limit(1 << 20),
    ));
    let derive = streamkeeper_server::lineage::routine::Derive::new(lineage);
    let cancel = tokio_util::sync::CancellationToken::new();
    let ran = derive.run(Target::Global, &cancel).await.expect("run");
    assert!(
        matches!(&ran, Outcome::Done(d) if d["stored"] == 2),
        "{ran:?}"
    );
    // The same facts within the hour: nothing new is stored.
    assert_eq!(
        derive.run(Target::Global, &cancel).await.expect("again"),
        Outcome::Idle
    );
    let provenance: Vec<(String, String)> =
        sqlx::query_as("SELECT provenance, sender FROM lineage_events ORDER BY id")
            .fetch_all(&pool)
            .await
            .expect("events");
    assert_eq!(
        provenance,
        [
            ("derived".into(), "lineage-derive".into()),
            ("derived".into(), "lineage-derive".into())
        ]
    );

    let r = t
        .api(
            Method::GET,
            "/api/v1/lineage/impact?topic=orders",
            &admin,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let nodes = r.json()["nodes"].as_array().cloned().expect("nodes");
    let node = |name: &str| {
        nodes
            .iter()
            .find(|n| n["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} in {nodes:?}"))
    };
    let group = node("billing");
    assert_eq!(group["kind"], "job");
    assert_eq!(group["namespace"], KAFKA);
    assert_eq!(group["known_as"], "derived");
    assert!(group["last_seen"].is_string() && group["via"]["observed"].is_null());
    let sink = node("orders-to-lake");
    assert_eq!(sink["namespace"], "kafka-connect://main");
    assert_eq!(sink["known_as"], "derived");
    // And what the connector writes, two hops on.
    let lake = nodes
        .iter()
        .find(|n| n["namespace"] == "s3://lake")
        .expect("the bucket");
    assert_eq!(lake["depth"], 2);
    assert_eq!(lake["known_as"], "derived");
}

/// dbt-ol 1.54 with dbt-postgres (scripts/lib.sh, `ensure_dbt_ol`, exports it).
fn dbt_ol() -> String {
    std::env::var("SK_DBT_OL").unwrap_or_else(|_| {
        let home = std::env::var("HOME").unwrap_or_default();
        format!("{home}/.cache/streamkeeper/dbt-ol-1.54.0/bin/dbt-ol")
    })
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("dir");
    for e in std::fs::read_dir(from).expect("read dir") {
        let e = e.expect("entry");
        let target = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).expect("copy");
        }
    }
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_dbt_run_joins_the_connector_tables_and_shows_in_the_topic_impact(pool: PgPool) {
    use streamkeeper_server::platform::routine::{Routine, Target};
    let t = TestApp::new(pool.clone()).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let admin = t.token(admin).await;
    let dbt_token = producer(&t, "dbt", Role::Owner).await;
    speaks_for(&pool, "analytics", &["dbt"]).await;
    let db_url = url::Url::parse(&std::env::var("DATABASE_URL").expect("DATABASE_URL"))
        .expect("DATABASE_URL");
    let database = pool
        .connect_options()
        .get_database()
        .expect("a test database")
        .to_string();
    let (host, port) = (
        db_url.host_str().expect("host").to_string(),
        db_url.port().unwrap_or(5432),
    );
    let cluster: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s, insecure_credentials)
         VALUES ('local', '127.0.0.1:9092', 'PLAINTEXT', 15, true) RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .expect("cluster");
    // The table the sink fills, which the dbt model reads.
    sqlx::query("CREATE TABLE public.orders (id int, amount int)")
        .execute(&pool)
        .await
        .expect("table");

    // A JDBC sink from the topic into that table, on the Connect double.
    let (connect_url, double) = streamkeeper_doubles::connect::spawn().await;
    let jdbc = format!("jdbc:postgresql://{host}:{port}/{database}");
    double.put(
        "orders-to-db",
        &[
            (
                "connector.class",
                "io.confluent.connect.jdbc.JdbcSinkConnector",
            ),
            ("tasks.max", "1"),
            ("topics", "orders"),
            ("connection.url", &jdbc),
            ("table.name.format", "orders"),
        ],
    );
    let r = t
        .api(
            Method::PUT,
            &format!("/api/v1/clusters/{cluster}/connect"),
            &admin,
            Some(json!({"name": "main", "url": connect_url})),
        )
        .await;
    assert!(r.status.is_success(), "{}", r.body);
    let row = streamkeeper_server::watch::store::by_id(&pool, cluster)
        .await
        .expect("db")
        .expect("cluster");
    let connect = streamkeeper_server::connect::store::by_name(&pool, cluster, "main")
        .await
        .expect("db")
        .expect("connect");
    streamkeeper_server::connect::routine::pass(&pool, &support::outbound(), &row, &connect)
        .await
        .expect("pass");
    let state = AppState::new(pool.clone(), support::config());
    let derive = streamkeeper_server::lineage::routine::Derive::new(state.lineage.clone());
    derive
        .run(Target::Global, &tokio_util::sync::CancellationToken::new())
        .await
        .expect("derive");

    // dbt-ol runs the project and sends its events to our ingest.
    let app = router(state, PostgresStore::new(pool.clone()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<std::net::SocketAddr>(),
        )
        .await
    });
    let project = std::env::temp_dir().join(format!("sk-dbt-{database}"));
    copy_dir(
        std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/dbt")),
        &project,
    );
    let dbt_ol = dbt_ol();
    let bin = std::path::Path::new(&dbt_ol)
        .parent()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let mut cmd = std::process::Command::new(&dbt_ol);
    cmd.args(["run", "--profiles-dir", ".", "--project-dir", "."])
        .current_dir(&project)
        // dbt-ol runs `dbt` by name: the one beside it.
        .env(
            "PATH",
            format!("{bin}:{}", std::env::var("PATH").unwrap_or_default()),
        )
        .env("SK_DBT_HOST", &host)
        .env("SK_DBT_PORT", port.to_string())
        .env("SK_DBT_USER", db_url.username())
        .env("SK_DBT_PASSWORD", db_url.password().unwrap_or(""))
        .env("SK_DBT_DATABASE", &database)
        .env("OPENLINEAGE_URL", format!("http://{addr}"))
        .env("OPENLINEAGE_API_KEY", &dbt_token)
        .env("OPENLINEAGE_NAMESPACE", "dbt-shop")
        .env("DBT_SEND_ANONYMOUS_USAGE_STATS", "false");
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("task")
        .unwrap_or_else(|e| panic!("{dbt_ol} (scripts/lib.sh ensure_dbt_ol): {e}"));
    let _ = std::fs::remove_dir_all(&project);
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{log}");
    assert!(log.contains("Emitted 4 OpenLineage events"), "{log}");
    let (dbt_events, producers): (i64, Vec<String>) = sqlx::query_as(
        "SELECT count(*), array_agg(DISTINCT body::jsonb->>'producer')
         FROM lineage_events WHERE sender = 'dbt'",
    )
    .fetch_one(&pool)
    .await
    .expect("dbt events");
    assert_eq!(dbt_events, 4);
    assert!(
        producers[0].contains("1.54.0/integration/dbt"),
        "{producers:?}"
    );

    // The topic's impact: the sink (derived), its table (the same dataset
    // dbt read, joined by name), the dbt model's job and its table with
    // its owner (the model's meta, sent as the ownership facet).
    let r = t
        .api(
            Method::GET,
            "/api/v1/lineage/impact?topic=orders",
            &admin,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let answer = r.json();
    let nodes = answer["nodes"].as_array().cloned().expect("nodes");
    let find = |name: &str| {
        nodes
            .iter()
            .find(|n| n["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} in {nodes:?}"))
    };
    let pg = format!("postgres://{host}:{port}");
    let table = find(&format!("{database}.public.orders"));
    assert_eq!(table["namespace"], pg);
    assert_eq!(table["known_as"], "derived");
    let model_job = find(&format!("{database}.public.shop.orders_daily"));
    assert_eq!(model_job["namespace"], "dbt-shop");
    assert_eq!(model_job["known_as"], "observed");
    let model = find(&format!("{database}.public.orders_daily"));
    assert_eq!(model["depth"], 4);
    assert_eq!(model["owner"], "analytics");
    assert_eq!(
        model["path"][0], "dataset:kafka://127.0.0.1:9092:orders",
        "{model}"
    );
    assert_eq!(find("orders-to-db")["known_as"], "derived");

    // Field level (issue 43): the topic's `amount` goes through the sink's
    // by-name copy to the table's column, and through dbt-ol's
    // columnLineage (`sum(amount) as amount`) to the model's column, with
    // the model's owner: what removing `amount` from orders breaks.
    let r = t
        .api(
            Method::GET,
            "/api/v1/lineage/impact?topic=orders&field=amount",
            &admin,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let answer = r.json();
    let fields = answer["fields"].as_array().cloned().expect("fields");
    let column = |name: &str| {
        fields
            .iter()
            .find(|f| f["field"]["dataset"]["name"] == name && f["field"]["field"] == "amount")
            .cloned()
            .unwrap_or_else(|| panic!("{name}.amount in {answer}"))
    };
    let table_column = column(&format!("{database}.public.orders"));
    assert_eq!(table_column["depth"], 1);
    assert_eq!(table_column["kind"], "DIRECT");
    let model_column = column(&format!("{database}.public.orders_daily"));
    assert_eq!(model_column["depth"], 2, "{answer}");
    assert_eq!(model_column["owner"], "analytics");
    assert_eq!(model_column["field"]["dataset"]["namespace"], pg);
    assert_eq!(
        model_column["path"][0]["dataset"]["name"], "orders",
        "{model_column}"
    );
    assert!(
        answer["cold"].as_array().is_some_and(Vec::is_empty),
        "{answer}"
    );

    // And the check of a producer change removing `amount` names that
    // column and its team (issue 43, item 3).
    sqlx::query(
        "INSERT INTO topics (cluster_id, name, partitions, first_seen, last_seen)
         VALUES ($1, 'orders', 1, now(), now())",
    )
    .bind(cluster)
    .execute(&pool)
    .await
    .expect("topic");
    let order = |fields: &str| {
        format!(
            r#"{{"type":"record","name":"Order","fields":[{{"name":"id","type":"int"}}{fields}]}}"#
        )
    };
    let r = t
        .api(
            Method::PUT,
            &format!("/api/v1/clusters/{cluster}/streams/orders/schema"),
            &admin,
            Some(json!({"schema_type": "AVRO", "schema": order(r#",{"name":"amount","type":"int"}"#)})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let r = t
        .api(
            Method::POST,
            &format!("/api/v1/clusters/{cluster}/streams/orders/compatibility"),
            &admin,
            Some(json!({"schema_type": "AVRO", "schema": order("")})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let report = r.json();
    let amount = &report["downstream"][0];
    assert_eq!(amount["touched"]["field"], "amount", "{report}");
    assert_eq!(amount["touched"]["change"], "removed", "{report}");
    let model = format!("{database}.public.orders_daily");
    let named = amount["columns"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["dataset"] == model.as_str()))
        .cloned()
        .unwrap_or_else(|| panic!("{model} in {report}"));
    assert_eq!(named["field"], "amount", "{named}");
    assert_eq!(named["owner"], "analytics", "{named}");
    assert_eq!(named["kind"], "table", "{named}");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn derived_events_are_forwarded_with_retries_and_observed_ones_are_not(pool: PgPool) {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use streamkeeper_server::platform::routine::{Outcome, Routine, Target};
    let t = TestApp::new(pool.clone()).await;
    let token = producer(&t, "flink", Role::Owner).await;
    // An observed event: stored, never forwarded (it is the producer's to send).
    let r = t
        .api(
            Method::POST,
            "/api/v1/lineage",
            &token,
            Some(start_event(
                "0194b3a2-7c1e-7000-8000-000000000901",
                "enricher",
                "orders",
                "shop.public.t",
            )),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED);
    let cluster: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap) VALUES ('local', '127.0.0.1:9092') RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .expect("cluster");
    sqlx::query(
        "INSERT INTO consumer_groups (cluster_id, name, state, members, topics, first_seen, last_seen)
         VALUES ($1, 'billing', 'Stable', 1, '{orders}', now(), now()),
                ($1, 'audit', 'Stable', 1, '{orders,payments}', now(), now())",
    )
    .bind(cluster)
    .execute(&pool)
    .await
    .expect("groups");
    let lineage = Arc::new(LineageService::new(
        pool.clone(),
        IngestLimits::for_body_limit(1 << 20),
    ));
    let cancel = tokio_util::sync::CancellationToken::new();
    streamkeeper_server::lineage::routine::Derive::new(lineage)
        .run(Target::Global, &cancel)
        .await
        .expect("derive");

    // A Marquez stand-in that is down (503) for the first request.
    let got: Arc<Mutex<Vec<Value>>> = Arc::new(Mutex::new(Vec::new()));
    let calls = Arc::new(AtomicUsize::new(0));
    let app = axum::Router::new().route(
        "/api/v1/lineage",
        axum::routing::post({
            let (got, calls) = (got.clone(), calls.clone());
            move |axum::Json(v): axum::Json<Value>| async move {
                if calls.fetch_add(1, Ordering::SeqCst) == 0 {
                    return StatusCode::SERVICE_UNAVAILABLE;
                }
                got.lock().expect("lock").push(v);
                StatusCode::CREATED
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    let url = url::Url::parse(&format!("http://{addr}/api/v1/lineage")).expect("url");
    let sender = streamkeeper_server::clients::openlineage::OpenLineageSender::new(
        support::outbound().egress,
        url,
    )
    .expect("client");
    let forward = streamkeeper_server::lineage::routine::Forward::new(pool.clone(), sender);
    let first = forward.run(Target::Global, &cancel).await.expect("run");
    assert!(
        matches!(&first, Outcome::Done(d) if d["sent"] == 0 && d["failed"] == 1),
        "{first:?}"
    );
    let (error, waits): (Option<String>, bool) = sqlx::query_as(
        "SELECT last_error, next_at > now() FROM lineage_forward WHERE attempts = 1",
    )
    .fetch_one(&pool)
    .await
    .expect("the failed attempt");
    assert_eq!(
        error.as_deref(),
        Some("the OpenLineage endpoint answered 503 Service Unavailable")
    );
    assert!(waits, "retried later, not at once");
    // The endpoint is back: the next run sends the event not tried yet,
    // and the failed one only once its wait is over.
    let second = forward.run(Target::Global, &cancel).await.expect("run");
    assert!(
        matches!(&second, Outcome::Done(d) if d["sent"] == 1),
        "{second:?}"
    );
    assert_eq!(
        forward.run(Target::Global, &cancel).await.expect("run"),
        Outcome::Idle
    );
    sqlx::query("UPDATE lineage_forward SET next_at = now() WHERE sent_at IS NULL")
        .execute(&pool)
        .await
        .expect("due");
    let third = forward.run(Target::Global, &cancel).await.expect("run");
    assert!(
        matches!(&third, Outcome::Done(d) if d["sent"] == 1),
        "{third:?}"
    );
    let got = got.lock().expect("lock").clone();
    let mut jobs: Vec<&str> = got
        .iter()
        .filter_map(|e| e["job"]["name"].as_str())
        .collect();
    jobs.sort();
    assert_eq!(jobs, ["audit", "billing"]);
    // What was sent is the stored event, byte for byte as JSON.
    let stored: Vec<String> = sqlx::query_scalar(
        "SELECT body FROM lineage_events WHERE provenance = 'derived' ORDER BY id",
    )
    .fetch_all(&pool)
    .await
    .expect("bodies");
    for b in stored {
        let v: Value = serde_json::from_str(&b).expect("json");
        assert!(got.contains(&v));
    }
    assert_eq!(
        forward.run(Target::Global, &cancel).await.expect("run"),
        Outcome::Idle
    );
}

fn accepted(text: &Value) -> streamkeeper_server::lineage::Accepted {
    streamkeeper_server::lineage::Accepted {
        received: streamkeeper_server::lineage::accept_one(text.to_string().as_bytes())
            .expect("event"),
        provenance: streamkeeper::lineage::graph::Provenance::Observed,
        sender: "test".into(),
        source: "test".into(),
    }
}

fn downstream_names(i: &streamkeeper::lineage::impact::Impact) -> Vec<String> {
    i.nodes.iter().map(|n| n.key.name().to_string()).collect()
}

/// The in-memory adjacency a service answers impact from learns of edges
/// another replica wrote, of a transaction that was still open when it
/// last looked (and committed after a later one: a high-water mark on an
/// id would skip it), and of a rebuild.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn impact_sees_edges_from_other_replicas_late_commits_and_rebuilds(pool: PgPool) {
    use streamkeeper::lineage::impact::Direction::Downstream;
    let asker = LineageService::new(pool.clone(), IngestLimits::for_body_limit(0));
    let other = LineageService::new(pool.clone(), IngestLimits::for_body_limit(0));
    let cli = streamkeeper_server::platform::cli::cli_principal();
    let ev = |n: u32, job: &str, input: &str, output: &str| {
        let mut e = start_event(
            &format!("0194b3a2-7c1e-7000-8000-{n:012}"),
            job,
            input,
            output,
        );
        e["outputs"][0]["namespace"] = json!(KAFKA);
        e
    };
    for r in other.ingest(vec![accepted(&ev(1, "j1", "a", "b"))]).await {
        r.expect("stored");
    }
    let a = streamkeeper::lineage::graph::NodeKey::dataset(KAFKA, "a");
    let first = asker
        .impact(&cli, &a, Downstream, Default::default())
        .await
        .expect("impact");
    assert_eq!(downstream_names(&first), ["j1", "b"]);

    // An edge b → late, written by a transaction left open...
    let mut late = pool.begin().await.expect("tx");
    sqlx::query(
        "INSERT INTO lineage_nodes (kind, namespace, name) VALUES ('dataset', 'n', 'late');
         ",
    )
    .execute(&mut *late)
    .await
    .expect("node");
    sqlx::query(
        "INSERT INTO lineage_edges (src, dst, observed_first, observed_last)
         SELECT b.id, l.id, now(), now() FROM lineage_nodes b, lineage_nodes l
         WHERE b.name = 'b' AND l.name = 'late'",
    )
    .execute(&mut *late)
    .await
    .expect("edge");
    // ...while another replica writes b → j2 → c and commits first.
    for r in other.ingest(vec![accepted(&ev(2, "j2", "b", "c"))]).await {
        r.expect("stored");
    }
    let second = asker
        .impact(&cli, &a, Downstream, Default::default())
        .await
        .expect("impact");
    assert_eq!(downstream_names(&second), ["j1", "b", "j2", "c"]);
    late.commit().await.expect("commit");
    let third = asker
        .impact(&cli, &a, Downstream, Default::default())
        .await
        .expect("impact");
    let mut names = downstream_names(&third);
    names.sort();
    assert_eq!(names, ["b", "c", "j1", "j2", "late"]);
    // The edge times come from the store: how the edge to `b` is known.
    let b = third.nodes.iter().find(|n| n.key.name() == "b").expect("b");
    assert!(b.via.observed.is_some(), "{b:?}");

    // A rebuild replays the events (the hand-made edge was none) with new
    // ids; the asker reads the graph again.
    other.rebuild().await.expect("rebuild");
    let after = asker
        .impact(&cli, &a, Downstream, Default::default())
        .await
        .expect("impact");
    assert_eq!(downstream_names(&after), ["j1", "b", "j2", "c"]);
}

/// Impact is answered from memory (the adjacency and the node keys) with
/// the store's owners and times as they are at the question: a catalog
/// owner changed, an `ownership` facet changed by another replica's
/// event, a topic first written after the memory loaded, and a rebuild
/// are each seen by the next question.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn impact_from_memory_sees_owner_changes_new_nodes_and_rebuilds(pool: PgPool) {
    use streamkeeper::lineage::impact::Direction::{Downstream, Upstream};
    let t = TestApp::new(pool.clone()).await;
    owned_chain(&t).await;
    let asker = LineageService::new(pool.clone(), IngestLimits::for_body_limit(0));
    let other = LineageService::new(pool.clone(), IngestLimits::for_body_limit(0));
    let cli = streamkeeper_server::platform::cli::cli_principal();
    let orders = asker.topic(Some("local"), "orders").await.expect("topic");
    let ask = |key: streamkeeper::lineage::graph::NodeKey, dir| {
        let (asker, cli) = (&asker, &cli);
        async move {
            asker
                .impact(cli, &key, dir, Default::default())
                .await
                .expect("impact")
        }
    };
    let node = |i: &streamkeeper::lineage::impact::Impact, name: &str| {
        i.nodes
            .iter()
            .find(|n| n.key.name() == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} reached: {i:?}"))
    };
    let first = ask(orders.clone(), Downstream).await;
    assert_eq!(
        node(&first, "orders-enriched").owner.as_deref(),
        Some("payments")
    );
    assert_eq!(
        node(&first, "sink").owner.as_deref(),
        Some("team:warehouse")
    );

    // The catalog gives the topic to another team.
    sqlx::query(
        "WITH t AS (INSERT INTO teams (name) VALUES ('fraud') RETURNING id)
         UPDATE streams SET owner_team_id = (SELECT id FROM t) WHERE topic = 'orders-enriched'",
    )
    .execute(&pool)
    .await
    .expect("owner change");
    let second = ask(orders.clone(), Downstream).await;
    assert_eq!(
        node(&second, "orders-enriched").owner.as_deref(),
        Some("fraud")
    );

    // Another replica stores a later event of the sink naming new owners,
    // and a new job reading `orders` into a new topic.
    let sink = json!({"eventTime": "2026-01-01T00:09:00Z",
        "inputs": [{"facets": {}, "inputFacets": {}, "name": "orders-enriched", "namespace": KAFKA}],
        "job": {"facets": {"ownership": {"_producer": "p", "_schemaURL": "s",
            "owners": [{"name": "team:lake", "type": "TEAM"}]}}, "name": "sink", "namespace": "connect"},
        "outputs": [], "producer": "p",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent"});
    let mut fresh = start_event(
        "0194b3a2-7c1e-7000-8000-000000000302",
        "auditor",
        "orders",
        "orders-audit",
    );
    fresh["outputs"][0]["namespace"] = json!(KAFKA);
    // flink speaks for both teams: its new facet replaces its old one.
    speaks_for(&pool, "team:lake", &["flink"]).await;
    let mut from_flink = accepted(&sink);
    from_flink.sender = "flink".into();
    for r in other.ingest(vec![from_flink, accepted(&fresh)]).await {
        r.expect("stored");
    }
    let third = ask(orders.clone(), Downstream).await;
    let sink_now = node(&third, "sink");
    assert_eq!(sink_now.owner.as_deref(), Some("team:lake"));
    assert_eq!(
        sink_now.known.last_seen().map(|t| t.to_rfc3339()),
        Some("2026-01-01T00:09:00+00:00".into()),
        "the node's times are read at the question"
    );
    assert_eq!(node(&third, "orders-audit").depth, 2);
    // The new topic is a start the memory did not know when it loaded.
    let audit = asker
        .topic(Some("local"), "orders-audit")
        .await
        .expect("new topic");
    let up = ask(audit, Upstream).await;
    assert_eq!(downstream_names(&up), ["auditor", "orders"]);

    // A rebuild gives every node a new id; the memory reads them again.
    other.rebuild().await.expect("rebuild");
    let after = ask(orders, Downstream).await;
    // Ties at one depth may come in another order with the new ids.
    let shown = |i: &streamkeeper::lineage::impact::Impact| {
        let mut v: Vec<_> = i
            .nodes
            .iter()
            .map(|n| (n.key.clone(), n.depth, n.owner.clone(), n.known, n.via))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    };
    assert_eq!(shown(&after), shown(&third));
}

/// Several writers at once, the same datasets in every order and
/// duplicates across requests: every event answered, stored once, and
/// the graph complete.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn concurrent_ingest_stores_every_event_once_and_folds_them_all(pool: PgPool) {
    let svc = Arc::new(LineageService::new(
        pool.clone(),
        IngestLimits::for_body_limit(0),
    ));
    let names: Vec<String> = (0..12).map(|i| format!("t{i}")).collect();
    let tasks: Vec<_> = (0..24u32)
        .map(|r| {
            let (svc, names) = (svc.clone(), names.clone());
            tokio::spawn(async move {
                let events: Vec<_> = (0..20u32)
                    .map(|k| {
                        // Each request walks the datasets in its own order;
                        // request r and r + 12 send the same events.
                        let rr = (r % 12) as usize;
                        let n = rr as u32 * 20 + k;
                        let i = (n as usize * 7 + rr) % 12;
                        let o = (i + 1 + rr % 11) % 12;
                        let mut e = start_event(
                            &format!("0194b3a2-7c1e-7000-8000-{n:012}"),
                            &format!("job{}", n % 30),
                            &names[i],
                            &names[o],
                        );
                        e["eventTime"] = json!(format!("2026-01-01T00:{:02}:00Z", n % 60));
                        e["outputs"][0]["namespace"] = json!(KAFKA);
                        accepted(&e)
                    })
                    .collect();
                svc.ingest(events).await
            })
        })
        .collect();
    let mut new = 0;
    for t in tasks {
        for r in t.await.expect("task") {
            if r.expect("every event is stored") == streamkeeper_server::lineage::Stored::New {
                new += 1;
            }
        }
    }
    // 12 distinct requests of 20 events each, each sent twice.
    assert_eq!(new, 240);
    let (events, _, edges) = counts(&pool).await;
    assert_eq!(events, 240);
    let expected: i64 = sqlx::query_scalar(
        "SELECT count(DISTINCT (j->'job'->>'name', j->'inputs'->0->>'name'))
              + count(DISTINCT (j->'job'->>'name', j->'outputs'->0->>'name'))
         FROM (SELECT body::jsonb AS j FROM lineage_events) e",
    )
    .fetch_one(&pool)
    .await
    .expect("expected edges");
    assert_eq!(edges, expected);
    let runs: i64 = sqlx::query_scalar("SELECT count(*) FROM lineage_runs")
        .fetch_one(&pool)
        .await
        .expect("runs");
    assert_eq!(runs, 240);
}

/// "Notify owners": the impact goes to each owner team's members' inboxes
/// and webhook, is recorded as a question asked and answered, audited;
/// only admins and owners of the topic's team may send it.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn notify_owners_sends_the_impact_to_each_owner_team_and_records_the_question(pool: PgPool) {
    let t = TestApp::new(pool.clone()).await;
    let (viewer, admin) = owned_chain(&t).await;
    // payments: an owner with a webhook; team:warehouse (the sink's
    // ownership facet, from a member) has no webhook.
    let alice = t.user("alice", &[Role::Owner]).await;
    let other = t.user("olga", &[Role::Owner]).await;
    let team: i64 = sqlx::query_scalar(
        "UPDATE teams SET webhook_url = 'http://127.0.0.1:9/hook' WHERE name = 'payments' RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .expect("webhook");
    sqlx::query("INSERT INTO memberships (team_id, user_id) VALUES ($1, $2)")
        .bind(team)
        .bind(alice)
        .execute(&pool)
        .await
        .expect("member");
    sqlx::query("INSERT INTO teams (name) VALUES ('elsewhere')")
        .execute(&pool)
        .await
        .expect("team");
    sqlx::query("INSERT INTO memberships (team_id, user_id) SELECT id, $1 FROM teams WHERE name = 'elsewhere'")
        .bind(other)
        .execute(&pool)
        .await
        .expect("member");
    let body = json!({"topic": "orders", "cluster": "local"});

    // A viewer, and an owner of another team: refused, audited.
    for who in [viewer.clone(), t.token(other).await] {
        let r = t
            .api(
                Method::POST,
                "/api/v1/lineage/impact/notify",
                &who,
                Some(body.clone()),
            )
            .await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    }
    let asked: i64 = sqlx::query_scalar("SELECT count(*) FROM lineage_questions")
        .fetch_one(&pool)
        .await
        .expect("questions");
    assert_eq!(asked, 0);
    let refusals: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM audit_log
         WHERE action = 'request.refused' AND target = 'POST /api/v1/lineage/impact/notify'",
    )
    .fetch_one(&pool)
    .await
    .expect("audit");
    assert_eq!(refusals, 2, "the refusals are audited");

    // An owner of payments sends it.
    let alice_token = t.token(alice).await;
    let r = t
        .api(
            Method::POST,
            "/api/v1/lineage/impact/notify",
            &alice_token,
            Some(body.clone()),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let v = r.json();
    assert_eq!(
        v["impact"]["start"],
        "dataset:kafka://127.0.0.1:9092:orders"
    );
    assert_eq!(v["teams"][0]["team"], "payments");
    assert_eq!(v["teams"][0]["nodes"], 1);
    assert_eq!(v["teams"][0]["members"], 1);
    assert_eq!(v["teams"][0]["webhook"], true);
    assert_eq!(v["teams"][1]["team"], "team:warehouse");
    assert_eq!(v["teams"][1]["webhook"], false);
    // Owners are the rule's, always teams of the catalog: nothing else to say.
    assert_eq!(v.get("not_in_catalog"), None, "{v}");
    let question = v["question"].as_i64().expect("question");
    type Stamp = chrono::DateTime<chrono::Utc>;
    let (asked_at, answered_at, notified_at, teams, by): (
        Stamp,
        Stamp,
        Option<Stamp>,
        Vec<String>,
        String,
    ) = sqlx::query_as(
        "SELECT asked_at, answered_at, notified_at, teams, asked_by FROM lineage_questions WHERE id = $1",
    )
    .bind(question)
    .fetch_one(&pool)
    .await
    .expect("question row");
    assert!(asked_at <= answered_at);
    // payments has a webhook: notified at its 2xx, not before it is sent.
    assert_eq!(notified_at, None);
    assert_eq!(
        (teams, by.as_str()),
        (
            vec!["payments".to_string(), "team:warehouse".to_string()],
            "alice"
        )
    );
    let inbox: Vec<String> = sqlx::query_scalar(
        "SELECT message FROM notifications WHERE user_id = $1 AND lineage_question_id = $2",
    )
    .bind(alice)
    .bind(question)
    .fetch_all(&pool)
    .await
    .expect("inbox");
    assert_eq!(
        inbox,
        ["What breaks if dataset:kafka://127.0.0.1:9092:orders changes: 1 node owned by payments"]
    );
    let elsewhere: i64 =
        sqlx::query_scalar("SELECT count(*) FROM notifications WHERE user_id = $1")
            .bind(other)
            .fetch_one(&pool)
            .await
            .expect("inbox");
    assert_eq!(elsewhere, 0);
    let (url, hook): (String, Value) = sqlx::query_as(
        "SELECT url, body FROM deliveries WHERE lineage_question_id = $1 AND delivered_at IS NULL",
    )
    .bind(question)
    .fetch_one(&pool)
    .await
    .expect("delivery queued for the flags' routine");
    assert_eq!(url, "http://127.0.0.1:9/hook");
    assert_eq!(hook["kind"], "lineage.impact");
    assert_eq!(hook["nodes"][0]["name"], "orders-enriched");
    assert!(
        t.audit_actions()
            .await
            .contains(&"lineage.impact.notify".to_string())
    );

    // An admin may too, and the CLI (as an admin).
    let r = t
        .api(
            Method::POST,
            "/api/v1/lineage/impact/notify",
            &admin,
            Some(json!({"node": "dataset:kafka://127.0.0.1:9092:orders", "depth": 1})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["impact"]["partial"], true);
    let svc = LineageService::new(pool.clone(), IngestLimits::for_body_limit(0));
    let key = svc.topic(None, "orders").await.expect("topic");
    let n = svc
        .notify_owners(
            &streamkeeper_server::platform::cli::cli_principal(),
            "cli",
            &key,
            streamkeeper::lineage::impact::Direction::Downstream,
            Default::default(),
        )
        .await
        .expect("notify");
    assert_eq!(n.teams.len(), 2);
    let asked: i64 = sqlx::query_scalar("SELECT count(*) FROM lineage_questions")
        .fetch_one(&pool)
        .await
        .expect("questions");
    assert_eq!(asked, 3);
}

/// A cluster's lineage topic by REST: admin only, validated, audited.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_lineage_topic_is_set_by_an_admin_over_rest(pool: PgPool) {
    let t = TestApp::new(pool.clone()).await;
    let (viewer, admin) = owned_chain(&t).await;
    let cluster: i64 = sqlx::query_scalar("SELECT id FROM clusters WHERE name = 'local'")
        .fetch_one(&pool)
        .await
        .expect("cluster");
    let path = format!("/api/v1/clusters/{cluster}/lineage-topic");
    let topic = || async {
        sqlx::query_scalar::<_, Option<String>>("SELECT lineage_topic FROM clusters WHERE id = $1")
            .bind(cluster)
            .fetch_one(&pool)
            .await
            .expect("topic")
    };
    let r = t
        .api(
            Method::PUT,
            &path,
            &viewer,
            Some(json!({"topic": "openlineage"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let r = t
        .api(
            Method::PUT,
            &path,
            &admin,
            Some(json!({"topic": "bad topic?"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(topic().await, None);
    let r = t
        .api(
            Method::PUT,
            &path,
            &admin,
            Some(json!({"topic": " openlineage "})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    assert_eq!(topic().await.as_deref(), Some("openlineage"));
    let r = t
        .api(
            Method::PUT,
            "/api/v1/clusters/999999/lineage-topic",
            &admin,
            Some(json!({"topic": null})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let r = t
        .api(Method::PUT, &path, &admin, Some(json!({"topic": null})))
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    assert_eq!(topic().await, None);
    let actions = t.audit_actions().await;
    assert_eq!(
        actions
            .iter()
            .filter(|a| *a == "cluster.lineage_topic")
            .count(),
        2,
        "{actions:?}"
    );
    assert!(
        actions.iter().any(|a| a == "cluster.apply.refused"),
        "{actions:?}"
    );
}

/// The owned chain, with a live flag on the topic `orders`; the cluster's id.
async fn flagged_chain(t: &TestApp) -> i64 {
    owned_chain(t).await;
    let cluster: i64 = sqlx::query_scalar("SELECT id FROM clusters WHERE name = 'local'")
        .fetch_one(&t.pool)
        .await
        .expect("cluster");
    sqlx::query(
        "INSERT INTO flags (cluster_id, subject_kind, subject, rule, kind, reason, evidence, onset_at)
         VALUES ($1, 'topic', 'orders', 'freshness', 'STALE', 'no message for 2 h', '{}', now())",
    )
    .bind(cluster)
    .execute(&t.pool)
    .await
    .expect("flag");
    cluster
}

/// The `data-node` ids of a graph page's drawing, in drawing order.
fn drawn_nodes(body: &str) -> Vec<String> {
    body.split("data-node=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .map(|s| s.replace("&amp;", "&"))
        .collect()
}

fn drawn_edges(body: &str) -> usize {
    body.matches("class=\"edge ").count()
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_graph_page_draws_the_neighbourhood_with_owners_and_flags_and_follows_focus_and_depth(
    pool: PgPool,
) {
    let t = TestApp::new(pool.clone()).await;
    let cluster = flagged_chain(&t).await;
    let viewer = t
        .login("viewer", support::PASSWORD)
        .await
        .expect("signs in");
    let orders = "dataset:kafka://127.0.0.1:9092:orders";

    // A topic's graph, as the stream page links to it: two hops each way.
    let r = t
        .get(
            &format!("/lineage/graph?topic=orders&cluster_id={cluster}"),
            Some(&viewer),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(r.body.contains("data-testid=\"graph-svg\""), "{}", r.body);
    assert_eq!(
        drawn_nodes(&r.body),
        [
            orders,
            "job:sk-test:enricher",
            "dataset:kafka://127.0.0.1:9092:orders-enriched"
        ]
    );
    assert_eq!(drawn_edges(&r.body), 2);
    // The centre is a topic in trouble (its live flag), owned by payments.
    assert!(
        r.body.contains(&format!(
            "class=\"node kind-topic center trouble\" data-node=\"{orders}\""
        )),
        "{}",
        r.body
    );
    assert!(r.body.contains("payments · ⚑ 1"), "{}", r.body);
    assert!(
        r.body
            .contains("class=\"node kind-job\" data-node=\"job:sk-test:enricher\"")
    );
    // More lies beyond two hops: partial, and says why.
    assert!(r.body.contains("data-testid=\"partial\""));
    assert!(r.body.contains("nodes lie beyond the depth asked for"));
    // Each node re-centres the graph at the same depth.
    assert!(
        r.body
            .contains("href=\"/lineage/graph?node=job%3Ask-test%3Aenricher&amp;depth=2\""),
        "{}",
        r.body
    );

    // Deeper: the sink and its table, with the sink's owner (its facet).
    let deep = t
        .get(
            &format!("/lineage/graph?node={}&depth=4", urlencode(orders)),
            Some(&viewer),
        )
        .await;
    assert_eq!(drawn_nodes(&deep.body).len(), 5, "{}", deep.body);
    assert_eq!(drawn_edges(&deep.body), 4);
    // The drawing's zoom and pan are an island: the page loads the wasm,
    // once, by a script carrying the response's nonce.
    assert_eq!(deep.body.matches("<leptos-island").count(), 1);
    assert_eq!(deep.body.matches("streamkeeper_bg.wasm").count(), 1);
    let nonce = deep.headers[axum::http::header::CONTENT_SECURITY_POLICY]
        .to_str()
        .expect("csp")
        .split("'nonce-")
        .nth(1)
        .and_then(|s| s.split('\'').next())
        .expect("nonce")
        .to_string();
    assert!(
        deep.body
            .contains(&format!("<script type=\"module\" nonce=\"{nonce}\">")),
        "{}",
        deep.body
    );
    assert!(deep.body.contains(
        "kind-table\" data-node=\"dataset:postgres://127.0.0.1:5432:shop.public.orders\""
    ));
    assert!(deep.body.contains("team:warehouse"));
    assert!(
        !deep.body.contains("data-testid=\"partial\""),
        "nothing cut"
    );

    // Focus on the sink, one hop: its input and its output only.
    let focus = t
        .get(
            &format!(
                "/lineage/graph?node={}&depth=1",
                urlencode("job:connect:sink")
            ),
            Some(&viewer),
        )
        .await;
    assert_eq!(
        drawn_nodes(&focus.body),
        [
            "job:connect:sink",
            "dataset:postgres://127.0.0.1:5432:shop.public.orders",
            "dataset:kafka://127.0.0.1:9092:orders-enriched"
        ]
    );
    assert!(
        focus
            .body
            .contains("kind-job center\" data-node=\"job:connect:sink\"")
    );

    // A node budget of one: the centre and one more, partial.
    let small = t
        .get(
            &format!("/lineage/graph?node={}&depth=4&budget=1", urlencode(orders)),
            Some(&viewer),
        )
        .await;
    assert_eq!(drawn_nodes(&small.body).len(), 2, "{}", small.body);
    assert!(small.body.contains("the node budget ran out"));

    // Bad and unknown input is the caller's mistake, shown on the page.
    let r = t
        .get("/lineage/graph?node=job:nope:nothing", Some(&viewer))
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let r = t.get("/lineage/graph?node=garbage", Some(&viewer)).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = t
        .get(
            &format!("/lineage/graph?node={}&depth=x", urlencode(orders)),
            Some(&viewer),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = t
        .get(
            &format!("/lineage/graph?topic=orders&cluster_id={cluster}"),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "to sign in");
    assert!(r.location().starts_with("/login"), "{}", r.location());

    // Search by name, case-insensitive: datasets and jobs.
    let r = t.get("/lineage?q=ENRICH", Some(&viewer)).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(
        r.body.contains(">enricher</a>") && r.body.contains(">orders-enriched</a>"),
        "{}",
        r.body
    );
    assert!(!r.body.contains(">sink</a>"));
    assert!(
        r.body
            .contains("href=\"/lineage/graph?node=job%3Ask-test%3Aenricher\"")
    );
    let r = t.get("/lineage?q=zzz", Some(&viewer)).await;
    assert!(r.body.contains("data-testid=\"no-hits\""));
}

fn urlencode(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// Posted as a browser without JavaScript posts the impact page's form.
fn notify_form(page: &str, cookie: &str, node: &str) -> Request<Body> {
    let body = form_urlencoded::Serializer::new(String::new())
        .extend_pairs([("node", node), ("direction", "downstream")])
        .finish();
    Request::post("/fn/notify_lineage_owners")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::ACCEPT, "text/html")
        .header(header::REFERER, format!("{}{page}", support::ORIGIN))
        .header(header::ORIGIN, support::ORIGIN)
        .header(header::COOKIE, cookie)
        .body(Body::from(body))
        .expect("request")
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_impact_page_lists_owners_and_notify_records_the_question_and_refusals_are_audited(
    pool: PgPool,
) {
    let t = TestApp::new(pool.clone()).await;
    let cluster = flagged_chain(&t).await;
    let alice = t.user("alice", &[Role::Owner]).await;
    sqlx::query("INSERT INTO memberships (team_id, user_id) SELECT id, $1 FROM teams WHERE name = 'payments'")
        .bind(alice)
        .execute(&pool)
        .await
        .expect("member");
    let orders = "dataset:kafka://127.0.0.1:9092:orders";
    let page = format!("/lineage/impact?topic=orders&cluster_id={cluster}");
    let viewer = t
        .login("viewer", support::PASSWORD)
        .await
        .expect("signs in");
    let r = t.get(&page, Some(&viewer)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(
        r.body
            .contains(&format!("data-testid=\"impact-start\">{orders}")),
        "{}",
        r.body
    );
    for shown in [
        "4 nodes downstream, 2 owner teams: payments, team:warehouse.",
        ">shop.public.orders</a>",
        "kafka://127.0.0.1:9092:orders → sk-test:enricher → kafka://127.0.0.1:9092:orders-enriched → connect:sink",
        ">observed<",
        "data-testid=\"sent-none\"",
        "action=\"/fn/notify_lineage_owners\"",
    ] {
        assert!(r.body.contains(shown), "{shown} in {}", r.body);
    }

    // A viewer without stewardship is refused as the API refuses, audited,
    // and nothing is recorded or sent.
    let r = t.send(notify_form(&page, &viewer, orders)).await;
    assert!(
        r.location().contains("__err="),
        "{} {}",
        r.status,
        r.location()
    );
    let refused: Vec<String> = sqlx::query_scalar(
        "SELECT detail::jsonb->>'code' FROM audit_log
         WHERE action = 'request.refused' AND target = 'POST /fn/notify_lineage_owners' AND actor = 'viewer'",
    )
    .fetch_all(&pool)
    .await
    .expect("audit");
    assert_eq!(refused, ["forbidden"], "the refusal is audited");
    let back = r
        .location()
        .strip_prefix(support::ORIGIN)
        .unwrap_or(r.location())
        .to_owned();
    let shown = t.get(&back, Some(&viewer)).await;
    assert!(
        shown.body.contains("owners of its team and admins may"),
        "the refusal shows on the page: {}",
        shown.body
    );
    let asked: i64 = sqlx::query_scalar("SELECT count(*) FROM lineage_questions")
        .fetch_one(&pool)
        .await
        .expect("questions");
    assert_eq!(asked, 0);

    // An owner of payments sends it: recorded, told, audited, listed.
    let cookie = t.login("alice", support::PASSWORD).await.expect("signs in");
    let r = t.send(notify_form(&page, &cookie, orders)).await;
    assert!(r.status.is_redirection(), "{} {}", r.status, r.body);
    assert!(!r.location().contains("__err="), "{}", r.location());
    let (asked_by, teams): (String, Vec<String>) =
        sqlx::query_as("SELECT asked_by, teams FROM lineage_questions WHERE node = $1")
            .bind(orders)
            .fetch_one(&pool)
            .await
            .expect("the question is recorded");
    assert_eq!(
        (asked_by.as_str(), teams),
        (
            "alice",
            vec!["payments".to_string(), "team:warehouse".to_string()]
        )
    );
    let inbox: i64 = sqlx::query_scalar("SELECT count(*) FROM notifications WHERE user_id = $1")
        .bind(alice)
        .fetch_one(&pool)
        .await
        .expect("inbox");
    assert_eq!(inbox, 1);
    assert!(
        t.audit_actions()
            .await
            .contains(&"lineage.impact.notify".to_string())
    );
    let r = t.get(&page, Some(&cookie)).await;
    assert!(r.body.contains("data-testid=\"sent\""), "{}", r.body);
    assert!(
        r.body
            .contains("<td>alice</td><td>payments, team:warehouse</td><td>4</td>"),
        "{}",
        r.body
    );

    // The review item's and the schema check's pages link here too.
    let r = t
        .get(
            &format!("/clusters/{cluster}/stream/check?name=orders"),
            Some(&cookie),
        )
        .await;
    assert!(
        r.body.contains("data-testid=\"check-impact\""),
        "{}",
        r.body
    );
}

/// A writer names datasets by the registered clusters as it last read
/// them, and its statement checks they still stand: a batch named by a
/// list that changed writes nothing, so the writer reads the list again
/// and folds once more. A cluster registered between two events names the
/// second one's topic.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_batch_named_by_clusters_that_changed_is_named_again(pool: PgPool) {
    use streamkeeper_server::lineage::store;
    let svc = LineageService::new(pool.clone(), IngestLimits::for_body_limit(1 << 20));
    let ev = |n: u32, input: &str| {
        accepted(&start_event(
            &format!("0194b3a2-7c1e-7000-8000-{n:012}"),
            &format!("job-{n}"),
            input,
            "table",
        ))
    };
    let cluster_of = |topic: &'static str| {
        let pool = pool.clone();
        async move {
            folded(&pool).await;
            sqlx::query_scalar::<_, Option<String>>(
                "SELECT cluster FROM lineage_nodes WHERE kind = 'dataset' AND name = $1",
            )
            .bind(topic)
            .fetch_one(&pool)
            .await
            .expect("the topic's node")
        }
    };
    // No cluster yet: every writer that takes a batch reads an empty list.
    for n in 0..4 {
        let stored = svc.ingest(vec![ev(n, "before")]).await;
        assert!(stored.iter().all(Result::is_ok), "{stored:?}");
    }
    assert_eq!(cluster_of("before").await, None);

    let id: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap) VALUES ('local', '127.0.0.1:9092') RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .expect("cluster");
    for n in 10..14 {
        let stored = svc.ingest(vec![ev(n, "after")]).await;
        assert!(stored.iter().all(Result::is_ok), "{stored:?}");
    }
    assert_eq!(cluster_of("after").await, Some(id.to_string()));

    // The statement itself refuses a stale list: nothing is written.
    let stale_event = store::StoredEvent {
        id: 0,
        body: String::from_utf8(ev(99, "stale").received.canonical).expect("utf-8"),
        provenance: "observed".into(),
        sender: "test".into(),
    };
    let (graph, extras, unreadable) = streamkeeper_server::lineage::fold::fold_stored(
        &[stale_event],
        &streamkeeper::lineage::naming::Clusters::new(&[]),
    );
    assert!(unreadable.is_empty());
    let written = store::write(
        &mut pool.acquire().await.expect("conn"),
        &graph,
        &extras,
        &store::ClusterRows::default(),
    )
    .await
    .expect("statement");
    assert!(!written);
    let fresh = store::cluster_rows(&pool).await.expect("clusters");
    assert_eq!(fresh.registered().len(), 1);
    let stale: i64 = sqlx::query_scalar("SELECT count(*) FROM lineage_nodes WHERE name = 'stale'")
        .fetch_one(&pool)
        .await
        .expect("count");
    assert_eq!(stale, 0, "the stale fold wrote nothing");
}

/// Ingest answers once the event is appended; the graph is folded behind
/// it. A server that stops between the two loses nothing: the event
/// waits in `lineage_unfolded`, and the fold routine of the next server
/// (or any read) folds it.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn an_event_stored_but_not_folded_is_folded_after_a_restart(pool: PgPool) {
    use streamkeeper_server::platform::routine::{Outcome, Routine, Target};
    let first = LineageService::new(pool.clone(), IngestLimits::for_body_limit(1 << 20));
    let run = "0194b3a2-7c1e-7000-8000-000000000501";
    let stored = first
        .ingest(vec![accepted(&start_event(run, "j", "orders", "t"))])
        .await;
    assert!(
        matches!(stored[..], [Ok(streamkeeper_server::lineage::Stored::New)]),
        "{stored:?}"
    );
    // Stored, not yet folded: what a crash at this moment leaves.
    drop(first);
    let waiting: (i64, i64) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM lineage_unfolded), (SELECT count(*) FROM lineage_nodes)",
    )
    .fetch_one(&pool)
    .await
    .expect("counts");
    assert_eq!(waiting, (1, 0));

    // The next server's fold routine folds it, and says so.
    let next = Arc::new(LineageService::new(
        pool.clone(),
        IngestLimits::for_body_limit(1 << 20),
    ));
    let routine = streamkeeper_server::lineage::routine::Fold::new(next.clone());
    let cancel = tokio_util::sync::CancellationToken::new();
    let stop = {
        let (pool, cancel) = (pool.clone(), cancel.clone());
        tokio::spawn(async move {
            loop {
                let left: i64 = sqlx::query_scalar("SELECT count(*) FROM lineage_unfolded")
                    .fetch_one(&pool)
                    .await
                    .expect("count");
                if left == 0 {
                    break cancel.cancel();
                }
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        })
    };
    let outcome = routine.run(Target::Global, &cancel).await.expect("run");
    stop.await.expect("stopper");
    assert_eq!(
        outcome,
        Outcome::Done(json!({"folded": 1, "failed": 0, "failedEvents": []}))
    );
    let c = next.counts().await.expect("counts");
    assert_eq!((c.events, c.nodes, c.edges, c.unfolded), (1, 3, 2, 0));
}

/// A read waits for a fold in progress (here, a transaction holding the
/// fold's turn as a fold does) and answers with what it folded.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_read_waits_for_the_fold_holding_what_was_stored_before_it(pool: PgPool) {
    let svc = Arc::new(LineageService::new(
        pool.clone(),
        IngestLimits::for_body_limit(1 << 20),
    ));
    let run = "0194b3a2-7c1e-7000-8000-000000000502";
    let stored = svc
        .ingest(vec![accepted(&start_event(run, "j", "orders", "t"))])
        .await;
    assert!(stored[0].is_ok(), "{stored:?}");
    let mut holder = pool.begin().await.expect("tx");
    let turn = streamkeeper_server::lineage::store::fold_turn(&mut holder, false)
        .await
        .expect("turn");
    assert!(turn);
    let read = {
        let svc = svc.clone();
        tokio::spawn(async move { svc.counts().await })
    };
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!read.is_finished(), "the read did not wait for the fold");
    // That fold gives up: the read folds the event itself.
    holder.rollback().await.expect("release");
    let c = read.await.expect("task").expect("counts");
    assert_eq!((c.events, c.nodes, c.edges, c.unfolded), (1, 3, 2, 0));
}

/// A stored event the fold cannot read is recorded for admins (its sender
/// had a 201) and no longer waits; the good events folded with it are in
/// the graph; a rebuild tries it again.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_stored_event_the_fold_cannot_read_is_recorded_and_the_rest_fold(pool: PgPool) {
    use streamkeeper_server::lineage::store;
    let t = TestApp::new(pool.clone()).await;
    let svc = LineageService::new(pool.clone(), IngestLimits::for_body_limit(1 << 20));
    // As a stored event from an older version might read: an object
    // without the fields this version needs.
    let bad: i64 = sqlx::query_scalar(
        "WITH e AS (
             INSERT INTO lineage_events (hash, body, provenance, kind, event_time, sender, source)
             VALUES (sha256('old'), '{\"eventTime\": \"2026-01-01T00:00:00Z\"}', 'observed', 'run', now(), 'test', 'test')
             RETURNING id)
         INSERT INTO lineage_unfolded (event_id) SELECT id FROM e RETURNING event_id",
    )
    .fetch_one(&pool)
    .await
    .expect("old event");
    let stored = svc
        .ingest(vec![accepted(&start_event(
            "0194b3a2-7c1e-7000-8000-000000000503",
            "j",
            "orders",
            "t",
        ))])
        .await;
    assert!(stored[0].is_ok(), "{stored:?}");
    let c = svc.counts().await.expect("counts");
    assert_eq!(
        (c.events, c.nodes, c.unfolded, c.fold_failures),
        (2, 3, 0, 1)
    );
    let failures = store::fold_failures(&pool, 10).await.expect("failures");
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].event_id, bad);
    assert!(
        failures[0].error.contains("no longer parses"),
        "{failures:?}"
    );
    // Admins see it over REST; others are refused.
    let fold_as = async |name: &str, role: Role| {
        let id = t.user(name, &[role]).await;
        let token = t.token_with(id, &[Scope::Read]).await;
        t.api(Method::GET, "/api/v1/lineage/fold", &token, None)
            .await
    };
    let r = fold_as("ada", Role::Admin).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let state: Value = serde_json::from_str(&r.body).expect("json");
    assert_eq!(state["waiting"], 0);
    assert_eq!(state["failed"], 1);
    assert_eq!(state["failures"][0]["event_id"], bad);
    assert!(
        state["failures"][0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("no longer parses")),
        "{state}"
    );
    let r = fold_as("olga", Role::Owner).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);

    let (replayed, unreadable) = svc.rebuild().await.expect("rebuild");
    assert_eq!((replayed, unreadable), (1, 1));
    let c = svc.counts().await.expect("counts");
    assert_eq!((c.nodes, c.fold_failures), (3, 1));
}

/// More events waiting for the fold than the limit is a 429, as a full
/// queue is; once the fold catches up, ingest takes events again.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_fold_backlog_over_the_limit_answers_429(pool: PgPool) {
    let svc = LineageService::new(
        pool.clone(),
        IngestLimits {
            max_pending: 100,
            max_unfolded: 1,
            max_inflated: 1 << 20,
        },
    );
    let ev = |n: u32| {
        accepted(&start_event(
            &format!("0194b3a2-7c1e-7000-8000-{n:012}"),
            "j",
            "orders",
            "t",
        ))
    };
    for n in 0..2 {
        assert!(svc.ingest(vec![ev(n)]).await[0].is_ok());
    }
    assert_eq!(svc.fold().measure().await.expect("measure"), 2);
    let refused = svc.ingest(vec![ev(2)]).await;
    assert!(
        matches!(
            refused[..],
            [Err(streamkeeper_server::lineage::Refused::Saturated)]
        ),
        "{refused:?}"
    );
    svc.fold().catch_up().await.expect("fold");
    assert_eq!(svc.fold().measure().await.expect("measure"), 0);
    assert!(svc.ingest(vec![ev(2)]).await[0].is_ok());
}

/// A topic a job or connector names but the watched cluster's last full
/// pass did not list is drawn apart and said to be "not in the cluster";
/// one the pass listed is drawn as it is; before any full pass nothing is
/// said either way.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_graph_marks_a_topic_the_cluster_does_not_have(pool: PgPool) {
    let t = TestApp::new(pool.clone()).await;
    let cluster = flagged_chain(&t).await;
    let viewer = t
        .login("viewer", support::PASSWORD)
        .await
        .expect("signs in");
    let page = || {
        let t = &t;
        let viewer = &viewer;
        async move {
            let r = t
                .get(
                    &format!("/lineage/graph?topic=orders&cluster_id={cluster}"),
                    Some(viewer),
                )
                .await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.body);
            r.body
        }
    };
    let before = page().await;
    assert!(!before.contains("not-in-cluster"), "{before}");
    assert!(!before.contains(" absent\""), "{before}");

    // A full pass lists `orders` only.
    sqlx::query(
        "INSERT INTO cluster_passes (cluster_id, started_at, finished_at, outcome) VALUES ($1, now(), now(), 'UP')",
    )
    .bind(cluster)
    .execute(&pool)
    .await
    .expect("pass");
    sqlx::query(
        "INSERT INTO topics (cluster_id, name, partitions, first_seen, last_seen) VALUES ($1, 'orders', 1, now(), now())
         ON CONFLICT (cluster_id, name) DO UPDATE SET last_seen = now()",
    )
    .bind(cluster)
    .execute(&pool)
    .await
    .expect("topic");
    let body = page().await;
    let enriched = "dataset:kafka://127.0.0.1:9092:orders-enriched";
    assert!(
        body.contains(&format!(
            "class=\"node kind-topic absent\" data-node=\"{enriched}\""
        )),
        "{body}"
    );
    assert!(body.contains(">not in the cluster<"), "{body}");
    let rows = body
        .split("data-testid=\"graph-nodes\"")
        .nth(1)
        .unwrap_or_else(|| panic!("{body}"));
    assert_eq!(
        rows.matches("data-testid=\"not-in-cluster\"").count(),
        1,
        "{rows}"
    );
    assert!(
        rows.contains("named in lineage events, not in the cluster"),
        "{rows}"
    );
    // `orders` is there: drawn as it is.
    assert!(
        body.contains("class=\"node kind-topic center trouble\" data-node=\"dataset:kafka://127.0.0.1:9092:orders\""),
        "{body}"
    );
}
