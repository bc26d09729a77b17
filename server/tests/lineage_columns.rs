//! Column lineage over the real router and Postgres (issue 43): the
//! `columnLineage` facet ingested and folded into column edges, a
//! malformed one refused while its event's lineage is kept, field-level
//! impact with owners and cold trails, and Marquez's column-lineage read.
//! The real dbt-ol run is in `lineage.rs`.

mod support;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::PgPool;
use streamkeeper::accounts::role::Role;
use streamkeeper::accounts::token::Scope;

const KAFKA: &str = "kafka://127.0.0.1:9092";
const PG: &str = "postgres://127.0.0.1:5432";

/// A run event of `job` reading `inputs` and writing `output` with
/// `facets` on the output, in openlineage-python 1.54's shape.
fn event(run: &str, job: &str, inputs: &[(&str, &str)], output: Option<(&str, Value)>) -> Value {
    let inputs: Vec<Value> = inputs
        .iter()
        .map(|(ns, name)| json!({"namespace": ns, "name": name, "facets": {}, "inputFacets": {}}))
        .collect();
    let outputs: Vec<Value> = output
        .into_iter()
        .map(|(name, facets)| json!({"namespace": PG, "name": name, "facets": facets, "outputFacets": {}}))
        .collect();
    json!({
        "eventTime": "2026-01-01T00:00:00Z", "eventType": "COMPLETE",
        "inputs": inputs, "outputs": outputs,
        "job": {"namespace": "sk-test", "name": job, "facets": {}},
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python",
        "run": {"facets": {}, "runId": run},
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
    })
}

fn input_field(ns: &str, name: &str, field: &str, kind: &str, subtype: &str) -> Value {
    json!({"namespace": ns, "name": name, "field": field,
        "transformations": [{"type": kind, "subtype": subtype}]})
}

