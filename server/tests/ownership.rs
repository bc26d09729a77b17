//! One ownership rule (issue 45, item 1): the runtime's one home for it
//! (`platform::ownership`) over real Postgres, and its consumers: group
//! claims, flag routing, schema check readability.

mod support;

use axum::http::{Method, StatusCode};
use serde_json::json;
use sqlx::PgPool;
use streamkeeper::accounts::role::Role;
use streamkeeper::accounts::token::Scope;
use streamkeeper_server::platform::ownership;
use support::TestApp;

/// A cluster with teams payments and fraud, the stream `orders` owned by
/// payments, and the groups `billing` (reads orders and clicks) and
/// `audit` (reads clicks, unowned): (cluster, payments, fraud).
async fn demo(pool: &PgPool) -> (i64, i64, i64) {
    let cluster: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s)
         VALUES ('local', '127.0.0.1:1', 'PLAINTEXT', 15) RETURNING id",
    )
    .fetch_one(pool)
    .await
    .expect("cluster");
    let team = |name: &'static str| async move {
        sqlx::query_scalar::<_, i64>(
            "INSERT INTO teams (name, description) VALUES ($1, '') RETURNING id",
        )
        .bind(name)
        .fetch_one(pool)
        .await
        .expect("team")
    };
    let (payments, fraud) = (team("payments").await, team("fraud").await);
    sqlx::query(
        "INSERT INTO streams (cluster_id, topic, owner_team_id, domain) VALUES ($1, 'orders', $2, 'payments')",
    )
    .bind(cluster)
    .bind(payments)
    .execute(pool)
    .await
    .expect("stream");
    for (group, topics) in [
        ("billing", vec!["orders", "clicks"]),
        ("audit", vec!["clicks"]),
    ] {
        sqlx::query(
            "INSERT INTO consumer_groups (cluster_id, name, state, members, topics, first_seen, last_seen)
             VALUES ($1, $2, 'Stable', 1, $3, now(), now())",
        )
        .bind(cluster)
        .bind(group)
        .bind(&topics)
        .execute(pool)
        .await
        .expect("group");
    }
    (cluster, payments, fraud)
}

async fn member_id(t: &TestApp, name: &str, team: i64) -> i64 {
    let id = t.user(name, &[Role::Owner]).await;
    sqlx::query("INSERT INTO memberships (user_id, team_id) VALUES ($1, $2)")
        .bind(id)
        .bind(team)
        .execute(&t.pool)
        .await
        .expect("member");
    id
}

async fn member(t: &TestApp, name: &str, team: i64) -> String {
    let id = member_id(t, name, team).await;
    t.token(id).await
}

