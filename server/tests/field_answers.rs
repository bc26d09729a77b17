//! Field-level answers on the check and the screens (issue 43, items 3
//! and 4) over the real router and Postgres: the OpenLineage events a
//! streaming job and a BI tool send (the same column lineage dbt-ol sends
//! for a model, whose real run is in `lineage.rs`); a check removing
//! `amount`, its report (API and page) naming the columns and dashboards
//! reached with their owners, and "Notify owners" through the teams'
//! channels, from a JS-off form, audited; the impact page's field picker
//! and column paths, and a dataset's columns on its page.

mod support;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::PgPool;
use streamkeeper::accounts::role::Role;
use streamkeeper::accounts::token::Scope;

const KAFKA: &str = "kafka://127.0.0.1:9092";
const PG: &str = "postgres://127.0.0.1:5432";
const BI: &str = "superset://bi";

const ORDER: &str = r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"amount","type":"double"},{"name":"status","type":"string"}]}"#;
const WITHOUT_AMOUNT: &str = r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"status","type":"string"}]}"#;
const ADDS_NOTE: &str = r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"amount","type":"double"},{"name":"status","type":"string"},{"name":"note","type":["null","string"],"default":null}]}"#;

fn event(run: &str, job: &str, input: (&str, &str), output: (&str, &str, Value)) -> Value {
    json!({
        "eventTime": "2026-01-01T00:00:00Z", "eventType": "COMPLETE",
        "inputs": [{"namespace": input.0, "name": input.1, "facets": {}}],
        "outputs": [{"namespace": output.0, "name": output.1, "facets": output.2}],
        "job": {"namespace": "sk-test", "name": job, "facets": {}},
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python",
        "run": {"facets": {}, "runId": run},
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
    })
}

fn from_field(ns: &str, name: &str, field: &str) -> Value {
    json!({"namespace": ns, "name": name, "field": field,
        "transformations": [{"type": "DIRECT", "subtype": "AGGREGATION"}]})
}

async fn exec(pool: &PgPool, sql: &str) {
    sqlx::query(sql).execute(pool).await.expect(sql);
}

/// Cluster `local` (whose bootstrap the events' Kafka namespace names)
/// with `orders` seen, owned by payments; teams analytics and finance
/// own a model and a dashboard fed by `orders.amount`.
async fn world(t: &support::TestApp, admin: &str) -> i64 {
    let pool = &t.pool;
    let cluster: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s)
         VALUES ('local', '127.0.0.1:9092', 'PLAINTEXT', 15) RETURNING id",
    )
    .fetch_one(pool)
    .await
    .expect("cluster");
    exec(pool, &format!("INSERT INTO topics (cluster_id, name, partitions, first_seen, last_seen) VALUES ({cluster}, 'orders', 1, now(), now())")).await;
    exec(
        pool,
        "INSERT INTO teams (name) VALUES ('payments'), ('analytics'), ('finance')",
    )
    .await;
    let r = t
        .api(
            Method::PUT,
            &format!("/api/v1/clusters/{cluster}/streams/orders"),
            admin,
            Some(json!({"owner_team": "payments", "domain": "payments"})),
        )
        .await;
    assert!(r.status.is_success(), "{}", r.body);
    let r = t
        .api(
            Method::PUT,
            &format!("/api/v1/clusters/{cluster}/streams/orders/schema"),
            admin,
            Some(json!({"schema_type": "AVRO", "schema": ORDER})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);

    // The producer speaks for the teams its ownership facets name.
    let producer = t.user("flink", &[Role::Owner]).await;
    exec(pool, &format!("INSERT INTO memberships (team_id, user_id) SELECT id, {producer} FROM teams WHERE name IN ('analytics', 'finance')")).await;
    let token = t.token_with(producer, &[Scope::LineageWrite]).await;
    let daily = json!({
        "columnLineage": {"fields": {"revenue": {"inputFields": [from_field(KAFKA, "orders", "amount")]}}},
        "ownership": {"owners": [{"name": "analytics", "type": "TEAM"}]}
    });
    let dashboard = json!({
        "columnLineage": {"fields": {"total": {"inputFields": [from_field(PG, "analytics.orders_daily", "revenue")]}}},
        "ownership": {"owners": [{"name": "finance", "type": "TEAM"}]}
    });
    let events = [
        event(
            "0194b3a2-7c1e-7000-8000-000000004341",
            "orders_daily",
            (KAFKA, "orders"),
            (PG, "analytics.orders_daily", daily),
        ),
        event(
            "0194b3a2-7c1e-7000-8000-000000004342",
            "finance_refresh",
            (PG, "analytics.orders_daily"),
            (BI, "Finance daily", dashboard),
        ),
    ];
    for e in events {
        let r = t
            .api(Method::POST, "/api/v1/lineage", &token, Some(e))
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    }
    // Folded now, as the running server's fold would have.
    streamkeeper_server::lineage::LineageService::new(
        pool.clone(),
        streamkeeper_server::lineage::IngestLimits::for_body_limit(0),
    )
    .fold()
    .catch_up()
    .await
    .expect("fold");
    cluster
}