async fn folded(pool: &PgPool) {
    streamkeeper_server::lineage::LineageService::new(
        pool.clone(),
        streamkeeper_server::lineage::IngestLimits::for_body_limit(0),
    )
    .fold()
    .catch_up()
    .await
    .expect("fold");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_field_reaches_columns_with_owners_and_goes_cold_at_a_job_without_column_lineage(
    pool: PgPool,
) {
    let t = support::TestApp::new(pool.clone()).await;
    let id = t.user("flink", &[Role::Owner]).await;
    let token = t.token_with(id, &[Scope::LineageWrite]).await;
    let reader = t.user("ada", &[Role::Viewer]).await;
    let reader = t.token(reader).await;
    sqlx::query(
        "WITH t AS (INSERT INTO teams (name) VALUES ('analytics') RETURNING id)
         INSERT INTO memberships (team_id, user_id) SELECT t.id, u.id FROM t, users u
         WHERE u.username = 'flink'",
    )
    .execute(&pool)
    .await
    .expect("team");
    // orders.amount → daily.revenue (DIRECT), orders.status → daily.revenue
    // (INDIRECT); daily.revenue → dash.total. A consumer of orders with
    // no outputs, and so no column lineage: the trail goes cold there.
    let daily_facets = json!({
        "columnLineage": {"fields": {"revenue": {"inputFields": [
            input_field(KAFKA, "orders", "amount", "DIRECT", "AGGREGATION"),
            input_field(KAFKA, "orders", "status", "INDIRECT", "FILTER"),
        ]}}},
        "ownership": {"owners": [{"name": "analytics", "type": "TEAM"}]}
    });
    let dash_facets = json!({
        "columnLineage": {"fields": {"total": {"inputFields": [
            input_field(PG, "daily", "revenue", "DIRECT", "IDENTITY")
        ]}}},
        "schema": {"fields": [{"name": "total", "type": "long"}, {"name": "note", "type": "string"}]}
    });
    let events = [
        event(
            "0194b3a2-7c1e-7000-8000-000000004301",
            "daily_job",
            &[(KAFKA, "orders")],
            Some(("daily", daily_facets)),
        ),
        event(
            "0194b3a2-7c1e-7000-8000-000000004302",
            "dash_job",
            &[(PG, "daily")],
            Some(("dash", dash_facets)),
        ),
        event(
            "0194b3a2-7c1e-7000-8000-000000004303",
            "billing",
            &[(KAFKA, "orders")],
            None,
        ),
    ];
    for e in events {
        let r = t
            .api(Method::POST, "/api/v1/lineage", &token, Some(e))
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    }
    folded(&pool).await;

    let r = t
        .api(
            Method::GET,
            "/api/v1/lineage/impact?node=dataset:kafka://127.0.0.1:9092:orders&field=amount",
            &reader,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let a = r.json();
    let fields = a["fields"].as_array().cloned().expect("fields");
    let names: Vec<String> = fields
        .iter()
        .map(|f| {
            format!(
                "{}.{}",
                f["field"]["dataset"]["name"].as_str().unwrap_or(""),
                f["field"]["field"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(names, vec!["daily.revenue", "dash.total"], "{a}");
    assert_eq!(fields[0]["kind"], "DIRECT");
    assert_eq!(fields[0]["owner"], "analytics");
    assert_eq!(fields[0]["known"], true);
    assert_eq!(fields[1]["depth"], 2);
    assert_eq!(fields[1]["path"].as_array().map(Vec::len), Some(3));
    let cold = a["cold"].as_array().cloned().expect("cold");
    assert_eq!(cold.len(), 1, "{a}");
    assert_eq!(cold[0]["job"]["name"], "billing");
    assert_eq!(cold[0]["message"], "reads orders; which fields is unknown");
    assert_eq!(a["partial"], false);

    // status reaches revenue INDIRECT; a field nothing reads reaches nothing.
    let r = t
        .api(
            Method::GET,
            "/api/v1/lineage/impact?topic=orders&field=status",
            &reader,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["fields"][0]["kind"], "INDIRECT");
    // A misspelled field is not "nothing breaks": no column edge nor
    // schema names it, so 404 saying so.
    let r = t
        .api(
            Method::GET,
            "/api/v1/lineage/impact?topic=orders&field=amont",
            &reader,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    assert!(
        r.body
            .contains("Field `amont` of dataset:kafka://127.0.0.1:9092:orders (no column lineage or schema names it)"),
        "{}",
        r.body
    );
    // A field only the schema names, that nothing reads: 200, empty.
    let r = t
        .api(
            Method::GET,
            "/api/v1/lineage/impact?node=dataset:postgres://127.0.0.1:5432:dash&field=note",
            &reader,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["fields"], json!([]), "{}", r.body);
    // A job is not a dataset: a clear 400, not a 500.
    let r = t
        .api(
            Method::GET,
            "/api/v1/lineage/impact?node=job:sk-test:billing&field=amount",
            &reader,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    let r = t
        .api(
            Method::GET,
            "/api/v1/lineage/impact?topic=orders&field=",
            &reader,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    // Notify with a field is refused until it sends a field-level answer.
    let r = t
        .api(
            Method::POST,
            "/api/v1/lineage/impact/notify",
            &reader,
            Some(json!({"topic": "orders", "field": "amount"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn column_lineage_answers_in_marquez_shape(pool: PgPool) {
    let t = support::TestApp::new(pool.clone()).await;
    let id = t.user("flink", &[Role::Owner]).await;
    let token = t.token_with(id, &[Scope::LineageWrite]).await;
    let viewer = t.user("ada", &[Role::Viewer]).await;
    let viewer = t.token(viewer).await;
    let facets = json!({"columnLineage": {
    "_producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/dbt",
    "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet",
    "fields": {"revenue": {"inputFields": [
        input_field(KAFKA, "orders", "amount", "DIRECT", "AGGREGATION")
    ]}}}});
    let e = event(
        "0194b3a2-7c1e-7000-8000-000000004311",
        "daily_job",
        &[(KAFKA, "orders")],
        Some(("daily", facets)),
    );
    let r = t
        .api(Method::POST, "/api/v1/lineage", &token, Some(e))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    folded(&pool).await;

    let daily = "datasetField:postgres://127.0.0.1:5432:daily:revenue";
    let r = t
        .api(
            Method::GET,
            &format!("/api/v1/column-lineage?nodeId={}", urlencoding(daily)),
            &viewer,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let graph = r.json()["graph"].as_array().cloned().expect("graph");
    let ids: Vec<&str> = graph.iter().filter_map(|n| n["id"].as_str()).collect();
    // Sorted by id, as Marquez sorts them.
    assert_eq!(
        ids,
        vec!["datasetField:kafka://127.0.0.1:9092:orders:amount", daily]
    );
    let node = &graph[1];
    assert_eq!(node["type"], "DATASET_FIELD");
    assert_eq!(node["data"]["namespace"], PG);
    assert_eq!(node["data"]["dataset"], "daily");
    assert_eq!(node["data"]["field"], "revenue");
    assert_eq!(
        node["data"]["inputFields"],
        json!([{"namespace": KAFKA, "dataset": "orders", "datasetVersion": null,
            "field": "amount", "transformationDescription": "AGGREGATION",
            "transformationType": "DIRECT"}])
    );
    assert_eq!(
        node["inEdges"],
        json!([{"origin": "datasetField:kafka://127.0.0.1:9092:orders:amount", "destination": daily}])
    );
    assert_eq!(graph[0]["outEdges"][0]["destination"], daily);
    // Marquez's default is upstream only: from orders.amount, just itself
    // (its producer sent no column lineage); with withDownstream, daily.
    let amount = "datasetField:kafka://127.0.0.1:9092:orders:amount";
    let r = t
        .api(
            Method::GET,
            &format!("/api/v1/column-lineage?nodeId={}", urlencoding(amount)),
            &viewer,
            None,
        )
        .await;
    assert_eq!(r.json()["graph"].as_array().map(Vec::len), Some(1));
    let r = t
        .api(
            Method::GET,
            &format!(
                "/api/v1/column-lineage?nodeId={}&withDownstream=true",
                urlencoding(amount)
            ),
            &viewer,
            None,
        )
        .await;
    assert_eq!(r.json()["graph"].as_array().map(Vec::len), Some(2));
    // Bad nodeIds: 400 with why; an unknown dataset 404.
    let r = t
        .api(
            Method::GET,
            "/api/v1/column-lineage?nodeId=dataset:pg:daily",
            &viewer,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    let r = t
        .api(
            Method::GET,
            "/api/v1/column-lineage?nodeId=datasetField:pg:nowhere:x",
            &viewer,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_malformed_facet_is_refused_with_a_reason_and_the_event_kept(pool: PgPool) {
    let t = support::TestApp::new(pool.clone()).await;
    let id = t.user("flink", &[Role::Owner]).await;
    let token = t.token_with(id, &[Scope::LineageWrite]).await;
    let bad = json!({"columnLineage": {"fields": {"revenue": {"inputFields": [
        {"namespace": KAFKA, "name": "orders"}
    ]}}}});
    let e = event(
        "0194b3a2-7c1e-7000-8000-000000004321",
        "daily_job",
        &[(KAFKA, "orders")],
        Some(("daily", bad)),
    );
    let r = t
        .api(Method::POST, "/api/v1/lineage", &token, Some(e))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "stored: {}", r.body);
    folded(&pool).await;
    let (edges, issues, facet, columns): (i64, Value, i64, i64) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM lineage_edges),
                (SELECT issues FROM lineage_nodes WHERE name = 'daily'),
                (SELECT count(*) FROM lineage_facets WHERE key = 'columnLineage'),
                (SELECT count(*) FROM lineage_column_edges)",
    )
    .fetch_one(&pool)
    .await
    .expect("graph");
    assert_eq!(edges, 2, "orders → daily_job → daily is kept");
    assert_eq!(issues[0]["issue"], "column_lineage_refused", "{issues}");
    assert!(
        issues[0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("has no `field`")),
        "{issues}"
    );
    assert_eq!((facet, columns), (0, 0));
    // A later good facet replaces nothing wrongly and is read.
    let good = json!({"columnLineage": {"fields": {"revenue": {"inputFields": [
        input_field(KAFKA, "orders", "amount", "DIRECT", "AGGREGATION")
    ]}}}});
    let mut e = event(
        "0194b3a2-7c1e-7000-8000-000000004322",
        "daily_job",
        &[(KAFKA, "orders")],
        Some(("daily", good)),
    );
    e["eventTime"] = json!("2026-01-02T00:00:00Z");
    let r = t
        .api(Method::POST, "/api/v1/lineage", &token, Some(e))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    folded(&pool).await;
    let columns: i64 = sqlx::query_scalar("SELECT count(*) FROM lineage_column_edges")
        .fetch_one(&pool)
        .await
        .expect("columns");
    assert_eq!(columns, 1);
    // The rebuild replays both into the same column edges.
    streamkeeper_server::lineage::LineageService::new(
        pool.clone(),
        streamkeeper_server::lineage::IngestLimits::for_body_limit(0),
    )
    .rebuild()
    .await
    .expect("rebuild");
    let columns: i64 = sqlx::query_scalar("SELECT count(*) FROM lineage_column_edges")
        .fetch_one(&pool)
        .await
        .expect("columns");
    assert_eq!(columns, 1);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_column_hop_reads_no_more_rows_than_the_budget_can_take(pool: PgPool) {
    use streamkeeper::lineage::column_walk::ColumnGraph;
    use streamkeeper::lineage::columns::FieldRef;
    use streamkeeper::lineage::impact::{Direction, Limits};
    // orders.status decides every one of 50 fields (a dataset-wide
    // INDIRECT fan-out).
    sqlx::query(
        "INSERT INTO lineage_column_edges
             (dst_namespace, dst_name, dst_field, src_namespace, src_name, src_field, kind)
         SELECT 'pg', 'wide', 'c' || n, 'kafka', 'orders', 'status', 'INDIRECT'
         FROM generate_series(1, 50) n",
    )
    .execute(&pool)
    .await
    .expect("edges");
    let start = FieldRef::new("kafka", "orders", "status");
    let limits = Limits {
        depth: 6,
        budget: 3,
    };
    let mut g = ColumnGraph::new();
    let cut = streamkeeper_server::lineage::columns::load(
        &pool,
        &mut g,
        &start,
        Direction::Downstream,
        limits,
    )
    .await
    .expect("load");
    assert_eq!(g.hops(&start, Direction::Downstream).len(), 4, "budget + 1");
    assert!(cut, "the read says it was cut");
    let mut g = ColumnGraph::new();
    let all = Limits {
        depth: 6,
        budget: 100,
    };
    let cut = streamkeeper_server::lineage::columns::load(
        &pool,
        &mut g,
        &start,
        Direction::Downstream,
        all,
    )
    .await
    .expect("load");
    assert_eq!(g.hops(&start, Direction::Downstream).len(), 50);
    assert!(!cut);
}

/// A nodeId in a query string (its `:` and `/` escaped).
fn urlencoding(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}