async fn claimed(pool: &PgPool, cluster: i64, group: &str) -> Option<i64> {
    sqlx::query_scalar(
        "SELECT owner_team_id FROM consumer_groups WHERE cluster_id = $1 AND name = $2",
    )
    .bind(cluster)
    .bind(group)
    .fetch_one(pool)
    .await
    .expect("group")
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_group_is_owned_by_its_claim_else_by_the_stream_it_reads(pool: PgPool) {
    let (cluster, payments, fraud) = demo(&pool).await;
    let billing = ownership::group(&pool, cluster, "billing")
        .await
        .expect("owner")
        .expect("exists")
        .expect("owned");
    assert_eq!(billing.team.id, payments);
    assert_eq!(billing.to_string(), "payments (by stream orders)");
    assert_eq!(
        ownership::group(&pool, cluster, "audit")
            .await
            .expect("owner"),
        Some(None)
    );
    assert_eq!(
        ownership::group(&pool, cluster, "nope")
            .await
            .expect("owner"),
        None
    );
    sqlx::query("UPDATE consumer_groups SET owner_team_id = $1, owner_claimed_at = '2026-12-01T10:00:00Z' WHERE name = 'billing'")
        .bind(fraud)
        .execute(&pool)
        .await
        .expect("claim");
    let billing = ownership::group(&pool, cluster, "billing")
        .await
        .expect("owner")
        .flatten()
        .expect("owned");
    assert_eq!(billing.to_string(), "fraud (claimed on 2026-12-01)");
    let orders = ownership::stream(&pool, cluster, "orders")
        .await
        .expect("owner");
    assert_eq!(orders.map(|o| o.team.id), Some(payments));
    assert_eq!(
        ownership::stream(&pool, cluster, "clicks")
            .await
            .expect("owner"),
        None
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn another_teams_group_by_stream_cannot_be_claimed(pool: PgPool) {
    let t = TestApp::new(pool).await;
    let (cluster, payments, fraud) = demo(&t.pool).await;
    let mallory = member(&t, "mallory", fraud).await;
    let pat = member(&t, "pat", payments).await;
    let owner = |g: &str| format!("/api/v1/clusters/{cluster}/groups/{g}/owner");

    // billing reads payments' orders: payments', not free for fraud.
    let r = t
        .api(
            Method::PUT,
            &owner("billing"),
            &mallory,
            Some(json!({"team": "fraud"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert!(
        r.body.contains("payments's (by stream orders)"),
        "{}",
        r.body
    );
    assert_eq!(
        claimed(&t.pool, cluster, "billing").await,
        None,
        "nothing changed"
    );
    // A group that does not exist: 404, audited, nothing made.
    let r = t
        .api(
            Method::PUT,
            &owner("ghost"),
            &mallory,
            Some(json!({"team": "fraud"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    let refusals: Vec<(String, String)> =
        sqlx::query_as("SELECT action, target FROM audit_log WHERE actor = 'mallory' ORDER BY id")
            .fetch_all(&t.pool)
            .await
            .expect("audit");
    assert_eq!(
        refusals,
        vec![
            (
                "request.refused".to_string(),
                format!("PUT {}", owner("billing"))
            ),
            ("group.owner.refused".to_string(), "group:ghost".to_string()),
        ]
    );
    // The unowned group is anyone's to claim for their own team.
    let r = t
        .api(
            Method::PUT,
            &owner("audit"),
            &mallory,
            Some(json!({"team": "fraud"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    // payments makes its inherited ownership explicit.
    let r = t
        .api(
            Method::PUT,
            &owner("billing"),
            &pat,
            Some(json!({"team": "payments"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    assert_eq!(claimed(&t.pool, cluster, "billing").await, Some(payments));
    let at: Option<chrono::DateTime<chrono::Utc>> =
        sqlx::query_scalar("SELECT owner_claimed_at FROM consumer_groups WHERE name = 'billing'")
            .fetch_one(&t.pool)
            .await
            .expect("at");
    assert!(at.is_some(), "the claim's time is kept");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_check_of_an_unowned_stream_is_not_found_for_others_not_a_500(pool: PgPool) {
    let t = TestApp::new(pool).await;
    let (cluster, _, fraud) = demo(&t.pool).await;
    let mallory = member(&t, "mallory", fraud).await;
    // Checked when `clicks` had no owner: the frozen owner team is NULL.
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO compatibility_checks (cluster_id, topic, schema_type, schema, verdict, report,
                                           submitted_by, submitted_at, decided_at, owner_team_id, domain)
         VALUES ($1, 'clicks', 'AVRO', '\"string\"', 'INCOMPATIBLE', '{}', 'ada', now(), now(), NULL, '')
         RETURNING id",
    )
    .bind(cluster)
    .fetch_one(&t.pool)
    .await
    .expect("check");
    let r = t
        .api(
            Method::GET,
            &format!("/api/v1/schema-checks/{id}"),
            &mallory,
            None,
        )
        .await;
    assert!(
        r.status == StatusCode::NOT_FOUND || r.status == StatusCode::FORBIDDEN,
        "{}: {}",
        r.status,
        r.body
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn an_event_from_the_future_is_refused_and_pins_nothing(pool: PgPool) {
    let t = TestApp::new(pool).await;
    demo(&t.pool).await;
    let id = t.user("mallory", &[Role::Owner]).await;
    let mallory = t.token_with(id, &[Scope::LineageWrite]).await;
    let event = |at: &str| {
        json!({"eventTime": at, "producer": "p",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
            "dataset": {"namespace": "postgres://db:5432", "name": "shop.orders", "facets": {
                "ownership": {"_producer": "p", "_schemaURL": "s",
                    "owners": [{"name": "payments", "type": "TEAM"}]}}}})
    };
    let r = t
        .api(
            Method::POST,
            "/api/v1/lineage",
            &mallory,
            Some(event("2099-01-01T00:00:00Z")),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(r.body.contains("more than a day ahead"), "{}", r.body);
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM lineage_events")
        .fetch_one(&t.pool)
        .await
        .expect("count");
    assert_eq!(stored, 0, "nothing stored");
}

/// A DatasetEvent whose `ownership` facet names `team`, at `at`.
fn owned_by(team: &str, at: &str) -> serde_json::Value {
    json!({"eventTime": at, "producer": "p",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
        "dataset": {"namespace": "postgres://db:5432", "name": "shop.archive", "facets": {
            "ownership": {"_producer": "p", "_schemaURL": "s",
                "owners": [{"name": team, "type": "TEAM"}]}}}})
}

/// The owner the impact of `orders` shows for `shop.archive`.
async fn archive_owner(t: &TestApp, token: &str) -> serde_json::Value {
    let r = t
        .api(
            Method::GET,
            "/api/v1/lineage/impact?topic=orders&cluster=local",
            token,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let v = r.json();
    v["nodes"]
        .as_array()
        .and_then(|n| n.iter().find(|n| n["name"] == "shop.archive").cloned())
        .unwrap_or_else(|| panic!("shop.archive reached: {v}"))["owner"]
        .clone()
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn an_ownership_facet_from_another_team_reroutes_no_impact_notice(pool: PgPool) {
    let t = TestApp::new(pool).await;
    let (_, payments, fraud) = demo(&t.pool).await;
    for (team, url) in [
        (payments, "http://127.0.0.1:9/payments"),
        (fraud, "http://127.0.0.1:9/fraud"),
    ] {
        sqlx::query("UPDATE teams SET webhook_url = $2 WHERE id = $1")
            .bind(team)
            .bind(url)
            .execute(&t.pool)
            .await
            .expect("webhook");
    }
    let pat_id = member_id(&t, "pat", payments).await;
    let mallory_id = member_id(&t, "mallory", fraud).await;
    let (pat, mallory) = (t.token(pat_id).await, t.token(mallory_id).await);
    let send = |id: i64, event: serde_json::Value| {
        let t = &t;
        async move {
            let token = t.token_with(id, &[Scope::LineageWrite]).await;
            let r = t
                .api(Method::POST, "/api/v1/lineage", &token, Some(event))
                .await;
            assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
        }
    };
    // A job of nobody's reads orders into a table.
    let etl = t.user("etl", &[Role::Owner]).await;
    send(
        etl,
        json!({"eventTime": "2026-12-01T00:00:00Z", "producer": "p",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
        "job": {"namespace": "etl", "name": "archiver", "facets": {}},
        "inputs": [{"namespace": "kafka://127.0.0.1:1", "name": "orders", "facets": {}}],
        "outputs": [{"namespace": "postgres://db:5432", "name": "shop.archive", "facets": {}}]}),
    )
    .await;
    // Someone outside payments says payments owns it: nobody does.
    send(mallory_id, owned_by("payments", "2026-12-01T00:30:00Z")).await;
    assert_eq!(archive_owner(&t, &pat).await, serde_json::Value::Null);

    // The owning team's member says so: payments owns it.
    send(pat_id, owned_by("payments", "2026-12-01T01:00:00Z")).await;
    assert_eq!(archive_owner(&t, &pat).await, "payments");
    // A later facet of fraud's member taking it for fraud changes nothing.
    send(mallory_id, owned_by("fraud", "2026-12-01T02:00:00Z")).await;
    assert_eq!(archive_owner(&t, &mallory).await, "payments");
    let sender: String = sqlx::query_scalar(
        "SELECT f.sender FROM lineage_facets f JOIN lineage_nodes n ON n.id = f.node_id
         WHERE n.name = 'shop.archive' AND f.key = 'ownership'",
    )
    .fetch_one(&t.pool)
    .await
    .expect("facet");
    assert_eq!(sender, "pat", "the sender of the facet kept is recorded");

    // "Notify owners" reaches payments' webhook, not fraud's.
    let r = t
        .api(
            Method::POST,
            "/api/v1/lineage/impact/notify",
            &pat,
            Some(json!({"topic": "orders", "cluster": "local"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let urls: Vec<String> = sqlx::query_scalar(
        "SELECT url FROM deliveries WHERE lineage_question_id IS NOT NULL ORDER BY url",
    )
    .fetch_all(&t.pool)
    .await
    .expect("deliveries");
    assert_eq!(urls, ["http://127.0.0.1:9/payments"]);

    // Setting the owner: fraud may not take payments' node (403,
    // audited); an unknown node is 404 (audited); a topic is its
    // stream's (422); payments' member sets it for payments.
    let set = |token: String, node: &'static str, team: &'static str| {
        let t = &t;
        async move {
            t.api(
                Method::PUT,
                "/api/v1/lineage/owner",
                &token,
                Some(json!({"node": node, "team": team})),
            )
            .await
        }
    };
    let archive = "dataset:postgres://db:5432:shop.archive";
    let r = set(mallory.clone(), archive, "fraud").await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert!(
        r.body.contains("payments's (by ownership facet from pat)"),
        "{}",
        r.body
    );
    let r = set(
        mallory.clone(),
        "dataset:postgres://db:5432:shop.ghost",
        "fraud",
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    let r = set(
        pat.clone(),
        "dataset:kafka://127.0.0.1:1:orders",
        "payments",
    )
    .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    let refusals: Vec<(String, String)> = sqlx::query_as(
        "SELECT action, target FROM audit_log WHERE action LIKE '%refused' ORDER BY id",
    )
    .fetch_all(&t.pool)
    .await
    .expect("audit");
    assert_eq!(
        refusals,
        [
            (
                "request.refused".to_string(),
                "PUT /api/v1/lineage/owner".to_string()
            ),
            (
                "lineage.owner.refused".to_string(),
                "lineage:dataset:postgres://db:5432:shop.ghost".to_string()
            ),
            (
                "lineage.owner.refused".to_string(),
                "lineage:dataset:kafka://127.0.0.1:1:orders".to_string()
            ),
        ]
    );
    let r = set(pat.clone(), archive, "payments").await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    let set_by: String = sqlx::query_scalar("SELECT set_by FROM lineage_owners")
        .fetch_one(&t.pool)
        .await
        .expect("set");
    assert_eq!(set_by, "pat");
}

/// The demo's shape (scripts/demo): the cluster `local` with payments'
/// streams `orders` and `payments`, the groups `billing`, `analytics` and
/// `fraud-scoring` reading orders, and on the Connect cluster `demo` the
/// source `orders-cdc` writing orders and the sink `payments-archive`
/// reading payments; nothing claimed. Returns (cluster, connect, payments).
async fn demo_shape(pool: &PgPool) -> (i64, i64, i64) {
    let (cluster, payments, _) = demo(pool).await;
    sqlx::query("DELETE FROM consumer_groups")
        .execute(pool)
        .await
        .expect("groups");
    sqlx::query(
        "INSERT INTO streams (cluster_id, topic, owner_team_id, domain) VALUES ($1, 'payments', $2, 'payments')",
    )
    .bind(cluster)
    .bind(payments)
    .execute(pool)
    .await
    .expect("stream");
    for group in ["billing", "analytics", "fraud-scoring"] {
        sqlx::query(
            "INSERT INTO consumer_groups (cluster_id, name, state, members, topics, first_seen, last_seen,
                                          status)
             VALUES ($1, $2, 'Stable', 1, '{orders}', now(), now(), 'OK')",
        )
        .bind(cluster)
        .bind(group)
        .execute(pool)
        .await
        .expect("group");
    }
    let connect: i64 = sqlx::query_scalar(
        "INSERT INTO connect_clusters (cluster_id, name, url) VALUES ($1, 'demo', 'http://127.0.0.1:9')
         RETURNING id",
    )
    .bind(cluster)
    .fetch_one(pool)
    .await
    .expect("connect");
    let cdc = json!({"connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "name": "orders-cdc", "tasks.max": "1", "topic.prefix": "shop",
        "database.hostname": "shop-db.internal", "database.port": "5432", "database.dbname": "shop",
        "table.include.list": "public\\.orders"});
    let archive = json!({"connector.class": "io.confluent.connect.s3.S3SinkConnector",
        "name": "payments-archive", "tasks.max": "1", "topics": "payments",
        "s3.bucket.name": "payments-archive", "s3.region": "eu-west-1"});
    for (name, kind, config, topic) in [
        ("orders-cdc", "source", cdc, "orders"),
        ("payments-archive", "sink", archive, "payments"),
    ] {
        sqlx::query(
            "INSERT INTO connectors (connect_id, name, kind, state, config, config_hash, topics)
             VALUES ($1, $2, $3, 'RUNNING', $4, 'x', ARRAY[$5])",
        )
        .bind(connect)
        .bind(name)
        .bind(kind)
        .bind(config)
        .bind(topic)
        .execute(pool)
        .await
        .expect("connector");
    }
    (cluster, connect, payments)
}

/// Issue 45's test: on the demo's data, the groups and connectors show
/// the owners they inherit, and "what breaks if orders changes" reaches
/// payments: the impact lists it, and "Notify owners" delivers to its
/// webhook.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn what_breaks_if_orders_changes_reaches_payments_on_the_demos_data(pool: PgPool) {
    use std::sync::{Arc, Mutex};
    use streamkeeper_server::lineage::{IngestLimits, LineageService};
    use streamkeeper_server::platform::routine::{Outcome, Routine, Target};
    let t = TestApp::new(pool).await;
    let (cluster, connect, payments) = demo_shape(&t.pool).await;
    let olivia = member(&t, "olivia", payments).await;

    // Inherited, with the reason shown.
    let groups = ownership::groups(
        &t.pool,
        cluster,
        &["billing".into(), "analytics".into(), "fraud-scoring".into()],
    )
    .await
    .expect("groups");
    for (name, owner) in &groups {
        let shown = owner.as_ref().map(ToString::to_string);
        assert_eq!(
            shown.as_deref(),
            Some("payments (by stream orders)"),
            "{name}"
        );
    }
    assert_eq!(groups.len(), 3);
    let connectors = ownership::connectors(
        &t.pool,
        connect,
        &["orders-cdc".into(), "payments-archive".into()],
    )
    .await
    .expect("connectors");
    let shown = |name: &str| {
        connectors[name]
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default()
    };
    assert_eq!(shown("orders-cdc"), "payments (by stream orders)");
    assert_eq!(shown("payments-archive"), "payments (by stream payments)");

    // Every list and /metrics shows them, from the same rule.
    let list = t
        .api(
            Method::GET,
            &format!("/api/v1/clusters/{cluster}/groups"),
            &olivia,
            None,
        )
        .await
        .json();
    let items = list["items"].as_array().cloned().expect("groups");
    assert_eq!(items.len(), 3, "{list}");
    for g in &items {
        assert_eq!(
            (&g["owner"], &g["owner_reason"]),
            (&json!("payments"), &json!("by stream orders")),
            "{g}"
        );
    }
    let list = t
        .api(
            Method::GET,
            &format!("/api/v1/clusters/{cluster}/connect/demo/connectors"),
            &olivia,
            None,
        )
        .await
        .json();
    let reasons: Vec<(String, String, String)> = list["items"]
        .as_array()
        .expect("connectors")
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or_default().to_string();
            (s("name"), s("owner"), s("owner_reason"))
        })
        .collect();
    assert_eq!(
        reasons,
        [
            (
                "orders-cdc".to_string(),
                "payments".to_string(),
                "by stream orders".to_string()
            ),
            (
                "payments-archive".to_string(),
                "payments".to_string(),
                "by stream payments".to_string()
            ),
        ]
    );
    let root = t.user("root", &[Role::Admin]).await;
    let scraper = t.token_with(root, &[Scope::Metrics]).await;
    let r = t.api(Method::GET, "/metrics", &scraper, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    for (metric, name) in [
        ("streamkeeper_consumergroup_status{", "group=\"billing\""),
        (
            "streamkeeper_consumergroup_status{",
            "group=\"fraud-scoring\"",
        ),
        (
            "kafka_connect_connector_status{",
            "connector=\"orders-cdc\"",
        ),
        (
            "kafka_connect_connector_status{",
            "connector=\"payments-archive\"",
        ),
    ] {
        let line = r
            .body
            .lines()
            .find(|l| l.starts_with(metric) && l.contains(name))
            .unwrap_or_else(|| panic!("{metric} {name} in {}", r.body));
        assert!(line.contains("owner=\"payments\""), "{line}");
    }

    // The derive routine turns the groups and connectors into lineage.
    let lineage = Arc::new(LineageService::new(
        t.pool.clone(),
        IngestLimits::for_body_limit(1 << 20),
    ));
    let derive = streamkeeper_server::lineage::routine::Derive::new(lineage);
    let cancel = tokio_util::sync::CancellationToken::new();
    let ran = derive.run(Target::Global, &cancel).await.expect("derive");
    assert!(matches!(ran, Outcome::Done(_)), "{ran:?}");

    let r = t
        .api(
            Method::GET,
            "/api/v1/lineage/impact?topic=orders&cluster=local",
            &olivia,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let v = r.json();
    let nodes = v["nodes"].as_array().cloned().expect("nodes");
    for group in ["billing", "analytics", "fraud-scoring"] {
        let n = nodes
            .iter()
            .find(|n| n["name"] == group)
            .unwrap_or_else(|| panic!("{group} in {v}"));
        assert_eq!(n["owner"], "payments", "{n}");
    }

    // "Notify owners" reaches payments' webhook.
    let got: Arc<Mutex<Vec<serde_json::Value>>> = Arc::default();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post({
            let got = got.clone();
            move |axum::Json(v): axum::Json<serde_json::Value>| {
                let got = got.clone();
                async move {
                    got.lock().expect("lock").push(v);
                    StatusCode::OK
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    sqlx::query("UPDATE teams SET webhook_url = $2 WHERE id = $1")
        .bind(payments)
        .bind(&url)
        .execute(&t.pool)
        .await
        .expect("webhook");
    let r = t
        .api(
            Method::POST,
            "/api/v1/lineage/impact/notify",
            &olivia,
            Some(json!({"topic": "orders", "cluster": "local"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["teams"][0]["team"], "payments", "{}", r.body);
    let http = streamkeeper_server::clients::webhook::Webhooks::new(
        streamkeeper::platform::egress::EgressPolicy::LOOPBACK,
    )
    .expect("webhooks");
    streamkeeper_server::flags::routine::deliver_due(&t.pool, &http)
        .await
        .expect("deliver");
    let got = got.lock().expect("lock").clone();
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["team"], "payments");
    assert_eq!(got[0]["kind"], "lineage.impact");
}