async fn check(t: &support::TestApp, cluster: i64, token: &str, schema: &str) -> Value {
    let r = t
        .api(
            Method::POST,
            &format!("/api/v1/clusters/{cluster}/streams/orders/compatibility"),
            token,
            Some(json!({"schema_type": "AVRO", "schema": schema})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.json()
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn removing_a_field_names_the_columns_and_dashboards_it_breaks_and_tells_their_owners(
    pool: PgPool,
) {
    let t = support::TestApp::new(pool.clone()).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let admin = t.token(admin).await;
    let cluster = world(&t, &admin).await;
    let vic = t.user("vic", &[Role::Viewer]).await;
    let vic_token = t.token(vic).await;

    let report = check(&t, cluster, &vic_token, WITHOUT_AMOUNT).await;
    let downstream = report["downstream"]
        .as_array()
        .cloned()
        .expect("downstream");
    assert_eq!(downstream.len(), 1, "{report}");
    let amount = &downstream[0];
    assert_eq!(amount["touched"]["field"], "amount");
    assert_eq!(amount["touched"]["change"], "removed");
    let columns = amount["columns"].as_array().cloned().expect("columns");
    let named: Vec<(String, String, String, String)> = columns
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
            (s("dataset"), s("field"), s("kind"), s("owner"))
        })
        .collect();
    assert_eq!(
        named,
        vec![
            (
                "analytics.orders_daily".into(),
                "revenue".into(),
                "table".into(),
                "analytics".into()
            ),
            (
                "Finance daily".into(),
                "total".into(),
                "dashboard".into(),
                "finance".into()
            ),
        ],
        "{report}"
    );
    assert_eq!(amount["unknown"], Value::Null);
    let id = report["id"].as_i64().expect("id");

    // The page says it in one sentence, with the JS-off form to notify.
    let cookie = t.login("vic", support::PASSWORD).await.expect("signed in");
    let page = t.get(&format!("/schema-checks/{id}"), Some(&cookie)).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body.contains("removing `amount` breaks `analytics.orders_daily.revenue` (table, team analytics) and the dashboard `Finance daily` (team finance)"),
        "{}",
        page.body
    );
    assert!(page.body.contains("Notify owners"), "{}", page.body);

    // Analytics has a webhook channel, finance only PagerDuty (a notice
    // opens no incident there): one channel message.
    exec(&pool, "INSERT INTO notify_channels (team_id, name, kind, endpoint) SELECT id, 'hook', 'webhook', 'http://127.0.0.1:9/hook' FROM teams WHERE name = 'analytics'").await;
    exec(&pool, "INSERT INTO notify_channels (team_id, name, kind, endpoint, secret_ref) SELECT id, 'pd', 'pagerduty', 'http://127.0.0.1:9/pd', 'env:PD_KEY' FROM teams WHERE name = 'finance'").await;

    // Someone who may not read the check is told it is not there.
    let bob = t.user("bob", &[Role::Viewer]).await;
    let bob = t.token(bob).await;
    let path = format!("/api/v1/schema-checks/{id}/notify");
    let r = t.api(Method::POST, &path, &bob, None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);

    // The submitter sends it from the page's form, JS off.
    let r = t
        .post_form(
            "/fn/notify_check_owners",
            Some(&cookie),
            &[("check_id", &id.to_string())],
        )
        .await;
    assert!(
        r.status.is_success() || r.status.is_redirection(),
        "{} {}",
        r.status,
        r.body
    );
    let bodies: Vec<(String, Value)> = sqlx::query_as(
        "SELECT c.name, d.body FROM deliveries d JOIN notify_channels c ON c.id = d.channel_id ORDER BY d.id",
    )
    .fetch_all(&pool)
    .await
    .expect("deliveries");
    assert_eq!(bodies.len(), 1, "{bodies:?}");
    assert_eq!(bodies[0].0, "hook");
    let flag = &bodies[0].1["flag"];
    assert_eq!(flag["kind"], "BREAKING_CHANGE");
    assert_eq!(flag["subject"], "orders");
    assert_eq!(flag["team"], "analytics");
    assert!(
        flag["reason"].as_str().is_some_and(|r| r.contains(
            "breaks what you own: removing `amount` breaks `analytics.orders_daily.revenue` (table, team analytics)"
        )),
        "{flag}"
    );
    assert!(
        flag["url"]
            .as_str()
            .is_some_and(|u| u.ends_with(&format!("/schema-checks/{id}"))),
        "{flag}"
    );
    assert!(
        t.audit_actions()
            .await
            .contains(&"schema.check.notify".to_owned())
    );
    let r = t
        .api(
            Method::GET,
            &format!("/api/v1/schema-checks/{id}"),
            &vic_token,
            None,
        )
        .await;
    let notices = r.json()["notices"].clone();
    assert_eq!(notices[0]["sent_by"], "vic", "{notices}");
    assert_eq!(notices[0]["teams"], json!(["analytics", "finance"]));
    assert_eq!(notices[0]["messages"], 1);

    // A member of the stream's team may too; a reader of the check who is
    // neither its submitter nor of that team may not (403, audited).
    let olga = t.user("olga", &[Role::Viewer]).await;
    exec(&pool, &format!("INSERT INTO memberships (team_id, user_id) SELECT id, {olga} FROM teams WHERE name = 'payments'")).await;
    let olga = t.token(olga).await;
    let r = t.api(Method::POST, &path, &olga, None).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let approver = t.user("apu", &[Role::Approver]).await;
    exec(&pool, "INSERT INTO review_domains (domain, updated_by) VALUES ('payments', 'ada') ON CONFLICT DO NOTHING").await;
    exec(
        &pool,
        &format!("INSERT INTO domain_approvers (domain, user_id) VALUES ('payments', {approver})"),
    )
    .await;
    let approver = t.token(approver).await;
    let r = t.api(Method::POST, &path, &approver, None).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);

    // The review item made of the check (checked again as it is proposed)
    // says it too, with the form, for its approvers to read before they
    // decide.
    let r = t
        .api(
            Method::POST,
            &format!("/api/v1/schema-checks/{id}/proposals"),
            &admin,
            Some(json!({"title": "Drop amount"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let item = r.json()["id"].as_i64().expect("item id");
    let ada = t.login("ada", support::PASSWORD).await.expect("signed in");
    let page = t.get(&format!("/review/{item}"), Some(&ada)).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body
            .contains("removing `amount` breaks `analytics.orders_daily.revenue`"),
        "{}",
        page.body
    );
    assert!(
        page.body.contains(r#"data-testid="notify-owners-form""#),
        "{}",
        page.body
    );

    // A change that touches no field reaches nobody: 422, nothing sent.
    let calm = check(&t, cluster, &vic_token, ADDS_NOTE).await;
    assert_eq!(calm["downstream"], json!([]), "{calm}");
    let calm_id = calm["id"].as_i64().expect("id");
    let r = t
        .api(
            Method::POST,
            &format!("/api/v1/schema-checks/{calm_id}/notify"),
            &vic_token,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_field_no_column_lineage_names_is_unknown_never_safe(pool: PgPool) {
    let t = support::TestApp::new(pool.clone()).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let admin = t.token(admin).await;
    let cluster = world(&t, &admin).await;
    // `status` is removed: no column edge or schema facet names it.
    let without_status = r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"amount","type":"double"}]}"#;
    let report = check(&t, cluster, &admin, without_status).await;
    let d = &report["downstream"][0];
    assert_eq!(d["touched"]["field"], "status", "{report}");
    assert_eq!(d["unknown"], "no column lineage names it", "{report}");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_impact_page_picks_a_field_and_draws_its_paths_and_a_dataset_lists_its_columns(
    pool: PgPool,
) {
    let t = support::TestApp::new(pool.clone()).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let admin = t.token(admin).await;
    world(&t, &admin).await;
    t.user("vic", &[Role::Viewer]).await;
    let cookie = t.login("vic", support::PASSWORD).await.expect("signed in");
    let topic = "dataset:kafka://127.0.0.1:9092:orders";

    // The picker offers the topic's fields its column lineage names.
    let page = t
        .get(&format!("/lineage/impact?node={topic}"), Some(&cookie))
        .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(
        page.body.contains(r#"data-testid="field-picker""#),
        "{}",
        page.body
    );
    assert!(
        page.body.contains(r#"<option value="amount""#),
        "{}",
        page.body
    );
    assert!(!page.body.contains(r#"data-testid="column-paths""#));

    // Picked: each reached field with the chain that leads to it.
    let page = t
        .get(
            &format!("/lineage/impact?node={topic}&direction=downstream&field=amount"),
            Some(&cookie),
        )
        .await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body.contains(r#"data-testid="column-paths""#),
        "{}",
        page.body
    );
    assert!(
        page.body.contains(r#"data-field="Finance daily.total""#),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("<code>orders.amount</code>"),
        "{}",
        page.body
    );
    assert!(
        page.body
            .contains("<code>analytics.orders_daily.revenue</code>"),
        "{}",
        page.body
    );
    assert!(page.body.contains("team finance"), "{}", page.body);
    // A field nothing names is said on the page, not a failed page: the
    // dataset's answer is still drawn.
    let page = t
        .get(
            &format!("/lineage/impact?node={topic}&field=amont"),
            Some(&cookie),
        )
        .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(
        page.body.contains(r#"data-testid="impact-summary""#),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("no column lineage or schema names it"),
        "{}",
        page.body
    );

    // The model's page lists its column and where it comes from.
    let page = t
        .get(
            "/lineage/graph?node=dataset:postgres://127.0.0.1:5432:analytics.orders_daily",
            Some(&cookie),
        )
        .await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body.contains(r#"data-testid="dataset-columns""#),
        "{}",
        page.body
    );
    assert!(
        page.body.contains(r#"data-column="revenue""#),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("<code>orders.amount</code>"),
        "{}",
        page.body
    );
    assert!(page.body.contains("(DIRECT, AGGREGATION)"), "{}", page.body);
}
